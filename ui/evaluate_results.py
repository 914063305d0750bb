"""The Evaluate page's results: the table, warnings, per-document scores and the figures.

Rows come from :mod:`core.evaluation.sweep` (``ui_rows``): a row's means, its hit@1..k
curve, its per-document scores and its warnings. Every text from a document or
a file name is escaped before Streamlit renders it as Markdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.evaluation.evaluate import METRIC_HELP, METRICS
from ui import state, widgets
from ui.charts import SERIES_COLOURS

PAGE_KEY = "eval"
# What a row holds that is not a column of the results table.
NESTED = ("hit_curve", "per_document", "warnings")


# -- results ---------------------------------------------------------------------------


def show_results(result: dict[str, Any], current_signature: str) -> None:
    """The results heading, a note if the settings changed since, warnings, the table, the charts, per document."""
    st.divider()
    st.subheader(":material/leaderboard: Results", anchor=False)
    rows = result["rows"]
    queries_scored = rows[0]["queries"] if rows else 0
    scope = result.get("scope", "corpus")
    st.caption(
        f"{len(rows)} configuration{'s' if len(rows) != 1 else ''} · {queries_scored} queries each · "
        f"top {result['top_k']} by {result['mode']} retrieval · "
        + ("each query within its own document" if scope == "document" else "from the whole corpus")
    )
    if result["signature"] != current_signature:
        st.info(
            "The settings changed since this run: press **Run the evaluation** to update.", icon=":material/update:"
        )
    for row in rows:
        for warning in row.get("warnings", []):
            st.warning(
                f"**{widgets.md_escape(str(row['config']))}**: {widgets.md_escape(warning)}", icon=":material/warning:"
            )
    st.dataframe(
        results_table(rows),
        hide_index=True,
        width="stretch",
        column_config=_column_config(rows),
        key=f"{PAGE_KEY}.table",
    )
    swept = result.get("swept") or []
    bars_col, side_col = st.columns([1, 1], gap="large")
    with bars_col:
        st.plotly_chart(metrics_figure(rows), width="stretch", key=f"{PAGE_KEY}.bars")
    with side_col:
        if result["kind"] == "Sweep" and len(swept) == 2 and rows:
            metric_key = f"{PAGE_KEY}.heatmap_metric"
            state.keep_valid(metric_key, METRICS, "mrr")
            metric = st.selectbox("Heatmap metric", list(METRICS), key=metric_key, format_func=METRICS.get)
            st.plotly_chart(
                heatmap_figure(rows, metric, swept[0], swept[1]), width="stretch", key=f"{PAGE_KEY}.heatmap"
            )
        else:
            st.plotly_chart(hit_curve_figure(rows), width="stretch", key=f"{PAGE_KEY}.hit_curve")
    if result["kind"] == "Sweep" and len(swept) == 2:
        st.plotly_chart(hit_curve_figure(rows), width="stretch", key=f"{PAGE_KEY}.hit_curve")
    with st.expander("Per document", icon=":material/description:", expanded=scope == "document"):
        st.caption("Each document's queries only: where a configuration serves one file well and another badly.")
        st.dataframe(
            per_document_table(rows),
            hide_index=True,
            width="stretch",
            column_config=_column_config(rows),
            key=f"{PAGE_KEY}.per_document",
        )


def results_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The rows as a frame: labels first, then the metrics, the chunk count and whatever else a row holds."""
    table = pd.DataFrame([{k: v for k, v in row.items() if k not in NESTED} for row in rows])
    first = ["config", "splitter", "settings"] if "settings" in table else ["config", "splitter"]
    metric_columns = list(METRICS)
    hidden = {*first, *metric_columns, "nodes", "queries", "top_k", "mode", "scope"}
    rest = [c for c in table.columns if c not in hidden]
    return table[[*first, *metric_columns, "nodes", *rest]]


def per_document_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One line per configuration and document: its query count and the means of its queries' metrics."""
    lines = [{"config": row["config"], **doc} for row in rows for doc in row.get("per_document", [])]
    return pd.DataFrame(lines, columns=["config", "doc", "queries", *METRICS])


# Pixel widths from the headers (about 7 px a character): the results of up to four configurations, twelve
# columns, fit the page at 1280 px, where "Over window" was cut at the edge.
_WIDTHS = {
    "splitter": 72, "settings": 130, "hit_rate": 76, "mrr": 52, "recall": 58, "precision": 72, "iou": 46,
    "nodes": 58, "chunk_size": 50, "chunk_overlap": 62, "over_window": 88, "queries": 62,
}  # fmt: skip


def _column_config(rows: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    column_config = {
        # Sized by its labels: "A" beside a Settings column, "1024/100" or "heading_level=2" in a sweep.
        "config": st.column_config.TextColumn("Config", help="A, B… or chunk_size/chunk_overlap for a sweep"),
        "splitter": st.column_config.TextColumn("Splitter"),
        "settings": st.column_config.TextColumn("Settings", help="Parameters changed from the splitter's defaults"),
        "nodes": st.column_config.NumberColumn("Chunks", help="How many nodes the configuration made"),
        "chunk_size": st.column_config.NumberColumn("Size", help="chunk_size, in the splitter's units"),
        "chunk_overlap": st.column_config.NumberColumn("Overlap", help="chunk_overlap, in the splitter's units"),
        "over_window": st.column_config.NumberColumn(
            "Over window", help="Chunks longer than the embedding model reads: embedded truncated"
        ),
        "context_tokens": st.column_config.NumberColumn(
            "Context tokens", format="%.0f", help="Per query, the tokens of the retrieved chunks' LLM views"
        ),
        "llm_requests": st.column_config.NumberColumn(
            "LLM requests", help="Requests the LLM extractors sent (0: every reply came from the cache)"
        ),
        "llm_cached": st.column_config.NumberColumn("From cache", help="LLM replies answered from the cache"),
        "llm_prompt_tokens": st.column_config.NumberColumn("Prompt tokens", help="As the endpoint counted them"),
        "llm_completion_tokens": st.column_config.NumberColumn("Reply tokens", help="As the endpoint counted them"),
        "doc": st.column_config.TextColumn("Document"),
        "queries": st.column_config.NumberColumn("Queries"),
    }
    for metric, title in METRICS.items():
        column_config[metric] = st.column_config.NumberColumn(title, format="%.3f", help=METRIC_HELP[metric])
    for name, width in _WIDTHS.items():
        column_config[name]["width"] = width
    # The splitter's name whole ("hierarchical", the default, was cut at 72 px; an engine's is longer).
    longest = max((len(str(row.get("splitter", ""))) for row in rows), default=0)
    column_config["splitter"]["width"] = max(_WIDTHS["splitter"], 7 * longest + 16)
    return column_config


# -- figures ---------------------------------------------------------------------------

_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    "font": {"size": 12},
    # Below the plot: at the top right a legend sits under the chart's toolbar.
    "legend": {"orientation": "h", "yanchor": "top", "y": -0.12, "xanchor": "left", "x": 0},
}
# Under the x axis's title, for a chart that has one.
_LEGEND_UNDER_AXIS_TITLE = {**_LAYOUT["legend"], "y": -0.22}
_METRIC_COLOURS = (*SERIES_COLOURS, "#0891b2")


def metrics_figure(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """Grouped bars: one group per configuration, one bar per metric (all in [0, 1])."""
    configs = [str(row["config"]) for row in rows]
    figure = go.Figure()
    for index, (metric, title) in enumerate(METRICS.items()):
        figure.add_trace(
            go.Bar(
                x=configs,
                y=[row[metric] for row in rows],
                name=title,
                marker_color=_METRIC_COLOURS[index % len(_METRIC_COLOURS)],
                # Precision and IoU are often tiny next to hit rate: the number keeps them readable.
                text=[f"{row[metric]:.3f}" for row in rows] if len(rows) <= 4 else None,
                textposition="outside",
                textfont={"size": 10},
                hovertemplate=f"%{{x}}<br>{title} %{{y:.3f}}<extra></extra>",
            )
        )
    figure.update_layout(
        **_LAYOUT,
        height=380,
        barmode="group",
        title="Metrics per configuration",
        yaxis={"title": "score", "range": [0, 1.1]},
        xaxis={"type": "category"},
    )
    return figure


def heatmap_figure(rows: Sequence[dict[str, Any]], metric: str, y_param: str, x_param: str) -> go.Figure:
    """``y_param`` (rows) × ``x_param`` (columns) coloured by ``metric``; combinations not evaluated stay blank."""
    ys = _ordered({row[y_param] for row in rows})
    xs = _ordered({row[x_param] for row in rows})
    value = {(row[y_param], row[x_param]): row[metric] for row in rows}
    z = [[value.get((y, x)) for x in xs] for y in ys]
    text = [["" if v is None else f"{v:.3f}" for v in line] for line in z]
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=[str(x) for x in xs],
            y=[str(y) for y in ys],
            text=text,
            texttemplate="%{text}",
            colorscale="Blues",
            zmin=0,
            zmax=1,
            colorbar={"title": METRICS[metric]},
            hovertemplate=f"{y_param} %{{y}}<br>{x_param} %{{x}}<br>" + METRICS[metric] + " %{z:.3f}<extra></extra>",
        )
    )
    figure.update_layout(
        **_LAYOUT,
        height=max(260, 90 + 60 * len(ys)),
        title=f"{METRICS[metric]} by {y_param} and {x_param}",
        xaxis={"title": x_param, "type": "category"},
        yaxis={"title": y_param, "type": "category"},
    )
    return figure


def hit_curve_figure(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """Hit rate at every k from 1 to top_k, one line per configuration: how deep the answer usually sits."""
    figure = go.Figure()
    for index, row in enumerate(rows):
        curve = row.get("hit_curve") or []
        figure.add_trace(
            go.Scatter(
                x=list(range(1, len(curve) + 1)),
                y=curve,
                name=str(row["config"]),
                mode="lines+markers",
                line={"color": _METRIC_COLOURS[index % len(_METRIC_COLOURS)]},
                hovertemplate=f"{row['config']}<br>hit rate@%{{x}} %{{y:.3f}}<extra></extra>",
            )
        )
    figure.update_layout(
        **{**_LAYOUT, "legend": _LEGEND_UNDER_AXIS_TITLE},
        height=400,
        title="Hit rate at k",
        xaxis={"title": "k (chunks retrieved)", "dtick": 1},
        yaxis={"title": "hit rate", "range": [0, 1.05]},
    )
    return figure


def _ordered(values: set[Any]) -> list[Any]:
    """Numbers in order; anything else (choices) in text order."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)
