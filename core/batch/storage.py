"""Where a batch's output lives: a local folder or any pyarrow filesystem (``s3://``, ``gs://``, ``file://``, ...).

``--out`` is a local path, or a URI that ``pyarrow.fs.FileSystem.from_uri`` takes
(credentials come from the environment, as pyarrow reads them); a caller may also
pass a ``pyarrow.fs.FileSystem`` and a path inside it (fsspec's through
``PyFileSystem(FSSpecHandler(...))``). The driver and the workers read and write through this class;
a local path through ``os``, so that a driver imports no pyarrow for it.

A file is written aside (``.NAME.tmp``) and moved into place, so a reader never
sees half of it. On a local disk the move is a rename; on object storage it is a
copy, and an object store has no append: the manifest is then rewritten whole at
each checkpoint (:class:`core.batch.manifest.Manifest`).

A write that fails (a read-only folder, a full disk, a file where a folder should
be) raises :class:`OutputWriteError`, one line naming the path and the errno, after
the temporary file it was writing is removed.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.errors import ChunkScopeError


class OutputWriteError(ChunkScopeError):
    """The batch output cannot be written or read: read-only, full, a file where a folder should be.

    One line: the path as the user named it, the system's reason and the errno's name
    (``cannot write out/report.html: No space left on device (ENOSPC)``).
    """

    def __init__(self, verb: str, path: str, exc: OSError) -> None:
        self.path = path
        self.errno = exc.errno
        if exc.errno:
            reason = f"{os.strerror(exc.errno)} ({errno.errorcode.get(exc.errno, exc.errno)})"
        else:
            reason = " ".join(str(exc).split()) or type(exc).__name__
        super().__init__(f"cannot {verb} {path}: {reason}")


class _OsFiles:
    """A local folder's files through ``os``: what a local output needs, without importing pyarrow."""

    local = True

    def make_dirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def exists(self, path: str) -> bool:
        return self._stat(path) is not None

    def size(self, path: str) -> int:
        found = self._stat(path)
        return found.st_size if found is not None and stat.S_ISREG(found.st_mode) else 0

    @staticmethod
    def _stat(path: str) -> os.stat_result | None:
        """``os.stat``, None where nothing is (as pyarrow's NotFound: a missing name, or a file where a folder is)."""
        try:
            return os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def file_names(self, folder: str) -> list[str]:
        try:
            with os.scandir(folder) as entries:
                return [entry.name for entry in entries if entry.is_file()]
        except FileNotFoundError:
            return []

    def read(self, path: str) -> bytes:
        with open(path, "rb") as handle:
            return handle.read()

    def open_input_file(self, path: str) -> Any:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it

    def write(self, path: str, chunks: Iterable[bytes]) -> None:
        with open(path, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)

    def move(self, source: str, target: str) -> None:
        os.replace(source, target)

    def delete(self, path: str) -> None:
        os.remove(path)


class _ArrowFiles:
    """Files on a ``pyarrow.fs.FileSystem`` (object storage, or one a caller passed)."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs

    @property
    def local(self) -> bool:
        import pyarrow.fs as pafs

        return isinstance(self.fs, pafs.LocalFileSystem)

    def make_dirs(self, path: str) -> None:
        self.fs.create_dir(path, recursive=True)

    def exists(self, path: str) -> bool:
        import pyarrow.fs as pafs

        return self.fs.get_file_info(path).type != pafs.FileType.NotFound

    def size(self, path: str) -> int:
        info = self.fs.get_file_info(path)
        return int(info.size or 0) if info.is_file else 0

    def file_names(self, folder: str) -> list[str]:
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(folder, allow_not_found=True, recursive=False)
        return [info.base_name for info in self.fs.get_file_info(selector) if info.is_file]

    def read(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as stream:
            return stream.read()

    def open_input_file(self, path: str) -> Any:
        return self.fs.open_input_file(path)

    def write(self, path: str, chunks: Iterable[bytes]) -> None:
        with self.fs.open_output_stream(path) as stream:
            for chunk in chunks:
                stream.write(chunk)

    def move(self, source: str, target: str) -> None:
        self.fs.move(source, target)

    def delete(self, path: str) -> None:
        self.fs.delete_file(path)


class OutputStore:
    """A folder on a pyarrow filesystem; names are relative to it, with ``/`` between parts.

    A local path given as such (``filesystem`` None) is read and written through ``os`` (:class:`_OsFiles`): a
    batch's driver then never imports pyarrow (0.065 CPU-s, a third of its fixed cost) unless it reads a part;
    :attr:`fs` still gives a ``pyarrow.fs.LocalFileSystem`` for whoever asks.
    """

    def __init__(self, filesystem: Any, base: str) -> None:
        self._fs = filesystem
        self._files: _OsFiles | _ArrowFiles = _OsFiles() if filesystem is None else _ArrowFiles(filesystem)
        self.base = base.rstrip("/") or "/"
        self.shown = base

    @property
    def fs(self) -> Any:
        """The pyarrow filesystem (for a local path: a ``LocalFileSystem``, made when first asked for)."""
        if self._fs is None:
            import pyarrow.fs as pafs

            self._fs = pafs.LocalFileSystem()
        return self._fs

    @classmethod
    def at(cls, out: str | os.PathLike[str], filesystem: Any = None) -> OutputStore:
        """``out`` on ``filesystem``; else a URI (``scheme://...``) through pyarrow, else a local path."""
        if filesystem is not None:
            return cls(filesystem, os.fspath(out))
        text = os.fspath(out)
        if "://" in text:
            import pyarrow.fs as pafs

            found, path = pafs.FileSystem.from_uri(text)
            store = cls(found, path)
            store.shown = text
            return store
        store = cls(None, os.path.abspath(text))
        store.shown = text
        return store

    @property
    def local(self) -> bool:
        """A folder of this machine's file system (where files are renamed in place and synced)."""
        return self._files.local

    def path(self, *names: str) -> str:
        return "/".join([self.base.rstrip("/"), *names]) if self.base != "/" else "/" + "/".join(names)

    def local_path(self, *names: str) -> Path:
        return Path(self.path(*names))

    def shown_path(self, *names: str) -> str:
        """A file's path as the user wrote ``--out`` (what a message names)."""
        return "/".join([self.shown.rstrip("/"), *names]) if self.shown.rstrip("/") else "/" + "/".join(names)

    @contextmanager
    def failing(self, verb: str, *names: str) -> Iterator[None]:
        """An OSError in the block as an :class:`OutputWriteError`: "cannot {verb} {the file}: {reason} (ERRNO)"."""
        try:
            yield
        except OutputWriteError:
            raise
        except OSError as exc:
            raise OutputWriteError(verb, self.shown_path(*names), exc) from exc

    def make_dirs(self, *names: str) -> None:
        with self.failing("create the folder", *names):
            self._files.make_dirs(self.path(*names))

    def exists(self, *names: str) -> bool:
        with self.failing("read", *names):
            return self._files.exists(self.path(*names))

    def size(self, *names: str) -> int:
        """The file's size in bytes (0 when it is missing)."""
        with self.failing("read", *names):
            return self._files.size(self.path(*names))

    def files(self, folder: str, prefix: str, suffix: str) -> list[str]:
        """Names of the files directly in ``folder`` ("": the output's top) starting with ``prefix`` and ending
        with ``suffix``, sorted."""
        where = self.path(folder) if folder else self.base
        with self.failing("list", *filter(None, [folder])):
            names = self._files.file_names(where)
        return sorted(name for name in names if name.startswith(prefix) and name.endswith(suffix))

    def read_bytes(self, *names: str) -> bytes:
        with self.failing("read", *names):
            return self._files.read(self.path(*names))

    def open_input_file(self, *names: str) -> Any:
        """A file of the output opened for random access (a Parquet part's footer, then its columns)."""
        with self.failing("read", *names):
            return self._files.open_input_file(self.path(*names))

    def write_bytes(self, data: bytes, *names: str) -> None:
        """The file, written aside then moved in place: whole or not at all under its name.

        When the write or the move fails (or a chunk cannot be made), the file aside is removed before the error
        is raised.
        """
        self.write_chunks((data,), *names)

    def write_chunks(self, chunks: Iterable[bytes], *names: str) -> None:
        """:meth:`write_bytes` of the chunks one after the other, never joined in memory (a report's rows)."""
        *folder, name = names
        temporary = self.path(*folder, f".{name}.tmp")
        with self.failing("write", *names):
            try:
                self._files.write(temporary, chunks)
                self._files.move(temporary, self.path(*names))
            except BaseException:  # a refused write, or a chunk's maker failing halfway: nothing left aside
                self._discard(temporary)
                raise

    def _discard(self, path: str) -> None:
        try:
            self._files.delete(path)
        except OSError:
            pass  # never created, or the folder refuses even that: nothing more to do

    def discard_temporaries(self, *folders: str) -> None:
        """Remove the ``.NAME.tmp`` files a failed or killed run left at the top and in ``folders``.

        Best effort: a folder that cannot even be listed any more is left as it is.
        """
        for folder in ("", *folders):
            try:
                names = self.files(folder, ".", ".tmp")
            except OutputWriteError:
                continue
            for name in names:
                self._discard(self.path(*filter(None, (folder, name))))

    def delete(self, *names: str) -> None:
        with self.failing("delete", *names):
            self._files.delete(self.path(*names))

    def __str__(self) -> str:
        return self.shown
