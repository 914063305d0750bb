"""PDF through pypdf: one document per file, one Page span per page.

The text is every page's extracted text joined by a blank line, so page ``n``'s
span holds exactly what pypdf extracts for that page, and the pages follow each
other with the two-character separator between them. pypdf is pure Python and
runs nothing embedded in the file (no JavaScript, no external fetches).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import partial
from io import BytesIO
from typing import Any, Literal

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError

from core.errors import CorruptDocumentError, EmptyDocumentError, EncryptedDocumentError, LoadError, TooLargeError
from core.forking import start_forked
from core.loaders.base import Loader
from core.loaders.registry import LOADERS
from core.loaders.text import make_document, paragraph_spans
from core.params import param
from core.schema import Document, Element, Page

PAGE_SEPARATOR = "\n\n"
MB = 1024 * 1024
# How long past this process's own half a forked child may take before its pages are read here instead.
CHILD_GRACE_SECONDS = 10.0
# From this many pages on, a second process extracts half of them (below it, a fork costs more than it saves).
PARALLEL_FROM_PAGES = 24

# pypdf logs the damage it works around; what matters reaches the user as our own
# error or load_warning, so its notes must not print to a terminal (the CLI's one line).
logging.getLogger("pypdf").addHandler(logging.NullHandler())


@LOADERS.register
@dataclass(frozen=True)
class PdfLoader(Loader):
    """A PDF's text layer, page by page; scanned pages (no text) cannot be read."""

    name = "pdf"
    summary = "PDF (.pdf) through pypdf: the text layer, one span per page, page labels kept."
    extensions = (".pdf",)

    extraction_mode: Literal["plain", "layout"] = param(
        "plain",
        "pypdf's text extraction: 'plain' reads text in content order, 'layout' keeps the page's columns and spacing.",
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
            raise CorruptDocumentError(file_name, f"is not a readable PDF ({_reason(exc)})") from None

    def _load(self, data: bytes, file_name: str) -> list[Document]:
        reader = PdfReader(BytesIO(data), strict=False)
        if reader.is_encrypted:
            _decrypt_with_empty_password(reader, file_name)
        page_count = len(reader.pages)
        if page_count == 0:
            raise EmptyDocumentError(file_name, "has no pages")
        if page_count > self.max_pages:
            raise TooLargeError(file_name, f"has {page_count:,} pages, more than max_pages={self.max_pages:,}")
        _check_content_size(reader, file_name, self.max_content_mb)
        labels = _page_labels(reader, page_count)

        texts, unreadable = self._extract(reader, file_name)
        if not any(texts):
            if unreadable:
                raise CorruptDocumentError(file_name, "has pages whose content could not be read")
            raise EmptyDocumentError(file_name, "has no text layer (scanned?); OCR is not supported")

        pieces: list[str] = []
        pages: list[Page] = []
        elements: list[Element] = []
        offset = 0
        for number, (label, text) in enumerate(zip(labels, texts, strict=True), start=1):
            if number > 1:
                pieces.append(PAGE_SEPARATOR)
                offset += len(PAGE_SEPARATOR)
            pieces.append(text)
            pages.append(Page(number=number, label=label, start_char=offset, end_char=offset + len(text)))
            offset += len(text)
        full_text = "".join(pieces)
        for page in pages:
            for start, end in paragraph_spans(full_text, page.start_char, page.end_char):
                elements.append(Element("paragraph", start, end, page=page.number))

        metadata: dict[str, Any] = {"file_name": file_name, "file_type": "pdf", "page_count": page_count}
        metadata.update(_info(reader))
        notes = []
        empty = [number for number, text in enumerate(texts, start=1) if not text and number not in unreadable]
        if empty:
            notes.append(f"no text on {_pages_phrase(empty)}")
        if unreadable:
            notes.append(f"could not read {_pages_phrase(unreadable)}")
        if notes:
            metadata["load_warning"] = "; ".join(notes)
        return [make_document(full_text, metadata, elements, pages)]

    def _extract(self, reader: PdfReader, file_name: str) -> tuple[list[str], list[int]]:
        """Every page's text ("" for a blank or unreadable page), and the numbers of the unreadable pages.

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
        return texts + rest[0], unreadable + rest[1]

    def _extract_range(self, pages: list[Any], start: int, stop: int, file_name: str) -> tuple[list[str], list[int]]:
        texts: list[str] = []
        unreadable: list[int] = []
        for number, page in enumerate(pages[start:stop], start=start + 1):
            try:
                text = page.extract_text(extraction_mode=self.extraction_mode)
            except FileNotDecryptedError:
                raise EncryptedDocumentError(
                    file_name, "is encrypted and cannot be read without its password"
                ) from None
            except Exception:  # one damaged page should not lose the others
                text = ""
                unreadable.append(number)
            texts.append(text if text.strip() else "")
        return texts, unreadable


def _decrypt_with_empty_password(reader: PdfReader, file_name: str) -> None:
    """Open a PDF encrypted only against editing (empty user password); refuse a real password."""
    try:
        result = reader.decrypt("")
    except DependencyError:
        raise EncryptedDocumentError(
            file_name, "is AES-encrypted, and reading it needs the cryptography package, which is not installed"
        ) from None
    if result == PasswordType.NOT_DECRYPTED:
        raise EncryptedDocumentError(file_name, "is encrypted and cannot be read without its password")


def _check_content_size(reader: PdfReader, file_name: str, max_mb: int) -> None:
    """Refuse before extracting: extraction interprets every instruction, so its time grows with these bytes.

    Decompressing is fast (zlib, capped per stream by pypdf) and pypdf keeps the
    result for the extraction that follows.
    """
    total = 0
    for page in reader.pages:
        try:
            contents = page.get_contents()
            total += len(contents.get_data()) if contents is not None else 0
        except Exception:  # a damaged page is reported when its text is extracted
            continue
        if total > max_mb * MB:
            raise TooLargeError(
                file_name, f"holds more than {max_mb} MB of page content to interpret (max_content_mb={max_mb})"
            )


def _page_labels(reader: PdfReader, page_count: int) -> list[str]:
    """The PDF's page labels ("iv", "12"), or the page numbers where the labels are missing or broken."""
    try:
        labels = [str(label) for label in reader.page_labels]
    except Exception:
        labels = []
    if len(labels) != page_count:
        labels = [str(number) for number in range(1, page_count + 1)]
    return labels


def _info(reader: PdfReader) -> dict[str, str]:
    """Title and author from the document info, when present and not blank."""
    try:
        info = reader.metadata
        found = {"title": info.title if info else None, "author": info.author if info else None}
    except Exception:
        return {}
    return {key: " ".join(str(value).split()) for key, value in found.items() if value and str(value).strip()}


def _pages_phrase(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:20])
    more = f" and {len(numbers) - 20} more" if len(numbers) > 20 else ""
    return f"page{'s' if len(numbers) > 1 else ''} {shown}{more}"


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())[:120]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
