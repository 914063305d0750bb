"""The Tune section's result: the Pareto front drawn and listed, why the pick is the pick, one click to use a point.

A point picked on the chart (or in the list under it) can be loaded into the session's configuration, which
every other page then uses. Scores are in sample (a mean over folds) but for the nested estimate the
captions give (:func:`core.evaluation.cross_validation.validation_summary`).
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.config import PipelineConfig
from core.config_parts import MetadataSettings, RetrievalSettings
from core.evaluation.cross_validation import validation_summary
from core.evaluation.tune import COSTS, QUALITIES
from core.evaluation.with_extractors import held_out_sentence, held_out_with_extractors
from core.splitters import get_splitter
from ui import state, widgets
from ui.charts import SERIES_COLOURS

__all__ = ["pareto_figure", "show_front"]

_NUMBER = st.column_config.NumberColumn
# Short headers in pixel widths that fit the page at 1280 px; each help says what the number is. The scores
# are in sample (these questions took part in choosing): only the nested estimate in the captions is held out.
FRONT_COLUMNS = {
    "config": st.column_config.TextColumn("Configuration", width=210),
    "fold_mean": _NUMBER(
        "Mean",
        format="%.3f",
        width=62,
        help="The mean over folds of each fold's score, in sample: these questions took part in choosing; "
        "only the nested estimate above is held out",
    ),
    "fold_spread": _NUMBER("±", format="%.3f", width=50, help="Standard deviation of the folds' scores"),
    "in_sample": _NUMBER("In sample", format="%.3f", help="The score on every question (optimistic for a pick)"),
    "hit_rate": _NUMBER("Hit rate", format="%.3f", width=62, help="Hit rate, in sample"),
    "mrr": _NUMBER("MRR", format="%.3f", width=50, help="Mean reciprocal rank, in sample"),
    "recall": _NUMBER("Recall", format="%.3f", width=56, help="Recall of the answer's text, in sample"),
    "context_tokens": _NUMBER("Context", format="%.0f", width=66, help="Context tokens per query"),
    "nodes": _NUMBER("Nodes", width=55),
    "embed_tokens": _NUMBER("Tokens", format="%d", width=62, help="Embedding-model tokens embedded"),
    "embed_seconds": _NUMBER(
        "Embed s", format="%.2f", width=62, help="Seconds embedding, this run's; near 0 for chunks already embedded"
    ),
    "truncated_share": _NUMBER(
        "Truncated", format="%.2f", width=74, help="Share of the chunks longer than the model's window: embedded cut"
    ),
}
# What the table shows: the in-sample score is one of hit rate, MRR and recall already shown.
FRONT_ORDER = [column for column in FRONT_COLUMNS if column != "in_sample"]


def pareto_figure(result: dict[str, Any]) -> go.Figure:
    """Quality (mean over folds) against cost: every configuration measured on all queries, the front joined, the pick
    starred."""
    quality, cost = result["quality"], result["cost"]
    full = [row for row in result["rows"] if row["fold_mean"] is not None]
    others = [row for row in full if not row["on_front"]]
    figure = go.Figure()
    for rows, name, colour, mode in (
        (others, "Other configurations", "#b0b7c3", "markers"),
        (result["front"], "Pareto front", SERIES_COLOURS[0], "lines+markers"),
    ):
        figure.add_trace(
            go.Scatter(
                x=[row[cost] for row in rows],
                y=[row["fold_mean"] for row in rows],
                customdata=[row["id"] for row in rows],
                hovertext=[row["config"] for row in rows],
                hovertemplate="%{hovertext}<br>%{x:,.4g} · %{y:.3f}<extra></extra>",
                mode=mode,
                name=name,
                line={"shape": "hv", "color": colour},
                marker={"size": 11 if name == "Pareto front" else 8, "color": colour},
            )
        )
    pick = result["rows"][result["pick"]] if result.get("pick") is not None else None
    if pick is not None and pick["fold_mean"] is not None:
        # The pick may lie off the front: an untuned yardstick nothing was clearly better than (said below).
        figure.add_trace(
            go.Scatter(
                x=[pick[cost]],
                y=[pick["fold_mean"]],
                customdata=[pick["id"]],
                hovertext=[pick["config"]],
                hovertemplate="Pick: %{hovertext}<br>%{x:,.4g} · %{y:.3f}<extra></extra>",
                mode="markers",
                name="Pick",
                marker={"size": 18, "symbol": "star", "color": SERIES_COLOURS[2], "line": {"width": 1, "color": "#333"}},
            )
        )
    figure.update_layout(
        xaxis_title=COSTS[cost],
        yaxis_title=f"{QUALITIES[quality]}, mean over folds (in sample)",
        height=420,
        margin={"t": 30},
        legend={"orientation": "h", "y": -0.2},
        clickmode="event+select",
    )
    return figure


def _clicked(key: str) -> None:
    """The chart's selection callback: the clicked point becomes the picked configuration."""
    event = state.widget_value(f"{key}.chart") or {}
    points = (event.get("selection") or {}).get("points") or []
    if points:
        data = points[0].get("customdata")
        state.set_widget_value(f"{key}.pick", data[0] if isinstance(data, list) else data)


def show_front(stored: dict[str, Any], config: PipelineConfig, signature: str, key: str) -> None:
    """The last search's front: what it measured and why it picked, the chart, the table, and the point to load.

    ``key`` prefixes the widgets' keys (the Tune section's).
    """
    result = stored["result"]
    st.divider()
    st.subheader(":material/scatter_plot: Pareto front", anchor=False)
    _show_what_was_measured(result)
    if stored["signature"] != signature:
        st.info("The settings changed since this search: press **Search** to update.", icon=":material/update:")
    st.plotly_chart(
        pareto_figure(result), width="stretch", key=f"{key}.chart", on_select=partial(_clicked, key), selection_mode="points"
    )
    _show_front_table(result, key)
    _show_pick(result, config, key)
    _show_extractors(result, key)


# What the pick's comparison with / without extractors shows (its LLM columns when the extractors asked one).
EXTRACTOR_COLUMNS = ["config", "hit_rate", "mrr", "recall", "context_tokens", "nodes"]
LLM_COLUMNS = ["llm_requests", "llm_cached", "llm_prompt_tokens", "llm_completion_tokens"]


def _show_extractors(result: dict[str, Any], key: str) -> None:
    rows = result.get("extractors") or []
    if not rows:
        return
    st.markdown("**The pick with / without the configuration's extractors** (in sample, every question)")
    columns = EXTRACTOR_COLUMNS + [column for column in LLM_COLUMNS if any(column in row for row in rows)]
    st.dataframe(
        pd.DataFrame([{column: row.get(column) for column in columns} for row in rows]),
        hide_index=True,
        width="stretch",
        key=f"{key}.extractors_table",
    )
    held = held_out_with_extractors(result)
    if held is not None:
        st.caption(held_out_sentence(held))


def _show_what_was_measured(result: dict[str, Any]) -> None:
    """The search in one line, the nested estimate, and why it stopped early or skipped a configuration."""
    dropped = sum(1 for row in result["rows"] if row["queries"] < result["queries"])
    st.caption(
        f"{len(result['front'])} of {len(result['rows'])} configurations on the front · {result['queries']} queries · "
        f"{result['search']}"
        + (f" ({dropped} dropped on a sample of the queries)" if dropped else "")
        + f" · {result['embedded_texts']:,} texts embedded, the rest from the cache"
    )
    for line in validation_summary(result, QUALITIES[result["quality"]], quote=widgets.md_escape):
        st.caption(line)
    why = {"budget": "the time budget was spent", "interrupted": "interrupted"}.get(result["stopped"])
    notes = [f"Stopped ({why}) after {len(result['rows'])} of {result['space_size']} configurations."] if why else []
    notes += [
        f"Skipped {widgets.md_escape(s['config'])}: {widgets.md_escape(s['reason'])}" for s in result.get("skipped", [])
    ]
    for note in notes:
        st.warning(note, icon=":material/warning:")


def _show_front_table(result: dict[str, Any], key: str) -> None:
    """The front's configurations, one a row, with their in-sample score under its quality's name."""
    columns = ["config", "fold_mean", "fold_spread", "in_sample", "hit_rate", "mrr", "recall", "context_tokens"]
    columns += ["nodes", "embed_tokens", "embed_seconds", "truncated_share"]
    shown = [{**row, "in_sample": row[result["quality"]]} for row in result["front"]]
    st.dataframe(
        pd.DataFrame([{c: row[c] for c in columns} for row in shown]),
        hide_index=True,
        width="stretch",
        key=f"{key}.front",
        column_config=FRONT_COLUMNS,
        column_order=FRONT_ORDER,
        row_height=widgets.WRAPPING_ROW_HEIGHT,
    )


def _show_pick(result: dict[str, Any], config: PipelineConfig, key: str) -> None:
    """The point to load (the front first, then the others measured on every query), and the button that loads it."""
    full = [row for row in result["rows"] if row["fold_mean"] is not None]
    ids = [row["id"] for row in result["front"]] + [row["id"] for row in full if not row["on_front"]]
    labels = {row["id"]: row["config"] for row in result["rows"]}
    if not ids:
        return
    state.keep_valid(f"{key}.pick", ids, result["pick"] if result["pick"] in ids else ids[0])
    picked = st.selectbox(
        "Configuration (click a point to pick it)", ids, key=f"{key}.pick", format_func=lambda i: labels.get(i, str(i))
    )
    if picked is None:
        return
    row = result["rows"][picked]
    splitter, retrieval, metadata = _settings(row, config)
    if (config.splitter, config.retrieval, config.metadata) == (splitter, retrieval, metadata):
        st.success("This is the session's configuration: the Chunks and Query pages use it.", icon=":material/check:")
    else:
        st.button(
            "Use this configuration",
            icon=":material/input:",
            key=f"{key}.load",
            on_click=_load,
            args=(splitter, retrieval, metadata),
            help="Make it the session's splitter, retrieval settings and what the embedding model reads",
        )


def _settings(row: dict[str, Any], config: PipelineConfig) -> tuple[Any, RetrievalSettings, MetadataSettings]:
    """A row's splitter, retrieval, and the session's metadata settings with its EMBED view laid over them."""
    settings = row["settings"]
    splitter = get_splitter(settings["splitter"]["name"], **settings["splitter"]["params"])
    view = MetadataSettings.from_params({**config.metadata.to_params(), **settings.get("metadata", {})})
    metadata = dataclasses.replace(view, extra=config.metadata.extra)
    return splitter, RetrievalSettings.from_params(settings["retrieval"]), metadata


def _load(splitter: Any, retrieval: RetrievalSettings, metadata: MetadataSettings) -> None:
    state.set_config(state.config().replace(splitter=splitter, retrieval=retrieval, metadata=metadata))
