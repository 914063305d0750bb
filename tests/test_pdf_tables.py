"""Tables as they are drawn (issue #44.2), on PDFs generated here with fpdf2: a frame around the page is no
table, a table nested in another's cell stays a table, and a header row too long to repeat in ``table_header``
does not refuse the split."""

from __future__ import annotations

import io

import pdfplumber
from fpdf import FPDF

from core.loaders import load_bytes

BUDGET = (("District", "Budget"), ("North", "1.20"), ("South", "3.40"))
BUDGET_MARKDOWN = "| District | Budget |\n| --- | --- |\n| North | 1.20 |\n| South | 3.40 |"


def ruled_table(pdf: FPDF, rows: tuple[tuple[str, ...], ...], x: float, y: float, width: float, height: float) -> None:
    """``rows`` drawn as a ruled table, its top left corner at (``x``, ``y``), each cell ``width`` by ``height``."""
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            pdf.rect(x + c * width, y + r * height, width, height)
            pdf.text(x + c * width + 4, y + r * height + height - 6, cell)


def framed_page(*, bands: bool = True) -> bytes:
    """An A4 page inside a frame (a rectangle around the text area), a running head and a page number set off by
    rules across the frame (``bands``), and paragraphs around a ruled table."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.rect(36, 36, 523, 770)
    if bands:
        pdf.line(36, 60, 559, 60)
        pdf.line(36, 780, 559, 780)
    pdf.text(40, 52, "Harbour council annual report")
    pdf.text(72, 80, "Quarterly report of the harbour council")
    pdf.text(72, 100, "The table below lists the budget per district.")
    ruled_table(pdf, BUDGET, 72, 120, 150, 20)
    pdf.text(72, 200, "Closing words after the table.")
    pdf.text(40, 796, "Page 1")
    return bytes(pdf.output())


def structured(data: bytes):
    (document,) = load_bytes(data, "generated.pdf", parser="pdfplumber")
    return document


# -- a frame around the page ------------------------------------------------------------------


def test_pdfplumber_takes_a_banded_page_frame_for_a_table_holding_the_page() -> None:
    """The defect: the frame and its rules are three cells of one table, the real table inside one of them."""
    with pdfplumber.open(io.BytesIO(framed_page())) as pdf:
        frame, table = pdf.pages[0].find_tables()
    assert frame.bbox == (36, 36, 559, 806)
    assert len(frame.rows) == 3
    assert table.extract() == [list(row) for row in BUDGET]


def test_a_frame_around_the_page_is_no_table_and_the_table_inside_it_is_found() -> None:
    for bands in (True, False):
        document = structured(framed_page(bands=bands))
        assert document.text == (
            "Harbour council annual report\n\nQuarterly report of the harbour council\n\n"
            f"The table below lists the budget per district.\n\n{BUDGET_MARKDOWN}\n\n"
            "Closing words after the table.\n\nPage 1"
        )
        assert [e.kind for e in document.elements if e.kind == "table"] == ["table"]


def test_a_table_as_large_as_the_page_is_still_a_table() -> None:
    rows = (("Station", "Line", "Opened"), *((f"Stop {n}", f"L{n % 3}", str(1900 + n)) for n in range(1, 20)))
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    ruled_table(pdf, rows, 40, 40, 170, 38)
    document = structured(bytes(pdf.output()))
    (table,) = [e for e in document.elements if e.kind == "table"]
    assert table.attrs["header"] == "| Station | Line | Opened |"
    assert document.text.endswith("| Stop 19 | L1 | 1919 |")
