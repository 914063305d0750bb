"""Helpers for the Compare page: starting configurations, the boundary-diff chart and table, metric rows.

No Streamlit calls here: these build data and figures the page draws.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from core.compare import BoundaryChange, BoundaryDiff
from core.errors import ConfigError
from core.registry import Registry
from ui.charts import SERIES_COLOURS

LABELS = ("A", "B", "C", "D")
MAX_CONFIGS = len(LABELS)

# What slots B, C and D start with when the page opens: other families at sizes that
# cut the sample documents into a readable number of chunks.
PRESETS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("recursive", {"chunk_size": 800, "chunk_overlap": 100}),
    ("markdown", {}),
    ("sentence", {"chunk_size": 256, "chunk_overlap": 32}),
    ("token", {"chunk_size": 256, "chunk_overlap": 32}),
    ("character", {"chunk_size": 800, "chunk_overlap": 100}),
)

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


def colour_of(slot: int) -> str:
    return SERIES_COLOURS[slot % len(SERIES_COLOURS)]


def badge_html(slot: int, title: str, subtitle: str = "") -> str:
    """A coloured letter badge with a title (escaped), matching the slot's colour in the charts."""
    sub = f'<span style="color:#64748b;font-size:0.8rem;margin-left:6px">{html.escape(subtitle)}</span>' if subtitle else ""
    return (
        '<div style="display:flex;align-items:center;gap:8px;margin:0 0 2px 0">'
        f'<span style="background:{colour_of(slot)};color:#fff;font-weight:700;border-radius:6px;'
        f'padding:1px 9px;font-size:0.95rem">{LABELS[slot]}</span>'
        f'<span style="font-weight:600;font-size:1.02rem">{html.escape(title)}</span>{sub}</div>'
    )


def starting_slots(registry: Registry, first: tuple[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The four slots' starting splitter and parameters.

    A is ``first`` (the session's current splitter); B is the same splitter at half
    its chunk size, when it has one, so the boundary diff has a story to tell;
    the rest come from :data:`PRESETS`, skipping what is not installed or not valid.
    """
    slots = [first]
    name, params = first
    half = _halved(registry, name, params)
    if half is not None:
        slots.append((name, half))
    for preset_name, preset_params in PRESETS:
        if len(slots) >= MAX_CONFIGS:
            break
        if preset_name == name or preset_name not in registry:
            continue
        try:
            registry.create(preset_name, **preset_params)
        except ConfigError:
            continue
        slots.append((preset_name, dict(preset_params)))
    while len(slots) < MAX_CONFIGS:
        slots.append(first)
    return slots


def _halved(registry: Registry, name: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
    size = params.get("chunk_size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 2:
        return None
    smaller = {**params, "chunk_size": size // 2}
    if "chunk_overlap" in params:
        smaller["chunk_overlap"] = min(int(params["chunk_overlap"]), size // 8)
    try:
        registry.create(name, **smaller)
    except ConfigError:
        return None
    return smaller


def settings_summary(splitter: Any) -> str:
    """``size 512 · overlap 50``: the parameters that differ from the defaults."""
    changed = splitter.to_params(only_changed=True)
    if not changed:
        return "defaults"
    # "chunk_size" reads as "size" here: the column is narrow and the context says chunk.
    return " · ".join(f"{key.removeprefix('chunk_')} {_show(value)}" for key, value in changed.items())


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    if isinstance(value, str):
        return repr(value)
    return str(value)


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
                x=moved_x, y=moved_y, mode="lines", line={"color": "#d97706", "width": 2},
                hoverinfo="skip", showlegend=False,
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
                x=xs, y=ys, mode="markers", name=f"{KIND_WORDS[kind]} ({total})",
                marker=style, hovertext=hover, hoverinfo="text",
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


def describe(change: BoundaryChange) -> str:
    if change.kind == "moved":
        return f"moved {change.before:,} → {change.after:,} ({change.shift:+,} characters)"
    if change.kind == "added":
        return f"new cut at {change.after:,}"
    if change.kind == "removed":
        return f"cut at {change.before:,} is gone"
    return f"same cut at {change.before:,}"


def context_at(text: str, position: int, width: int = 28) -> str:
    """The text either side of a cut, the cut shown as ``│`` and line breaks as ``⏎``."""
    before = text[max(0, position - width) : position]
    after = text[position : position + width]
    show = lambda part: part.replace("\r", "").replace("\n", "⏎").replace("\t", " ")  # noqa: E731
    return f"{'…' if position - width > 0 else ''}{show(before)}│{show(after)}{'…' if position + width < len(text) else ''}"


def change_rows(label: str, diff: BoundaryDiff, text: str) -> list[dict[str, Any]]:
    """The changed cut points of one comparison as table rows, in document order."""
    rows = []
    for change in diff.changes:
        if change.kind == "unchanged":
            continue
        rows.append(
            {
                "compared": f"{label} vs A",
                "change": change.kind,
                "in A": change.before,
                f"in {label}": change.after,
                "shift": change.shift if change.kind == "moved" else None,
                "text around the cut": context_at(text, change.position),
            }
        )
    return rows


# -- metrics ---------------------------------------------------------------------


def metrics_row(label: str, splitter: Any, metrics: Any) -> dict[str, Any]:
    """One row of the metrics table (sizes in model tokens; shares as percentages)."""
    return {
        "config": label,
        "splitter": splitter.name,
        "settings": settings_summary(splitter),
        "nodes": metrics.count,
        "mean tokens": round(metrics.tokens.mean, 1),
        "p95 tokens": round(metrics.tokens.p95, 1),
        "max tokens": int(metrics.tokens.max),
        "coverage": 100 * metrics.coverage,
        "overlap": 100 * metrics.overlap,
        "mid-sentence": 100 * metrics.mid_sentence,
        "over window": 100 * metrics.over_window,
    }
