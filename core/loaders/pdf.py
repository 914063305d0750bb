"""PDF: one document per file, one Page span per page, read by the parser the user picks.

Two parsers, one declared option (``parser``):

* ``pypdf`` (the default): the text layer as pypdf extracts it. The text is every
  page's extracted text joined by a blank line, so page ``n``'s span holds exactly
  what pypdf extracts for that page.
* ``pdfplumber``: the structure rebuilt from characters, fonts and ruled lines
  (:mod:`core.loaders.pdf_structure`): headings as Markdown ``#`` lines with their
  level, paragraphs, list items, and tables as Markdown rows (table and
  ``table_row`` elements, so the splitters that keep rows whole never cut one).

A page whose text one parser garbles (glyph numbers instead of letters, see
:mod:`core.loaders.pdf_garble`) is read by the other where that one reads it
clearly better (``fallback_pages``, and a note); a page both garble is named in
``load_warning``, never passed on silently. Glyphs drawn over themselves are read once per
position, as a viewer shows them, and the page is named; text turned by 90, 180 or 270
degrees, or at another angle, reads in its direction (:mod:`core.loaders.pdf_corruption`).
A ligature glyph (ﬁ, ﬂ, ...) is written as its letters, whichever parser or OCR read it
(:func:`~core.loaders.pdf_assemble.expand_ligatures`).

Either way the pages follow each other with one blank line between them, and a
page without a text layer but with an image (a scan) is read by Tesseract when
``ocr`` allows (:mod:`core.loaders.pdf_ocr`), and so is a page whose images cover it while
its text layer's words cover almost none of it (a stamp line or a big watermark on a scan): that page is read
as it shows without its text layer, whose words the note quotes. OCR's words' mean confidence goes in
``ocr_confidence`` (by page number), its number in ``ocr_pages``, and a note in
``load_warning``. pypdf checks the file first (encryption, page count, content
size), for both parsers. Neither parser runs anything embedded in the file (no
JavaScript, no external fetches).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import partial
from io import BytesIO
from typing import Any, Literal

from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError

from core.errors import CorruptDocumentError, EmptyDocumentError, EncryptedDocumentError, LoadError, TooLargeError
from core.loaders.base import Loader
from core.loaders.pdf_assemble import assemble_blocks, assemble_texts, byte_swapped
from core.loaders.pdf_garble import better_text, blocks_text, garbled_pages, repair_garbled_blocks, suspect
from core.loaders.pdf_notes import (
    cid_note,
    no_text_reason,
    ocr_phrase,
    over_layer_note,
    pages_phrase,
    pypdf_gave_up,
    unreadable_reason,
)
from core.loaders.pdf_ocr import (
    OcrPage,
    OcrUnavailable,
    has_image,
    ocr_page,
    ocr_unavailable_reason,
    page_coverage,
)
from core.loaders.pdf_reader import (
    check_content_size,
    decrypt_with_empty_password,
    document_info,
    error_reason,
    page_labels,
)
from core.loaders.pdf_repair import repair_pypdf_texts
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import make_document
from core.params import param
from core.runtime.forking import start_forked
from core.schema import Document

# How long past this process's own half a forked child may take before its pages are read here instead.
CHILD_GRACE_SECONDS = 10.0
# From this many pages on, a second process extracts half of them (below it, a fork costs more than it saves).
PARALLEL_FROM_PAGES = 24
# A text layer longer than this covers too much of a page to be a stamp on a scan (0.05 of an A4 page
# holds some 500 characters at 10 pt): its page is not measured for OCR.
SCAN_LAYER_MAX_CHARS = 2000
# The second readings through pdfminer (a suspect page's second opinion, a short layer's coverage) interpret the
# page's drawing again at some 120 KB/s, ten times slower than pypdf: a page whose content holds more than this
# is not read again (about 2 s at most). Such a page is a drawing, not a scan with a stamp line on top.
SECOND_READ_MAX_BYTES = 256 * 1024

# pypdf logs the damage it works around; what matters reaches the user as our own
# error or load_warning, so its notes must not print to a terminal (the CLI's one line).
logging.getLogger("pypdf").addHandler(logging.NullHandler())


@dataclass
class _TextLayer:
    """What the parser read of every page, before OCR: pdfplumber's blocks or pypdf's texts, and what went wrong."""

    blocks: list[Any] | None  # pdfplumber's blocks per page; None when pypdf read the pages
    page_texts: list[str]  # pypdf's text per page (empty for pdfplumber)
    fallback: list[int]  # the pages read by the other parser (this one's text was garbled, or it could not read them)
    read_by_other: list[int]  # of those, the pages this parser could not read at all
    unreadable: dict[int, str]  # pages that gave no text because pypdf failed on them, with the reason
    partly: dict[int, str]  # pages pypdf read only in part, with the reason
    blank: list[int]  # pages with no text (and no failure)
    texts: dict[int, str]  # the text of every page that has some, by number
    unchecked: list[int]  # suspect pages too large to be read again by the other parser
    overdrawn: dict[int, int]  # pages drawing glyphs over themselves, read once per position: how many times drawn


@LOADERS.register
@dataclass(frozen=True)
class PdfLoader(Loader):
    """A PDF page by page, through pypdf's text layer or pdfplumber's structure; scanned pages through OCR."""

    name = "pdf"
    summary = (
        "PDF (.pdf) through pypdf (the text layer) or pdfplumber (headings and tables as Markdown), "
        "one span per page, page labels kept; scanned pages read by OCR."
    )
    extensions = FORMAT_EXTENSIONS["pdf"]

    parser: Literal["pypdf", "pdfplumber"] = param(
        "pypdf",
        "'pypdf' reads the text layer as it is; 'pdfplumber' rebuilds headings, paragraphs, list items and "
        "ruled tables (written as Markdown).",
    )
    extraction_mode: Literal["plain", "layout"] = param(
        "plain",
        "pypdf's text extraction: 'plain' reads text in content order, 'layout' keeps the page's columns and spacing "
        "(pypdf parser only).",
    )
    ocr: Literal["auto", "off", "all"] = param(
        "auto",
        "OCR with Tesseract: 'auto' reads scanned pages (an image covering the page, no text layer or a few words "
        "on top), 'all' reads every page from its image, 'off' never.",
    )
    find_tables: bool = param(
        True, "Find ruled tables and write them as Markdown rows (pdfplumber parser only).", advanced=True
    )
    heading_ratio: float = param(
        1.15,
        "A line whose font is this many times the body text's size is a heading (pdfplumber parser only).",
        ge=1.0,
        le=3.0,
        advanced=True,
    )
    ocr_dpi: int = param(
        200,
        "Resolution a page is rendered at for OCR (higher reads small print better, slower).",
        ge=72,
        le=400,
        advanced=True,
    )
    max_ocr_pages: int = param(
        50,
        "Read at most this many pages by OCR (1.5-3 CPU-seconds per page of text on this project's benchmark); the rest are left out with a note.",
        ge=1,
        le=2000,
        advanced=True,
    )
    # Not covered by the character limit: that is checked after extraction, and blank or nearly blank
    # pages cost reading time without adding characters (50 MiB holds some 400,000 blank pages).
    max_pages: int = param(
        2000,
        "Refuse PDFs with more pages than this, before reading any (reading time grows with pages).",
        ge=1,
        le=100_000,
    )
    max_content_mb: int = param(
        32,
        "Refuse PDFs whose pages hold more drawing instructions than this many MB (reading them would take minutes).",
        ge=1,
        le=1024,
        advanced=True,
    )

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        if not data.strip():
            raise EmptyDocumentError(file_name, "is empty")
        if b"%PDF-" not in data[:1024]:
            raise CorruptDocumentError(file_name, "is not a PDF (it does not start with %PDF-)")
        try:
            return self._load(data, file_name)
        except LoadError:
            raise
        except RecursionError:
            raise CorruptDocumentError(file_name, "has a page tree or object nesting too deep to read") from None
        except Exception as exc:  # pypdf raises many kinds of errors on damaged files
            raise CorruptDocumentError(file_name, f"is not a readable PDF ({error_reason(exc)})") from None

    def _load(self, data: bytes, file_name: str) -> list[Document]:
        reader, page_count = self._open(data, file_name)
        sizes = check_content_size(reader, file_name, self.max_content_mb)
        heavy = {number for number, size in enumerate(sizes, start=1) if size > SECOND_READ_MAX_BYTES}
        labels = page_labels(reader, page_count)

        layer = self._text_layer(data, reader, file_name, page_count, heavy)
        ocr_read, ocr_notes, ocr_found_nothing, over_layer = self._ocr(data, reader, layer.blank, layer.texts, heavy)
        if len(layer.blank) + len(layer.unreadable) == page_count and not ocr_read:
            self._refuse_textless(layer, ocr_notes, ocr_found_nothing, file_name)

        if layer.blocks is not None:
            full_text, elements, pages = assemble_blocks(layer.blocks, labels, ocr_read)
        else:
            full_text, elements, pages = assemble_texts(layer.page_texts, labels, ocr_read)

        metadata = self._metadata(reader, file_name, page_count, layer, ocr_read)
        read = {number for number, page in enumerate(pages, start=1) if page.end_char > page.start_char}
        empty = [n for n in range(1, page_count + 1) if n not in read and n not in layer.unreadable]
        notes = self._notes(layer, empty, ocr_read, ocr_found_nothing, {n: layer.texts[n] for n in over_layer})
        swapped = [n for n, text in sorted(layer.texts.items()) if n not in ocr_read and byte_swapped(text)]
        notes.extend(_text_notes(full_text, pages, ocr_read, swapped))
        notes.extend(ocr_notes)
        if notes:
            metadata["load_warning"] = "; ".join(notes)
        return [make_document(full_text, metadata, elements, pages)]

    def _open(self, data: bytes, file_name: str) -> tuple[PdfReader, int]:
        """pypdf's reader of the file (decrypted with the empty password when it is encrypted) and its page
        count: a file without pages, or with more than ``max_pages``, is refused."""
        reader = PdfReader(BytesIO(data), strict=False)
        if reader.is_encrypted:
            decrypt_with_empty_password(reader, file_name)
        page_count = len(reader.pages)
        if page_count == 0:
            raise EmptyDocumentError(file_name, "has no pages")
        if page_count > self.max_pages:
            raise TooLargeError(file_name, f"has {page_count:,} pages, more than max_pages={self.max_pages:,}")
        return reader, page_count

    def _refuse_textless(
        self, layer: _TextLayer, ocr_notes: list[str], ocr_found_nothing: list[int], file_name: str
    ) -> None:
        """No page gave text: the file is refused, as damaged when pages could not be read, else as empty."""
        if layer.unreadable:
            raise CorruptDocumentError(
                file_name, f"has pages whose content could not be read ({unreadable_reason(layer.unreadable)})"
            )
        unavailable = None if self.ocr == "off" else ocr_unavailable_reason()
        raise EmptyDocumentError(file_name, no_text_reason(self.ocr, ocr_notes, ocr_found_nothing, unavailable))

    def _metadata(
        self, reader: PdfReader, file_name: str, page_count: int, layer: _TextLayer, ocr_read: dict[int, OcrPage]
    ) -> dict[str, Any]:
        """The file's metadata, which parser read it, and the pages the other parser or OCR read."""
        metadata: dict[str, Any] = {"file_name": file_name, "file_type": "pdf", "page_count": page_count}
        metadata.update(document_info(reader))
        metadata["parser"] = self.parser
        if layer.fallback:
            metadata["fallback_pages"] = layer.fallback
        if ocr_read:
            metadata["ocr_pages"] = sorted(ocr_read)
            metadata["ocr_confidence"] = {str(number): ocr_read[number].confidence for number in sorted(ocr_read)}
        return metadata

    def _text_layer(
        self, data: bytes, reader: PdfReader, file_name: str, page_count: int, heavy: set[int]
    ) -> _TextLayer:
        """What the chosen parser reads of every page, garbled pages read again by the other parser (pypdf's
        suspect pages by pdfplumber only when their content is at most SECOND_READ_MAX_BYTES: ``heavy`` are not)."""
        if self.parser == "pdfplumber":
            return self._pdfplumber_layer(data, reader, file_name, page_count)
        return self._pypdf_layer(data, reader, file_name, heavy)

    def _pdfplumber_layer(self, data: bytes, reader: PdfReader, file_name: str, page_count: int) -> _TextLayer:
        from core.loaders.pdf_structure import read_pages

        blocks, overdrawn = read_pages(data, find_tables=self.find_tables, heading_ratio=self.heading_ratio)
        if len(blocks) != page_count:
            raise CorruptDocumentError(
                file_name, f"is not a readable PDF (pdfplumber found {len(blocks)} of {page_count} pages)"
            )
        blocks, fallback = repair_garbled_blocks(reader, blocks)
        return _TextLayer(
            blocks=blocks,
            page_texts=[],
            fallback=fallback,
            read_by_other=[],
            unreadable={},
            partly={},
            blank=[number for number, page in enumerate(blocks, start=1) if not page],
            texts={number: blocks_text(page) for number, page in enumerate(blocks, start=1) if page},
            unchecked=[],
            overdrawn=overdrawn,
        )

    def _pypdf_layer(self, data: bytes, reader: PdfReader, file_name: str, heavy: set[int]) -> _TextLayer:
        texts, skipped = self._extract(reader, file_name)
        repairs = repair_pypdf_texts(data, reader, texts, skipped, layout=self.extraction_mode == "layout", skip=heavy)
        texts, read_by_other = repairs.texts, repairs.read_by_other
        skipped = {number: reason for number, reason in skipped.items() if number not in read_by_other}
        unreadable = {number: reason for number, reason in skipped.items() if not texts[number - 1]}
        return _TextLayer(
            blocks=None,
            page_texts=texts,
            fallback=sorted({*repairs.garbled, *read_by_other, *repairs.overdrawn}),
            read_by_other=read_by_other,
            unreadable=unreadable,
            partly={number: reason for number, reason in skipped.items() if texts[number - 1]},
            blank=[number for number, text in enumerate(texts, start=1) if not text and number not in unreadable],
            texts={number: text for number, text in enumerate(texts, start=1) if text},
            unchecked=[number for number in sorted(heavy) if texts[number - 1] and suspect(texts[number - 1])],
            overdrawn=repairs.overdrawn,
        )

    def _notes(
        self,
        layer: _TextLayer,
        empty: list[int],
        ocr_read: dict[int, OcrPage],
        ocr_found_nothing: list[int],
        over_layer: dict[int, str],
    ) -> list[str]:
        """What the user is told about the pages: empty, unreadable, read by OCR or by the other parser."""
        notes = []
        if empty:
            notes.append(f"no text on {pages_phrase(empty)}")
        if layer.unreadable:
            notes.append(f"could not read {unreadable_reason(layer.unreadable)}")
        if layer.partly:
            notes.append(f"could not read part of {unreadable_reason(layer.partly)}")
        if ocr_read:
            notes.append(ocr_phrase(ocr_read))
        if ocr_found_nothing:
            notes.append(f"OCR read no text on {pages_phrase(ocr_found_nothing)}")
        if over_layer:
            notes.append(over_layer_note(over_layer))
        if layer.overdrawn:
            times = max(layer.overdrawn.values())
            by = ", by pdfplumber" if self.parser == "pypdf" else ""
            notes.append(
                f"glyphs drawn over themselves on {pages_phrase(sorted(layer.overdrawn))} (up to {times} times at one "
                f"position, as a fake bold draws them): read once per position{by}"
            )
        if layer.fallback:
            other = "pdfplumber" if self.parser == "pypdf" else "pypdf"
            garbled = [
                number
                for number in layer.fallback
                if number not in layer.read_by_other and (self.parser != "pypdf" or number not in layer.overdrawn)
            ]
            if garbled:
                notes.append(f"{self.parser}'s text was garbled on {pages_phrase(garbled)}: read by {other} instead")
            if layer.read_by_other:
                notes.append(
                    f"{self.parser} could not read {pages_phrase(layer.read_by_other)}: read by {other} instead"
                )
        if layer.unchecked:
            notes.append(
                f"the text of {pages_phrase(layer.unchecked)} reads little like words and was not read again by "
                f"pdfplumber (more than {SECOND_READ_MAX_BYTES // 1024} KB of drawing instructions on the page)"
            )
        return notes

    def _ocr(
        self, data: bytes, reader: PdfReader, blank: list[int], layer: dict[int, str], heavy: set[int]
    ) -> tuple[dict[int, OcrPage], list[str], list[int], list[int]]:
        """The pages OCR read (by number), one-line notes about what it could not do, the pages it read
        without finding a word, and the pages whose text layer OCR's text replaced.

        ``blank`` are the pages the parser found no text on, ``layer`` the others' text. 'auto' reads
        the blank pages that draw an image, and the pages whose images cover most of the page while
        their characters cover almost none (:func:`~core.loaders.pdf_ocr.page_coverage`): a scan with a
        stamp line on top. There OCR's text is kept only when it reads clearly more words than the layer.
        A page in ``heavy`` (more than SECOND_READ_MAX_BYTES of content) is a drawing: its coverage is not measured.
        """
        if self.ocr == "off":
            return {}, [], [], []
        wanted, scan_like = self._ocr_wanted(data, reader, blank, layer, heavy)
        if not wanted:
            return {}, [], [], []
        reason = ocr_unavailable_reason()
        if reason:
            return {}, [f"{pages_phrase(wanted)} not read: {reason}"], [], []
        notes = []
        if len(wanted) > self.max_ocr_pages:
            notes.append(
                f"{pages_phrase(wanted[self.max_ocr_pages :])} not read by OCR (max_ocr_pages={self.max_ocr_pages})"
            )
            wanted = wanted[: self.max_ocr_pages]
        read: dict[int, OcrPage] = {}
        found_nothing: list[int] = []
        over_layer: list[int] = []
        for number in wanted:
            try:
                # A scan under a few words of text (a watermark, a stamp) is read as the scan shows without them.
                page = ocr_page(
                    data, number - 1, self.ocr_dpi, reflow=self.parser == "pdfplumber", without_text=number in scan_like
                )
            except OcrUnavailable as exc:
                notes.append(f"page {number} not read by OCR: {exc}")
                continue
            if number in scan_like:
                if better_text(layer[number], page.text):
                    read[number] = page
                    over_layer.append(number)
            elif page.text.strip():
                read[number] = page
            else:
                found_nothing.append(number)
        return read, notes, found_nothing, over_layer

    def _ocr_wanted(
        self, data: bytes, reader: PdfReader, blank: list[int], layer: dict[int, str], heavy: set[int]
    ) -> tuple[list[int], list[int]]:
        """The pages OCR should read, in order, and of those the ones with a text layer (scans with a stamp line)."""
        if self.ocr == "all":
            return list(range(1, len(reader.pages) + 1)), []
        wanted = [number for number in blank if has_image(reader.pages[number - 1])]
        # Only a short text layer can cover little of a page; measuring coverage needs pdfplumber's characters.
        few_words = [
            number
            for number, text in layer.items()
            if len(text) <= SCAN_LAYER_MAX_CHARS and number not in heavy and has_image(reader.pages[number - 1])
        ]
        if not few_words:
            return wanted, []
        try:
            coverage = page_coverage(data, few_words)
        except Exception:  # pdfplumber cannot read a file pypdf did: measure nothing, read as before
            coverage = {}
        scan_like = [number for number in few_words if number in coverage and coverage[number].scan_like]
        return sorted(wanted + scan_like), scan_like

    def _extract(self, reader: PdfReader, file_name: str) -> tuple[list[str], dict[int, str]]:
        """Every page's text ("" for a blank or unreadable page), and why pypdf skipped a page or part of one.

        pypdf is pure Python, so a long PDF is read on two cores: a forked child
        extracts the second half of the pages while this process does the first
        (300 pages: 0.70 -> 0.41 s). The texts are the same either way; if the
        child does not deliver, its pages are read here.
        """
        pages = list(reader.pages)
        half = len(pages) // 2
        work = partial(self._extract_range, pages, half, len(pages), file_name)
        child = start_forked(work) if len(pages) >= PARALLEL_FROM_PAGES else None
        if child is None:
            return self._extract_range(pages, 0, len(pages), file_name)
        started = time.perf_counter()
        try:
            texts, unreadable = self._extract_range(pages, 0, half, file_name)
        except BaseException:
            child.cancel()
            raise
        # The child reads as many pages as this process did; far longer means it is stuck, not slow.
        rest = child.result(timeout=CHILD_GRACE_SECONDS + 4 * (time.perf_counter() - started)) or work()
        return texts + rest[0], {**unreadable, **rest[1]}

    def _extract_range(
        self, pages: list[Any], start: int, stop: int, file_name: str
    ) -> tuple[list[str], dict[int, str]]:
        texts: list[str] = []
        unreadable: dict[int, str] = {}
        for number, page in enumerate(pages[start:stop], start=start + 1):
            try:
                with pypdf_gave_up() as gave_up:
                    # Layout mode drops text set at an angle by default (a vertical column header): keep it.
                    text = page.extract_text(extraction_mode=self.extraction_mode, layout_mode_strip_rotated=False)
            except FileNotDecryptedError:
                raise EncryptedDocumentError(
                    file_name, "is encrypted and cannot be read without its password"
                ) from None
            except Exception as exc:  # one damaged page should not lose the others
                text, gave_up = "", [f"pypdf failed on it ({error_reason(exc)})"]
            if gave_up:
                # pypdf skipped drawing that may hold text: unread (or partly read), not blank.
                unreadable[number] = gave_up[0]
            texts.append(text if text.strip() else "")
        return texts, unreadable


def _text_notes(
    full_text: str, pages: list[Any], ocr_read: dict[int, OcrPage], swapped: list[int]
) -> list[str]:
    """What the text itself says of the pages: unmapped glyphs (``(cid:12)``), byte-swapped text read back,
    garbled pages the parsers kept."""
    notes = []
    cid = cid_note(full_text, pages)
    if cid:
        notes.append(cid)
    garbled = garbled_pages({p.number: full_text[p.start_char : p.end_char] for p in pages if p.number not in ocr_read})
    if swapped:
        notes.append(
            f"{pages_phrase(swapped)}'s text is stored byte-swapped (its fonts name U+4D00 for \"M\"): read back as "
            "the letters it encodes"
        )
    if garbled:
        notes.append(
            f"garbled text on {pages_phrase(garbled)}: the PDF's fonts do not say which characters they draw "
            "(ocr='all' reads the page as an image)"
        )
    return notes
