"""What the Compare page draws: its configurations, their splits, metrics, spans, diff and sizes.

The plain data under it (starting configurations, settings summaries, table
rows) comes from :mod:`core.measure.compare_view`; the top half here builds the
boundary-diff figure. The sections under "drawing" are the page's Streamlit
blocks, each fed a list of :class:`Run`, so the page reads as a short script of them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.config import PipelineConfig
from core.errors import ChunkScopeError
from core.measure.compare import BoundaryDiff, boundary_diff, identical_chunks
from core.measure.compare_view import (
    LABELS,
    MAX_CONFIGS,
    change_column_order,
    change_rows,
    describe,
    metrics_options,
    metrics_row,
    settings_summary,
    starting_slots,
)
from core.output.highlight import CSS, Window, legend_html, source_html, source_windows
from core.schema import Document, Node
from core.splitters import SPLITTERS
from core.splitters.hierarchical import leaf_nodes
from ui import cache, charts, state, widgets
from ui.charts import SERIES_COLOURS

SPAN_HEIGHT_PX = 480

KIND_STYLE = {
    "unchanged": {"color": "#94a3b8", "symbol": "line-ns", "size": 12, "line": {"width": 1.5, "color": "#94a3b8"}},
    "moved": {"color": "#d97706", "symbol": "diamond", "size": 9},
    "added": {"color": "#059669", "symbol": "triangle-up", "size": 10},
    "removed": {"color": "#dc2626", "symbol": "x", "size": 9},
}
KIND_WORDS = {
    "unchanged": "same cut in both",
    "moved": "cut moved",
    "added": "new cut",
    "removed": "cut gone",
}


@dataclass(frozen=True)
class Run:
    """One configuration that split the document: its slot (A = 0), its splitter and the chunks compared."""

    slot: int
    splitter: Any
    nodes: list[Node]

    @property
    def label(self) -> str:
        return LABELS[self.slot]


def colour_of(slot: int) -> str:
    return SERIES_COLOURS[slot % len(SERIES_COLOURS)]


def breakable(text: str) -> str:
    """``text`` escaped as HTML, with break opportunities inside long names (``RecursiveCharacter<wbr>TextSplitter``,
    ``langchain.<wbr>recursive``), so a name in a narrow card wraps between its words."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[._/])(?=\w)", "<wbr>", html.escape(text))


def badge_html(slot: int, title: str, subtitle: str = "") -> str:
    """A coloured letter badge with a title (escaped), matching the slot's colour in the charts.

    The title and subtitle wrap within the card (never past it), a long name between its words.
    """
    wraps = "min-width:0;overflow-wrap:anywhere"
    sub = (
        f'<span style="color:#64748b;font-size:0.8rem;{wraps}">{breakable(subtitle)}</span>'
        if subtitle
        else ""
    )
    return (
        '<div style="display:flex;flex-wrap:wrap;align-items:center;column-gap:6px;row-gap:2px;margin:0 0 2px 0">'
        f'<span style="background:{colour_of(slot)};color:#fff;font-weight:700;border-radius:6px;'
        f'padding:1px 9px;font-size:0.95rem;margin-right:2px">{LABELS[slot]}</span>'
        f'<span style="font-weight:600;font-size:1.02rem;{wraps}">{breakable(title)}</span>{sub}</div>'
    )


# -- boundary diff ---------------------------------------------------------------


def diff_figure(diffs: Sequence[tuple[str, BoundaryDiff]], length: int) -> go.Figure:
    """One row per compared configuration, every cut point marked by what happened to it.

    A moved cut point is drawn where it is now, with a line back to where it was.
    """
    figure = go.Figure()
    rows = [label for label, _ in diffs]
    moved_x: list[float | None] = []
    moved_y: list[str | None] = []
    for label, diff in diffs:
        for change in diff.moved:
            moved_x += [change.before, change.after, None]
            moved_y += [label, label, None]
    if moved_x:
        figure.add_trace(
            go.Scatter(
                x=moved_x,
                y=moved_y,
                mode="lines",
                line={"color": "#d97706", "width": 2},
                hoverinfo="skip",
                showlegend=False,
            )
        )
    for kind, style in KIND_STYLE.items():
        xs, ys, hover = [], [], []
        for label, diff in diffs:
            for change in diff.of_kind(kind):  # type: ignore[arg-type]
                xs.append(change.position)
                ys.append(label)
                hover.append(describe(change))
        total = len(xs)
        figure.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers",
                name=f"{KIND_WORDS[kind]} ({total})",
                marker=style,
                hovertext=hover,
                hoverinfo="text",
            )
        )
    figure.update_layout(
        template="plotly_white",
        height=110 + 46 * len(rows),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0},
        xaxis={"title": "character position in the document", "range": [-length * 0.01, length * 1.01]},
        yaxis={"categoryorder": "array", "categoryarray": list(reversed(rows)), "type": "category"},
        font={"size": 12},
    )
    return figure


# -- metrics ---------------------------------------------------------------------


def metric_columns() -> dict[str, Any]:
    """How the metrics table shows each column of :func:`metrics_row`, and the configuration they describe.

    Widths in pixels and short headers (the unit and the meaning in each help), so the columns fit the
    page at 1280 px with four configurations. The configuration's letter, splitter name and settings
    share one column whose rows wrap, so a long name such as ``llamaindex.sentence_window`` shows whole.
    """
    number = st.column_config.NumberColumn
    tokens = "embedding-model tokens per chunk"
    return {
        "configuration": st.column_config.TextColumn(
            "Configuration", width=270, help="The configuration's letter, its splitter and the settings changed from its defaults"
        ),
        "nodes": number("Nodes", width=55),
        "mean tokens": number("Mean", format="%.1f", width=55, help=f"Mean {tokens}"),
        "p95 tokens": number("p95", format="%.1f", width=55, help=f"95th percentile of {tokens}"),
        "max tokens": number("Max", width=50, help=f"Most {tokens}"),
        "coverage": number("Coverage", format="%.1f%%", width=72, help="Non-blank text inside at least one chunk"),
        "overlap": number("Overlap", format="%.1f%%", width=65, help="Text held by two or more chunks"),
        "mid-sentence": number(
            "Mid-sentence", format="%.0f%%", width=92, help="Chunks ending inside a sentence (not at a table row)"
        ),
        "over window": number(
            "Over window",
            format="%.0f%%",
            width=88,
            help="Chunks whose EMBED view is longer than the embedding model reads",
        ),
    }


def metrics_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """:func:`metrics_row` rows with the column the table shows first: letter · splitter · settings."""
    frame = pd.DataFrame(rows)
    frame.insert(0, "configuration", [f"{r['config']} · {r['splitter']} · {r['settings']}" for r in rows])
    return frame


# -- drawing: the pickers ----------------------------------------------------------


def count_picker() -> int:
    """How many configurations sit side by side (2 to :data:`MAX_CONFIGS`)."""
    state.remember_widget("cmp.count", 2)  # kept across pages: Streamlit drops a widget another page does not draw
    state.keep_valid("cmp.count", range(2, MAX_CONFIGS + 1))
    count = (
        st.segmented_control(
            "Configurations side by side",
            list(range(2, MAX_CONFIGS + 1)),
            key="cmp.count",
            format_func=str,
        )
        or 2
    )
    state.keep_widget("cmp.count")
    return count


def configuration_columns(count: int, config: PipelineConfig) -> list[tuple[int, Any]]:
    """``count`` bordered columns of splitter settings, the valid ones by slot.

    A starts from the session's splitter and B from it at half the chunk size; a slot the person
    changed keeps its settings across pages, one left as it started follows the session's splitter.
    """
    session = (config.splitter.name, config.splitter.to_params())
    starts = starting_slots(SPLITTERS, session)
    kept = state.compare_slots()
    splitters = []
    for slot, column in enumerate(st.columns(count, gap="small")):
        previous = kept.get(slot)
        opening = previous.current if previous is not None and previous.changed else starts[slot]
        with column.container(border=True):
            badge = st.empty()
            splitter = widgets.splitter_form(f"cmp.{slot}", opening, columns=2 if count == 2 else 1)[0]
            badge.html(badge_html(slot, f"Configuration {LABELS[slot]}", slot_subtitle(slot, splitter, session)))
        if splitter is not None:
            start = previous.start if previous is not None and previous.changed else starts[slot]
            state.set_compare_slot(slot, state.CompareSlot(start, (splitter.name, splitter.to_params())))
        splitters.append(splitter)
    return [(slot, splitter) for slot, splitter in enumerate(splitters) if splitter is not None]


def slot_subtitle(slot: int, splitter: Any, session: tuple[str, dict[str, Any]]) -> str:
    """What a configuration's badge says beside its letter: its splitter, and for A whether it is the session's."""
    if splitter is None:
        return "settings to fix"
    words = splitter.title()
    if slot == 0:
        same = (splitter.name, splitter.to_params()) == session
        words += " · the session's splitter" if same else " · changed here, not in the session"
    return words


def split_each(document: Document, config: PipelineConfig, configured: Sequence[tuple[int, Any]]) -> list[Run]:
    """Split ``document`` with every configuration, keeping the session's other settings; failures are shown."""
    runs = []
    with st.spinner("Splitting with every configuration…"):
        for slot, splitter in configured:
            try:
                nodes = cache.run_split_cached([document], config.replace(splitter=splitter))
            except ChunkScopeError as exc:
                st.error(f"Configuration {LABELS[slot]}: {widgets.md_escape(str(exc))}", icon=":material/error:")
                continue
            # Nested levels (hierarchical) overlap by design: compare the leaves, the chunks that get embedded.
            runs.append(Run(slot, splitter, leaf_nodes(nodes)))
    return runs


# -- drawing: the results ----------------------------------------------------------


def metrics_table(document: Document, runs: Sequence[Run]) -> None:
    """One row of metrics per configuration, sizes in embedding-model tokens."""
    rows = [
        metrics_row(run.label, run.splitter, cache.metrics_cached([document], run.nodes, metrics_options(run.splitter)))
        for run in runs
    ]
    columns = metric_columns()
    st.dataframe(
        metrics_frame(rows),
        hide_index=True,
        width="stretch",
        column_config=columns,
        column_order=list(columns),
        row_height=widgets.WRAPPING_ROW_HEIGHT,
    )
    st.caption("Mean, p95 and max: embedding-model tokens per chunk. Hover a header for what it counts.")


def window_picker(document: Document) -> Window:
    """The part of a long document every configuration shows (the whole of a short one, with no picker)."""
    windows = source_windows(document)
    if len(windows) == 1:
        return windows[0]
    state.keep_valid("cmp.window", range(len(windows)))
    index = st.selectbox(
        f"Part of the document ({len(windows)} parts, the same part for every configuration)",
        range(len(windows)),
        key="cmp.window",
        format_func=lambda i: f"Part {i + 1}: {windows[i].label}",
    )
    return windows[index]


def spans_side_by_side(document: Document, runs: Sequence[Run]) -> None:
    """Each configuration's chunks over the same part of the source, one column each."""
    window = window_picker(document)
    st.html(CSS + legend_html())
    for run, column in zip(runs, st.columns(len(runs), gap="small"), strict=True):
        with column:
            st.html(badge_html(run.slot, run.splitter.title(), f"{len(run.nodes):,} chunks"))
            st.caption(widgets.md_escape(settings_summary(run.splitter)))
            st.html(
                source_html(
                    document.text,
                    run.nodes,
                    start=window.start,
                    end=window.end,
                    pages=document.pages,
                    height_px=SPAN_HEIGHT_PX,
                    include_css=False,
                )
            )


def boundary_diff_section(document: Document, runs: Sequence[Run]) -> None:
    """Every configuration's cut points against A's: counts, the chart and the table of changes."""
    base = runs[0]
    diffs = [(run.label, boundary_diff(base.nodes, run.nodes)) for run in runs[1:]]
    st.caption(
        "A cut point is where a chunk starts or ends. Against configuration A, each other configuration's cut points "
        "are the same, moved (paired with the nearest of A's, in order), new, or gone."
    )
    for run, (label, diff) in zip(runs[1:], diffs, strict=True):
        counts = diff.counts()
        head, identical, same, moved, added, removed = st.columns([2, 1.3, 1, 1, 1, 1], vertical_alignment="center")
        head.html(badge_html(LABELS.index(label), f"{label} against A", "identical cuts" if diff.is_identical else ""))
        shared = identical_chunks(base.nodes, run.nodes)
        identical.metric(
            "Identical chunks",
            f"{shared / len(run.nodes):.0%}" if run.nodes else "—",
            f"{shared:,} of {len(run.nodes):,}",
            delta_color="off",
            delta_arrow="off",
            border=True,
            help="Chunks A has too: the same span and the same text (a framework engine may rewrite text)",
        )
        same.metric("Same", f"{counts['unchanged']:,}", border=True)
        moved.metric("Moved", f"{counts['moved']:,}", border=True)
        added.metric("New", f"{counts['added']:,}", border=True)
        removed.metric("Gone", f"{counts['removed']:,}", border=True)
    st.plotly_chart(diff_figure(diffs, len(document.text)), width="stretch", config={"displayModeBar": False})
    changes = [row for label, diff in diffs for row in change_rows(label, diff, document.text)]
    with st.expander(f"Every changed cut point ({len(changes):,})", expanded=False):
        if changes:
            st.dataframe(
                pd.DataFrame(changes, columns=change_column_order(["A", *(run.label for run in runs[1:])])),
                hide_index=True,
                width="stretch",
                column_config=change_columns(["A", *(run.label for run in runs[1:])]),
                placeholder=NO_VALUE,
            )
        else:
            st.caption("No cut point differs.")


# What a cell with no value shows: a new cut has no place in A, a gone one none in the other, only a moved one a shift.
NO_VALUE = "—"


def change_columns(labels: Sequence[str]) -> dict[str, Any]:
    """The changed cut points' columns: positions as whole numbers, the shift signed."""
    number = st.column_config.NumberColumn
    positions = {
        f"in {label}": number(f"in {label}", format="%d", help="Character position of the cut") for label in labels
    }
    return {
        **positions,
        "shift": number("shift", format="%+d", help="Characters the cut moved (moved cuts only)"),
        "text around the cut": st.column_config.TextColumn("text around the cut", width="large"),
    }


def size_histograms(runs: Sequence[Run]) -> None:
    """The configurations' chunk sizes overlaid, in model tokens or characters."""
    unit = (
        st.segmented_control("Measure in", ["model tokens", "characters"], key="cmp.unit", default="model tokens")
        or "model tokens"
    )
    series = {}
    for run in runs:
        texts = tuple(node.text for node in run.nodes)
        sizes = cache.count_tokens(texts, "model") if unit == "model tokens" else [len(text) for text in texts]
        series[f"{run.label} · {run.splitter.title()}"] = sizes
    st.plotly_chart(
        charts.size_histogram(series, unit=unit, title=f"Chunk sizes, overlaid ({unit})"),
        width="stretch",
        config={"displayModeBar": False},
    )


# -- which comparison --------------------------------------------------------------

MODES = ("Splitters", "Parsers")


def mode_picker() -> str:
    """Compare splitter settings on one document, or two parsers on one file."""
    state.remember_widget("cmp.mode", MODES[0])
    state.keep_valid("cmp.mode", MODES)
    mode = (
        st.segmented_control(
            "Compare",
            MODES,
            key="cmp.mode",
            help="Parsers: the same file read two ways, both cut by the session's splitter (set on the Chunks page)",
        )
        or MODES[0]
    )
    state.keep_widget("cmp.mode")
    return mode
