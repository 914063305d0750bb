"""What the report reads of the nodes: counts per value of the parts' size columns and per name of their flags."""

from __future__ import annotations

from typing import Any

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
