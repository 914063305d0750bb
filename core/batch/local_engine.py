"""The local engine: :func:`core.batch.shards.process_shard` on a process pool over this machine's cores.

Each worker runs a shard's files and writes its part files (:mod:`core.batch.shards`).

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

from core.batch.shards import process_shard, recovered
from core.batch.work import process_file, serve_alone, use_one_core
from core.runtime.parallel import ignore_sigint, pool_context, stop_pool, submit_blocked

# How often a worker's watchdog looks for its driver (where the kernel cannot be asked to kill it).
WATCHDOG_SECONDS = 1.0
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _start_worker(driver: int | None = None) -> None:
    import gc
    import signal

    # A forked worker inherits the driver's SIGTERM handler (which stops a run): the pool's terminate() must kill it.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    ignore_sigint()
    if driver is not None:
        die_with(driver)
    use_one_core()
    serve_alone()
    # The driver's objects, inherited by fork, out of the collector's sight: a full collection would write to
    # every one of them and so copy each page they sit on into this worker.
    gc.freeze()


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


# Shards in flight per worker. Results come back in shard order, so a slow shard at the head holds the
# finished ones behind it: four a worker keep the others busy meanwhile. A record is a few lines of text a
# file (the worker wrote the nodes); only where the driver writes (an output the workers cannot reach) does
# a result hold nodes, so beyond two shards a worker no more is sent while this much input is in flight.
SHARDS_PER_WORKER = 4
BYTES_PER_WORKER = 64 * 1024 * 1024


def run_local(shards: Iterable[dict[str, Any]], spec: dict[str, Any], workers: int) -> Iterator[dict[str, Any]]:
    """``process_shard`` of each shard on a process pool, yielded in shard order, a bounded window in flight.

    A worker that dies (a crash or the OOM killer in a parser) breaks the pool and every
    shard in flight with it. Each of those shards then runs again in a pool of its own; one
    that breaks that pool too has its files run one at a time, each in a pool of its own, so
    the file that kills its worker is known for sure: it fails with that reason, the others
    get their nodes (the driver writes that shard), and the run goes on.
    """
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    context = pool_context()

    def new_pool(size: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=size, mp_context=context, initializer=_start_worker, initargs=(os.getpid(),)
        )

    def alone(function: Any, *args: Any) -> Any:
        """``function(*args)`` in a pool of its own; None when its worker died."""
        single = new_pool(1)
        try:
            return submit_blocked(single, function, *args).result()
        except BrokenProcessPool:
            return None
        finally:
            stop_pool(single)

    def recover(shard: dict[str, Any]) -> dict[str, Any]:
        record = alone(process_shard, shard, spec)
        if record is not None:
            return record
        died = "the worker process died while reading this file (a crash, or out of memory)"
        config, embed = spec["config"], spec["embed"]
        results = [
            alone(process_file, task, config, embed) or process_file({**task, "problem": died}, config)
            for task in shard["tasks"]
        ]
        return recovered(shard, results)

    pool = new_pool(workers)
    pending: deque[list[Any]] = deque()  # [shard, future, record once known]
    in_flight = 0
    iterator = iter(shards)
    try:
        while True:
            while len(pending) < SHARDS_PER_WORKER * workers and (
                len(pending) < 2 * workers or in_flight < BYTES_PER_WORKER * workers
            ):
                shard = next(iterator, None)
                if shard is None:
                    break
                in_flight += shard["bytes"]
                pending.append([shard, submit_blocked(pool, process_shard, shard, spec), None])
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
                            entry[2] = _finished(entry[1]) or recover(entry[0])
                    pool = new_pool(workers)
            done = pending.popleft()
            in_flight -= done[0]["bytes"]
            yield done[2]
    finally:
        # Not future.cancel(): the executor's own thread then fails setting the error of a cancelled future.
        stop_pool(pool)


def _finished(future: Any) -> dict[str, Any] | None:
    """A future's result if it completed before its pool broke, else None."""
    if future.done() and not future.cancelled() and future.exception() is None:
        return future.result()
    return None
