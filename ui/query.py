"""The Query page's controls: the sample-query picker, the postprocessor chain builder, and the run.

The chain lives in ``st.session_state`` as plain data: a list of steps, each a
registry name, a stable id (so a step's widgets follow it when it moves) and the
parameter values it had at the end of the last run (so its widgets come back
as they were after a visit to another page, which clears widget state).
Parameters themselves are drawn from the postprocessors' declarations by
:mod:`ui.widgets`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st

from core.evaluation import EvalQuery, load_queries
from core.postprocessors import POSTPROCESSORS, Postprocessor
from core.query import QueryResult, run_query
from core.schema import MetadataMode, Node
from ui import widgets

QUERIES_FILE = Path(__file__).resolve().parent.parent / "sample_docs" / "queries.json"
CUSTOM = "Type your own…"

_CHAIN = "query.chain"  # list[dict]: {"uid": int, "name": str, "values": dict}
_CHAIN_SOURCE = "query.chain.source"  # the config's postprocessors the chain was last synced with
_NEXT_UID = "query.chain.next_uid"


# -- remembering a widget's value across pages ----------------------------------------


def remember(key: str, default: Any) -> None:
    """Seed widget ``key`` with its value from the last run on this page (or ``default``).

    Streamlit drops a widget's state when a run does not draw it (another page),
    so the page keeps a plain copy under ``key + ".saved"``; call :func:`keep` after drawing.
    """
    if key not in st.session_state:
        st.session_state[key] = st.session_state.get(f"{key}.saved", default)


def keep(key: str) -> None:
    st.session_state[f"{key}.saved"] = st.session_state.get(key)


# -- the query ----------------------------------------------------------------------


@lru_cache(maxsize=1)
def sample_queries() -> tuple[EvalQuery, ...]:
    """The queries shipped with the sample documents (empty if the file is missing)."""
    try:
        return tuple(load_queries(QUERIES_FILE))
    except Exception:  # a broken sample file must not take the page down
        return ()


def query_picker(key: str = "query") -> str:
    """A sample query, or one the user types; returns the query text (may be blank)."""
    samples = [q.query for q in sample_queries()]
    options = [*samples, CUSTOM]
    pick_key, text_key = f"{key}.sample", f"{key}.text"
    remember(pick_key, options[0])
    if st.session_state[pick_key] not in options:
        st.session_state[pick_key] = options[0]
    choice = st.selectbox(
        "Query",
        options,
        key=pick_key,
        help="The sample queries come with the sample documents (sample_docs/queries.json); pick the last entry to type one.",
    )
    keep(pick_key)
    if choice != CUSTOM:
        return choice
    remember(text_key, "")
    text = st.text_input("Your query", key=text_key, placeholder="What would a user ask?")
    keep(text_key)
    return text


# -- the postprocessor chain ----------------------------------------------------------


def _new_step(name: str, values: dict[str, Any] | None = None) -> dict[str, Any]:
    uid = st.session_state.get(_NEXT_UID, 0)
    st.session_state[_NEXT_UID] = uid + 1
    return {"uid": uid, "name": name, "values": dict(values or {})}


def chain_steps(configured: Sequence[Postprocessor]) -> list[dict[str, Any]]:
    """The chain being edited; (re)built from the session config when that changed elsewhere."""
    source = [{"name": post.name, "params": post.to_params()} for post in configured]
    if _CHAIN not in st.session_state or st.session_state.get(_CHAIN_SOURCE) != source:
        st.session_state[_CHAIN] = [_new_step(post.name, post.to_params()) for post in configured]
        st.session_state[_CHAIN_SOURCE] = source
    return st.session_state[_CHAIN]


def mark_synced(chain: Sequence[Postprocessor]) -> None:
    """Record the config's postprocessors as the chain's own, so the next run does not rebuild it."""
    st.session_state[_CHAIN_SOURCE] = [{"name": post.name, "params": post.to_params()} for post in chain]


def _add(name_key: str) -> None:
    name = st.session_state.get(name_key)
    if name in POSTPROCESSORS.names() and POSTPROCESSORS.get_class(name).unavailable_reason() is None:
        st.session_state[_CHAIN] = [*st.session_state[_CHAIN], _new_step(name)]


def _remove(uid: int) -> None:
    st.session_state[_CHAIN] = [step for step in st.session_state[_CHAIN] if step["uid"] != uid]


def _move(uid: int, offset: int) -> None:
    steps = list(st.session_state[_CHAIN])
    index = next(i for i, step in enumerate(steps) if step["uid"] == uid)
    target = index + offset
    if 0 <= target < len(steps):
        steps[index], steps[target] = steps[target], steps[index]
        st.session_state[_CHAIN] = steps


def step_key(uid: int, name: str) -> str:
    return f"query.post.{uid}.{name}"


def chain_editor(configured: Sequence[Postprocessor]) -> tuple[list[Postprocessor], list[str]]:
    """Draw the chain (each step with move, remove and its parameters) and the picker that adds one.

    Returns the built postprocessors in order and the problems of steps whose values are invalid.
    """
    steps = chain_steps(configured)
    built: list[Postprocessor] = []
    problems: list[str] = []
    if not steps:
        st.caption("No postprocessors: the retrieved nodes go to the LLM as they are. Add one below.")
    for position, step in enumerate(steps):
        cls = POSTPROCESSORS.get_class(step["name"])
        with st.container(border=True):
            title, up, down, remove = st.columns([6, 1, 1, 1], vertical_alignment="center", gap="small")
            title.markdown(f"**{position + 1}. {widgets.label_for(cls.name)}**")
            up.button(
                "", icon=":material/arrow_upward:", key=f"query.up.{step['uid']}", type="tertiary",
                help="Move up (run earlier)", disabled=position == 0, on_click=_move, args=(step["uid"], -1),
            )
            down.button(
                "", icon=":material/arrow_downward:", key=f"query.down.{step['uid']}", type="tertiary",
                help="Move down (run later)", disabled=position == len(steps) - 1, on_click=_move, args=(step["uid"], 1),
            )
            remove.button(
                "", icon=":material/close:", key=f"query.remove.{step['uid']}", type="tertiary",
                help="Remove from the chain", on_click=_remove, args=(step["uid"],),
            )
            st.caption(cls.summary)
            values = widgets.param_widgets(cls, step_key(step["uid"], cls.name), step["values"])
            instance, problem = widgets.try_build(cls, values)
            if problem:
                st.error(problem, icon=":material/error:")
                problems.append(f"step {position + 1} ({cls.name}): {problem}")
            else:
                step["values"] = instance.to_params()
                built.append(instance)
    _adder()
    return built, problems


def _adder() -> None:
    names = POSTPROCESSORS.names()
    name_key = "query.add"
    if st.session_state.get(name_key) not in names:
        st.session_state[name_key] = names[0]

    def label(name: str) -> str:
        unavailable = POSTPROCESSORS.get_class(name).unavailable_reason()
        return f"{widgets.label_for(name)} (unavailable)" if unavailable else widgets.label_for(name)

    name = st.selectbox("Add a postprocessor", names, key=name_key, format_func=label)
    reason = POSTPROCESSORS.get_class(name).unavailable_reason()
    if reason:
        st.warning(f"{widgets.label_for(name)} cannot run here: {reason}.", icon=":material/block:")
    else:
        st.caption(POSTPROCESSORS.get_class(name).summary)
    st.button(
        "Add to the chain", icon=":material/add:", key="query.add.button", disabled=reason is not None,
        on_click=_add, args=(name_key,), width="stretch",
    )


# -- the run ----------------------------------------------------------------------------


def node_embeddings(nodes: Sequence[Node], embedder: Any) -> np.ndarray:
    """Every node's EMBED view embedded, with a progress bar while the model works.

    The embedder caches vectors by (model, text hash), so only texts it has not
    seen are encoded: a parameter change embeds only the chunks that changed.
    """
    texts = [node.get_content(MetadataMode.EMBED) for node in nodes]
    bar = st.empty()

    def report(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"Embedding nodes… {done:,} of {total:,}")

    vectors = embedder.embed(texts, progress=report)
    bar.empty()
    return vectors


def run(
    nodes: Sequence[Node],
    query: str,
    chain: Sequence[Postprocessor],
    *,
    top_k: int,
    mode: str,
    alpha: float,
    embedder: Any,
    embeddings: np.ndarray | None,
) -> QueryResult:
    """``core.query.run_query`` with the page's embedder and precomputed node embeddings.

    Not cached by Streamlit: with the vectors at hand it is quick, and the nodes'
    views (which the Metadata page changes) would all have to be part of a key.
    """
    return run_query(
        list(nodes),
        query,
        embedder=embedder,
        top_k=top_k,
        mode=mode,  # type: ignore[arg-type]
        alpha=alpha,
        postprocessors=list(chain),
        node_embeddings=embeddings,
    )
