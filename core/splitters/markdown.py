"""Heading splitters: one node per section, with the path of headings above it.

A *section* is a heading and everything up to the next heading that starts a
section. Which headings start one is the only thing the Markdown and HTML
splitters disagree on, so the section logic lives here once
(:class:`SectionSplitter`, :func:`section_spans`) and ``html.py`` only says
which headings count.

Metadata follows both libraries users know: ``header_path`` is the path of the
*enclosing* headings, as LlamaIndex's MarkdownNodeParser writes it
(``"/Title/Section/"`` for a subsection under them, ``"/"`` at the top), and
``header_1`` … ``header_6`` hold the titles in force at each level *including*
the section's own heading, as LangChain's MarkdownHeaderTextSplitter does.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from core.errors import ConfigError
from core.params import param
from core.schema import Document, Element
from core.splitters.base import CutGuard, Span, Splitter, merge_pieces, piece_sizes, protected_cuts, trim_span
from core.splitters.registry import SPLITTERS
from core.tokenizers import TOKENIZER_NAMES, Tokenizer, get_tokenizer

if TYPE_CHECKING:
    from markdown_it.token import Token


class Heading(NamedTuple):
    """A heading's span in the text, its level (1 = top) and its title."""

    start: int
    end: int
    level: int
    title: str


def headings_from_elements(elements: Iterable[Element]) -> list[Heading]:
    """The headings a loader found, in document order."""
    found = [
        Heading(e.start_char, e.end_char, e.level or 1, str(e.attrs.get("title", "")))
        for e in elements
        if e.kind == "heading"
    ]
    return sorted(found, key=lambda h: h.start)


def section_spans(text: str, headings: Sequence[Heading], split_levels: Iterable[int]) -> list[Span]:
    """One span per section, each carrying ``header_path`` and ``header_N`` metadata.

    Only headings whose level is in ``split_levels`` start a section or enter the
    path; the others stay inside the section that holds them. Text before the
    first such heading is a section of its own (path ``"/"``). Spans are trimmed of
    surrounding whitespace; whitespace-only sections vanish.
    """
    levels = set(split_levels)
    starters = [h for h in headings if h.level in levels]
    spans: list[Span] = []
    stack: list[Heading] = []
    bounds = [0] + [h.start for h in starters] + [len(text)]
    for index in range(len(bounds) - 1):
        heading = starters[index - 1] if index > 0 else None
        if heading is not None:
            while stack and stack[-1].level >= heading.level:
                stack.pop()
            parents = [h.title for h in stack]
            stack.append(heading)
        else:
            parents = []
        trimmed = trim_span(text, bounds[index], bounds[index + 1])
        if trimmed is None:
            continue
        metadata: dict[str, str] = {"header_path": "/" + "".join(f"{title}/" for title in parents)}
        for open_heading in stack:
            metadata[_HEADER_KEYS.get(open_heading.level) or f"header_{open_heading.level}"] = open_heading.title
        spans.append(Span(trimmed[0], trimmed[1], metadata))
    return spans


# One key string per level, shared by every node (a new "header_2" per node was 7% of a split's memory).
_HEADER_KEYS = {level: f"header_{level}" for level in range(1, 7)}


# Finer and finer cuts for an oversized section: blank lines, line ends, whitespace,
# then single characters. Each returns consecutive pieces covering [start, end).
def _cut_after(pattern: re.Pattern[str]) -> Callable[[str, int, int], list[tuple[int, int]]]:
    def cut(text: str, start: int, end: int) -> list[tuple[int, int]]:
        pieces = []
        piece_start = start
        for match in pattern.finditer(text, start, end):
            if match.end() > piece_start and match.start() > piece_start:
                pieces.append((piece_start, match.end()))
                piece_start = match.end()
        if piece_start < end:
            pieces.append((piece_start, end))
        return pieces

    return cut


def _cut_characters(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(start, end)]


_CUT_PARAGRAPHS = _cut_after(re.compile(r"\n[ \t]*(?:\r?\n|\r)\s*|\r[ \t]*\r\s*"))
_CUT_LINES = _cut_after(re.compile(r"\r\n|\r|\n"))
_CUT_WORDS = _cut_after(re.compile(r"\s+"))
SECTION_CUTS = (_CUT_PARAGRAPHS, _CUT_LINES, _CUT_WORDS, _cut_characters)
WORD_CUTS = (_CUT_WORDS, _cut_characters)


def fit_pieces(
    text: str,
    pieces: Sequence[tuple[int, int]],
    chunk_size: int,
    tokenizer: Tokenizer,
    *,
    chunk_overlap: int = 0,
    cuts: Sequence[Callable[[str, int, int], list[tuple[int, int]]]] = SECTION_CUTS,
    guard: CutGuard | None = None,
) -> list[Span]:
    """Pack consecutive ``pieces`` into chunks of at most ``chunk_size`` tokens (see :func:`merge_pieces`).

    A piece over the limit is cut finer, with each of ``cuts`` in turn (for a
    section: blank lines, line ends, whitespace, then between characters). A
    cut that ``guard`` forbids (inside a table row) is never made, so only such
    a row can exceed ``chunk_size``.
    """
    pieces = list(pieces)
    for cut in cuts:
        sizes = piece_sizes(tokenizer, text, pieces)
        if all(size <= chunk_size for size in sizes):
            break
        finer: list[tuple[int, int]] = []
        for piece, size in zip(pieces, sizes, strict=True):
            if size <= chunk_size:
                finer.append(piece)
                continue
            smaller = cut(text, *piece)
            if guard:
                smaller = guard.pieces(piece[0], piece[1], [start for start, _ in smaller[1:]])
            finer.extend(smaller)
        pieces = finer
    return merge_pieces(pieces, piece_sizes(tokenizer, text, pieces), chunk_size, chunk_overlap, text)


@dataclass(frozen=True)
class SectionSplitter(Splitter):
    """Shared by the heading splitters: sections, then an optional size limit inside each.

    Subclasses say where a document's headings come from (:meth:`structure`) and which
    levels start a section (:meth:`split_levels`).
    """

    chunk_size: int = param(
        0, "Largest node, in the chosen tokenizer's units; 0 keeps every section whole.", ge=0, le=1_000_000
    )
    tokenizer: str = param(
        "characters",
        "What chunk_size counts: characters, whitespace words, or the embedding model's tokens.",
        choices=TOKENIZER_NAMES,
    )

    keeps_table_rows = True

    @property
    def size_limit(self) -> int | None:
        return self.chunk_size or None

    @property
    def overlap_limit(self) -> int | None:
        return 0

    def structure(self, document: Document) -> Sequence[Element]:
        """The elements whose headings the sections are drawn from."""
        return document.elements

    def split_levels(self) -> set[int]:
        raise NotImplementedError

    def unsuited_reason(self, document: Document) -> str | None:
        levels = self.split_levels()
        if self.chunk_size or any(h.level in levels for h in headings_from_elements(self.structure(document))):
            return None
        name = document.metadata.get("file_name", "this document")
        kind = document.metadata.get("file_type")
        return (
            f"the {self.name} splitter cuts at headings, and {name}{f' ({kind})' if kind else ''} has none at the "
            f"levels it splits on, so the whole document is one node; pick a splitter that cuts by size"
        )

    def spans(self, document: Document) -> list[Span]:
        text = document.text
        elements = self.structure(document)
        sections = section_spans(text, headings_from_elements(elements), self.split_levels())
        if not self.chunk_size:
            return sections
        tokenizer = get_tokenizer(self.tokenizer)
        # The rows the document itself declares (as build_nodes and the other splitters see them).
        guard = protected_cuts(document)
        spans: list[Span] = []
        for section in sections:
            pieces = [(section.start, section.end)]
            for start, end, _ in fit_pieces(text, pieces, self.chunk_size, tokenizer, guard=guard):
                spans.append(Span(start, end, dict(section.metadata or {})))
        return spans


@SPLITTERS.register
@dataclass(frozen=True)
class MarkdownSplitter(SectionSplitter):
    """Like LlamaIndex's MarkdownNodeParser and LangChain's MarkdownHeaderTextSplitter, with exact spans.

    Headings come from the loader's elements; a document without heading
    elements is parsed with markdown-it, so ``#`` lines inside code fences are
    never headings.
    """

    name = "markdown"
    summary = "One node per Markdown section (or per section at a chosen heading level), with its header path."

    heading_level: int = param(
        6, "Deepest heading that starts a node; deeper headings stay inside their section (6 = every heading).",
        ge=1, le=6,
    )

    def structure(self, document: Document) -> Sequence[Element]:
        if any(e.kind == "heading" for e in document.elements):
            return document.elements
        # A document that did not come through the Markdown loader: find its headings
        # as the loader's parser would (see markdown_headings).
        return markdown_headings(document.text)

    def split_levels(self) -> set[int]:
        return set(range(1, self.heading_level + 1))


# -- headings without a full parse -----------------------------------------------------
#
# The sections need only the headings, and a full CommonMark parse (markdown-it, pure
# Python) costs several times a line scan. The scanner below reads the plain block
# structure itself (paragraphs, ATX and setext headings, fenced and indented code,
# thematic breaks). A stretch that holds anything else (a block quote, a list, an HTML
# block, a setext underline under a table or a reference definition) is parsed by
# markdown-it, from the start of its block to the next line that surely starts afresh:
# an unindented line after a blank line that opens no container. Block structure up to
# such a line does not depend on what follows it, so the stretch parses as it would in
# the whole document; if a fence or HTML block is still open at its end, the rest of
# the stretch grows. Titles come from markdown-it's inline parser (with the reference
# definitions the stretches found) unless they hold no inline markup.

_FENCE_OPEN = re.compile(r"(`{3,})[^`]*$|(~{3,})")
_SETEXT = re.compile(r"(?:=+|-+)[ \t]*$")
_BREAK = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_MARKER = re.compile(r"(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)")
_INLINE_MARKUP = re.compile(r"[\\`*_\[\]<&!]")


def markdown_headings(text: str) -> list[Element]:
    """The heading elements :func:`core.loaders.markdown.markdown_elements` finds in ``text``, found faster."""
    lines = _LineTable(text)
    starts, ends = lines.starts, lines.ends
    count = len(lines)
    found: list[tuple[int, int, int, str]] = []  # (start, end, level, title source)
    env: dict = {}  # markdown-it's environment: the reference definitions the stretches hold
    fence: tuple[str, int] | None = None
    paragraph: int | None = None  # the open paragraph's first line
    piped = False  # the open paragraph has a "|": it may be a table
    index = 0
    while index < count:
        start, end = starts[index], ends[index]
        line = text[start:end]
        if fence is not None:
            columns, at = _indent(line)
            rest = line[at:]
            if columns < 4 and rest.startswith(fence[0] * fence[1]) and not rest.strip(" \t").strip(fence[0]):
                fence = None
            index += 1
            continue
        if not line.strip():
            paragraph, piped = None, False
            index += 1
            continue
        columns, at = _indent(line)
        if columns >= 4:  # indented code, or the open paragraph's continuation
            piped = piped or (paragraph is not None and "|" in line)
            index += 1
            continue
        content = line[at:]
        first = content[0]
        # A "[" opening a paragraph may be a reference definition, which titles need.
        hard = (
            first in "<>"
            or (first == "[" and paragraph is None)
            or (first in "-+*0123456789" and _LIST_MARKER.match(content) is not None)
        )
        if paragraph is not None and first in "=-" and _SETEXT.match(content):
            if piped:
                hard = True
            else:
                source = "\n".join(
                    text[a:b] for a, b in zip(starts[paragraph:index], ends[paragraph:index], strict=True)
                )
                found.append((starts[paragraph], end, 1 if first == "=" else 2, source))
                paragraph, piped = None, False
                index += 1
                continue
        if hard:
            block = paragraph if paragraph is not None else index
            parsed, index = _parse_stretch(text, lines, block, _fresh_line_after(text, lines, index), env)
            found.extend(parsed)
            paragraph, piped = None, False
            continue
        if first in "`~":
            opening = _FENCE_OPEN.match(content)
            if opening is not None:
                marker = opening.group(1) or opening.group(2)
                fence = (marker[0], len(marker))
                paragraph, piped = None, False
                index += 1
                continue
        if first == "#":
            atx = _atx(content)
            if atx is not None:
                found.append((start, end, atx[0], atx[1]))
                paragraph, piped = None, False
                index += 1
                continue
        if first in "-*_" and _BREAK.match(content):
            paragraph, piped = None, False
            index += 1
            continue
        if paragraph is None:
            paragraph = index
        piped = piped or "|" in content
        index += 1
    return _heading_elements(text, found, env)


class _LineTable:
    """Where each line starts and ends (its line break excluded: CRLF, CR or LF), in machine integers.

    A list of ``(start, end)`` tuples cost ~130 bytes a line: 7 MB for 2 MB of Markdown,
    the peak of a whole split; two arrays hold the same in 16.
    """

    __slots__ = ("starts", "ends")

    def __init__(self, text: str) -> None:
        self.starts = array("q", [0])
        self.ends = array("q")
        add_start, add_end = self.starts.append, self.ends.append
        for match in _LINE_BREAKS.finditer(text):
            add_end(match.start())
            add_start(match.end())
        add_end(len(text))

    def __len__(self) -> int:
        return len(self.starts)


def _indent(line: str) -> tuple[int, int]:
    """Columns of leading whitespace (tab stops of 4) and where the content starts."""
    columns = 0
    for index, char in enumerate(line):
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += 4 - columns % 4
        else:
            return columns, index
    return columns, len(line)


def _atx(content: str) -> tuple[int, str] | None:
    """Level and title source of an ATX heading (``content`` starts at its first ``#``), else None."""
    hashes = len(content) - len(content.lstrip("#"))
    rest = content[hashes:]
    if hashes > 6 or (rest and rest[0] not in " \t"):
        return None
    title = rest.strip(" \t")
    # A closing run of #s goes when a space precedes it (or it is all there is).
    bare = title.rstrip("#")
    if len(bare) < len(title) and (not bare or bare[-1] in " \t"):
        title = bare.rstrip(" \t")
    return hashes, title


def _fresh_line_after(text: str, lines: _LineTable, index: int) -> int:
    """The first line after ``index`` that surely starts at the top level (else the line count)."""
    after_blank = False
    starts, ends = lines.starts, lines.ends
    for at in range(index + 1, len(lines)):
        start, end = starts[at], ends[at]
        if start == end or text[start:end].isspace():
            after_blank = True
            continue
        if after_blank and text[start] not in " \t<>" and _LIST_MARKER.match(text, start) is None:
            return at
        after_blank = False
    return len(lines)


def _parse_stretch(
    text: str, lines: _LineTable, first: int, stop: int, env: dict
) -> tuple[list[tuple[int, int, int, str]], int]:
    """Headings of lines ``[first, stop)`` by markdown-it, and the line to go on from.

    While a fence or HTML block (say, a comment around a blank line) is still open at
    the stretch's end, the stretch grows to the next fresh line, four times at most,
    then to the end of the document.
    """
    offset = lines.starts[first]
    if not _may_hold_headings(text, offset, lines.starts[stop] if stop < len(lines) else len(text)):
        return [], stop
    for attempt in range(8):
        end = lines.starts[stop] if stop < len(lines) else len(text)
        stretch = text[offset:end]
        tokens = _block_parser().parse(stretch, env)
        if stop >= len(lines):
            break
        breaks = len(_LINE_BREAKS.findall(stretch))
        still_open = [t for t in tokens if t.type in ("fence", "html_block") and t.map and t.map[1] >= breaks]
        if not still_open:
            break
        if attempt == 6:
            stop = len(lines)
        else:
            closing = _closing_line(text, lines, first + still_open[0].map[0], still_open[0], stop)  # type: ignore[index]
            stop = _fresh_line_after(text, lines, closing)
    found = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.map:
            head, tail = token.map
            source = tokens[index + 1].content if index + 1 < len(tokens) else ""
            found.append((lines.starts[first + head], lines.ends[first + tail - 1], int(token.tag[1]), source))
    return found, stop


def _closing_line(text: str, lines: _LineTable, opening: int, token: Token, after: int) -> int:
    """The first line from ``after`` that may close the fence or HTML block opened at line ``opening``."""
    from markdown_it.rules_block.html_block import HTML_SEQUENCES

    if token.type == "fence":
        marker = token.markup
        closes: Callable[[str], bool] = lambda line: line.lstrip(" \t").startswith(marker)  # noqa: E731
    else:
        head = text[lines.starts[opening] : lines.ends[opening]].lstrip(" \t")
        ends = [close for open_, close, _ in HTML_SEQUENCES if open_.search(head)]
        if not ends or ends[0].pattern == "^$":  # ends at a blank line: cannot be open at a fresh line
            return after
        closes = lambda line: ends[0].search(line) is not None  # noqa: E731
    for at in range(after, len(lines)):
        if closes(text[lines.starts[at] : lines.ends[at]]):
            return at
    return len(lines)


# Where a line's content starts after any quote and list markers, something that could
# make a heading, a setext underline, a fence, an HTML block or a reference definition.
# (Lines may end with CR alone, which ``^`` and ``$`` do not see.)
_BLOCK_SYNTAX = re.compile(
    r"(?:^|(?<=\r))[ \t]*(?:(?:>|[-+*]|[0-9]{1,9}[.)])[ \t]*)*(#|```|~~~|<|\[|[=-]+[ \t]*(?:$|(?=\r)))", re.MULTILINE
)


def _may_hold_headings(text: str, start: int, end: int) -> bool:
    """False when ``text[start:end]`` surely has no heading and leaves nothing open (most lists).

    Then it needs no parse: no line could be a heading, an underline, a fence or the
    start of an HTML block, and no reference definition could be among its lines.
    """
    from markdown_it.rules_block.html_block import HTML_SEQUENCES

    for match in _BLOCK_SYNTAX.finditer(text, start, end):
        mark = match.group(1)[0]
        if mark == "[":
            if "]:" in text[start:end]:
                return True
        elif mark == "<":
            line_end = _LINE_BREAKS.search(text, match.start(1), end)
            line = text[match.start(1) : line_end.start() if line_end else end]
            if any(opening.search(line) for opening, _, _ in HTML_SEQUENCES):
                return True
        else:
            return True
    return False


_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


def _heading_elements(text: str, found: list[tuple[int, int, int, str]], env: dict) -> list[Element]:
    """Heading elements with the titles markdown-it's inline rules give (the references in ``env``)."""
    from core.loaders.markdown import _inline_after

    elements: list[Element] = []
    for start, end, level, source in found:
        if _INLINE_MARKUP.search(source):
            # _inline_after reads the inline token after index -1: the first one.
            title = _inline_after(_parser().parseInline(source.strip(), env), -1)
        else:
            title = " ".join(source.split())
        trimmed = trim_span(text, start, end) or (start, start)
        elements.append(Element("heading", trimmed[0], trimmed[1], level=level, attrs={"title": title}))
    return elements


@lru_cache(maxsize=1)
def _block_parser():  # noqa: ANN202 - a MarkdownIt
    """The loader's parser without the inline pass: stretches need only headings, titles come later."""
    return _parser_factory().disable("inline")


@lru_cache(maxsize=1)
def _parser():  # noqa: ANN202 - a MarkdownIt, configured as the Markdown loader's
    return _parser_factory()


def _parser_factory():  # noqa: ANN202
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def validate_heading_tags(owner: str, tags: Sequence[str]) -> set[int]:
    """The levels named by tags like ``h2``; a ConfigError names a bad tag."""
    levels = set()
    for tag in tags:
        match = re.fullmatch(r"[hH]([1-6])", tag.strip())
        if match is None:
            raise ConfigError(f"{owner}: heading tags must be h1 to h6, got {tag!r}")
        levels.add(int(match.group(1)))
    if not levels:
        raise ConfigError(f"{owner}: name at least one heading tag to split on")
    return levels
