"""The code splitter's ``compat="llamaindex"`` rule: LlamaIndex's ``CodeSplitter._chunk_node`` over offsets.

The rule, as LlamaIndex 0.14 writes it: parse the file (UTF-8 bytes) with a
tree-sitter grammar, refuse it when the root's first child is an ERROR node, then
walk the root's children in order. A child longer than ``max_chars`` closes the
chunk being built and is cut on its own: into its children, recursively, or, a
leaf, into pieces of ``max_chars`` characters. A child that fits joins the chunk
with the text between it and the previous child, unless that makes the chunk
longer than ``max_chars``; then the chunk closes and the next starts with that
text and the child. Every chunk is stripped (an all-whitespace one is kept, empty).

So a chunk can be longer than ``max_chars`` (the text before a child is not
counted when the child alone is measured), and text is dropped where a node the
walk descends into ends after its last child (text a grammar reads as an error).
Chunks are contiguous slices of the source, so their spans are exact.

The grammars are the tree-sitter project's own PyPI packages (core dependencies),
by the language names CodeSplitter and the code loader use. A grammar's C can
crash or loop (tree-sitter-bash, tsx), so :func:`bounded_code_chunks` parses in a
bounded child, as the ``llamaindex.code`` engine does.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import partial
from importlib import import_module
from pathlib import PurePath
from typing import Any, NamedTuple

import numpy as np

from core.errors import ConfigError
from core.limits import DEFAULT_LIMITS
from core.loaders.code import LANGUAGES
from core.spans.recovery import SPAN_STATUS_KEY, SpanStatus
from core.splitters.compat import CompatChunk, joined_chunk


class Grammar(NamedTuple):
    """A tree-sitter grammar: its module (the PyPI package ``module`` with ``-`` for ``_``) and the function
    that returns it."""

    module: str
    function: str = "language"

    @property
    def package(self) -> str:
        return self.module.replace("_", "-")


# The grammars, by CodeSplitter's language name (tree-sitter-language-pack's names, which the code loader uses).
LANGUAGE_GRAMMARS: dict[str, Grammar] = {
    "python": Grammar("tree_sitter_python"),
    "javascript": Grammar("tree_sitter_javascript"),
    "typescript": Grammar("tree_sitter_typescript", "language_typescript"),
    "tsx": Grammar("tree_sitter_typescript", "language_tsx"),
    "java": Grammar("tree_sitter_java"),
    "go": Grammar("tree_sitter_go"),
    "rust": Grammar("tree_sitter_rust"),
    "c": Grammar("tree_sitter_c"),
    "cpp": Grammar("tree_sitter_cpp"),
    "csharp": Grammar("tree_sitter_c_sharp"),
    "ruby": Grammar("tree_sitter_ruby"),
    "php": Grammar("tree_sitter_php", "language_php"),
    "kotlin": Grammar("tree_sitter_kotlin"),
    "swift": Grammar("tree_sitter_swift"),
    "scala": Grammar("tree_sitter_scala"),
    "bash": Grammar("tree_sitter_bash"),
    "sql": Grammar("tree_sitter_sql"),
}
# Extension -> language: the code loader's extensions that have a grammar here (.tex has none), .tsx with JSX.
EXTENSIONS: dict[str, str] = {
    **{extension: language for extension, language in LANGUAGES.items() if language in LANGUAGE_GRAMMARS},
    ".tsx": "tsx",
}


def language_for(file_name: str) -> str | None:
    """The language a file is split as: its extension's, or None where no grammar is here."""
    return EXTENSIONS.get(PurePath(file_name).suffix.lower())


def no_grammar_reason(file_name: str, remedy: str = "set language to one grammar") -> str:
    """Why a file is refused: the extensions that have a grammar, and what to do instead."""
    suffix = PurePath(file_name).suffix.lower()
    has = f"its extension, {suffix}," if suffix else "it has no extension, so it"
    return (
        f"CodeSplitter parses code with a tree-sitter grammar, and {file_name or 'this document'}: {has} names "
        f"none of the grammars here ({', '.join(EXTENSIONS)}); {remedy}, or pick a splitter made for text"
    )


def tree_sitter_parser(language: str) -> Any:
    """``Parser(Language(tree_sitter_python.language()))``: CodeSplitter's parser for ``language``."""
    from tree_sitter import Language, Parser

    grammar = LANGUAGE_GRAMMARS[language]
    return Parser(Language(getattr(import_module(grammar.module), grammar.function)()))


def bounded_code_chunks(text: str, language: str, max_chars: int, file_name: str, name: str) -> list[CompatChunk]:
    """:func:`llamaindex_code_chunks` in a bounded child (this one, inside the app's split child); CodeSplitter's
    refusal as a ConfigError naming the splitter ``name`` and the file."""
    from core.runtime.bounded import map_bounded

    try:
        [chunks] = map_bounded(
            partial(llamaindex_code_chunks, language=language, max_chars=max_chars),
            [text],
            file_names=[file_name or "this document"],
            what=f"splitting with {name} (compat=llamaindex)",
            seconds=DEFAULT_LIMITS.split_seconds,
            memory_mb=DEFAULT_LIMITS.work_memory_mb,
            seconds_name="split_seconds",
        )
    except ValueError as exc:  # the rule's own refusal (UnicodeError is one too): said as the engine says it
        raise ConfigError(
            f"{name}: compat=llamaindex: LlamaIndex CodeSplitter refused: {type(exc).__name__}: {exc}"
        ) from exc
    return chunks


def llamaindex_code_chunks(text: str, language: str, max_chars: int) -> list[CompatChunk]:
    """CodeSplitter's chunks of ``text`` (``count_mode="char"``), as spans: parse, refuse an ERROR first, walk.

    Runs a grammar's C: call it in a bounded child (:func:`bounded_code_chunks`).
    """
    data = text.encode("utf-8")
    root = tree_sitter_parser(language).parse(data).root_node
    children = root.children
    if children and children[0].type == "ERROR":
        raise ValueError(f"Could not parse code with language {language}.")
    walk = _Walk(_CharOffsets(text, data), max_chars)
    return _placed(text, [_stripped(text, pieces) for pieces in walk.chunk_node(root, 0)])


def _stripped(text: str, pieces: list[tuple[int, int]]) -> CompatChunk | None:
    """The chunk ``pieces`` make, stripped (None: only whitespace). Each piece starts where the one before it
    ended (tree-sitter's children are in order), so the chunk is one slice; :func:`joined_chunk` otherwise."""
    pieces = [piece for piece in pieces if piece[1] > piece[0]]
    if any(a != b for (_, b), (a, _) in zip(pieces, pieces[1:], strict=False)):
        return joined_chunk(text, pieces)
    start, end = pieces[0][0], pieces[-1][1]
    chunk = text[start:end]
    kept = chunk.strip()
    if not kept:
        return None
    start += len(chunk) - len(chunk.lstrip())
    return CompatChunk(start, start + len(kept))


class _CharOffsets:
    """Byte offsets of the UTF-8 text -> character offsets; an offset inside a character cannot be decoded.

    Kept as the non-ASCII characters only (where each starts and ends in bytes, and the extra bytes before it):
    a byte offset is a character offset less the extra bytes of the characters before it.
    """

    def __init__(self, text: str, data: bytes) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.extra: list[int] = [0]
        if len(data) != len(text):
            points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
            widths = 1 + (points >= 0x80).astype(np.int64) + (points >= 0x800) + (points >= 0x10000)
            ends = np.cumsum(widths)
            wide = np.flatnonzero(widths > 1)
            self.starts = (ends[wide] - widths[wide]).tolist()
            self.ends = ends[wide].tolist()
            self.extra = [0, *np.cumsum(widths[wide] - 1).tolist()]

    def char(self, offset: int) -> int:
        if not self.starts:
            return offset
        before = bisect_left(self.starts, offset)  # the wide characters that start before the offset
        if before and offset < self.ends[before - 1]:
            raise UnicodeDecodeError("utf-8", b"", offset, offset + 1, "a node ends inside a character")
        return offset - self.extra[before]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The characters of ``data[start:end]`` (an empty span where that slice is empty); a ValueError as
        ``decode`` raises one where an end falls inside a character."""
        if end <= start:
            return (0, 0)
        return (self.char(start), self.char(end))


@dataclass
class _Walk:
    """``CodeSplitter._chunk_node`` with each chunk a list of character spans (its text their concatenation)."""

    chars: _CharOffsets
    max_chars: int

    def chunk_node(self, node: Any, last_end: int) -> list[list[tuple[int, int]]]:
        chunks: list[list[tuple[int, int]]] = []
        current: list[tuple[int, int]] = []
        length = 0  # len(current_chunk)
        for child in node.children:
            child_start, child_end = self.chars.span(child.start_byte, child.end_byte)
            if child_end - child_start > self.max_chars:
                if length > 0:
                    chunks.append(current)
                current, length = [], 0
                if child.children:
                    chunks.extend(self.chunk_node(child, last_end))
                else:  # a leaf too long: hard cut every max_chars characters, from the end of the previous child
                    start, end = self.chars.span(last_end, child.end_byte)
                    chunks.extend([(at, min(at + self.max_chars, end))] for at in range(start, end, self.max_chars))
            else:
                piece = self.chars.span(last_end, child.end_byte)  # the text since the previous child, and the child
                size = piece[1] - piece[0]
                if length + size > self.max_chars:
                    if length > 0:
                        chunks.append(current)
                    current, length = [piece], size
                else:
                    current.append(piece)
                    length += size
            last_end = child.end_byte
        if length > 0:
            chunks.append(current)
        return chunks


def _placed(text: str, chunks: list[CompatChunk | None]) -> list[CompatChunk]:
    """Every chunk, an all-whitespace one kept empty as CodeSplitter keeps it, placed as span recovery places an
    empty chunk: where the chunk before it ended, or where the next starts if that is earlier."""
    kept: list[CompatChunk] = []
    previous_end = 0
    for chunk in chunks:
        if chunk is None:
            kept.append(CompatChunk(previous_end, previous_end, None, {SPAN_STATUS_KEY: SpanStatus.EXACT.value}))
        else:
            kept.append(chunk)
            previous_end = chunk.end
    following = len(text)
    for index in range(len(kept) - 1, -1, -1):
        chunk = kept[index]
        if chunk.metadata is None:
            following = chunk.start
        elif chunk.start > following:
            kept[index] = chunk._replace(start=following, end=following)
    return kept
