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
# Bytes a row costs beyond its strings (ids, numbers, offsets): only for cutting parts.
_ROW_OVERHEAD = 64


@dataclass
class _Waiting:
    entry: dict[str, Any]
    rows_left: int
    parts: list[str] = field(default_factory=list)


class DatasetWriter:
    """Results in input order -> part files of bounded size, and the manifest lines that record them."""

    def __init__(self, out: OutputStore, manifest: Manifest, next_part: int, part_rows: int, part_bytes: int) -> None:
        self.out = out
        self.manifest = manifest
        self.next_part = next_part
        self.part_rows = max(1, part_rows)
        self.part_bytes = max(1, part_bytes)
        self._tables: list[Any] = []
        self._sizes: list[Any] = []  # per-row byte estimates (numpy), alongside the buffered tables
        self._rows = 0
        self._bytes = 0
        self._waiting: deque[_Waiting] = deque()
        self.parts_written: list[str] = []

    def add(self, result: dict[str, Any]) -> dict[str, Any]:
        """Buffer one file's result; write every part that is full. Returns its manifest entry."""
        entry = {key: value for key, value in result.items() if key not in ("table", "index")}
        entry["metrics"] = json.loads(entry["metrics"]) if entry.get("metrics") else None
        entry["kind"] = "input"
        rows = 0
        if result["status"] == "ok" and result["nodes"]:
            table = table_from(result)
            sizes = _row_sizes(table)
            rows = table.num_rows
            self._tables.append(table)
            self._sizes.append(sizes)
            self._rows += rows
            self._bytes += int(sizes.sum())
        self._waiting.append(_Waiting(entry, rows))
        flushed = False
        while self._rows >= self.part_rows or self._bytes >= self.part_bytes:
            self._flush(self._cut())
            flushed = True
        self._record_done()
        if flushed:
            self.manifest.checkpoint()
        return entry

    def finish(self) -> None:
        """Write what is buffered (every buffered input has all its rows here) and record it."""
        while self._rows:
            self._flush(min(self._rows, self._cut()))
        self._record_done()
        self.manifest.checkpoint()

    def _cut(self) -> int:
        import numpy as np

        sizes = np.concatenate(self._sizes)
        fit = int(np.searchsorted(np.cumsum(sizes), self.part_bytes, side="right"))
        return max(1, min(self.part_rows, fit, self._rows))

    def _flush(self, count: int) -> None:
        import numpy as np
        import pyarrow as pa

        table = pa.concat_tables(self._tables) if len(self._tables) > 1 else self._tables[0]
        sizes = np.concatenate(self._sizes)
        part, rest = table.slice(0, count).combine_chunks(), table.slice(count)
        self._tables = [rest] if rest.num_rows else []
        self._sizes = [sizes[count:]] if rest.num_rows else []
        self._rows -= count
        self._bytes = int(sizes[count:].sum())

        name = f"{PART_PREFIX}{self.next_part:05d}.parquet"
        self.next_part += 1
        # In memory first (the part is compressed, a fraction of the rows already held): hashed without
        # reading it back from object storage, then written in one piece.
        data = parquet_bytes(part)
        digest = hashlib.sha256(data).hexdigest()
        self.out.write_bytes(data, NODES, name)

        inputs = []
        left = count
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
        self.manifest.write({"kind": "part", "part": name, "rows": count, "sha256": digest, "inputs": inputs})
        self.parts_written.append(name)

    def _record_done(self) -> None:
        while self._waiting and self._waiting[0].rows_left == 0:
            waiting = self._waiting.popleft()
            self.manifest.write({**waiting.entry, "parts": waiting.parts})


def _row_sizes(table: Any) -> Any:
    import numpy as np
    import pyarrow.compute as pc

    sizes = np.full(table.num_rows, _ROW_OVERHEAD, dtype=np.int64)
    for column in ("text", "llm_view", "embed_view", "metadata", "relationships", "id", "source_path"):
        sizes += pc.binary_length(table.column(column)).to_numpy(zero_copy_only=False).astype(np.int64)
    if "embedding" in table.column_names:
        sizes += 4 * table.schema.field("embedding").type.list_size
    return sizes


def parquet_bytes(table: Any) -> bytes:
    """The table as the bytes of one zstd Parquet file (what every part file is)."""
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

    On a local disk each line is flushed and synced before the next step. Object
    storage cannot append: there the lines wait for :meth:`checkpoint` (after each
    part and at the end), which rewrites the whole manifest, so a part and the input
    lines it completes appear together; a run killed in between loses only lines
    whose inputs ``--resume`` then does again.
    """

    def __init__(self, out: OutputStore) -> None:
        self.out = out
        self._handle = open(out.local_path(MANIFEST), "a", encoding="utf-8") if out.local else None  # noqa: SIM115
        self._text: list[str] = [] if out.local else [read_text(out, MANIFEST)]
        self._waiting = False

    def write(self, line: dict[str, Any]) -> None:
        text = json.dumps(line, ensure_ascii=False, default=str) + "\n"
        if self._handle is None:
            self._text.append(text)
            self._waiting = True
            return
        self._handle.write(text)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def checkpoint(self) -> None:
        """Make every line written so far durable (a no-op on a local disk, where each already is)."""
        if self._handle is None and self._waiting:
            self._text = ["".join(self._text)]
            self.out.write_bytes(self._text[0].encode("utf-8"), MANIFEST)
            self._waiting = False

    def close(self) -> None:
        self.checkpoint()
        if self._handle is not None:
            self._handle.close()


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
