"""Where one chunk occurs in a window of the source: verbatim, equal but for whitespace, or aligned.

:mod:`core.spans.recovery` places a framework's chunks one after another; each
chunk is looked for here, from the strictest match to the loosest:

- :func:`nearest`: the verbatim occurrence that continues the previous chunk;
- :func:`squeezed_span`: the same rule with all whitespace removed from both
  texts (stripped lines, collapsed or joined whitespace), through :class:`Squeezed`;
- :func:`decoded_span`: a chunk of decoded tokens whose U+FFFD stand for
  characters cut between two token windows;
- :func:`aligned_span`: difflib's alignment on a bounded window, for text the
  framework rewrote otherwise.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

import numpy as np

from core.tokens.char_index import CharIndex

# What tiktoken's decoder puts for the bytes of a character cut between two token windows.
REPLACEMENT = "\ufffd"
_REPLACEMENT_RUNS = re.compile(f"({REPLACEMENT}+)")

# difflib's fallback aligns at most this many characters (whitespace removed) of a chunk at a time (a longer
# chunk by its head and its tail), and accepts an alignment only when this share of them found a partner.
_ALIGN_PIECE = 400
_ALIGN_MIN_SHARE = 0.6


class Squeezed:
    """The source with its whitespace removed, and the map between the two texts' offsets.

    How many kept characters come before each source offset is the source's
    :class:`core.tokens.char_index.CharIndex` non-space count (shared with the metrics);
    where each kept character is, and the squeezed text, are built in numpy (a
    Python loop over the source's words was ~50 ms per MB, more than the fast
    frameworks' own split).
    """

    def __init__(self, source: str) -> None:
        self.before = CharIndex.of(source).non_space_prefix
        self.positions = np.flatnonzero(np.diff(self.before))
        codes = np.frombuffer(source.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        self.text = codes[self.positions].tobytes().decode("utf-32-le", "surrogatepass")

    def to_squeezed(self, position: int) -> int:
        """How many non-whitespace characters of the source come before ``position``."""
        return int(self.before[max(0, min(position, len(self.before) - 1))])

    def to_source(self, index: int) -> int:
        """Where the squeezed text's character ``index`` is in the source."""
        return int(self.positions[index])


def nearest(
    haystack: str,
    needle: str,
    lo: int,
    hi: int,
    prev_end: int | None,
    expected: int,
    lead: int = 0,
    last_start: int | None = None,
) -> int | None:
    """The occurrence of ``needle`` in ``haystack[lo:hi]``, starting by ``last_start``, to take, or None.

    Occurrences must end after ``prev_end`` (when there is a previous chunk). Of
    those, the last whose character ``lead`` (the first after the needle's
    leading whitespace) is at or before ``expected`` wins: it continues the
    previous chunk with no gap and the least overlap. Only when none does is the
    first one after ``expected`` taken (the framework dropped the text between).
    When every occurrence lies inside the previous chunk, the first is taken.
    """
    size = len(needle)
    expected -= lead
    if last_start is not None:
        hi = min(hi, last_start + size)
    first_any: int | None = None
    before: int | None = None  # the last qualifying occurrence starting at or before ``expected``
    position = haystack.find(needle, lo, hi)
    while position >= 0:
        if first_any is None:
            first_any = position
        if prev_end is None or position + size > prev_end:
            if position > expected:
                return before if before is not None else position
            before = position
        position = haystack.find(needle, position + 1, hi)
    return before if before is not None else first_any


def squeezed_span(
    index: Squeezed, chunk: str, lo: int, high: int, prev_end: int | None, expected: int, last_start: int
) -> tuple[int, int] | None:
    """The chunk matched with all whitespace removed, as source offsets of its first and last character."""
    needle = squeeze(chunk)
    if not needle:
        return None
    found = nearest(
        index.text,
        needle,
        index.to_squeezed(lo),
        index.to_squeezed(high),
        None if prev_end is None else index.to_squeezed(prev_end),
        index.to_squeezed(expected),
        0,
        # The squeezed match starts at the chunk's first non-whitespace character.
        index.to_squeezed(last_start + len(chunk) - len(chunk.lstrip()) + 1) - 1,
    )
    if found is None:
        return None
    return index.to_source(found), index.to_source(found + len(needle) - 1) + 1


def aligned_span(index: Squeezed, chunk: str, lo: int, high: int, expected: int) -> tuple[int, int] | None:
    """difflib's alignment of the chunk (whitespace removed) on a bounded window of the source near ``expected``.

    A long chunk is aligned by its head and its tail, each on its own window
    (the tail's where the head and the chunk's length put it), so the cost
    stays bounded whatever the chunk's size.
    """
    needle = squeeze(chunk)
    if not needle:
        return None
    squeezed = index.text
    floor, ceiling, at = index.to_squeezed(lo), index.to_squeezed(high), index.to_squeezed(expected)
    piece = _ALIGN_PIECE
    if len(needle) <= 2 * piece:
        found = _align_window(squeezed, needle, max(floor, at - len(needle)), min(ceiling, at + 2 * len(needle) + 64))
    else:
        head = _align_window(squeezed, needle[:piece], max(floor, at - piece), min(ceiling, at + 2 * piece + 64))
        if head is None:
            return None
        guess = head[0] + len(needle) - piece  # where the tail starts if the middle kept its length
        slack = piece + len(needle) // 10
        tail = _align_window(
            squeezed, needle[-piece:], max(head[1], guess - slack), min(ceiling, guess + piece + slack)
        )
        found = None if tail is None else (head[0], tail[1])
    if found is None:
        return None
    return index.to_source(found[0]), index.to_source(found[1] - 1) + 1


def decoded_span(
    source: str, chunk: str, lo: int, high: int, prev_end: int | None, expected: int, last_start: int
) -> tuple[int, int] | None:
    """A chunk of decoded tokens holding U+FFFD, matched with each run of them standing for non-ASCII characters.

    A token window that cuts a character's bytes decodes the part it holds to
    U+FFFD (tiktoken's ``errors="replace"``): the character is there in the source,
    not in the chunk. The occurrence taken is chosen as for a verbatim chunk (see :func:`nearest`).
    """
    pattern = re.compile(
        "".join(
            f"[^\\x00-\\x7f]{{1,{len(run)}}}" if run.startswith(REPLACEMENT) else re.escape(run)
            for run in _REPLACEMENT_RUNS.split(chunk)
            if run
        )
    )
    before: re.Match[str] | None = None
    first: re.Match[str] | None = None  # taken when every match lies inside the previous chunk (a character's halves)
    position = lo
    while (match := pattern.search(source, position, high)) is not None and match.start() <= last_start:
        first = first or match
        if prev_end is None or match.end() > prev_end:
            if match.start() > expected:
                if before is None:
                    return match.span()
                break
            before = match
        position = match.start() + 1
    taken = before or first
    return taken.span() if taken is not None else None


def _align_window(haystack: str, needle: str, first: int, last: int) -> tuple[int, int] | None:
    """Where difflib pairs ``needle`` with ``haystack[first:last]``: from its first to its last matched character."""
    if first >= last:
        return None
    matcher = SequenceMatcher(None, haystack[first:last], needle, autojunk=False)
    # Runs of one or two characters pair up anywhere; only longer runs say where the chunk is.
    shortest = 3 if len(needle) >= 12 else 1
    blocks = [block for block in matcher.get_matching_blocks() if block.size >= shortest]
    if not blocks or sum(block.size for block in blocks) < _ALIGN_MIN_SHARE * len(needle):
        return None
    return first + blocks[0].a, first + blocks[-1].a + blocks[-1].size


def squeeze(text: str) -> str:
    """``text`` without its whitespace."""
    return "".join(text.split())
