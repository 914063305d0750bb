"""OCR for PDF pages without a text layer: pypdfium2 renders the page, Debian's Tesseract reads it.

A page counts as scanned by what covers it, not by whether it has any text: a
full-page image with one stamped line of text on top is a scan (:func:`page_coverage`).
Such a page is rendered for OCR without its text layer (``without_text``), so a watermark set
as text over the scan does not hide the words under it; the loader names the layer's words in its note.

Tesseract is a program (``apt-get install tesseract-ocr tesseract-ocr-eng``; the
Makefile's ``system-deps`` installs it), run once per page as
``tesseract stdin stdout tsv`` with the page image on its standard input. We
call it directly rather than through pytesseract so that each run gets
``OMP_THREAD_LIMIT=1`` in its own environment: on a busy two-core machine
Tesseract's OpenMP threads made one page three times slower (3.0 s against
0.95 s for sample_docs/scanned_handbook_page.pdf), and pytesseract can only set that
for the whole process. Nothing is downloaded: the English model comes with the
Debian package.

A page's text is its words as Tesseract groups them: words of a line joined by
a space, lines of a paragraph by a line break (or a space with ``reflow``), and
paragraphs by a blank line. Its confidence is the mean of the words' confidences
(0-100), the number Tesseract gives each word it recognised.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from typing import Any

TESSERACT = "tesseract"
LANGUAGE = "eng"
# A page rendered at the chosen dpi is shrunk to at most this many pixels (a poster-sized
# page at 300 dpi would take gigabytes and minutes); an A4 page at 300 dpi is 8.7 million.
MAX_PIXELS = 40_000_000
PAGE_TIMEOUT_SECONDS = 60
INSTALL_HINT = "apt-get install tesseract-ocr tesseract-ocr-eng"


@dataclass(frozen=True)
class OcrPage:
    """What OCR read on one page: its text and the mean word confidence (0-100; 0 when no word was read)."""

    text: str
    confidence: float
    words: int


class OcrUnavailable(Exception):
    """Tesseract is not installed, or cannot read English here; the message is one line for the user."""


@cache
def ocr_unavailable_reason() -> str | None:
    """Why OCR cannot run on this machine (one line), or None when Tesseract and its English data are there."""
    if shutil.which(TESSERACT) is None:
        return f"OCR needs Tesseract, which is not installed ({INSTALL_HINT})"
    try:
        listed = subprocess.run(
            [TESSERACT, "--list-langs"], capture_output=True, text=True, timeout=30, env=_environment()
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"OCR needs Tesseract, which could not be started ({type(exc).__name__})"
    languages = {line.strip() for line in (listed.stdout + listed.stderr).splitlines()}
    if LANGUAGE not in languages:
        return f"OCR needs Tesseract's English data, which is not installed ({INSTALL_HINT})"
    return None


def render_page(
    data: bytes, page_index: int, dpi: int, *, without_text: bool = False, max_pixels: int = MAX_PIXELS
) -> Any:
    """Page ``page_index`` (0-based) of the PDF in ``data`` as a greyscale PIL image at ``dpi`` (at most
    ``max_pixels`` pixels: fewer for huge pages).

    ``without_text``: the page drawn without its text layer (every text object, in forms too, removed before
    rendering), as a scan shows under a watermark or stamp set as text: an opaque "DRAFT" at 120 pt drawn over
    the scan cost OCR 38% of its words, against 4% without it (benchmarks/parser_checks.py).
    """
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        page = document[page_index]
        if without_text:
            _remove_text(page)
        width, height = page.get_size()  # points (1/72 inch)
        scale = dpi / 72
        pixels = width * scale * height * scale
        if pixels > max_pixels:
            scale *= (max_pixels / pixels) ** 0.5
        return page.render(scale=scale, grayscale=True).to_pil()
    finally:
        document.close()


def _remove_text(page: Any) -> None:
    """Take every text object off a pypdfium2 page (top-level and inside forms), so it renders as its images and
    paths alone. A text object pdfium cannot remove stays drawn."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    for text in list(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_TEXT])):
        try:
            page.remove_obj(text)
        except pdfium.PdfiumError:
            continue


def ocr_image(image: Any, dpi: int, *, reflow: bool = False) -> OcrPage:
    """Tesseract's reading of one page image; raises :class:`OcrUnavailable` when it cannot run."""
    reason = ocr_unavailable_reason()
    if reason:
        raise OcrUnavailable(reason)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    try:
        done = subprocess.run(
            [TESSERACT, "stdin", "stdout", "-l", LANGUAGE, "--dpi", str(dpi), "tsv"],
            input=buffer.getvalue(),
            capture_output=True,
            timeout=PAGE_TIMEOUT_SECONDS,
            env=_environment(),
        )
    except subprocess.TimeoutExpired:
        raise OcrUnavailable(f"Tesseract took longer than {PAGE_TIMEOUT_SECONDS} s on a page") from None
    if done.returncode != 0:
        message = " ".join(done.stderr.decode("utf-8", "replace").split())[:120]
        raise OcrUnavailable(f"Tesseract failed on a page ({message or f'exit code {done.returncode}'})")
    return parse_tsv(done.stdout.decode("utf-8", "replace"), reflow=reflow)


def parse_tsv(tsv: str, *, reflow: bool = False) -> OcrPage:
    """Tesseract's TSV (one row per word, with block, paragraph and line numbers) as text and mean confidence."""
    paragraphs: dict[tuple[int, int], dict[int, list[str]]] = {}
    confidences: list[float] = []
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        word = (row.get("text") or "").strip()
        if row.get("level") != "5" or not word:
            continue
        paragraph = (int(row["block_num"]), int(row["par_num"]))
        paragraphs.setdefault(paragraph, {}).setdefault(int(row["line_num"]), []).append(word)
        confidence = float(row["conf"])
        if confidence >= 0:
            confidences.append(confidence)
    line_break = " " if reflow else "\n"
    text = "\n\n".join(
        line_break.join(" ".join(words) for _, words in sorted(lines.items()))
        for _, lines in sorted(paragraphs.items())
    )
    mean = round(sum(confidences) / len(confidences), 1) if confidences else 0.0
    return OcrPage(text=text, confidence=mean, words=len(confidences))


def ocr_page(data: bytes, page_index: int, dpi: int, *, reflow: bool = False, without_text: bool = False) -> OcrPage:
    """Render page ``page_index`` of the PDF (without its text layer when ``without_text``) and read it with Tesseract."""
    reason = ocr_unavailable_reason()
    if reason:
        raise OcrUnavailable(reason)
    return ocr_image(render_page(data, page_index, dpi, without_text=without_text), dpi, reflow=reflow)


def _environment() -> dict[str, str]:
    # One OpenMP thread per Tesseract run: several threads on a small machine were 3x slower per page.
    return {**os.environ, "OMP_THREAD_LIMIT": "1"}


# A page whose images cover at least this share of it, and whose text layer's words cover less than TEXT_COVERAGE,
# is a scan with a few words on top (a stamp, a page number, a watermark, a searchable layer of one line): OCR reads it.
IMAGE_COVERAGE = 0.5
# A page of running text covers 0.24-0.29 of its area with character boxes (sample_docs/rag_handbook.pdf),
# a stamp line 0.005; below 0.05 the text layer holds a few lines at most.
TEXT_COVERAGE = 0.05
# Characters are counted as if set at most this size (points): the text layer's words, not the size of their
# glyphs, tell a page of text from a scan. A watermark's few big glyphs ("SCANNED COPY" at 64 pt covers 0.06 of
# an A4 page, "DRAFT" at 120 pt 0.09) cover as little as five to twelve characters of body text (0.001).
READING_SIZE = 12.0


@dataclass(frozen=True)
class Coverage:
    """How much of a page its images and its text layer's words cover (shares of the page's area, 0-1); the
    words' characters are counted at READING_SIZE at most."""

    images: float
    text: float

    @property
    def scan_like(self) -> bool:
        return self.images >= IMAGE_COVERAGE and self.text < TEXT_COVERAGE


def page_coverage(data: bytes, numbers: list[int]) -> dict[int, Coverage]:
    """What share of each page ``numbers`` (1-based) its images and its text layer's words cover.

    The images are placed rectangles clipped to the page (overlaps counted twice, the sum capped at 1);
    the text is the sum of the visible characters' boxes, a character larger than READING_SIZE shrunk to
    that size (its box scaled by the square of the ratio).
    """
    import pdfplumber

    found: dict[int, Coverage] = {}
    with pdfplumber.open(io.BytesIO(data), password="") as pdf:
        for number in numbers:
            page = pdf.pages[number - 1]
            x0, top, x1, bottom = page.bbox
            area = max((x1 - x0) * (bottom - top), 1.0)
            text = sum(_reading_area(char) for char in page.chars if char["text"].strip())
            found[number] = Coverage(images=image_share(page), text=min(text / area, 1.0))
            page.close()
    return found


def image_share(page: Any) -> float:
    """The share of a pdfplumber page its images cover (placed rectangles clipped to the page, overlaps counted
    twice, the sum capped at 1)."""
    x0, top, x1, bottom = page.bbox
    area = max((x1 - x0) * (bottom - top), 1.0)
    images = 0.0
    for image in page.images:
        width = min(image["x1"], x1) - max(image["x0"], x0)
        height = min(image["bottom"], bottom) - max(image["top"], top)
        images += max(width, 0.0) * max(height, 0.0)
    return min(images / area, 1.0)


def _reading_area(char: dict[str, Any]) -> float:
    """A character's box, as large as it would be at READING_SIZE when it is set larger."""
    box = (char["x1"] - char["x0"]) * (char["bottom"] - char["top"])
    size = abs(float(char.get("size") or 0.0))
    return box if size <= READING_SIZE else box * (READING_SIZE / size) ** 2


def has_image(page: Any) -> bool:
    """Whether a page draws an image (directly or in a form one level down): what a scanned page is made of."""
    try:
        return _xobjects_hold_image(page.get("/Resources"), depth=2)
    except Exception:  # a damaged resource dictionary: no image we could read
        return False


def _xobjects_hold_image(resources: Any, depth: int) -> bool:
    resources = resources.get_object() if resources is not None else None
    if not resources or "/XObject" not in resources:
        return False
    for ref in resources["/XObject"].get_object().values():
        xobject = ref.get_object()
        subtype = xobject.get("/Subtype")
        if subtype == "/Image":
            return True
        if subtype == "/Form" and depth > 1 and _xobjects_hold_image(xobject.get("/Resources"), depth - 1):
            return True
    return False
