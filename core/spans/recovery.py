"""Span recovery: where in the source each of a framework's chunks came from.

A framework splitter hands back chunk texts, not offsets (or offsets found with
``text.find``, which is wrong as soon as a passage repeats). This one step gives
each chunk, taken in order, a span of the source and says how sure it is:

- ``exact``: the chunk is ``source[start:end]``.
- ``rewritten``: the framework changed the text (stripped lines, collapsed or
  joined whitespace, decoded tokens); the span covers the source characters the
  chunk was aligned with, from the first to the last.
- ``unplaced``: no alignment was found; the span is empty, where the previous
  chunk ended.

Placement is monotonic and leaves no gap it can avoid. A chunk is looked for
from the previous chunk's start (so overlap is allowed) and must reach past the
previous chunk's end. Of the places that qualify, the last one that starts by
the previous chunk's end (after its trailing whitespace) wins: it continues the
previous chunk with the least overlap, and nothing between them is left out.
Only when no place does is the first one after that taken (the framework dropped
the text between, e.g. a separator it does not keep). Either way the place must
leave room for every later chunk that is found verbatim (a backward pass works
out how late each chunk may start). So a repeated passage is matched to the copy
that continues the previous chunk, never to its first occurrence in the text,
and never to a nearer copy past a gap. A chunk that is not a substring there is
matched with all whitespace removed (mapped back to source offsets), and failing
that aligned with difflib on a bounded window after the previous chunk: how one
chunk is matched is :mod:`core.spans.matching`; this module places the sequence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import NamedTuple

from core.spans.matching import REPLACEMENT, Squeezed, aligned_span, decoded_span, nearest, squeezed_span


class SpanStatus(str, Enum):
    """How a chunk's span was found."""

    EXACT = "exact"
    REWRITTEN = "rewritten"
    UNPLACED = "unplaced"


# The node metadata key that carries a framework chunk's SpanStatus value (hidden from the LLM and EMBED views).
SPAN_STATUS_KEY = "span_status"


_NON_SPACE = re.compile(r"\S")


# How much of a chunk's start the verbatim pass searches for before comparing the whole chunk in place.
_HEAD = 24


class RecoveredSpan(NamedTuple):
    """Where one chunk lies in the source, and how that was found."""

    start: int
    end: int
    status: SpanStatus


class SpanRecovery:
    """Recovers the spans of chunks of one source text.

    The whitespace-free copy of the source (for rewritten chunks) is built on
    first need and kept, so recovering several groups of chunks (e.g. the levels
    of a hierarchy) pays for it once.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self._squeezed: Squeezed | None = None

    def recover(self, chunks: Iterable[str], start: int = 0, end: int | None = None) -> list[RecoveredSpan]:
        """The spans of ``chunks`` (in order) inside ``source[start:end]``."""
        chunks = list(chunks)
        low = max(0, start)
        high = len(self.source) if end is None else min(end, len(self.source))
        chain = self._verbatim_chain(chunks, low, high)
        if chain is not None:
            return chain
        latest = self._latest_starts(chunks, low, high)
        out: list[RecoveredSpan] = []
        placed: list[bool] = []
        previous: tuple[int, int] | None = None
        for chunk, bounds in zip(chunks, latest, strict=True):
            if not chunk:
                # An empty chunk says nothing about where the next one is: it sits where the last one ended.
                at = previous[1] if previous else low
                out.append(RecoveredSpan(at, at, SpanStatus.EXACT))
                placed.append(False)
                continue
            found = self._place_one(chunk, low, high, previous, bounds)
            out.append(found)
            placed.append(found.status is not SpanStatus.UNPLACED)
            if placed[-1]:
                previous = (found.start, found.end)
        # An empty span left where the previous chunk ended moves back to where the next chunk starts, if that
        # is earlier (they overlap): every chunk's start then follows the one before it.
        following = high
        for index in range(len(out) - 1, -1, -1):
            span = out[index]
            if placed[index]:
                following = span.start
            elif span.start > following:
                out[index] = RecoveredSpan(following, following, span.status)
        return out

    def _verbatim_chain(self, chunks: Sequence[str], low: int, high: int) -> list[RecoveredSpan] | None:
        """The common case in one forward pass: every chunk verbatim, with one place to go; else None.

        Most frameworks' chunks are slices of the text (LangChain's always), and then
        two ``str.find`` a chunk settle it; the general pass searches backwards first
        and was ~60% of LangChain engines' time. Taken only when the answer is the
        general pass's: each chunk has exactly one copy that starts after the previous
        chunk's start, ends past its end, and starts by the first non-whitespace
        character after it (no gap); starts and ends then strictly increase, so the
        backward pass's bounds (:meth:`_latest_starts`) would allow every copy found
        here. A test checks this against the general pass on generated texts full of repeats.
        """
        source = self.source
        first_non_space = _NON_SPACE.search
        startswith = source.startswith
        find = source.find
        exact = SpanStatus.EXACT
        out: list[RecoveredSpan] = []
        previous_start = previous_end = low
        for index, chunk in enumerate(chunks):
            size = len(chunk)
            if not size:
                return None
            found = first_non_space(source, previous_end, high)
            expected = (found.start() if found else high) - (size - len(chunk.lstrip()))
            stop = min(high, expected + size)
            lowest = previous_start if index == 0 else max(previous_start + 1, previous_end - size + 1)
            # Candidates by the chunk's head, each checked whole in place: ``str.find`` of a whole
            # ~1,000-character chunk prepares the needle on every call (half of this pass's time).
            head = chunk[:_HEAD]
            head_stop = max(stop - size + len(head), 0)  # never negative: str.find counts that from the end
            at = find(head, lowest, head_stop)
            while at >= 0 and not startswith(chunk, at):
                at = find(head, at + 1, head_stop)
            if at < 0:
                return None
            again = find(head, at + 1, head_stop)
            while again >= 0:
                if startswith(chunk, again):
                    return None  # a second copy: the general pass decides
                again = find(head, again + 1, head_stop)
            out.append(RecoveredSpan(at, at + size, exact))
            previous_start, previous_end = at, at + size
        return out

    def _latest_starts(self, chunks: Sequence[str], low: int, high: int) -> list[tuple[int, int]]:
        """For each chunk, how late it may start and still leave room for every later chunk found verbatim.

        A backward pass: the last chunk found verbatim may start at its last
        occurrence; each earlier one must start no later than the next one's
        latest start and, to be placed verbatim, end before its latest end. Gives
        ``(latest start, latest start of a verbatim match)`` per chunk. In a
        periodic text ("xxxx" cut into overlapping "xx") the nearest occurrence
        going forward can leave no room for the chunks after it; keeping each
        chunk within these bounds never does.
        """
        source = self.source
        latest = [(high, high)] * len(chunks)
        next_start: int | None = None
        next_end = high
        for index in range(len(chunks) - 1, -1, -1):
            chunk = chunks[index]
            size = len(chunk)
            if next_start is None:
                bound = high - size
                latest[index] = (high, bound)
            else:
                bound = min(next_start, next_end - size - 1)
                latest[index] = (next_start, bound)
            if not chunk:
                continue
            position = source.rfind(chunk, low, bound + size) if bound >= low else -1
            if next_start is not None and (position < 0 or _gap(source, position + size, next_start)):
                # The next chunk does not reach past this one (a framework's overlap can repeat a chunk's tail:
                # "he", "e"): an end equal to the next one's is allowed rather than a copy that leaves a gap.
                tied = min(next_start, next_end - size)
                position = source.rfind(chunk, low, tied + size) if tied >= low else -1
                if position >= 0 and not _gap(source, position + size, next_start):
                    latest[index] = (next_start, tied)
                else:
                    position = source.rfind(chunk, low, bound + size) if bound >= low else -1
            if position >= 0:
                next_start, next_end = position, position + size
        return latest

    def _place_one(
        self, chunk: str, low: int, high: int, previous: tuple[int, int] | None, latest: tuple[int, int]
    ) -> RecoveredSpan:
        source = self.source
        if previous is None:
            lo, prev_end = low, low
        else:
            lo, prev_end = previous
        after = prev_end if previous else None
        expected = _skip_whitespace(source, prev_end, high)
        # Distances are measured from a chunk's first non-whitespace character, the one both matchings find.
        lead = len(chunk) - len(chunk.lstrip())
        last_start, last_verbatim = latest
        exact = nearest(source, chunk, lo, high, after, expected, lead, last_verbatim)
        # Verbatim where the previous chunk ends, or overlapping it: nothing nearer could be found.
        if exact is not None and exact + lead <= expected:
            return RecoveredSpan(exact, exact + len(chunk), SpanStatus.EXACT)
        squeezed = squeezed_span(self._index(), chunk, lo, high, after, expected, last_start)
        if (
            squeezed is not None
            and squeezed[0] - lead > last_verbatim
            and source[squeezed[0] - lead : squeezed[1]] == chunk
        ):
            squeezed = None  # verbatim after all, but too late to leave room for the chunks after it
        # The verbatim copy lies after a gap: a copy equal but for whitespace that leaves none is nearer.
        if exact is not None and (squeezed is None or squeezed[0] > expected):
            return RecoveredSpan(exact, exact + len(chunk), SpanStatus.EXACT)
        if squeezed is None and REPLACEMENT in chunk:
            squeezed = decoded_span(source, chunk, lo, high, after, expected, last_start)
        if squeezed is None:
            squeezed = aligned_span(self._index(), chunk, lo, high, expected)
        if squeezed is None:
            return RecoveredSpan(prev_end, prev_end, SpanStatus.UNPLACED)
        start, end = squeezed
        status = SpanStatus.EXACT if source[start:end] == chunk else SpanStatus.REWRITTEN
        return RecoveredSpan(start, end, status)

    def _index(self) -> Squeezed:
        if self._squeezed is None:
            self._squeezed = Squeezed(self.source)
        return self._squeezed


def recover_spans(source: str, chunks: Iterable[str], start: int = 0, end: int | None = None) -> list[RecoveredSpan]:
    """The spans of ``chunks`` (in order) in ``source[start:end]``: see :class:`SpanRecovery`."""
    return SpanRecovery(source).recover(chunks, start, end)


def _gap(text: str, end: int, start: int) -> bool:
    """True when ``text[end:start]`` holds a non-whitespace character (a chunk ending at ``end`` leaves it out)."""
    return end < start and not text[end:start].isspace()


def _skip_whitespace(text: str, position: int, high: int) -> int:
    while position < high and text[position].isspace():
        position += 1
    return position


__all__ = ["SPAN_STATUS_KEY", "RecoveredSpan", "SpanRecovery", "SpanStatus", "recover_spans"]
