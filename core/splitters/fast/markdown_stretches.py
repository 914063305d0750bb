"""The stretches of Markdown the heading scanner hands to markdown-it, and the line table both walk.

:mod:`core.splitters.fast.markdown_scan` reads plain block structure itself; a
stretch holding a quote, a list, an HTML block, a reference definition or an
underline under a table goes through :func:`parse_stretch`: from its block's start
to the next line that surely starts afresh (:func:`fresh_line_after`). Before the
parse, :func:`stretch_needs` looks at the stretch's lines for syntax that could make a
heading, leave a block open past its end, or define a reference; a stretch with none
of it is not parsed, and one with only reference definitions is parsed only if a
title needs them (:func:`collect_references`).

Measured (benchmarks/NOTES.md, sixth round, markdown): leaving unparsed the stretches
whose HTML blocks surely close inside them and those holding only reference
definitions took the time inside markdown-it's block parse, on 2 MB of per-file
Markdown, from 21 to 7 ms (1,781 stretches: markdown-it ran 318 times, now 68).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from functools import lru_cache
from itertools import accumulate, chain
from operator import add
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it.token import Token

LINE_BREAKS = re.compile(r"\r\n|\r|\n")
LIST_MARKER = re.compile(r"(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)")


class LineTable:
    """Where each line starts and ends (its line break excluded: CRLF, CR or LF), in machine integers.

    A list of ``(start, end)`` tuples cost ~130 bytes a line: 7 MB for 2 MB of Markdown,
    the peak of a whole split; two arrays hold the same in 16. Text with LF breaks only
    (almost all) is measured by ``str.split`` and running sums, in C, a block at a time so
    the lines' strings never all exist at once: 16.6 -> 11 ms on 2 MB (50,000 lines).
    """

    __slots__ = ("starts", "ends")

    def __init__(self, text: str) -> None:
        self.starts = array("q")
        self.ends = array("q")
        if "\r" in text:
            self._by_regex(text)
            return
        block_start = 0
        while True:
            cut = text.find("\n", block_start + _TABLE_BLOCK)
            block_end = len(text) if cut == -1 else cut + 1
            lengths = list(map(len, text[block_start:block_end].split("\n")))
            if cut != -1:
                lengths.pop()  # the empty piece after the block's last break: the next block's first line
            line_starts = list(accumulate(map(_plus_one, lengths), initial=block_start))
            line_starts.pop()  # where the line after the block's last one starts
            self.starts.extend(line_starts)
            self.ends.extend(map(add, line_starts, lengths))
            if cut == -1:
                return
            block_start = block_end

    def _by_regex(self, text: str) -> None:
        self.starts.append(0)
        add_start, add_end = self.starts.append, self.ends.append
        for match in LINE_BREAKS.finditer(text):
            add_end(match.start())
            add_start(match.end())
        add_end(len(text))

    def __len__(self) -> int:
        return len(self.starts)


_TABLE_BLOCK = 1 << 16  # characters per block of the line table
_plus_one = (1).__add__


def fresh_line_after(text: str, lines: LineTable, index: int) -> int:
    """The first line after ``index`` that surely starts at the top level (else the line count)."""
    after_blank = False
    starts, ends = lines.starts, lines.ends
    for at in range(index + 1, len(lines)):
        start, end = starts[at], ends[at]
        # CommonMark's blank line: nothing but spaces and tabs. A line of other whitespace (a no-break
        # space, a form feed) continues a paragraph, which a setext underline below may make a heading.
        if start == end or not text[start:end].strip(" \t"):
            after_blank = True
            continue
        if after_blank and text[start] not in " \t<>" and LIST_MARKER.match(text, start) is None:
            return at
        after_blank = False
    return len(lines)


def parse_stretch(
    text: str, lines: LineTable, first: int, stop: int, references: list[tuple[int, int, dict | None]]
) -> tuple[list[tuple[int, int, int, str]], int]:
    """Headings of lines ``[first, stop)`` by markdown-it, and the line to go on from.

    A stretch whose only syntax is reference definitions is not parsed: it is noted in
    ``references``, for :func:`collect_references` to parse if a title needs them.

    While a fence or HTML block (say, a comment around a blank line) is still open at
    the stretch's end, the stretch grows to the next fresh line, four times at most,
    then to the end of the document.
    """
    offset = lines.starts[first]
    # The line before a fresh line is blank (spaces and tabs only), unless the stretch ends the document.
    blank_end = stop >= len(lines) or not text[lines.starts[stop - 1] : lines.ends[stop - 1]].strip(" \t")
    end = lines.starts[stop] if stop < len(lines) else len(text)
    needs = stretch_needs(text, offset, end, blank_end)
    if needs is None:
        return [], stop
    if needs == "references":
        references.append((offset, end, None))
        return [], stop
    # One environment across the attempts, as markdown-it's references are first come, first kept.
    env: dict = {}
    for attempt in range(8):
        end = lines.starts[stop] if stop < len(lines) else len(text)
        stretch = text[offset:end]
        tokens = _block_parser().parse(stretch, env)
        if stop >= len(lines):
            break
        breaks = len(LINE_BREAKS.findall(stretch))
        still_open = [t for t in tokens if t.type in ("fence", "html_block") and t.map and t.map[1] >= breaks]
        if not still_open:
            break
        if attempt == 6:
            stop = len(lines)
        else:
            closing = _closing_line(text, lines, first + still_open[0].map[0], still_open[0], stop)  # type: ignore[index]
            stop = fresh_line_after(text, lines, closing)
    if env:
        references.append((offset, end, env))
    found = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.map:
            head, tail = token.map
            source = tokens[index + 1].content if index + 1 < len(tokens) else ""
            found.append((lines.starts[first + head], lines.ends[first + tail - 1], int(token.tag[1]), source))
    return found, stop


def _closing_line(text: str, lines: LineTable, opening: int, token: Token, after: int) -> int:
    """The first line from ``after`` that may close the fence or HTML block opened at line ``opening``."""
    if token.type == "fence":
        marker = token.markup
        closes: Callable[[str], bool] = lambda line: line.lstrip(" \t").startswith(marker)  # noqa: E731
    else:
        head = text[lines.starts[opening] : lines.ends[opening]].lstrip(" \t")
        ends = [close for open_, close, _ in _html_sequences() if open_.search(head)]
        if not ends or ends[0].pattern == "^$":  # ends at a blank line: cannot be open at a fresh line
            return after
        closes = lambda line: ends[0].search(line) is not None  # noqa: E731
    for at in range(after, len(lines)):
        if closes(text[lines.starts[at] : lines.ends[at]]):
            return at
    return len(lines)


# Where a line's content starts after any quote and list markers, something that could
# make a heading, a setext underline, a fence, an HTML block or a reference definition.
# The first line of a stretch is matched where it starts; the others after their line
# break, which the regex engine finds fast (a lookbehind for line starts, CR included,
# made the scan of a stretch several times slower).
_MARK = r"[ \t]*(?:(?:>|[-+*]|[0-9]{1,9}[.)])[ \t]*)*(#|```|~~~|<|\[|[=-]+[ \t]*(?:$|(?=\r)))"
_MARK_AT_START = re.compile(_MARK, re.MULTILINE)
_MARK_AFTER_BREAK = re.compile(r"(?:\r\n|\r|\n)" + _MARK, re.MULTILINE)
# The same without "[", for a stretch with no "]:" (no reference definition; its links are many).
_NO_REFERENCE_MARK = _MARK.replace("|\\[|", "|")
_NO_REFERENCE_MARK_AT_START = re.compile(_NO_REFERENCE_MARK, re.MULTILINE)
_NO_REFERENCE_MARK_AFTER_BREAK = re.compile(r"(?:\r\n|\r|\n)" + _NO_REFERENCE_MARK, re.MULTILINE)


def stretch_needs(text: str, start: int, end: int, blank_end: bool) -> str | None:
    """What parsing ``text[start:end]`` could give: ``"headings"``, only ``"references"``, or None.

    None when it surely has no heading, no reference definition, and leaves nothing open
    (most lists): no line could be a heading, an underline or a fence, no reference
    definition could be among its lines, and no HTML block it holds can stay
    open past its end: a block that ends at a blank line (CommonMark's types 6 and 7:
    ``<div>``, ``<a href=…>``) is closed by the blank line before the stretch's end
    (``blank_end``: that line is blank to markdown-it, or the document ends there), and
    one that ends at a closing sequence (``<!--``, ``<pre>``…) is closed when that
    sequence follows its opening inside the stretch.
    """
    may_define = text.find("]:", start, end) != -1
    at_start, after_break = (
        (_MARK_AT_START, _MARK_AFTER_BREAK)
        if may_define
        else (_NO_REFERENCE_MARK_AT_START, _NO_REFERENCE_MARK_AFTER_BREAK)
    )
    references = False  # a line may be a reference definition
    first = at_start.match(text, start, end)
    for match in chain((first,) if first is not None else (), after_break.finditer(text, start, end)):
        at = match.start(1)
        mark = text[at]
        if mark == "[":
            references = True
        elif mark == "<":
            if _html_block_may_stay_open(text, at, end, blank_end):
                return "headings"
        else:
            return "headings"
    return "references" if references else None


def _html_block_may_stay_open(text: str, at: int, end: int, blank_end: bool) -> bool:
    """Whether the HTML block markdown-it would open at ``at`` (a ``<``) could outlast the stretch ending at ``end``."""
    line_end = LINE_BREAKS.search(text, at, end)
    line = text[at : line_end.start() if line_end else end]
    for opening, closing, _ in _html_sequences():
        if opening.search(line):
            if closing.search(""):  # ends at a blank line
                return not blank_end
            if closing.pattern == ">":  # (<!DOCTYPE…) a later line's ">" may be a quote marker, not the end
                return closing.search(line) is None
            # Ends on the first line holding its closing sequence (-->, ?>, ]]>, </pre>…), or sooner.
            return closing.search(text, at, end) is None
    return False


def collect_references(text: str, references: list[tuple[int, int, dict | None]]) -> dict:
    """markdown-it's environment for the titles: every stretch's reference definitions, the first of a label kept.

    What one environment passed through the stretches in document order holds (a label
    defined again is not replaced); the stretches left unparsed are parsed here.
    """
    collected: dict = {}
    for start, end, env in references:
        if env is None:
            env = {}
            _block_parser().parse(text[start:end], env)
        for label, definition in env.get("references", {}).items():
            collected.setdefault(label, definition)
    return {"references": collected} if collected else {}


@lru_cache(maxsize=1)
def _html_sequences() -> list:
    """markdown-it's HTML block rules: (opening pattern, closing pattern, may interrupt a paragraph)."""
    from markdown_it.rules_block.html_block import HTML_SEQUENCES

    return HTML_SEQUENCES


@lru_cache(maxsize=1)
def _block_parser():  # noqa: ANN202 - a MarkdownIt
    """The loader's parser without the inline pass: stretches need only headings, titles come later."""
    return _parser_factory().disable("inline")


@lru_cache(maxsize=1)
def title_parser():  # noqa: ANN202 - a MarkdownIt, configured as the Markdown loader's
    return _parser_factory()


def _parser_factory():  # noqa: ANN202
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")
