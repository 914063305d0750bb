"""Which paths can be read as a document: regular files only, never a pipe, a device, a socket or a broken link.

Reading a FIFO waits for a writer that may never come (``chunkscope split`` on one
blocked forever), ``/dev/zero`` never ends and a socket cannot be read at all, so
these are refused by their kind before anything opens them. A symbolic link counts
as what it points to; one whose target is missing (or that loops) is named as such,
where ``is_file()`` would only have said False and a folder walk would have skipped it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from core.errors import LoadError
from core.limits import DEFAULT_LIMITS, Limits, check_upload_size


def special_file_problem(path: str | os.PathLike[str]) -> str:
    """Why ``path`` cannot be read as a document, or "" when it is a regular file or not there at all.

    A missing path (not a link) and a directory are left to the caller, who says
    "file not found" or walks the folder.
    """
    return file_problem_and_size(path)[0]


def file_problem_and_size(path: str | os.PathLike[str]) -> tuple[str, int]:
    """:func:`special_file_problem` and the file's size in bytes (0 when it has a problem or cannot be read),
    from one ``stat``: a batch lists every file once, and its plan and progress need the sizes."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return f"is a symbolic link to {_target(path)}, which does not exist", 0
        return "", 0
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link that points back to itself (a loop)", 0
        return "", 0  # a permission problem and the like: the read says it in its own words
    mode = found.st_mode
    if stat.S_ISREG(mode):
        return "", found.st_size
    if stat.S_ISDIR(mode):
        return "", 0
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a regular file: reading it could wait forever", 0
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file", 0
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file", 0
    return "is not a regular file", 0


def refuse_special_file(path: str | os.PathLike[str]) -> None:
    """Raise a :class:`~core.errors.LoadError` naming the file when it is a pipe, a device, a socket or a broken link."""
    problem = special_file_problem(path)
    if problem:
        raise LoadError(Path(path).name, problem)


def _target(path: str | os.PathLike[str]) -> str:
    try:
        return repr(os.readlink(path))
    except OSError:
        return "a missing file"


def folder_files(folder: Path, supported: set[str]) -> list[Path]:
    """The files under ``folder`` with a ``supported`` suffix, sorted by path: what loading a folder reads."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in supported)


def read_file(path: Path, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """The bytes of the regular file at ``path``, refused by kind or size before anything is read."""
    refuse_special_file(path)  # a FIFO would block the read below forever; a device may never end
    try:
        check_upload_size(path.stat().st_size, path.name, limits)
        return path.read_bytes()
    except FileNotFoundError:
        raise LoadError(path.name, "file not found") from None
    except OSError as exc:
        raise LoadError(path.name, f"cannot be read ({exc.strerror or exc})") from None
