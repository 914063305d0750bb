"""Work on untrusted input, run where it can be stopped: a forked child under a deadline and a memory ceiling.

Why a child and not a thread: a regular expression inside a framework splitter
(Python's ``re``) or a parser written in C holds the GIL for as long as it runs,
so no other thread of this process runs meanwhile (the Streamlit server's event
loop included), and no thread can be interrupted. A forked child can be stopped:
this process waits for it in ``select``, with the GIL released, and at the
deadline kills it (with its own children: it leads a process group). The child's
address space is capped (``RLIMIT_AS``) at what it inherited plus the ceiling,
so work that balloons fails in the child with ``MemoryError`` instead of pushing
the server into swap.

The child's value comes back pickled through a pipe; an exception it raised (a
LoadError, a ConfigError) is raised again here, unchanged, so callers see the
same outcome as in-process. Where there is no ``fork`` (Windows) the work runs
in-process, unbounded; without ``/proc`` (macOS) there is a deadline but no ceiling.

What it costs (measured on the shared 2-core machine, in a process the app's size,
~370 MB): an empty child 5-10 ms when the machine is quiet, up to 70 ms under a load
of 9; a LangChain split of a 16 KB document 0.1 -> 16 ms, LlamaIndex's 17 -> 34 ms,
loading a small PDF or DOCX 50 -> 100 ms. Hence :mod:`core.documents` sends to a
child only the work that needs one (framework engines, user regexes, large or
unpacking inputs) and keeps ChunkScope's own splitters on small texts in-process.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import struct
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from core.errors import WorkLimitError, WorkMemoryError, WorkTimeoutError

_T = TypeVar("_T")
_X = TypeVar("_X")
# Each result is a frame: its pickle's length (8 bytes), then the pickle.
_HEADER = struct.Struct(">Q")

MB = 1_000_000
# What a child sends instead of a MemoryError (which carries no message worth keeping).
_OUT_OF_MEMORY = "out of memory"
# How often run_bounded's ``poll`` is called while a child works (a progress bar's pace).
POLL_SECONDS = 0.2
# True inside a bounded child: work it bounds again runs in-process, under the bound already in force.
_IN_CHILD = False


def bounding_available() -> bool:
    """Whether work can run in a child that is stopped at a deadline (a platform with ``fork``)."""
    return hasattr(os, "fork") and not _IN_CHILD


def _deadline_passed(file_name: str, what: str, seconds: float, seconds_name: str) -> WorkTimeoutError:
    """The error of work stopped at its deadline, a child's or an alarm's: the same sentence."""
    limit = f" ({seconds_name})" if seconds_name else ""
    return WorkTimeoutError(file_name, f"{what} took longer than the {seconds:g} s limit{limit} and was stopped")


class _AlarmRang(BaseException):
    """Raised by the SIGALRM handler of :func:`run_with_alarm` (a BaseException: no ``except Exception`` eats it)."""


def run_with_alarm(work: Callable[[], _T], *, file_name: str, what: str, seconds: float, seconds_name: str = "") -> _T:
    """``work()`` here, stopped by SIGALRM after ``seconds`` (:class:`WorkTimeoutError`, as a child's deadline says it).

    Only for pure-Python work in the main thread of a process that serves nothing else (a batch worker): the
    signal's handler runs between bytecodes, so Python code stops within milliseconds, but C holding the GIL
    does not, and no memory ceiling applies (a worker the kernel kills is replaced, its file failed, by the
    engine's recovery, local or Ray). It spares the fork a child costs (~12 ms in a worker) for work that needs no more.
    It holds the process's SIGALRM handler and real-time timer while it runs.
    """
    def rang(signum: int, frame: object) -> None:
        raise _AlarmRang

    previous = signal.signal(signal.SIGALRM, rang)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return work()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _AlarmRang:
        raise _deadline_passed(file_name, what, seconds, seconds_name) from None
    finally:
        signal.signal(signal.SIGALRM, previous)


def run_bounded(
    work: Callable[[], _T],
    *,
    file_name: str,
    what: str,
    seconds: float,
    memory_mb: int | None,
    seconds_name: str = "",
    poll: Callable[[], object] | None = None,
) -> _T:
    """``work()``, computed in a forked child that is stopped after ``seconds`` or beyond ``memory_mb`` more memory.

    ``file_name`` and ``what`` ("splitting with langchain.recursive") make the
    error's sentence; ``seconds_name`` names the limit a user would raise.
    Raises :class:`WorkTimeoutError` at the deadline, :class:`WorkMemoryError`
    when the child ran out of memory, :class:`WorkLimitError` when it died
    without a word, and otherwise whatever ``work`` raised. ``poll`` is called here every
    :data:`POLL_SECONDS` while the child works (a progress bar's update; what it raises stops the child).
    """
    return map_bounded(
        lambda _: work(),
        [None],
        file_names=[file_name],
        what=what,
        seconds=seconds,
        memory_mb=memory_mb,
        seconds_name=seconds_name,
        poll=poll,
    )[0]


def map_bounded(
    work: Callable[[_X], _T],
    items: Sequence[_X],
    *,
    file_names: Sequence[str],
    what: str,
    seconds: float,
    memory_mb: int | None,
    seconds_name: str = "",
    poll: Callable[[], object] | None = None,
) -> list[_T]:
    """``[work(item) for item in items]`` in one forked child, each item within ``seconds`` (its file named if not).

    One child for all the items (a JSON file's thousand records cost one fork, not
    a thousand); each result comes back as soon as it is computed, and the clock
    restarts for the next item. The memory ceiling holds for the child as a whole.
    """
    if len(file_names) != len(items):
        raise ValueError("map_bounded needs one file name per item")
    if not bounding_available():
        return [work(item) for item in items]
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        raise
    if pid == 0:  # the child never returns from here
        os.close(read_fd)
        _child(work, items, memory_mb, write_fd)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)  # also done by the child: whichever runs first, the group exists before a kill
    except OSError:
        pass
    results: list[_T] = []
    try:
        for file_name in file_names:
            frame = _read_frame(read_fd, time.monotonic() + seconds, poll)
            if frame is None:
                raise _deadline_passed(file_name, what, seconds, seconds_name)
            if not frame:
                status = _kill(pid)
                raise WorkLimitError(
                    file_name, f"{what} stopped abruptly ({_how_it_ended(status)}){_ceiling(memory_mb)}"
                )
            delivered, value = pickle.loads(frame)
            if delivered:
                results.append(value)
            elif value == _OUT_OF_MEMORY:
                raise WorkMemoryError(
                    file_name,
                    f"{what} needed more than the {memory_mb or 0:,} MB memory ceiling (work_memory_mb) and was stopped",
                )
            else:
                raise value
    except BaseException:  # a limit, the work's own error, or Ctrl-C while waiting: the child must not outlive it
        _kill(pid)
        raise
    finally:
        os.close(read_fd)
    _reap(pid)
    return results


def _child(work: Callable[[_X], object], items: Sequence[_X], memory_mb: int | None, write_fd: int) -> None:
    """Send one frame per item, ``(True, value)`` or ``(False, exception)``, stopping at the first exception;
    leave without running the parent's exit handlers."""
    global _IN_CHILD
    _IN_CHILD = True
    # What the child inherited is never scanned by its collector: a full collection walked the whole server's
    # heap (~220 ms of a 1 MB split) and wrote to every page it walked, so the kernel copied them all.
    gc.freeze()
    status = 1
    try:
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        if memory_mb:
            _cap_memory(memory_mb)
        with os.fdopen(write_fd, "wb") as pipe:
            for item in items:
                try:
                    outcome: tuple[bool, object] = (True, work(item))
                except MemoryError:
                    outcome = (False, _OUT_OF_MEMORY)
                except BaseException as exc:  # raised again in the parent
                    outcome = (False, _portable(exc))
                failed = not outcome[0]
                try:
                    payload = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
                except MemoryError:
                    payload, failed = pickle.dumps((False, _OUT_OF_MEMORY)), True
                except Exception as exc:  # a value that cannot be pickled: a bug, said as one
                    payload, failed = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}"))), True
                del outcome
                pipe.write(_HEADER.pack(len(payload)))
                pipe.write(payload)
                pipe.flush()
                if failed:
                    break
        status = 0
    finally:
        os._exit(status)


def _read_frame(fd: int, deadline: float, poll: Callable[[], object] | None = None) -> bytes | None:
    """One frame's payload; ``b""`` when the writer closed the pipe first, ``None`` when ``deadline`` passed."""
    header = _read_exact(fd, _HEADER.size, deadline, poll)
    if not header:
        return header
    (size,) = _HEADER.unpack(header)
    return _read_exact(fd, size, deadline) if size else b""


def _read_exact(fd: int, size: int, deadline: float, poll: Callable[[], object] | None = None) -> bytes | None:
    chunks: list[bytes] = []
    wanted = size
    while wanted:
        # Waiting in select releases the GIL: the server's other threads run meanwhile.
        left = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], left if poll is None else min(left, POLL_SECONDS))
        if not ready and poll is not None and time.monotonic() < deadline:
            poll()
            continue
        if not ready:
            return None
        chunk = os.read(fd, min(wanted, 1 << 20))
        if not chunk:
            return b""
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling both ways, else a RuntimeError carrying its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _cap_memory(memory_mb: int) -> None:
    """Let this process's address space grow by at most ``memory_mb`` MB beyond its size now (Linux)."""
    import resource

    try:
        with open("/proc/self/statm") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):  # no /proc: a deadline, but no ceiling
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = size + memory_mb * MB
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _kill(pid: int) -> int:
    """Stop the child and its group; its wait status (a child already dead keeps how it died: a signal, an exit)."""
    for kill in (os.killpg, os.kill):  # the whole group (a PDF loader's own child too), else the child alone
        try:
            kill(pid, signal.SIGKILL)
            break
        except (ProcessLookupError, PermissionError):
            continue
    return _reap(pid)


def _reap(pid: int) -> int:
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:  # reaped by someone else's SIGCHLD handler
        return 0


def _how_it_ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"signal {signal.Signals(number).name}"
        except ValueError:
            return f"signal {number}"
    return f"exit status {os.WEXITSTATUS(status)}"


def _ceiling(memory_mb: int | None) -> str:
    return f"; it may have needed more than the {memory_mb:,} MB memory ceiling (work_memory_mb)" if memory_mb else ""
