"""Scores of retrieved character ranges against reference ranges: recall, precision, IoU, hit and rank.

With *R* the positions the retrieved nodes cover, *E* the reference positions
and *L* the total length of the retrieved nodes (text repeated by overlapping
nodes counts each time the context holds it, so overlap costs precision):
recall = |R ∩ E| / |E|, precision = |R ∩ E| / L, IoU = |R ∩ E| / (L + |E \\ R|).
A range is ``(document id, start, end)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# (document id, start, end): a range of characters in one document.
DocSpan = tuple[str, int, int]


def merge_spans(spans: Sequence[DocSpan]) -> list[DocSpan]:
    """Sorted, disjoint ranges covering the same characters."""
    merged: list[DocSpan] = []
    for doc, start, end in sorted(s for s in spans if s[2] > s[1]):
        if merged and merged[-1][0] == doc and start <= merged[-1][2]:
            last = merged[-1]
            merged[-1] = (doc, last[1], max(last[2], end))
        else:
            merged.append((doc, start, end))
    return merged


def covered(spans: Sequence[DocSpan]) -> int:
    return sum(end - start for _, start, end in merge_spans(spans))


def intersection(a: Sequence[DocSpan], b: Sequence[DocSpan]) -> int:
    """Characters covered by both span lists."""
    total = 0
    for doc_a, start_a, end_a in merge_spans(a):
        for doc_b, start_b, end_b in merge_spans(b):
            if doc_a == doc_b:
                total += max(0, min(end_a, end_b) - max(start_a, start_b))
    return total


@dataclass(frozen=True)
class SpanScores:
    recall: float
    precision: float
    iou: float


def span_scores(retrieved: Sequence[DocSpan], reference: Sequence[DocSpan]) -> SpanScores:
    """Recall, precision and IoU of retrieved ranges against reference ranges (see the module docstring)."""
    shared = intersection(retrieved, reference)
    reference_size = covered(reference)
    retrieved_length = sum(max(0, end - start) for _, start, end in retrieved)
    unmatched_reference = reference_size - shared
    return SpanScores(
        recall=shared / reference_size if reference_size else 0.0,
        precision=shared / retrieved_length if retrieved_length else 0.0,
        iou=shared / (retrieved_length + unmatched_reference) if retrieved_length + unmatched_reference else 0.0,
    )


def rank_scores(relevant: Sequence[bool]) -> tuple[float, float]:
    """(hit, reciprocal rank) for the relevance of the retrieved nodes in rank order."""
    for rank, is_relevant in enumerate(relevant, start=1):
        if is_relevant:
            return 1.0, 1.0 / rank
    return 0.0, 0.0


def hit_curve(first_relevant_ranks: Sequence[int | None], top_k: int) -> list[float]:
    """Hit rate at every k from 1 to ``top_k``: the share of queries whose first relevant node ranks ≤ k."""
    count = len(first_relevant_ranks)
    if not count:
        return [0.0] * top_k
    return [
        sum(1 for rank in first_relevant_ranks if rank is not None and rank <= k) / count for k in range(1, top_k + 1)
    ]
