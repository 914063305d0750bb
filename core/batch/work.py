"""One file's work: read, hash, load, split, size (measure with ``--metrics``, and embed); plain values in and out.

A file costs what its outputs need: the loader parses only the structure the splitter reads
(:func:`elements_read`), sizes come from the split's own token index, and the model-token counts,
lint flags and chunk metrics are computed only when asked (``metrics`` in the task).

:func:`process_file` is all an engine runs, so a process pool and Ray Data carry it
alike; every failure becomes a one-line reason, never an exception.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

from core.batch.arrow_columns import array_of, arrow_table, row_bytes
from core.errors import ChunkScopeError, LoadError

_REASON_CHARS = 300


def node_schema(embed_dimension: int | None = None, *, metrics: bool = False) -> Any:
    """The dataset's columns. Metadata and relationships are JSON text (as in the app's Parquet export).

    ``metrics`` (``--metrics``) adds ``embed_tokens`` and ``flags``: they need every node's EMBED view
    counted in model tokens and each document's sentences, several times the cost of the split.
    """
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
    ]
    if metrics:
        fields += [
            ("embed_tokens", pa.int32()),  # model tokens of the EMBED view (what the embedding window holds)
            ("flags", pa.list_(pa.string())),  # lint: mid-sentence, over-window, over-limit, tiny, duplicate
        ]
    fields += [
        ("metadata", pa.string()),
        ("relationships", pa.string()),
        ("llm_view", pa.string()),
        ("embed_view", pa.string()),
    ]
    if embed_dimension:
        fields.append(("embedding", pa.list_(pa.float32(), embed_dimension)))
    return pa.schema(fields)


_WORKER: dict[str, Any] = {}
# Set in a local engine's worker and a Ray actor: its main thread runs files and serves nothing else (serve_alone).
_ALONE = [False]


def serve_alone() -> None:
    """This process's main thread runs files and nothing else (a local engine's worker, a Ray actor): a large text,
    Markdown or code file is loaded here under an alarm instead of in a forked child (``alone`` of
    :func:`core.documents.bounded.load_bounded`), when the load runs on that main thread (an alarm reaches no other)."""
    _ALONE[0] = True


def use_one_core() -> None:
    """Make this process a worker that computes on one thread: the engines run one worker per core.

    The model tokenizer's second encoding thread (:mod:`core.tokens.threads`) made
    one worker use ~1.3 cores, so two workers competed for two cores; pyarrow's pools
    are one thread too. (With ``--embed``, torch keeps its threads: fewer would change
    the vectors' last bits against the ones the app and the disk cache hold.)
    """
    import pyarrow as pa

    from core.tokens.threads import use_one_thread

    use_one_thread()
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)


def warm_worker(config_json: str) -> None:
    """Pay a worker's one-time costs before its first file: the configuration parsed, the splitter's tokenizer loaded.

    The model tokenizer is loaded here only when the splitter counts in it; ``--metrics`` loads it on its first
    file (0.2 s of CPU a worker that a batch without either would pay for nothing).
    """
    from core.schema import Document

    config = _worker_config(config_json)
    config.splitter.split([Document(text="A sentence to warm up with. And a second one.")])


def _worker_config(config_json: str) -> Any:
    from core.config import PipelineConfig

    cached = _WORKER.get("config")
    if cached is None or cached[0] != config_json:
        cached = (config_json, PipelineConfig.from_json(config_json))
        _WORKER["config"] = cached
    return cached[1]


def process_file(task: dict[str, Any], config: str, embed: str = "", *, stream: bool = True) -> dict[str, Any]:
    """Read, load, split, measure (and embed) one file; every failure becomes a one-line reason.

    ``task``: ``index``, ``source``, ``path``, ``problem``; ``config``: the
    PipelineConfig's JSON (one per run, not per task: a million tasks would carry
    a million copies); ``embed``: a model path, ``"default"`` or ``""``. Returns plain
    values only (the nodes as an Arrow IPC stream in ``table``), so a process pool
    and Ray carry it alike. ``stream=False`` leaves ``table`` a ``pyarrow.Table``, for a
    caller in this process (a worker writing its shard's parts): no stream written and read back.
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
        "nonspace": 0,  # non-whitespace characters: counted with --metrics (the coverage's weight) only
        "characters": 0,
        "metrics": "",
        "table": b"",
        "row_bytes": b"",
    }
    if result["reason"]:
        return result
    try:
        _process(task, config, embed, result, stream)
        result["status"] = "ok"
    except LoadError as exc:
        # The report lists the file beside its reason: the error's own "file: " prefix would name it twice.
        result["reason"] = one_line(exc.problem)
    except ChunkScopeError as exc:
        result["reason"] = one_line(exc)
    except Exception as exc:  # a bug or a library's surprise on odd input: this file fails, the run goes on
        result["reason"] = f"{type(exc).__name__}: {one_line(exc)}"
    if result["status"] != "ok":
        result["table"] = b""
        result["metrics"] = ""
        result["nodes"] = result["documents"] = 0
    result["seconds"] = round(time.perf_counter() - started, 6)
    return result


def _process(task: dict[str, Any], config_json: str, embed: str, result: dict[str, Any], stream: bool) -> None:
    from core.schema import MetadataMode, contents

    clock = StageClock()
    path = Path(task["path"])
    data = read_file(path, result)
    clock.mark("read")
    config = _worker_config(config_json)
    documents, nodes = load_and_split(data, path, task, config, clock, result)
    texts = [node.text for node in nodes]
    llm_views = contents(nodes, MetadataMode.LLM)
    same_views = all(n.excluded_llm_metadata_keys == n.excluded_embed_metadata_keys for n in nodes)
    embed_views = llm_views if same_views else contents(nodes, MetadataMode.EMBED)
    clock.mark("views")
    measure = task.get("metrics", True)
    sizes, metrics = _sizes_and_metrics(documents, nodes, texts, config.splitter, (embed_views, llm_views), measure)
    clock.mark("metrics" if measure else "sizes")
    columns = _node_columns(task["source"], nodes, texts, sizes, llm_views, embed_views)
    clock.mark("columns")
    dimension = None
    if embed:
        dimension = _add_embeddings(columns, embed, embed_views, len(nodes))
        clock.mark("embed")
    table = arrow_table(columns, node_schema(dimension, metrics=measure))
    _record(result, table, stream, documents, nodes, metrics, measure)
    clock.mark("arrow")


def read_file(path: Path, result: dict[str, Any]) -> bytes:
    """The file's bytes, its size, mtime and SHA-256 recorded in ``result``; a LoadError where it cannot be read."""
    from core.limits import check_upload_size
    from core.loaders.file_kinds import refuse_special_file

    refuse_special_file(path)  # listed as a regular file, but a FIFO since: reading it would block this worker
    try:
        stat = path.stat()
        result["size"], result["mtime_ns"] = stat.st_size, stat.st_mtime_ns
        # The upload limit before the read (load_bytes checks it after): a worker never holds a huge file.
        check_upload_size(stat.st_size, path.name)
        data = path.read_bytes()
    except FileNotFoundError:
        raise LoadError(path.name, "file not found") from None
    except OSError as exc:
        raise LoadError(path.name, f"cannot be read ({exc.strerror or exc})") from None
    result["size"] = len(data)
    result["sha256"] = hashlib.sha256(data).hexdigest()
    return data


def load_and_split(
    data: bytes,
    path: Path,
    task: dict[str, Any],
    config: Any,
    clock: StageClock,
    result: dict[str, Any],
    extract: Any = None,
) -> tuple[Any, Any]:
    """The file's documents and their nodes, as ``chunkscope split`` makes them (load, prepare, split, finish).
    With LLM extractors, what they sent and spent for this file goes to ``result["llm"]`` (the manifest's line).
    ``extract`` stands in for the LLM extractors' run (``finish_nodes``'s step; ``batch --plan`` counts there)."""
    from core.batch.ids import assign_batch_ids
    from core.documents import documents_to_split, finish_nodes
    from core.documents.bounded import load_bounded, split_bounded
    from core.documents.llm_run import extract_with_llm
    from core.extractors.llm import SPEND_KEYS, llm_extractors
    from core.limits import DEFAULT_LIMITS
    from core.loaders import load_bytes, loader_for

    # As `chunkscope split` and `chunkscope metrics` do it: this loader's options, the size
    # check before any work, extractors and the user's metadata, then the split.
    # Each stage on the file's bytes runs where a deadline and a memory ceiling can stop it (core.runtime.bounded):
    # a file that hits one fails with that reason and the run goes on.
    read = partial(load_bytes, data, path.name, **config.loader_options(loader_for(path.name).name))
    read = partial(_reading, elements_read(config), read)  # in the bounded child too
    alone = _ALONE[0] and threading.current_thread() is threading.main_thread()
    documents = load_bounded(read, path.name, len(data), DEFAULT_LIMITS, alone=alone)
    clock.mark("load")
    assign_batch_ids(documents, task.get("id_salt"))  # the path in the corpus too: unique ids (core.batch.ids)
    documents = documents_to_split(documents, config)  # the steps run_split takes before its splitter
    clock.mark("prepare")
    # A worker serves no other thread, so ChunkScope's own splitters (linear, no user regex) split any text
    # within the upload limit in-process: the app's 300,000-character bound forked a child per large file.
    nodes = split_bounded(documents, config.splitter, DEFAULT_LIMITS, in_process_chars=DEFAULT_LIMITS.max_text_chars)
    # And the steps run_split takes after it, the LLM extractors' with them: in this worker (it serves no other
    # thread), bounded by the connection's timeout and retries, answered by the shared reply cache where it can.
    spent = partial(_keep_spend, result)
    extract = extract or partial(extract_with_llm, config=config, on_run=spent)
    nodes = finish_nodes(nodes, documents, config.metadata, extract)
    if "llm" not in result and llm_extractors(config.extractors):
        # A file with no nodes asked nothing. (A run that failed raised above: the file is listed with its reason,
        # and what it sent before failing is in no count, though its replies are in the cache.)
        result["llm"] = dict.fromkeys(SPEND_KEYS, 0)
    clock.mark("split")
    return documents, nodes


def _keep_spend(result: dict[str, Any], run: Any) -> None:
    result["llm"] = run.spend()


def _sizes_and_metrics(
    documents: Any, nodes: Any, texts: list[str], splitter: Any, views: tuple[list[str], list[str]], measure: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The nodes' size columns and the file's metrics: with ``measure`` (--metrics) what ``chunkscope metrics``
    prints, and per node the model tokens and lint flags; else the sizes and their statistics only."""
    from core.measure.metrics import SizeStats, chunk_columns

    if measure:
        summary, sizes = chunk_columns(
            documents,
            nodes,
            size_limit=splitter.size_limit,
            tokenizer=splitter.size_unit,
            views=views,  # (EMBED, LLM) views, made by the caller: not a second time
        )
        return sizes, summary.to_dict()
    sizes = size_columns(documents, nodes, texts, splitter.size_unit)
    characters = asdict(SizeStats.of(sizes["characters"]))
    tokens = characters if sizes["tokens"] is sizes["characters"] else asdict(SizeStats.of(sizes["tokens"]))
    return sizes, {"count": len(nodes), "characters": characters, "tokens": tokens}


def _node_columns(
    source: str, nodes: Any, texts: list[str], sizes: dict[str, Any], llm_views: list[str], embed_views: list[str]
) -> dict[str, Any]:
    """The dataset's columns (:func:`node_schema`) for one file's nodes, but the embeddings."""
    from core.schema import numbers_in_document

    numbers = numbers_in_document(nodes)
    return {
        "id": [node.id for node in nodes],
        "doc_id": [node.doc_id for node in nodes],
        "source_path": [source] * len(nodes),
        "node_index": [numbers[node.id] for node in nodes],
        "start_char": [node.start_char for node in nodes],
        "end_char": [node.end_char for node in nodes],
        "text": texts,
        **sizes,
        "metadata": _metadata_json(nodes),
        "relationships": [
            json.dumps({rel.value: target for rel, target in node.relationships.items()}, ensure_ascii=False)
            for node in nodes
        ],
        "llm_view": llm_views,
        "embed_view": embed_views,
    }


def _add_embeddings(columns: dict[str, Any], embed: str, embed_views: list[str], count: int) -> int:
    """Add the ``embedding`` column (the EMBED views embedded by ``embed``'s model); returns its dimension."""
    import numpy as np
    import pyarrow as pa

    from core.embed.embedder import get_embedder

    embedder = get_embedder(None if embed == "default" else embed)
    dimension = embedder.dimension
    vectors = np.asarray(embedder.embed(embed_views), dtype=np.float32).reshape(count, dimension)
    flat = array_of(pa.float32(), np.ascontiguousarray(vectors, dtype=np.float32).ravel())
    columns["embedding"] = pa.FixedSizeListArray.from_arrays(flat, dimension)
    return dimension


def _record(
    result: dict[str, Any], table: Any, stream: bool, documents: Any, nodes: Any, metrics: dict[str, Any], measure: bool
) -> None:
    """Put the table (an Arrow IPC stream with ``stream``) and the file's counts and metrics in ``result``."""
    import pyarrow as pa

    if stream:
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        result["table"] = sink.getvalue()
    else:
        result["table"] = table
    # Measured here, not by the driver: the one process that writes every part is what bounds a cluster.
    result["row_bytes"] = row_bytes(table).tobytes()
    result["documents"] = len(documents)
    result["nodes"] = len(nodes)
    result["characters"] = sum(len(document.text) for document in documents)
    # What the report weighs each file's coverage by: only measured with the coverage (--metrics).
    if measure:
        from core.tokens.char_index import CharIndex

        # From each document's CharIndex (the metrics just built it): what str.split() leaves, counted.
        result["nonspace"] = sum(int(CharIndex.of(document.text).non_space_prefix[-1]) for document in documents)
    result["metrics"] = json.dumps(metrics, ensure_ascii=False, default=str)


def elements_read(config: Any) -> frozenset[str] | None:
    """The element kinds a batch reads of its documents (None: all): the splitter's, the metrics' table rows.

    Extractors read any structure; the node views and metadata read none beyond the splitter's.
    """
    from core.splitters.nodes import TABLE_ELEMENTS

    kinds = config.splitter.elements_read
    return None if kinds is None or config.extractors else kinds | TABLE_ELEMENTS


def _reading(kinds: frozenset[str] | None, read: Any) -> Any:
    from core.loaders.base import reading_elements

    with reading_elements(kinds):
        return read()


class StageClock:
    """CPU seconds of each stage of a file's work, summed over the files this process did (the benchmark's
    per-stage table, ``benchmarks/batch.py --stages``). Off unless :attr:`totals` is set to a dict.

    CPU of this process and of the children it reaped (a large file is loaded or split in a bounded child).
    """

    totals: dict[str, float] | None = None

    def __init__(self) -> None:
        self._last = _cpu_seconds() if StageClock.totals is not None else 0.0

    def mark(self, stage: str) -> None:
        """The CPU since the last mark (or the start) goes to ``stage``."""
        if StageClock.totals is None:
            return
        now = _cpu_seconds()
        StageClock.totals[stage] = StageClock.totals.get(stage, 0.0) + now - self._last
        self._last = now


def _cpu_seconds() -> float:
    import resource

    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def size_columns(documents: list[Any], nodes: list[Any], texts: list[str], unit: Any) -> dict[str, list[int]]:
    """Each node's characters and its size in the splitter's unit (the numbers ``chunk_report`` gives).

    Counted from the split's own token index where the unit is a tokenizer's (core.tokens.counts).
    """
    from core.tokens.counts import count_node_strings
    from core.tokens.tokenizers import get_tokenizer

    characters = [len(text) for text in texts]
    counter = get_tokenizer(unit)
    if counter.name == "characters":
        return {"characters": characters, "tokens": characters}
    return {"characters": characters, "tokens": count_node_strings(counter, documents, nodes, texts, ())[0]}


def _metadata_json(nodes: list[Any]) -> list[str]:
    """Each node's metadata as JSON; a document's nodes mostly hold equal metadata: encoded once for each."""
    encoded: dict[tuple[Any, ...], str] = {}
    out = []
    for node in nodes:
        metadata = node.metadata
        # Keyed by the values' identities (as core.schema.contents keys its renderings): equal is not enough.
        key = (tuple(metadata), tuple(map(id, metadata.values())))
        text = encoded.get(key)
        if text is None:
            text = encoded[key] = json.dumps(metadata, ensure_ascii=False, default=str)
        out.append(text)
    return out


def one_line(exc: BaseException | str) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"
