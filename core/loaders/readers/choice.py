"""The ``reader`` choice every loader declares: the names, the engine each picks, the readers that cannot run
here and why, and the check made when the option is set. Kept apart from :func:`core.loaders.readers.read_with_reader`
(which reads through a loader), so a loader's own validation imports no loader."""

from __future__ import annotations

from functools import cache
from typing import Any

from core.errors import ConfigError
from core.loaders.readers.base import ReaderEngine, reader_listing

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
