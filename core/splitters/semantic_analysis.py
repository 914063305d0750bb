"""What a semantic split saw, shared by the native splitter, its compat modes and the engines.

:class:`SemanticAnalysis` holds one document's sentences, distances, threshold and breakpoints (the Chunks
page draws them, named and explained by the splitter's :class:`CurveView`); :func:`chunks_percentile` is
LangChain's percentile for a wanted number of chunks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DISTANCE_VIEW", "CurveView", "SemanticAnalysis", "chunks_percentile"]


@dataclass(frozen=True)
class SemanticAnalysis:
    """What the semantic splitter saw in one document.

    ``distances[i]`` is the cosine distance between the groups around sentences
    ``i`` and ``i + 1``; ``scores`` is what ``threshold`` is compared with (the
    distances, or their gradient for ``gradient``); a chunk ends after sentence
    ``i`` for every ``i`` in ``breakpoints``. ``threshold`` is None when there
    were too few sentences to compare. A splitter whose curve starts later
    pads the front with NaN. ``smoothed`` is the curve it finds low points on,
    where that is not ``scores`` (else empty); ``size_cuts`` are the ends of
    chunks cut to keep a size limit, not by the curve.
    """

    sentence_spans: list[tuple[int, int]]
    distances: list[float]
    scores: list[float]
    threshold: float | None
    breakpoints: list[int]
    smoothed: list[float] = field(default_factory=list)
    size_cuts: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class CurveView:
    """How the Chunks page names a splitter's curve and says the rule it cuts by (the caption's sentence)."""

    title: str
    axis: str
    series: str
    rule: str


# The native splitter's and the LlamaIndex and LangChain engines': a cut where a distance (or score) is high.
DISTANCE_VIEW = CurveView(
    title="Distance between neighbouring sentences",
    axis="cosine distance",
    series="distance",
    rule="a chunk ends wherever the score rises above the dashed threshold.",
)


def chunks_percentile(distances: int, number_of_chunks: int) -> float:
    """The percentile of ``distances`` distances that leaves about ``number_of_chunks`` chunks.

    LangChain's ``SemanticChunker._threshold_from_clusters``, in its arithmetic: linear from the 100th percentile
    at one chunk to the 0th at one chunk per distance.
    """
    x1, y1 = distances, 0.0
    x2, y2 = 1.0, 100.0
    x = max(min(number_of_chunks, x1), x2)
    y = y2 if x2 == x1 else y1 + ((y2 - y1) / (x2 - x1)) * (x - x1)
    return min(max(y, 0), 100)
