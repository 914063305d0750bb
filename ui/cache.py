"""Streamlit caches over core: loads, splits and measurements keyed by content, models held once.

Every rerun of a page asks for the same documents, nodes and metrics again, so a
cache hit has to cost next to nothing. ``st.cache_data`` would hash its
arguments (a whole document) and unpickle a fresh copy of its value (the
document, thousands of nodes) on every hit; for a 1 MB document that alone took
longer than the 250 ms a parameter change may take. So the stores here are
``st.cache_resource`` stores keyed by short strings that name the content:

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
"""

from __future__ import annotations

import hashlib
import json
import operator
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import streamlit as st

from core.errors import WorkLimitError
from core.schema import Document, Node

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


@st.cache_resource(max_entries=64, show_spinner=False)
def _load(digest: str, file_name: str, options_json: str, _data: bytes) -> tuple[Document, ...] | WorkLimitError:
    from core.documents import load_bounded
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


@st.cache_resource(max_entries=32, show_spinner=False)
def _split(split_key: str, _documents: Sequence[Document], _config: Any) -> tuple[Node, ...] | WorkLimitError:
    from core.documents import run_split

    # Bounded: a link's regex or a framework engine on a hostile text must not hold the server (core.runtime.bounded).
    try:
        return tuple(run_split(list(_documents), _config, bounded=True))
    except WorkLimitError as exc:
        return exc  # remembered (see _limit_reached)


def run_split_cached(documents: Sequence[Document], config: Any) -> Nodes:
    """``core.documents.run_split(documents, config)``: the nodes of a whole pipeline configuration."""
    split_key = hashlib.sha1(repr((_document_keys(documents), config.key())).encode()).hexdigest()
    return Nodes(_limit_reached(_split(split_key, tuple(documents), config)), split_key)


@st.cache_resource(max_entries=32, show_spinner=False)
def _metrics(documents_key: tuple[str, ...], nodes_key: str, options_json: str, _documents: Any, _nodes: Any) -> Any:
    from core.measure.metrics import chunk_metrics

    return chunk_metrics(list(_documents), list(_nodes), **json.loads(options_json or "{}"))


def metrics_cached(documents: Sequence[Document], nodes: Sequence[Node], options_json: str = "{}") -> Any:
    """``core.measure.metrics.chunk_metrics(documents, nodes, **options)`` (a frozen ChunkMetrics; read it, never change it)."""
    return _metrics(_document_keys(documents), nodes_key(nodes), options_json, tuple(documents), tuple(nodes))


@st.cache_resource(max_entries=32, show_spinner=False)
def _report(documents_key: tuple[str, ...], nodes_key: str, options_json: str, _documents: Any, _nodes: Any) -> Any:
    from core.measure.metrics import chunk_report_deferred

    metrics, rows = chunk_report_deferred(list(_documents), list(_nodes), **json.loads(options_json or "{}"))
    return metrics, rows


def report_cached(
    documents: Sequence[Document], nodes: Sequence[Node], options_json: str = "{}"
) -> tuple[Any, Callable[[], list[dict[str, Any]]]]:
    """``core.measure.metrics.chunk_report_deferred``: the metrics, and the node table's rows on first call, from one
    measurement (shared: read only)."""
    return _report(_document_keys(documents), nodes_key(nodes), options_json, tuple(documents), tuple(nodes))


@st.cache_resource(max_entries=16, show_spinner=False)
def _semantic_analysis(doc_key: str, splitter_name: str, params_json: str, _document: Document) -> Any:
    from core.splitters import get_splitter

    splitter = get_splitter(splitter_name, **json.loads(params_json or "{}"))
    return splitter.analyze(_document)


def semantic_analysis_cached(document: Document, splitter_name: str, params_json: str) -> Any:
    """The semantic splitter's ``analyze(document)`` (distances, threshold, breakpoints)."""
    return _semantic_analysis(document_key(document), splitter_name, params_json, document)


@st.cache_resource(max_entries=256, show_spinner=False)
def _document_tokens(doc_key: str, tokenizer: str, _text: str) -> int:
    from core.tokens.counts import document_token_count

    return document_token_count(_text, tokenizer)


def document_tokens(document: Document, tokenizer: str = "model") -> int:
    """How many tokens a whole document has (the model's count shares the metrics' per-document token index)."""
    return _document_tokens(document_key(document), tokenizer, document.text)


@st.cache_data(max_entries=256, show_spinner=False)
def count_tokens(texts: tuple[str, ...], tokenizer: str = "model") -> list[int]:
    """Token counts of ``texts`` with a named tokenizer (characters, words or model)."""
    return model_tokenizer(tokenizer).count_many(list(texts))


@st.cache_resource(max_entries=64, show_spinner=False)
def _derived(key: str, _build: Callable[[], Any]) -> Any:
    return _build()


def derived(key: str, build: Callable[[], Any]) -> Any:
    """``build()``, computed once per ``key`` (which must name everything the value is made from,
    e.g. a :func:`nodes_key`): a page's figures and frames that only change with its nodes. Read-only."""
    return _derived(key, build)


def params_json(params: dict[str, Any]) -> str:
    """The canonical JSON of raw parameter values (the cache key for a splitter's settings)."""
    return json.dumps(
        {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}, sort_keys=True, default=str
    )


def clear() -> None:
    """Empty the content caches (loads, splits, measurements), keeping the models."""
    st.cache_data.clear()
    for store in (_load, _split, _metrics, _report, _semantic_analysis, _document_tokens, _derived):
        store.clear()


# -- models -----------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def model_tokenizer(name: str = "model") -> Any:
    """A tokenizer from :func:`core.tokens.tokenizers.get_tokenizer`, held once per process."""
    from core.tokens.tokenizers import get_tokenizer

    return get_tokenizer(name)


@st.cache_resource(show_spinner="Loading the embedding model (all-MiniLM-L6-v2, a few seconds)…")
def embedder() -> Any:
    """The embedding model, loaded once per process and shared by every session."""
    from core.embed.embedder import get_embedder

    return get_embedder()


def embedding_window() -> int:
    """How many text tokens the embedding model reads (its max_seq_length less [CLS] and [SEP])."""
    from core.measure.metrics import DEFAULT_MAX_SEQ_LENGTH, SPECIAL_TOKENS

    return DEFAULT_MAX_SEQ_LENGTH - SPECIAL_TOKENS
