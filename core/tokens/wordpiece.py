"""A BERT tokenizer's tokens of plain ASCII text, from the model's vocabulary instead of the Rust pipeline.

On printable ASCII, tabs and line breaks, a BERT tokenizer (BertNormalizer,
BertPreTokenizer, WordPiece; the packaged all-MiniLM-L6-v2's) does three simple
things: it lowercases, cuts the text into words (runs of letters and digits, and
every punctuation character alone), and splits each word into word pieces.
:class:`AsciiWordPiece` prepares a text for that (:meth:`AsciiWordPiece.prepare`)
and merges back what the Rust tokenizer reads of the rest; a reader splits the
prepared text's words: :class:`NativeWordPiece`, in C (``wordpiece_native.c``,
built at install by setup.py: the 21 MB batch corpus's words in 0.2-0.3 CPU-s), or,
for an install without a C compiler, :class:`core.tokens.wordpiece_numpy.NumpyWordPiece`
(0.9-1.8 CPU-s). Either is several times faster than the Rust tokenizer's
``encode_batch`` with its offsets read into Python, which keeps an alignment for
every normalized character.

The plain rule they must equal: the tokenizer's ``encode`` without special tokens,
its offsets (tests/test_wordpiece.py, on generated texts and the shipped documents,
for both readers). A word holding any other character (a curly quote, an accent) is
cut out at the ASCII whitespace around it and left to the Rust tokenizer, whose tokens
are merged back by offset; :meth:`AsciiWordPiece.prepare` returns None, and the Rust
tokenizer takes the whole text, when it holds an added token's text (``[CLS]``) or
when such words are dense.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from operator import add
from typing import Any, NamedTuple

import numpy as np

from core.tokens.wordpiece_numpy import BYTE_CLASSES, NumpyWordPiece

# Built at install from wordpiece_native.c when a C compiler is there (setup.py); else NumpyWordPiece.
# Why it is not there, for ``chunkscope doctor`` (core/cli/doctor.py).
NATIVE_IMPORT_ERROR: str | None = None
try:
    from core.tokens import wordpiece_native
except ImportError as error:  # pragma: no cover - an install without a compiler, or a build that cannot load
    wordpiece_native = None
    NATIVE_IMPORT_ERROR = str(error)

# Printable ASCII, tab, line feed, carriage return: what the Rust normalizer leaves alone but for case.
# A word (up to ASCII whitespace) with any other character is the Rust tokenizer's.
_IS_OTHER = np.ones(128, dtype=np.bool_)  # of ASCII: not printable and not a tab or line break
_IS_OTHER[[9, 10, 13, *range(32, 127)]] = False
# A text with more such words than one per this many characters goes to the Rust tokenizer whole.
_OTHERS_EVERY = 64


class Prepared(NamedTuple):
    """A text as :class:`AsciiWordPiece` reads it: others blanked out (and lowercased), and the others."""

    read: str
    others: list[tuple[int, str]]  # (offset, word) of each word left to the Rust tokenizer


def _other_words(text: str) -> list[tuple[int, str]]:
    """Each word (between ASCII whitespace) holding a character other than printable ASCII, with its offset.

    Found in numpy over the text's code points: only those words are cut out in Python.
    """
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    space = (codes == 32) | (codes == 10) | (codes == 9) | (codes == 13)
    other = ((codes < 32) & ~space) | (codes > 126)
    # Where each word (a run of characters other than ASCII whitespace) starts and ends.
    inside = ~space
    edges = np.diff(inside.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    words = np.unique(np.searchsorted(starts, np.flatnonzero(other), "right") - 1)
    return [(start, text[start:end]) for start, end in zip(starts[words].tolist(), ends[words].tolist(), strict=True)]


def _blanked(text: str, others: list[tuple[int, str]]) -> list[str]:
    """``text`` in parts, each of ``others`` as spaces (so every offset stays)."""
    parts, position = [], 0
    for start, word in others:
        parts += (text[position:start], " " * len(word))
        position = start + len(word)
    parts.append(text[position:])
    return parts


class NativeWordPiece:
    """The words of prepared ASCII text split in C (``wordpiece_native.c``): each word where it stands, from the
    vocabulary's pieces in a hash table, nothing learned. A piece with a character past ASCII never matches the
    prepared text, so it is left out."""

    def __init__(self, vocabulary: dict[str, int], prefix: str, longest: int) -> None:
        starting, continuing = [], []
        for word in vocabulary:
            if word.isascii():
                if word.startswith(prefix):
                    continuing.append(word[len(prefix) :].encode("ascii"))
                else:
                    starting.append(word.encode("ascii"))
        self.vocabulary = wordpiece_native.Vocabulary(starting, continuing, longest, BYTE_CLASSES.tobytes())

    def count(self, read: str) -> int:
        """How many tokens ``read`` has."""
        return self.vocabulary.count(read.encode("ascii"))

    def columns(self, read: str) -> tuple[np.ndarray, np.ndarray]:
        """Token starts and ends of ``read`` (int64 character offsets)."""
        data = read.encode("ascii")
        starts, ends = np.empty(len(data), dtype=np.int64), np.empty(len(data), dtype=np.int64)
        count = self.vocabulary.columns(data, starts, ends)  # never more tokens than bytes
        return starts[:count].copy(), ends[:count].copy()


class AsciiWordPiece:
    """Token offsets and counts of ASCII text under one BERT WordPiece tokenizer (see the module doc)."""

    def __init__(self, tokenizer: Any, spec: dict[str, Any], *, native: bool = True) -> None:
        self._lowercase = bool(spec["normalizer"].get("lowercase", True))
        prefix = spec["model"].get("continuing_subword_prefix") or "##"
        vocabulary = tokenizer.get_vocab()
        longest = int(spec["model"].get("max_input_chars_per_word") or 100)
        # What splits the prepared text's words: C where it was built, else numpy; the same tokens either way.
        self.reader: NativeWordPiece | NumpyWordPiece = (
            NativeWordPiece(vocabulary, prefix, longest)
            if native and wordpiece_native is not None
            else NumpyWordPiece(tokenizer, vocabulary, prefix, longest, self._lowercase)
        )
        # An added token's text is matched before normalization (or after, if it is normalized): never taken.
        self._added = [
            added["content"].lower() if added.get("normalized") and self._lowercase else added["content"]
            for added in spec.get("added_tokens") or []
        ]
        # Any of them anywhere in a text: one regex scan (a literal's search) instead of one scan each.
        self._find_added = re.compile("|".join(map(re.escape, self._added))).search if self._added else None

    @classmethod
    def for_tokenizer(cls, tokenizer: Any, *, native: bool = True) -> AsciiWordPiece | None:
        """The fast path for a ``tokenizers.Tokenizer``, or None unless it is a plain BERT WordPiece tokenizer.

        ``native``: read words with the C path when it is built (False: always the numpy path; tests hold
        the two to the same tokens)."""
        spec = json.loads(tokenizer.to_str())
        normalizer, pre_tokenizer, model = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}, spec["model"]
        if (
            normalizer.get("type") != "BertNormalizer"
            or pre_tokenizer.get("type") != "BertPreTokenizer"
            or model.get("type") != "WordPiece"
        ):
            return None
        if any(re.search(r"\s", added["content"]) for added in spec.get("added_tokens") or []):
            return None  # an added token across whitespace would join what the cuts here keep apart
        return cls(tokenizer, spec, native=native)

    def prepare(self, text: str) -> Prepared | None:
        """What this path reads of ``text``, or None if the Rust tokenizer should take all of it.

        Words with other characters (a curly quote, an accented letter) are left to the
        Rust tokenizer as ``Prepared.others``, cut at the ASCII whitespace around them:
        BERT's pipeline never joins tokens across it, and never moves a character past it.
        """
        if self._find_added is not None and self._find_added(text):
            return None
        if text.isascii():  # in numpy: a regex search over a long ASCII text costs more
            any_other = bool(_IS_OTHER[np.frombuffer(text.encode("ascii"), dtype=np.uint8)].any())
        else:
            any_other = True  # a character past ASCII
        others = _other_words(text) if any_other else []
        if len(others) * _OTHERS_EVERY > len(text):
            return None  # mostly other characters: one Rust pass is quicker than a merge
        if others:
            text = "".join(_blanked(text, others))
        return Prepared(text.lower() if self._lowercase else text, others)

    def count(self, prepared: Prepared, other_counts: Sequence[int]) -> int:
        """How many tokens the prepared text has, given how many each of its ``others`` has."""
        return self.reader.count(prepared.read) + sum(other_counts)

    def columns(
        self, prepared: Prepared, other_columns: Sequence[tuple[np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Token starts and ends (int64 character offsets), given each of its ``others``' own (int64 arrays)."""
        starts, ends = self.reader.columns(prepared.read)
        if not prepared.others:
            return starts, ends
        offsets = [offset for offset, _ in prepared.others]
        all_starts = np.concatenate([starts, *map(add, (s for s, _ in other_columns), offsets)])
        all_ends = np.concatenate([ends, *map(add, (e for _, e in other_columns), offsets)])
        # Disjoint characters, so no start is shared: sorting the starts orders both columns.
        order = np.argsort(all_starts, kind="stable")
        return all_starts[order], all_ends[order]
