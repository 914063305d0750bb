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
on 2 MB (every heading level) from +4.9 to +1.2-1.3 MB. Sixth round (issue 18, 2 MB
of per-file Markdown, CPU): 96-104 -> 62-66 ms, by skipping runs of blank and plain
lines with one regex match (:data:`_QUIET_LINES`) and a fenced block with one search
for its closing line, reading a line's indent and syntax with regexes at its offsets
instead of slices, building the line table in C, and leaving more stretches unparsed
(:mod:`core.splitters.fast.markdown_stretches`).

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
from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache

from core.schema import Element
from core.splitters.fast.markdown_stretches import (
    LIST_MARKER,
    LineTable,
    collect_references,
    fresh_line_after,
    parse_stretch,
    title_parser,
)
from core.tokens.heading_words import inline_after
from core.tokens.segmentation import trim_span

_FENCE_OPEN = re.compile(r"(`{3,})[^`]*$|(~{3,})")
_SETEXT = re.compile(r"(?:=+|-+)[ \t]*$")
_BREAK = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_INLINE_MARKUP = re.compile(r"[\\`*_\[\]<&!]")
# A line's content after at most three spaces (the scanner's lines that reach it are not blank).
_CONTENT = re.compile(r"[ ]{0,3}(?![ \t])")


def markdown_headings(text: str) -> list[Element]:
    """The heading elements :func:`core.loaders.markdown.markdown_elements` finds in ``text``, found faster."""
    lines = LineTable(text)
    starts, ends = lines.starts, lines.ends
    count = len(lines)
    found: list[tuple[int, int, int, str]] = []  # (start, end, level, title source)
    # The stretches that hold reference definitions, which titles may need: (start, end, their
    # markdown-it environment, or None while a stretch with nothing else in it is left unparsed).
    references: list[tuple[int, int, dict | None]] = []
    paragraph: int | None = None  # the open paragraph's first line
    quiet = _QUIET_LINES.match
    index = 0
    while index < count:
        start = starts[index]
        # Plain paragraph lines and blank lines, many at a time: they only open and close paragraphs.
        run = quiet(text, start)
        if run is not None:
            paragraph = _paragraph_after(run, starts, index, paragraph)
            index = bisect_left(starts, run.end(), index + 1)
            continue
        end = ends[index]
        if start == end:  # the last line, empty (any other blank line is in a quiet run)
            paragraph = None
            index += 1
            continue
        # Up to three spaces of indent, then content; more (a tab counts four columns) is
        # indented code or the open paragraph's continuation.
        head = _CONTENT.match(text, start, end)
        if head is None:
            index += 1
            continue
        at = head.end()
        first = text[at]
        hard = _opens_hard_block(text, at, end, paragraph is None)
        if paragraph is not None and first in "=-" and _SETEXT.match(text, at, end):
            source = _setext_title(text, lines, paragraph, index)
            if source is None:
                hard = True
            else:
                found.append((starts[paragraph], end, 1 if first == "=" else 2, source))
                paragraph = None
                index += 1
                continue
        if hard:
            block = paragraph if paragraph is not None else index
            parsed, index = parse_stretch(text, lines, block, fresh_line_after(text, lines, index), references)
            found.extend(parsed)
            paragraph = None
            continue
        if first in "`~":
            opening = _FENCE_OPEN.match(text, at, end)
            if opening is not None:
                marker = opening.group(1) or opening.group(2)
                index = _after_fence(text, lines, index, marker[0], len(marker))
                paragraph = None
                continue
        if first == "#":
            atx = _atx(text[at:end])
            if atx is not None:
                found.append((start, end, atx[0], atx[1]))
                paragraph = None
                index += 1
                continue
        if first in "-*_" and _BREAK.match(text, at, end):
            paragraph = None
            index += 1
            continue
        if paragraph is None:
            paragraph = index
        index += 1
    return _heading_elements(text, found, references)


# A run of lines that are blank (CommonMark's: spaces and tabs only; a no-break space or a form feed is
# paragraph text) or plain paragraph text: up to three spaces, then a character that starts no block
# syntax the scanner handles (see markdown_headings' branches). The last blank line is the ``blank``
# group: the paragraph open after the run starts below it.
_QUIET_LINES = re.compile(
    r"(?:(?P<blank>[ \t]*(?:\r\n|\r|\n)|[ \t]+\Z)|[ ]{0,3}[^\s<>\[\-+*0-9=`~#_][^\r\n]*(?:\r\n|\r|\n|\Z))+"
)


def _setext_title(text: str, lines: LineTable, paragraph: int, underline: int) -> str | None:
    """The title source of the setext heading the paragraph from line ``paragraph`` makes with its ``underline``; None
    where a "|" in the paragraph may make it a table's header, which the underline does not make a heading."""
    starts, ends = lines.starts, lines.ends
    if text.find("|", starts[paragraph], starts[underline]) != -1:
        return None
    return "\n".join(text[a:b] for a, b in zip(starts[paragraph:underline], ends[paragraph:underline], strict=True))


def _paragraph_after(run: re.Match[str], starts: Sequence[int], index: int, paragraph: int | None) -> int | None:
    """The paragraph open after a quiet run that starts at line ``index`` (its first line; None if none is)."""
    last_blank_end = run.end("blank")
    if last_blank_end == run.end():
        return None
    if last_blank_end != -1:
        return bisect_left(starts, last_blank_end, index)
    return index if paragraph is None else paragraph


def _opens_hard_block(text: str, at: int, end: int, no_paragraph: bool) -> bool:
    """Does the line whose content starts at ``at`` open what the scanner leaves to markdown-it: an HTML block, a
    block quote, a list item, or (a "[" opening a paragraph) a reference definition, which titles need?"""
    first = text[at]
    return (
        first in "<>"
        or (first == "[" and no_paragraph)
        or (first in "-+*0123456789" and LIST_MARKER.match(text, at, end) is not None)
    )


def _after_fence(text: str, lines: LineTable, opening: int, marker: str, length: int) -> int:
    """The line after the one that closes the fence opened at line ``opening`` (the line count if none does).

    A closing line has at most three spaces of indent (a tab makes four columns), at least
    ``length`` of the opening ``marker`` and nothing after them but spaces and tabs.
    """
    # From the opening line's break: the pattern starts with a line break, which the regex
    # engine finds fast (a lookbehind for line starts made the search ~15x slower).
    closing = _fence_closer(marker, length).search(text, lines.ends[opening])
    if closing is None:
        return len(lines)
    return bisect_left(lines.starts, closing.start(1), opening + 1) + 1


@lru_cache(maxsize=16)
def _fence_closer(marker: str, length: int) -> re.Pattern[str]:
    return re.compile(rf"(?:\r\n|\r|\n)([ ]{{0,3}}{re.escape(marker)}{{{length},}}[ \t]*)(?=[\r\n]|\Z)")


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


def _heading_elements(
    text: str, found: list[tuple[int, int, int, str]], references: list[tuple[int, int, dict | None]]
) -> list[Element]:
    """Heading elements with the titles markdown-it's inline rules give (with the document's references)."""
    elements: list[Element] = []
    env: dict | None = None
    for start, end, level, source in found:
        if _INLINE_MARKUP.search(source):
            # Only a link or an image ("[") reads references: they are collected for the first such title.
            if env is None and "[" in source:
                env = collect_references(text, references)
            # inline_after reads the inline token after index -1: the first one.
            title = inline_after(title_parser().parseInline(source.strip(), env if env is not None else {}), -1)
        else:
            title = " ".join(source.split())
        trimmed = trim_span(text, start, end) or (start, start)
        elements.append(Element("heading", trimmed[0], trimmed[1], level=level, attrs={"title": title}))
    return elements
