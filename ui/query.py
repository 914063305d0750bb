"""The Query page's inputs: the retrieval settings and the chain in the sidebar, the query and the context budget.

The settings are written back to the session config (and the URL), so a shared
link or an export carries them. Running the query is :mod:`ui.query_run`, the
chain editor :mod:`ui.chain_editor`, and drawing the trace :mod:`ui.trace`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import streamlit as st

from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.errors import ChunkScopeError
from core.evaluation.queries import EvalQuery, load_queries
from core.postprocessors import Postprocessor
from core.schema import Document
from ui import cache, state, widgets
from ui.chain_editor import chain_editor

QUERIES_FILE = Path(__file__).resolve().parent.parent / "sample_docs" / "queries.json"
CUSTOM = "Type your own…"


# -- settings (sidebar) and the session config ----------------------------------------


def settings_or_stop(
    config: PipelineConfig, key: str, documents: Sequence[Document] = ()
) -> tuple[RetrievalSettings, list[Postprocessor]]:
    """Draw the retrieval settings and the chain in the sidebar; with an invalid value, say so and end the run.

    ``documents`` split with ``config`` tell the chain editor which metadata keys the nodes carry.
    """
    with st.sidebar:
        retrieval = retrieval_settings(config.retrieval, f"{key}.retrieval", levels=bool(config.splitter.has_levels))
        st.header("Postprocessors", anchor=False)
        st.caption("Run in order, top to bottom, on the retrieved nodes.")
        chain, chain_problems = chain_editor(
            config.postprocessors,
            partial(current_query, key),
            cache_once(partial(node_metadata_keys, documents, config)),
        )
    if retrieval is None or chain_problems:
        st.error("Fix the settings in the sidebar to run the query.", icon=":material/error:")
        st.stop()
    return retrieval, chain


def cache_once(compute: Callable[[], Any]) -> Callable[[], Any]:
    """``compute``, run at most once (on the first call), its value kept for the rest of the run."""
    return lru_cache(maxsize=1)(compute)


def node_metadata_keys(documents: Sequence[Document], config: PipelineConfig) -> frozenset[str] | None:
    """Every metadata key a node of the session's split carries (the split is the page's, cached); None if it fails."""
    if not documents:
        return None
    try:
        nodes = cache.run_split_cached(documents, config)
    except ChunkScopeError:
        return None  # the page says why when it splits
    return frozenset(key for node in nodes for key in node.metadata)


def retrieval_settings(current: RetrievalSettings, key: str, *, levels: bool) -> RetrievalSettings | None:
    """The retrieval widgets (alpha and fusion only in hybrid mode, what is returned only for chunks with
    ``levels``); None, with the problem shown, when invalid."""
    st.header("Retrieval", anchor=False)
    return widgets.retrieval_form(current, key, levels=levels)


def apply_settings(config: PipelineConfig, retrieval: RetrievalSettings, chain: Sequence[Postprocessor]) -> PipelineConfig:
    """Write the page's settings back to the session config and the URL, so a shared link or an export carries them."""
    new_config = config.replace(postprocessors=tuple(chain), retrieval=retrieval)
    if new_config != config:
        state.set_config(new_config)
        config = new_config
    state.mark_chain_synced(chain)
    st.query_params.from_dict(config.to_query_params())
    return config


# -- the query ----------------------------------------------------------------------


@lru_cache(maxsize=1)
def sample_queries() -> tuple[EvalQuery, ...]:
    """The queries shipped with the sample documents (empty if the file is missing)."""
    try:
        return tuple(load_queries(QUERIES_FILE))
    except Exception:  # a broken sample file must not take the page down
        return ()


def current_query(key: str = "query") -> str:
    """The query the picker holds now (a sample, or the typed text), without drawing it."""
    choice = state.widget_value(f"{key}.sample", "")
    return str(state.widget_value(f"{key}.text", "")) if choice == CUSTOM else str(choice or "")


def query_picker(key: str = "query") -> str:
    """A sample query, or one the user types; returns the query text (may be blank)."""
    samples = [q.query for q in sample_queries()]
    options = [*samples, CUSTOM]
    pick_key, text_key = f"{key}.sample", f"{key}.text"
    state.remember_widget(pick_key, options[0])
    state.keep_valid(pick_key, options)
    choice = st.selectbox(
        "Query",
        options,
        key=pick_key,
        help="The sample queries come with the sample documents (sample_docs/queries.json); pick the last entry to type one.",
    )
    state.keep_widget(pick_key)
    if choice != CUSTOM:
        return choice
    state.remember_widget(text_key, "")
    text = st.text_input("Your query", key=text_key, placeholder="What would a user ask?")
    state.keep_widget(text_key)
    return text


def query_and_budget(key: str, default_budget: int) -> tuple[str, int]:
    """The query picker and, beside it, the context budget in tokens; returns both (the query may be blank)."""
    query_col, budget_col = st.columns([5, 1], vertical_alignment="bottom")
    with query_col:
        query = query_picker(key)
    with budget_col:
        budget_key = f"{key}.budget"
        state.remember_widget(budget_key, default_budget)
        budget = st.number_input(
            "Room in the prompt (tokens)",
            min_value=16,
            max_value=1_000_000,
            step=256,
            key=budget_key,
            help="How many tokens the prompt has for context (your LLM's window less the question and instructions); "
            "the final context is counted against it. The retrieval's context budget, in the sidebar, decides what "
            "a hierarchy returns; this only checks what the chain leaves.",
        )
        state.keep_widget(budget_key)
    return query, budget
