"""The node dataset: part files of bounded size, written by whoever runs a shard.

The inputs are cut into shards (:mod:`core.batch.shards`): consecutive inputs, planned from
their sizes alone. A shard's rows go to ``OUT/nodes/part-SSSSS-KKKK.parquet`` (shard ``S``,
its ``K``-th part): a part is cut at ``part_rows`` rows or ``part_bytes`` bytes of text,
whichever comes first, so where parts end depends on the inputs and the configuration only,
never on the engine, the worker count or which worker wrote them. Whoever runs a shard writes
its parts (:class:`ShardWriter`: a worker, or the driver for an output the workers cannot reach)
and returns the manifest lines that record them; the driver appends those lines to
``OUT/manifest.jsonl`` (:mod:`core.batch.manifest`) in shard order (:class:`ShardRecorder`). A part is written aside and moved
in place before its ``part`` line exists; an ``input`` line follows once all of that input's
rows are in recorded parts. ``OUT`` is an :class:`core.batch.storage.OutputStore` (a local
folder or object storage).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.batch.arrow_columns import table_from
from core.batch.manifest import manifest_line
from core.batch.part_sizes import PartSizes
from core.batch.storage import OutputStore, OutputWriteError

# The node dataset has a folder of its own, so pyarrow, pandas or Ray read OUT/nodes as one dataset.
NODES = "nodes"
PART_PREFIX = "part-"
PART_ROWS = 100_000
PART_BYTES = 128 * 1024 * 1024
# A part is written as row groups of about this much text while its rows arrive, so a writer holds
# the compressed part so far and less than this of rows not yet compressed.
ROW_GROUP_BYTES = 8 * 1024 * 1024


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
        self.lines.append(manifest_line({**line, "inputs": inputs}))
        self.parts.append(name)

    def _record_done(self) -> None:
        while self._waiting and self._waiting[0].rows_left == 0:
            waiting = self._waiting.popleft()
            self.lines.append(manifest_line({**waiting.entry, "parts": waiting.parts}))


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
