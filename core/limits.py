"""Limits: how much input ChunkScope accepts, so huge input is refused up front instead of exhausting the machine.

Three bounds, declared once as parameters with their defaults:

- ``max_upload_bytes``: a file larger than this is refused before it is read.
  Sizes are decimal (1 MB = 1,000,000 bytes), the unit the app's uploader
  shows, and the uploader is given this same limit, so the browser and the CLI
  refuse the same files with the same number;
- ``max_text_chars``: the text one file yields, after decoding or extraction;
- ``max_embed_chars``: how much text a splitter that embeds every sentence
  (``semantic``) may take in one split: on a CPU the model reads roughly a
  megabyte a minute, so more is refused rather than left running;
- ``max_nodes``: how many nodes one split may make. Before splitting, the node
  count is estimated from the text's size in the splitter's units and the step
  between chunks (``chunk_size - chunk_overlap``), so ``chunk_size=1`` on a long
  book is refused in milliseconds rather than building millions of nodes.
- the work a zip of XML (DOCX, PPTX, XLSX, EPUB) may cause, which its size does
  not bound: unpacked bytes per part, XML elements, paragraphs, runs, table rows
  and cells, shared strings and slides/sheets/chapters, counted while the parts
  are parsed (:mod:`core.loaders.xml_budget`), so a file is refused after at
  most that much work.

Every refusal is a :class:`~core.errors.TooLargeError` whose one sentence names
the file, the size and the limit. :func:`core.loaders.load_bytes` and
:func:`core.documents.run_split` apply :data:`DEFAULT_LIMITS` unless given others; the split's own bounds
(nodes, embedded characters) are checked by :mod:`core.splitters.size_check`, which reads the splitter.
A deployment sets its own with ``$CHUNKSCOPE_LIMITS`` (:func:`limits_from_environment`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.errors import ConfigError, TooLargeError
from core.params import Configurable, param
from core.schema import Document

# Decimal, as Streamlit's uploader counts on Linux and macOS: "50.0MB" there is 50,000,000 bytes here.
MB = 1_000_000
KB = 1_000


@dataclass(frozen=True)
class Limits(Configurable):
    """The largest input one load or one split may take."""

    name = "limits"
    summary = "Largest upload, largest text per file, most nodes per split."

    max_upload_bytes: int = param(50 * MB, "Largest file accepted, in bytes (refused before it is read).", ge=1)
    max_text_chars: int = param(
        5_000_000, "Most characters of text one file may yield (about 2,500 pages of prose).", ge=1
    )
    max_nodes: int = param(100_000, "Most nodes one split may make (estimated before splitting).", ge=1)
    max_embed_chars: int = param(
        1_000_000, "Most characters a splitter that embeds every sentence (semantic) may take in one split.", ge=1
    )
    # Office and EPUB files are zip archives of XML: a few hundred KB can unpack to millions of elements,
    # each costing parse and walk time, so the work is bounded by what is parsed, counted while it streams.
    max_xml_part_bytes: int = param(
        100 * MB, "Largest unpacked XML part (or EPUB chapter) of a DOCX, PPTX, XLSX or EPUB file, in bytes.", ge=1
    )
    max_xml_elements: int = param(
        2_000_000, "Most XML elements one DOCX, PPTX or EPUB file may hold, over all the parts read.", ge=1
    )
    max_paragraphs: int = param(200_000, "Most paragraphs (empty ones included) in one DOCX or PPTX file.", ge=1)
    max_runs: int = param(1_000_000, "Most text runs (pieces of a paragraph) in one DOCX or PPTX file.", ge=1)
    max_table_rows: int = param(200_000, "Most table rows in one DOCX or PPTX file.", ge=1)
    max_table_cells: int = param(
        1_000_000, "Most table cells in one DOCX or PPTX file (an XLSX's cells: its loader's max_cells).", ge=1
    )
    max_shared_strings: int = param(250_000, "Most distinct strings (the shared-string table) in one XLSX file.", ge=1)
    max_sections: int = param(5_000, "Most slides (PPTX), sheets (XLSX) or chapters (EPUB) in one file.", ge=1)
    load_seconds: float = param(
        120.0, "Longest one file's load may run, in seconds, before it is stopped (wall clock).", ge=0.1
    )
    split_seconds: float = param(
        60.0, "Longest one split may run, in seconds, before it is stopped (wall clock).", ge=0.1
    )
    work_memory_mb: int = param(
        2_000, "Most memory one load or split may add, in MB (1,000,000 bytes), before it is stopped.", ge=16
    )


LIMITS_ENV = "CHUNKSCOPE_LIMITS"


def limits_from_environment(environ: Mapping[str, str] = os.environ) -> Limits:
    """The defaults, with the ``name=value`` pairs of ``$CHUNKSCOPE_LIMITS`` over them (separated by spaces or
    commas, e.g. ``split_seconds=20 max_upload_bytes=10000000``), checked as a config's are: a server can be
    given a shorter deadline or a smaller upload without a code change. A wrong pair stops the import."""
    pairs: dict[str, str] = {}
    for item in re.split(r"[\s,]+", environ.get(LIMITS_ENV, "").strip()):
        if not item:
            continue
        name, equals, value = item.partition("=")
        if not equals:
            raise ConfigError(f"{LIMITS_ENV}: {item!r} is not name=value (e.g. split_seconds=20)")
        pairs[name] = value
    return Limits.from_params(pairs)


DEFAULT_LIMITS = limits_from_environment()


def check_upload_size(size: int, file_name: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse a file of ``size`` bytes that is over the upload limit, before reading or parsing it."""
    if size > limits.max_upload_bytes:
        raise TooLargeError(
            file_name,
            f"is {size_phrase(size, limits.max_upload_bytes)}, more than the upload limit of "
            f"{size_phrase(limits.max_upload_bytes, size)}",
        )


def check_text_size(documents: Sequence[Document], file_name: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse a file whose documents hold more text than the text limit."""
    chars = sum(len(document.text) for document in documents)
    if chars > limits.max_text_chars:
        raise TooLargeError(
            file_name, f"holds {chars:,} characters of text, more than the limit of {limits.max_text_chars:,}"
        )


def size_phrase(size: int, beside: int | None = None) -> str:
    """``size`` in MB, KB or bytes; in bytes (with separators) when ``beside`` would read the same rounded."""
    shown = _rounded(size)
    if beside is not None and beside != size and shown == _rounded(beside):
        return f"{size:,} bytes"
    return shown


def _rounded(size: int) -> str:
    if size >= MB:
        return f"{size / MB:,.1f} MB"
    if size >= KB:
        return f"{size / KB:,.1f} KB"
    return f"{size:,} bytes"


__all__ = [
    "DEFAULT_LIMITS",
    "LIMITS_ENV",
    "MB",
    "Limits",
    "check_text_size",
    "check_upload_size",
    "limits_from_environment",
]
