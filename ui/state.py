"""Typed accessors over ``st.session_state``: the only place the app keeps its own state.

A widget's value stays under the widget's ``key=``; the few reads, seeds and
resets of such values that a page needs go through the "widget values" section
here too. Everything else goes through here as well: uploaded files as bytes
with their content hash, failed uploads with their reasons, the chosen document
and node ids, the current configuration (the frozen :class:`PipelineConfig`
itself, never rebuilt on a read), and the few values pages remember between
reruns. Documents and nodes are derived from these through the caches in
:mod:`ui.cache`, so nothing heavy is kept in the session and every page sees
the same documents.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import streamlit as st

if TYPE_CHECKING:
    from core.config import PipelineConfig
    from core.evaluation.queries import EvalQuery
    from core.postprocessors import Postprocessor
    from core.query.chain import QueryResult

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


def llm_pending() -> tuple[Any, ...]:
    """LLM extractors a link asked for, held out of the configuration until a person runs them (ui.llm)."""
    return tuple(st.session_state.get(_LLM_PENDING, ()))


def set_llm_pending(extractors: tuple[Any, ...]) -> None:
    st.session_state[_LLM_PENDING] = tuple(extractors)


def approve_llm(approval: str) -> None:
    st.session_state[_LLM_APPROVED] = {*st.session_state.get(_LLM_APPROVED, set()), approval}


def llm_approved(approval: str) -> bool:
    return approval in st.session_state.get(_LLM_APPROVED, set())


def cancel_llm(approval: str) -> None:
    """Take back a Run (ui.llm's Cancel): the extractors leave the configuration until Run is pressed again."""
    st.session_state[_LLM_APPROVED] = st.session_state.get(_LLM_APPROVED, set()) - {approval}
    st.session_state[_LLM_CANCELLED] = approval


def llm_cancelled(approval: str) -> bool:
    """Whether the last run of these settings was cancelled (until Run is pressed again)."""
    return st.session_state.get(_LLM_CANCELLED) == approval


def default_config() -> PipelineConfig:
    """The defaults (core picks the first registered splitter if the default one is not installed)."""
    from core.config import PipelineConfig

    return PipelineConfig()


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


def set_last_query(result: QueryResult, config: PipelineConfig) -> None:
    """Keep the Query page's last result and the configuration it ran with (a frozen record of one run)."""
    st.session_state[_LAST_QUERY] = (result, config)


def last_query() -> tuple[QueryResult, PipelineConfig] | None:
    """The Query page's last result and the configuration it ran with, if it ran in this session."""
    return st.session_state.get(_LAST_QUERY)


# -- what pages remember between reruns -----------------------------------------

_UPLOADER_GENERATION = "cs_uploader_generation"  # int: a new number draws a fresh, empty uploader
_EDITOR_BASE = "cs_metadata_editor_base"  # list[dict]: the rows the metadata editor's edits apply to
_PANE_SELECTIONS = "cs_pane_selections"  # dict[pane key, node id]: the selection each source pane last followed
_PICKED_ROWS = "cs_picked_rows"  # dict[table key, row | None]: each table's selected row in the last run
_SAVED_WIDGETS = "cs_saved_widgets"  # dict[widget key, value]: widgets kept across pages by prefix (keep_widgets)
_SEEDED_FOR = "cs_seeded_for"  # dict[widget key, document id]: the document a per-document widget was seeded from
_EVALUATION = "cs_evaluation"  # dict: the Evaluate page's last result (kind, rows, signature, top_k, mode)
_EVALUATION_REQUESTED = "cs_evaluation_requested"  # bool: the run button was pressed
_EVALUATION_CANCELLED = "cs_evaluation_cancelled"  # bool: Cancel was pressed while a run asked an LLM


_LLM_APPROVED = "cs_llm_approved"  # set[str]: the LLM runs a person started with Run (ui.llm's approvals)
_LLM_CANCELLED = "cs_llm_cancelled"  # str: the approval whose run a person cancelled (ui.llm's Cancel)
_LLM_PENDING = "cs_llm_pending"  # tuple[LLMExtractor, ...]: a link's LLM extractors, not run until a person says so
_COMPARE_SLOTS = "cs_compare_slots"  # dict[slot, CompareSlot]: each Compare configuration, kept across pages


@dataclass(frozen=True)
class CompareSlot:
    """One Compare configuration as (splitter name, parameters): where it started and what it holds now.

    Kept because Streamlit drops a widget's value on a page that does not draw it; ``start`` tells
    a slot the person changed (it keeps its settings) from one left as it started (it follows the
    session's splitter when that changes).
    """

    start: tuple[str, dict[str, Any]]
    current: tuple[str, dict[str, Any]]

    @property
    def changed(self) -> bool:
        return self.current != self.start


def compare_slots() -> dict[int, CompareSlot]:
    return dict(st.session_state.get(_COMPARE_SLOTS, {}))


def set_compare_slot(slot: int, value: CompareSlot) -> None:
    st.session_state[_COMPARE_SLOTS] = {**st.session_state.get(_COMPARE_SLOTS, {}), slot: value}


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


def seeded_for(key: str) -> str | None:
    """The document widget ``key`` last took its default from (a default that differs from document to document)."""
    return st.session_state.get(_SEEDED_FOR, {}).get(key)


def set_seeded_for(key: str, doc_id: str) -> None:
    st.session_state[_SEEDED_FOR] = {**st.session_state.get(_SEEDED_FOR, {}), key: doc_id}


def request_evaluation() -> None:
    st.session_state[_EVALUATION_REQUESTED] = True


def take_evaluation_request() -> bool:
    """True once after :func:`request_evaluation`, then False until it is requested again."""
    return bool(st.session_state.pop(_EVALUATION_REQUESTED, False))


def cancel_evaluation() -> None:
    """Cancel was pressed under an evaluation's bar (the run itself stops at its next progress line)."""
    st.session_state[_EVALUATION_CANCELLED] = True


def take_evaluation_cancelled() -> bool:
    """Whether Cancel stopped the last run (said once)."""
    return bool(st.session_state.pop(_EVALUATION_CANCELLED, False))


def evaluation() -> dict[str, Any] | None:
    return st.session_state.get(_EVALUATION)


def set_evaluation(result: dict[str, Any]) -> None:
    st.session_state[_EVALUATION] = result


def written_queries() -> list[EvalQuery]:
    """The queries the person wrote on the Evaluate page, in the order written."""
    return list(st.session_state.get("evaluate.written_queries", []))


def add_written_query(query: EvalQuery) -> None:
    st.session_state["evaluate.written_queries"] = [*written_queries(), query]


def clear_written_queries() -> None:
    st.session_state.pop("evaluate.written_queries", None)


def drafted_questions() -> Any:
    """The last questions the LLM drafted on the Evaluate page (a core.evaluation.drafting.Drafted), or None."""
    return st.session_state.get("evaluate.drafted")


def request_drafting() -> None:
    """The Draft button's callback (a click survives the app frame's rerun of the script)."""
    st.session_state["evaluate.draft.requested"] = True


def take_drafting_request() -> bool:
    """True once after :func:`request_drafting`."""
    return bool(st.session_state.pop("evaluate.draft.requested", False))


def set_drafted_questions(drafted: Any) -> None:
    st.session_state["evaluate.drafted"] = drafted


# -- widget values ------------------------------------------------------------------
# A widget keeps its value under its ``key=``; these are the only reads and writes of those values outside the widget.

_ABSENT = object()


def widget_value(key: str, default: Any = None) -> Any:
    """What widget ``key`` holds now (``default`` before it is first drawn or seeded)."""
    return st.session_state.get(key, default)


def has_widget_value(key: str) -> bool:
    return key in st.session_state


def set_widget_value(key: str, value: Any) -> None:
    """Make widget ``key`` show ``value`` (before it is drawn in this run, or from a callback)."""
    st.session_state[key] = value


def seed_widget(key: str, value: Any) -> Any:
    """Give widget ``key`` its first value, unless it already holds one; return what it holds."""
    return st.session_state.setdefault(key, value)


def keep_valid(key: str, options: Iterable[Any], preferred: Any = _ABSENT) -> None:
    """Reset widget ``key`` when what it holds is no longer among ``options`` (or it holds nothing yet).

    Options change under a widget that keeps its value (a document removed, fewer
    parts of a shorter document), and Streamlit refuses a value that is not an
    option. The reset value is ``preferred`` when that is an option itself, else
    the first option. A list (a multiselect's value) must be among them as a whole.
    """
    choices = list(options)
    stored = st.session_state.get(key, _ABSENT)
    if _among(stored, choices):
        return
    st.session_state[key] = preferred if _among(preferred, choices) else choices[0]


def _among(value: Any, choices: list[Any]) -> bool:
    if isinstance(value, list):
        return set(value) <= set(choices)
    return value is not _ABSENT and value in choices


def forget_widgets(prefix: str, *, keep: Iterable[str] = ()) -> None:
    """Drop the values of every widget whose key starts with ``prefix`` (but those in ``keep``): they redraw from their defaults."""
    kept = set(keep)
    for key in list(st.session_state):
        if str(key).startswith(prefix) and key not in kept:
            del st.session_state[key]


def remember_widget(key: str, default: Any) -> None:
    """Seed widget ``key`` with its value from the last run that drew it (or ``default``).

    Streamlit drops a widget's value when a run does not draw it (another page),
    so a plain copy is kept under ``key + ".saved"``; call :func:`keep_widget` after drawing.
    """
    if key not in st.session_state:
        st.session_state[key] = st.session_state.get(f"{key}.saved", default)


def keep_widget(key: str) -> None:
    st.session_state[f"{key}.saved"] = st.session_state.get(key)


def remember_widgets(prefix: str) -> None:
    """:func:`remember_widget` for every widget whose key starts with ``prefix`` that :func:`keep_widgets` kept."""
    for key, value in st.session_state.get(_SAVED_WIDGETS, {}).items():
        if key.startswith(prefix) and key not in st.session_state:
            st.session_state[key] = value


def keep_widgets(prefix: str) -> None:
    """Keep a copy of every widget value whose key starts with ``prefix`` (value widgets only: no buttons)."""
    kept = {str(key): value for key, value in st.session_state.items() if str(key).startswith(prefix)}
    st.session_state[_SAVED_WIDGETS] = {**st.session_state.get(_SAVED_WIDGETS, {}), **kept}


# -- the Query page's postprocessor chain ------------------------------------------------

_CHAIN = "query.chain"  # list[ChainStep], in run order
_CHAIN_SOURCE = "query.chain.source"  # the config's postprocessors (plain data) the chain was last synced with
_NEXT_UID = "query.chain.next_uid"  # int: the id the next step gets


@dataclass(frozen=True)
class ChainStep:
    """One postprocessor being edited on the Query page.

    ``uid`` is stable, so a step's widgets follow it when it moves; ``values`` are
    its parameters at the end of the last run, so its widgets come back as they
    were after a visit to another page (which clears widget values).
    """

    uid: int
    name: str
    values: dict[str, Any]


def _new_step(name: str, values: dict[str, Any] | None = None) -> ChainStep:
    uid = st.session_state.get(_NEXT_UID, 0)
    st.session_state[_NEXT_UID] = uid + 1
    return ChainStep(uid, name, dict(values or {}))


def _as_source(chain: Sequence[Postprocessor]) -> list[dict[str, Any]]:
    return [{"name": post.name, "params": post.to_params()} for post in chain]


def chain_steps(configured: Sequence[Postprocessor]) -> list[ChainStep]:
    """The chain being edited; (re)built from the config's postprocessors when they changed elsewhere (e.g. a link)."""
    source = _as_source(configured)
    if _CHAIN not in st.session_state or st.session_state.get(_CHAIN_SOURCE) != source:
        st.session_state[_CHAIN] = [_new_step(post.name, post.to_params()) for post in configured]
        st.session_state[_CHAIN_SOURCE] = source
    return list(st.session_state[_CHAIN])


def mark_chain_synced(chain: Sequence[Postprocessor]) -> None:
    """Record the config's postprocessors as the chain's own, so the next run does not rebuild it."""
    st.session_state[_CHAIN_SOURCE] = _as_source(chain)


def add_chain_step(name: str, values: dict[str, Any]) -> None:
    st.session_state[_CHAIN] = [*st.session_state[_CHAIN], _new_step(name, values)]


def remove_chain_step(uid: int) -> None:
    st.session_state[_CHAIN] = [step for step in st.session_state[_CHAIN] if step.uid != uid]


def move_chain_step(uid: int, offset: int) -> None:
    """Swap the step with its neighbour ``offset`` places away (nothing happens past either end)."""
    steps = list(st.session_state[_CHAIN])
    index = next(i for i, step in enumerate(steps) if step.uid == uid)
    target = index + offset
    if 0 <= target < len(steps):
        steps[index], steps[target] = steps[target], steps[index]
        st.session_state[_CHAIN] = steps


def set_chain_step_values(uid: int, values: dict[str, Any]) -> None:
    st.session_state[_CHAIN] = [
        ChainStep(step.uid, step.name, values) if step.uid == uid else step for step in st.session_state[_CHAIN]
    ]
