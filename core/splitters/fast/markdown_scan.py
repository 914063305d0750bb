"""Markdown headings from a line scan instead of a full parse: the Markdown splitter's fast path.

The plain rule it must equal: the headings a full CommonMark parse finds, i.e.
the ``heading`` elements of :func:`core.loaders.markdown.markdown_elements`
(tests/test_markdown_headings.py: literal edge cases, and a hypothesis property
against that parse).

Measured (benchmarks/NOTES.md, second and fourth rounds): the full parse was 87%
of a split of a document without heading elements; the scan takes the whole
4.9 MB corpus.md from 3.2 to 0.28 s (markdown 0.17x -> 1.04-1.06x LangChain's
MarkdownHeaderTextSplitter, peak RSS +49 -> +5 MB), and its line table in two
``array('q')`` columns rather than a tuple per line took a split's peak memory
on 2 MB (every heading level) from +4.9 to +1.2-1.3 MB.

The sections need only the headings. The scanner reads the plain block
structure itself (paragraphs, ATX and setext headings, fenced and indented code,
thematic breaks). A stretch that holds anything else (a block quote, a list, an HTML
block, a setext underline under a table or a reference definition) is parsed by
markdown-it, from the start of its block to the next line that surely starts afresh:
an unindented line after a blank line that opens no container. Block structure up to
such a line does not depend on what follows it, so the stretch parses as it would in
the whole document; if a fence or HTML block is still open at its end, the rest of
the stretch grows. Titles come from markdown-it's inline parser (with the reference
definitions the stretches found) unless they hold no inline markup.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from core.schema import Element
from core.segmentation import trim_span

if TYPE_CHECKING:
    from markdown_it.token import Token

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
