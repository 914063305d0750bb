"""Typed accessors over ``st.session_state``: the only place pages read or write it.

Session state holds plain data only: uploaded files as bytes with their content
hash, failed uploads with their reasons, the chosen document and node ids, and
the current configuration as JSON-ready data (``PipelineConfig.to_dict``). Documents and nodes are derived
from these through the caches in :mod:`ui.cache`, so nothing heavy is pickled
into the session and every page sees the same documents.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

from core.errors import ConfigError

if TYPE_CHECKING:
    from core.config import PipelineConfig
    from core.query import QueryResult

_SOURCES = "cs_sources"  # list[SourceFile], in upload order
_FAILED = "cs_failed"  # dict[file_name, reason]
_CONFIG = "cs_config"  # dict: the current PipelineConfig as JSON-ready data
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
    """The current pipeline configuration (loader options, splitter, metadata, ...).

    Kept in the session as JSON-ready data and rebuilt on read, so the session
    holds plain values only.
    """
    from core.config import PipelineConfig

    data = st.session_state.get(_CONFIG)
    if data is not None:
        try:
            return PipelineConfig.from_dict(data)
        except ConfigError:
            pass  # e.g. a plugin splitter that is gone: fall back to the defaults
    return default_config()


def set_config(value: PipelineConfig) -> None:
    st.session_state[_CONFIG] = value.to_dict()


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
