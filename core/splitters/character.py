"""Character splitter: cut on one separator, then pack the pieces up to chunk_size."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache

from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.base import SizedSplitter, Span, merge_pieces, piece_sizes
from core.splitters.registry import SPLITTERS
from core.tokenizers import Tokenizer


@SPLITTERS.register
@dataclass(frozen=True)
class CharacterSplitter(SizedSplitter):
    """Like LangChain's CharacterTextSplitter, with exact spans.

    The text is cut after every occurrence of ``separator`` (the separator stays
    with the piece before it); pieces are packed greedily into chunks.
    """

    name = "character"
    summary = "Split on one separator (default: blank lines), then pack pieces up to chunk_size."

    separator: str = param("\n\n", "The string to cut on (a literal, not a regex); empty cuts anywhere.")

    def validate(self) -> None:
        super().validate()
        if len(self.separator) > 100:
            raise ConfigError(f"{self.name}: separator is longer than 100 characters")

    def spans(self, document: Document) -> list[Span]:
        text = document.text
        if self.tokenizer == "characters" and self.separator:
            return pack_on_separator_ends(text, self.separator, self.chunk_size, self.chunk_overlap)
        return _pack_pieces(text, self.separator, self.get_tokenizer(), self.chunk_size, self.chunk_overlap)


def _pack_pieces(text: str, separator: str, tokenizer: Tokenizer, chunk_size: int, chunk_overlap: int) -> list[Span]:
    """The general path: pieces, their sizes in any unit, then :func:`merge_pieces`."""
    pieces = separator_pieces(text, separator)
    sizes = piece_sizes(tokenizer, text, pieces)
    return merge_pieces(pieces, sizes, chunk_size, chunk_overlap, text)


def separator_pieces(text: str, separator: str) -> list[tuple[int, int]]:
    """Consecutive spans covering ``text``, each ending just after a separator."""
    if not text:
        return []
    if separator == "":
        return [(i, i + 1) for i in range(len(text))]
    ends = separator_ends(text, separator)
    return list(zip([0, *ends[:-1]], ends, strict=True))


def separator_ends(text: str, separator: str) -> list[int]:
    """Where each piece ends: just after every occurrence of ``separator``, then the text's end."""
    # One C-level scan for the occurrences; only their ends are kept. (Measured on 4 MB:
    # 5 ms, against 9 ms for str.split, which also copies the whole text into parts.)
    ends = [match.end() for match in _literal_pattern(separator).finditer(text)]
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    return ends


def pack_on_separator_ends(text: str, separator: str, chunk_size: int, chunk_overlap: int) -> list[Span]:
    """:func:`merge_pieces` for separator pieces sized in characters, without building the pieces.

    A piece's size in characters is its length, so the running sums of the
    sizes are the piece boundaries themselves: ``bounds[i]`` is where piece
    ``i`` starts and piece ``i - 1`` ends. The packing below is merge_pieces'
    step for step (same budget, same overlap rule, same trimming), indexed by
    boundaries instead of pieces; the piece tuples, the sizes and their sums
    are never made.
    """
    if not text:
        return []
    bounds = [0, *separator_ends(text, separator)]
    spans: list[Span] = []
    append = spans.append
    n = len(bounds) - 1  # pieces
    first = 0  # the chunk's first piece: it starts at bounds[first]
    previous_end = -1
    while True:
        start = bounds[first]
        # The chunk ends at the last boundary within the budget, after one piece at least.
        stop = bisect_right(bounds, start + chunk_size, first + 1, n + 1) - 1
        if stop <= first:
            stop = first + 1
        end = untrimmed_end = bounds[stop]
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end and end > previous_end:
            append(_new_span(Span, (start, end, None)))
            previous_end = end
        if stop >= n:
            return spans
        # The next chunk starts at the first boundary after this chunk's start that keeps
        # at most chunk_overlap before this chunk's end and leaves room for piece ``stop``.
        floor = max(untrimmed_end - chunk_overlap, bounds[stop + 1] - chunk_size)
        first = bisect_left(bounds, floor, first + 1, stop)


_new_span = tuple.__new__


@lru_cache(maxsize=64)
def _literal_pattern(literal: str) -> re.Pattern[str]:
    return re.compile(re.escape(literal))
