"""Layouts the structure-aware PDF parser used to misread (issue #30.4), on fixtures from
tests/fixtures/make_parser_fixtures.py: table_layouts.pdf (a cross table with an unruled
corner, a table nested in a cell) and large_print.pdf (an introduction set in a large font, a
lone "N/A" in 14 pt)."""

from __future__ import annotations

from pathlib import Path

import pdfplumber
import pytest

from core.loaders import load

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TABLES = FIXTURES / "table_layouts.pdf"
LARGE_PRINT = FIXTURES / "large_print.pdf"

CROSS_TABLE = """| size / splitter | character | recursive |
| --- | --- | --- |
| 256 | 0.646 | 0.691 |
| 512 | 0.773 | 0.810 |"""
NESTING_TABLE = """| setting | what it changes |
| --- | --- |
| overlap | tokens recall 0 0.70 |"""


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


def test_a_nested_table_is_read_once_as_its_cells_text() -> None:
    document = structured(TABLES)
    assert [e.kind for e in document.elements if e.kind in ("table", "heading")] == [
        "heading",
        "table",
        "heading",
        "table",
    ]
    assert document.text.endswith(NESTING_TABLE)
    assert document.text.count("recall") == 1


def test_text_in_an_unruled_corner_of_a_table_fills_that_grid_position() -> None:
    document = structured(TABLES)
    assert CROSS_TABLE in document.text
    assert document.text.count("size / splitter") == 1
    (first, _) = [e for e in document.elements if e.kind == "table"]
    assert first.attrs["header"] == "| size / splitter | character | recursive |"


def test_every_word_on_the_page_is_read_exactly_once() -> None:
    document = structured(TABLES)
    with pdfplumber.open(TABLES) as pdf:
        page_words = sorted(w["text"] for w in pdf.pages[0].extract_words())
    markup = {"|", "---", "#"}
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
    from core.loaders.pdf_structure import reads_as_heading

    assert reads_as_heading(text) is heading
