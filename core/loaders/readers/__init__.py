"""Reader engines: the readers people deploy (LlamaIndex, LangChain, markitdown) as a loader choice.

Every loader declares one ``reader`` option (:class:`core.loaders.base.Loader`):
``chunkscope`` (its own parsing, the default) or one of :data:`READER_NAMES`.
:func:`read_with_reader` runs the chosen framework's reader on the file as that
framework's users run it and makes the Document from its text and metadata
(:func:`~core.loaders.readers.base.joined_pieces`), with the framework's name
and version in ``parser``. The frameworks are imported only when one reads.

A framework reader parses untrusted bytes with code ChunkScope does not bound
(lxml, pdfminer, pandas), so it always reads in a bounded child
(:mod:`core.bounded`): inside the one :mod:`core.documents` already started, or
in its own. A zip-based file is first checked against the loader's zip bounds.

Readers that cannot run here are listed in :data:`UNAVAILABLE_READERS` with why.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from core.errors import ChunkScopeError, ConfigError, CorruptDocumentError, EmptyDocumentError, UnsupportedFileError
from core.limits import Limits
from core.loaders.readers.base import ReaderEngine, joined_pieces, markdown_structure, reader_listing
from core.schema import Document, Element, Page

NATIVE = "chunkscope"
READER_NAMES = ("llamaindex", "langchain", "markitdown")

# Readers people deploy that ChunkScope does not run, and why (shown beside the choice, as rerank says it).
UNAVAILABLE_READERS = {
    "docling": (
        "Docling reads PDF layout and tables with models (docling-models) that it downloads from the Hugging Face "
        "Hub on first use; no PyPI package ships those weights and ChunkScope downloads nothing at run time"
    ),
    "pymupdf4llm": (
        "pymupdf4llm runs on PyMuPDF, which is AGPL-3.0 licensed (or commercial); ChunkScope does not install or "
        "import it. Install it yourself if its licence suits you and compare its Markdown outside the app"
    ),
}


@cache
def _suffixes() -> tuple[str, ...]:
    from core.loaders import LOADERS

    return tuple(dict.fromkeys(ext for cls in LOADERS for ext in cls.extensions))


@cache
def reader_engine(name: str) -> ReaderEngine:
    """The engine the ``reader`` choice ``name`` picks."""
    from core.loaders.readers.langchain import LangChainReader
    from core.loaders.readers.llamaindex import LlamaIndexReader
    from core.loaders.readers.markitdown import MarkItDownReader

    classes: dict[str, Any] = {
        "llamaindex": LlamaIndexReader,
        "langchain": LangChainReader,
        "markitdown": MarkItDownReader,
    }
    if name not in classes:
        raise ConfigError(f"reader must be one of {', '.join((NATIVE, *READER_NAMES))}, got {name!r}")
    return classes[name](list(_suffixes()))


def readers() -> list[dict[str, Any]]:
    """Each reader engine, its version and what it reads here (by suffix), then the unavailable ones with why."""
    rows = reader_listing([reader_engine(name) for name in READER_NAMES], list(_suffixes()))
    rows += [{"name": name, "title": name, "version": None, "reads": {}, "refused": {}, "unavailable_reason": reason}
             for name, reason in UNAVAILABLE_READERS.items()]  # fmt: skip
    return rows


def check_reader(loader: Any) -> None:
    """Refuse a loader whose ``reader`` reads none of its formats here (said when the option is set, not on a file)."""
    engine = reader_engine(loader.reader)
    reasons = [engine.unavailable_reason(suffix) for suffix in type(loader).extensions]
    if reasons and all(reasons):
        raise ConfigError(f"{loader.name}: reader {loader.reader!r} cannot run here: {reasons[0]}")


def read_with_reader(loader: Any, data: bytes, file_name: str, limits: Limits) -> list[Document]:
    """The file read by ``loader.reader``'s framework: one Document, spans into the framework's own text."""
    from core.bounded import bounding_available, run_bounded
    from core.loaders.archive import ZipLoader

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
    hidden = [key for key in LOAD_DETAIL_KEYS if key in metadata]
    return Document(
        text=text,
        metadata=metadata,
        elements=elements,
        pages=[Page(number, label, start, end) for number, (start, end, label) in enumerate(pages, 1)],
        excluded_llm_metadata_keys=list(dict.fromkeys([*excluded_llm, *hidden])),
        excluded_embed_metadata_keys=list(dict.fromkeys([*excluded_embed, *hidden])),
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
