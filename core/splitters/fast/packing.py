"""Greedy packing by bisection over running sums: :func:`core.splitters.pieces.merge_pieces_plainly`, faster.

Measured (benchmarks/NOTES.md, first and second rounds, 4 MB): finding each
chunk's last piece by bisection over running sums, instead of a Python step per
piece, was part of taking recursive 1000/200 from 166 to 87 ms (with literal
separators cut in C); then trimming inline, making spans without NamedTuple's
Python-level ``__new__`` (the ``trim_span`` call and ``__new__`` were a third of
the loop) and finding the overlap's first piece by bisection instead of walking
back took this function from 8.7 to 7.0 ms. The same steps also ran in C until issue 41, which gave a whole
``chunkscope split --splitter recursive`` about 1.0x (benchmarks/RESULTS.md).

Must equal :func:`~core.splitters.pieces.merge_pieces_plainly` for any pieces and
sizes (tests/test_fast_paths.py).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

from core.splitters.base import Span

# Spans made from tuples, without NamedTuple's Python-level __new__ (see above).
_new_span = tuple.__new__


def merge_pieces(
    pieces: Sequence[tuple[int, int]], sizes: Sequence[int], chunk_size: int, chunk_overlap: int, text: str
) -> list[Span]:
    """The chunks of :func:`~core.splitters.pieces.merge_pieces_plainly`, found by bisection (:func:`merge_bounds`).

    The pieces are consecutive (each starts where the one before ends), so their
    starts and the last end are their bounds.
    """
    if not pieces:
        return []
    return merge_bounds(piece_bounds(pieces), [0, *accumulate(sizes)], chunk_size, chunk_overlap, text)


def piece_bounds(pieces: Sequence[tuple[int, int]]) -> list[int]:
    """The boundaries of consecutive pieces: each one's start, then the last one's end."""
    return [piece[0] for piece in pieces] + [pieces[-1][1]] if pieces else []


def merge_bounds(
    bounds: Sequence[int], prefix: Sequence[int], chunk_size: int, chunk_overlap: int, text: str
) -> list[Span]:
    """Greedy packing by bisection of consecutive pieces given by their boundaries (no piece tuples).

    Piece ``i`` is ``bounds[i]:bounds[i + 1]``; its size is ``prefix[i + 1] - prefix[i]``
    (running sums from any start: for sizes in characters, ``bounds`` itself; ints or floats, as a
    caller's size function counts).
    """
    spans: list[Span] = []
    append = spans.append
    n = len(bounds) - 1
    first = 0
    previous_end = -1
    while first < n:
        last = bisect_right(prefix, prefix[first] + chunk_size, first + 1, n + 1) - 2
        if last < first:
            last = first
        start, end = bounds[first], bounds[last + 1]
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end and end > previous_end:
            append(_new_span(Span, (start, end, None)))
            previous_end = end
        if last + 1 >= n:
            break
        # Both bounds on the next chunk's first piece j (the overlap it carries, the room it
        # leaves for piece ``last + 1``) say prefix[j] is at least some value, so the smallest
        # such j is found by bisection (last + 1 when there is none).
        floor = max(prefix[last + 1] - chunk_overlap, prefix[last + 2] - chunk_size)
        first = bisect_left(prefix, floor, first + 1, last + 1)
    return spans


def spans_from_bounds(bounds: Sequence[tuple[int, int]]) -> list[Span]:
    """Spans without metadata from their (start, end) pairs, made as :func:`merge_pieces` makes them."""
    return [_new_span(Span, (start, end, None)) for start, end in bounds]
