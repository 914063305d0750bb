"""One file's work: read, hash, load, split, measure (and embed); plain values in, plain values out.

:func:`process_file` is all an engine runs, so a process pool and Ray Data carry it
alike; every failure becomes a one-line reason, never an exception.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from functools import partial
from pathlib import Path
from typing import Any

from core.errors import ChunkScopeError

_REASON_CHARS = 300


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
    """Pay a worker's one-time costs before its first file: the configuration parsed, the tokenizers loaded."""
    from core.schema import Document
    from core.tokens.tokenizers import get_tokenizer

    config = _worker_config(config_json)
    get_tokenizer("model").count_many(["A sentence to warm up with."])
    config.splitter.split([Document(text="A sentence to warm up with. And a second one.")])


def result_schema() -> Any:
    """The columns of :func:`process_file`'s result (how the Ray engine carries results as Arrow)."""
    import pyarrow as pa

    text, number = pa.string(), pa.int64()
    return pa.schema(
        [
            ("index", number),
            ("source", text),
            ("path", text),
            ("size", number),
            ("mtime_ns", number),
            ("sha256", text),
            ("status", text),
            ("reason", text),
            ("seconds", pa.float64()),
            ("documents", number),
            ("nodes", number),
            ("nonspace", number),
            ("characters", number),
            ("metrics", text),
            ("table", pa.binary()),
            ("row_bytes", pa.binary()),
        ]
    )


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
        "row_bytes": b"",
    }
    if result["reason"]:
        return result
    try:
        _process(task, config, embed, result)
        result["status"] = "ok"
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


def _process(task: dict[str, Any], config_json: str, embed: str, result: dict[str, Any]) -> None:
    import pyarrow as pa

    from core.batch.ids import assign_batch_ids
    from core.documents import load_bounded, prepare_documents, split_bounded
    from core.errors import LoadError
    from core.limits import DEFAULT_LIMITS, check_upload_size
    from core.loaders import load_bytes, loader_for
    from core.loaders.file_kinds import refuse_special_file
    from core.measure.metrics import chunk_report
    from core.schema import MetadataMode, contents, numbers_in_document
    from core.splitters.size_check import check_split_size
    from core.tokens.tokenizers import get_tokenizer

    path = Path(task["path"])
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

    config = _worker_config(config_json)
    splitter = config.splitter
    # As `chunkscope split` and `chunkscope metrics` do it: this loader's options, the size
    # check before any work, extractors and the user's metadata, then the split.
    # Each stage on the file's bytes runs where a deadline and a memory ceiling can stop it (core.runtime.bounded):
    # a file that hits one fails with that reason and the run goes on.
    read = partial(load_bytes, data, path.name, **config.loader_options(loader_for(path.name).name))
    documents = load_bounded(read, path.name, len(data), DEFAULT_LIMITS)
    assign_batch_ids(documents, task.get("id_salt"))  # the path in the corpus too: unique ids (core.batch.ids)
    check_split_size(documents, splitter)
    documents = prepare_documents(documents, config)
    nodes = split_bounded(documents, splitter, DEFAULT_LIMITS)
    metrics, rows = chunk_report(documents, nodes, size_limit=splitter.size_limit, tokenizer=splitter.size_unit)

    llm_views = contents(nodes, MetadataMode.LLM)
    embed_views = contents(nodes, MetadataMode.EMBED)
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

        from core.embed.embedder import get_embedder

        embedder = get_embedder(None if embed == "default" else embed)
        dimension = embedder.dimension
        vectors = np.asarray(embedder.embed(embed_views), dtype=np.float32).reshape(len(nodes), dimension)
        columns["embedding"] = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), pa.float32()), dimension)
    table = pa.Table.from_pydict(columns, schema=node_schema(dimension))

    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    result["table"] = sink.getvalue()
    # Measured here, not by the driver: the one process that writes every part is what bounds a cluster.
    result["row_bytes"] = row_bytes(table).tobytes()
    result["documents"] = len(documents)
    result["nodes"] = len(nodes)
    result["characters"] = sum(len(document.text) for document in documents)
    result["nonspace"] = sum(len(document.text) - _whitespace(document.text) for document in documents)
    result["metrics"] = json.dumps(metrics.to_dict(), ensure_ascii=False, default=str)


def _whitespace(text: str) -> int:
    return len(text) - len("".join(text.split()))


def one_line(exc: BaseException | str) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


# Bytes a row costs beyond its strings (ids, numbers, offsets): only for cutting parts.
_ROW_OVERHEAD = 64


def row_bytes(table: Any) -> Any:
    """Each row's size as a part counts it (int64): its strings' UTF-8 bytes, the vector, a fixed overhead."""
    import numpy as np
    import pyarrow.compute as pc

    sizes = np.full(table.num_rows, _ROW_OVERHEAD, dtype=np.int64)
    for column in ("text", "llm_view", "embed_view", "metadata", "relationships", "id", "source_path"):
        sizes += pc.binary_length(table.column(column)).to_numpy(zero_copy_only=False).astype(np.int64)
    if "embedding" in table.column_names:
        sizes += 4 * table.schema.field("embedding").type.list_size
    return sizes


def table_from(result: dict[str, Any]) -> Any:
    import pyarrow as pa

    with pa.ipc.open_stream(result["table"]) as reader:
        return reader.read_all()
