"""The character splitter's search path: its chunks found near each chunk's ends, not from every piece.

The plain rule it must equal: :func:`core.splitters.character.pack_pieces` with
sizes in characters, i.e. cut after every separator, then
:func:`~core.splitters.pieces.merge_pieces_plainly` (same budget, same overlap
rule, same room for the next piece, same trimming). With characters as the
unit a piece's size is its length, so a run of pieces fits when its boundaries
are at most chunk_size apart: no piece tuples, sizes or running sums are
needed, only the boundaries (the ends of the separators, then the text's end).
tests/test_character_fast_path.py holds the two equal (hypothesis, with
separators that overlap themselves).

Measured (benchmarks/NOTES.md, third and fourth rounds): character 1000/200 on
4 MB 23.7-24.7 -> 14.3-14.8 ms CPU (0.70-0.73x -> 1.17-1.22x LangChain's
CharacterTextSplitter); about two fifths of the text is read, in two searches
per chunk. Long runs of a self-overlapping separator (the 101 MB input holds
runs of 30-48 newlines) are scanned locally, within a budget of a quarter of
the text: 101 MB 6.4 -> 4.5 ms/MB. Past the budget :class:`DenseRun` hands the
text back to the rule's single scan, which is cheaper there. The same steps also ran in C
until issue 41, which gave a whole ``chunkscope split --splitter character`` about 1.0x (benchmarks/RESULTS.md):
this is the one fast form.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from core.splitters.pieces import literal_pattern


class DenseRun(Exception):
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
    mostly of such runs, or a large overlap re-reading them) :class:`DenseRun`
    hands the whole text to the general path, so the cost stays linear.
    """

    def __init__(self, text: str, separator: str) -> None:
        self.text = text
        self.finditer = literal_pattern(separator).finditer
        self.budget = int(_SCAN_BUDGET * len(text))

    def _matches(self, start: int, stop: int):  # noqa: ANN202 - an iterator of re.Match
        self.budget -= stop - start
        if self.budget < 0:
            raise DenseRun
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


def bounds_by_search(text: str, separator: str, chunk_size: int, chunk_overlap: int) -> list[tuple[int, int]]:
    """The (start, end) of each of the rule's chunks, from searches near each chunk's ends; DenseRun where too dense.

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
    chunks: list[tuple[int, int]] = []  # an empty text has none: the loop does not run, the last chunk is empty
    length = len(text)
    size = len(separator)
    shifts, overlap_tails, widest_shift, trailing_space = _separator_profile(separator)
    find, rfind = text.find, text.rfind
    add = chunks.append
    scans: _LocalScans | None = None  # made on the first dense run (most texts have none)
    last_budget = length - chunk_size  # a chunk starting here or later reaches the text's end
    start = 0  # always an aligned boundary
    closed = -1  # the untrimmed end of the last chunk packed
    previous_end = -1  # the trimmed end of the last chunk kept
    # The first occurrence at or after ``searched_from``, found when a piece after ``closed`` did not fit:
    # the next chunk starts at ``closed`` and would search for it again (a piece over chunk_size is
    # read once, not twice; the reST part holds many: code blocks, tables).
    searched_from = found_after = -1
    # Every chunk but the last (the one that reaches the text's end, packed after the loop).
    while start < last_budget:
        chunk_start = start
        # The chunk ends at the last boundary within the budget, or at the next one.
        j = rfind(separator, start, start + chunk_size)
        if j < 0:
            j = found_after if start == searched_from else find(separator, start)
            if j < 0:
                break  # the last chunk: to the text's end
        elif j > start and text[j - 1] in overlap_tails:
            j, scans = _last_start_walked(text, separator, shifts, j, start, scans)
        end = j + size
        if end == closed:
            # The piece after ``closed`` does not fit from here: merge_pieces starts this chunk
            # later, leaving room for that piece (so no chunk ends at ``closed`` twice).
            j = found_after = find(separator, closed)
            searched_from = closed
            floor = (length if j < 0 else j + size) - chunk_size
        else:
            closed = end
            while start < end and text[start].isspace():
                start += 1
            # Once past the leading whitespace, ``start`` lies before the closing separator.
            if start < end:
                end -= trailing_space
            while end > start and text[end - 1].isspace():
                end -= 1
            if start < end and end > previous_end:
                add((start, end))
                previous_end = end
            floor = closed - chunk_overlap
        # The next chunk starts at the first boundary after this chunk's start, before its
        # end, that keeps at least ``floor`` behind it (at the end itself if there is none).
        low = floor - size if floor - size > chunk_start else chunk_start
        j = find(separator, low, closed - 1)
        # An occurrence overlapping j from at or after ``low`` would have been found instead.
        if 0 <= j < low + widest_shift:
            j, scans = _first_start_walked(text, separator, shifts, j, (chunk_start, floor, closed), scans)
        start = closed if j < 0 else j + size
    last = _last_chunk(text, separator, trailing_space, start, previous_end)
    if last is not None:
        add(last)
    return chunks


def _last_chunk(
    text: str, separator: str, trailing_space: int, start: int, previous_end: int
) -> tuple[int, int] | None:
    """The last chunk, from ``start`` to the text's end, trimmed; None where it is empty or ends where the chunk
    before it did (a text ending with the separator: that chunk already ended there)."""
    end = len(text)
    while start < end and text[start].isspace():
        start += 1
    if start < end and text.endswith(separator):  # then the text's end closes a separator too
        end -= trailing_space
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end and end > previous_end else None


# Where a left-to-right scan from an aligned boundary meets the separator, near an occurrence a search found that
# another may overlap from the left (a separator that overlaps itself): found by walking the chain of overlapping
# occurrences, or by local scans (``scans``, made on the first dense run and returned) once a walk meets one.
# Called only there: most texts never need them.


def _last_start_walked(
    text: str, separator: str, shifts: tuple[int, ...], j: int, start: int, scans: _LocalScans | None
) -> tuple[int, _LocalScans | None]:
    """Where the last occurrence the scan from ``start`` meets before the end of the one found at ``j`` begins."""
    stop = j + len(separator)
    try:
        first = _chain_start(text.startswith, separator, shifts, j, start)
        return _last_aligned(text.find, separator, first, stop), scans
    except DenseRun:
        scans = scans or _LocalScans(text, separator)
        return scans.last_start(start, stop), scans


def _first_start_walked(
    text: str, separator: str, shifts: tuple[int, ...], j: int, window: tuple[int, int, int], scans: _LocalScans | None
) -> tuple[int, _LocalScans | None]:
    """Where the first occurrence the scan from the chunk's start meets that ends in ``[floor, closed)`` begins
    (-1 if none), the one found at ``j`` being the first found from below ``floor``. ``window``: the chunk's
    start, ``floor`` and ``closed``."""
    chunk_start, floor, closed = window
    try:
        first = _chain_start(text.startswith, separator, shifts, j, chunk_start)
        return (j if first == j else _first_aligned(text.find, separator, first, floor, closed)), scans
    except DenseRun:
        scans = scans or _LocalScans(text, separator)
        return scans.first_start_ending_from(chunk_start, floor, closed - 1), scans


@lru_cache(maxsize=64)
def _separator_profile(separator: str) -> tuple[tuple[int, ...], str, int, int]:
    """What the search needs to know of a separator, worked out once per separator (a corpus of small
    files paid for it on every file: a third of the search's time on a one-chunk text).

    ``shifts``: where an occurrence may overlap the next one (shift k when the separator's tail from k
    is its own head; "\n\n": 1, "aba": 2). ``overlap_tails``: an occurrence overlapping one at j from
    the left covers j - 1 with one of these characters, so most found occurrences are cleared by
    looking at one character. ``trailing_space``: trimming a chunk's end can step over a whitespace
    separator at once (most chunks end with one): every boundary but the text's end closes a
    separator, and so does the text's end when the text ends with it.
    """
    size = len(separator)
    shifts = tuple(k for k in range(1, size) if separator[k:] == separator[: size - k])
    overlap_tails = "".join(separator[k - 1] for k in shifts)
    return shifts, overlap_tails, shifts[-1] if shifts else 0, size if separator.isspace() else 0


def _chain_start(startswith: Callable[..., bool], separator: str, shifts: tuple[int, ...], j: int, start: int) -> int:
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
    raise DenseRun


def _last_aligned(find: Callable[..., int], separator: str, first: int, stop: int) -> int:
    """Where the last occurrence a scan from the aligned occurrence at ``first`` meets before ``stop`` begins."""
    size = len(separator)
    last = j = first
    for _ in range(_WALK_LIMIT):
        if j < 0:
            return last
        last = j
        j = find(separator, j + size, stop)
    raise DenseRun


def _first_aligned(find: Callable[..., int], separator: str, first: int, floor: int, stop: int) -> int:
    """Where the first occurrence a scan from the aligned occurrence at ``first`` meets that ends in
    ``[floor, stop)`` begins (-1 if none)."""
    size = len(separator)
    j = first
    for _ in range(_WALK_LIMIT):
        if j < 0 or j + size >= floor:
            return j
        j = find(separator, j + size, stop - 1)
    raise DenseRun
