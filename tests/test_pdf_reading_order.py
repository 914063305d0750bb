"""Reading order of generated PDF pages, read by the pdfplumber parser.

Pages set in two, three and four columns (of uneven length, the last one a few lines long, under a title
across the page) are read column by column; an unruled table of figures is not taken for columns. The pages are drawn here with
fpdf2, so every column's text is known.
"""

from __future__ import annotations

import random
import re

import pytest
from fpdf import FPDF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.config import PipelineConfig
from core.documents import run_split
from core.loaders import load_bytes
from core.splitters import get_splitter

VOCAB = (
    "retrieval chunk overlap embedding vector index query passage model token window score rerank context "
    "answer document section heading table splitter budget latency recall precision cosine the of and for"
).split()


def column_texts(lines: list[int], seed: int = 0) -> list[str]:
    """One text per column, about ``lines[i]`` lines long when set in its column; each word marked with its
    column every seventh word, so a text read across the columns cannot pass for one read down them."""
    rnd = random.Random(seed)
    per_line = max(3, 12 // len(lines))
    return [
        " ".join(f"c{c}w{i}" if i % 7 == 0 else rnd.choice(VOCAB) for i in range(count * per_line))
        for c, count in enumerate(lines)
    ]


def columns_pdf(texts: list[str], *, title: str | None = None, gutter: float = 18.0, size: float = 10.0) -> bytes:
    """A letter page: an optional bold title across it, then ``texts`` set in as many justified columns."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    margin, top = 50.0, 60.0
    if title:
        pdf.set_font("Helvetica", "B", 18)
        pdf.set_xy(margin, top)
        pdf.cell(0, 24, title)
        top += 40
    pdf.set_font("Helvetica", size=size)
    width = (pdf.w - 2 * margin - (len(texts) - 1) * gutter) / len(texts)
    for index, text in enumerate(texts):
        pdf.set_xy(margin + index * (width + gutter), top)
        pdf.multi_cell(width, size * 1.25, text, align="J")
    return bytes(pdf.output())


def read(data: bytes):
    (document,) = load_bytes(data, "page.pdf", parser="pdfplumber")
    return document


def _words(text: str) -> str:
    return " ".join(text.replace("#", " ").split())


def reads_column_by_column(texts: list[str], document_text: str) -> bool:
    """Each column's text is in the document whole (words in order, whatever the line breaks), the columns
    one after another."""
    text = _words(document_text)
    at = 0
    for column in texts:
        found = text.find(_words(column), at)
        if found < 0:
            return False
        at = found + len(_words(column))
    return True


def assert_exact_spans(document) -> None:
    """Every element and page has a span in the text, and every node of a split is its span's text."""
    for element in document.elements:
        assert 0 <= element.start_char < element.end_char <= len(document.text)
        piece = document.text[element.start_char : element.end_char]
        assert piece == piece.strip() and piece
    for page in document.pages:
        assert 0 <= page.start_char <= page.end_char <= len(document.text)
    splitter = get_splitter("recursive", chunk_size=200, chunk_overlap=20)
    for node in run_split([document], PipelineConfig(splitter=splitter)):
        assert node.text == document.text[node.start_char : node.end_char]


LAYOUTS = {
    "two even": [18, 18],
    "two uneven": [22, 7],
    "three even": [16, 16, 16],
    "three uneven": [20, 13, 6],
    "four even": [14, 14, 14, 14],
    "four uneven": [18, 12, 9, 6],
    # The text ends a few lines into its last column: that column is read last, not across the others.
    "two, the last of three lines": [22, 3],
    "two, the last of two lines": [20, 2],
    "three, the last of two lines": [16, 16, 2],
    "four, the last of four lines": [14, 14, 14, 4],
}


@pytest.mark.parametrize("title", [None, "Federal notices, set in columns across the page", "A short title"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_page_in_columns_is_read_column_by_column(layout: str, title: str | None) -> None:
    texts = column_texts(LAYOUTS[layout])
    document = read(columns_pdf(texts, title=title))
    assert reads_column_by_column(texts, document.text), document.text[:400]
    if title:
        assert document.text.startswith(f"# {title}\n\n")
    assert_exact_spans(document)


def test_three_columns_are_regions_left_to_right_under_a_title() -> None:
    import io

    import pdfplumber

    from core.loaders.pdf_columns import column_regions

    data = columns_pdf(column_texts([16, 16, 16]), title="Federal notices, set in columns across the page")
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        page = pdf.pages[0]
        chars = [c for c in page.chars if c["text"].strip()]
        regions = column_regions(page, chars)
    # The title ends inside the first two columns' width; its band is cut at the gutter it does not cross.
    assert regions is not None
    body = regions[-3:]
    assert [r[1] for r in body] == [body[0][1]] * 3 and body[0][2] == body[1][0] and body[1][2] == body[2][0]
    for char in chars:
        x, y = (char["x0"] + char["x1"]) / 2, (char["top"] + char["bottom"]) / 2
        assert sum(1 for x0, top, x1, bottom in regions if x0 <= x < x1 and top <= y < bottom) == 1


def test_an_unruled_table_of_numbers_is_not_taken_for_columns() -> None:
    """Labels on the left and three columns of figures: the figures' columns are too narrow for running text."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    rnd = random.Random(3)
    y = 80.0
    for row in range(24):
        pdf.text(60, y, f"{rnd.choice(VOCAB).capitalize()} {rnd.choice(VOCAB)} line {row}")
        for column, x in enumerate((300, 380, 460)):
            pdf.text(x, y, f"{rnd.randint(1000, 99999):,}.{column}{row % 10}")
        y += 14
    document = read(bytes(pdf.output()))
    # Each label is followed by its row's three figures, as read across the page.
    rows = re.findall(r"line (\d+)((?: [\d,]+\.\d\d){3})(?= |$)", document.text)
    assert [int(number) for number, _ in rows] == list(range(24)), document.text[:300]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(st.integers(min_value=6, max_value=22), min_size=1, max_size=4),
    seed=st.integers(min_value=0, max_value=10_000),
    titled=st.booleans(),
    gutter=st.sampled_from([10.0, 18.0, 36.0]),
    size=st.sampled_from([8.0, 9.0, 10.0, 11.0]),
)
def test_property_every_column_is_read_whole_and_in_order(
    lines: list[int], seed: int, titled: bool, gutter: float, size: float
) -> None:
    texts = column_texts(lines, seed)
    title = "A title over the columns" if titled else None
    document = read(columns_pdf(texts, title=title, gutter=gutter, size=size))
    assert reads_column_by_column(texts, document.text), (lines, document.text[:400])
    assert_exact_spans(document)


FORM_FIELDS = (
    ("Name:", "Ada Lovelace"),
    ("Date of birth:", "1815-12-10"),
    ("Answer:", "None"),
    ("Department:", "Analytical engines and their notes"),
    ("Phone:", "____________"),
    ("Reviewed by:", "Charles Babbage, with the committee"),
    ("Status:", "Approved"),
    ("Reference number:", "N/A"),
)


def test_a_form_keeps_each_label_with_its_answer() -> None:
    """Labels on the left, answers on the right, three times over: a gutter, but no columns of running text."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    y = 80.0
    for _ in range(3):
        for label, answer in FORM_FIELDS:
            pdf.text(60, y, label)
            pdf.text(200, y, answer)
            y += 16
    document = read(bytes(pdf.output()))
    pairs = " ".join(f"{label} {answer}" for label, answer in FORM_FIELDS)
    assert _words(document.text) == " ".join([pairs] * 3)
    assert not [e for e in document.elements if e.kind == "heading"]


@pytest.mark.parametrize("lines", [[16, 16, 16], [14, 14, 14, 14]])
def test_pdfplumbers_page_text_reads_columns_in_order(lines: list[int]) -> None:
    """The text the pypdf parser takes for a garbled page (and the overdrawn pages' second reading)."""
    from core.loaders.pdf_structure import page_text

    texts = column_texts(lines)
    data = columns_pdf(texts, title="A title over the columns")
    text = page_text(data, [1])[1]
    assert text.startswith("A title over the columns\n")
    assert reads_column_by_column(texts, text)
