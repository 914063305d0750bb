"""A text's token index: the sizes of any spans of it from one tokenizer pass.

The plain rule it must equal: a piece's size is what the tokenizer counts in the
piece's own text (the sentence splitter sizes pieces so for a size function).
The index counts the text's tokens that overlap the piece instead, which is the
same for pieces cut between words and never less where a cut falls inside one
(tests/test_token_index_counts.py; tests/test_tokenizer_batches.py and
tests/test_parallel_tokenizer.py hold the blocks, batches and threads to one
pass of the tokenizer over the whole text).

Measured (benchmarks/NOTES.md; LlamaIndex's SentenceSplitter, the yardstick,
tokenizes every split at every level): blocks encoded in batches of 16, their
offsets shifted in C, 0.550 -> 0.505 s CPU on 1 MB (sentence 4.0x -> 4.5-4.9x
LlamaIndex); runs of blocks on two threads, 0.49 -> 0.27 s wall; many pieces
counted with numpy, 14,389 sentences of 1 MB 17.5 -> 3.4 ms; the index kept for
the next split of the same text, a Chunks rerun of the sentence splitter at a new
chunk_size 0.76 -> 0.25 s.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import partial
from itertools import pairwise, repeat
from operator import add
from typing import Any

from core.runtime.memo import Memo
from core.tokens.threads import in_parallel, parallel_workers
from core.tokens.tokenizers import Tokenizer

# Where TokenIndex may cut a text into blocks: whitespace that no tokenizer joins across. Not the
# control characters Python counts as whitespace (\x0b \x0c \x1c-\x1f \x85): BERT's normalizer
# deletes them, so "ab\x0bcd" is one word to it.
_BLOCK_BREAK = re.compile(r"[^\S\x0b\x0c\x1c-\x1f\x85]")


class TokenIndex:
    """Sizes of any spans of one text, from a single pass of the tokenizer over it.

    A span's size is the number of the text's tokens that overlap it. For
    pieces cut between words this is exactly the tokens of the piece's own
    text; where a cut falls inside a word, the word's tokens count for both
    pieces, so a size never undercounts what the piece's text would tokenize
    to. The text is tokenized in blocks cut just before whitespace (tokenizers
    do not join tokens across whitespace, and one very long string is slower
    to encode than the same text in blocks).

    An index never changes once built, so :meth:`shared` hands the same one to
    every split of a text (and to the metrics): a Chunks page rerun with a new
    chunk_size then skips the whole-document tokenizer pass.
    """

    BLOCK = 4096
    ASCII_BLOCK = 65536
    BATCH = 16
    # From this many pieces on, count_many bisects with numpy (below it, the Python loop is as fast).
    VECTOR_FROM = 8

    def __init__(self, tokenizer: Tokenizer, text: str) -> None:
        self.by_length = tokenizer.name == "characters"
        # Machine integers, not lists of ints: a quarter of the memory, the same bisection speed,
        # and numpy reads them without a copy (:meth:`columns`).
        self.starts = array("q")
        self.ends = array("q")
        self._columns: tuple[Any, Any] | None = None
        if self.by_length:
            return
        parallel_for = getattr(tokenizer, "parallel_for", None)
        parallel = bool(parallel_for and parallel_for(text))
        # The model tokenizer's ASCII path (a text it keeps on one thread) reads a long block as fast as
        # short ones, in fewer calls: 21 MB of --metrics batch, 0.35 CPU-s less at 64 KB than at 4 KB.
        block = self.ASCII_BLOCK if parallel_for is not None and not parallel else self.BLOCK
        positions = [0]
        while positions[-1] < len(text):
            positions.append(_next_whitespace(text, positions[-1] + block))
        # A tokenizer that releases the GIL (the model's) gets the text in consecutive runs of
        # blocks, one run per thread: each thread encodes and collects its own run, so its
        # Python work overlaps the other's encoding (1 MB: 0.49 s -> 0.27 s wall on two cores).
        blocks = len(positions) - 1
        workers = min(parallel_workers(len(text)), blocks) if parallel else 1
        cuts = [blocks * n // max(workers, 1) for n in range(workers + 1)]
        runs = in_parallel(
            [partial(self._columns_of, tokenizer, text, positions[a : b + 1]) for a, b in pairwise(cuts)]
        )
        for run_starts, run_ends in runs:
            self.starts.extend(run_starts)
            self.ends.extend(run_ends)

    @classmethod
    def _columns_of(cls, tokenizer: Tokenizer, text: str, positions: list[int]) -> tuple[array, array]:
        """Token starts and ends of ``text[positions[0]:positions[-1]]``, tokenized block by block."""
        starts, ends = array("q"), array("q")
        # Blocks go to the tokenizer in batches: one call per batch, and only a batch's
        # encodings held at once (a whole megabyte's would add ~20 MB at the peak).
        for first in range(0, len(positions) - 1, cls.BATCH):
            batch = positions[first : first + cls.BATCH + 1]
            blocks = [text[a:b] for a, b in pairwise(batch)]
            for position, (block_starts, block_ends) in zip(batch, tokenizer.span_columns(blocks), strict=False):
                if hasattr(block_starts, "tobytes"):  # int64 numpy columns (core.tokens.wordpiece): shifted in numpy
                    starts.frombytes((block_starts + position).tobytes())
                    ends.frombytes((block_ends + position).tobytes())
                    continue
                starts.extend(map(add, block_starts, repeat(position)))
                ends.extend(map(add, block_ends, repeat(position)))
        return starts, ends

    @classmethod
    def shared(cls, tokenizer: Tokenizer, text: str) -> TokenIndex:
        """The index of ``text`` under ``tokenizer``, built once and kept for the last few texts.

        Keyed by the tokenizer object and the text itself (equal strings, so
        never a stale index); bounded by :data:`TOKEN_INDEXES`. Two threads
        asking for a new text at once may both build it; one index is kept.
        With reuse turned off (:func:`reuse_token_indexes`) every call builds afresh.
        """
        if tokenizer.name == "characters" or not _REUSE_TOKEN_INDEXES[0]:
            return cls(tokenizer, text)
        key = (tokenizer, text)
        index = TOKEN_INDEXES.get(key)
        if index is None:
            index = TOKEN_INDEXES.put(key, cls(tokenizer, text), max(len(text), 1))
        return index

    def columns(self) -> tuple[Any, Any]:
        """Token starts and ends as read-only int64 numpy arrays sharing this index's memory."""
        if self._columns is None:
            import numpy as np

            starts, ends = np.frombuffer(self.starts, dtype=np.int64), np.frombuffer(self.ends, dtype=np.int64)
            starts.flags.writeable = ends.flags.writeable = False
            self._columns = (starts, ends)
        return self._columns

    def count(self, start: int, end: int) -> int:
        if self.by_length:
            return end - start
        # Tokens are in order: those ending by ``start`` are a prefix of those starting before ``end``.
        return max(bisect_left(self.starts, end) - bisect_right(self.ends, start), 0)

    def count_many(self, pieces: Sequence[tuple[int, int]]) -> list[int]:
        if self.by_length or len(pieces) < self.VECTOR_FROM:
            return [self.count(start, end) for start, end in pieces]
        # Many pieces: both bisections for all of them at once (14,389 sentences of 1 MB: 17.5 -> 3.4 ms).
        import numpy as np

        token_starts, token_ends = self.columns()
        bounds = np.fromiter((x for piece in pieces for x in piece[:2]), dtype=np.int64, count=2 * len(pieces))
        before_end = np.searchsorted(token_starts, bounds[1::2], "left")
        ended = np.searchsorted(token_ends, bounds[0::2], "right")
        return np.maximum(before_end - ended, 0).tolist()


# Token indexes of the last few texts split or measured: at most 8 texts and 8 million characters
# (an index holds 16 bytes per token, about 4 per character of English, besides the text it keeps alive).
TOKEN_INDEXES = Memo(8_000_000, max_entries=8)
_REUSE_TOKEN_INDEXES = [True]


def index_held(tokenizer: Tokenizer, text: str) -> bool:
    """Whether a split or a count of ``text`` under ``tokenizer`` finds its index kept (or needs none: characters)."""
    if tokenizer.name == "characters":
        return True
    return _REUSE_TOKEN_INDEXES[0] and TOKEN_INDEXES.get((tokenizer, text)) is not None


def reuse_token_indexes(enabled: bool) -> None:
    """Turn reuse of token indexes across splits on or off (off also forgets those kept).

    Benchmarks that split the same text repeatedly turn it off, so each split
    pays for its own tokenizer pass as a split of a new document would.
    """
    _REUSE_TOKEN_INDEXES[0] = enabled
    TOKEN_INDEXES.clear()


def _next_whitespace(text: str, position: int) -> int:
    """The first block break (whitespace) at or after ``position`` (or the end of the text)."""
    if position >= len(text):
        return len(text)
    match = _BLOCK_BREAK.search(text, position)
    return match.start() if match else len(text)
