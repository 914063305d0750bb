"""Reader engines: the readers people deploy (LlamaIndex, LangChain, markitdown) as a loader choice.

Every loader declares one ``reader`` option (:class:`core.loaders.base.Loader`):
``chunkscope`` (its own parsing, the default) or one of :data:`READER_NAMES`.
:func:`read_with_reader` runs the chosen framework's reader on the file as that
framework's users run it and makes the Document from its text and metadata
(:func:`~core.loaders.readers.base.joined_pieces`), with the framework's name
and version in ``parser``. The frameworks are imported only when one reads.

A framework reader parses untrusted bytes with code ChunkScope does not bound
(lxml, pdfminer, pandas), so it always reads in a bounded child
(:mod:`core.runtime.bounded`): inside the one :mod:`core.documents` already started, or
in its own. A zip-based file is first checked against the loader's zip bounds.

Readers that cannot run here are listed in :data:`UNAVAILABLE_READERS` with why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.errors import ChunkScopeError, CorruptDocumentError, EmptyDocumentError, UnsupportedFileError
from core.limits import Limits
from core.loaders.readers.base import ReaderEngine, joined_pieces, markdown_structure
from core.loaders.readers.choice import (  # noqa: F401  the reader choice, re-exported
    NATIVE,
    READER_NAMES,
    UNAVAILABLE_READERS,
    check_reader,
    reader_engine,
    readers,
)
from core.schema import Document, Element, Page


def read_with_reader(loader: Any, data: bytes, file_name: str, limits: Limits) -> list[Document]:
    """The file read by ``loader.reader``'s framework: one Document, spans into the framework's own text."""
    from core.loaders.archive import ZipLoader
    from core.runtime.bounded import bounding_available, run_bounded

    engine = reader_engine(loader.reader)
    suffix = Path(file_name).suffix.lower()
    reason = engine.unavailable_reason(suffix)
    if reason:
        raise UnsupportedFileError(file_name, f"reader {engine.name!r} cannot read it here: {reason}")
    if isinstance(loader, ZipLoader):  # a zip bomb is refused before any framework unpacks it
        loader.open_archive(data, file_name, limits)

    def read() -> list:
        try:
            return engine.read_pieces(data, suffix)
        except ChunkScopeError:
            raise
        except Exception as exc:  # the framework's own error, as a sentence naming the file and the reader
            raise CorruptDocumentError(
                file_name, f"{engine.title(suffix)} could not read it: {type(exc).__name__}: {str(exc)[:300]}"
            ) from None

    if bounding_available():
        pieces = run_bounded(
            read,
            file_name=file_name,
            what=f"reading it with {engine.title(suffix)}",
            seconds=limits.load_seconds,
            memory_mb=limits.work_memory_mb,
            seconds_name="load_seconds",
        )
    else:
        pieces = read()
    return [reader_document(engine, pieces, file_name, suffix, loader.name)]


def reader_document(engine: ReaderEngine, pieces: list, file_name: str, suffix: str, file_type: str) -> Document:
    """One Document from the framework's pieces: its text, shared metadata, pages, headings and tables."""
    from core.loaders.text import LOAD_DETAIL_KEYS

    text, metadata, pages, excluded_llm, excluded_embed = joined_pieces(pieces, file_name)
    if not text.strip():
        raise EmptyDocumentError(file_name, f"{engine.title(suffix)} read no text from it{engine.empty_note}")
    metadata.setdefault("file_type", file_type)
    metadata["parser"] = engine.parser_label(suffix)
    elements = [Element(kind, start, end, level=level) for kind, start, end, level in markdown_structure(text)]
    page_list = [Page(number, label, start, end) for number, (start, end, label) in enumerate(pages, 1)]
    garbled = _garbled_note(engine.title(suffix), text, page_list) if suffix == ".pdf" else ""
    if garbled:  # the same check ChunkScope's own PDF loader makes: a framework's garble is never shown silently
        metadata["load_warning"] = "; ".join(filter(None, [str(metadata.get("load_warning") or ""), garbled]))
    hidden = [key for key in LOAD_DETAIL_KEYS if key in metadata]
    return Document(
        text=text,
        metadata=metadata,
        elements=elements,
        pages=page_list,
        excluded_llm_metadata_keys=list(dict.fromkeys([*excluded_llm, *hidden])),
        excluded_embed_metadata_keys=list(dict.fromkeys([*excluded_embed, *hidden])),
    )


def _garbled_note(title: str, text: str, pages: list[Page]) -> str:
    """A note naming the pages whose text the reader read garbled (junk characters), else ""."""
    from core.loaders.pdf_garble import garbled_pages
    from core.loaders.pdf_notes import pages_phrase

    texts = {page.number: text[page.start_char : page.end_char] for page in pages} or {1: text}
    garbled = garbled_pages(texts)
    if not garbled:
        return ""
    return (
        f"{title} read garbled text on {pages_phrase(garbled)}: the PDF's fonts do not say which characters they "
        "draw (ChunkScope's own PDF loader replaces such pages with pdfplumber's reading)"
    )


__all__ = [
    "NATIVE",
    "READER_NAMES",
    "UNAVAILABLE_READERS",
    "check_reader",
    "read_with_reader",
    "reader_document",
    "reader_engine",
    "readers",
]
