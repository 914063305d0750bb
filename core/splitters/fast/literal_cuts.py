"""The recursive splitter's cuts at a literal separator: one regex scan (``finditer``) instead of a step per match.

The plain rule it must equal: cut where each of the separator's regex matches
starts (or ends, with ``keep_separator="end"``), through :meth:`CutGuard.pieces
<core.splitters.pieces.CutGuard.pieces>`, as the recursive splitter does for any
separator (tests/test_fast_paths.py). Taken only where no table row needs
guarding and the pattern is a plain string, as the defaults ``\\n\\n``, ``\\n``
and `` `` and every non-regex separator a user types are.

Measured (benchmarks/NOTES.md, first and second rounds, 4 MB): a Python step per
match, per cut and per piece made recursive 1000/200 take 166 ms; cutting
literal separators in C, with the bisection in :mod:`core.splitters.fast.packing`,
took it to 87 ms; keeping only the positions of one ``finditer`` scan (no copy of
the text into parts, as ``str.split`` makes) took the work's peak RSS from 5.7 to
2.5 MB. The scan also ran in C until issue 41, which gave a whole
``chunkscope split --splitter recursive`` about 1.0x (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import re
from functools import lru_cache

# The parser behind ``re`` (Python 3.11+), used only to see whether a pattern is a plain string.
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

from core.splitters.pieces import literal_pattern


@lru_cache(maxsize=256)
def literal_of(pattern: str) -> str | None:
    """The plain string a pattern matches, if it is one (as the default ``\\n\\n``, ``\\n``, `` `` are)."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    if parsed.state.flags & re.IGNORECASE or not all(op is sre_constants.LITERAL for op, _ in parsed):
        return None
    return "".join(chr(code) for _, code in parsed) or None


def literal_pieces(text: str, start: int, end: int, literal: str, keep_at_start: bool) -> list[tuple[int, int]]:
    """The pieces the cuts at each occurrence of ``literal`` in ``text[start:end]`` make (no guard)."""
    bounds = literal_bounds(text, start, end, literal, keep_at_start)
    return list(zip(bounds, bounds[1:], strict=False))


def literal_bounds(text: str, start: int, end: int, literal: str, keep_at_start: bool) -> list[int]:
    """:func:`literal_pieces` as their boundaries: ``start``, every cut, ``end`` (piece i is ``bounds[i:i + 2]``).

    From one regex scan (``finditer``), and no piece tuples: on 4 MB of files, the tuples were a third of the
    cutting (sixth round).
    """
    matches = literal_pattern(literal).finditer(text, start, end)
    if keep_at_start:  # a cut where each occurrence starts; no empty first piece
        bounds = [match.start() for match in matches]
        if not bounds or bounds[0] != start:
            bounds.insert(0, start)
        bounds.append(end)
    else:  # a cut just after each occurrence; no empty last piece
        bounds = [match.end() for match in matches]
        if not bounds or bounds[-1] != end:
            bounds.append(end)
        bounds.insert(0, start)
    return bounds
