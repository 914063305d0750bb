"""What sums up a split for a reader: six metric cards, and the size unit as a reader says it.

The Chunks page draws the cards with ``st.metric``; the snapshot writes them as
HTML. Both take them from here, so the two always say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.measure.metrics import ChunkMetrics
from core.measure.window import unit_name  # noqa: F401 - declared there, used here and by the pages


@dataclass(frozen=True)
class MetricCard:
    label: str
    value: str
    help: str
    detail: str = ""  # a second number beside the value (the 95th percentile beside the mean)


def metric_cards(
    metrics: ChunkMetrics, size_unit: str, size_limit: int | None, level_sizes: tuple[int, ...] = ()
) -> list[MetricCard]:
    """Node count, mean size, coverage, overlap, mid-sentence ends, and nodes over the embedding window.

    ``level_sizes`` (largest first): of a hierarchy, whose cards describe its leaves, the limit said is the leaves'.
    """
    limit = f"; the limit is {size_limit:,}" if size_limit else ""
    if metrics.parents and len(level_sizes) > 1:
        limit = f"; a leaf's limit is {level_sizes[-1]:,} (a parent's {level_sizes[0]:,})"
    return [
        MetricCard(
            "Nodes",
            f"{metrics.count:,}",
            "How many nodes the splitter made"
            + (
                "; of a hierarchy, its leaves, which are embedded and searched. Every card describes them; the "
                "parents they return are counted beside"
                if metrics.parents
                else ""
            ),
            detail=f"+ {metrics.parents:,} parent{'s' if metrics.parents != 1 else ''}" if metrics.parents else "",
        ),
        MetricCard(
            "Mean size",
            f"{metrics.tokens.mean:,.0f}",
            f"Mean node size, and its 95th percentile, in {unit_name(size_unit)}{limit}",
            detail=f"p95 {metrics.tokens.p95:,.0f}",
        ),
        MetricCard("Coverage", f"{metrics.coverage:.1%}", "Share of the document's non-blank text inside some node"),
        MetricCard("Overlap", f"{metrics.overlap:.1%}", "Share of node text that another node also holds"),
        MetricCard("Mid-sentence", f"{metrics.mid_sentence:.0%}", "Share of nodes that end inside a sentence"),
        MetricCard(
            "Over window",
            f"{metrics.over_window:.0%}",
            f"Share of the embedded nodes (a hierarchy's leaves) whose EMBED view exceeds the embedding model's "
            f"{metrics.window_tokens} tokens",
        ),
    ]
