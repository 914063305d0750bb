"""The sentence splitter's ``compat="llamaindex"`` rule: LlamaIndex's ``SentenceSplitter._split`` and ``_merge`` over spans.

Beside it stand the cut rules the native rule shares with LlamaIndex (clause
punctuation, non-overlapping separator occurrences). :mod:`core.splitters.sentence`
holds the splitter, its parameters and the native rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.splitters.compat import CompatChunk, joined_chunk
from core.splitters.pieces import CutGuard, piece_sizes
from core.tokens.segmentation import punkt_sentence_starts
from core.tokens.tokenizers import Tokenizer

# LlamaIndex's secondary chunking regex, ``[^,.;。？！]+[,.;。？！]?``, cuts just
# after each of these characters.
CLAUSE_END = re.compile(r"[,.;。？！]")


def occurrences(text: str, needle: str, start: int, end: int) -> list[int]:
    """Where ``needle`` occurs in ``text[start:end]`` (non-overlapping): the cut keeps it with the next piece."""
    cuts = []
    at = text.find(needle, start, end)
    while at != -1:
        cuts.append(at)
        at = text.find(needle, at + len(needle), end)
    return cuts


class LlamaIndexPieces:
    """LlamaIndex's ``SentenceSplitter._split`` over spans: pieces of the text that each fit the budget.

    A piece too big is split by the first of: the paragraph separator, Punkt
    sentences, clause punctuation, the word separator, characters; each part still
    too big is split again from the paragraph level. A piece's size is its own text's
    token count. A Punkt split drops the whitespace before its first sentence.
    """

    def __init__(self, text: str, tokenizer: Tokenizer, paragraph_separator: str, separator: str) -> None:
        self.text = text
        self.tokenizer = tokenizer
        self.paragraph, self.word = paragraph_separator, separator
        self.none = CutGuard()

    def sizes(self, pieces: Sequence[tuple[int, int]]) -> list[int]:
        return piece_sizes(self.tokenizer, self.text, pieces)

    def parts(self, start: int, end: int) -> list[tuple[int, int]]:
        """LlamaIndex's ``_get_splits_by_fns``: the first split into more than one part (else the last one tried)."""
        text = self.text
        pieces = self.none.pieces(start, end, occurrences(text, self.paragraph, start, end))
        if len(pieces) > 1:
            return pieces
        starts = punkt_sentence_starts(text, start, end)
        if len(starts) > 1:
            return list(zip(starts, [*starts[1:], end], strict=True))
        for cuts in (
            [m.end() for m in CLAUSE_END.finditer(text, start, end)],
            occurrences(text, self.word, start, end),
            range(start + 1, end),
        ):
            pieces = self.none.pieces(start, end, cuts)
            if len(pieces) > 1:
                return pieces
        return pieces

    def fitting(self, budget: int) -> list[tuple[int, int, int]]:
        """``(start, end, size)`` of consecutive splits, each within ``budget`` unless nothing may cut it."""
        text = self.text
        done: list[tuple[int, int, int]] = []
        pending = [(0, len(text), self.sizes([(0, len(text))])[0])]
        while pending:
            start, end, size = pending.pop()
            if size <= budget:
                done.append((start, end, size))
                continue
            parts = self.parts(start, end)
            if len(parts) <= 1:
                done.append((start, end, size))
                continue
            sizes = self.sizes(parts)
            pending.extend((a, b, n) for (a, b), n in zip(reversed(parts), reversed(sizes), strict=True))
        return done


def llamaindex_merge(
    text: str, splits: Sequence[tuple[int, int, int]], chunk_size: int, chunk_overlap: int
) -> list[CompatChunk]:
    """LlamaIndex's ``SentenceSplitter._merge`` over spans: pack splits greedily, carry trailing splits as overlap.

    A new chunk starts with the previous chunk's trailing splits that together hold
    at most ``chunk_overlap``, dropped from the front while the next split does not
    fit beside them. A chunk's text is its splits joined and stripped; blank chunks vanish.
    """
    chunks: list[CompatChunk] = []
    current: list[tuple[int, int, int]] = []
    length, new_chunk = 0, True

    def close() -> None:
        nonlocal current, length, new_chunk
        chunk = joined_chunk(text, [(a, b) for a, b, _ in current])
        if chunk is not None:
            chunks.append(chunk)
        last, current, length, new_chunk = current, [], 0, True
        for split in reversed(last):
            if length + split[2] > chunk_overlap:
                break
            length += split[2]
            current.insert(0, split)

    index = 0
    while index < len(splits):
        split = splits[index]
        if length + split[2] > chunk_size and not new_chunk:
            close()
            continue
        while new_chunk and current and length + split[2] > chunk_size:
            length -= current.pop(0)[2]
        current.append(split)
        length += split[2]
        new_chunk = False
        index += 1
    if not new_chunk:
        close()
    return chunks
