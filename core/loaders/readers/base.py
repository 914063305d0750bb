"""What every reader engine shares: the base class, the one join of a framework's documents, and the bounded read.

A reader engine runs one real framework reader (LlamaIndex's SimpleDirectoryReader,
a LangChain document loader, markitdown) on a file, as that framework's users run
it. The framework returns one document per page, slide or row, or one for the file;
:func:`joined_pieces` turns them into one text (pieces joined by a blank line, so a
page's span holds exactly the text the framework gave for it), the metadata every
piece shares, and the pages. The same function is written into exported scripts
(:mod:`core.loaders.readers.script`), so a script's Document is the app's.

The framework reads a copy of the bytes named ``document<suffix>`` in a fresh
temporary folder: never the uploaded name, which is untrusted text. Its metadata
about that copy (its path and dates) says nothing of the user's file and is left
out; ``source`` and ``file_path`` become the file's name.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any, ClassVar

from core.runtime.installed import framework_version
from core.translate.snippet import CodeSnippet

# One piece of a framework's output: its text, its metadata (plain values only), its excluded keys (LLM, EMBED).
Piece = tuple[str, dict[str, Any], list[str], list[str]]

_ATX_HEADING = re.compile(r"^(#{1,6})[ \t]+\S.*$", re.MULTILINE)
_TABLE_ROWS = re.compile(r"^\|.*\|[ \t]*(?:\n\|.*\|[ \t]*)*$", re.MULTILINE)


def joined_pieces(pieces: list, file_name: str) -> tuple[str, dict, list, list, list]:
    """A framework's documents of one file as one: ``(text, metadata, pages, excluded_llm, excluded_embed)``.

    The pieces' texts are joined by a blank line; ``pages`` holds ``(start, end, label)`` for each piece
    when the pieces are pages (their metadata has ``page_label``, ``page`` or ``page_number``). The
    metadata is what every piece says alike (text, numbers, booleans), less the temporary copy's path
    and dates; ``source`` and ``file_path`` name the file. The excluded keys are the first piece's.
    """
    copy_keys = ("creation_date", "last_modified_date", "last_accessed_date")
    text = "\n\n".join(piece[0] for piece in pieces)
    metadata = {}
    first = pieces[0] if pieces else ("", {}, [], [])
    for key, value in first[1].items():
        plain = isinstance(value, str | int | float | bool) and key not in copy_keys
        if plain and all(piece[1].get(key) == value for piece in pieces):
            metadata[key] = value
    for key in ("source", "file_path"):
        if key in metadata:
            metadata[key] = file_name
    metadata["file_name"] = file_name
    pages = []
    paged = any(key in piece[1] for piece in pieces for key in ("page_label", "page", "page_number"))
    start = 0
    for number, piece in enumerate(pieces, 1):
        page = piece[1].get("page")
        label = piece[1].get("page_label", piece[1].get("page_number", page + 1 if isinstance(page, int) else number))
        if paged:
            pages.append((start, start + len(piece[0]), str(label)))
        start += len(piece[0]) + 2
    excluded_llm = [key for key in first[2] if key in metadata]
    excluded_embed = [key for key in first[3] if key in metadata]
    return text, metadata, pages, excluded_llm, excluded_embed


def plain_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Only the values a document's metadata can hold as they are (text, numbers, booleans), in the child."""
    return {str(key): value for key, value in metadata.items() if isinstance(value, str | int | float | bool)}


def markdown_structure(text: str) -> list[tuple[str, int, int, int | None]]:
    """``(kind, start, end, level)`` of the Markdown headings and pipe tables in a reader's text."""
    found: list[tuple[str, int, int, int | None]] = [
        ("heading", match.start(), match.end(), len(match.group(1))) for match in _ATX_HEADING.finditer(text)
    ]
    found += [("table", match.start(), match.end(), None) for match in _TABLE_ROWS.finditer(text)]
    return sorted(found, key=lambda item: item[1])


@dataclass(frozen=True)
class FormatReader:
    """The framework's reader for one format: its class, how it is called, what it needs installed."""

    # "module:Class" of the framework's reader (what the version and the export name).
    target: str
    # The call as Python, on a ``Path`` named ``file``: evaluates to the framework's documents.
    call: str
    # Modules the reader imports for this format (checked with find_spec; none is imported to check).
    needs: tuple[str, ...] = ()
    # What to install when one is missing.
    install: str = ""

    @property
    def class_name(self) -> str:
        return self.target.rsplit(":", 1)[1]

    def missing(self) -> str | None:
        absent = [module for module in self.needs if find_spec(module) is None]
        if not absent:
            return None
        return f"{self.class_name} needs {', '.join(absent)} (pip install {self.install or ' '.join(absent)})"


@dataclass(frozen=True)
class ReaderEngine:
    """Base of the reader engines: a real framework reader behind ChunkScope's loader choice ``reader``."""

    # The ``reader`` choice that picks it, who reads, and the installed distribution whose version is shown.
    name: ClassVar[str] = ""
    framework: ClassVar[str] = ""
    distribution: ClassVar[str] = ""
    # What the picker says it is, beside the version.
    what: ClassVar[str] = ""
    # Said after "read no text from it" when the framework returns nothing (why it may have).
    empty_note: ClassVar[str] = ""
    formats: dict[str, FormatReader] = field(default_factory=dict)
    # Suffixes it cannot read here, and why (no loader for the format, or one that needs a missing package).
    refused: dict[str, str] = field(default_factory=dict)

    def title(self, suffix: str | None = None) -> str:
        """``LangChain PyPDFLoader`` for a suffix, else the engine's name for its users (``LangChain loaders``)."""
        found = self.formats.get(suffix or "")
        return f"{self.framework} {found.class_name}" if found else f"{self.framework} {self.what}"

    def version(self) -> str | None:
        return framework_version(self.distribution)

    def parser_label(self, suffix: str) -> str:
        """What a document read by it says in ``parser``: ``LangChain PyPDFLoader · langchain-community 0.4.2``."""
        return f"{self.title(suffix)} · {self.distribution} {self.version() or 'not installed'}"

    def unavailable_reason(self, suffix: str) -> str | None:
        """Why it cannot read files ending in ``suffix`` here, or None."""
        if self.version() is None:
            return f"{self.framework} is not installed (pip install {self.distribution})"
        if suffix in self.refused:
            return self.refused[suffix]
        found = self.formats.get(suffix)
        if found is None:
            return f"{self.framework} has no reader for {suffix or 'files without an extension'} files here"
        return found.missing()

    def read_pieces(self, data: bytes, suffix: str) -> list[Piece]:
        """The framework's documents of the bytes, read from a temporary copy (runs in the bounded child)."""
        with tempfile.TemporaryDirectory(prefix="chunkscope-reader-") as folder:
            file = Path(folder) / f"document{suffix}"
            file.write_bytes(data)
            return self.pieces(file, suffix)

    def pieces(self, file: Path, suffix: str) -> list[Piece]:
        """One call to the framework, its documents as :data:`Piece` s."""
        raise NotImplementedError

    def code(self, suffix: str, code: CodeSnippet) -> str:
        """The framework's call for ``suffix`` as Python that makes a list of :data:`Piece` s from ``file``."""
        raise NotImplementedError


def reader_listing(engines: list[ReaderEngine], suffixes: list[str]) -> list[dict[str, Any]]:
    """Each engine with its version and, per suffix, its reader class or why it cannot read it here."""
    rows = []
    for engine in engines:
        reads = {
            suffix: engine.formats[suffix].class_name for suffix in suffixes if not engine.unavailable_reason(suffix)
        }
        refused = {suffix: reason for suffix in suffixes if (reason := engine.unavailable_reason(suffix))}
        rows.append(
            {
                "name": engine.name,
                "title": engine.title(),
                "version": engine.version(),
                "reads": reads,
                "refused": refused,
            }
        )
    return rows
