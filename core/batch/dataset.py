"""The node dataset and its record: part files of bounded size and the manifest that lists them.

``OUT/nodes/part-NNNNN.parquet`` holds consecutive rows of consecutive inputs; a part
is cut at ``part_rows`` rows or ``part_bytes`` bytes of text, whichever comes first,
which depends on the inputs and the configuration only (so both engines write the
same bytes). A part is written aside and moved in place, then recorded by a
``part`` line in ``OUT/manifest.jsonl``; an ``input`` line follows once all of that
input's rows are in recorded parts. ``OUT`` is an :class:`core.batch.storage.OutputStore`
(a local folder or object storage).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.batch.storage import OutputStore
from core.batch.work import table_from

MANIFEST = "manifest.jsonl"
# The node dataset has a folder of its own, so pyarrow, pandas or Ray read OUT/nodes as one dataset.
NODES = "nodes"
PART_PREFIX = "part-"
PART_ROWS = 100_000
PART_BYTES = 128 * 1024 * 1024
MANIFEST_VERSION = 1
# A part is written as row groups of about this much text while its rows arrive, so compressing it
# overlaps the workers and only the last row group is left when they finish.
ROW_GROUP_BYTES = 8 * 1024 * 1024


@dataclass
class _Waiting:
    entry: dict[str, Any]
    rows_left: int
    parts: list[str] = field(default_factory=list)


class DatasetWriter:
    """Results in input order -> part files of bounded size, and the manifest lines that record them.

    Where a part ends depends on the rows' sizes only (never on when they arrived), and so
    do its row groups: both engines write the same bytes.
    """

    def __init__(self, out: OutputStore, manifest: Manifest, next_part: int, part_rows: int, part_bytes: int) -> None:
        self.out = out
        self.manifest = manifest
        self.next_part = next_part
        self.part_rows = max(1, part_rows)
        self.part_bytes = max(1, part_bytes)
        self._tables: list[Any] = []  # rows not yet in a row group
        self._sizes: list[Any] = []  # their byte estimates (numpy), alongside
        self._pending_rows = 0
        self._pending_bytes = 0
        self._part: _OpenPart | None = None
        self._waiting: deque[_Waiting] = deque()
        self.parts_written: list[str] = []

    def add(self, result: dict[str, Any]) -> dict[str, Any]:
        """Take one file's result; write the row groups and parts it completes. Returns its manifest entry."""
        import numpy as np

        entry = {key: value for key, value in result.items() if key not in ("table", "row_bytes", "index")}
        entry["metrics"] = json.loads(entry["metrics"]) if entry.get("metrics") else None
        entry["kind"] = "input"
        rows = 0
        if result["status"] == "ok" and result["nodes"]:
            table = table_from(result)
            sizes = np.frombuffer(result["row_bytes"], dtype=np.int64)
            rows = table.num_rows
            self._tables.append(table)
            self._sizes.append(sizes)
            self._pending_rows += rows
            self._pending_bytes += int(sizes.sum())
        self._waiting.append(_Waiting(entry, rows))
        closed = self._drain(final=False)
        self._record_done()
        if closed:
            self.manifest.checkpoint()
        return entry

    def finish(self) -> None:
        """Write what is buffered (every buffered input has all its rows here) and record it."""
        self._drain(final=True)
        self._record_done()
        self.manifest.checkpoint()

    def _drain(self, final: bool) -> bool:
        """Move pending rows into row groups and close every part that is full; True if one was written."""
        import numpy as np

        closed = False
        while self._pending_rows:
            part = self._part or _OpenPart()
            fits = (
                part.rows + self._pending_rows < self.part_rows and part.bytes + self._pending_bytes <= self.part_bytes
            )
            if fits and not final and self._pending_bytes < ROW_GROUP_BYTES:
                break  # nothing to write yet (the common case: skip the cut's arithmetic)
            sizes = np.concatenate(self._sizes) if len(self._sizes) > 1 else self._sizes[0]
            room = int(np.searchsorted(np.cumsum(sizes), self.part_bytes - part.bytes, side="right"))
            take = min(self.part_rows - part.rows, room, self._pending_rows)
            if part.rows == 0:
                take = max(1, take)  # a row larger than a part gets a part of its own
            full = take < self._pending_rows or part.rows + take == self.part_rows
            if not (full or final or self._pending_bytes >= ROW_GROUP_BYTES):
                break
            self._part = part
            if take:
                part.write(*self._take(take, sizes))
            if full:
                self._close_part()
                closed = True
        if final and self._part is not None:
            self._close_part()
            closed = True
        return closed

    def _take(self, count: int, sizes: Any) -> Any:
        import pyarrow as pa

        table = pa.concat_tables(self._tables) if len(self._tables) > 1 else self._tables[0]
        taken, rest = table.slice(0, count), table.slice(count)
        self._tables = [rest] if rest.num_rows else []
        self._sizes = [sizes[count:]] if rest.num_rows else []
        self._pending_rows -= count
        self._pending_bytes = int(sizes[count:].sum())
        return taken, int(sizes[:count].sum())

    def _close_part(self) -> None:
        part, self._part = self._part, None
        assert part is not None
        name = f"{PART_PREFIX}{self.next_part:05d}.parquet"
        self.next_part += 1
        # Built in memory (the part is compressed, a fraction of the rows it held): hashed without
        # reading it back from object storage, then written in one piece.
        data = part.close()
        digest = hashlib.sha256(data).hexdigest()
        self.out.write_bytes(data, NODES, name)

        inputs = []
        left = part.rows
        for waiting in self._waiting:
            if left == 0:
                break
            if waiting.rows_left == 0:
                continue
            taken = min(left, waiting.rows_left)
            waiting.rows_left -= taken
            waiting.parts.append(name)
            inputs.append(waiting.entry["path"])
            left -= taken
        self.manifest.write({"kind": "part", "part": name, "rows": part.rows, "sha256": digest, "inputs": inputs})
        self.parts_written.append(name)

    def _record_done(self) -> None:
        while self._waiting and self._waiting[0].rows_left == 0:
            waiting = self._waiting.popleft()
            self.manifest.write({**waiting.entry, "parts": waiting.parts})


class _OpenPart:
    """One part file being written in memory, a row group at a time (zstd Parquet)."""

    def __init__(self) -> None:
        self.rows = 0
        self.bytes = 0
        self._sink: Any = None
        self._writer: Any = None

    def write(self, table: Any, size: int) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self._writer is None:
            self._sink = pa.BufferOutputStream()
            self._writer = pq.ParquetWriter(self._sink, table.schema, compression="zstd")
        self._writer.write_table(table, row_group_size=table.num_rows)
        self.rows += table.num_rows
        self.bytes += size

    def close(self) -> bytes:
        self._writer.close()
        return self._sink.getvalue().to_pybytes()


def parquet_bytes(table: Any) -> bytes:
    """The table as the bytes of one zstd Parquet file (how resume rewrites a part)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Manifest:
    """``manifest.jsonl``: one JSON object a line, appended as the run goes.

    On a local disk each line is flushed as it is written (a killed process leaves it
    in the file) and synced at :meth:`checkpoint`, after each part and at the end: one
    sync a part, not one a line (a sync a line was ~0.3 ms, 0.45 s for 1,383 inputs,
    most of it after the workers had finished). Object storage cannot append: there
    the lines wait for :meth:`checkpoint`, which rewrites the whole manifest, so a part
    and the input lines it completes appear together. Either way a machine lost in
    between loses only lines whose inputs ``--resume`` then does again.
    """

    def __init__(self, out: OutputStore) -> None:
        self.out = out
        self._handle: Any = None
        if out.local:
            # Unbuffered: a line goes to the file in one write, so a failed write leaves no bytes
            # in a buffer for a later flush to add after it (a torn line is the most it leaves).
            with out.failing("write", MANIFEST):
                self._handle = open(out.local_path(MANIFEST), "ab", buffering=0)  # noqa: SIM115
        self._text: list[str] = [] if out.local else [read_text(out, MANIFEST)]
        self._waiting = False

    def write(self, line: dict[str, Any]) -> None:
        text = json.dumps(line, ensure_ascii=False, default=str) + "\n"
        if self._handle is None:
            self._text.append(text)
            self._waiting = True
            return
        # A killed process leaves the line in the file; a lost machine, up to the last checkpoint.
        with self.out.failing("write", MANIFEST):
            self._append(text.encode("utf-8"))

    def _append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:  # a full disk may take part of a line, then refuse the rest with ENOSPC
            view = view[self._handle.write(view) :]

    def checkpoint(self) -> None:
        """Make every line written so far durable."""
        if self._handle is not None:
            with self.out.failing("write", MANIFEST):
                os.fsync(self._handle.fileno())
        elif self._waiting:
            self._text = ["".join(self._text)]
            self.out.write_bytes(self._text[0].encode("utf-8"), MANIFEST)
            self._waiting = False

    def close(self) -> None:
        try:
            self.checkpoint()
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Close the file without another write (after a failed one: the lines in it are what counts)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_text(out: OutputStore, *names: str) -> str:
    """A text file of the output ("" when it is missing)."""
    return out.read_bytes(*names).decode("utf-8") if out.exists(*names) else ""


def read_manifest(out: Path | OutputStore) -> list[dict[str, Any]]:
    """The manifest's lines (``out``: the manifest's local path, or the output); a torn last line is ignored.

    A torn line is what a process killed mid-write leaves.
    """
    if isinstance(out, OutputStore):
        text = read_text(out, MANIFEST)
    else:
        text = out.read_text(encoding="utf-8") if out.is_file() else ""
    lines = []
    for line in text.splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return lines
