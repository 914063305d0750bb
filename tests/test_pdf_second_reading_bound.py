"""A page drawn with a megabyte of vector instructions is read once, by pypdf: pdfminer (ten times slower) does not
read it again for a second opinion on its text or to measure its coverage, and the note says its text was not checked.

The page is our own, written here with fpdf2 as pypdf's issue-301.pdf is laid out: a scan traced into some 40,000
line segments, an image, and a few glyphs that read as punctuation rather than words.
"""

from __future__ import annotations

import time

import pdfplumber
from fpdf import FPDF
from PIL import Image

from core.loaders import load_bytes
from core.loaders.pdf import SECOND_READ_MAX_BYTES


def traced_scan(segments: int) -> bytes:
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.image(Image.new("L", (40, 40), 200), x=20, y=20, w=40, h=40)
    for i in range(segments):
        x, y = 20 + (i * 7) % 550, 80 + (i * 13) % 740
        pdf.line(x, y, x + 3.5, y + 1.25)
    pdf.set_font("helvetica", size=9)
    pdf.text(300, 60, ". , i ; : ' .")
    return bytes(pdf.output())


def test_a_page_of_a_megabyte_of_drawing_is_not_read_again_by_pdfminer(monkeypatch):
    data = traced_scan(40_000)
    opened = []
    real_open = pdfplumber.open
    monkeypatch.setattr(pdfplumber, "open", lambda *a, **k: opened.append(1) or real_open(*a, **k))
    started = time.process_time()
    (document,) = load_bytes(data, "traced.pdf")
    seconds = time.process_time() - started
    assert opened == []
    assert document.text == ". , i ; : ' ."
    assert document.metadata["load_warning"] == (
        "the text of page 1 reads little like words and was not read again by pdfplumber "
        f"(more than {SECOND_READ_MAX_BYTES // 1024} KB of drawing instructions on the page)"
    )
    assert seconds < 10  # pypdf's one reading; pdfminer's two took some 20 s on issue-301.pdf


def test_the_same_page_with_a_light_drawing_still_gets_its_second_opinion(monkeypatch):
    opened = []
    real_open = pdfplumber.open
    monkeypatch.setattr(pdfplumber, "open", lambda *a, **k: opened.append(1) or real_open(*a, **k))
    (document,) = load_bytes(traced_scan(200), "traced.pdf")
    assert opened  # the suspect text is read again, and the short layer's coverage measured
    assert "not read again" not in document.metadata.get("load_warning", "")
