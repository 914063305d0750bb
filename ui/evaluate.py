"""What the Evaluate page computes and draws: runs with progress, the results table, bars and a sweep heatmap.

The evaluation itself is :mod:`core.evaluation`; this module only feeds it the
session's documents, reports progress while it embeds, and turns its rows into
a table and plotly figures.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import plotly.graph_objects as go

from core.errors import ConfigError
from core.evaluation import EvalQuery, evaluate, sweep
from core.schema import Document
from core.splitters import SPLITTERS
from ui.charts import SERIES_COLOURS

# The metrics of a row (Evaluation.to_row), in the order a reader compares them.
METRICS: dict[str, str] = {
    "hit_rate": "Hit rate@k",
    "mrr": "MRR",
    "recall": "Recall",
    "precision": "Precision",
    "iou": "IoU",
}
METRIC_HELP = {
    "hit_rate": "Share of queries with reference text in some retrieved chunk",
    "mrr": "Mean of 1 / rank of the first chunk holding reference text (0 on a miss)",
    "recall": "Share of the reference characters the retrieved chunks hold",
    "precision": "Share of the retrieved characters that are reference text (repeats count each time)",
    "iou": "Reference ∩ retrieved over their union (repeats count each time)",
}
LABELS = ("A", "B", "C", "D")
# (done, total, what is happening): how a run reports progress.
Report = Callable[[float, str], None]


def sweepable() -> list[type]:
    """Splitters that declare both chunk_size and chunk_overlap (what a sweep varies)."""
    return [cls for cls in SPLITTERS if {"chunk_size", "chunk_overlap"} <= {spec.name for spec in cls.params()}]


def parse_sizes(text: str, name: str) -> list[int]:
    """``"256, 512 1024"`` -> ``[256, 512, 1024]``; anything else raises ConfigError naming ``name``."""
    pieces = [piece for piece in re.split(r"[,\s]+", text.strip()) if piece]
    if not pieces:
        raise ConfigError(f"{name}: give at least one whole number")
    values = []
    for piece in pieces:
        if not piece.isdigit():
            raise ConfigError(f"{name}: {piece!r} is not a whole number ≥ 0")
        values.append(int(piece))
    return sorted(set(values))


# -- running ---------------------------------------------------------------------------


def run_configurations(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    splitters: Sequence[Any],
    *,
    embedder: Any,
    top_k: int,
    mode: str,
    alpha: float,
    report: Report,
) -> list[dict[str, Any]]:
    """One row per splitter (``Evaluation.to_row`` plus its label), reporting progress as it goes.

    Each configuration's nodes are embedded first with a progress callback; the
    embedder keeps the vectors (by text), so ``evaluate`` then finds them cached.
    """
    from core.embeddings import embed_nodes

    rows = []
    count = len(splitters)
    for index, splitter in enumerate(splitters):
        label = LABELS[index] if index < len(LABELS) else str(index + 1)
        name = f"{label} ({index + 1} of {count})"
        if mode != "bm25":
            nodes = splitter.split(list(documents))

            def embedding(done: int, total: int, index: int = index, name: str = name) -> None:
                report((index + 0.8 * done / max(total, 1)) / count, f"Configuration {name}: embedding {done:,} of {total:,} chunks")

            report(index / count, f"Configuration {name}: embedding {len(nodes):,} chunks")
            embed_nodes(nodes, embedder, progress=embedding)

        def scoring(done: int, total: int, index: int = index, name: str = name) -> None:
            report((index + 0.8 + 0.2 * done / max(total, 1)) / count, f"Configuration {name}: scoring query {done} of {total}")

        result = evaluate(
            documents, queries, splitter, embedder=embedder, top_k=top_k, mode=mode, alpha=alpha, progress=scoring  # type: ignore[arg-type]
        )
        rows.append({"config": label, **result.to_row()})
    report(1.0, "Done")
    return rows


def run_sweep(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    splitter_name: str,
    sizes: Sequence[int],
    overlaps: Sequence[int],
    *,
    base_params: dict[str, Any],
    embedder: Any,
    top_k: int,
    mode: str,
    alpha: float,
    report: Report,
) -> list[dict[str, Any]]:
    """``core.evaluation.sweep``, one progress step per evaluated pair; rows labelled ``size/overlap``."""

    def progress(done: int, total: int) -> None:
        report(done / max(total, 1), f"Evaluated {done} of {total} chunk_size × chunk_overlap pairs")

    report(0.0, "Splitting and embedding the first pair…")
    rows = sweep(
        documents, queries, splitter_name, sizes, overlaps, base_params=base_params, embedder=embedder,
        top_k=top_k, mode=mode, alpha=alpha, progress=progress,  # type: ignore[arg-type]
    )
    return [{"config": f"{row['chunk_size']}/{row['chunk_overlap']}", **row} for row in rows]


# -- figures ---------------------------------------------------------------------------

_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    "font": {"size": 12},
    "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},
}
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
        **{**_LAYOUT, "legend": {"orientation": "h", "yanchor": "top", "y": -0.12, "xanchor": "left", "x": 0}},
        height=380,
        barmode="group",
        title="Metrics per configuration",
        yaxis={"title": "score", "range": [0, 1.1]},
        xaxis={"type": "category"},
    )
    return figure


def heatmap_figure(rows: Sequence[dict[str, Any]], metric: str) -> go.Figure:
    """chunk_size (rows) × chunk_overlap (columns) coloured by ``metric``; pairs not evaluated stay blank."""
    sizes = sorted({row["chunk_size"] for row in rows})
    overlaps = sorted({row["chunk_overlap"] for row in rows})
    value = {(row["chunk_size"], row["chunk_overlap"]): row[metric] for row in rows}
    z = [[value.get((size, overlap)) for overlap in overlaps] for size in sizes]
    text = [["" if v is None else f"{v:.3f}" for v in line] for line in z]
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=[str(o) for o in overlaps],
            y=[str(s) for s in sizes],
            text=text,
            texttemplate="%{text}",
            colorscale="Blues",
            zmin=0,
            zmax=1,
            colorbar={"title": METRICS[metric]},
            hovertemplate="chunk_size %{y}<br>chunk_overlap %{x}<br>" + METRICS[metric] + " %{z:.3f}<extra></extra>",
        )
    )
    figure.update_layout(
        **_LAYOUT,
        height=max(260, 90 + 60 * len(sizes)),
        title=f"{METRICS[metric]} by chunk size and overlap",
        xaxis={"title": "chunk_overlap", "type": "category"},
        yaxis={"title": "chunk_size", "type": "category"},
    )
    return figure
