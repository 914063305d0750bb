"""Boundary diff: how two chunkings of the same documents cut the text differently.

A *cut point* is a character position where some chunk starts or ends. Two
chunkings are compared per document: a position both have is ``unchanged``; the
remaining positions are paired, in order, between consecutive unchanged ones, as
``moved`` (from a position in A to one in B); whatever stays unpaired was
``removed`` (only A cuts there) or ``added`` (only B cuts there).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from core.schema import Node

ChangeKind = Literal["unchanged", "moved", "added", "removed"]
CHANGE_KINDS: tuple[ChangeKind, ...] = ("unchanged", "moved", "added", "removed")

# Above this many candidate pairs in one stretch between unchanged cut points the
# exact alignment gets slow in pure Python; a greedy pairing of neighbours is used.
_EXACT_ALIGNMENT_LIMIT = 200_000


@dataclass(frozen=True)
class BoundaryChange:
    """One cut point: where it is in A (``before``) and in B (``after``); None where absent."""

    kind: ChangeKind
    doc_id: str
    before: int | None
    after: int | None

    @property
    def shift(self) -> int:
        """How far a moved cut point travelled (B minus A); 0 unless moved."""
        if self.before is None or self.after is None:
            return 0
        return self.after - self.before

    @property
    def position(self) -> int:
        """Where to draw it: B's position if B has it, else A's."""
        return self.after if self.after is not None else self.before  # type: ignore[return-value]


@dataclass(frozen=True)
class BoundaryDiff:
    """Every cut point of two chunkings, each classified, sorted by document then position."""

    changes: tuple[BoundaryChange, ...]

    def of_kind(self, kind: ChangeKind) -> list[BoundaryChange]:
        return [change for change in self.changes if change.kind == kind]

    @property
    def unchanged(self) -> list[BoundaryChange]:
        return self.of_kind("unchanged")

    @property
    def moved(self) -> list[BoundaryChange]:
        return self.of_kind("moved")

    @property
    def added(self) -> list[BoundaryChange]:
        return self.of_kind("added")

    @property
    def removed(self) -> list[BoundaryChange]:
        return self.of_kind("removed")

    def counts(self) -> dict[str, int]:
        """How many cut points of each kind, in the order unchanged, moved, added, removed."""
        return {kind: len(self.of_kind(kind)) for kind in CHANGE_KINDS}

    @property
    def is_identical(self) -> bool:
        return all(change.kind == "unchanged" for change in self.changes)


def cut_points(nodes: Sequence[Node]) -> dict[str, list[int]]:
    """Per document id, the sorted distinct positions where a node starts or ends."""
    points: dict[str, set[int]] = {}
    for node in nodes:
        positions = points.setdefault(node.doc_id, set())
        positions.add(node.start_char)
        positions.add(node.end_char)
    return {doc_id: sorted(positions) for doc_id, positions in points.items()}


def boundary_diff(nodes_a: Sequence[Node], nodes_b: Sequence[Node], *, max_shift: int | None = None) -> BoundaryDiff:
    """Classify every cut point of chunking A and chunking B.

    ``max_shift`` bounds how far a cut point may travel and still count as moved;
    farther apart, the pair is reported as one removed and one added.
    """
    if max_shift is not None and max_shift < 0:
        from core.errors import ConfigError

        raise ConfigError(f"max_shift must be at least 0, got {max_shift}")
    points_a = cut_points(nodes_a)
    points_b = cut_points(nodes_b)
    changes: list[BoundaryChange] = []
    # Documents in the order they first appear: A's, then any only B has.
    doc_ids = list(dict.fromkeys([*points_a, *points_b]))
    for doc_id in doc_ids:
        changes.extend(_diff_positions(doc_id, points_a.get(doc_id, []), points_b.get(doc_id, []), max_shift))
    return BoundaryDiff(tuple(changes))


def _diff_positions(doc_id: str, a: list[int], b: list[int], max_shift: int | None) -> list[BoundaryChange]:
    shared = sorted(set(a) & set(b))
    changes = [BoundaryChange("unchanged", doc_id, p, p) for p in shared]
    # The stretches between consecutive unchanged cut points are aligned independently,
    # so a moved cut point never jumps over one that stayed put.
    edges = [float("-inf"), *shared, float("inf")]
    for low, high in pairwise(edges):
        gap_a = _between(a, low, high)
        gap_b = _between(b, low, high)
        pairs = _align(gap_a, gap_b, max_shift)
        paired_a = {i for i, _ in pairs}
        paired_b = {j for _, j in pairs}
        changes += [BoundaryChange("moved", doc_id, gap_a[i], gap_b[j]) for i, j in pairs]
        changes += [BoundaryChange("removed", doc_id, p, None) for i, p in enumerate(gap_a) if i not in paired_a]
        changes += [BoundaryChange("added", doc_id, None, p) for j, p in enumerate(gap_b) if j not in paired_b]
    changes.sort(key=lambda change: (change.position, CHANGE_KINDS.index(change.kind)))
    return changes


def _between(sorted_positions: list[int], low: float, high: float) -> list[int]:
    """The positions strictly between low and high."""
    start = bisect_left(sorted_positions, low)
    if start < len(sorted_positions) and sorted_positions[start] == low:
        start += 1
    end = bisect_left(sorted_positions, high)
    return sorted_positions[start:end]


def _align(a: list[int], b: list[int], max_shift: int | None) -> list[tuple[int, int]]:
    """Order-preserving pairs (i, j): as many as possible, then the least total travel."""
    if not a or not b:
        return []
    if len(a) * len(b) > _EXACT_ALIGNMENT_LIMIT:
        return _align_greedy(a, b, max_shift)

    def allowed(i: int, j: int) -> bool:
        return max_shift is None or abs(a[i] - b[j]) <= max_shift

    # best[i][j]: (pairs, -travel) for the suffixes a[i:], b[j:]; larger is better.
    n, m = len(a), len(b)
    best = [[(0, 0)] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            choice = max(below[j], row[j + 1])
            if allowed(i, j):
                pairs, travel = below[j + 1]
                choice = max(choice, (pairs + 1, travel - abs(a[i] - b[j])))
            row[j] = choice
    pairs_out: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if allowed(i, j):
            pairs, travel = best[i + 1][j + 1]
            if best[i][j] == (pairs + 1, travel - abs(a[i] - b[j])):
                pairs_out.append((i, j))
                i, j = i + 1, j + 1
                continue
        if best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs_out


def _align_greedy(a: list[int], b: list[int], max_shift: int | None) -> list[tuple[int, int]]:
    """Pair neighbours in the merged order, closest first: fast, never crossing."""
    merged = sorted([(p, 0, i) for i, p in enumerate(a)] + [(p, 1, j) for j, p in enumerate(b)])
    candidates = []
    for left, right in pairwise(merged):
        if left[1] != right[1]:
            distance = right[0] - left[0]
            if max_shift is None or distance <= max_shift:
                candidates.append((distance, left, right))
    candidates.sort()
    used: set[tuple[int, int]] = set()
    pairs = []
    for _, left, right in candidates:
        if (left[1], left[2]) in used or (right[1], right[2]) in used:
            continue
        used.update({(left[1], left[2]), (right[1], right[2])})
        i, j = (left[2], right[2]) if left[1] == 0 else (right[2], left[2])
        pairs.append((i, j))
    return sorted(pairs)


def identical_chunks(nodes_a: Sequence[Node], nodes_b: Sequence[Node]) -> int:
    """How many of B's chunks A has too: the same document, the same span and the same text.

    The text counts as well as the span because a framework engine may rewrite a chunk
    (its span then covers source it does not hold verbatim); such a chunk equals a native
    one only if the words are the same.
    """
    seen = {(node.doc_id, node.start_char, node.end_char, node.text) for node in nodes_a}
    return sum((node.doc_id, node.start_char, node.end_char, node.text) in seen for node in nodes_b)
