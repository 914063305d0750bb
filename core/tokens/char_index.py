"""A document's characters indexed once: whitespace runs, word breaks, non-space counts.

The metrics measure every node again after each parameter change. For a node
whose text is its span of the document, its word count, where it ends once
trailing whitespace is dropped, and whether it starts or ends at a word break
are then binary searches in arrays built once per document (and kept for the
last few documents), not a pass over each node's text in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from core.runtime.memo import Memo

# Every code point str.isspace() (and so the regex \s and str.split()) accepts lies below U+3001.
WHITESPACE_CODES = np.array([code for code in range(0x3001) if chr(code).isspace()], dtype=np.uint32)

# Characters where the model tokenizer always ends a word: ASCII whitespace and ASCII punctuation
# (BERT's normalizer and pre-tokenizer split there whatever surrounds them).
WORD_BREAKS = frozenset(" \t\n\r!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_BREAK_CODES = np.array(sorted(map(ord, WORD_BREAKS)), dtype=np.uint32)
# The same two sets as tables indexed by code point (below U+3001; every code at or above it is neither):
# one lookup a character instead of np.isin's sort and search (a third of an index's time).
_TABLE_SIZE = 0x3001
_IS_SPACE = np.zeros(_TABLE_SIZE + 1, dtype=np.bool_)
_IS_SPACE[WHITESPACE_CODES] = True
_IS_BREAK = np.zeros(_TABLE_SIZE + 1, dtype=np.bool_)
_IS_BREAK[_BREAK_CODES] = True


# Both in one table read once a character: bit 1 whitespace, bit 2 a word break.
_KIND = (_IS_SPACE | (_IS_BREAK.astype(np.uint8) << 1)).astype(np.uint8)


def _in_table(codes: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``np.isin(codes, the codes table marks)``: codes past the table read its last entry, which is False."""
    return table[np.minimum(codes, _TABLE_SIZE)]


def kinds(text: str) -> np.ndarray:
    """Each character's :data:`_KIND` (uint8): an ASCII text read a byte a character, with no clipping."""
    if text.isascii():
        return _KIND[np.frombuffer(text.encode("ascii"), dtype=np.uint8)]
    return _in_table(np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32), _KIND)


class CharIndex:
    """One text's whitespace runs (``[space_starts[k], space_ends[k])``, maximal), word-break characters'
    positions and non-space prefix counts."""

    __slots__ = ("breaks", "length", "non_space_prefix", "space_ends", "space_starts")

    def __init__(self, text: str) -> None:
        kind = kinds(text)
        space = (kind & 1).view(np.bool_)
        self.length = len(kind)
        # prefix[i] = non-whitespace characters in text[:i]: any span's count is one subtraction.
        self.non_space_prefix = np.zeros(len(kind) + 1, dtype=np.int64)
        np.cumsum(~space, out=self.non_space_prefix[1:])
        edges = np.diff(space.view(np.int8), prepend=np.int8(0), append=np.int8(0))
        self.space_starts = np.flatnonzero(edges == 1)
        self.space_ends = np.flatnonzero(edges == -1)
        self.breaks = np.flatnonzero(kind & 2)

    @classmethod
    def of(cls, text: str) -> CharIndex:
        """The index of ``text``, kept for the last few texts."""
        (index,) = _INDEXES.get_many([text])
        if index is None:
            index = _INDEXES.put(text, cls(text), max(len(text), 1))
        return index

    def _in_space(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Whether each position's character is whitespace, and the start of its run (where it is)."""
        run = np.searchsorted(self.space_starts, positions, "right") - 1
        safe = np.maximum(run, 0)
        inside = (run >= 0) & (self.space_ends[safe] > positions) if len(self.space_ends) else run >= 0
        return inside & (positions >= 0), self.space_starts[safe] if len(self.space_starts) else positions

    def words(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """``len(text[s:e].split())`` for each span: the words starting inside it after a whitespace run,
        and one more when it starts on a non-space character."""
        after_space = np.searchsorted(self.space_ends, ends, "left") - np.searchsorted(self.space_ends, starts, "right")
        in_space, _ = self._in_space(starts)
        return np.maximum(after_space, 0) + ((starts < ends) & ~in_space)

    def trimmed_ends(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Each span's end once trailing whitespace is dropped (never before its start)."""
        last_space, run_start = self._in_space(ends - 1)
        return np.where(last_space & (ends > starts), np.maximum(starts, run_start), ends)

    def at_break(self, positions: np.ndarray) -> np.ndarray:
        """Whether the model tokenizer always splits at each position: the text's ends, or a break
        character just before or at it."""

        def is_break(at: np.ndarray) -> np.ndarray:
            found = np.searchsorted(self.breaks, at, "left")
            return (found < len(self.breaks)) & (self.breaks[np.minimum(found, len(self.breaks) - 1)] == at)

        if not len(self.breaks):
            return (positions == 0) | (positions == self.length)
        return (positions == 0) | (positions == self.length) | is_break(positions - 1) | is_break(positions)


# Indexes of the last texts measured, at most 8 and 8 million characters (a measure reads one 4-5 times, and
# the largest text a file may give, 5 million characters, always fits); ~11 bytes per character each (the int64
# non-space prefix, the positions of whitespace runs and break characters), besides the text they keep alive.
# Counted in texts alone, eight 5 MB texts held ~500 MB.
_INDEXES = Memo(8_000_000, max_entries=8)


def exact_spans(
    documents: Sequence[Any], nodes: Sequence[Any], texts: Sequence[str]
) -> dict[str, tuple[list[int], np.ndarray, np.ndarray]]:
    """Per document id: the positions of the nodes whose text is their span of it, and those spans."""
    by_id = {document.id: document for document in documents}
    found: dict[str, tuple[list[int], list[int], list[int]]] = {}
    for i, (node, text) in enumerate(zip(nodes, texts, strict=True)):
        document = by_id.get(node.doc_id)
        if document is None:
            continue
        start, end = node.start_char, node.end_char
        full = document.text
        if 0 <= start <= end <= len(full) and len(text) == end - start and full.startswith(text, start):
            positions, starts, ends = found.setdefault(document.id, ([], [], []))
            positions.append(i)
            starts.append(start)
            ends.append(end)
    return {
        doc_id: (positions, np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64))
        for doc_id, (positions, starts, ends) in found.items()
    }
