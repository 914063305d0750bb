"""The model tokenizer on two threads: a speed path, with exactly the tokens of one thread.

Measured (benchmarks/NOTES.md, third round): the Rust tokenizer's ``encode_batch``
releases the GIL (two threads on the same blocks: 0.38 -> 0.19-0.20 s), so a
text's token index on 1 MB takes 0.49 -> 0.27 s wall on two cores (CPU unchanged);
a batch is worth two threads from about 2 KB per thread (below).

The plain rule it must equal: one ``encode_batch`` of all the texts on the calling
thread (tests/test_parallel_tokenizer.py holds the two equal, in order, from any
number of callers). The Rust library's own thread pool (``TOKENIZERS_PARALLELISM``)
stays off: it is not fork-safe.
"""

from __future__ import annotations

import os
import queue
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

from core.runtime.forking import CORES

_T = TypeVar("_T")

# Threads a large batch is encoded on: two at most (the gain measured on two cores; more threads
# would compete with the app's own and with the other sessions').
WORKERS = max(1, min(2, CORES))
# A batch goes to several threads only with at least this many characters per thread. Measured
# (one thread -> two): 1 KB 0.48 -> 0.54 ms, 2 KB 0.85 -> 0.76 ms, 4 KB 1.7 -> 1.3 ms, 8 KB 3.3 -> 2.1 ms.
PARALLEL_MIN_CHARS = 2048
_INSIDE = threading.local()
# Set by use_one_thread(): this process is one of a pool's workers, which already fill every core.
_ONE_THREAD = False


def use_one_thread() -> None:
    """From now on, this process (and its forks) encodes on the calling thread only; the tokens are the same.

    For a batch worker (``core.batch``): the pool runs one worker per core, so a second
    encoding thread would only take time from a sibling worker (one worker used ~1.3
    cores). The app keeps its two threads.
    """
    global _ONE_THREAD
    _ONE_THREAD = True


def parallel_workers(chars: int) -> int:
    """How many threads a batch of ``chars`` characters is worth (1 inside :func:`in_parallel`'s tasks)."""
    if _ONE_THREAD or getattr(_INSIDE, "task", False):
        return 1
    return max(1, min(WORKERS, chars // PARALLEL_MIN_CHARS))


def in_parts(texts: Sequence[str], work: Callable[[list[str]], list[_T]]) -> list[_T]:
    """``work`` of consecutive parts of ``texts``, joined in order; a large batch's parts run on parallel threads.

    A part is worked on by one thread from start to finish, so the Python in
    ``work`` overlaps the other part's encoding.
    """
    if not texts:
        return []
    chunks = parts(list(texts), parallel_workers(sum(map(len, texts))))
    return [result for done in in_parallel([partial(work, part) for part in chunks]) for result in done]


def in_parallel(tasks: Sequence[Callable[[], _T]]) -> list[_T]:
    """Each task's result, in order, the tasks running at once on short-lived threads (the first on this one).

    Worth it only for work that releases the GIL (the Rust tokenizer's batch
    calls). Every thread is joined before this returns, so none outlives the
    call (nothing is left running for a ``fork``); a task's exception is
    raised here. Tasks run within a task run one after another: work already
    spread over the cores is not spread again.
    """
    if len(tasks) <= 1 or _ONE_THREAD or getattr(_INSIDE, "task", False):
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


def parts(texts: list[str], count: int) -> list[list[str]]:
    """``texts`` in at most ``count`` consecutive, non-empty parts of about equal characters."""
    count = min(count, len(texts))
    if count <= 1:
        return [texts]
    total = sum(map(len, texts))
    found, first, running = [], 0, 0
    for index, text in enumerate(texts[:-1]):
        running += len(text)
        if running * count >= total * (len(found) + 1):
            found.append(texts[first : index + 1])
            first = index + 1
            if len(found) == count - 1:
                break
    found.append(texts[first:])
    return found


class CopyPool:
    """``count`` copies of one Rust tokenizer, each lent to one thread at a time; a borrower waits for a free one.

    Never one copy on two threads: the binding raises "Already borrowed" when one
    thread changes a tokenizer's settings while another encodes with it. One copy
    per worker thread, made with the tokenizer (not inside a timed call): ~17 ms
    and ~7 MB each. More would not encode faster than the cores allow, so several
    sessions encoding at once share these. A process forked while copies were lent
    starts with all of them free (the borrowing threads do not exist in the child).
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


_POOLS: weakref.WeakSet[CopyPool] = weakref.WeakSet()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: [pool._reset() for pool in list(_POOLS)])
