"""Corpus batch: one PipelineConfig over many files; nodes to a Parquet dataset, statistics to a report.

The work for one file (read, hash, load, split, measure, optionally embed) is one
function, :func:`process_file`, that takes and returns plain values. An engine only
decides where it runs: ``local`` (a process pool over this machine's cores) or
``ray`` (a Ray Data pipeline on a local Ray or a cluster). Results come back in
input order and this process alone writes the dataset, so both engines write the
same bytes: a part file holds consecutive rows of consecutive inputs and is cut
at ``part_rows`` rows or ``part_bytes`` bytes of text (whichever comes first),
which depends on the inputs and the configuration only.

At most ``window`` files are in flight, and a part is written as soon as it is
full, so memory holds a few files' nodes, never the corpus.

Output: ``OUT/nodes/part-NNNNN.parquet`` (the dataset: read the folder with
pyarrow, pandas or Ray), ``OUT/manifest.jsonl``, ``OUT/report.json`` and
``OUT/report.html`` (:mod:`core.batch_report`).

The manifest is the record of what is written: a header (the configuration),
then a ``part`` line after each part file is in place (written aside, then
renamed), and an ``input`` line (path, size, mtime, sha256, status, metrics)
once every row of that input is in written parts. An interruption at any point
leaves it consistent: ``--resume`` keeps the inputs whose line is there and
whose file is unchanged, takes the rows of anything else (a changed, removed or
half-written input) out of the parts, and does the rest.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import ChunkScopeError, ConfigError
from core.forking import CORES

MANIFEST = "manifest.jsonl"
# The node dataset has a folder of its own, so pyarrow, pandas or Ray read OUT/nodes as one dataset.
NODES = "nodes"
PART_PREFIX = "part-"
PART_ROWS = 100_000
PART_BYTES = 128 * 1024 * 1024
ENGINES = ("local", "ray")
MANIFEST_VERSION = 1
# Bytes a row costs beyond its strings (ids, numbers, offsets): only for cutting parts.
_ROW_OVERHEAD = 64
_REASON_CHARS = 300


# ----------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Input:
    """One file to process: ``source`` as the user named it (it goes into the dataset), ``path`` absolute."""

    source: str
    path: str
    problem: str = ""  # set when the input cannot even be listed (a glob with no match, a missing list)


def expand_inputs(items: Sequence[str], list_files: Sequence[str] = ()) -> list[Input]:
    """Files from paths, directories (recursive, supported files only), globs and lists of paths.

    A list is ``@FILE`` (or an item in ``list_files``, or any ``.parquet`` item):
    a text file with one path per line (blank lines and ``#`` comments skipped)
    or a Parquet file with a ``path`` column (else its only string column).
    Relative paths in a list are relative to the list's folder. Order: as given,
    a directory's or glob's files sorted; a file named twice is processed once.
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
    return unique


def _supported() -> set[str]:
    from core.loaders import LOADERS

    return {ext for cls in LOADERS for ext in cls.extensions}


def _expand(item: str, base: Path | None = None) -> list[Input]:
    path = Path(item) if base is None or Path(item).is_absolute() else base / item
    source = str(path) if base is not None else item
    if path.is_dir():
        supported = _supported()
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in supported)
        return [Input(str(p), os.path.abspath(p)) for p in files]
    if glob.has_magic(str(path)):
        matches = sorted(p for p in glob.glob(str(path), recursive=True) if os.path.isfile(p))
        if not matches:
            return [Input(source, os.path.abspath(path), "no file matches this pattern")]
        return [Input(p, os.path.abspath(p)) for p in matches]
    return [Input(source, os.path.abspath(path))]


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
        return [Input(list_path, os.path.abspath(path), f"list of paths cannot be read ({_one_line(exc)})")]
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


# ------------------------------------------------------------- one file's work


def node_schema(embed_dimension: int | None = None) -> Any:
    """The dataset's columns. Metadata and relationships are JSON text (as in the app's Parquet export)."""
    import pyarrow as pa

    fields = [
        ("id", pa.string()),
        ("doc_id", pa.string()),
        ("source_path", pa.string()),
        ("node_index", pa.int32()),  # the node's place among its document's nodes (the #3 of its id)
        ("start_char", pa.int64()),
        ("end_char", pa.int64()),
        ("text", pa.string()),
        ("characters", pa.int32()),
        ("tokens", pa.int32()),  # in the splitter's size unit
        ("embed_tokens", pa.int32()),  # model tokens of the EMBED view (what the embedding window holds)
        ("flags", pa.list_(pa.string())),  # lint: mid-sentence, over-window, over-limit, tiny, duplicate
        ("metadata", pa.string()),
        ("relationships", pa.string()),
        ("llm_view", pa.string()),
        ("embed_view", pa.string()),
    ]
    if embed_dimension:
        fields.append(("embedding", pa.list_(pa.float32(), embed_dimension)))
    return pa.schema(fields)


_WORKER: dict[str, Any] = {}


def _worker_config(config_json: str) -> Any:
    from core.config import PipelineConfig

    cached = _WORKER.get("config")
    if cached is None or cached[0] != config_json:
        cached = (config_json, PipelineConfig.from_json(config_json))
        _WORKER["config"] = cached
    return cached[1]


def process_file(task: dict[str, Any], config: str, embed: str = "") -> dict[str, Any]:
    """Read, load, split, measure (and embed) one file; every failure becomes a one-line reason.

    ``task``: ``index``, ``source``, ``path``, ``problem``; ``config``: the
    PipelineConfig's JSON (one per run, not per task: a million tasks would carry
    a million copies); ``embed``: a model path, ``"default"`` or ``""``. Returns plain
    values only (the nodes as an Arrow IPC stream in ``table``), so a process pool
    and Ray Data carry it alike.
    """
    started = time.perf_counter()
    result: dict[str, Any] = {
        "index": int(task["index"]),
        "source": task["source"],
        "path": task["path"],
        "size": 0,
        "mtime_ns": 0,
        "sha256": "",
        "status": "failed",
        "reason": task.get("problem") or "",
        "seconds": 0.0,
        "documents": 0,
        "nodes": 0,
        "nonspace": 0,
        "characters": 0,
        "metrics": "",
        "table": b"",
    }
    if result["reason"]:
        return result
    try:
        _process(task, config, embed, result)
        result["status"] = "ok"
    except ChunkScopeError as exc:
        result["reason"] = _one_line(exc)
    except Exception as exc:  # a bug or a library's surprise on odd input: this file fails, the run goes on
        result["reason"] = f"{type(exc).__name__}: {_one_line(exc)}"
    if result["status"] != "ok":
        result["table"] = b""
        result["metrics"] = ""
        result["nodes"] = result["documents"] = 0
    result["seconds"] = round(time.perf_counter() - started, 6)
    return result


def _process(task: dict[str, Any], config_json: str, embed: str, result: dict[str, Any]) -> None:
    import pyarrow as pa

    from core.documents import prepare_documents
    from core.errors import LoadError
    from core.limits import check_split_size
    from core.loaders import load_bytes, loader_for
    from core.metrics import chunk_report
    from core.schema import MetadataMode, numbers_in_document
    from core.tokenizers import get_tokenizer

    path = Path(task["path"])
    try:
        stat = path.stat()
        result["size"], result["mtime_ns"] = stat.st_size, stat.st_mtime_ns
        data = path.read_bytes()
    except FileNotFoundError:
        raise LoadError(path.name, "file not found") from None
    except OSError as exc:
        raise LoadError(path.name, f"cannot be read ({exc.strerror or exc})") from None
    result["size"] = len(data)
    result["sha256"] = hashlib.sha256(data).hexdigest()

    config = _worker_config(config_json)
    splitter = config.splitter
    # As `chunkscope split` and `chunkscope metrics` do it: this loader's options, the size
    # check before any work, extractors and the user's metadata, then the split.
    documents = load_bytes(data, path.name, **config.loader_options(loader_for(path.name).name))
    check_split_size(documents, splitter)
    documents = prepare_documents(documents, config)
    nodes = splitter.split(documents)
    metrics, rows = chunk_report(documents, nodes, size_limit=splitter.size_limit, tokenizer=splitter.size_unit)

    llm_views = [node.get_content(MetadataMode.LLM) for node in nodes]
    embed_views = [node.get_content(MetadataMode.EMBED) for node in nodes]
    embed_tokens = get_tokenizer("model").count_many(embed_views) if nodes else []
    numbers = numbers_in_document(nodes)
    columns: dict[str, Any] = {
        "id": [node.id for node in nodes],
        "doc_id": [node.doc_id for node in nodes],
        "source_path": [task["source"]] * len(nodes),
        "node_index": [numbers[node.id] for node in nodes],
        "start_char": [node.start_char for node in nodes],
        "end_char": [node.end_char for node in nodes],
        "text": [node.text for node in nodes],
        "characters": [row["characters"] for row in rows],
        "tokens": [row["tokens"] for row in rows],
        "embed_tokens": embed_tokens,
        "flags": [row["flags"] for row in rows],
        "metadata": [json.dumps(node.metadata, ensure_ascii=False, default=str) for node in nodes],
        "relationships": [
            json.dumps({rel.value: target for rel, target in node.relationships.items()}, ensure_ascii=False)
            for node in nodes
        ],
        "llm_view": llm_views,
        "embed_view": embed_views,
    }
    dimension = None
    if embed:
        import numpy as np

        from core.embeddings import get_embedder

        embedder = get_embedder(None if embed == "default" else embed)
        dimension = embedder.dimension
        vectors = np.asarray(embedder.embed(embed_views), dtype=np.float32).reshape(len(nodes), dimension)
        columns["embedding"] = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), pa.float32()), dimension)
    table = pa.Table.from_pydict(columns, schema=node_schema(dimension))

    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    result["table"] = sink.getvalue()
    result["documents"] = len(documents)
    result["nodes"] = len(nodes)
    result["characters"] = sum(len(document.text) for document in documents)
    result["nonspace"] = sum(len(document.text) - _whitespace(document.text) for document in documents)
    result["metrics"] = json.dumps(metrics.to_dict(), ensure_ascii=False, default=str)


def _whitespace(text: str) -> int:
    return len(text) - len("".join(text.split()))


def _one_line(exc: BaseException | str) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


def _table_from(result: dict[str, Any]) -> Any:
    import pyarrow as pa

    with pa.ipc.open_stream(result["table"]) as reader:
        return reader.read_all()


# --------------------------------------------------------------------- engines


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group; the driver alone decides what stops (and terminates workers).
    # A worker starts with SIGINT blocked (see _submit), so a Ctrl-C before this line cannot reach it either.
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _submit(pool: Any, *args: Any) -> Any:
    """``pool.submit`` with SIGINT blocked meanwhile: a worker process it starts inherits the block.

    A Ctrl-C that comes then is delivered to the driver as soon as the block ends.
    """
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        return pool.submit(*args)
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return pool.submit(*args)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def run_local(
    tasks: Iterable[dict[str, Any]], config: str, embed: str, workers: int, window: int
) -> Iterator[dict[str, Any]]:
    """``process_file`` of each task on a process pool, yielded in task order, ``window`` at most in flight.

    A worker that dies (a crash or the OOM killer in a parser) breaks the pool and
    every task in flight with it. Those tasks then run again one at a time, each
    in a pool of its own, so the file that kills its worker is known for sure: it
    fails with that reason, the others get their nodes, and the run goes on.
    """
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # fork starts a worker in milliseconds; with other threads running (a server), spawn is the safe start.
    method = "fork" if hasattr(os, "fork") and threading.active_count() == 1 else "spawn"
    context = multiprocessing.get_context(method)

    def new_pool(size: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=size, mp_context=context, initializer=_ignore_sigint)

    def alone(task: dict[str, Any]) -> dict[str, Any]:
        single = new_pool(1)
        try:
            return _submit(single, process_file, task, config, embed).result()
        except BrokenProcessPool:
            died = "the worker process died while reading this file (a crash, or out of memory)"
            return process_file({**task, "problem": died}, config)
        finally:
            _stop(single)

    pool = new_pool(workers)
    pending: deque[list[Any]] = deque()  # [task, future, result once known]
    iterator = iter(tasks)
    try:
        while True:
            while len(pending) < window:
                task = next(iterator, None)
                if task is None:
                    break
                pending.append([task, _submit(pool, process_file, task, config, embed), None])
            if not pending:
                return
            head = pending[0]
            if head[2] is None:
                try:
                    head[2] = head[1].result()
                except BrokenProcessPool:
                    _stop(pool)
                    for entry in pending:
                        if entry[2] is None:
                            entry[2] = _finished(entry[1]) or alone(entry[0])
                    pool = new_pool(workers)
            yield pending.popleft()[2]
    finally:
        # Not future.cancel(): the executor's own thread then fails setting the error of a cancelled future.
        _stop(pool)


def _finished(future: Any) -> dict[str, Any] | None:
    """A future's result if it completed before its pool broke, else None."""
    if future.done() and not future.cancelled() and future.exception() is None:
        return future.result()
    return None


def _stop(pool: Any) -> None:
    """Shut a pool down without waiting for work in progress: its processes are terminated first.

    The executor keeps its processes and its task queue private; reaching them is the only way to
    stop a running task (``shutdown`` waits for it), and a queue whose reader is gone must not be
    joined at exit, or the interpreter waits forever.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
    call_queue = getattr(pool, "_call_queue", None)
    if call_queue is not None:
        call_queue.cancel_join_thread()
    pool.shutdown(wait=False)


def run_ray(
    tasks: Sequence[dict[str, Any]], config: str, embed: str, workers: int, address: str | None = None
) -> Iterator[dict[str, Any]]:
    """The same ``process_file`` as a Ray Data pipeline (read the task list, map, stream back in order).

    Uses the Ray already initialized in this process, else starts one for the run
    (``num_cpus=workers``, or joins ``address``) and shuts it down after.
    """
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise ConfigError(f"--engine ray: Ray is not installed ({exc}); pip install 'ray[data]'") from None
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, logging_level="WARNING", log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
        started = True
    try:
        if not tasks:
            return
        import logging

        # Ray Data logs each execution's start and plan at INFO on stderr, over our progress line.
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        context = ray.data.DataContext.get_current()
        # Results in input order: the dataset's parts then do not depend on which worker finished first.
        context.execution_options.preserve_order = True
        context.enable_progress_bars = False  # our own progress line says files, nodes and MB/s
        # A block per ~16 files but at least 4 per CPU: small corpora still spread over every worker.
        blocks = min(len(tasks), max(4 * workers, -(-len(tasks) // 16)))
        dataset = ray.data.from_items(list(tasks), override_num_blocks=blocks).map(
            process_file, fn_kwargs={"config": config, "embed": embed}, num_cpus=1
        )
        for row in dataset.iter_rows():
            yield dict(row)
    finally:
        if started:
            ray.shutdown()


# --------------------------------------------------------------------- writing


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
            table = _table_from(result)
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
        digest = _file_sha256(temporary)
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


def _file_sha256(path: Path) -> str:
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


# ------------------------------------------------------------------------- run


@dataclass
class Progress:
    """What the progress line shows."""

    files_total: int
    files_done: int = 0
    files_skipped: int = 0
    failed: int = 0
    nodes: int = 0
    bytes: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def seconds(self) -> float:
        return max(time.monotonic() - self.started, 1e-9)

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.seconds


@dataclass
class BatchResult:
    out: Path
    inputs: int
    processed: int
    skipped: int
    failed: int
    nodes: int
    bytes: int
    seconds: float
    parts: list[str]
    interrupted: bool
    report: dict[str, Any]


def run_batch(
    inputs: Sequence[str],
    config: Any,
    out: str | os.PathLike[str],
    *,
    list_files: Sequence[str] = (),
    engine: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    embed: str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    part_rows: int = PART_ROWS,
    part_bytes: int = PART_BYTES,
    progress: Callable[[Progress], None] | None = None,
) -> BatchResult:
    """Apply ``config`` to every input; write the node dataset, the manifest and the report under ``out``.

    ``embed``: ``"default"`` (the packaged model) or a model path adds an ``embedding`` column.
    A KeyboardInterrupt stops the workers, writes what has arrived, records it,
    writes the report (``complete: false``) and is raised again.
    """
    from core import batch_report

    if engine not in ENGINES:
        raise ConfigError(f"--engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    workers = workers or CORES
    if workers < 1:
        raise ConfigError("--workers must be at least 1")
    out_dir = Path(out)
    files = expand_inputs(inputs, list_files)
    if not files:
        raise ConfigError("no input files (give files, directories, globs or @LIST)")
    config_json = config.to_json(indent=None)
    header = {
        "kind": "header",
        "chunkscope_batch": MANIFEST_VERSION,
        "config_key": config.key(),
        "config": json.loads(config_json),
        "embed": embed or "",
    }
    done, next_part = _prepare_output(out_dir, header, files, resume=resume, overwrite=overwrite)
    todo = [entry for entry in files if entry.path not in done or entry.problem]
    tasks = [{"index": i, "source": f.source, "path": f.path, "problem": f.problem} for i, f in enumerate(todo)]

    state = Progress(files_total=len(files), files_skipped=len(files) - len(todo))
    manifest = Manifest(out_dir / MANIFEST)
    if not (out_dir / MANIFEST).stat().st_size:
        manifest.write(header)
    writer = DatasetWriter(out_dir / NODES, manifest, next_part, part_rows, part_bytes)
    window = max(2, 4 * workers)
    if engine == "local":
        results = run_local(tasks, config_json, embed or "", workers, window)
    else:
        results = run_ray(tasks, config_json, embed or "", workers, ray_address)
    interrupted = False
    last_shown = 0.0
    with _DeferredInterrupt() as guard:
        try:
            for result in results:
                with guard.shielded():
                    writer.add(result)
                state.files_done += 1
                state.failed += result["status"] != "ok"
                state.nodes += result["nodes"]
                state.bytes += result["size"]
                if progress is not None and time.monotonic() - last_shown >= 0.2:
                    last_shown = time.monotonic()
                    progress(state)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            # From here on a Ctrl-C is held back (and then dropped): the workers stop, what arrived is written.
            guard.critical = True
            closer = getattr(results, "close", None)
            if closer is not None:
                closer()
            writer.finish()
            manifest.close()
        if progress is not None and not interrupted:
            progress(state)
        report = batch_report.write_report(
            out_dir,
            config,
            run={
                "engine": engine,
                "workers": workers,
                "seconds": round(state.seconds, 3),
                "processed": state.files_done,
                "skipped": state.files_skipped,
                "bytes": state.bytes,
                "complete": not interrupted and state.files_done == len(todo),
            },
        )
    result = BatchResult(
        out=out_dir,
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
        raise BatchInterrupted(result)
    return result


class _DeferredInterrupt:
    """Ctrl-C as a KeyboardInterrupt, except inside :meth:`shielded` (writing a part and its manifest
    lines), where it waits for the end of the block. Only the main thread receives signals: elsewhere
    (a server's worker thread) this changes nothing."""

    def __init__(self) -> None:
        self.critical = False
        self.pending = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> _DeferredInterrupt:
        import signal

        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if previous is not signal.SIG_IGN:  # a background job ignores Ctrl-C: so do we
                self._previous = previous
                signal.signal(signal.SIGINT, self._handle)
                self._installed = True
        return self

    def __exit__(self, *_: Any) -> None:
        import signal

        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False

    def _handle(self, signum: int, frame: Any) -> None:
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
    """Ctrl-C during a batch, after the output was left consistent; ``result`` says how far it got."""

    def __init__(self, result: BatchResult) -> None:
        super().__init__("interrupted")
        self.result = result


OUTPUT_FILES = ("report.json", "report.html")


def _prepare_output(
    out: Path, header: dict[str, Any], files: Sequence[Input], *, resume: bool, overwrite: bool
) -> tuple[set[str], int]:
    """Make ``out`` ready; returns the input paths already written (with ``resume``) and the next part number."""
    nodes = out / NODES
    nodes.mkdir(parents=True, exist_ok=True)
    manifest_path = out / MANIFEST
    existing = sorted(nodes.glob(f"{PART_PREFIX}*.parquet"))
    for stale in nodes.glob(f".{PART_PREFIX}*.tmp"):  # a part being written when a run was killed
        stale.unlink()
    if not resume:
        if (manifest_path.exists() or existing) and not overwrite:
            raise ConfigError(
                f"{out}: already holds a batch output; pass --resume to continue it or --overwrite to replace it"
            )
        for path in [*existing, manifest_path, *(out / name for name in OUTPUT_FILES)]:
            if path.exists():
                path.unlink()
        manifest_path.touch()
        return set(), 0

    lines = read_manifest(manifest_path)
    previous = next((line for line in lines if line.get("kind") == "header"), None)
    if previous is None:
        for path in existing:
            path.unlink()
        manifest_path.write_text("")
        return set(), 0
    if previous.get("config_key") != header["config_key"] or previous.get("embed", "") != header["embed"]:
        raise ConfigError(
            f"{out}: was written with another configuration; --resume needs the same one (or use --overwrite)"
        )
    current = {entry.path: entry for entry in files if not entry.problem}
    inputs = {}
    for line in lines:
        if line.get("kind") == "input" and line.get("status") == "ok":
            inputs[line["path"]] = line
    parts = {line["part"]: line for line in lines if line.get("kind") == "part"}
    present = {path.name for path in existing} & set(parts)
    valid = {
        path
        for path, line in inputs.items()
        if path in current and all(part in present for part in line.get("parts", [])) and _unchanged(line)
    }
    # Rows of anything else (a changed, removed or half-written input) leave the parts that hold them;
    # the other rows stay where they are, so one changed file costs one file's work, not its neighbours'.
    kept_parts = []
    for name in sorted(present):
        line = parts[name]
        keep = [path for path in line["inputs"] if path in valid]
        if len(keep) == len(line["inputs"]):
            kept_parts.append(line)
        elif keep:
            kept_parts.append(_filter_part(nodes / name, line, keep, {inputs[path]["source"] for path in keep}))
        else:
            (nodes / name).unlink()
    for path in existing:
        if path.name not in present:
            path.unlink()
    kept = [header, *kept_parts, *(inputs[path] for path in inputs if path in valid)]
    temporary = out / f".{MANIFEST}.tmp"
    temporary.write_text("".join(json.dumps(line, ensure_ascii=False, default=str) + "\n" for line in kept))
    os.replace(temporary, manifest_path)
    good_parts = [line["part"] for line in kept_parts]
    numbers = [int(name[len(PART_PREFIX) : -len(".parquet")]) for name in good_parts]
    return valid, max(numbers, default=-1) + 1


def _filter_part(path: Path, line: dict[str, Any], keep: list[str], sources: set[str]) -> dict[str, Any]:
    """Rewrite a part with only the rows of ``sources``; returns its new manifest line."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    table = table.filter(pc.is_in(table.column("source_path"), value_set=pa.array(sorted(sources), pa.string())))
    temporary = path.with_name(f".{path.name}.tmp")
    pq.write_table(table.combine_chunks(), temporary, compression="zstd")
    digest = _file_sha256(temporary)
    os.replace(temporary, path)
    return {**line, "rows": table.num_rows, "sha256": digest, "inputs": keep}


def _unchanged(line: dict[str, Any]) -> bool:
    """The file still has the size and mtime recorded; a touched file with the same bytes also counts."""
    try:
        stat = os.stat(line["path"])
    except OSError:
        return False
    if stat.st_size != line.get("size"):
        return False
    if stat.st_mtime_ns == line.get("mtime_ns"):
        return True
    return _file_sha256(Path(line["path"])) == line.get("sha256")
