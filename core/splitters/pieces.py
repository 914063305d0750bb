"""The pieces splitters cut text into, and the plain rule that packs them into chunks.

:class:`CutGuard` says where a cut may not fall (inside a table row);
:func:`piece_sizes` sizes pieces in a tokenizer's units; :func:`merge_pieces_plainly`
is the greedy packing rule, step by step, which the fast
:func:`core.splitters.fast.packing.merge_pieces` must equal.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache

from core.schema import Document
from core.splitters.base import Span
from core.tokens.segmentation import trim_span
from core.tokens.tokenizers import Tokenizer


def merge_pieces_plainly(
    pieces: Sequence[tuple[int, int]], sizes: Sequence[int], chunk_size: int, chunk_overlap: int, text: str
) -> list[Span]:
    """Greedily pack consecutive pieces into chunks of at most ``chunk_size``: the rule, step by step.

    ``pieces`` are consecutive spans; ``sizes`` their sizes in tokens. A chunk's
    size is the sum of its pieces' sizes. A new chunk starts with the longest run
    of the previous one's trailing pieces that holds at most ``chunk_overlap`` and
    leaves room for the next piece. A piece larger than ``chunk_size`` becomes a
    chunk on its own (an indivisible unit). Chunks are trimmed of surrounding
    whitespace; whitespace-only chunks, and chunks ending where the last one did,
    vanish. The splitters call :func:`core.splitters.fast.packing.merge_pieces`,
    the same chunks found by bisection.
    """
    spans: list[Span] = []
    first, previous_end = 0, -1
    while first < len(pieces):
        last = first
        while last + 1 < len(pieces) and sum(sizes[first : last + 2]) <= chunk_size:
            last += 1
        trimmed = trim_span(text, pieces[first][0], pieces[last][1])
        if trimmed is not None and trimmed[1] > previous_end:
            spans.append(Span(*trimmed))
            previous_end = trimmed[1]
        if last + 1 == len(pieces):
            break
        # Always forward: the next chunk starts after this one's first piece.
        first += 1
        while first <= last and (
            sum(sizes[first : last + 1]) > chunk_overlap or sum(sizes[first : last + 2]) > chunk_size
        ):
            first += 1
    return spans


class CutGuard:
    """Where a cut may not fall: strictly inside a protected span (a table row).

    A splitter that keeps rows whole asks :meth:`allows` about each cut it
    considers, or lets :meth:`pieces` drop the forbidden ones, so a row is an
    indivisible unit and a table larger than a chunk is split between rows.
    """

    def __init__(self, spans: Sequence[tuple[int, int]] = ()) -> None:
        merged: list[list[int]] = []
        for start, end in sorted((s, e) for s, e in spans if e - s > 1):
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self.spans = [(start, end) for start, end in merged]
        self._starts = [start for start, _ in self.spans]

    def __bool__(self) -> bool:
        return bool(self.spans)

    def allows(self, position: int) -> bool:
        """True unless ``position`` lies strictly inside a protected span."""
        i = bisect_left(self._starts, position) - 1
        return i < 0 or position >= self.spans[i][1]

    def pieces(self, start: int, end: int, cuts: Sequence[int]) -> list[tuple[int, int]]:
        """Consecutive spans covering ``[start, end)``, cut at the allowed ``cuts`` (sorted)."""
        out: list[tuple[int, int]] = []
        previous = start
        check = bool(self.spans)
        for cut in cuts:
            if previous < cut < end and (not check or self.allows(cut)):
                out.append((previous, cut))
                previous = cut
        if previous < end:
            out.append((previous, end))
        return out


def protected_cuts(document: Document) -> CutGuard:
    """The guard that keeps table rows whole: every ``table_row`` element and each table's header row."""
    if not document.elements:
        return _NO_GUARD
    spans = []
    for element in document.elements:
        if element.kind == "table_row":
            spans.append((element.start_char, element.end_char))
        elif element.kind == "table" and "header_end" in element.attrs:
            spans.append((element.start_char, int(element.attrs["header_end"])))
    return CutGuard(spans)


# What a document without elements gets (most do): nothing to guard, nothing to sort.
_NO_GUARD = CutGuard()


@lru_cache(maxsize=64)
def literal_pattern(literal: str) -> re.Pattern[str]:
    """The compiled pattern that finds ``literal`` (a separator, not a regex)."""
    return re.compile(re.escape(literal))


def piece_sizes(tokenizer: Tokenizer, text: str, pieces: Sequence[tuple[int, int]]) -> list[int]:
    """Sizes of pieces; characters are counted by span length without slicing."""
    if tokenizer.name == "characters":
        return [end - start for start, end in pieces]
    return tokenizer.count_many([text[start:end] for start, end in pieces])
