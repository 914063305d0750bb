"""Code splitter: whole lines, up to ``chunk_lines`` lines and ``max_chars`` characters per chunk.

Like LlamaIndex's line-based CodeSplitter fallback. A chunk never ends inside a
line unless that one line is longer than ``max_chars`` (then it is cut at a
space where possible). Within the second half of the room a chunk has, the cut
goes before the least-indented line, so chunks tend to end where a top-level
definition begins. Consecutive chunks share up to ``chunk_lines_overlap``
lines.

``compat="llamaindex"`` cuts as LlamaIndex's CodeSplitter does, along the
tree-sitter syntax tree of the grammar the file's extension names
(:mod:`core.splitters.code_llamaindex`); its chunks are slices of the source too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.base import Span, Splitter
from core.splitters.code_llamaindex import bounded_code_chunks, language_for, no_grammar_reason
from core.splitters.compat import LLAMAINDEX, CompatChunk, compat_param, compat_spans, mirror_engine
from core.splitters.registry import SPLITTERS
from core.translate.framework_code import langchain_recursive
from core.translate.snippet import CodeSnippet, split_with


@SPLITTERS.register
@dataclass(frozen=True)
class CodeSplitter(Splitter):
    """Line-based chunks of source code that prefer to end before a less-indented line.

    Differences from LlamaIndex, on purpose: no tree-sitter parse (it reads any
    text, with or without a grammar); a chunk keeps the indentation of its first
    line (only blank lines and trailing whitespace are trimmed), so it reads as code.

    ``compat="llamaindex"`` is LlamaIndex's CodeSplitter (``count_mode="char"``)
    with the grammar of the file's extension, as the ``llamaindex.code`` engine
    runs it: syntax-tree nodes packed in order up to ``max_chars``, a node too
    large cut into its children; ``chunk_lines`` and ``chunk_lines_overlap`` are
    passed on and, as in CodeSplitter, never read. A file whose extension names no
    grammar is refused, and text a grammar reads as an error may be left out of
    every chunk, as CodeSplitter leaves it.
    """

    name = "code"
    summary = "Whole lines of code per chunk (chunk_lines, max_chars), cut before top-level definitions."

    chunk_lines: int = param(
        40, "Most lines in a chunk (compat=llamaindex passes it on; CodeSplitter never reads it).", ge=1, le=100_000
    )
    chunk_lines_overlap: int = param(
        15, "Lines shared by consecutive chunks; below chunk_lines (compat=llamaindex: never read).", ge=0, le=100_000
    )
    max_chars: int = param(
        1500, "Most characters in a chunk; only a longer single line is cut (compat=llamaindex: CodeSplitter's).",
        ge=1, le=1_000_000,
    )  # fmt: skip
    compat: str = compat_param(
        LLAMAINDEX, sets="llamaindex: CodeSplitter's cut along the tree-sitter syntax tree of the file's extension"
    )

    def validate(self) -> None:
        if self.chunk_lines_overlap >= self.chunk_lines:
            raise ConfigError(
                f"{self.name}: chunk_lines_overlap ({self.chunk_lines_overlap}) must be smaller than "
                f"chunk_lines ({self.chunk_lines})"
            )

    @property
    def size_limit(self) -> int | None:
        return self.max_chars

    @property
    def covers_text(self) -> bool:
        # CodeSplitter leaves out what follows the last child of a node it descends into (the llamaindex.code
        # engine's covers_text says where).
        return self.compat != LLAMAINDEX

    @property
    def reads_tables(self) -> bool:  # type: ignore[override]
        # compat=llamaindex reads only files a grammar parses (source code), whose documents hold no table.
        return self.compat != LLAMAINDEX

    def mirror(self) -> Any:
        return mirror_engine(self, "llamaindex.code", **self._codesplitter_settings())

    def _codesplitter_settings(self) -> dict[str, int]:
        return {
            "max_chars": self.max_chars,
            "chunk_lines": self.chunk_lines,
            # CodeSplitter's must be above 0; it never reads it, so 0 here and 1 there cut alike.
            "chunk_lines_overlap": max(self.chunk_lines_overlap, 1),
        }

    def llamaindex(self, code: CodeSnippet) -> str:
        """LlamaIndex's CodeSplitter as the llamaindex.code engine runs it: each file's grammar from its extension,
        from the tree-sitter grammar packages the script's Install line names."""
        if self.compat != LLAMAINDEX:
            code.note(
                "code: CodeSplitter cuts along a tree-sitter syntax tree up to max_chars, not by lines, so chunks "
                "differ (compat=llamaindex, or the llamaindex.code engine, shows its chunks in the app); a file "
                "whose extension has no grammar among the packages installed stops the script.",
                at_call=True,
            )
        # By name: the engines sit above the splitters.
        return SPLITTERS.create("llamaindex.code", **self._codesplitter_settings()).llamaindex(code)

    def langchain(self, code: CodeSnippet) -> str:
        cut = "along CodeSplitter's syntax tree" if self.compat == LLAMAINDEX else "by lines with a line budget"
        code.note(f"code: LangChain splits code by language-specific separators, not {cut}.", at_call=True)
        return split_with(langchain_recursive(code, self.max_chars, 0, language="python"))

    def unsuited_reason(self, document: Document) -> str | None:
        """Why most of each chunk repeats the previous one here: lines so long (prose, where a paragraph is a
        line) that ``max_chars`` fills after a few of them, while up to ``chunk_lines_overlap`` lines step back.

        A chunk of ``n`` lines starts the next ``min(chunk_lines_overlap, n - 1)`` lines back, so when ``n`` is
        at most twice the overlap, each chunk moves on by half its lines or fewer.
        """
        if self.compat == LLAMAINDEX:
            return self._no_grammar_reason(document)
        units = _units(document.text, self.max_chars)
        if not units or not self.chunk_lines_overlap:
            return None
        per_chunk = min(self.chunk_lines, self.max_chars / (len(document.text) / len(units)))
        if per_chunk > 2 * self.chunk_lines_overlap:
            return None
        name = document.metadata.get("file_name", "this document")
        return (
            f"the lines of {name} are long for code: max_chars ({self.max_chars:,}) fills after about "
            f"{per_chunk:.0f} of them, and each chunk starts up to chunk_lines_overlap ({self.chunk_lines_overlap}) "
            "lines back, so most of every chunk repeats the one before (see Overlap); lower chunk_lines_overlap, "
            "or cut prose with a prose splitter (sentence, markdown)"
        )

    def spans(self, document: Document) -> list[Span]:
        if self.compat == LLAMAINDEX:
            return compat_spans(self.compat_chunks(document))
        text = document.text
        units = _units(text, self.max_chars)
        spans: list[Span] = []
        first = 0
        while first < len(units):
            stop = self._stop(units, first)
            trimmed = _trim_code(text, units[first].start, units[stop - 1].end)
            if trimmed is not None and (not spans or trimmed[1] > spans[-1].end):
                spans.append(Span(*trimmed))
            if stop >= len(units):
                break
            first = self._next_first(units, first, stop)
        return spans

    def node_spans(self, document: Document) -> list[Span] | None:
        return None if self.compat == LLAMAINDEX else self.spans(document)

    def compat_chunks(self, document: Document) -> list[CompatChunk]:
        """LlamaIndex's CodeSplitter chunks of ``document`` (``compat="llamaindex"``), parsed in a bounded child."""
        file_name = str(document.metadata.get("file_name", ""))
        language = language_for(file_name)
        if language is None:  # refused before any grammar runs, naming the file
            raise ConfigError(f"{self.name}: compat=llamaindex: {self._no_grammar_reason(document)}")
        return bounded_code_chunks(document.text, language, self.max_chars, file_name, self.name)

    def _no_grammar_reason(self, document: Document) -> str | None:
        """Why compat=llamaindex refuses a file whose extension names no tree-sitter grammar, else None."""
        file_name = str(document.metadata.get("file_name", ""))
        if language_for(file_name) is not None:
            return None
        return no_grammar_reason(file_name, remedy="set compat to none (lines, any text)")

    def _stop(self, units: list[_Unit], first: int) -> int:
        """Where the chunk starting at ``first`` ends (exclusive), preferring a less-indented next line."""
        stop = first + 1
        while (
            stop < len(units)
            and stop - first < self.chunk_lines
            and units[stop].end - units[first].start <= self.max_chars
        ):
            stop += 1
        if stop >= len(units):
            return stop
        best, best_indent = stop, units[stop].indent
        for candidate in range(stop - 1, first + max((stop - first + 1) // 2, 1) - 1, -1):
            indent = units[candidate].indent
            if indent < best_indent:
                best, best_indent = candidate, indent
        return best

    def _next_first(self, units: list[_Unit], first: int, stop: int) -> int:
        """Step back up to ``chunk_lines_overlap`` lines, keeping room for the next new line."""
        back = min(self.chunk_lines_overlap, stop - first - 1)
        while back > 0 and (units[stop].end - units[stop - back].start > self.max_chars):
            back -= 1
        return stop - back


@dataclass(frozen=True)
class _Unit:
    """A line (with its newline), or one part of a line longer than max_chars."""

    start: int
    end: int
    indent: float  # blank lines and line continuations are never preferred cut points


def _units(text: str, max_chars: int) -> list[_Unit]:
    units: list[_Unit] = []
    start = 0
    length = len(text)
    while start < length:
        newline = text.find("\n", start)
        end = length if newline == -1 else newline + 1
        line = text[start:end]
        stripped = line.lstrip(" \t")
        indent: float = float("inf") if not stripped.strip() else len(line) - len(stripped)
        if end - start <= max_chars:
            units.append(_Unit(start, end, indent))
        else:
            for i, (a, b) in enumerate(_cut_long_line(text, start, end, max_chars)):
                units.append(_Unit(a, b, indent if i == 0 else float("inf")))
        start = end
    return units


def _cut_long_line(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Parts of at most ``max_chars``, each ending after a space where one lies in its second half."""
    parts = []
    while end - start > max_chars:
        limit = start + max_chars
        space = text.rfind(" ", start + max_chars // 2, limit)
        cut = space + 1 if space != -1 else limit
        parts.append((start, cut))
        start = cut
    parts.append((start, end))
    return parts


def _trim_code(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Drop leading blank lines and trailing whitespace; keep the first line's indentation."""
    while end > start and text[end - 1].isspace():
        end -= 1
    if end == start:
        return None
    line_start = start
    position = start
    while position < end and text[position].isspace():
        if text[position] == "\n":
            line_start = position + 1
        position += 1
    # Indentation made of spaces and tabs only; other whitespace before it is dropped.
    line_start = max(line_start, start)
    while line_start < position and text[line_start] not in " \t":
        line_start += 1
    return (line_start, end)
