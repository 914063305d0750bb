"""Character splitter: cut on one separator, then pack the pieces up to chunk_size."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat

from core.errors import ConfigError
from core.params import param
from core.schema import Document, Node
from core.splitters.base import SizedSplitter, Span, build_nodes, merge_pieces, piece_sizes
from core.splitters.registry import SPLITTERS
from core.tokenizers import Tokenizer, get_tokenizer


@SPLITTERS.register
@dataclass(frozen=True)
class CharacterSplitter(SizedSplitter):
    """Like LangChain's CharacterTextSplitter, with exact spans.

    The text is cut after every occurrence of ``separator`` (the separator stays
    with the piece before it); pieces are packed greedily into chunks.
    """

    name = "character"
    summary = "Split on one separator (default: blank lines), then pack pieces up to chunk_size."
    framework_defaults = {"LangChain CharacterTextSplitter": {"chunk_size": 4000, "chunk_overlap": 200}}

    separator: str = param("\n\n", "The string to cut on (a literal, not a regex); empty cuts anywhere.")

    def validate(self) -> None:
        super().validate()
        if len(self.separator) > 100:
            raise ConfigError(f"{self.name}: separator is longer than 100 characters")

    def spans(self, document: Document) -> list[Span]:
        if self._packs_on_separator_ends:
            return pack_on_separator_ends(document.text, self.separator, self.chunk_size, self.chunk_overlap)
        return _pack_pieces(document.text, self.separator, self.get_tokenizer(), self.chunk_size, self.chunk_overlap)

    def split_document(self, document: Document) -> list[Node]:
        # A subclass that overrides spans() is split through them.
        if not self._packs_on_separator_ends or type(self).spans is not CharacterSplitter.spans:
            return super().split_document(document)
        # Plain (start, end) pairs, which build_nodes reads like Spans without metadata and
        # zip makes in C (4 MB, 5,065 chunks: 0.15 ms, against 0.5-0.7 ms for Spans).
        starts, ends = chunk_bounds(document.text, self.separator, self.chunk_size, self.chunk_overlap)
        return build_nodes(
            document,
            list(zip(starts, ends, strict=True)),
            include_metadata=self.include_metadata,
            include_prev_next_rel=self.include_prev_next_rel,
        )

    @property
    def _packs_on_separator_ends(self) -> bool:
        """Sizes in characters and a real separator: the fast path gives the general path's spans."""
        return self.tokenizer == "characters" and self.separator != ""


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


def chunk_bounds(text: str, separator: str, chunk_size: int, chunk_overlap: int) -> tuple[list[int], list[int]]:
    """:func:`merge_pieces`' chunks for separator pieces sized in characters: their starts and ends.

    With characters as the unit, a piece's size is its length, so a run of pieces
    fits when its boundaries are at most chunk_size apart: no piece tuples, sizes
    or running sums are needed, only the boundaries (the ends of the separators,
    then the text's end). Both ways below follow merge_pieces step for step (same
    budget, same overlap rule, same trimming).
    """
    try:
        return _bounds_by_search(text, separator, chunk_size, chunk_overlap)
    except _DenseRun:
        # A text that is mostly long runs of a self-overlapping separator would be rescanned
        # chunk by chunk; the general path's one scan of the whole text is cheaper there.
        spans = _pack_pieces(text, separator, get_tokenizer("characters"), chunk_size, chunk_overlap)
        return [span.start for span in spans], [span.end for span in spans]


class _DenseRun(Exception):
    """A chain of overlapping separator occurrences longer than :data:`_WALK_LIMIT`, or local scans past their budget."""


# Steps a search may take through overlapping occurrences before a local scan takes over.
_WALK_LIMIT = 32
# Characters the local scans may read, as a share of the text's length, before the general path takes over.
_SCAN_BUDGET = 0.25


class _LocalScans:
    """Left-to-right scans of the region around a dense run (what the walk would find, found by ``finditer``).

    One long run anywhere in a text used to send the whole text to the general path
    (the 20 MB corpus holds a few runs of 30-48 newlines: 1.6 -> 4.5 ms per MB).
    Scanning only the chunk's region keeps the search path for the rest. The
    characters scanned are budgeted at a quarter of the text's length: past that (a text made
    mostly of such runs, or a large overlap re-reading them) :class:`_DenseRun`
    hands the whole text to the general path, so the cost stays linear.
    """

    def __init__(self, text: str, separator: str) -> None:
        self.text = text
        self.finditer = _literal_pattern(separator).finditer
        self.budget = int(_SCAN_BUDGET * len(text))

    def _matches(self, start: int, stop: int):  # noqa: ANN202 - an iterator of re.Match
        self.budget -= stop - start
        if self.budget < 0:
            raise _DenseRun
        return self.finditer(self.text, start, stop)

    def last_start(self, start: int, stop: int) -> int:
        """Where the last occurrence of a scan from the aligned ``start`` that ends by ``stop`` begins (-1 if none)."""
        last = -1
        for match in self._matches(start, stop):
            last = match.start()
        return last

    def first_start_ending_from(self, start: int, floor: int, stop: int) -> int:
        """Where the first occurrence of a scan from the aligned ``start`` ending at or after ``floor``
        (and by ``stop``) begins (-1 if none)."""
        for match in self._matches(start, stop):
            if match.end() >= floor:
                return match.start()
        return -1


def _bounds_by_search(text: str, separator: str, chunk_size: int, chunk_overlap: int) -> tuple[list[int], list[int]]:
    """:func:`chunk_bounds` from searches near each chunk's ends.

    Each chunk needs only a few boundaries near its ends, found by searching
    there (``rfind``/``find``) instead of scanning the whole text for every
    separator: on the benchmark corpus about two fifths of the text is read, in
    two searches per chunk.

    The boundaries are the ends of the occurrences a left-to-right scan from the
    text's start meets ("aligned" ones), then the text's end. A search from any
    aligned position meets the same occurrences as that scan. A search from
    elsewhere (``rfind``, or ``find`` from inside a chunk) can only land on an
    occurrence the scan skips when another occurrence overlaps it from the left,
    which needs a separator that overlaps itself (``"\\n\\n"`` in ``"\\n\\n\\n"``);
    then the scan is replayed from the first of those overlapping occurrences.
    """
    starts: list[int] = []
    ends: list[int] = []
    if not text:
        return starts, ends
    length = len(text)
    size = len(separator)
    # Where an occurrence may overlap the next one: shift k when the separator's tail from k
    # is its own head ("\n\n": 1; "aba": 2).
    shifts = [k for k in range(1, size) if separator[k:] == separator[: size - k]]
    # An occurrence overlapping one at j from the left covers j - 1 with one of these characters,
    # so most found occurrences are cleared by looking at one character.
    overlap_tails = "".join(separator[k - 1] for k in shifts)
    widest_shift = shifts[-1] if shifts else 0
    find, rfind, startswith = text.find, text.rfind, text.startswith
    add_start, add_end = starts.append, ends.append
    # Trimming a chunk's end can step over a whitespace separator at once (most chunks end
    # with one): every boundary but the text's end closes a separator, and so does the
    # text's end when the text ends with it.
    trailing_space = size if separator.isspace() else 0
    ends_with_separator = text.endswith(separator)
    scans = _LocalScans(text, separator)
    start = 0  # always an aligned boundary
    closed = -1  # the untrimmed end of the last chunk packed
    previous_end = -1  # the trimmed end of the last chunk kept
    while True:
        chunk_start = start
        # The chunk ends at the last boundary within the budget, or at the next one.
        limit = start + chunk_size
        if limit >= length:
            end = length
        else:
            j = rfind(separator, start, limit)
            if j < 0:
                j = find(separator, start)
                end = length if j < 0 else j + size
            else:
                if j > start and text[j - 1] in overlap_tails:
                    try:
                        first = _chain_start(startswith, separator, shifts, j, start)
                        j = _last_aligned(find, separator, first, j + size)
                    except _DenseRun:
                        j = scans.last_start(start, j + size)
                end = j + size
        if end == closed:
            # The piece after ``closed`` does not fit from here: merge_pieces starts this chunk
            # later, leaving room for that piece (so no chunk ends at ``closed`` twice).
            j = find(separator, closed)
            floor = (length if j < 0 else j + size) - chunk_size
        else:
            closed = end
            while start < end and text[start].isspace():
                start += 1
            # Once past the leading whitespace, ``start`` lies before the closing separator.
            if start < end and (closed < length or ends_with_separator):
                end -= trailing_space
            while end > start and text[end - 1].isspace():
                end -= 1
            if start < end and end > previous_end:
                add_start(start)
                add_end(end)
                previous_end = end
            if closed >= length:
                return starts, ends
            floor = closed - chunk_overlap
        # The next chunk starts at the first boundary after this chunk's start, before its
        # end, that keeps at least ``floor`` behind it (at the end itself if there is none).
        low = floor - size if floor - size > chunk_start else chunk_start
        j = find(separator, low, closed - 1)
        # An occurrence overlapping j from at or after ``low`` would have been found instead.
        if 0 <= j < low + widest_shift:
            try:
                first = _chain_start(startswith, separator, shifts, j, chunk_start)
                if first != j:
                    j = _first_aligned(find, separator, first, floor, closed)
            except _DenseRun:
                j = scans.first_start_ending_from(chunk_start, floor, closed - 1)
        start = closed if j < 0 else j + size


def _chain_start(startswith: Callable[..., bool], separator: str, shifts: list[int], j: int, start: int) -> int:
    """The first of the occurrences overlapping one another back from the one at ``j``, not before ``start``.

    No occurrence at or after ``start`` overlaps it from the left, so a scan from an
    aligned ``start`` meets it (the scan's last match before it cannot reach into it).
    """
    for _ in range(_WALK_LIMIT):
        for k in reversed(shifts):  # the furthest overlapping occurrence first
            if j - k >= start and startswith(separator, j - k):
                j -= k
                break
        else:
            return j
    raise _DenseRun


def _last_aligned(find: Callable[..., int], separator: str, first: int, stop: int) -> int:
    """Where the last occurrence a scan from the aligned occurrence at ``first`` meets before ``stop`` begins."""
    size = len(separator)
    last = j = first
    for _ in range(_WALK_LIMIT):
        if j < 0:
            return last
        last = j
        j = find(separator, j + size, stop)
    raise _DenseRun


def _first_aligned(find: Callable[..., int], separator: str, first: int, floor: int, stop: int) -> int:
    """Where the first occurrence a scan from the aligned occurrence at ``first`` meets that ends in
    ``[floor, stop)`` begins (-1 if none)."""
    size = len(separator)
    j = first
    for _ in range(_WALK_LIMIT):
        if j < 0 or j + size >= floor:
            return j
        j = find(separator, j + size, stop - 1)
    raise _DenseRun


def pack_on_separator_ends(text: str, separator: str, chunk_size: int, chunk_overlap: int) -> list[Span]:
    """The spans :func:`merge_pieces` gives for separator pieces sized in characters."""
    starts, ends = chunk_bounds(text, separator, chunk_size, chunk_overlap)
    return list(map(_new_span, repeat(Span), zip(starts, ends, repeat(None))))


_new_span = tuple.__new__


@lru_cache(maxsize=64)
def _literal_pattern(literal: str) -> re.Pattern[str]:
    return re.compile(re.escape(literal))
