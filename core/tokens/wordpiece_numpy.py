"""The words of prepared ASCII text split in numpy: the twin of ``wordpiece_native.c`` for an install without a C compiler.

:class:`NumpyWordPiece` reads what :meth:`core.tokens.wordpiece.AsciiWordPiece.prepare` leaves (printable
ASCII and ASCII whitespace, lowercased if the model lowercases) as the C reader does. A text's words come from
numpy over its bytes; a word of up to 12 letters and digits is found by an exact integer key made in numpy
(:class:`core.tokens.word_keys.WordKeys`), deduplicated there, so Python looks up each distinct word of a block
once; a word of the vocabulary is one token of itself, and any other word is split once and remembered: by
BERT's longest-match WordPiece over the vocabulary's keys, all new words of a block at once
(:meth:`NumpyWordPiece._pieces`), or, if longer, by the model's own WordPiece. The words it learns are bounded:
a full table is replaced by a fresh one.
"""

from __future__ import annotations

import re
import threading
from itertools import repeat
from typing import Any

import numpy as np

from core.tokens.word_keys import KeySet, WordKeys

_PUNCTUATION = r"!-/:-@\[-`{-~"
# Every word, looked up by its text (a vocabulary without every single character; else WordKeys).
_WORDS = {True: re.compile(rf"[a-z0-9]+|[{_PUNCTUATION}]"), False: re.compile(rf"[A-Za-z0-9]+|[{_PUNCTUATION}]")}
# Byte classes: 0 whitespace, 1 letter or digit, 2 punctuation (every other printable ASCII byte). The C reader
# is given the same table.
BYTE_CLASSES = np.zeros(256, dtype=np.int8)
BYTE_CLASSES[[ord(c) for c in "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"]] = 1
BYTE_CLASSES[[c for c in range(33, 127) if not chr(c).isalnum()]] = 2


class _Table:
    """One generation of what the fast path knows: every word's value and the pieces' offsets it points to.

    A word's value: its token count in the low byte (WordPiece gives at most 100 pieces), and for a word of
    several pieces where its pieces' offsets start in the arrays. Words are found by their text (``known``)
    or, up to :attr:`WordKeys.longest` characters, by their key (``keyed``). A call reads one table from start to end,
    so a new generation (made when this one is full) never changes what a running call reads.
    """

    def __init__(self, vocabulary: dict[str, int], keyed: dict[int, int], offsets: type[np.integer]) -> None:
        self.known = dict(vocabulary)
        self.vocabulary = len(vocabulary) + len(keyed)  # what is not learned
        # Words of at most WordKeys.longest characters by their key (:class:`WordKeys`): the vocabulary's, then
        # those learned. Longer words are looked up in ``known`` by their text.
        self.keyed = dict(keyed)
        # The pieces' offsets within their word, for words of several pieces; entry 0 is unused. A word has
        # at most the model's max_input_chars_per_word characters (100 here: a byte each), or is one token.
        self.piece_starts = np.zeros(1024, dtype=offsets)
        self.piece_ends = np.zeros(1024, dtype=offsets)
        self.pieces = 1
        self.learning = threading.Lock()

    def learned(self) -> int:
        """How many words this generation learned."""
        return len(self.known) + len(self.keyed) - self.vocabulary

    def keep_pieces(self, starts: np.ndarray, ends: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Keep the pieces' offsets of words of several pieces (``starts``, ``ends``: all the words' pieces in
        order, ``counts`` per word); returns each word's value. Learners hold :attr:`learning`."""
        first = self.pieces
        size = first + len(starts)
        if size > len(self.piece_starts):
            # Grown into new arrays, published before any value that points past the old ones.
            self.piece_starts = np.resize(self.piece_starts, 2 * size)
            self.piece_ends = np.resize(self.piece_ends, 2 * size)
        self.piece_starts[first:size] = starts
        self.piece_ends[first:size] = ends
        self.pieces = size
        return ((first + np.cumsum(counts) - counts) << 8) | counts


class NumpyWordPiece:
    """Token offsets and counts of prepared ASCII text under one BERT WordPiece tokenizer, in numpy."""

    # Words outside the vocabulary one generation learns before a fresh one starts: memory stays bounded on a
    # corpus of many rare words (hashes, identifiers) and the fast path keeps running. ~80 bytes a word with
    # byte offsets (tracemalloc: 100,000 words 8.8 MB, 150,000 12.2 MB), so ~16 MB at most: less than 100,000
    # words took with int64 offsets (21 MB).
    WORDS_KEPT = 200_000

    def __init__(self, tokenizer: Any, vocabulary: dict[str, int], prefix: str, longest: int, lowercase: bool) -> None:
        self._words = _WORDS[lowercase]
        self._tokenize = tokenizer.model.tokenize
        # A vocabulary entry (whole words only: a continuing piece never starts a word) is one token of itself.
        self._vocabulary = dict.fromkeys((w for w in vocabulary if not w.startswith(prefix)), 1)
        # Each token id's length in characters (a continuing piece's without its prefix).
        self._piece_lengths = np.zeros(max(vocabulary.values(), default=0) + 1, dtype=np.int64)
        self._piece_lengths[list(vocabulary.values())] = [
            len(piece) - len(prefix) if piece.startswith(prefix) else len(piece) for piece in vocabulary
        ]
        # Every word of one character (a letter, a digit, a punctuation character) one token of itself?
        singles = [chr(c) for c in range(33, 127) if not (lowercase and chr(c).isupper())]
        self._singles_known = all(single in self._vocabulary for single in singles)
        self._offsets = np.uint8 if longest <= 255 else np.int64
        # Where every single character is a word of the vocabulary, the longer words (up to the keys' length)
        # are found by key and split into pieces in numpy (:meth:`_pieces`), and the rest by their text.
        self._keys: WordKeys | None = None
        keyed: dict[int, int] = {}
        if self._singles_known:
            letters = "abcdefghijklmnopqrstuvwxyz"
            self._keys = WordKeys("0123456789" + letters + ("" if lowercase else letters.upper()), longest)
            # The vocabulary's pieces by key (each key a piece's length): those that start a word, and those
            # that continue one (the prefix dropped). Words without a key are looked up by their text.
            keyable = re.compile(f"[{self._keys.alphabet}]{{1,{self._keys.longest}}}").fullmatch
            pieces: tuple[list[str], list[str]] = ([], [])  # starting, continuing
            by_text: dict[str, int] = {}
            for word in vocabulary:
                continues = word.startswith(prefix)
                piece = word[len(prefix) :] if continues else word
                if keyable(piece):
                    pieces[continues].append(piece)
                elif not continues:
                    by_text[word] = 1
            starting, continuing = (self._keys.of_words(words) for words in pieces)
            self._starting, self._continuing = KeySet(starting), KeySet(continuing)
            # The longest piece of each (candidates past it are never looked up).
            self._longest_piece = [max(map(len, words), default=0) for words in pieces]
            keyed = dict.fromkeys(starting.tolist(), 1)
            self._vocabulary = by_text
        self._keyed = keyed
        self._table = _Table(self._vocabulary, keyed, self._offsets)
        self._renewing = threading.Lock()

    def count(self, read: str) -> int:
        """How many tokens ``read`` has."""
        codes = _codes(read)
        starts, ends = _words_at(codes)
        values = self._values(read, codes, starts, ends, self._current())
        return int((values & 0xFF).sum())

    def _current(self) -> _Table:
        """The table a call reads, start to end: a fresh generation first if this one is full (calls still
        reading the full one finish with it)."""
        if self._table.learned() >= self.WORDS_KEPT:
            with self._renewing:
                if self._table.learned() >= self.WORDS_KEPT:
                    self._table = _Table(self._vocabulary, self._keyed, self._offsets)
        return self._table

    def _values(self, read: str, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, table: _Table) -> np.ndarray:
        """The values in ``table`` (see :class:`_Table`) of the words of ``read`` (its bytes ``codes``, its words
        at ``starts``, ``ends``), new words learned.

        A word of one character is one token of itself when the vocabulary holds them all: only longer words
        are looked up, those of at most :attr:`WordKeys.longest` characters by their keys, made for all at
        once and deduplicated in numpy, so Python looks up each distinct word once.
        """
        if self._keys is None:
            words = self._words.findall(read)
            return self._by_text(words, table)
        values = np.ones(len(starts), dtype=np.int64)
        at = np.flatnonzero(ends - starts > 1)  # the longer words
        word_starts, lengths = starts[at], ends[at] - starts[at]
        short = lengths <= self._keys.longest
        every = bool(short.all())
        keyed_at = at if every else at[short]
        keys = (
            self._keys.of(codes, word_starts, lengths)
            if every
            else self._keys.of(codes, *_at(short, word_starts, lengths))
        )
        distinct, where = np.unique(keys, return_inverse=True)
        # Words of the vocabulary (one token each) found in numpy; only the others are looked up in Python.
        in_vocabulary = self._starting.has(distinct)
        found = np.ones(len(distinct), dtype=np.int64)
        others = np.flatnonzero(~in_vocabulary)
        found[others] = np.fromiter(
            map(table.keyed.get, distinct[others].tolist(), repeat(0)), dtype=np.int64, count=len(others)
        )
        if not found.all():
            new = np.flatnonzero(found == 0)
            found[new] = self._learn_keys(distinct[new], table)
        values[keyed_at] = found[where]
        if not every:
            long = np.flatnonzero(~short)
            begin, end = word_starts[long].tolist(), (word_starts[long] + lengths[long]).tolist()
            values[at[long]] = self._by_text([read[a:b] for a, b in zip(begin, end, strict=True)], table)
        return values

    def _by_text(self, words: list[str], table: _Table) -> np.ndarray:
        """The values of ``words`` looked up by their text, new ones learned from the model."""
        found = np.fromiter(map(table.known.get, words, repeat(0)), dtype=np.int64, count=len(words))
        if not found.all():
            new = np.flatnonzero(found == 0).tolist()
            learned = self._learn(list(dict.fromkeys([words[i] for i in new])), table)
            found[new] = [learned[words[i]] for i in new]
        return found

    def columns(self, read: str) -> tuple[np.ndarray, np.ndarray]:
        """Token starts and ends of ``read`` (int64 character offsets)."""
        codes = _codes(read)
        starts, ends = _words_at(codes)
        table = self._current()  # one generation for the whole call
        values = self._values(read, codes, starts, ends, table)
        counts = values & 0xFF
        several = np.flatnonzero(counts > 1)
        if not len(several):  # one token a word: the token is the word (in the vocabulary, or unknown)
            return starts, ends
        # A word of one token is its token; the tokens of a word of several are its pieces, from its table entry.
        token_starts, token_ends = np.repeat(starts, counts), np.repeat(ends, counts)
        pieces = counts[several]
        first_token = (np.cumsum(counts) - counts)[several]
        rank = np.arange(int(pieces.sum())) - np.repeat(np.cumsum(pieces) - pieces, pieces)
        at = np.repeat(first_token, pieces) + rank
        entry = np.repeat(values[several] >> 8, pieces) + rank
        word_start = np.repeat(starts[several], pieces)
        piece_starts, piece_ends = table.piece_starts, table.piece_ends  # read after the values: never shorter
        token_starts[at] = word_start + piece_starts[entry]
        token_ends[at] = word_start + piece_ends[entry]
        return token_starts, token_ends

    def _learn(self, words: list[str], table: _Table) -> dict[str, int]:
        """The values in ``table`` of distinct words outside the vocabulary, from the model's own WordPiece.

        A word's pieces are consecutive: their offsets follow from their lengths (the vocabulary's entries
        less the continuing prefix), read by token id, which costs less than asking each token its offsets.
        """
        known = table.known
        with table.learning:
            new = [word for word in words if word not in known]  # others were learned meanwhile by another thread
            if new:
                tokenized = list(map(self._tokenize, new))
                counts = np.fromiter(map(len, tokenized), dtype=np.int64, count=len(new))
                values = counts  # a word of one token (of the vocabulary, or unknown): 1
                several = np.flatnonzero(counts > 1)
                if len(several):
                    pieces = counts[several]
                    ids = [token.id for i in several.tolist() for token in tokenized[i]]
                    lengths = self._piece_lengths[np.array(ids, dtype=np.int64)]
                    # Each piece's end within its word: the running total less the total before its word.
                    totals, firsts = np.cumsum(lengths), np.cumsum(pieces) - pieces
                    piece_ends = totals - np.repeat((totals - lengths)[firsts], pieces)
                    if piece_ends[firsts + pieces - 1].tolist() != [len(new[i]) for i in several.tolist()]:
                        raise AssertionError("word pieces that do not spell their word")  # never, for this model
                    values[several] = table.keep_pieces(piece_ends - lengths, piece_ends, pieces)
                known.update(zip(new, values.tolist(), strict=True))
        return {word: known[word] for word in words}

    def _learn_keys(self, keys: np.ndarray, table: _Table) -> np.ndarray:
        """The values in ``table`` of distinct words by key (none of them in it when asked), split by
        :meth:`_pieces`."""
        keyed = table.keyed
        with table.learning:
            # Others were learned meanwhile by another thread.
            values = np.fromiter(map(keyed.get, keys.tolist(), repeat(0)), dtype=np.int64, count=len(keys))
            new = np.flatnonzero(values == 0)
            if len(new):
                counts, starts, ends = self._pieces(keys[new])
                learned = counts.copy()  # a word of one token (an unknown word): 1
                several = counts > 1
                if several.any():
                    learned[several] = table.keep_pieces(starts, ends, counts[several])
                values[new] = learned
                keyed.update(zip(keys[new].tolist(), learned.tolist(), strict=True))
        return values

    def _pieces(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The model's WordPiece of distinct words by key, for all of them at once: each word's token count
        (1 for an unknown word), and the offsets of the pieces of the words of several, in order.

        BERT's algorithm: from the word's start, the longest piece of the vocabulary (a piece after the
        first is looked up with the continuing prefix), then again from its end; a word where no piece
        is found at some point is one unknown token. Every piece is found here by its key, all the
        candidate lengths of all the words at once (tests/test_wordpiece.py compares the pieces with the
        model's own ``tokenize`` on generated and corpus words).
        """
        spelling = self._keys
        assert spelling is not None
        longest = spelling.longest
        digits, lengths = spelling.spelled(keys)
        padded = np.zeros((len(keys), 2 * longest), dtype=np.uint64)
        padded[:, :longest] = digits
        columns = np.arange(longest)
        counts = np.zeros(len(keys), dtype=np.int64)
        piece_ends = np.zeros((len(keys), longest), dtype=np.int64)
        unknown = np.zeros(len(keys), dtype=np.bool_)
        position = np.zeros(len(keys), dtype=np.int64)
        rows = np.arange(len(keys))
        vocabulary, longest_piece = self._starting, self._longest_piece[0]
        while len(rows):
            at = position[rows]
            rest = lengths[rows] - at
            width = max(min(longest_piece, int(rest.max())), 1)
            # Every candidate piece from ``at``: its first 1, 2, ... ``width`` characters (the key of each is a
            # sum of weighted digits, so a running sum gives them all; past the word's end they repeat the last).
            candidates = np.cumsum(
                padded[rows[:, None], at[:, None] + columns[:width]] * spelling.powers[:width], axis=1
            )
            hit = vocabulary.has(candidates) & (columns[:width] < rest[:, None])
            any_hit = hit.any(axis=1)
            unknown[rows[~any_hit]] = True
            rows, at, hit = rows[any_hit], at[any_hit], hit[any_hit]
            ends = at + width - np.argmax(hit[:, ::-1], axis=1)  # the longest piece found
            piece_ends[rows, counts[rows]] = ends
            counts[rows] += 1
            position[rows] = ends
            rows = rows[ends < lengths[rows]]
            vocabulary, longest_piece = self._continuing, self._longest_piece[1]
        counts[unknown] = 1
        several = counts > 1
        taken = columns < counts[several][:, None]
        ends = piece_ends[several]
        starts = np.concatenate([np.zeros((len(ends), 1), dtype=np.int64), ends[:, :-1]], axis=1)
        return counts, starts[taken], ends[taken]


def _at(where: np.ndarray, *columns: np.ndarray) -> list[np.ndarray]:
    return [column[where] for column in columns]


def _codes(read: str) -> np.ndarray:
    """The bytes of ``read`` (printable ASCII and ASCII whitespace), uint8."""
    return np.frombuffer(read.encode("ascii"), dtype=np.uint8)


def _words_at(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the words of a text (its bytes ``codes``: printable ASCII and ASCII whitespace) start and end:
    runs of letters and digits, and each punctuation character alone; int64."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    kind = BYTE_CLASSES[codes]
    word_char = kind == 1
    change = np.empty(len(kind) + 1, dtype=np.bool_)
    change[0] = change[-1] = True
    np.not_equal(word_char[1:], word_char[:-1], out=change[1:-1])
    punctuation = kind == 2
    starts = np.flatnonzero((word_char & change[:-1]) | punctuation)
    ends = np.flatnonzero((word_char & change[1:]) | punctuation) + 1
    return starts, ends
