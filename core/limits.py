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
:func:`core.documents.run_split` apply :data:`DEFAULT_LIMITS` unless given others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import TooLargeError
from core.params import Configurable, param
from core.schema import Document

if TYPE_CHECKING:
    from core.splitters.base import Splitter

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


DEFAULT_LIMITS = Limits()


def check_upload_size(size: int, file_name: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse a file of ``size`` bytes that is over the upload limit, before reading or parsing it."""
    if size > limits.max_upload_bytes:
        raise TooLargeError(
            file_name,
            f"is {_bytes(size, limits.max_upload_bytes)}, more than the upload limit of "
            f"{_bytes(limits.max_upload_bytes, size)}",
        )


def check_text_size(documents: Sequence[Document], file_name: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse a file whose documents hold more text than the text limit."""
    chars = sum(len(document.text) for document in documents)
    if chars > limits.max_text_chars:
        raise TooLargeError(
            file_name, f"holds {chars:,} characters of text, more than the limit of {limits.max_text_chars:,}"
        )


def estimated_nodes(document: Document, splitter: Splitter) -> int | None:
    """About how many nodes ``splitter`` makes from ``document``; None when its size does not bound the count.

    A sized splitter advances by at most ``chunk_size - chunk_overlap`` units per
    node, so the text's units over that step is the count to expect; a
    hierarchy adds up its levels. Units are characters, or whitespace-separated
    words for the word and model tokenizers (a model token is never longer
    than a word, so this undercounts rather than refuses a fair request).
    """
    sizes = splitter.level_sizes
    if not sizes:
        return None
    units = len(document.text) if splitter.size_unit == "characters" else len(document.text.split())
    return _nodes_for(units, sizes, splitter)


def _nodes_for(units: int, sizes: Sequence[int], splitter: Splitter) -> int:
    overlap = splitter.overlap_limit or 0
    return sum(math.ceil(units / max(size - overlap, 1)) for size in sizes)


def _within_bound(documents: Sequence[Document], splitter: Splitter, limits: Limits) -> bool:
    """True when even counting every character as a unit keeps the split under the node limit.

    A word holds at least one character, so this bounds the word-based estimate too and
    spares splitting the whole text into words on every split of a large document.
    """
    sizes = splitter.level_sizes
    return not sizes or sum(_nodes_for(len(d.text), sizes, splitter) for d in documents) <= limits.max_nodes


def check_split_size(documents: Sequence[Document], splitter: Splitter, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse, before any work, a split that would make more nodes (or embed more text) than the limits allow."""
    if splitter.embeds_text:
        chars = sum(len(document.text) for document in documents)
        if chars > limits.max_embed_chars:
            name = (
                str(documents[0].metadata.get("file_name") or documents[0].id)
                if len(documents) == 1
                else (f"{len(documents)} documents")
            )
            raise TooLargeError(
                name,
                f"{splitter.name} would embed {chars:,} characters sentence by sentence, more than the limit of "
                f"{limits.max_embed_chars:,}; pick a smaller document or a splitter that does not embed",
            )
    if _within_bound(documents, splitter, limits):
        return
    total = 0
    for document in documents:
        estimate = estimated_nodes(document, splitter)
        if estimate is None:
            continue
        total += estimate
        if total > limits.max_nodes:
            name = str(document.metadata.get("file_name") or document.id)
            overlap = splitter.overlap_limit or 0
            raise TooLargeError(
                name,
                f"{splitter.name} with chunk_size {splitter.size_limit or min(splitter.level_sizes):,} and chunk_overlap {overlap:,} "
                f"would make about {total:,} nodes, more than the limit of {limits.max_nodes:,}; "
                f"raise chunk_size or lower chunk_overlap",
            )


def _bytes(size: int, beside: int | None = None) -> str:
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
    "MB",
    "Limits",
    "check_split_size",
    "check_text_size",
    "check_upload_size",
    "estimated_nodes",
]
