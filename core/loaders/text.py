"""Plain text files, and what every text-based loader shares once bytes are text: line and paragraph
spans, line breaks normalized, a document's metadata and warnings. Decoding is :mod:`core.loaders.decoding`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.loaders.base import Loader, elements_read
from core.loaders.decoding import Decoded, decode_text
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.params import param
from core.schema import Document, Element, Page

# Metadata keys about how a file was read rather than what it says: kept out of
# what the embedding model and the LLM see unless the user asks for them. The last
# five: what a page is called (slide, sheet, chapter), which PDF parser ran, the pages
# the other parser read, OCR.
LOAD_DETAIL_KEYS = (
    "encoding", "load_warning", "replaced_bytes", "page_unit", "parser", "fallback_pages", "ocr_pages", "ocr_confidence"
)  # fmt: skip

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# "\r(?!\n)" keeps a CRLF from being read as two line breaks when the regex backtracks.
_BLANK_LINE_GAP = re.compile(r"(?:\r\n|\r(?!\n)|\n)[ \t\f\v]*(?:\r\n|\r(?!\n)|\n)\s*")


def normalize_line_breaks(text: str) -> str:
    """CRLF and lone CR become LF."""
    return _LINE_BREAK.sub("\n", text) if "\r" in text else text


def line_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every line, the line break excluded (CRLF, CR or LF)."""
    spans = []
    start = 0
    for match in _LINE_BREAK.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of blank-line separated blocks in ``text[start:end]``, trimmed of surrounding whitespace."""
    end = len(text) if end is None else end
    spans = []
    block_start = start
    for gap in _BLANK_LINE_GAP.finditer(text, start, end):
        spans.append((block_start, gap.start()))
        block_start = gap.end()
    spans.append((block_start, end))
    trimmed = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            trimmed.append((a, b))
    return trimmed


def text_metadata(
    file_name: str, file_type: str, encoding: str, warning: str | None, replaced_bytes: int = 0
) -> dict[str, Any]:
    """The metadata every decoded-text document starts with."""
    metadata: dict[str, Any] = {"file_name": file_name, "file_type": file_type, "encoding": encoding}
    if warning:
        metadata["load_warning"] = warning
    if replaced_bytes:
        metadata["replaced_bytes"] = replaced_bytes
    return metadata


def make_document(
    text: str, metadata: dict[str, Any], elements: list[Element], pages: list[Page] | None = None
) -> Document:
    """A Document whose load-detail keys stay out of the LLM and EMBED views."""
    hidden = [key for key in LOAD_DETAIL_KEYS if key in metadata]
    return Document(
        text=text,
        metadata=metadata,
        elements=elements,
        pages=list(pages or []),
        excluded_llm_metadata_keys=list(hidden),
        excluded_embed_metadata_keys=list(hidden),
    )


def add_warning(metadata: dict[str, Any], warning: str) -> None:
    """Append a note to ``load_warning`` (notes are joined with "; ")."""
    existing = metadata.get("load_warning")
    metadata["load_warning"] = f"{existing}; {warning}" if existing else warning


@dataclass(frozen=True)
class DecodedTextLoader(Loader):
    """Base of the loaders that read text files (not registered itself)."""

    normalize_newlines: bool = param(
        True,
        "Turn Windows (CRLF) and old Mac (CR) line breaks into LF; off keeps the text exactly as decoded.",
        advanced=True,
    )

    def decode(self, data: bytes, file_name: str) -> Decoded:
        decoded = decode_text(data, file_name)
        if self.normalize_newlines:
            return decoded._replace(text=normalize_line_breaks(decoded.text))
        return decoded


@LOADERS.register
@dataclass(frozen=True)
class TextLoader(DecodedTextLoader):
    """Plain text: the decoded file, one paragraph element per blank-line separated block."""

    name = "text"
    summary = "Plain text (.txt, .log, .rst); any file read as text when chosen explicitly."
    extensions = FORMAT_EXTENSIONS["text"]

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        text, encoding, warning, replaced = self.decode(data, file_name)
        wanted = elements_read()
        # Paragraphs only for a caller that reads them (a batch worker whose splitter reads tables needs none).
        spans = paragraph_spans(text) if wanted is None or "paragraph" in wanted else []
        elements = [Element("paragraph", a, b) for a, b in spans]
        return [make_document(text, text_metadata(file_name, "text", encoding, warning, replaced), elements)]
