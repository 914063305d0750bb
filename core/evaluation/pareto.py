"""Pareto fronts: the configurations no other beats on every objective at once.

A point is a tuple of numbers, one per objective; each objective is maximised
(quality) or minimised (cost). Point *a* **dominates** *b* when *a* is at least
as good as *b* on every objective and strictly better on one. The **front** is
the points nothing dominates: equal points do not dominate each other, so both
stay on it, and a single point is its own front. :func:`layers` peels fronts
off one after another (non-dominated sorting), which ranks points that are not
on the first front.
"""

from __future__ import annotations

from collections.abc import Sequence

MAXIMISE, MINIMISE = "max", "min"
__all__ = ["MAXIMISE", "MINIMISE", "dominates", "front", "layers"]


def _oriented(point: Sequence[float], directions: Sequence[str]) -> tuple[float, ...]:
    """The point with every objective turned into one to maximise."""
    if len(point) != len(directions):
        raise ValueError(f"a point has {len(point)} values for {len(directions)} objectives")
    for direction in directions:
        if direction not in (MAXIMISE, MINIMISE):
            raise ValueError(f"an objective is {MAXIMISE!r} or {MINIMISE!r}, not {direction!r}")
    return tuple(value if direction == MAXIMISE else -value for value, direction in zip(point, directions, strict=True))


def dominates(a: Sequence[float], b: Sequence[float], directions: Sequence[str]) -> bool:
    """Whether ``a`` is at least as good as ``b`` on every objective and strictly better on one."""
    left, right = _oriented(a, directions), _oriented(b, directions)
    return all(x >= y for x, y in zip(left, right, strict=True)) and any(
        x > y for x, y in zip(left, right, strict=True)
    )


def front(points: Sequence[Sequence[float]], directions: Sequence[str] = (MAXIMISE, MINIMISE)) -> list[int]:
    """The indices (ascending) of the points no other point dominates; default objectives: (quality, cost)."""
    oriented = [_oriented(point, directions) for point in points]
    kept = []
    for i, candidate in enumerate(oriented):
        beaten = any(
            all(x >= y for x, y in zip(other, candidate, strict=True))
            and any(x > y for x, y in zip(other, candidate, strict=True))
            for j, other in enumerate(oriented)
            if j != i
        )
        if not beaten:
            kept.append(i)
    return kept


def layers(points: Sequence[Sequence[float]], directions: Sequence[str] = (MAXIMISE, MINIMISE)) -> list[int]:
    """Each point's layer: 0 on the front, 1 on the front of what is left without it, and so on."""
    layer = [-1] * len(points)
    left = list(range(len(points)))
    depth = 0
    while left:
        on_front = front([points[i] for i in left], directions)
        for position in on_front:
            layer[left[position]] = depth
        taken = {left[position] for position in on_front}
        left = [i for i in left if i not in taken]
        depth += 1
    return layer
