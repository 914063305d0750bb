"""Streamlit caches over core: loads and splits keyed by content hash and config, models held once.

``st.cache_data`` keys on its arguments. Hashing a whole document's text on
every rerun would cost as much as the work saved, so documents hash by a
short key (their content id plus metadata and view settings, which the
Metadata page may edit) and configurations by ``PipelineConfig.key()``. File bytes are passed as ``_data`` (unhashed);
their sha256 ``digest`` is the key instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import streamlit as st

from core.schema import Document, Node


def document_key(document: Document) -> str:
    """What identifies a document's content and settings, cheaply."""
    digest = hashlib.sha1()
    digest.update(document.id.encode())
    digest.update(str(len(document.text)).encode())
    digest.update(json.dumps(document.metadata, sort_keys=True, default=str).encode())
    digest.update(json.dumps(document.view_settings(), sort_keys=True, default=str).encode())
    digest.update(repr(document.elements).encode())
    digest.update(repr(document.pages).encode())
    return digest.hexdigest()


def _config_key(config: Any) -> str:
    return config.key()


def _node_key(node: Node) -> str:
    return f"{node.id}:{node.start_char}:{node.end_char}:{hash(node.text)}"


HASH_FUNCS: dict[Any, Any] = {
    Document: document_key,
    Node: _node_key,
    "core.config.PipelineConfig": _config_key,
}


# -- loading -------------------------------------------------------------------


@st.cache_data(max_entries=64, show_spinner=False)
def load_file(digest: str, file_name: str, options_json: str, _data: bytes) -> list[Document]:
    """``core.load_bytes`` for one file; ``options_json`` holds the loader parameters (sorted JSON).

    Raises the LoadError unchanged (errors are not cached), so a page can show its sentence.
    """
    from core.loaders import load_bytes

    return load_bytes(_data, file_name, **json.loads(options_json or "{}"))


def load_source(source: Any, options: dict[str, Any] | None = None) -> list[Document]:
    """Load a :class:`ui.state.SourceFile` with loader ``options`` (cached by its digest)."""
    return load_file(source.digest, source.file_name, json.dumps(options or {}, sort_keys=True), source.data)


# -- splitting and what is computed from the nodes ------------------------------


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH_FUNCS)
def run_split_cached(documents: Sequence[Document], config: Any) -> list[Node]:
    """``core.documents.run_split(documents, config)``: the nodes of a whole pipeline configuration."""
    from core.documents import run_split

    return run_split(list(documents), config)


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH_FUNCS)
def split_cached(documents: Sequence[Document], splitter_name: str, params_json: str) -> list[Node]:
    """One splitter by name over ``documents`` (``params_json``: its raw parameters as sorted JSON)."""
    from core.splitters import get_splitter

    splitter = get_splitter(splitter_name, **json.loads(params_json or "{}"))
    return splitter.split(list(documents))


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH_FUNCS)
def metrics_cached(documents: Sequence[Document], nodes: Sequence[Node], options_json: str = "{}") -> Any:
    """``core.metrics.chunk_metrics(documents, nodes, **options)``."""
    from core.metrics import chunk_metrics

    return chunk_metrics(list(documents), list(nodes), **json.loads(options_json or "{}"))


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH_FUNCS)
def node_table_cached(documents: Sequence[Document], nodes: Sequence[Node], options_json: str = "{}") -> list[dict[str, Any]]:
    """``core.metrics.node_table(documents, nodes, **options)``: one row (a dict) per node."""
    from core.metrics import node_table

    return node_table(list(documents), list(nodes), **json.loads(options_json or "{}"))


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def semantic_analysis_cached(document: Document, splitter_name: str, params_json: str) -> Any:
    """The semantic splitter's ``analyze(document)`` (distances, threshold, breakpoints)."""
    from core.splitters import get_splitter

    splitter = get_splitter(splitter_name, **json.loads(params_json or "{}"))
    return splitter.analyze(document)


@st.cache_data(max_entries=256, show_spinner=False)
def count_tokens(texts: tuple[str, ...], tokenizer: str = "model") -> list[int]:
    """Token counts of ``texts`` with a named tokenizer (characters, words or model)."""
    return model_tokenizer(tokenizer).count_many(list(texts))


def params_json(params: dict[str, Any]) -> str:
    """The canonical JSON of raw parameter values (the cache key for a splitter's settings)."""
    return json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}, sort_keys=True, default=str)


# -- models -----------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def model_tokenizer(name: str = "model") -> Any:
    """A tokenizer from :func:`core.tokenizers.get_tokenizer`, held once per process."""
    from core.tokenizers import get_tokenizer

    return get_tokenizer(name)


@st.cache_resource(show_spinner="Loading the embedding model (all-MiniLM-L6-v2)…")
def embedder() -> Any:
    """The embedding model, loaded once per process and shared by every session."""
    from core.embeddings import get_embedder

    return get_embedder()


def embedding_window() -> int:
    """How many text tokens the embedding model reads (its max_seq_length less [CLS] and [SEP])."""
    from core.metrics import DEFAULT_MAX_SEQ_LENGTH, SPECIAL_TOKENS

    return DEFAULT_MAX_SEQ_LENGTH - SPECIAL_TOKENS
