"""Headings of generated PDF pages, read by the pdfplumber parser: only text that reads as a title.

A form's lines ("Name: ____", "Answer: None", "Date: 2026-12-07"), an answer on its own line ("None") and
a sentence set large are paragraphs, whatever their font; "Chapter 2: What happened" is a heading.
"""

from __future__ import annotations

import pytest
from fpdf import FPDF
from test_pdf_reading_order import assert_exact_spans, read


def form_pdf() -> bytes:
    """A form: a title, then bold labels with their answers, some on the next line in the label's font, a
    fill-in line, and a sentence set large."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.text(60, 70, "Incident report")
    y = 110.0
    body = (
        "Please fill in every field of this report. Leave a field empty if it does not apply to the incident; "
        "the reviewer reads every answer before the report is filed."
    )
    pdf.set_font("Helvetica", size=10)
    pdf.set_xy(60, y)
    pdf.multi_cell(480, 13, body * 2)
    y += 80
    pdf.set_font("Helvetica", "B", 10)
    for line in ("Name: ____________________", "Answer: None", "Reviewed:", "None", "Date: 2026-12-07", "N/A"):
        pdf.text(60, y, line)
        y += 28
    pdf.set_font("Helvetica", size=14)
    pdf.text(60, y, "Every answer in this report is read by the reviewer before it is filed with the incident office.")
    y += 40
    pdf.set_font("Helvetica", "B", 14)
    pdf.text(60, y, "Chapter 2: What happened")
    y += 28
    pdf.set_font("Helvetica", size=10)
    pdf.set_xy(60, y)
    pdf.multi_cell(480, 13, body)
    return bytes(pdf.output())


def test_form_lines_answers_and_sentences_are_not_headings() -> None:
    document = read(form_pdf())
    headings = [e.attrs["title"] for e in document.elements if e.kind == "heading"]
    assert headings == ["Incident report", "Chapter 2: What happened"]
    paragraphs = [document.text[e.start_char : e.end_char] for e in document.elements if e.kind == "paragraph"]
    assert "Answer: None" in paragraphs and "None" in paragraphs
    assert "## None" not in document.text
    assert_exact_spans(document)


@pytest.mark.parametrize(
    "text,heading",
    [
        ("Chapter 2: What happened", True),
        ("Step 1: Load the documents", True),
        ("What is a chunk?", True),
        ("Name: ____________", False),
        ("Answer: None", False),
        ("Date: 2026-12-07", False),
        ("Status: Approved", False),
        ("Reviewed:", False),
        ("None", False),
        ("n/a", False),
        ("Yes", False),
        ("Name: Ada Lovelace   Date: 2026-12-07", False),
        ("Introduction ........ 3", False),
        # A sentence of 111 characters.
        (
            "Every answer in this report is read by the reviewer before it is filed with the incident office by Monday noon.",
            False,
        ),
        ("This is a sentence. So is this one", False),
        ("Not applicable.", False),
        ("Chapter 1.", True),
        ("Made in the U.S.", True),
        ("Meet Dr. Smith", True),
        ("What is RAG? How it works", True),
        ("Results for the U.S. market", True),
    ],
)
def test_a_title_is_short_and_neither_a_form_line_an_answer_nor_a_sentence(text: str, heading: bool) -> None:
    from core.loaders.pdf_titles import reads_as_heading

    assert reads_as_heading(text) is heading
