"""Corpus batch: one PipelineConfig over many files; nodes to a Parquet dataset, statistics to a report.

The work for one file (read, hash, load, split, size; with ``metrics``, measure: model tokens,
lint flags, chunk metrics; optionally embed) is one function, :func:`core.batch.work.process_file`, that takes and returns plain values.
The inputs are cut into shards planned from their sizes (:mod:`core.batch.shards`); a
worker runs a shard's files and writes the shard's part files itself. An engine only
decides where shards run: ``local`` (a process pool over this machine's cores,
:mod:`core.batch.local_engine`) or ``ray`` (Ray actors on a local Ray or a cluster,
:mod:`core.batch.ray_engine`). Shards and where their parts end depend on the inputs
only, so every engine and worker count writes the same bytes; the driver plans, and
appends each shard's manifest lines in shard order.

Output: ``OUT/nodes/part-SSSSS-KKKK.parquet`` (the dataset: read the folder with
pyarrow, pandas or Ray), ``OUT/manifest.jsonl``, ``OUT/report.json`` and
``OUT/report.html`` (:mod:`core.batch.report`). ``OUT`` is a local folder or any
pyarrow filesystem URI (``s3://``, ``gs://``, ``file://``; :mod:`core.batch.storage`).

The manifest is the record of what is written: a header (the configuration),
then a ``part`` line after each part file is in place (written aside, then
renamed), and an ``input`` line (path, size, mtime, sha256, status, metrics)
once every row of that input is in written parts. An interruption at any point
leaves it consistent: ``--resume`` (:mod:`core.batch.resume`) keeps the inputs
whose line is there and whose file is unchanged, takes the rows of anything else
(a changed, removed or half-written input) out of the parts, and does the rest.

Modules, in the order the data flows: ``inputs`` (paths, globs, lists) → ``work``
(one file; ``ids``: its documents' ids) → ``shards`` (a shard's files, its parts) → ``local_engine`` /
``ray_engine`` → ``dataset`` (parts and manifest), ``resume`` → ``run`` (``run_batch``, Ctrl-C and SIGTERM) → ``report``;
``storage`` is where the output lives (and the one error a refused write raises).
``llm_plan`` is ``--plan``: each file split as a worker would, the LLM extractors' prompts counted, none sent.
"""

from __future__ import annotations

from core.batch.dataset import NODES, PART_BYTES, PART_ROWS
from core.batch.inputs import Input, expand_inputs
from core.batch.manifest import MANIFEST, read_manifest
from core.batch.run import ENGINES, BatchInterrupted, BatchResult, Progress, run_batch
from core.batch.storage import OutputWriteError
from core.batch.work import node_schema, process_file

__all__ = [
    "ENGINES",
    "MANIFEST",
    "NODES",
    "PART_BYTES",
    "PART_ROWS",
    "BatchInterrupted",
    "BatchResult",
    "Input",
    "OutputWriteError",
    "Progress",
    "expand_inputs",
    "node_schema",
    "process_file",
    "read_manifest",
    "run_batch",
]
