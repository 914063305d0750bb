"""The local engine: :func:`core.batch.work.process_file` on a process pool over this machine's cores.

Ctrl-C belongs to the driver: workers ignore SIGINT and are terminated when it stops.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from core.batch.work import process_file


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group; the driver alone decides what stops (and terminates workers).
    # A worker starts with SIGINT blocked (see _submit), so a Ctrl-C before this line cannot reach it either.
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _submit(pool: Any, *args: Any) -> Any:
    """``pool.submit`` with SIGINT blocked meanwhile: a worker process it starts inherits the block.

    A Ctrl-C that comes then is delivered to the driver as soon as the block ends.
    """
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        return pool.submit(*args)
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return pool.submit(*args)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def run_local(
    tasks: Iterable[dict[str, Any]], config: str, embed: str, workers: int, window: int
) -> Iterator[dict[str, Any]]:
    """``process_file`` of each task on a process pool, yielded in task order, ``window`` at most in flight.

    A worker that dies (a crash or the OOM killer in a parser) breaks the pool and
    every task in flight with it. Those tasks then run again one at a time, each
    in a pool of its own, so the file that kills its worker is known for sure: it
    fails with that reason, the others get their nodes, and the run goes on.
    """
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # fork starts a worker in milliseconds; with other threads running (a server), spawn is the safe start.
    method = "fork" if hasattr(os, "fork") and threading.active_count() == 1 else "spawn"
    context = multiprocessing.get_context(method)

    def new_pool(size: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=size, mp_context=context, initializer=_ignore_sigint)

    def alone(task: dict[str, Any]) -> dict[str, Any]:
        single = new_pool(1)
        try:
            return _submit(single, process_file, task, config, embed).result()
        except BrokenProcessPool:
            died = "the worker process died while reading this file (a crash, or out of memory)"
            return process_file({**task, "problem": died}, config)
        finally:
            _stop(single)

    pool = new_pool(workers)
    pending: deque[list[Any]] = deque()  # [task, future, result once known]
    iterator = iter(tasks)
    try:
        while True:
            while len(pending) < window:
                task = next(iterator, None)
                if task is None:
                    break
                pending.append([task, _submit(pool, process_file, task, config, embed), None])
            if not pending:
                return
            head = pending[0]
            if head[2] is None:
                try:
                    head[2] = head[1].result()
                except BrokenProcessPool:
                    _stop(pool)
                    for entry in pending:
                        if entry[2] is None:
                            entry[2] = _finished(entry[1]) or alone(entry[0])
                    pool = new_pool(workers)
            yield pending.popleft()[2]
    finally:
        # Not future.cancel(): the executor's own thread then fails setting the error of a cancelled future.
        _stop(pool)


def _finished(future: Any) -> dict[str, Any] | None:
    """A future's result if it completed before its pool broke, else None."""
    if future.done() and not future.cancelled() and future.exception() is None:
        return future.result()
    return None


def _stop(pool: Any) -> None:
    """Shut a pool down without waiting for work in progress: its processes are terminated first.

    The executor keeps its processes and its task queue private; reaching them is the only way to
    stop a running task (``shutdown`` waits for it), and a queue whose reader is gone must not be
    joined at exit, or the interpreter waits forever.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
    call_queue = getattr(pool, "_call_queue", None)
    if call_queue is not None:
        call_queue.cancel_join_thread()
    pool.shutdown(wait=False)
