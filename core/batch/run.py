"""``run_batch``: inputs in, one engine's results written in input order, the report at the end.

At most a window of files is in flight and a part is written as soon as it is full,
so memory holds a few files' nodes, never the corpus. A Ctrl-C or a SIGTERM waits while a part
and its manifest lines are written, then stops the workers and leaves the output consistent; so
does a write the disk refuses, which also removes the temporary file it left.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from core.batch.dataset import NODES, PART_BYTES, PART_ROWS, PartLimits
from core.batch.ids import id_salt
from core.batch.inputs import expand_inputs
from core.batch.local_engine import run_local
from core.batch.manifest import MANIFEST, MANIFEST_VERSION, Manifest
from core.batch.ray_engine import ray_connected, run_ray
from core.batch.resume import prepare_output
from core.batch.shards import ShardRecorder, plan_shards, work_spec
from core.batch.storage import OutputStore, OutputWriteError
from core.errors import ConfigError
from core.runtime.forking import CORES

ENGINES = ("local", "ray")


@dataclass
class Progress:
    """What the progress line shows: files and bytes done of the work to do, elapsed time, what is left.

    ``bytes_total`` is the input size of the files this run processes (files kept by ``--resume`` are
    counted apart, in ``files_skipped``), so the rate and the time left are this run's.
    """

    files_total: int
    files_done: int = 0
    files_skipped: int = 0
    failed: int = 0
    nodes: int = 0
    bytes: int = 0
    bytes_total: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def seconds(self) -> float:
        return max(time.monotonic() - self.started, 1e-9)

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.seconds

    @property
    def seconds_left(self) -> float | None:
        """The time left at the rate so far, by bytes (None before the first file's bytes are in)."""
        if self.bytes <= 0:
            return None
        return max(self.bytes_total - self.bytes, 0) * self.seconds / self.bytes


@dataclass
class BatchResult:
    out: str  # as given: a local path or a URI
    inputs: int
    processed: int
    skipped: int
    failed: int
    nodes: int
    bytes: int
    seconds: float
    parts: list[str]
    interrupted: bool
    report: dict[str, Any]  # report.json's data but its documents rows (report.json holds them)


def run_batch(
    inputs: Sequence[str],
    config: Any,
    out: str | os.PathLike[str],
    *,
    filesystem: Any = None,
    list_files: Sequence[str] = (),
    engine: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    embed: str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    content_ids: bool = False,
    metrics: bool = False,
    part_rows: int = PART_ROWS,
    part_bytes: int = PART_BYTES,
    shard_bytes: int | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> BatchResult:
    """Apply ``config`` to every input; write the node dataset, the manifest and the report under ``out``.

    ``out``: a local folder, or a URI ``pyarrow.fs.FileSystem.from_uri`` takes (``s3://bucket/prefix``,
    ``gs://...``, ``file:///...``); or, with ``filesystem`` (a ``pyarrow.fs.FileSystem``), a path in it.

    ``embed``: ``"default"`` (the packaged model) or a model path adds an ``embedding`` column.
    ``content_ids``: document (and node) ids from the text alone, so identical contents share them;
    by default they also hash the file's path inside its input root (:mod:`core.batch.ids`).
    ``metrics`` (``--metrics``): each node's model tokens (``embed_tokens``) and lint ``flags`` as columns,
    and each input's :class:`core.measure.metrics.ChunkMetrics` in the manifest and the report; without it a
    batch pays for loading, splitting and writing only (the sizes in characters and the splitter's unit).
    ``shard_bytes``: input bytes a shard (the unit of work, with parts of its own) holds at most;
    default :func:`core.batch.shards.shard_budget` of the corpus's size.
    Workers write the parts (:mod:`core.batch.shards`) to a path or URI; to a ``filesystem`` object
    (which may live in this process only) the driver writes them, the same bytes.
    Ray is joined (``ray_address``, else ``RAY_ADDRESS``) or started before anything is written.
    A KeyboardInterrupt (Ctrl-C, or SIGTERM in the main thread) stops the workers, writes what has
    arrived, records it, writes the report (``complete: false``) and raises :class:`BatchInterrupted`.
    A write the output refuses (read-only, full disk) raises
    :class:`~core.batch.storage.OutputWriteError` once the manifest is closed and the temporary files
    removed: ``resume=True`` later goes on from what the manifest records.
    """
    from core.batch import report as batch_report

    requested_workers = workers
    workers = _checked_workers(engine, workers)
    store = OutputStore.at(out, filesystem)
    files = expand_inputs(inputs, list_files)
    if not files:
        raise ConfigError("no input files (give files, directories, globs or @LIST)")
    config_json = config.to_json(indent=None)
    header = _header(config, config_json, embed, content_ids=content_ids, metrics=metrics)
    # Ray is connected first (a failed connect writes nothing); a write the output refuses, wherever it comes,
    # leaves no temporary file behind.
    with _engine(engine, requested_workers, ray_address) as run_shards, _temporaries_removed_on_failure(store):
        done, next_shard = prepare_output(store, header, files, resume=resume, overwrite=overwrite)
        todo = [entry for entry in files if entry.path not in done or entry.problem]
        state = Progress(
            files_total=len(files), files_skipped=len(files) - len(todo), bytes_total=sum(f.size for f in todo)
        )
        manifest = Manifest(store)
        if not store.size(MANIFEST):
            manifest.write(header)
            manifest.checkpoint()
        limits = PartLimits.of(part_rows, part_bytes)
        writer = ShardRecorder(store, manifest, limits, next_shard)
        spec = work_spec(config_json, embed or "", store, filesystem is None, limits)
        tasks = _tasks(todo, content_ids=content_ids, metrics=metrics)
        results = run_shards(plan_shards(tasks, next_shard, limits.bytes, shard_bytes), spec)
        with _DeferredInterrupt() as guard:
            interrupted, failure = _record_results(results, writer, manifest, state, progress, guard)
            if failure is not None:
                # The manifest holds what is in place; no more is written but a best-effort report, and no
                # temporary file stays behind (below): a later --resume goes on from the manifest.
                _report_if_possible(batch_report.write_report, store, config, engine, workers, state)
                raise failure
            if progress is not None and not interrupted:
                progress(state)
            report = batch_report.write_report(
                store,
                config,
                run=_run_record(engine, workers, state, complete=not interrupted and state.files_done == len(todo)),
                known=(writer.part_sizes_of, writer.part_sizes),
            )
    result = BatchResult(
        out=str(store),
        inputs=len(files),
        processed=state.files_done,
        skipped=state.files_skipped,
        failed=state.failed,
        nodes=state.nodes,
        bytes=state.bytes,
        seconds=state.seconds,
        parts=writer.parts_written,
        interrupted=interrupted,
        report=report,
    )
    if interrupted:
        raise BatchInterrupted(result, guard.signal)
    return result


def _checked_workers(engine: str, workers: int | None) -> int:
    """The number of workers to run (every core by default); a ConfigError for an unknown engine or no worker."""
    if engine not in ENGINES:
        raise ConfigError(f"--engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    workers = workers or CORES
    if workers < 1:
        raise ConfigError("--workers must be at least 1")
    return workers


def _header(config: Any, config_json: str, embed: str | None, *, content_ids: bool, metrics: bool) -> dict[str, Any]:
    """The manifest's header: what a resumed run must share with the run it continues."""
    return {
        "kind": "header",
        "chunkscope_batch": MANIFEST_VERSION,
        "config_key": config.key(),
        "config": json.loads(config_json),
        "embed": embed or "",
        # Document ids: from the text and the path inside the input root, or (content_ids) the text alone.
        "ids": "content" if content_ids else "path",
        # Measured (--metrics): two more columns, so a resumed run must measure the same way.
        "metrics": metrics,
    }


def _tasks(todo: Sequence[Any], *, content_ids: bool, metrics: bool) -> list[dict[str, Any]]:
    """One task per input to process (:func:`core.batch.work.process_file`'s ``task``), numbered in input order."""
    return [
        {
            "index": i,
            "source": f.source,
            "path": f.path,
            "problem": f.problem,
            "bytes": f.size,
            "id_salt": id_salt(f.id_key, content_ids=content_ids),
            "metrics": metrics,
        }
        for i, f in enumerate(todo)
    ]


def _record_results(
    results: Iterator[Any],
    writer: ShardRecorder,
    manifest: Manifest,
    state: Progress,
    progress: Callable[[Progress], None] | None,
    guard: _DeferredInterrupt,
) -> tuple[bool, OutputWriteError | None]:
    """Write each shard's record as it arrives, shielded from Ctrl-C; then stop the workers and close the manifest.

    Returns whether the run was interrupted, and the write the output refused (if one was).
    """
    interrupted = False
    failure: OutputWriteError | None = None
    last_shown = 0.0
    try:
        for record in results:
            with guard.shielded():
                counts = writer.add(record)
            state.files_done += counts["files"]
            state.failed += counts["failed"]
            state.nodes += counts["nodes"]
            state.bytes += counts["bytes"]
            if progress is not None and time.monotonic() - last_shown >= 0.2:
                last_shown = time.monotonic()
                progress(state)
    except KeyboardInterrupt:
        interrupted = True
    except OutputWriteError as exc:
        failure = exc
    finally:
        # From here on a Ctrl-C or SIGTERM is held back (and then dropped): the workers stop, what arrived
        # is written.
        guard.critical = True
        closer = getattr(results, "close", None)
        if closer is not None:
            closer()
        if interrupted or failure is not None:
            writer.discard_unrecorded()  # the parts of shards the workers left halfway
        failure = _finish(manifest, failure)
    return interrupted, failure


@contextmanager
def _engine(engine: str, workers: int | None, address: str | None) -> Iterator[Callable[..., Iterator[Any]]]:
    """``run_shards(shards, spec)`` of the engine; Ray connected on entry (a failed connect raises before any write)."""
    if engine == "local":
        yield lambda shards, spec: run_local(shards, spec, workers or CORES)
        return
    # Without --workers, Ray uses every CPU of the Ray it runs on (a cluster's, joined).
    with ray_connected(workers, address):
        yield lambda shards, spec: run_ray(shards, spec, workers)


@contextmanager
def _temporaries_removed_on_failure(store: OutputStore) -> Iterator[None]:
    try:
        yield
    except OutputWriteError:
        store.discard_temporaries(NODES)
        raise


def _finish(manifest: Manifest, failure: OutputWriteError | None) -> OutputWriteError | None:
    """Close the manifest; after a failed write, only close it. Returns the failure."""
    if failure is None:
        try:
            manifest.close()
        except OutputWriteError as exc:
            failure = exc
    manifest.abandon()
    return failure


def _run_record(engine: str, workers: int, state: Progress, *, complete: bool) -> dict[str, Any]:
    """The report's ``run`` section."""
    return {
        "engine": engine,
        "workers": workers,
        "seconds": round(state.seconds, 3),
        "processed": state.files_done,
        "skipped": state.files_skipped,
        "bytes": state.bytes,
        "complete": complete,
    }


def _report_if_possible(write_report: Callable[..., Any], store: OutputStore, config: Any, *run: Any) -> None:
    """The report of what the manifest holds, marked incomplete, when the output still takes it."""
    try:
        write_report(store, config, run=_run_record(*run, complete=False))
    except OutputWriteError:
        pass  # the same disk that refused a part: the manifest alone records the run


class _DeferredInterrupt:
    """Ctrl-C (SIGINT) and SIGTERM as a KeyboardInterrupt, except inside :meth:`shielded` (writing a part and
    its manifest lines), where it waits for the end of the block. ``signal`` is the one that stopped the run.
    Only the main thread receives signals: elsewhere (a server's worker thread) this changes nothing."""

    def __init__(self) -> None:
        import signal

        self.critical = False
        self.pending = False
        self.signal = signal.SIGINT
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _DeferredInterrupt:
        import signal

        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                previous = signal.getsignal(number)
                if previous is not signal.SIG_IGN:  # a background job ignores Ctrl-C: so do we
                    self._previous[number] = previous
                    signal.signal(number, self._handle)
        return self

    def __exit__(self, *_: Any) -> None:
        import signal

        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous.clear()

    def _handle(self, signum: int, frame: Any) -> None:
        import signal

        if not self.pending:
            self.signal = signal.Signals(signum)
        if self.critical:
            self.pending = True
            return
        raise KeyboardInterrupt

    @contextmanager
    def shielded(self) -> Iterator[None]:
        self.critical = True
        try:
            yield
        finally:
            self.critical = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a batch, after the output was left consistent; ``result`` says how far it got.

    ``signal``: SIGINT or SIGTERM; the CLI exits with 128 plus its number (130, 143), as a shell reports it.
    """

    def __init__(self, result: BatchResult, signal: int | None = None) -> None:
        import signal as signals

        super().__init__("interrupted")
        self.result = result
        self.signal = signals.Signals(signal or signals.SIGINT)
