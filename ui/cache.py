"""Streamlit caches over core: loads, splits and measurements keyed by content, models held once.

Every rerun of a page asks for the same documents, nodes and metrics again, so a
cache hit has to cost next to nothing. ``st.cache_data`` would hash its
arguments (a whole document) and unpickle a fresh copy of its value (the
document, thousands of nodes) on every hit; for a 1 MB document that alone took
longer than the 250 ms a parameter change may take. So the stores here are
one in-process store keyed by short strings that name the content:

- a loaded file by its sha256 digest, file name and loader options;
- a document by :func:`document_key` (computed once per document object);
- a split by its documents' keys and ``PipelineConfig.key()``;
- what is measured from a split by that split's key (:class:`Nodes` carries it).

A hit returns the very objects every session shares, without a copy. They are
read-only: core makes copies wherever it changes a node or a document
(``with_metadata``, ``dataclasses.replace``), and the lists handed to pages are
fresh lists, so a page may reorder or filter them but must never change a
document or a node in place. The caches hold only content-keyed data, so two
sessions with the same file and settings share work and never each other's state.

They share one ceiling in bytes, :data:`SERVER_CACHE_MB` (``CHUNKSCOPE_SERVER_CACHE_MB``, 512 by default):
each value is charged what :func:`core.runtime.sizes.approx_bytes` estimates it holds, and the least
recently used go first. Counted in entries (64 loads, 32 splits), distinct 5 MB uploads took the server
from 1 to 2.1 GB in ten sessions; in bytes, it levels off with the ceiling (benchmarks/NOTES.md).
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import threading
import weakref
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

import streamlit as st

from core.errors import WorkLimitError
from core.runtime.memo import Memo
from core.runtime.sizes import approx_bytes
from core.schema import Document, Node

_T = TypeVar("_T")

# -- the store ---------------------------------------------------------------------


def _server_cache_mb() -> int:
    try:
        return max(16, int(os.environ.get("CHUNKSCOPE_SERVER_CACHE_MB", "512")))
    except ValueError:
        return 512


# What this server keeps for all its sessions (loads, splits, measurements, figures, export files), in MB.
SERVER_CACHE_MB = _server_cache_mb()
_STORE = Memo(SERVER_CACHE_MB * 1_000_000)
# One lock per key being computed, so two sessions asking for the same split compute it once.
_COMPUTING: dict[Hashable, threading.Lock] = {}
_COMPUTING_LOCK = threading.Lock()


def cached(kind: str, key: Hashable, compute: Callable[[], _T]) -> _T:
    """``compute()``, once per ``(kind, key)`` while it is kept; ``key`` must name everything the value is made of.

    The value is shared by every session: read it, never change it. A value larger than the whole ceiling is
    computed each time and never kept.
    """
    entry = (kind, key)
    held = _STORE.get(entry)
    if held is not None:
        return held[0]
    with _COMPUTING_LOCK:
        lock = _COMPUTING.setdefault(entry, threading.Lock())
    try:
        with lock:
            held = _STORE.get(entry)
            if held is None:
                value = compute()
                # Wrapped, so a value of None or 0 is a hit too.
                held = _STORE.put(entry, (value,), approx_bytes(value))
    finally:
        with _COMPUTING_LOCK:
            if _COMPUTING.get(entry) is lock:
                del _COMPUTING[entry]
    return held[0]


def cache_bytes() -> int:
    """What the store holds now, in (estimated) bytes."""
    return _STORE.used


# -- keys ------------------------------------------------------------------------


def _content_key(document: Document) -> str:
    digest = hashlib.sha1()
    digest.update(document.id.encode())
    digest.update(str(len(document.text)).encode())
    digest.update(json.dumps(document.metadata, sort_keys=True, default=str).encode())
    digest.update(json.dumps(document.view_settings(), sort_keys=True, default=str).encode())
    digest.update(repr(document.elements).encode())
    digest.update(repr(document.pages).encode())
    if document.markup is not None:  # the engines that read markup split the page's source, not its text
        digest.update(hashlib.sha1(document.markup.encode("utf-8", "surrogatepass")).digest())
    return digest.hexdigest()


# id(document) -> (a weak reference that proves it is still that document, its key).
_DOCUMENT_KEYS: dict[int, tuple[weakref.ref, str]] = {}
_DOCUMENT_KEYS_LOCK = threading.Lock()


def _remember_key(document: Document, key: str) -> None:
    ident = id(document)

    def forget(_: weakref.ref) -> None:
        with _DOCUMENT_KEYS_LOCK:
            entry = _DOCUMENT_KEYS.get(ident)
            if entry is not None and entry[0]() is None:
                del _DOCUMENT_KEYS[ident]

    with _DOCUMENT_KEYS_LOCK:
        _DOCUMENT_KEYS[ident] = (weakref.ref(document, forget), key)


def document_key(document: Document) -> str:
    """What identifies a document's content and settings.

    A loaded document's key is its load's key (file digest, name, loader options,
    position); any other document's is a digest of its id, metadata, view
    settings, elements and pages, computed once per document object (documents
    are not changed in place, so it cannot go stale).
    """
    entry = _DOCUMENT_KEYS.get(id(document))
    if entry is not None and entry[0]() is document:
        return entry[1]
    key = _content_key(document)
    _remember_key(document, key)
    return key


def _document_keys(documents: Iterable[Document]) -> tuple[str, ...]:
    return tuple(document_key(document) for document in documents)


class Nodes(list):
    """The nodes of one cached split, as a page gets them.

    A fresh list of the shared, read-only nodes, carrying ``split_key`` (its
    documents' keys and config key) so what is measured from it is cached
    under that key instead of by hashing every node.
    """

    def __init__(self, nodes: Sequence[Node], split_key: str) -> None:
        super().__init__(nodes)
        self.split_key = split_key
        self._shared = nodes


def nodes_key(nodes: Sequence[Node]) -> str:
    """What identifies a list of nodes: its split's key while it still holds exactly that split's nodes,
    otherwise a digest of every node's id, span, text and metadata."""
    if isinstance(nodes, Nodes) and len(nodes) == len(nodes._shared) and all(map(operator.is_, nodes, nodes._shared)):
        return nodes.split_key
    digest = hashlib.sha1()
    for node in nodes:
        digest.update(f"{node.id}\0{node.doc_id}\0{node.start_char}\0{node.end_char}\0{hash(node.text)}\0".encode())
        digest.update(json.dumps([node.metadata, node.view_settings()], sort_keys=True, default=str).encode())
    return digest.hexdigest()


def _node_key(node: Node) -> str:
    return f"{node.id}:{node.start_char}:{node.end_char}:{hash(node.text)}"


# For st.cache_data functions elsewhere (e.g. ui.export) that take documents or nodes.
HASH_FUNCS: dict[Any, Any] = {
    Document: document_key,
    Node: _node_key,
    "core.config.PipelineConfig": lambda config: config.key(),
}


# -- loading -------------------------------------------------------------------


def _load(digest: str, file_name: str, options_json: str, _data: bytes) -> tuple[Document, ...] | WorkLimitError:
    return cached("load", (digest, file_name, options_json), lambda: _read(digest, file_name, options_json, _data))


def _read(digest: str, file_name: str, options_json: str, _data: bytes) -> tuple[Document, ...] | WorkLimitError:
    from core.documents.bounded import load_bounded
    from core.loaders.cache import load_bytes  # a file read before a restart comes back from disk

    # Bounded: a small upload may unpack to gigabytes or parse for minutes; it must not hold the server.
    # Only a read the disk cache cannot serve runs in the bounded child.
    def bounded(read: Callable[[], list[Document]]) -> list[Document]:
        return load_bounded(read, file_name, len(_data))

    try:
        documents = tuple(load_bytes(_data, file_name, run_load=bounded, **json.loads(options_json or "{}")))
    except WorkLimitError as exc:
        return exc  # remembered (see _limit_reached)
    for position, document in enumerate(documents):
        _remember_key(document, f"file:{digest}:{file_name}:{options_json}:{position}")
    return documents


def load_file(digest: str, file_name: str, options_json: str, _data: bytes) -> list[Document]:
    """``core.load_bytes`` for one file; ``options_json`` holds the loader parameters (sorted JSON).

    Raises the LoadError unchanged (errors are not cached, except a limit reached), so a page can show its sentence.
    """
    return list(_limit_reached(_load(digest, file_name, options_json, _data)))


def _limit_reached(found: Any) -> Any:
    """``found``, unless it is a deadline or memory ceiling the work hit: then that error, raised afresh.

    Those are cached like a result: the same input would hit the same limit, and
    every rerun of the page would otherwise wait the whole deadline again.
    """
    if isinstance(found, WorkLimitError):
        raise type(found)(found.file_name, found.problem)
    return found


def load_source(source: Any, options: dict[str, Any] | None = None) -> list[Document]:
    """Load a :class:`ui.state.SourceFile` with loader ``options`` (cached by its digest)."""
    return load_file(source.digest, source.file_name, json.dumps(options or {}, sort_keys=True), source.data)


# -- splitting and what is computed from the nodes ------------------------------


def _split(
    split_key: str, _documents: Sequence[Document], _config: Any, progress: Callable[[int, int], object] | None = None
) -> tuple[Node, ...] | WorkLimitError:
    from core.documents import run_split

    def split() -> tuple[Node, ...] | WorkLimitError:
        # Bounded: a link's regex or a framework engine on a hostile text must not hold the server
        # (core.runtime.bounded).
        try:
            return tuple(run_split(list(_documents), _config, bounded=True, progress=progress))
        except WorkLimitError as exc:
            return exc  # remembered (see _limit_reached)

    return cached("split", split_key, split)


def _split_key(documents: Sequence[Document], config: Any) -> str:
    return hashlib.sha1(repr((_document_keys(documents), config.key())).encode()).hexdigest()


def run_split_cached(
    documents: Sequence[Document], config: Any, progress: Callable[[int, int], object] | None = None
) -> Nodes:
    """``core.documents.run_split(documents, config)``: the nodes of a whole pipeline configuration.
    ``progress(done, calls)`` hears the LLM extractors' replies while they are asked (none when the split is kept)."""
    split_key = _split_key(documents, config)
    return Nodes(_limit_reached(_split(split_key, tuple(documents), config, progress)), split_key)


def split_is_kept(documents: Sequence[Document], config: Any) -> bool:
    """Whether :func:`run_split_cached` would answer from the store, without splitting (or asking an LLM)."""
    return _STORE.get(("split", _split_key(documents, config))) is not None


def _metrics(documents_key: tuple[str, ...], nodes_key: str, options_json: str, _documents: Any, _nodes: Any) -> Any:
    from core.measure.metrics import chunk_metrics

    return cached(
        "metrics",
        (documents_key, nodes_key, options_json),
        lambda: chunk_metrics(list(_documents), list(_nodes), **json.loads(options_json or "{}")),
    )


def metrics_cached(documents: Sequence[Document], nodes: Sequence[Node], options_json: str = "{}") -> Any:
    """``core.measure.metrics.chunk_metrics(documents, nodes, **options)`` (a frozen ChunkMetrics; read it, never change it)."""
    return _metrics(_document_keys(documents), nodes_key(nodes), options_json, tuple(documents), tuple(nodes))


def _report(documents_key: tuple[str, ...], nodes_key: str, options_json: str, _documents: Any, _nodes: Any) -> Any:
    from core.measure.metrics import chunk_report_deferred

    return cached(
        "report",
        (documents_key, nodes_key, options_json),
        lambda: chunk_report_deferred(list(_documents), list(_nodes), **json.loads(options_json or "{}")),
    )


def report_cached(
    documents: Sequence[Document], nodes: Sequence[Node], options_json: str = "{}"
) -> tuple[Any, Callable[[], list[dict[str, Any]]]]:
    """``core.measure.metrics.chunk_report_deferred``: the metrics, and the node table's rows on first call, from one
    measurement (shared: read only)."""
    return _report(_document_keys(documents), nodes_key(nodes), options_json, tuple(documents), tuple(nodes))


def _semantic_analysis(doc_key: str, splitter_name: str, params_json: str, _document: Document) -> Any:
    from core.splitters import get_splitter

    def analyze() -> Any:
        return get_splitter(splitter_name, **json.loads(params_json or "{}")).analyze(_document)

    return cached("semantic", (doc_key, splitter_name, params_json), analyze)


def semantic_analysis_cached(document: Document, splitter_name: str, params_json: str) -> Any:
    """The semantic splitter's ``analyze(document)`` (distances, threshold, breakpoints)."""
    return _semantic_analysis(document_key(document), splitter_name, params_json, document)


def _document_tokens(doc_key: str, tokenizer: str, _text: str) -> int:
    from core.tokens.counts import document_token_count

    return cached("tokens", (doc_key, tokenizer), lambda: document_token_count(_text, tokenizer))


def document_tokens(document: Document, tokenizer: str = "model") -> int:
    """How many tokens a whole document has (the model's count shares the metrics' per-document token index)."""
    return _document_tokens(document_key(document), tokenizer, document.text)


@st.cache_data(max_entries=256, show_spinner=False)
def count_tokens(texts: tuple[str, ...], tokenizer: str = "model") -> list[int]:
    """Token counts of ``texts`` with a named tokenizer (characters, words or model)."""
    return model_tokenizer(tokenizer).count_many(list(texts))


def derived(key: str, build: Callable[[], Any]) -> Any:
    """``build()``, computed once per ``key`` (which must name everything the value is made from,
    e.g. a :func:`nodes_key`): a page's figures and frames that only change with its nodes. Read-only."""
    return cached("derived", key, build)


def params_json(params: dict[str, Any]) -> str:
    """The canonical JSON of raw parameter values (the cache key for a splitter's settings)."""
    return json.dumps(
        {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}, sort_keys=True, default=str
    )


def clear() -> None:
    """Empty the content caches (loads, splits, measurements), keeping the models."""
    st.cache_data.clear()
    _STORE.clear()


# -- models -----------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def model_tokenizer(name: str = "model") -> Any:
    """A tokenizer from :func:`core.tokens.tokenizers.get_tokenizer`, held once per process."""
    from core.tokens.tokenizers import get_tokenizer

    return get_tokenizer(name)


# Set by `make run`: the model loads in the background while the first page is read, so the first query does not
# wait for it. Off in tests, whose servers need not pay for a model most of them never use.
PRELOAD_ENV = "CHUNKSCOPE_PRELOAD_MODEL"
_preload_started = threading.Event()


def preload_embedder() -> bool:
    """Start loading the embedding model in a daemon thread, once per process, when :data:`PRELOAD_ENV` is "1".

    :func:`core.embed.embedder.get_embedder` holds a lock while it loads, so a query that comes first waits for
    this load instead of starting a second one. True when this call started it.
    """
    if os.environ.get(PRELOAD_ENV) != "1" or _preload_started.is_set():
        return False
    _preload_started.set()

    def load() -> None:
        from core.embed.embedder import get_embedder

        try:
            get_embedder()
        except Exception:  # noqa: BLE001 - the page that needs it loads it again and shows why it failed
            return

    threading.Thread(target=load, name="chunkscope-preload-model", daemon=True).start()
    return True


@st.cache_resource(show_spinner="Loading the embedding model (all-MiniLM-L6-v2, a few seconds)…")
def embedder() -> Any:
    """The embedding model, loaded once per process and shared by every session."""
    from core.embed.embedder import get_embedder

    return get_embedder()


def embedding_window() -> int:
    """How many text tokens the embedding model reads (its max_seq_length less [CLS] and [SEP])."""
    from core.measure.metrics import DEFAULT_MAX_SEQ_LENGTH, SPECIAL_TOKENS

    return DEFAULT_MAX_SEQ_LENGTH - SPECIAL_TOKENS
