"""Typed accessors over ``st.session_state``: the only place the app keeps its own state.

A widget's value stays under the widget's ``key=``, read and seeded where the
widget is drawn; everything else goes through here: uploaded files as bytes
with their content hash, failed uploads with their reasons, the chosen document
and node ids, the current configuration (the frozen :class:`PipelineConfig`
itself, never rebuilt on a read), and the few values pages remember between
reruns. Documents and nodes are derived from these through the caches in
:mod:`ui.cache`, so nothing heavy is kept in the session and every page sees
the same documents.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import streamlit as st

from core.errors import ConfigError

if TYPE_CHECKING:
    from core.config import PipelineConfig
    from core.query import QueryResult

_SOURCES = "cs_sources"  # list[SourceFile], in upload order
_FAILED = "cs_failed"  # dict[file_name, reason]
_CONFIG = "cs_config"  # PipelineConfig: frozen, so kept as it is
_DOC = "cs_doc_id"
_NODE = "cs_node_id"
_FLAGS = "cs_flags"  # set[str]: one-time things done this session (samples loaded, URL read, ...)
_MESSAGES = "cs_messages"  # list[Message]: warnings to show once (e.g. dropped URL values)


@dataclass(frozen=True)
class SourceFile:
    """One uploaded (or sample) file: its bytes and the hash that keys every cache."""

    file_name: str
    data: bytes
    digest: str

    @property
    def size(self) -> int:
        return len(self.data)


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


# -- files -------------------------------------------------------------------


def sources() -> list[SourceFile]:
    """The loaded files, in the order they were added."""
    return list(st.session_state.get(_SOURCES, []))


def add_source(file_name: str, data: bytes) -> SourceFile:
    """Add a file (replacing one with the same name); clears an earlier failure for that name."""
    source = SourceFile(file_name=file_name, data=data, digest=digest_of(data))
    kept = [s for s in sources() if s.file_name != file_name]
    st.session_state[_SOURCES] = [*kept, source]
    clear_failure(file_name)
    return source


def remove_source(file_name: str) -> None:
    st.session_state[_SOURCES] = [s for s in sources() if s.file_name != file_name]


def has_source(file_name: str, digest: str | None = None) -> bool:
    return any(s.file_name == file_name and (digest is None or s.digest == digest) for s in sources())


# -- failures ----------------------------------------------------------------


def failed_uploads() -> dict[str, str]:
    """File name -> the one-sentence reason it could not be loaded."""
    return dict(st.session_state.get(_FAILED, {}))


def record_failure(file_name: str, reason: str) -> None:
    failed = failed_uploads()
    failed[file_name] = reason
    st.session_state[_FAILED] = failed


def clear_failure(file_name: str) -> None:
    failed = failed_uploads()
    if failed.pop(file_name, None) is not None:
        st.session_state[_FAILED] = failed


# -- configuration -----------------------------------------------------------


def config() -> PipelineConfig:
    """The current pipeline configuration (loader options, splitter, metadata, ...); the defaults until one is set.

    Only configs already built are stored, so one read from outside (a link) is
    checked where it is read, not on every rerun.
    """
    stored: PipelineConfig | None = st.session_state.get(_CONFIG)
    return stored if stored is not None else default_config()


def set_config(value: PipelineConfig) -> None:
    st.session_state[_CONFIG] = value


def default_config() -> PipelineConfig:
    """The defaults; if the default splitter is unavailable, the first registered one."""
    from core.config import PipelineConfig
    from core.splitters import SPLITTERS

    try:
        return PipelineConfig()
    except ConfigError:
        first = next(iter(SPLITTERS))
        return PipelineConfig(splitter=first())


# -- selection ---------------------------------------------------------------


def selected_doc_id() -> str | None:
    return st.session_state.get(_DOC)


def select_doc(doc_id: str | None) -> None:
    if st.session_state.get(_DOC) != doc_id:
        st.session_state[_NODE] = None
    st.session_state[_DOC] = doc_id


def selected_node_id() -> str | None:
    return st.session_state.get(_NODE)


def select_node(node_id: str | None) -> None:
    st.session_state[_NODE] = node_id


# -- once-per-session flags and messages -------------------------------------


def once(flag: str) -> bool:
    """True the first time it is asked for ``flag`` in this session, False afterwards."""
    done: set[str] = st.session_state.setdefault(_FLAGS, set())
    if flag in done:
        return False
    done.add(flag)
    return True


@dataclass(frozen=True)
class Message:
    """A warning shown once; ``offer_upload`` adds a way to the uploader (e.g. a link names a missing file)."""

    text: str
    offer_upload: bool = False


def push_message(text: str, *, offer_upload: bool = False) -> None:
    st.session_state.setdefault(_MESSAGES, []).append(Message(text, offer_upload))


def pop_messages() -> list[Message]:
    messages = list(st.session_state.get(_MESSAGES, []))
    st.session_state[_MESSAGES] = []
    return messages


# -- the last query run (for the snapshot) ------------------------------------

_LAST_QUERY = "cs_last_query"  # QueryResult: the Query page's last run, which Export's snapshot can include


def set_last_query(result: QueryResult) -> None:
    """Keep the Query page's last result (a frozen record of one run; not plain data, but never rebuilt)."""
    st.session_state[_LAST_QUERY] = result


def last_query() -> QueryResult | None:
    return st.session_state.get(_LAST_QUERY)


# -- what pages remember between reruns -----------------------------------------

_UPLOADER_GENERATION = "cs_uploader_generation"  # int: a new number draws a fresh, empty uploader
_EDITOR_BASE = "cs_metadata_editor_base"  # list[dict]: the rows the metadata editor's edits apply to
_PANE_SELECTIONS = "cs_pane_selections"  # dict[pane key, node id]: the selection each source pane last followed
_PICKED_ROWS = "cs_picked_rows"  # dict[table key, row | None]: each table's selected row in the last run
_EVALUATION = "cs_evaluation"  # dict: the Evaluate page's last result (kind, rows, signature, top_k, mode)
_EVALUATION_REQUESTED = "cs_evaluation_requested"  # bool: the run button was pressed


def uploader_generation() -> int:
    return st.session_state.get(_UPLOADER_GENERATION, 0)


def renew_uploader() -> None:
    st.session_state[_UPLOADER_GENERATION] = uploader_generation() + 1


def metadata_editor_base() -> list[dict[str, str]] | None:
    return st.session_state.get(_EDITOR_BASE)


def set_metadata_editor_base(rows: list[dict[str, str]]) -> None:
    st.session_state[_EDITOR_BASE] = rows


def followed_selection(pane: str) -> str | None:
    return st.session_state.get(_PANE_SELECTIONS, {}).get(pane)


def follow_selection(pane: str, node_id: str | None) -> None:
    st.session_state[_PANE_SELECTIONS] = {**st.session_state.get(_PANE_SELECTIONS, {}), pane: node_id}


def picked_row(table: str) -> int | None:
    return st.session_state.get(_PICKED_ROWS, {}).get(table)


def set_picked_row(table: str, row: int | None) -> None:
    st.session_state[_PICKED_ROWS] = {**st.session_state.get(_PICKED_ROWS, {}), table: row}


def request_evaluation() -> None:
    st.session_state[_EVALUATION_REQUESTED] = True


def take_evaluation_request() -> bool:
    """True once after :func:`request_evaluation`, then False until it is requested again."""
    return bool(st.session_state.pop(_EVALUATION_REQUESTED, False))


def evaluation() -> dict[str, Any] | None:
    return st.session_state.get(_EVALUATION)


def set_evaluation(result: dict[str, Any]) -> None:
    st.session_state[_EVALUATION] = result
