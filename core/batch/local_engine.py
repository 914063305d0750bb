"""The local engine: :func:`core.batch.work.process_file` on a process pool over this machine's cores.

Ctrl-C and SIGTERM belong to the driver: workers ignore SIGINT, take SIGTERM's default (the
driver's pool terminates them with it) and are terminated when it stops. A worker never outlives
its driver, whatever kills the driver (``kill -9`` included): on Linux the kernel kills it when the
driver dies (``PR_SET_PDEATHSIG``), elsewhere a watchdog thread sees its parent change and exits.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from core.batch.work import process_file, use_one_core
from core.runtime.parallel import ignore_sigint, pool_context, stop_pool, submit_blocked

# How often a worker's watchdog looks for its driver (where the kernel cannot be asked to kill it).
WATCHDOG_SECONDS = 1.0
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _start_worker(driver: int | None = None) -> None:
    import signal

    # A forked worker inherits the driver's SIGTERM handler (which stops a run): the pool's terminate() must kill it.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    ignore_sigint()
    if driver is not None:
        die_with(driver)
    use_one_core()


def die_with(driver: int) -> None:
    """End this process when ``driver`` (its parent) dies, however it dies.

    Linux: the kernel sends SIGKILL when the parent exits (``prctl(PR_SET_PDEATHSIG)``); a
    parent that died before the call is caught by comparing ``getppid()``. Elsewhere, and as
    a second guard, a daemon thread checks ``getppid()`` every :data:`WATCHDOG_SECONDS`.
    """
    import signal
    import sys
    import threading
    import time

    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl in this libc: the watchdog alone
    if os.getppid() != driver:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == driver:
            time.sleep(WATCHDOG_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="driver-watchdog", daemon=True).start()


# Files in flight per worker. Results come back in input order, so a slow file at the head holds the finished
# ones behind it: 64 a worker keep the others busy meanwhile (16 left one of two workers idle ~1 s in 15 on our
# corpus, 4 about 2 s). A byte budget bounds memory where files are large: beyond the first two files a worker,
# no more is sent while the files in flight hold this many input bytes a worker (a result is a few times that).
FILES_PER_WORKER = 64
BYTES_PER_WORKER = 32 * 1024 * 1024


def run_local(tasks: Iterable[dict[str, Any]], config: str, embed: str, workers: int) -> Iterator[dict[str, Any]]:
    """``process_file`` of each task on a process pool, yielded in task order, a bounded window in flight.

    A worker that dies (a crash or the OOM killer in a parser) breaks the pool and
    every task in flight with it. Those tasks then run again one at a time, each
    in a pool of its own, so the file that kills its worker is known for sure: it
    fails with that reason, the others get their nodes, and the run goes on.
    """
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    context = pool_context()

    def new_pool(size: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=size, mp_context=context, initializer=_start_worker, initargs=(os.getpid(),)
        )

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
    pending: deque[list[Any]] = deque()  # [task, future, result once known, input bytes]
    in_flight = 0
    iterator = iter(tasks)
    try:
        while True:
            while len(pending) < FILES_PER_WORKER * workers and (
                len(pending) < 2 * workers or in_flight < BYTES_PER_WORKER * workers
            ):
                task = next(iterator, None)
                if task is None:
                    break
                size = _size(task["path"])
                in_flight += size
                pending.append([task, submit_blocked(pool, process_file, task, config, embed), None, size])
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
            done = pending.popleft()
            in_flight -= done[3]
            yield done[2]
    finally:
        # Not future.cancel(): the executor's own thread then fails setting the error of a cancelled future.
        stop_pool(pool)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # the worker reports why it cannot read the file


def _finished(future: Any) -> dict[str, Any] | None:
    """A future's result if it completed before its pool broke, else None."""
    if future.done() and not future.cancelled() and future.exception() is None:
        return future.result()
    return None
