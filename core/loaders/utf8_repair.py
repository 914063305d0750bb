"""UTF-8 read around a few stray bytes: the fewest bytes dropped, every intact character kept.

Python's decoder reports the first byte it cannot read; with ``errors="replace"``
a stray byte inserted inside a character (``e6 ff 97 a5`` for "日") costs that
whole character, four bad bytes for one stray. Counted that way, short damaged
text looks like a legacy code page and was read as one ("日本" became "ТЌЦТюг").

:func:`repair_utf8` instead reads each damaged stretch with the fewest bytes
dropped: at a byte the decoder rejects, it either drops that byte, or reads the
character that byte starts with up to three stray bytes skipped inside it, as a
small search over the next bytes decides (ties drop the byte, so a character
cut off before the next one stays two bad bytes and the next character is kept).
A byte that starts a valid character is never skipped, so a character the damage
did not touch is always read as itself. Each dropped byte becomes one lone
surrogate (as ``surrogateescape`` writes it), for the caller to count and replace.
"""

from __future__ import annotations

import codecs
from functools import cache
from itertools import combinations

# Stray bytes one character may hold between its own bytes (as many as "a few" in core.loaders.text).
_MAX_SKIPPED = 3
# How far ahead the search looks: enough for a 4-byte character with its strays and the next one.
_WINDOW = 16
_HANDLER = "chunkscope-utf8-repair"


def repair_utf8(data: bytes) -> str:
    """``data`` as UTF-8, each dropped byte as a lone surrogate ``\\udc80``-``\\udcff`` after its character."""
    return data.decode("utf-8", errors=_HANDLER)


def _sequence_length(lead: int) -> int:
    """Bytes in the UTF-8 sequence ``lead`` starts; 0 when it starts none."""
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def _valid_at(data: bytes, pos: int) -> int:
    """Length of the valid character starting at ``pos`` (1 for ASCII); 0 when none starts there."""
    byte = data[pos]
    if byte < 0x80:
        return 1
    length = _sequence_length(byte)
    if not length or pos + length > len(data):
        return 0
    try:
        data[pos : pos + length].decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return length


def _skipping_read(data: bytes, pos: int) -> tuple[str, list[int], int] | None:
    """The character starting at ``pos`` read with stray bytes skipped inside it: (char, skipped, end).

    The fewest strays first. A byte that starts a valid character is never
    skipped (it is the next character, not damage), nor is ASCII.
    """
    length = _sequence_length(data[pos])
    for count in range(1, _MAX_SKIPPED + 1):
        end = pos + length + count
        if not length or end > len(data):
            return None
        # The last byte is the character's own; strays sit between its lead and it.
        for skipped in combinations(range(pos + 1, end - 1), count):
            if not all(data[p] >= 0x80 and not _valid_at(data, p) for p in skipped):
                continue
            kept = bytes(data[p] for p in range(pos, end) if p not in skipped)
            try:
                char = kept.decode("utf-8")
            except UnicodeDecodeError:
                continue
            return char, [data[p] for p in skipped], end
    return None


def _fewest_dropped(data: bytes, start: int) -> tuple[str, int]:
    """At a byte the decoder rejects: drop it, or read its character around strays, whichever drops fewer
    bytes over the next :data:`_WINDOW` bytes (a tie drops it)."""
    stop = min(len(data), start + _WINDOW)

    @cache
    def cost(pos: int) -> int:
        if pos >= stop:
            return 0
        valid = _valid_at(data, pos)
        best = 1 + cost(pos + 1) if not valid else cost(pos + valid)
        read = _skipping_read(data, pos) if not valid else None
        if read is not None:
            best = min(best, len(read[1]) + cost(read[2]))
        return best

    read = _skipping_read(data, start)
    if read is not None and len(read[1]) + cost(read[2]) < 1 + cost(start + 1):
        char, skipped, end = read
        return char + "".join(chr(0xDC00 + byte) for byte in skipped), end
    return chr(0xDC00 + data[start]), start + 1


def _handle(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return _fewest_dropped(error.object, error.start)


codecs.register_error(_HANDLER, _handle)
