"""Corruption a PDF's text layer hides (issue #44.1): each is read as a viewer shows the page, or named in a
warning on the document and the page, never passed on silently.

* a scanned page under a big watermark is a scan: its few big glyphs do not make it a page of text;

The PDFs are generated here (fpdf2, and the sample scan), a few hundred bytes to a few hundred KB each.
"""

from __future__ import annotations

import io
from pathlib import Path

import pypdf
import pytest
from fpdf import FPDF
from hypothesis import given, settings
from hypothesis import strategies as st

from core.loaders import load_bytes
from core.loaders.pdf_ocr import page_coverage

ROOT = Path(__file__).resolve().parent.parent
SCANNED_PDF = ROOT / "sample_docs" / "scanned_handbook_page.pdf"
# Words the sample scan shows, all of which OCR reads on it without a watermark.
SCAN_WORDS = "Embedding models are trained on pairs of texts"


def watermarked_scan(mark: str, size: float, *, opacity: float = 1.0, angle: float = 0.0, grey: int = 150) -> bytes:
    """The sample scan (a page-size image, no text layer) with ``mark`` set across its middle, as a watermark."""
    scan = pypdf.PdfReader(SCANNED_PDF).pages[0]
    width, height = float(scan.mediabox.width), float(scan.mediabox.height)
    layer = FPDF(unit="pt", format=(width, height))
    layer.add_page()
    layer.set_font("Helvetica", "B", size=size)
    layer.set_text_color(grey)
    with layer.local_context(fill_opacity=opacity), layer.rotation(angle, width / 2, height / 2):
        layer.text(x=(width - layer.get_string_width(mark)) / 2, y=height / 2, text=mark)
    writer = pypdf.PdfWriter()
    page = writer.add_page(scan)
    page.merge_page(pypdf.PdfReader(io.BytesIO(bytes(layer.output()))).pages[0])
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


# -- scans under watermarks ------------------------------------------------------------


@pytest.mark.parametrize(("mark", "size"), [("SCANNED COPY", 64), ("DRAFT", 120)])
def test_the_watermark_was_all_the_text_layer_holds(mark: str, size: float) -> None:
    """The defect as it was: with OCR off, the page reads as its watermark."""
    (document,) = load_bytes(watermarked_scan(mark, size), "marked.pdf", ocr="off")
    assert " ".join(document.text.split()) == mark


@pytest.mark.parametrize("parser", ["pypdf", "pdfplumber"])
@pytest.mark.parametrize(("mark", "size"), [("SCANNED COPY", 64), ("DRAFT", 120)])
def test_a_scan_under_a_big_watermark_is_read_by_ocr(mark: str, size: float, parser: str) -> None:
    """The watermark's glyphs cover 6-9% of the page, past the 5% rule; as words at reading size, 0.1-0.2%."""
    (document,) = load_bytes(watermarked_scan(mark, size, opacity=0.3), "marked.pdf", parser=parser)
    assert SCAN_WORDS in " ".join(document.text.split())
    assert document.metadata["ocr_pages"] == [1]
    assert "the text layer of page 1 covers little of a page-size image" in document.metadata["load_warning"]


@settings(max_examples=25, deadline=None)
@given(
    mark=st.sampled_from(["DRAFT", "SCANNED COPY", "CONFIDENTIAL", "COPY"]),
    size=st.sampled_from([24, 48, 64, 90, 120, 160]),
    opacity=st.sampled_from([0.15, 0.5, 1.0]),
    angle=st.sampled_from([0, 30, 45, 90]),
)
def test_no_watermark_makes_a_scan_look_like_a_page_of_text(
    mark: str, size: float, opacity: float, angle: float
) -> None:
    coverage = page_coverage(watermarked_scan(mark, size, opacity=opacity, angle=angle), [1])[1]
    assert coverage.images == pytest.approx(1.0)
    assert coverage.scan_like, coverage
