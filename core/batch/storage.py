"""Where a batch's output lives: a local folder or any pyarrow filesystem (``s3://``, ``gs://``, ``file://``, ...).

``--out`` is a local path, or a URI that ``pyarrow.fs.FileSystem.from_uri`` takes
(credentials come from the environment, as pyarrow reads them); a caller may also
pass a ``pyarrow.fs.FileSystem`` and a path inside it (fsspec's through
``PyFileSystem(FSSpecHandler(...))``). Only the driver writes, through this class.

A file is written aside (``.NAME.tmp``) and moved into place, so a reader never
sees half of it. On a local disk the move is a rename; on object storage it is a
copy, and an object store has no append: the manifest is then rewritten whole at
each checkpoint (:class:`core.batch.dataset.Manifest`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class OutputStore:
    """A folder on a pyarrow filesystem; names are relative to it, with ``/`` between parts."""

    def __init__(self, filesystem: Any, base: str) -> None:
        self.fs = filesystem
        self.base = base.rstrip("/") or "/"
        self.shown = base

    @classmethod
    def at(cls, out: str | os.PathLike[str], filesystem: Any = None) -> OutputStore:
        """``out`` on ``filesystem``; else a URI (``scheme://...``) through pyarrow, else a local path."""
        import pyarrow.fs as pafs

        if filesystem is not None:
            return cls(filesystem, os.fspath(out))
        text = os.fspath(out)
        if "://" in text:
            found, path = pafs.FileSystem.from_uri(text)
            store = cls(found, path)
            store.shown = text
            return store
        store = cls(pafs.LocalFileSystem(), os.path.abspath(text))
        store.shown = text
        return store

    @property
    def local(self) -> bool:
        """A folder of this machine's file system (where files are renamed in place and synced)."""
        import pyarrow.fs as pafs

        return isinstance(self.fs, pafs.LocalFileSystem)

    def path(self, *names: str) -> str:
        return "/".join([self.base.rstrip("/"), *names]) if self.base != "/" else "/" + "/".join(names)

    def local_path(self, *names: str) -> Path:
        return Path(self.path(*names))

    def make_dirs(self, *names: str) -> None:
        self.fs.create_dir(self.path(*names), recursive=True)

    def exists(self, *names: str) -> bool:
        import pyarrow.fs as pafs

        return self.fs.get_file_info(self.path(*names)).type != pafs.FileType.NotFound

    def size(self, *names: str) -> int:
        """The file's size in bytes (0 when it is missing)."""
        info = self.fs.get_file_info(self.path(*names))
        return int(info.size or 0) if info.is_file else 0

    def files(self, folder: str, prefix: str, suffix: str) -> list[str]:
        """Names of the files directly in ``folder`` that start with ``prefix`` and end with ``suffix``, sorted."""
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(self.path(folder), allow_not_found=True, recursive=False)
        names = (info.base_name for info in self.fs.get_file_info(selector) if info.is_file)
        return sorted(name for name in names if name.startswith(prefix) and name.endswith(suffix))

    def read_bytes(self, *names: str) -> bytes:
        with self.fs.open_input_stream(self.path(*names)) as stream:
            return stream.read()

    def write_bytes(self, data: bytes, *names: str) -> None:
        """The file, written aside then moved in place: whole or not at all under its name."""
        *folder, name = names
        temporary = self.path(*folder, f".{name}.tmp")
        with self.fs.open_output_stream(temporary) as stream:
            stream.write(data)
        self.fs.move(temporary, self.path(*names))

    def delete(self, *names: str) -> None:
        self.fs.delete_file(self.path(*names))

    def __str__(self) -> str:
        return self.shown
