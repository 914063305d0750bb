"""The Query page's pieces: settings, the sample-query picker, the postprocessor chain builder, the run, and the trace.

The chain lives in ``st.session_state`` as plain data: a list of steps, each a
registry name, a stable id (so a step's widgets follow it when it moves) and the
parameter values it had at the end of the last run (so its widgets come back
as they were after a visit to another page, which clears widget state).
Parameters themselves are drawn from the postprocessors' declarations by
:mod:`ui.widgets`. What the trace shows is built by :mod:`core.trace_view`
(rows, HTML) and :mod:`ui.trace` (figures); the functions here draw it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from core import trace_view
from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.errors import ChunkScopeError
from core.evaluation import EvalQuery, load_queries
from core.postprocessors import POSTPROCESSORS, Postprocessor
from core.query import QueryResult, StageTrace, final_context, run_query
from core.schema import Document, MetadataMode, Node
from core.splitters.hierarchical import leaf_nodes
from ui import cache, state, trace, widgets

STAGE_COLUMNS = {
    "status": st.column_config.TextColumn("Status", width="small"),
    "node": st.column_config.TextColumn("Node", help="File and the node's number within it (as on the Chunks page)"),
    "rank_in": st.column_config.NumberColumn(
        "Rank in", format="%d", help=f"1-based position in the stage's input; {trace_view.MISSING} if the stage added it"
    ),
    "rank_out": st.column_config.NumberColumn(
        "Rank out", format="%d", help=f"1-based position in the stage's output; {trace_view.MISSING} if dropped"
    ),
    "score_in": st.column_config.NumberColumn("Score in", format="%.4f"),
    "score_out": st.column_config.NumberColumn("Score out", format="%.4f"),
    "fate": st.column_config.TextColumn("Fate", width="large", help="What this stage did to the node, and why"),
    "text": st.column_config.TextColumn("Text (after the stage)", width="large"),
}
RETRIEVAL_COLUMNS = {
    "rank": st.column_config.NumberColumn("Rank"),
    "node": STAGE_COLUMNS["node"],
    "score": st.column_config.NumberColumn("Score", format="%.4f"),
    "text": st.column_config.TextColumn("Text", width="large"),
}

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


# -- settings (sidebar) and the session config ----------------------------------------


def settings_or_stop(config: PipelineConfig, key: str) -> tuple[RetrievalSettings, list[Postprocessor]]:
    """Draw the retrieval settings and the chain in the sidebar; with an invalid value, say so and end the run."""
    with st.sidebar:
        retrieval = retrieval_settings(config.retrieval, f"{key}.retrieval")
        st.header("Postprocessors", anchor=False)
        st.caption("Run in order, top to bottom, on the retrieved nodes.")
        chain, chain_problems = chain_editor(config.postprocessors)
    if retrieval is None or chain_problems:
        st.error("Fix the settings in the sidebar to run the query.", icon=":material/error:")
        st.stop()
    return retrieval, chain


def retrieval_settings(current: RetrievalSettings, key: str) -> RetrievalSettings | None:
    """The retrieval widgets (alpha only in hybrid mode); None, with the problem shown, when invalid."""
    st.header("Retrieval", anchor=False)
    mode_now = st.session_state.get(widgets.widget_key(key, "mode"), current.mode)
    raw = widgets.param_widgets(
        RetrievalSettings, key, current.to_params(), exclude=() if mode_now == "hybrid" else ("alpha",)
    )
    raw.setdefault("alpha", current.alpha)
    retrieval, problem = widgets.try_build(RetrievalSettings, raw)
    if problem:
        st.error(widgets.md_escape(problem), icon=":material/error:")
    return retrieval


def apply_settings(config: PipelineConfig, retrieval: RetrievalSettings, chain: Sequence[Postprocessor]) -> PipelineConfig:
    """Write the page's settings back to the session config and the URL, so a shared link or an export carries them."""
    new_config = config.replace(postprocessors=tuple(chain), retrieval=retrieval)
    if new_config != config:
        state.set_config(new_config)
        config = new_config
    mark_synced(chain)
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
    choice = st.session_state.get(f"{key}.sample", "")
    return str(st.session_state.get(f"{key}.text", "")) if choice == CUSTOM else str(choice or "")


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


def query_and_budget(key: str, default_budget: int) -> tuple[str, int]:
    """The query picker and, beside it, the context budget in tokens; returns both (the query may be blank)."""
    query_col, budget_col = st.columns([5, 1], vertical_alignment="bottom")
    with query_col:
        query = query_picker(key)
    with budget_col:
        budget_key = f"{key}.budget"
        remember(budget_key, default_budget)
        budget = st.number_input(
            "Context budget (tokens)",
            min_value=16,
            max_value=1_000_000,
            step=256,
            key=budget_key,
            help="How many tokens you can spend on context in the prompt; the final context is counted against it.",
        )
        keep(budget_key)
    return query, budget


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
        # Added with values that act on the current query (e.g. a keyword from it), never as a silent no-op.
        values = POSTPROCESSORS.get_class(name).starting_values(current_query())
        st.session_state[_CHAIN] = [*st.session_state[_CHAIN], _new_step(name, values)]


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
                st.error(widgets.md_escape(problem), icon=":material/error:")
                problems.append(f"step {position + 1} ({cls.name}): {problem}")
            else:
                step["values"] = instance.to_params()
                built.append(instance)
                idle = instance.idle_reason()
                if idle:
                    st.info(f"This step changes nothing: {idle}.", icon=":material/info:")
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
        st.warning(f"{widgets.label_for(name)} cannot run here: {widgets.md_escape(reason)}.", icon=":material/block:")
    else:
        st.caption(POSTPROCESSORS.get_class(name).summary)
    st.button(
        "Add to the chain", icon=":material/add:", key="query.add.button", disabled=reason is not None,
        on_click=_add, args=(name_key,), width="stretch",
    )


# -- the run ----------------------------------------------------------------------------


class TimeLeft:
    """Seconds left in an embedding run, from its pace since the first progress report.

    The first report may count texts found in the cache, which cost nothing, so
    the pace is taken between reports of batches the model encoded.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._first: tuple[float, int] | None = None

    def __call__(self, done: int, total: int) -> float | None:
        now = self._clock()
        if self._first is None:
            self._first = (now, done)
            return None
        started, done_then = self._first
        if done <= done_then or now <= started:
            return None
        return (total - done) * (now - started) / (done - done_then)


def progress_text(label: str, done: int, total: int, seconds_left: float | None) -> str:
    """The progress bar's line: what is embedded with what, how far, and (once known) about how long is left."""
    text = f"Embedding the nodes with {label}… {done:,} of {total:,}"
    if seconds_left is None:
        return text + (" · estimating the time left" if done < total else "")
    if seconds_left < 1:
        return text + " · less than a second left"
    minutes, seconds = divmod(round(seconds_left), 60)
    return text + f" · about {f'{minutes} min ' if minutes else ''}{seconds} s left"


def node_embeddings(nodes: Sequence[Node], embedder: Any) -> np.ndarray:
    """Every node's EMBED view embedded, with a progress bar and the time left while the model works.

    The embedder caches vectors by (model, text hash), in memory and on disk, so
    only texts it has never seen are encoded: a parameter change embeds only the
    chunks that changed, and a restarted app embeds nothing it did before.
    """
    texts = [node.get_content(MetadataMode.EMBED) for node in nodes]
    label = embedder_label(embedder)
    bar = st.empty()
    time_left = TimeLeft()

    def report(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=progress_text(label, done, total, time_left(done, total)))

    bar.progress(0.0, text=progress_text(label, 0, len(texts), None))
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


def run_or_stop(documents: Sequence[Document], config: PipelineConfig, query: str) -> tuple[list[Node], QueryResult]:
    """Split the documents (cached), retrieve and run the chain; on a failure or no nodes, say so and end the run.

    Returns the nodes searched (the split's leaves) and the result.
    """
    retrieval, chain = config.retrieval, config.postprocessors
    try:
        with st.spinner("Splitting…"):
            # Hierarchical splits nest; like an auto-merging retriever, search the leaves.
            nodes = leaf_nodes(cache.run_split_cached(documents, config))
        if not nodes:
            st.warning("The current splitter made no nodes from the loaded documents.", icon=":material/warning:")
            st.stop()
        needs_model = retrieval.mode != "bm25" or any(post.name == "sentence_embedding_optimizer" for post in chain)
        # While the model loads and embeds, the page says what it already knows instead of staying blank.
        pending = st.empty()
        with pending.container():
            pending_caption(config, len(nodes), len(documents))
            embedder = cache.embedder() if needs_model else None
            embeddings = node_embeddings(nodes, embedder) if retrieval.mode != "bm25" else None
        pending.empty()
        result = run(
            nodes, query, chain, top_k=retrieval.top_k, mode=retrieval.mode, alpha=retrieval.alpha,
            embedder=embedder, embeddings=embeddings,
        )
    except ChunkScopeError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()
    state.set_last_query(result)
    return nodes, result


def context_with_tokens(result: QueryResult) -> tuple[str, int]:
    """The final context the LLM reads, and its length counted with the embedding model's tokenizer."""
    context = final_context(result.final)
    return context, cache.count_tokens((context,), "model")[0]


# -- the trace -----------------------------------------------------------------------


def run_caption(config: PipelineConfig, node_count: int, documents: Sequence[Document]) -> None:
    """What was searched: how many nodes from how many documents, split how, retrieved how."""
    splitter, retrieval = config.splitter, config.retrieval
    document_count = len(documents)
    changed = ", ".join(f"{k}={v}" for k, v in splitter.to_params(only_changed=True).items())
    st.caption(
        f"Searched **{node_count:,} nodes** from {document_count} documents, split by **{widgets.label_for(splitter.name)}**"
        + (f" ({widgets.md_escape(changed)})" if changed else " (defaults)")
        + f" · retrieval **{retrieval.mode}**, top {retrieval.top_k}"
        + (f", alpha {retrieval.alpha:g}" if retrieval.mode == "hybrid" else "")
        + (f" · embeddings {embedder_label(cache.embedder())}" if retrieval.mode != "bm25" else "")
    )
    unsuited = [str(d.metadata.get("file_name", d.id)) for d in documents if splitter.unsuited_reason(d)]
    if unsuited:
        st.warning(
            f"The {splitter.name} splitter does not suit {len(unsuited)} of the {document_count} documents "
            f"({widgets.md_escape(', '.join(unsuited))}): each is one node here. Pick a splitter that cuts by size "
            "on the Chunks page to search them in pieces.",
            icon=":material/warning:",
        )


def pending_caption(config: PipelineConfig, node_count: int, document_count: int) -> None:
    """What is known before retrieval: the nodes to search, from how many documents, split how."""
    st.caption(
        f"Searching **{node_count:,} nodes** from {document_count} documents, "
        f"split by **{widgets.label_for(config.splitter.name)}** · retrieval **{config.retrieval.mode}**"
        + (" · embedding the nodes first" if config.retrieval.mode != "bm25" else "")
    )


def embedder_label(embedder: Any) -> str:
    """``all-MiniLM-L6-v2 on ONNX Runtime``, with the reason when ONNX Runtime could not be used."""
    runtime = "ONNX Runtime" if embedder.backend == "onnx" else "torch"
    note = embedder.backend_note
    return f"{embedder.model_name} on {runtime}" + (f" ({note})" if note else "")


def metric_cards(result: QueryResult, top_k: int, node_count: int, context_tokens: int, budget: int) -> None:
    """Four cards: retrieved, stages, final nodes, and the context's tokens against the budget."""
    cards = st.columns(4)
    cards[0].metric("Retrieved", len(result.retrieved), border=True, help=f"The top {top_k} of {node_count:,} nodes")
    cards[1].metric("Stages", len(result.stages), border=True, help="Postprocessors in the chain")
    cards[2].metric("Final nodes", len(result.final), border=True, help="What reaches the LLM")
    over = context_tokens > budget
    cards[3].metric(
        "Context tokens",
        f"{context_tokens:,}",
        f"{abs(budget - context_tokens):,} {'over' if over else 'under'} the {budget:,} budget",
        delta_color="inverse" if over else "normal",
        delta_arrow="off",
        border=True,
        help="The final context counted with the embedding model's tokenizer (an estimate for the LLM's)",
    )


def overview(result: QueryResult, mode: str, node_count: int, key: str) -> None:
    """The funnel of node counts beside a line per stage saying what it did (and the trace's CSS, once)."""
    st.html(trace_view.CSS)
    funnel_col, summary_col = st.columns([3, 2], gap="large")
    with funnel_col:
        st.plotly_chart(trace.funnel_figure(result), width="stretch", key=f"{key}.funnel")
    with summary_col:
        st.markdown("**What each stage did**")
        st.markdown(trace_view.chain_summary(result, mode, node_count))


def stage_tabs(result: QueryResult, nodes: Sequence[Node], documents: Sequence[Document], mode: str, key: str) -> None:
    """A tab for retrieval, then one per stage with its table and, where it applies, its picture."""
    labels = trace_view.node_labels(nodes)
    tabs = st.tabs(trace_view.tab_names(result))
    with tabs[0]:
        retrieval_table(result, labels, len(nodes), mode, key)
    for index, (tab, stage) in enumerate(zip(tabs[1:], result.stages, strict=True), start=1):
        with tab:
            stage_panel(stage, index, labels, documents, key)


def retrieval_table(result: QueryResult, labels: Mapping[str, str], node_count: int, mode: str, key: str) -> None:
    """The retrieved nodes, best first, with their scores."""
    st.caption(f"The {len(result.retrieved)} best of {node_count:,} nodes for the query, best first ({mode} scores).")
    st.dataframe(
        pd.DataFrame(trace_view.retrieval_rows(result, labels)),
        hide_index=True,
        width="stretch",
        key=f"{key}.table.retrieval",
        column_config=RETRIEVAL_COLUMNS,
    )


def stage_panel(stage: StageTrace, index: int, labels: Mapping[str, str], documents: Sequence[Document], key: str) -> None:
    """One stage: its table of fates, the reorder picture, and the sentences kept or the windows put in."""
    st.caption(trace.stage_caption(stage))
    frame = pd.DataFrame(trace_view.stage_rows(stage, labels), columns=list(trace_view.STAGE_TABLE_COLUMNS))
    st.dataframe(
        frame.style.map(trace.status_style, subset=["status"]),
        hide_index=True,
        width="stretch",
        key=f"{key}.table.{index}",
        column_config=STAGE_COLUMNS,
        placeholder=trace_view.MISSING,
    )

    if stage.name == "long_context_reorder" and stage.nodes_out:
        st.plotly_chart(trace.reorder_figure(stage, labels), width="stretch", key=f"{key}.reorder.{index}")
        st.caption(
            "Models read the middle of a long context worst, so the best nodes go to both ends: "
            "the line should sag in the middle and rise towards the first and the last position."
        )

    if stage.sentences:
        st.markdown("**Sentences kept** (green) **and removed** (struck through), with each one's similarity to the query")
        for view in trace_view.sentence_views(stage, labels):
            st.html(view)
    elif stage.text_changes:
        st.markdown("**Text replaced**: the node's own text (orange) inside what the LLM now reads (yellow)")
        for view in trace_view.window_views(stage, labels, documents):
            st.html(view)


def final_context_panel(context: str, context_tokens: int, node_count: int, budget: int) -> None:
    """Exactly what the LLM reads, with its tokens against the budget (and a warning when over)."""
    st.subheader(":material/smart_toy: Final context", anchor=False)
    st.caption(
        f"Exactly what the LLM reads: each final node's LLM view (metadata it may see, then its text), "
        f"joined by a blank line · {node_count} nodes · {context_tokens:,} tokens"
    )
    if context_tokens > budget:
        st.warning(
            f"The context is {context_tokens:,} tokens, {context_tokens - budget:,} over your budget of {budget:,}: "
            "lower top_k, add a cutoff or top_n, or cut smaller chunks.",
            icon=":material/warning:",
        )
    st.progress(min(context_tokens / budget, 1.0), text=f"{context_tokens:,} of {budget:,} budget tokens")
    if context:
        st.code(context, language=None, wrap_lines=True, height=420)
    else:
        st.info("No node survived the chain: the LLM would get no context.", icon=":material/block:")
