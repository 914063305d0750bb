"""The local engine: :func:`core.batch.work.process_file` on a process pool over this machine's cores.

Ctrl-C belongs to the driver: workers ignore SIGINT and are terminated when it stops.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from core.batch.work import process_file, use_one_core
from core.parallel import ignore_sigint, pool_context, stop_pool, submit_blocked


def _start_worker() -> None:
    ignore_sigint()
    use_one_core()


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

    context = pool_context()

    def new_pool(size: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=size, mp_context=context, initializer=_start_worker)

    def alone(task: dict[str, Any]) -> dict[str, Any]:
        single = new_pool(1)
        try:
            return submit_blocked(single, process_file, task, config, embed).result()
        except BrokenProcessPool:
            died = "the worker process died while reading this file (a crash, or out of memory)"
            return process_file({**task, "problem": died}, config)
        finally:
            stop_pool(single)

    pool = new_pool(workers)
    pending: deque[list[Any]] = deque()  # [task, future, result once known]
    iterator = iter(tasks)
    try:
        while True:
            while len(pending) < window:
                task = next(iterator, None)
                if task is None:
                    break
                pending.append([task, submit_blocked(pool, process_file, task, config, embed), None])
            if not pending:
                return
            head = pending[0]
            if head[2] is None:
                try:
                    head[2] = head[1].result()
                except BrokenProcessPool:
                    stop_pool(pool)
                    for entry in pending:
                        if entry[2] is None:
                            entry[2] = _finished(entry[1]) or alone(entry[0])
                    pool = new_pool(workers)
            yield pending.popleft()[2]
    finally:
        # Not future.cancel(): the executor's own thread then fails setting the error of a cancelled future.
        stop_pool(pool)


def _finished(future: Any) -> dict[str, Any] | None:
    """A future's result if it completed before its pool broke, else None."""
    if future.done() and not future.cancelled() and future.exception() is None:
        return future.result()
    return None
