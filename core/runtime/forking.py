"""Pure-Python work on a second core: a forked child computes a value while this process goes on.

Threads do not help pure-Python work (the GIL), and a process pool would pickle
its inputs and import everything again. A forked child starts with this
process's memory as it is (a parsed PDF included), computes one value, sends it
back pickled through a pipe and exits. It is for work whose result the caller
could compute itself: whenever the child cannot deliver (it raised, crashed, or
fork is unavailable) :meth:`Forked.result` is ``None`` and the caller does the
work in-process, so the outcome, errors included, is the same as without a
child.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from typing import Generic, TypeVar

_T = TypeVar("_T")

# The cores this process may run on (its affinity); on one core a child only adds a fork.
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class Forked(Generic[_T]):
    """A child process computing ``work()``; :meth:`result` waits for it."""

    def __init__(self, work: Callable[[], _T]) -> None:
        self._read, write = os.pipe()
        try:
            self._pid = os.fork()
        except OSError:
            os.close(self._read)
            os.close(write)
            raise
        if self._pid == 0:  # the child: compute, send, and leave without running the parent's exit handlers
            os.close(self._read)
            status = 1
            try:
                payload = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(write)
        self._done = False

    def cancel(self) -> None:
        """Stop the child and reap it (when the caller no longer needs its value)."""
        if self._done:
            return
        self._done = True
        os.close(self._read)
        try:
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        except (ProcessLookupError, ChildProcessError):  # already gone, or reaped by a SIGCHLD handler
            pass

    def result(self, timeout: float | None = None) -> _T | None:
        """The child's value, or ``None`` if it did not deliver one within ``timeout`` seconds. Call once.

        A late child is killed. The deadline is the safety net for forking inside a
        threaded server (Streamlit): the child holds only the forking thread, and a
        lock another thread held at the fork would stay locked in it forever. The
        work here takes no such lock (tests/test_forking.py loads long PDFs while
        other threads log, import and tokenize), but should one ever be taken the
        caller waits ``timeout`` and does the work itself instead of hanging.
        """
        if self._done:
            raise RuntimeError("Forked.result() was already called")
        # Read before waiting: a child blocked on a full pipe would never exit.
        payload = self._read_all(timeout)
        if payload is None:
            self.cancel()
            return None
        self._done = True
        try:
            _, status = os.waitpid(self._pid, 0)
        except ChildProcessError:  # reaped by someone else's SIGCHLD handler: a whole payload still counts
            status = 0
        if status != 0 or not payload:
            return None
        try:
            return pickle.loads(payload)
        except Exception:  # a truncated payload: the caller does the work itself
            return None

    def _read_all(self, timeout: float | None) -> bytes | None:
        """Everything the child writes until it closes the pipe; ``None`` when the deadline passes first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks: list[bytes] = []
        while True:
            if deadline is not None:
                ready, _, _ = select.select([self._read], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    return None
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                os.close(self._read)
                return b"".join(chunks)
            chunks.append(chunk)


def fork_available() -> bool:
    return hasattr(os, "fork") and CORES > 1


def start_forked(work: Callable[[], _T]) -> Forked[_T] | None:
    """``work`` started in a forked child, or ``None`` where that cannot help (no fork, one core)."""
    if not fork_available():
        return None
    try:
        return Forked(work)
    except OSError:  # no process or pipe to be had: the caller does the work itself
        return None
