"""The Query page's trace of a :class:`core.query.chain.QueryResult`: what was searched, each stage, the final context.

The trace's labels, rows, summaries and HTML come from :mod:`core.query.trace_view`;
here are what needs plotly or Streamlit: the funnel and reorder figures, the
styled stage tables, and the panels the page draws in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.config import PipelineConfig
from core.query import trace_view
from core.query.chain import QueryResult, StageTrace
from core.query.trace_view import stage_labels, stage_params, stage_summary
from core.schema import Document, Node, NodeWithScore
from ui import cache
from ui.charts import SERIES_COLOURS
from ui.widgets import WRAPPING_ROW_HEIGHT, md_escape

# Widths in pixels that add up to less than the page at 1280 px (~818) with every column shown; the grid grows
# them to fill the page. A stage table's rows wrap (see stage_panel), so a fate is read whole and a long file name
# takes two lines; the retrieval table's rows do not, so its node column is wide enough for one.
STAGE_COLUMNS = {
    "status": st.column_config.TextColumn("Status", width=62),
    "node": st.column_config.TextColumn(
        "Node", width=130, help="File and the node's number within it (as on the Chunks page)"
    ),
    "rank_in": st.column_config.NumberColumn(
        "Rank in",
        format="%d",
        width=58,
        help=f"1-based position in the stage's input; {trace_view.MISSING} if the stage added it",
    ),
    "rank_out": st.column_config.NumberColumn(
        "Rank out",
        format="%d",
        width=66,
        help=f"1-based position in the stage's output; {trace_view.MISSING} if dropped",
    ),
    "score_in": st.column_config.NumberColumn("Score in", format="%.4f", width=64),
    "score_out": st.column_config.NumberColumn("Score out", format="%.4f", width=72),
    "fate": st.column_config.TextColumn("Fate", width=200, help="What this stage did to the node, and why"),
    "text": st.column_config.TextColumn("Text (after the stage)", width=150),
}
RETRIEVAL_COLUMNS = {
    "rank": st.column_config.NumberColumn("Rank", width=50),
    "node": st.column_config.TextColumn(
        "Node", width=230, help="File and the node's number within it (as on the Chunks page)"
    ),
    "score": st.column_config.NumberColumn("Score", format="%.4f", width=70),
    "text": st.column_config.TextColumn("Text", width=300),
}
STATUS_COLOURS = {"dropped": "color:#dc2626;font-weight:600", "added": "color:#059669;font-weight:600"}
_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    "font": {"size": 12},
}


def status_style(status: str) -> str:
    """The CSS a stage table's status cell gets: coloured when dropped or added, plain otherwise."""
    return STATUS_COLOURS.get(status, "")


def stage_caption(stage: StageTrace) -> str:
    """The stage's name and parameters in code style, then :func:`stage_summary`."""
    # Parameter values are the user's (keywords, paths), and so can a summary be: literal text, never Markdown.
    return f"`{stage.name}` ({md_escape(stage_params(stage))}) · {md_escape(stage_summary(stage))}"


# -- figures ---------------------------------------------------------------------


def funnel_figure(result: QueryResult) -> go.Figure:
    """Node counts after retrieval and after each postprocessor, top to bottom."""
    counts = result.counts()
    names = ["retrieval", *stage_labels(result)]
    figure = go.Figure(
        go.Funnel(
            y=names,
            x=[count for _, count in counts],
            textinfo="value",
            marker={"color": [SERIES_COLOURS[0]] + [SERIES_COLOURS[1]] * len(result.stages)},
            connector={"line": {"color": "#cbd5e1", "width": 1}},
            hovertemplate="%{y}: %{x} nodes<extra></extra>",
        )
    )
    figure.update_layout(**_LAYOUT, height=max(180, 70 + 48 * len(names)), title="Nodes after each stage")
    return figure


def reorder_figure(stage: StageTrace, labels: Mapping[str, str]) -> go.Figure:
    """Score by position, before and after: best-first going in, best at both ends coming out (a U)."""
    positions_out = list(range(1, len(stage.nodes_out) + 1))
    rank_in = {item.id: rank for rank, item in enumerate(stage.nodes_in, start=1)}
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=list(range(1, len(stage.nodes_in) + 1)),
            y=[_score(item) for item in stage.nodes_in],
            mode="lines+markers",
            name="before (input order)",
            line={"color": "#94a3b8", "dash": "dot"},
            marker={"size": 7},
            hovertemplate="position %{x}<br>score %{y:.4f}<extra>before</extra>",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=positions_out,
            y=[_score(item) for item in stage.nodes_out],
            mode="lines+markers+text",
            name="after (context order)",
            line={"color": SERIES_COLOURS[0], "width": 3},
            marker={"size": 11},
            text=[f"was #{rank_in.get(item.id, '?')}" for item in stage.nodes_out],
            textposition="top center",
            customdata=[labels.get(item.id, item.id) for item in stage.nodes_out],
            hovertemplate="position %{x}: %{customdata}<br>score %{y:.4f}<extra>after</extra>",
        )
    )
    scores = [_score(item) for item in [*stage.nodes_in, *stage.nodes_out]] or [0.0, 1.0]
    low, high = min(scores), max(scores)
    pad = (high - low) * 0.2 or 0.05
    figure.update_layout(
        **_LAYOUT,
        height=320,
        title="Score by position in the context",
        xaxis={"title": "position in the context (1 = first the LLM reads)", "dtick": 1},
        yaxis={"title": "score", "range": [low - pad, high + pad * 1.5]},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},
    )
    return figure


def _score(item: NodeWithScore) -> float:
    # LongContextReorder counts a missing score as 0; the picture does too.
    return 0.0 if item.score is None else float(item.score)


# -- drawing the trace -----------------------------------------------------------------------


def _returns(config: PipelineConfig) -> str:
    """What a hierarchy's retrieval returns, as the caption says it (nothing for chunks without levels)."""
    retrieval = config.retrieval
    if not config.splitter.has_levels or retrieval.returns == "chunks":
        return ""
    if retrieval.returns == "merged":
        return f", leaves merged into their parents past {retrieval.merge_ratio:g} of their children"
    if retrieval.context_budget:
        return f", the leaves' parents while they fit {retrieval.context_budget:,} tokens (else the leaf)"
    return ", the leaves' parents"


def run_caption(config: PipelineConfig, node_count: int, documents: Sequence[Document]) -> None:
    """What was searched: how many nodes from how many documents, split how, retrieved how."""
    splitter, retrieval = config.splitter, config.retrieval
    document_count = len(documents)
    changed = ", ".join(f"{k}={v}" for k, v in splitter.to_params(only_changed=True).items())
    st.caption(
        f"Searched **{node_count:,} nodes** from {document_count} documents, split by **{splitter.title()}**"
        + (f" ({md_escape(changed)})" if changed else " (defaults)")
        + f" · retrieval **{retrieval.mode}**, top {retrieval.top_k}"
        + (f", alpha {retrieval.alpha:g}" if retrieval.mode == "hybrid" else "")
        + _returns(config)
        + (f" · embeddings {cache.embedder().model_name}" if retrieval.mode != "bm25" else "")
    )
    unsuited = [str(d.metadata.get("file_name", d.id)) for d in documents if splitter.unsuited_reason(d)]
    if unsuited:
        st.warning(
            f"The {splitter.name} splitter does not suit {len(unsuited)} of the {document_count} documents "
            f"({md_escape(', '.join(unsuited))}): they are searched as it cut them (whole, or not at all where it "
            "made no nodes; the Chunks page says why). Pick a splitter that cuts by size to search them in pieces.",
            icon=":material/warning:",
        )


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
        f"{abs(budget - context_tokens):,} {'over' if over else 'under'} budget",
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
        st.plotly_chart(funnel_figure(result), width="stretch", key=f"{key}.funnel")
    with summary_col:
        st.markdown("**What each stage did**")
        st.markdown(chain_summary(result, mode, node_count))


def chain_summary(result: QueryResult, mode: str, node_count: int) -> str:
    """:func:`core.query.trace_view.chain_summary` with each stage's summary literal: a summary can hold the user's
    text (a metadata key named in why a stage changed nothing), never Markdown."""
    lines = [f"- **retrieval** ({mode}): {len(result.retrieved)} of {node_count:,} nodes"]
    for label, stage in zip(stage_labels(result), result.stages, strict=True):
        lines.append(f"- **{label}**: {md_escape(stage_summary(stage))}")
    return "\n".join(lines)


def stage_tabs(
    result: QueryResult,
    nodes: Sequence[Node],
    documents: Sequence[Document],
    mode: str,
    key: str,
    every: Sequence[Node] | None = None,
) -> None:
    """A tab for retrieval, then one per stage with its table and, where it applies, its picture.

    ``nodes``: those searched; ``every``: the whole split, whose numbering the labels take (as the Chunks page
    numbers a document's nodes), so a hierarchy's parents, which a retrieval returns, are labelled too.
    """
    labels = trace_view.node_labels(every if every is not None else nodes)
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


def stage_table_columns(stage: StageTrace) -> list[str]:
    """The stage table's columns worth showing: the text only where the stage rewrote it, the ranks and
    scores in only where they differ from those out (nodes dropped, added, moved or rescored)."""
    reranked = stage.dropped or stage.added or stage.position_changes or stage.score_changes
    rewrote = stage.text_changes or stage.sentences
    hidden = set() if reranked else {"rank_in", "score_in"}
    if not rewrote:
        hidden.add("text")
    return [column for column in trace_view.STAGE_TABLE_COLUMNS if column not in hidden]


def stage_panel(
    stage: StageTrace, index: int, labels: Mapping[str, str], documents: Sequence[Document], key: str
) -> None:
    """One stage: its table of fates, the reorder picture, and the sentences kept or the windows put in."""
    st.caption(stage_caption(stage))
    frame = pd.DataFrame(trace_view.stage_rows(stage, labels), columns=list(trace_view.STAGE_TABLE_COLUMNS))
    shown = stage_table_columns(stage)
    st.dataframe(
        frame.style.map(status_style, subset=["status"]),
        hide_index=True,
        width="stretch",
        key=f"{key}.table.{index}",
        column_config=STAGE_COLUMNS,
        row_height=WRAPPING_ROW_HEIGHT,
        column_order=shown,
        placeholder=trace_view.MISSING,
    )
    if "text" not in shown:
        st.caption("This stage changed no node's text: the texts are on the Retrieval tab.")

    if stage.reorders and stage.nodes_out:
        st.plotly_chart(reorder_figure(stage, labels), width="stretch", key=f"{key}.reorder.{index}")
        st.caption(
            "Models read the middle of a long context worst, so the best nodes go to both ends: "
            "the line should sag in the middle and rise towards the first and the last position."
        )

    if stage.sentences:
        st.markdown(
            "**Sentences kept** (green) **and removed** (struck through), with each one's similarity to the query"
        )
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
