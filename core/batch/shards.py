"""Shards: the unit of work and of output. Consecutive inputs, planned from their sizes; each one's parts written by whoever runs it.

The driver cuts the inputs still to do into shards of about :func:`shard_budget` bytes of
input (from the files' sizes and the corpus's total, never from the worker count), numbers
them, and hands a shard to a worker as one task. The worker runs
:func:`core.batch.work.process_file` on each file in turn and writes the shard's part files
itself (:func:`core.batch.dataset.write_shard`); what comes back is the shard's manifest lines
and a few counts, so the driver's work per megabyte is recording lines, not moving nodes.
Both engines and every worker count cut the same shards and write the same bytes.

An output the workers cannot reach (a ``filesystem`` object the caller passed, e.g. an
in-memory one) is written by the driver: the workers then return the files' results whole and
:class:`ShardRecorder` writes them with the same code, so the bytes are the same.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from core.batch.dataset import NODES, PART_PREFIX, PartLimits, part_shard, shard_error, write_shard
from core.batch.manifest import Manifest
from core.batch.part_sizes import PartSizes
from core.batch.storage import OutputStore, OutputWriteError
from core.batch.work import process_file

# A shard holds about total / SHARD_COUNT bytes of input: enough shards to spread a corpus over a
# few hundred workers, each between SHARD_MIN_BYTES (below that, a shard's fixed costs, a part file and
# a task, show) and a quarter of a part (a shard's nodes and their views are ~3-4x its input: one part).
SHARD_COUNT = 1024
SHARD_MIN_BYTES = 1024 * 1024
# And at most this many files, so a shard of tiny files is not one huge task.
SHARD_FILES = 1024


def shard_budget(total_bytes: int, part_bytes: int) -> int:
    """Input bytes a shard holds at most (a larger file is a shard of its own)."""
    return max(SHARD_MIN_BYTES, min(total_bytes // SHARD_COUNT, part_bytes // 4))


def plan_shards(
    tasks: Sequence[dict[str, Any]], first_shard: int, part_bytes: int, budget: int | None = None
) -> list[dict[str, Any]]:
    """The tasks cut into shards of consecutive inputs: ``{"shard": number, "bytes": input bytes, "tasks": [...]}``.

    A task's size is its ``bytes``, as listed (:class:`core.batch.inputs.Input`): 0 for a file that cannot be read.
    ``budget`` (bytes of input a shard) defaults to :func:`shard_budget` of the tasks' total.
    """
    sizes = [task["bytes"] for task in tasks]
    budget = budget or shard_budget(sum(sizes), part_bytes)
    shards: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for task, size in zip(tasks, sizes, strict=True):
        if current is None or current["bytes"] + size > budget or len(current["tasks"]) >= SHARD_FILES:
            if current is not None and current["tasks"]:
                shards.append(current)
            current = {"shard": first_shard + len(shards), "bytes": 0, "tasks": []}
        current["tasks"].append(task)
        current["bytes"] += size
    if current is not None and current["tasks"]:
        shards.append(current)
    return shards


def work_spec(config: str, embed: str, store: OutputStore, reachable: bool, limits: PartLimits) -> dict[str, Any]:
    """What every shard of a run shares: the configuration, the model, where parts go (None: to the driver)."""
    out = None
    if reachable:
        out = {"location": store.shown if "://" in store.shown else store.base, "shown": store.shown}
    return {"config": config, "embed": embed, "out": out, "limits": [limits.rows, limits.bytes, limits.row_group_bytes]}


_STORES: dict[str, OutputStore] = {}  # in a worker: the output, opened once


def process_shard(shard: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """Run a shard's files in order and write its parts; its record (manifest lines, parts, counts).

    Without a reachable output (``spec["out"]`` None) the files' results come back whole instead.
    """
    if spec["out"] is None:
        results = [process_file(task, spec["config"], spec["embed"]) for task in shard["tasks"]]
        return {"shard": shard["shard"], "results": results}
    # Written here: each file's nodes stay a pyarrow.Table in this process (no IPC stream written and read back).
    tables = (process_file(task, spec["config"], spec["embed"], stream=False) for task in shard["tasks"])
    return write_shard(_store(spec["out"]), shard["shard"], PartLimits(*spec["limits"]), tables)


def _store(out: dict[str, str]) -> OutputStore:
    store = _STORES.get(out["location"])
    if store is None:
        store = OutputStore.at(out["location"])
        store.shown = out["shown"]
        _STORES[out["location"]] = store
    return store


def recovered(shard: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    """A shard whose worker died, its files run again one by one: written by the driver, over what it left."""
    return {"shard": shard["shard"], "results": results, "recovered": True}


_PART_LINE = '{"kind": "part"'


class ShardRecorder:
    """The driver's side: each shard's record, in shard order, appended to the manifest.

    The lines of a shard go in under one checkpoint (one sync a shard). A shard whose
    results came back whole (an output the workers cannot reach, or a shard recovered file
    by file) is written here, with the code a worker runs.
    """

    def __init__(self, out: OutputStore, manifest: Manifest, limits: PartLimits, first_shard: int) -> None:
        self.out = out
        self.manifest = manifest
        self.limits = limits
        self.first_shard = first_shard
        self.parts_written: list[str] = []
        # What the report reads of the recorded parts, from the shards' records: it reads none of them back.
        self.part_sizes = PartSizes()
        self.part_sizes_of: set[str] = set()  # the parts counted in part_sizes

    def add(self, record: dict[str, Any]) -> dict[str, int]:
        """Record one shard; returns its counts. A write its shard was refused is raised once what it wrote is recorded."""
        if "results" in record:
            if record.get("recovered"):
                self._discard_shard(record["shard"])  # what the dead worker wrote before it died
            record = write_shard(self.out, record["shard"], self.limits, record["results"])
        lines, before = record["lines"], self.manifest.lines_written
        try:
            self.manifest.write_lines(lines)
        finally:  # a part whose line is in the manifest is recorded: a stop from here on keeps its file
            written = lines[: self.manifest.lines_written - before]
            recorded = [json.loads(line)["part"] for line in written if line.startswith(_PART_LINE)]
            self.parts_written.extend(recorded)
            sizes = record.get("sizes") or {}
            for name in recorded:
                if name in sizes:
                    self.part_sizes.add(PartSizes.from_record(sizes[name]))
                    self.part_sizes_of.add(name)
        failure = shard_error(record)
        # After a refused part, the lines of what is in place are made durable now (object storage paces them).
        self.manifest.checkpoint(paced=failure is None)
        if failure is not None:
            raise failure
        return record["counts"]

    def _discard_shard(self, shard: int) -> None:
        for name in self.out.files(NODES, f"{PART_PREFIX}{shard:05d}-", ".parquet"):
            self.out.delete(NODES, name)

    def discard_unrecorded(self) -> None:
        """Remove this run's part files no manifest line records (shards stopped halfway), and files aside.

        Called once the workers are stopped. Best effort: ``--resume`` removes what is left.
        """
        recorded = set(self.parts_written)
        self.out.discard_temporaries(NODES)
        try:
            names = self.out.files(NODES, PART_PREFIX, ".parquet")
        except OutputWriteError:
            return
        for name in names:
            if name not in recorded and part_shard(name) >= self.first_shard:
                try:
                    self.out.delete(NODES, name)
                except OutputWriteError:
                    pass


