"""What the PDF loader tells the user about pages it could not read, and why.

pypdf does not raise when it gives up on part of a page: a form XObject nested
deeper than Python's recursion limit, or drawn too many times, is skipped with a
log warning and the page comes out blank, which read as "blank pages?" while
the text was there. :func:`pypdf_gave_up` catches those warnings for the page
being read (this thread's only: a server reads several files at once), so the
loader can say what happened instead.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from core.loaders.pdf_ocr import OcrPage
from core.schema import Page

# pdfminer (under pdfplumber) writes a glyph whose font maps it to no character as "(cid:N)".
_CID = re.compile(r"\(cid:\d+\)")
# How pypdf's warnings about skipped page content begin (pypdf._page).
_SKIPPED_CONTENT = ("Impossible to decode XFormObject", "Exceeded", "Detected cyclic form XObject")


class _Collector(logging.Handler):
    def __init__(self, thread: int) -> None:
        super().__init__(logging.WARNING)
        self.thread = thread
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.messages.append(record.getMessage())


@contextmanager
def pypdf_gave_up() -> Iterator[list[str]]:
    """A list that fills, when the block ends, with why pypdf skipped part of a page drawn meanwhile."""
    logger = logging.getLogger("pypdf")
    collector = _Collector(threading.get_ident())
    found: list[str] = []
    logger.addHandler(collector)
    try:
        yield found
    finally:
        logger.removeHandler(collector)
        found.extend(_plainly(message) for message in collector.messages if message.startswith(_SKIPPED_CONTENT))


def _plainly(message: str) -> str:
    # pypdf turns a RecursionError met while reading an object into "Error reading PDF file."
    if message.startswith("Impossible") and ("recursion" in message or "Error reading PDF file" in message):
        return "its drawing nests form XObjects deeper than pypdf can follow"
    if message.startswith("Impossible"):
        return (
            f"pypdf could not read a form XObject in its drawing ({' '.join(message.split(': ', 1)[-1].split())[:100]})"
        )
    if message.startswith("Exceeded"):
        return "its drawing calls form XObjects more times than pypdf follows"
    if message.startswith("Detected cyclic"):
        return "its drawing has a form XObject that draws itself"
    return " ".join(message.split())[:120]


def unreadable_reason(reasons: dict[int, str]) -> str:
    """Why the pages in ``reasons`` (page number -> reason) were not read, in one clause."""
    numbers = sorted(reasons)
    by_reason: dict[str, list[int]] = {}
    for number in numbers:
        by_reason.setdefault(reasons[number], []).append(number)
    return "; ".join(f"{pages_phrase(pages)}: {reason}" for reason, pages in by_reason.items())


def cid_note(text: str, pages: list[Page]) -> str | None:
    """A note naming the pages whose text holds ``(cid:N)`` glyph codes, or None when none does."""
    counts = {page.number: len(_CID.findall(text, page.start_char, page.end_char)) for page in pages}
    found = [number for number, count in counts.items() if count]
    if not found:
        return None
    total = sum(counts.values())
    return (
        f"{total:,} glyph{'s' if total > 1 else ''} written as (cid:N) on {pages_phrase(found)}: the PDF's fonts "
        "do not say which characters they draw (ocr='all' reads the page as an image)"
    )


def ocr_phrase(ocr_read: dict[int, OcrPage]) -> str:
    """``read by OCR: page 1 (96% word confidence)`` (at most 20 pages named)."""
    numbers = sorted(ocr_read)
    shown = ", ".join(f"page {n} ({ocr_read[n].confidence:.0f}%)" for n in numbers[:20])
    more = f" and {len(numbers) - 20} more" if len(numbers) > 20 else ""
    return f"read by OCR (mean word confidence): {shown}{more}"


def no_text_reason(ocr: str, ocr_notes: list[str], ocr_found_nothing: list[int], unavailable: str | None) -> str:
    """Why a PDF gave no text at all, in one sentence (``ocr_found_nothing``: pages OCR read without a
    word; ``unavailable``: why OCR cannot run here, or None)."""
    if ocr == "off":
        return "has no text layer (scanned?) and OCR is off (ocr='auto' reads scanned pages)"
    if ocr_notes and unavailable:
        return f"has no text layer (scanned?); {unavailable}"
    if ocr_found_nothing and not ocr_notes:
        return f"has no text layer, and OCR read no text on {pages_phrase(ocr_found_nothing)}"
    if ocr_notes:
        return f"has no text layer, and OCR read nothing ({ocr_notes[-1]})"
    return "has no text layer, and no page image for OCR to read (blank pages?)"


def pages_phrase(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:20])
    more = f" and {len(numbers) - 20} more" if len(numbers) > 20 else ""
    return f"page{'s' if len(numbers) > 1 else ''} {shown}{more}"


# How much of a text layer OCR's text replaced the note quotes, per page (a stamp line, a watermark's words).
QUOTED_LAYER_CHARS = 80


def over_layer_note(layers: dict[int, str]) -> str:
    """The note on scans whose few words of text layer (``layers``, by page number) OCR's reading replaced: the
    page was read as the scan shows without them, so their words are quoted here rather than lost."""
    quoted = []
    for number, text in sorted(layers.items()):
        words = " ".join(text.split())
        if len(words) > QUOTED_LAYER_CHARS:
            words = words[: QUOTED_LAYER_CHARS - 1].rstrip() + "…"
        quoted.append(f'"{words}"' if len(layers) == 1 else f'page {number} "{words}"')
    return (
        f"the text layer of {pages_phrase(sorted(layers))} covers little of a page-size image (a scan with a stamp "
        f"or a page number on top): OCR's reading of the page without that layer kept instead; the layer's words: "
        f"{', '.join(quoted)}"
    )
