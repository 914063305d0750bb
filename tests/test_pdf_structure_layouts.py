"""Layouts the structure-aware PDF parser used to misread (issue #30.4), on fixtures from
tests/fixtures/make_parser_fixtures.py: table_layouts.pdf (a cross table with an unruled
corner, a table nested in a cell) and large_print.pdf (an introduction set in a large font, a
lone "N/A" in 14 pt)."""

from __future__ import annotations

from pathlib import Path

import pdfplumber
import pytest

from core.loaders import load
from core.loaders.pdf_tables import NESTED_NOTE

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TABLES = FIXTURES / "table_layouts.pdf"
LARGE_PRINT = FIXTURES / "large_print.pdf"

CROSS_TABLE = """| size / splitter | character | recursive |
| --- | --- | --- |
| 256 | 0.646 | 0.691 |
| 512 | 0.773 | 0.810 |"""
NESTING_TABLE = """| setting | what it changes |
| --- | --- |
| overlap | (nested table below) |

| tokens | recall |
| --- | --- |
| 0 | 0.70 |"""


def structured(path: Path):
    (document,) = load(path, parser="pdfplumber")
    return document


def test_pdfplumber_alone_finds_the_nested_table_twice_and_the_corner_in_no_cell() -> None:
    """The defects as pdfplumber's tables show them."""
    with pdfplumber.open(TABLES) as pdf:
        tables = [table.extract() for table in pdf.pages[0].find_tables()]
    assert len(tables) == 3
    assert tables[0][0][0] is None
    assert tables[2] == [["tokens", "recall"], ["0", "0.70"]]


def test_a_nested_table_is_read_once_as_a_table_after_the_one_holding_it() -> None:
    """Issue #44.2: no longer flattened into its cell's text (a 4x9 line-item table read as one cell)."""
    document = structured(TABLES)
    assert [e.kind for e in document.elements if e.kind in ("table", "heading")] == [
        "heading",
        "table",
        "heading",
        "table",
        "table",
    ]
    assert document.text.endswith(NESTING_TABLE)
    assert document.text.count("recall") == 1


def test_text_in_an_unruled_corner_of_a_table_fills_that_grid_position() -> None:
    document = structured(TABLES)
    assert CROSS_TABLE in document.text
    assert document.text.count("size / splitter") == 1
    first, *_ = [e for e in document.elements if e.kind == "table"]
    assert first.attrs["header"] == "| size / splitter | character | recursive |"


def test_every_word_on_the_page_is_read_exactly_once() -> None:
    document = structured(TABLES)
    with pdfplumber.open(TABLES) as pdf:
        page_words = sorted(w["text"] for w in pdf.pages[0].extract_words())
    markup = {"|", "---", "#", *NESTED_NOTE.split()}
    assert sorted(w for w in document.text.split() if w not in markup) == page_words


def test_only_short_titles_in_a_large_font_are_headings() -> None:
    document = structured(LARGE_PRINT)
    headings = [(e.level, e.attrs["title"]) for e in document.elements if e.kind == "heading"]
    assert headings == [(1, "Choosing a chunk size"), (2, "Measuring the effect")]
    paragraphs = [document.text[e.start_char : e.end_char] for e in document.elements if e.kind == "paragraph"]
    assert (
        paragraphs[0].startswith("Chunk size is the one setting every retrieval pipeline") and len(paragraphs[0]) > 350
    )
    assert "N/A" in paragraphs
    assert "\n\nN/A\n\n## Measuring the effect\n\n" in document.text


@pytest.mark.parametrize(
    "text,heading",
    [
        ("Choosing a chunk size", True),
        ("1. Embeddings", True),
        ("FAQ", True),
        ("N/A", False),
        ("12.5", False),
        ("-- | --", False),
        ("words " * 40, False),  # 240 characters of words: a paragraph set large
        ("words " * 30, True),  # 180 characters
    ],
)
def test_a_heading_reads_as_a_title(text: str, heading: bool) -> None:
    from core.loaders.pdf_titles import reads_as_heading

    assert reads_as_heading(text) is heading


# -- two columns -------------------------------------------------------------------------

COLUMNS = FIXTURES / "two_columns.pdf"
HANDBOOK_PDF = Path(__file__).resolve().parent.parent / "sample_docs" / "rag_handbook.pdf"


def test_pdfplumber_alone_reads_a_two_column_page_across_the_columns() -> None:
    with pdfplumber.open(COLUMNS) as pdf:
        lines = pdf.pages[0].extract_text().splitlines()
    assert lines[1] == "When comparing embedding models, look Retrieval augmented generation finds the"


def test_a_two_column_page_is_read_column_by_column_between_full_width_lines() -> None:
    document = structured(COLUMNS)
    paragraphs = [document.text[e.start_char : e.end_char] for e in document.elements]
    assert [p[:40] for p in paragraphs] == [
        "# Two settings, side by side",
        "When comparing embedding models, look be",
        "Embedding models are trained on pairs of",
        "Retrieval augmented generation finds the",
        "Cosine scores are not probabilities, and",
        "Both columns end here; this line runs ac",
    ]
    assert paragraphs[3] == (
        "Retrieval augmented generation finds the passages that answer a question and hands them to the model. "
        "Chunk size decides how much text each passage holds, and overlap repeats a little."
    )


def test_column_regions_cover_every_word_once_and_leave_one_column_pages_alone() -> None:
    from core.loaders.pdf_columns import column_regions

    with pdfplumber.open(COLUMNS) as pdf:
        page = pdf.pages[0]
        words = page.extract_words()
        regions = column_regions(page, words)
    # The title ends before the gutter, so it opens the left column: left, right, then the closing line.
    assert regions is not None and len(regions) == 3
    assert regions[0][2] == regions[1][0] and regions[2][0] == page.bbox[0] and regions[2][2] == page.bbox[2]
    for word in words:
        x, y = (word["x0"] + word["x1"]) / 2, (word["top"] + word["bottom"]) / 2
        assert sum(1 for x0, top, x1, bottom in regions if x0 <= x < x1 and top <= y < bottom) == 1
    with pdfplumber.open(HANDBOOK_PDF) as pdf:
        assert all(column_regions(page, page.extract_words()) is None for page in pdf.pages)


GLOSSARY = (
    ("chunk", "a piece of a document embedded as one unit"),
    ("chunk overlap in characters", "what two neighbouring chunks share at the edge"),
    ("embedding", "numbers that place similar texts near each other"),
    ("cross-encoder reranker model", "reads the query with each passage and reorders"),
    ("BM25", "a lexical ranking function over query terms"),
    ("hit rate at five results", "questions whose answer is among the first five"),
    ("node", "a chunk with its metadata and relationships"),
    ("reciprocal rank fusion", "merges ranked lists by summing inverse ranks"),
)


def glossary_pdf() -> bytes:
    """Terms on the left, their definitions on the right: a gutter, but not two columns of running text."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    y = 80.0
    for term, definition in GLOSSARY:
        pdf.text(60, y, term)
        pdf.text(260, y, definition)
        y += 16
    return bytes(pdf.output())


def test_a_glossary_is_not_taken_for_two_columns() -> None:
    import io

    from core.loaders import load_bytes
    from core.loaders.pdf_columns import column_regions

    data = glossary_pdf()
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        page = pdf.pages[0]
        assert column_regions(page, [c for c in page.chars if c["text"].strip()]) is None
    (document,) = load_bytes(data, "glossary.pdf", parser="pdfplumber")
    assert document.text.startswith(
        "chunk a piece of a document embedded as one unit\n\nchunk overlap in characters what"
    )
