"""Where independent pieces of work run: an ordered map over engines, and the pool and Ray plumbing batch shares.

``ordered_map(fn, items, shared, engine)`` yields ``fn(item, shared)`` for every
item, **in the items' order** whatever finished first, so a caller's output does
not depend on the engine:

- ``local`` (the default): in this process, one after another; nothing is pickled;
- ``processes``: a pool of ``workers`` processes on this machine; ``shared`` goes
  to each worker once (inherited when the pool forks), an item per task;
- ``ray``: a ``ray.remote`` task per item; ``shared`` is put in the object store
  once; a Ray is started for the run (``num_cpus=workers``) unless one is running
  in this process, or ``address`` (else ``RAY_ADDRESS``, as ``ray job submit`` sets it)
  joins a cluster, without asking it for resources.

Outside ``local``, ``fn`` is found by name in the worker (a module-level
function), and items, ``shared`` and results are pickled: plain values. The
first error in input order is raised as the worker raised it (not wrapped by
Ray), and the work still queued is cancelled.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from core.errors import ConfigError
from core.runtime.forking import CORES

ENGINES = ("local", "processes", "ray")
__all__ = ["ENGINES", "Engine", "ordered_map", "ray_address", "ray_session"]
_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


@dataclass(frozen=True)
class Engine:
    """Where :func:`ordered_map` runs: its kind, how many workers (default: the cores), a Ray cluster to join."""

    kind: str = "local"
    workers: int | None = None
    address: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ENGINES:
            raise ConfigError(f"--engine must be one of {', '.join(ENGINES)}, not {self.kind!r}")
        if self.workers is not None and self.workers < 1:
            raise ConfigError("--workers must be at least 1")
        if self.kind == "local" and self.workers is not None:
            raise ConfigError("--workers needs --engine processes or ray (local runs in this process)")
        if self.address and self.kind != "ray":
            raise ConfigError("--ray-address needs --engine ray")
        if self.kind == "ray" and importlib.util.find_spec("ray") is None:
            raise ConfigError("--engine ray: Ray is not installed; pip install 'ray[data]'")

    @property
    def size(self) -> int:
        """The worker count: as given, else this machine's cores."""
        return self.workers or CORES

    def describe(self) -> str:
        if self.kind == "local":
            return "this process"
        if self.kind == "ray" and ray_address(self.address):
            return f"the Ray cluster at {ray_address(self.address)}"
        return f"{self.size} {'Ray CPUs' if self.kind == 'ray' else 'processes'}"


def ordered_map(
    fn: Callable[[_Item, Any], _Result], items: Iterable[_Item], shared: Any, engine: Engine | None = None
) -> Iterator[_Result]:
    """``fn(item, shared)`` for each item, yielded in the items' order, run where ``engine`` says."""
    engine = engine or Engine()
    if engine.kind == "local":
        return (fn(item, shared) for item in items)
    if engine.kind == "processes":
        return _processes(fn, items, shared, engine.size)
    return _ray(fn, list(items), shared, engine.size, engine.address)


# -- a process pool ------------------------------------------------------------------------

_WORKER_SHARED: Any = None  # in a pool worker: the run's shared value, set once by _start_worker


def pool_context() -> Any:
    """fork starts a worker in milliseconds; with other threads running (a server), spawn is the safe start."""
    method = "fork" if hasattr(os, "fork") and threading.active_count() == 1 else "spawn"
    return multiprocessing.get_context(method)


def ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group; the driver alone decides what stops (and terminates workers).
    # A worker starts with SIGINT blocked (see submit_blocked), so a Ctrl-C before this line cannot reach it either.
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def submit_blocked(pool: Any, *args: Any) -> Any:
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


def stop_pool(pool: Any) -> None:
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
    # A worker terminated while it was sending a result leaves half a message in the result pipe, and the
    # executor's thread waits in recv() for the rest; at exit the interpreter joins that thread and hangs.
    # Closing our copy of the pipe's write end (the workers' copies died with them) ends the wait with EOF.
    result_queue = getattr(pool, "_result_queue", None)
    writer = getattr(result_queue, "_writer", None)
    if writer is not None and not any(process.is_alive() for process in processes):
        writer.close()
    call_queue = getattr(pool, "_call_queue", None)
    if call_queue is not None:
        call_queue.cancel_join_thread()
    pool.shutdown(wait=False)


def _start_worker(shared: Any) -> None:
    global _WORKER_SHARED
    ignore_sigint()
    _WORKER_SHARED = shared


def _in_worker(fn: Callable[[Any, Any], Any], item: Any) -> Any:
    return fn(item, _WORKER_SHARED)


def _processes(fn: Callable[[Any, Any], Any], items: Iterable[Any], shared: Any, workers: int) -> Iterator[Any]:
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=pool_context(), initializer=_start_worker, initargs=(shared,)
    )
    pending: deque[Any] = deque()
    iterator = iter(items)
    finished = False
    try:
        while True:
            # Two tasks per worker in flight: none waits for work, and few results wait for their turn.
            for item in iterator:
                pending.append(submit_blocked(pool, _in_worker, fn, item))
                if len(pending) >= 2 * workers:
                    break
            if not pending:
                finished = True
                return
            yield pending.popleft().result()
    finally:
        if finished:
            pool.shutdown()
        else:  # an error, a Ctrl-C or a caller that stopped reading: the work in progress is not waited for
            stop_pool(pool)


# -- Ray -------------------------------------------------------------------------------------


@contextmanager
def ray_session(workers: int | None, address: str | None = None) -> Iterator[Any]:
    """The ``ray`` module, initialized: the Ray already running in this process, else one connected for the block.

    Joins ``address``, else ``RAY_ADDRESS`` (what ``ray job submit`` sets for its entrypoint), as a
    guest: no ``num_cpus`` nor any resource is passed, the cluster has its own. With neither, a
    local Ray is started with ``workers`` CPUs (default: the cores). A Ray connected here is shut
    down when the block ends (for a cluster, that disconnects; the cluster keeps running).
    """
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"--engine ray: Ray is not installed ({exc}); pip install 'ray[data]'") from None
    started = False
    if not ray.is_initialized():
        cluster = ray_address(address)
        if cluster:
            try:
                ray.init(address=cluster, logging_level="WARNING", log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(f"--engine ray: cannot join the Ray cluster at {cluster!r}: {_one_line(exc)}") from None
        else:
            ray.init(num_cpus=workers or CORES, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
        started = True
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def ray_address(address: str | None = None) -> str | None:
    """The cluster to join: ``address`` as given, else ``RAY_ADDRESS`` from the environment, else None (start one)."""
    return address or os.environ.get("RAY_ADDRESS") or None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


def _ray_call(fn: Callable[[Any, Any], Any], item: Any, shared: Any) -> Any:
    return fn(item, shared)


def _ray(
    fn: Callable[[Any, Any], Any], items: list[Any], shared: Any, workers: int, address: str | None
) -> Iterator[Any]:
    with ray_session(workers, address) as ray:
        from ray.exceptions import RayTaskError

        shared_ref = ray.put(shared)  # once in the object store; each task reads it from there
        # No retries: a task that failed fails the same way again, and its error is the caller's to see.
        task = ray.remote(num_cpus=1, max_retries=0)(_ray_call)
        futures = [task.remote(fn, item, shared_ref) for item in items]
        done = 0
        try:
            for future in futures:
                try:
                    result = ray.get(future)
                except RayTaskError as exc:
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, Exception):
                        raise cause from None
                    raise
                done += 1
                yield result
        finally:
            for future in futures[done:]:
                ray.cancel(future)
