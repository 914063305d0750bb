"""Exact integer keys of short words of letters and digits, made for many words at once in numpy.

The ASCII WordPiece fast path's numpy reader (:mod:`core.tokens.wordpiece_numpy`) finds a text's words, the
vocabulary's and the ones it has learned, by these keys: numpy makes and deduplicates them for a whole block,
so Python looks up each distinct word once, and no hash means no collision to guard against.
"""

from __future__ import annotations

import numpy as np


class WordKeys:
    """Exact integer keys of words of letters and digits: every word of a text keyed in numpy at once.

    A word of the ``alphabet``'s characters is read as the number whose digits (base ``len(alphabet) + 1``)
    are its characters' places in the alphabet (1 up), written left-aligned in :attr:`longest` digits (the
    rest zeros). A digit is never zero inside a word, so distinct words have distinct numbers, and a word of
    at most :attr:`longest` characters has one below 2**64: its key is exact in a uint64, no hash and so no
    collision (tests/test_wordpiece.py checks the keys against this rule written in Python).
    """

    def __init__(self, alphabet: str, longest_word: int) -> None:
        self.base = len(alphabet) + 1
        longest = 0
        while self.base ** (longest + 1) <= 2**64:  # the largest key of n characters is base**n - 1
            longest += 1
        self.longest = min(longest, longest_word)
        self.alphabet = alphabet
        self.digits = np.zeros(256, dtype=np.uint64)  # a byte's digit (0: not in the alphabet)
        self.digits[[ord(c) for c in alphabet]] = np.arange(1, len(alphabet) + 1, dtype=np.uint64)
        # The weight of each of a key's digits, first to last.
        self._weights = [self.base ** (self.longest - 1 - k) for k in range(self.longest)]
        self.powers = np.array(self._weights, dtype=np.uint64)
        self._digit_of = {c: i + 1 for i, c in enumerate(alphabet)}

    def key(self, word: str) -> int | None:
        """The key of ``word``, or None if it is longer than :attr:`longest` or holds another character."""
        if not 0 < len(word) <= self.longest:
            return None
        total, digit_of = 0, self._digit_of
        for c, weight in zip(word, self._weights, strict=False):
            digit = digit_of.get(c)
            if digit is None:
                return None
            total += digit * weight
        return total

    def of_words(self, words: list[str]) -> np.ndarray:
        """The keys of ``words`` (each of the alphabet, of 1 to :attr:`longest` characters), in numpy."""
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        starts = np.cumsum(lengths + 1) - (lengths + 1)
        return self.of(np.frombuffer(" ".join(words).encode("ascii"), dtype=np.uint8), starts, lengths)

    def of(self, codes: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The keys of the words at ``starts`` (of ``lengths`` at most :attr:`longest`) in a text's bytes."""
        digits = np.concatenate([self.digits[codes], np.zeros(self.longest, dtype=np.uint64)])
        keys = np.zeros(len(starts), dtype=np.uint64)
        base = np.uint64(self.base)
        width = int(lengths.max()) if len(lengths) else 0
        for k in range(width):  # Horner's rule, zeros past each word's end
            keys *= base
            keys += digits[starts + k] * (lengths > k)
        if width < self.longest:  # then left-aligned: the zeros no word reached
            keys *= np.uint64(self.base ** (self.longest - width))
        return keys

    def spelled(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The digits of each key (one row each, :attr:`longest` columns, left-aligned) and their words' lengths."""
        digits = (keys[:, None] // self.powers[None, :]) % np.uint64(self.base)
        return digits, np.count_nonzero(digits, axis=1)


class KeySet:
    """A fixed set of word keys (sorted), asked about many keys at once by binary search."""

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = np.unique(keys[keys != 0])
        self._searched = np.append(self.keys, np.uint64(0))  # a last entry, so no search falls off the end

    def has(self, keys: np.ndarray) -> np.ndarray:
        """Whether each key (never 0) is in the set, as booleans of the same shape."""
        return self._searched[np.searchsorted(self.keys, keys)] == keys
