"""The inputs of a batch: files, directories, globs and lists of paths, expanded in a stable order."""

from __future__ import annotations

import glob
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from core.batch.work import one_line
from core.loaders.file_kinds import file_problem_and_size


@dataclass(frozen=True)
class Input:
    """One file to process: ``source`` as the user named it (it goes into the dataset), ``path`` absolute."""

    source: str
    path: str
    problem: str = ""  # set when the input cannot even be listed (a glob with no match, a missing list)
    # The path inside the root it was found under (a directory, a glob's fixed folder, a list's folder; a file
    # named alone: as named), "/" between parts: what a document id hashes, so the same text in two folders
    # gets two ids while moving the whole corpus elsewhere changes none. Unique in a run (see expand_inputs).
    name: str = ""
    size: int = 0  # bytes, as listed (0 for a problem or a file that cannot be read: its worker says why)

    @property
    def id_key(self) -> str:
        return self.name or self.source


def expand_inputs(items: Sequence[str], list_files: Sequence[str] = ()) -> list[Input]:
    """Files from paths, directories (recursive, supported files only), globs and lists of paths.

    A list is ``@FILE`` (or an item in ``list_files``, or any ``.parquet`` item):
    a text file with one path per line (blank lines and ``#`` comments skipped)
    or a Parquet file with a ``path`` column (else its only string column).
    Relative paths in a list are relative to the list's folder. Order: as given,
    a directory's or glob's files sorted; a file named twice is processed once.
    A pipe, a device, a socket or a broken symbolic link (named, or found by a
    walk or a glob with a supported extension) is an input with a ``problem``, so
    the report lists it as failed instead of a worker blocking on it or the walk
    skipping it unseen.

    Each input's ``name`` is its path relative to its root; two inputs with the same name
    (``a/x.md`` under two folders given together) are named by their ``source`` instead.
    """
    found: list[Input] = []
    for item in items:
        if item.startswith("@"):
            found.extend(_from_list(item[1:]))
        elif item.lower().endswith(".parquet"):
            found.extend(_from_list(item))
        else:
            found.extend(_expand(item))
    for item in list_files:
        found.extend(_from_list(item))
    seen: set[str] = set()
    unique = []
    for entry in found:
        key = entry.path if not entry.problem else f"{entry.source}\0{entry.problem}"
        if key not in seen:
            seen.add(key)
            unique.append(entry)
    return _unique_names(unique)


def _unique_names(entries: list[Input]) -> list[Input]:
    counts = Counter(entry.name for entry in entries)
    return [replace(entry, name=entry.source) if counts[entry.name] > 1 else entry for entry in entries]


def _supported() -> set[str]:
    """What a folder walk picks up: every loader's extensions but those loaded only by name (a queries .json)."""
    from core.loaders import folder_extensions

    return folder_extensions()


def _expand(item: str, base: Path | None = None) -> list[Input]:
    path = Path(item) if base is None or Path(item).is_absolute() else base / item
    source = str(path) if base is not None else item
    if path.is_dir():
        return [_listed(found, found, name) for found, name in folder_walk(path, _supported())]
    if glob.has_magic(str(path)):
        # glob.glob returns broken links too (is_file() is False for them): they are listed, not dropped.
        matches = sorted(p for p in glob.glob(str(path), recursive=True) if not os.path.isdir(p))
        if not matches:
            return [Input(source, os.path.abspath(path), "no file matches this pattern")]
        root = _fixed_folder(str(path))
        return [_listed(p, p, Path(os.path.relpath(p, root)).as_posix()) for p in matches]
    return [_listed(source, path, Path(item).as_posix())]


def folder_walk(folder: Path, supported: set[str]) -> list[tuple[str, str]]:
    """Each file under ``folder`` whose suffix (lowercased) is ``supported``, as ``(path, name)``: its path as
    ``str(folder / name)`` and its name relative to ``folder`` with ``/`` between parts.

    What ``sorted(p for p in folder.rglob("*") if p.suffix.lower() in supported and not p.is_dir())`` lists,
    in that order, from ``os.scandir`` (a third of the time: no Path object a file; tests/test_batch_faults.py
    compares the two): folders are entered but not through symbolic links, one that cannot be read is
    skipped, a symbolic link to a folder is not a file, a broken one is.
    """
    root = str(folder)
    prefix = "" if root == "." else root if root.endswith("/") else root + "/"
    found: list[tuple[tuple[str, ...], str]] = []
    pending: list[tuple[str, tuple[str, ...]]] = [(root, ())]
    while pending:
        where, parts = pending.pop()
        try:
            with os.scandir(where) as listing:
                entries = list(listing)
        except PermissionError:
            continue
        for entry in entries:
            name = entry.name
            inside = (*parts, name)
            if _is_dir(entry, follow=False):
                pending.append((entry.path, inside))
            dot = name.rfind(".")
            if 0 < dot < len(name) - 1 and name[dot:].lower() in supported and not _is_dir(entry, follow=True):
                found.append((inside, prefix + "/".join(inside)))
    found.sort()
    return [(path, "/".join(parts)) for parts, path in found]


def _is_dir(entry: os.DirEntry[str], follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def _fixed_folder(pattern: str) -> str:
    """The folder a glob searches under: its parts before the first one with a wildcard."""
    parts = Path(pattern).parts
    fixed = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
    return str(Path(*parts[:fixed])) if fixed else "."


def _listed(source: str, path: str | Path, name: str) -> Input:
    """An input, with its problem when it is not a regular file (a pipe, a device, a socket, a broken link)."""
    problem, size = file_problem_and_size(path)
    return Input(source, os.path.abspath(path), problem, name, size)


def _from_list(list_path: str) -> list[Input]:
    path = Path(list_path)
    if not path.is_file():
        return [Input(list_path, os.path.abspath(path), "list of paths not found")]
    try:
        if path.suffix.lower() == ".parquet":
            names = _parquet_paths(path)
        else:
            lines = path.read_text(encoding="utf-8").splitlines()
            names = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [Input(list_path, os.path.abspath(path), f"list of paths cannot be read ({one_line(exc)})")]
    entries: list[Input] = []
    for name in names:
        entries.extend(_expand(name, base=path.parent))
    return entries


def _parquet_paths(path: Path) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    columns = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    column = "path" if "path" in schema.names else (columns[0] if len(columns) == 1 else None)
    if column is None:
        raise ValueError("it needs a 'path' column (or exactly one text column)")
    return [str(value) for value in pq.read_table(path, columns=[column]).column(0).to_pylist() if value]
