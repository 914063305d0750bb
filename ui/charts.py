"""Plotly figures the pages share: chunk-size histograms, semantic distances, the node hierarchy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from core.output.highlight import PALETTE
from core.splitters.semantic_analysis import DISTANCE_VIEW, CurveView, SemanticAnalysis

# Stronger versions of the span palette for bars and lines.
SERIES_COLOURS = ("#4f46e5", "#059669", "#d97706", "#db2777")
_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 10, "r": 10, "t": 36, "b": 10},
    "height": 320,
    "font": {"size": 12},
    "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},
}


def size_histogram(
    sizes: Mapping[str, Sequence[int]] | Sequence[int],
    *,
    limit: int | None = None,
    unit: str = "characters",
    title: str | None = None,
) -> go.Figure:
    """Histogram of chunk sizes (one series, or several overlaid by name) with the size limit drawn."""
    series = dict(sizes) if isinstance(sizes, Mapping) else {"nodes": list(sizes)}
    shared_bins = _shared_bins(series) if len(series) > 1 else None
    traces = [
        {
            "type": "histogram",
            "x": list(values),
            "name": name,
            "marker": {"color": SERIES_COLOURS[index % len(SERIES_COLOURS)]},
            "opacity": 0.85 if len(series) == 1 else 0.55,
            "nbinsx": min(40, max(8, len(values) // 2)),
            # Overlaid series share one set of bins, so bars line up and compare.
            **({"xbins": shared_bins} if shared_bins else {}),
            "hovertemplate": f"%{{x}} {unit}<br>%{{y}} nodes<extra>{name}</extra>",
        }
        for index, (name, values) in enumerate(series.items())
    ]
    layout: dict[str, Any] = {
        **_LAYOUT,
        "template": _template(),
        "barmode": "overlay",
        "title": {"text": title or f"Chunk sizes ({unit})"},
        # Sizes and counts are whole numbers: no "25.9266k" ticks, no half a node.
        "xaxis": {"title": {"text": f"size in {unit}"}, "tickformat": ",d"},
        "yaxis": {"title": {"text": "nodes"}, "tickformat": ",d", "rangemode": "tozero"},
        "showlegend": len(series) > 1,
        "bargap": 0.05,
    }
    counts_at_most = max((len(values) for values in series.values()), default=0)
    if counts_at_most <= 10:
        layout["yaxis"]["dtick"] = 1
    all_values = [value for values in series.values() for value in values]
    if all_values and min(all_values) == max(all_values):
        # One size (e.g. one node): plotly would zoom to a sliver around it; show a readable span instead.
        value = all_values[0]
        pad = max(10, round(abs(value) * 0.1))
        layout["xaxis"]["range"] = [value - pad, value + pad]
    if limit:
        # A vertical line across the plot at the limit, labelled at its top left (what add_vline draws).
        red = "#dc2626"
        line = {"type": "line", "x0": limit, "x1": limit, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain"}
        layout["shapes"] = [{**line, "line": {"color": red, "dash": "dash", "width": 2}}]
        layout["annotations"] = [
            {
                "text": f"chunk size limit: {limit:,}",
                "x": limit,
                "xref": "x",
                "y": 1,
                "yref": "y domain",
                "xanchor": "right",
                "yanchor": "top",
                "showarrow": False,
                "font": {"color": red},
            }
        ]
    # Plain dicts, not validated: plotly's validation was most of a Chunks page rerun's
    # chart cost (tests check the spec validates).
    return go.Figure(data=traces, layout=layout, _validate=False)


@lru_cache(maxsize=1)
def _template() -> dict[str, Any]:
    return pio.templates["plotly_white"].to_plotly_json()


def _shared_bins(series: Mapping[str, Sequence[int]]) -> dict[str, float] | None:
    values = [value for sizes in series.values() for value in sizes]
    if not values:
        return None
    low, high = min(values), max(values)
    size = max((high - low) / 30, 1)
    return {"start": low - size / 2, "end": high + size, "size": size}


def distance_chart(analysis: SemanticAnalysis, view: CurveView = DISTANCE_VIEW) -> go.Figure:
    """A semantic split's curve (point i: between sentence i and i+1), its smoothed form where it has one, the
    threshold, the breakpoints, and the cuts made for size; named as the splitter's ``view`` says."""
    curve = analysis.scores
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=list(range(len(curve))),
            y=list(curve),
            mode="lines+markers",
            name=view.series,
            line={"color": SERIES_COLOURS[0], "width": 1.5},
            marker={"size": 4},
            hovertemplate=f"between sentence %{{x}} and %{{x}}+1<br>{view.series} %{{y:.3f}}<extra></extra>",
        )
    )
    if analysis.smoothed:
        figure.add_trace(
            go.Scatter(
                x=list(range(len(analysis.smoothed))),
                y=list(analysis.smoothed),
                mode="lines",
                name=f"smoothed {view.series}",
                line={"color": SERIES_COLOURS[1], "width": 2},
                hovertemplate=f"smoothed {view.series} %{{y:.3f}}<extra></extra>",
            )
        )
    _cut_markers(figure, curve, analysis.breakpoints, "breakpoint (a chunk ends)", "#dc2626", "cut after sentence")
    _cut_markers(figure, curve, analysis.size_cuts, "size cut (chunk_size)", "#94a3b8", "cut for size after sentence")
    if analysis.threshold is not None:
        figure.add_hline(
            y=analysis.threshold,
            line_dash="dash",
            line_color="#dc2626",
            annotation_text=f"threshold {analysis.threshold:.3f}",
            annotation_position="top left",
        )
    figure.update_layout(**_LAYOUT, title=view.title, xaxis_title="sentence", yaxis_title=view.axis)
    return figure


def _cut_markers(
    figure: go.Figure, curve: Sequence[float], cuts: Sequence[int], name: str, colour: str, says: str
) -> None:
    """Mark the cuts ``cuts`` (sentence indices) on the curve."""
    cut = [i for i in cuts if 0 <= i < len(curve)]
    if cut:
        figure.add_trace(
            go.Scatter(
                x=cut,
                y=[curve[i] for i in cut],
                mode="markers",
                name=name,
                marker={"color": colour, "size": 9, "symbol": "x"},
                hovertemplate=f"{says} %{{x}}<extra></extra>",
            )
        )


def hierarchy_chart(nodes: Sequence[Any], labels: Mapping[str, str], root_label: str = "document") -> go.Figure:
    """An icicle of the parent/child tree: width is each node's size in characters."""
    ids, parents, values, texts, colours = ["root"], [""], [0], [root_label], ["#e2e8f0"]
    present = {node.id for node in nodes}
    for node in nodes:
        parent = node.parent_id if node.parent_id in present else "root"
        level = int(node.metadata.get("level", 0) or 0)
        ids.append(node.id)
        parents.append(parent)
        values.append(0 if node.child_ids else max(node.end_char - node.start_char, 1))
        texts.append(labels.get(node.id, node.id))
        colours.append(PALETTE[level % len(PALETTE)])
    figure = go.Figure(
        go.Icicle(
            ids=ids,
            parents=parents,
            values=values,
            labels=texts,
            branchvalues="remainder",
            marker={"colors": colours},
            tiling={"orientation": "v"},
            hovertemplate="%{label}<extra></extra>",
        )
    )
    figure.update_layout(**{**_LAYOUT, "height": 360}, title="Parent / child tree (width: characters)")
    return figure
