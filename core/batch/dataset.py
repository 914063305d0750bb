"""The node dataset and its record: part files of bounded size and the manifest that lists them.

The inputs are cut into shards (:mod:`core.batch.shards`): consecutive inputs, planned from
their sizes alone. A shard's rows go to ``OUT/nodes/part-SSSSS-KKKK.parquet`` (shard ``S``,
its ``K``-th part): a part is cut at ``part_rows`` rows or ``part_bytes`` bytes of text,
whichever comes first, so where parts end depends on the inputs and the configuration only,
never on the engine, the worker count or which worker wrote them. Whoever runs a shard writes
its parts (:class:`ShardWriter`: a worker, or the driver for an output the workers cannot reach)
and returns the manifest lines that record them; the driver appends those lines to
``OUT/manifest.jsonl`` in shard order (:class:`ShardRecorder`). A part is written aside and moved
in place before its ``part`` line exists; an ``input`` line follows once all of that input's
rows are in recorded parts. ``OUT`` is an :class:`core.batch.storage.OutputStore` (a local
folder or object storage).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.batch.storage import OutputStore, OutputWriteError
from core.batch.work import table_from

MANIFEST = "manifest.jsonl"
# The node dataset has a folder of its own, so pyarrow, pandas or Ray read OUT/nodes as one dataset.
NODES = "nodes"
PART_PREFIX = "part-"
PART_ROWS = 100_000
PART_BYTES = 128 * 1024 * 1024
MANIFEST_VERSION = 1
# A part is written as row groups of about this much text while its rows arrive, so a writer holds
# the compressed part so far and less than this of rows not yet compressed.
ROW_GROUP_BYTES = 8 * 1024 * 1024
# Object storage: a manifest is rewritten whole, at most every so many seconds and 20 times its last rewrite's time.
CHECKPOINT_SECONDS = 10.0
REWRITE_SHARE = 20


def part_name(shard: int, number: int) -> str:
    """``part-SSSSS-KKKK.parquet``: names sort in the dataset's order (shards, then parts in a shard)."""
    return f"{PART_PREFIX}{shard:05d}-{number:04d}.parquet"


def part_shard(name: str) -> int:
    """The shard number in a part's name (``part-00012-0000.parquet`` -> 12; an older ``part-00012.parquet`` too)."""
    return int(name[len(PART_PREFIX) :].split(".")[0].split("-")[0])


@dataclass(frozen=True)
class PartLimits:
    """Where parts and row groups end: sent with each shard, so a worker cuts where the driver would."""

    rows: int = PART_ROWS
    bytes: int = PART_BYTES
    row_group_bytes: int = ROW_GROUP_BYTES

    @classmethod
    def of(cls, rows: int, size: int) -> PartLimits:
        return cls(max(1, rows), max(1, size), ROW_GROUP_BYTES)


@dataclass
class _Waiting:
    entry: dict[str, Any]
    rows_left: int
    parts: list[str] = field(default_factory=list)


class ShardWriter:
    """One shard's results, in input order -> its part files, and the manifest lines that record them.

    Where a part ends depends on the rows' sizes only (never on when they arrived), and so
    do its row groups: a worker and the driver write the same bytes. :meth:`finish` returns
    ``lines`` (manifest lines as JSON text: each part's, then the inputs it completes) and the
    counts the progress line shows; after a write the output refused, the lines of what was
    in place before it and the error (:meth:`failed`).
    """

    def __init__(self, out: OutputStore, shard: int, limits: PartLimits) -> None:
        self.out = out
        self.shard = shard
        self.limits = limits
        self._tables: list[Any] = []  # rows not yet in a row group
        self._sizes: list[Any] = []  # their byte estimates (numpy), alongside
        self._pending_rows = 0
        self._pending_bytes = 0
        self._part: _OpenPart | None = None
        self._waiting: deque[_Waiting] = deque()
        self.lines: list[str] = []
        self.parts: list[str] = []
        self.sizes: dict[str, Any] = {}  # part -> PartSizes.to_record() of each part written
        self.counts = {"files": 0, "failed": 0, "nodes": 0, "bytes": 0}

    def add(self, result: dict[str, Any]) -> None:
        """Take one file's result; write the row groups and parts it completes."""
        import numpy as np

        entry = {key: value for key, value in result.items() if key not in ("table", "row_bytes", "index")}
        entry["metrics"] = json.loads(entry["metrics"]) if entry.get("metrics") else None
        entry["kind"] = "input"
        self.counts["files"] += 1
        self.counts["failed"] += result["status"] != "ok"
        self.counts["nodes"] += result["nodes"]
        self.counts["bytes"] += result["size"]
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
        self._drain(final=False)
        self._record_done()

    def finish(self) -> dict[str, Any]:
        """Write what is buffered (every input of the shard has all its rows here); the shard's record."""
        self._drain(final=True)
        self._record_done()
        return self.record()

    def record(self, error: OutputWriteError | None = None) -> dict[str, Any]:
        """What the driver needs of this shard: its manifest lines, its parts, the counts, each part's sizes
        (:class:`PartSizes`, for the report), a refused write."""
        done = {"shard": self.shard, "lines": self.lines, "parts": self.parts, "counts": self.counts}
        done["sizes"] = self.sizes
        if error is not None:
            done["error"] = {"verb": "write", "path": error.path, "errno": error.errno, "message": str(error)}
        return done

    def _drain(self, final: bool) -> None:
        """Move pending rows into row groups and close every part that is full."""
        import numpy as np

        limits = self.limits
        while self._pending_rows:
            part = self._part or _OpenPart()
            fits = part.rows + self._pending_rows < limits.rows and part.bytes + self._pending_bytes <= limits.bytes
            if fits and not final and self._pending_bytes < limits.row_group_bytes:
                break  # nothing to write yet (the common case: skip the cut's arithmetic)
            sizes = np.concatenate(self._sizes) if len(self._sizes) > 1 else self._sizes[0]
            room = int(np.searchsorted(np.cumsum(sizes), limits.bytes - part.bytes, side="right"))
            take = min(limits.rows - part.rows, room, self._pending_rows)
            if part.rows == 0:
                take = max(1, take)  # a row larger than a part gets a part of its own
            full = take < self._pending_rows or part.rows + take == limits.rows
            if not (full or final or self._pending_bytes >= limits.row_group_bytes):
                break
            self._part = part
            if take:
                part.write(*self._take(take, sizes))
            if full:
                self._close_part()
        if final and self._part is not None:
            self._close_part()

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
        name = part_name(self.shard, len(self.parts))
        # Built in memory (the part is compressed, a fraction of the rows it held): hashed without
        # reading it back from object storage, then written in one piece.
        data = part.close()
        self.out.write_bytes(data, NODES, name)
        self.sizes[name] = part.sizes.to_record()

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
        line = {"kind": "part", "part": name, "rows": part.rows, "sha256": hashlib.sha256(data).hexdigest()}
        self.lines.append(_line({**line, "inputs": inputs}))
        self.parts.append(name)

    def _record_done(self) -> None:
        while self._waiting and self._waiting[0].rows_left == 0:
            waiting = self._waiting.popleft()
            self.lines.append(_line({**waiting.entry, "parts": waiting.parts}))


def write_shard(out: OutputStore, shard: int, limits: PartLimits, results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A shard's results -> its parts under ``out``; its record (see :class:`ShardWriter`).

    A write the output refuses ends the shard: the record then holds the lines of what was
    in place before it, and the error, for the driver to record and raise.
    """
    writer = ShardWriter(out, shard, limits)
    try:
        for result in results:
            writer.add(result)
        return writer.finish()
    except OutputWriteError as exc:
        return writer.record(exc)


def shard_error(record: dict[str, Any]) -> OutputWriteError | None:
    """The refused write a shard's record reports, as the error the run raises (None when there is none)."""
    error = record.get("error")
    if not error:
        return None
    failure = OutputWriteError("write", error["path"], OSError(error["errno"], os.strerror(error["errno"] or 0)))
    failure.args = (error["message"],)
    return failure


def _line(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, default=str) + "\n"


# The columns the report counts per value, and the flags it counts per name.
SIZE_COLUMNS = ("characters", "tokens", "embed_tokens")


class PartSizes:
    """Counts per value of parts' size columns (``characters``, ``tokens``, with ``--metrics`` ``embed_tokens``)
    and per name of their ``flags``: all the report reads of the nodes.

    Whoever writes a part counts it (:class:`ShardWriter`) and the shard's record carries the counts, so the
    driver reports a run's parts without reading them back; parts of an earlier run are read
    (:meth:`add_table`). ``counts[column][v]`` is how many rows hold ``v``.
    """

    def __init__(self) -> None:
        self.counts: dict[str, Any] = {}
        self.flags: dict[str, int] = {}

    def add_table(self, table: Any) -> None:
        """Count a table's rows (a pyarrow table with some of the size columns, and perhaps ``flags``)."""
        import numpy as np

        for name in SIZE_COLUMNS:
            if name in table.column_names:
                values = _integers(table.column(name))
                if len(values):
                    self._add_counts(name, np.bincount(values))
        if "flags" in table.column_names:
            for flag, count in _flag_counts(table.column("flags")).items():
                self.flags[flag] = self.flags.get(flag, 0) + count

    def add(self, other: PartSizes) -> None:
        for name, counts in other.counts.items():
            self._add_counts(name, counts)
        for flag, count in other.flags.items():
            self.flags[flag] = self.flags.get(flag, 0) + count

    def _add_counts(self, name: str, counts: Any) -> None:
        import numpy as np

        counts = np.asarray(counts, dtype=np.int64)
        mine = self.counts.get(name)
        if mine is None or len(counts) > len(mine):
            counts = counts.copy()
            if mine is not None:
                counts[: len(mine)] += mine
            self.counts[name] = counts
        else:
            mine[: len(counts)] += counts

    def to_record(self) -> dict[str, Any]:
        """Plain values (sparse: the values present and how often), for a shard's record."""
        import numpy as np

        columns = {}
        for name, counts in self.counts.items():
            present = np.flatnonzero(counts)
            columns[name] = [present.tolist(), counts[present].tolist()]
        return {"columns": columns, "flags": dict(self.flags)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> PartSizes:
        import numpy as np

        sizes = cls()
        for name, (values, counts) in record["columns"].items():
            dense = np.zeros(max(values) + 1 if values else 0, dtype=np.int64)
            dense[np.asarray(values, dtype=np.int64)] = counts
            sizes._add_counts(name, dense)
        sizes.flags = dict(record["flags"])
        return sizes


def _integers(column: Any) -> Any:
    """A pyarrow integer column's values (non-negative, no nulls) as one numpy array, read from its buffers.

    Not ``to_numpy`` (it imports pandas, 0.24 s) nor ``pyarrow.compute`` (60 ms).
    """
    import numpy as np
    import pyarrow as pa

    parts = []
    for chunk in column.chunks:
        if chunk.null_count:
            raise ValueError("a size column holds nulls")
        kind = np.int32 if pa.types.is_int32(chunk.type) else np.int64 if pa.types.is_int64(chunk.type) else None
        if kind is None:
            raise ValueError(f"a size column of {chunk.type}")
        parts.append(np.frombuffer(chunk.buffers()[1], dtype=kind)[chunk.offset : chunk.offset + len(chunk)])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _flag_counts(column: Any) -> dict[str, int]:
    """How often each flag occurs in a ``flags`` column (list of strings)."""
    import numpy as np

    counted: dict[str, int] = {}

    def count(flags: Any) -> None:
        for flag in flags:
            if flag is not None:
                counted[flag] = counted.get(flag, 0) + 1

    for chunk in column.chunks:
        if chunk.null_count:
            count(flag for flags in chunk.to_pylist() if flags for flag in flags)
            continue
        # The items its rows hold, from its offsets (ListArray.flatten imports pyarrow.compute).
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset : chunk.offset + len(chunk) + 1]
        if len(offsets):
            count(chunk.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0])).to_pylist())
    return counted


class _OpenPart:
    """One part file being written in memory, a row group at a time (zstd Parquet), its sizes counted."""

    def __init__(self) -> None:
        self.rows = 0
        self.bytes = 0
        self.sizes = PartSizes()
        self._sink: Any = None
        self._writer: Any = None

    def write(self, table: Any, size: int) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self._writer is None:
            self._sink = pa.BufferOutputStream()
            self._writer = pq.ParquetWriter(self._sink, table.schema, compression="zstd")
        self._writer.write_table(table, row_group_size=table.num_rows)
        self.sizes.add_table(table)
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
    in the file) and synced at :meth:`checkpoint`, after each shard and at the end: one
    sync a shard, not one a line (a sync a line was ~0.3 ms, 0.45 s for 1,383 inputs,
    most of it after the workers had finished). Object storage cannot append: there
    the lines wait for :meth:`checkpoint`, which rewrites the whole manifest, so a part
    and the input lines it completes appear together; a ``paced`` checkpoint (after a
    shard) rewrites it only when :data:`CHECKPOINT_SECONDS` and twenty times the last
    rewrite's time have passed, so rewriting a growing manifest takes at most ~5% of a
    run, not a rewrite a shard. Either way a machine lost in between loses only lines
    whose inputs ``--resume`` then does again (their parts, unrecorded, are removed).
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
        self._next_rewrite = 0.0  # object storage: when a paced checkpoint rewrites the manifest again
        self.lines_written = 0  # whole lines, so far

    def write(self, line: dict[str, Any]) -> None:
        self.write_text(_line(line))

    def write_lines(self, lines: Iterable[str]) -> None:
        """Lines already JSON (a shard's, as its writer made them), each written on its own."""
        if self._handle is None:
            for text in lines:
                self.write_text(text)
            return
        with self.out.failing("write", MANIFEST):
            for text in lines:
                self._append(text.encode("utf-8"))
                self.lines_written += 1

    def write_text(self, text: str) -> None:
        """One line, JSON text ending in a newline."""
        if self._handle is None:
            self._text.append(text)
            self._waiting = True
            self.lines_written += 1
            return
        # A killed process leaves the line in the file; a lost machine, up to the last checkpoint.
        with self.out.failing("write", MANIFEST):
            self._append(text.encode("utf-8"))
        self.lines_written += 1

    def _append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:  # a full disk may take part of a line, then refuse the rest with ENOSPC
            view = view[self._handle.write(view) :]

    def checkpoint(self, paced: bool = False) -> None:
        """Make every line written so far durable (``paced``, on object storage: unless the last rewrite was recent)."""
        if self._handle is not None:
            with self.out.failing("write", MANIFEST):
                os.fsync(self._handle.fileno())
        elif self._waiting and not (paced and time.monotonic() < self._next_rewrite):
            started = time.monotonic()
            self._text = ["".join(self._text)]
            self.out.write_bytes(self._text[0].encode("utf-8"), MANIFEST)
            self._waiting = False
            took = time.monotonic() - started
            self._next_rewrite = started + took + max(CHECKPOINT_SECONDS, REWRITE_SHARE * took)

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
