"""The Query page's figures and styled cells for a :class:`core.query.QueryResult`.

The trace's labels, rows, summaries and HTML come from :mod:`core.trace_view`;
here are what needs plotly or Streamlit's Markdown: the funnel and reorder
figures, a stage's caption, and the status cell's colour.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from core.query import QueryResult, StageTrace
from core.schema import NodeWithScore
from core.trace_view import stage_labels, stage_params, stage_summary
from ui.charts import SERIES_COLOURS
from ui.widgets import md_escape

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
    # Parameter values are the user's (keywords, paths): literal text, never Markdown.
    return f"`{stage.name}` ({md_escape(stage_params(stage))}) · {stage_summary(stage)}"


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
