"""The node dataset and its record: part files of bounded size and the manifest that lists them.

``OUT/nodes/part-NNNNN.parquet`` holds consecutive rows of consecutive inputs; a part
is cut at ``part_rows`` rows or ``part_bytes`` bytes of text, whichever comes first,
which depends on the inputs and the configuration only (so both engines write the
same bytes). A part is written aside and renamed, then recorded by a ``part`` line
in ``OUT/manifest.jsonl``; an ``input`` line follows once all of that input's rows
are in recorded parts.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

    def __init__(self, out: Path, manifest: Any, next_part: int, part_rows: int, part_bytes: int) -> None:
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
        while self._rows >= self.part_rows or self._bytes >= self.part_bytes:
            self._flush(self._cut())
        self._record_done()
        return entry

    def finish(self) -> None:
        """Write what is buffered (every buffered input has all its rows here) and record it."""
        while self._rows:
            self._flush(min(self._rows, self._cut()))
        self._record_done()

    def _cut(self) -> int:
        import numpy as np

        sizes = np.concatenate(self._sizes)
        fit = int(np.searchsorted(np.cumsum(sizes), self.part_bytes, side="right"))
        return max(1, min(self.part_rows, fit, self._rows))

    def _flush(self, count: int) -> None:
        import numpy as np
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.concat_tables(self._tables) if len(self._tables) > 1 else self._tables[0]
        sizes = np.concatenate(self._sizes)
        part, rest = table.slice(0, count).combine_chunks(), table.slice(count)
        self._tables = [rest] if rest.num_rows else []
        self._sizes = [sizes[count:]] if rest.num_rows else []
        self._rows -= count
        self._bytes = int(sizes[count:].sum())

        name = f"{PART_PREFIX}{self.next_part:05d}.parquet"
        self.next_part += 1
        temporary = self.out / f".{name}.tmp"
        pq.write_table(part, temporary, compression="zstd")
        digest = file_sha256(temporary)
        os.replace(temporary, self.out / name)

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


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Manifest:
    """``manifest.jsonl``: one JSON object a line, each flushed and synced before the next step."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def write(self, line: dict[str, Any]) -> None:
        self._handle.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


def read_manifest(path: Path) -> list[dict[str, Any]]:
    """The manifest's lines; a torn last line (the process was killed mid-write) is ignored."""
    lines = []
    if not path.is_file():
        return lines
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            lines.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return lines
