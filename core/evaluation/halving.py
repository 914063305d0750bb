"""Successive halving on a growing sample: many candidates measured cheaply, the better share measured again on more.

Every candidate ("arm") is measured on the first few items (queries) of a
sample; the best 1/eta of them, ranked by Pareto layer of (quality, cost) and
then by quality, go on to a sample eta times larger, until at most ``keep`` are
left (or the sample is every item); those are measured on every item. The samples are nested (each the start
of the next), so a measurement can reuse what the smaller one computed. This
is Jamieson and Talwalkar's successive halving with the queries as the budget;
a few lines, so no optimisation library is needed for it.

Ranking alone would cut arms that lose on a small sample by chance (on 4
questions many arms tie or swap places), and sparing every arm that could
still win in the worst case cuts nothing until the sample is nearly all the
questions. So an arm ranked out is cut only when it is **clearly worse** than
the sample's best: their per-question difference is above zero by
:data:`CUT_Z` standard errors (a paired test, no randomness). Everything here is
deterministic: the same arms, questions and order give the same rounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from core.evaluation.pareto import layers

__all__ = ["Halving", "Rung", "clearly_worse", "halve_rows", "interleaved", "schedule", "successive_halving"]
# An arm is cut only when the best arm of the sample beats it by this many standard errors of the paired difference.
CUT_Z = 2.0
# (quality to maximise, cost to minimise) of one arm on the first n items.
Measure = Callable[[int, int], tuple[float, float]]


@dataclass(frozen=True)
class Rung:
    """One round: the sample size, the arms measured on it, the arms that go on."""

    items: int
    arms: tuple[int, ...]
    kept: tuple[int, ...]


@dataclass
class Halving:
    survivors: list[int]  # measured on every item
    rungs: list[Rung] = field(default_factory=list)
    scores: dict[int, tuple[float, float]] = field(default_factory=dict)  # each arm's last measurement


def schedule(arm_count: int, item_count: int, *, eta: int = 2, keep: int = 4, min_items: int = 4) -> list[int]:
    """The sample size of each rung, growing eta-fold to ``item_count`` (the last), none below ``min_items``.

    Enough rungs to halve ``arm_count`` arms down to ``keep``, except that a
    sample which cannot grow is used once: measuring the same items again tells
    nothing new, so with few items fewer arms are cut (more reach the last rung).
    """
    if eta < 2:
        raise ValueError(f"eta must be at least 2, got {eta}")
    if item_count < 1 or arm_count < 1 or keep < 1:
        raise ValueError("successive halving needs at least one arm, one item and one survivor")
    halvings, left = 0, arm_count
    while left > keep:
        left = math.ceil(left / eta)
        halvings += 1
    floor = min(min_items, item_count)
    sizes = [min(item_count, max(floor, math.ceil(item_count / eta ** (halvings - r)))) for r in range(halvings + 1)]
    return list(dict.fromkeys(sizes))


def successive_halving(
    arm_count: int,
    measure: Measure,
    item_count: int,
    *,
    eta: int = 2,
    keep: int = 4,
    min_items: int = 4,
    on_rung: Callable[[int, list[int], int], None] | None = None,
    spare: Callable[[list[int], int], set[int]] | None = None,
) -> Halving:
    """Halve ``arm_count`` arms on growing samples of ``item_count`` items; ``measure(arm, n)`` scores one on the first n.

    ``on_rung(rung, arms, items)`` is called with the rung's arms as it starts.
    ``spare(arms, items)`` names arms to keep whatever their rank (the tuner
    spares every arm that can still be the best on every item). The survivors
    are the arms measured on every item: at most ``keep`` of them, and the spared.
    """
    sizes = schedule(arm_count, item_count, eta=eta, keep=keep, min_items=min_items)
    result = Halving(survivors=[])
    alive = list(range(arm_count))
    for number, size in enumerate(sizes):
        if on_rung is not None:
            on_rung(number, alive, size)
        scores = {arm: measure(arm, size) for arm in alive}
        result.scores.update(scores)
        last = number == len(sizes) - 1
        kept = alive if last else _best(alive, scores, max(keep, math.ceil(len(alive) / eta)))
        if not last and spare is not None:
            kept = sorted(set(kept) | (spare(alive, size) & set(alive)))
        result.rungs.append(Rung(size, tuple(alive), tuple(kept)))
        alive = kept
    result.survivors = alive
    return result


def _best(arms: list[int], scores: dict[int, tuple[float, float]], count: int) -> list[int]:
    """The ``count`` best arms: by Pareto layer of (quality, cost), then higher quality, then lower cost (in arm order)."""
    points = [scores[arm] for arm in arms]
    depth = layers(points)
    order = sorted(range(len(arms)), key=lambda i: (depth[i], -points[i][0], points[i][1], arms[i]))
    return sorted(arms[i] for i in order[:count])


def interleaved(docs: Sequence[str]) -> list[int]:
    """Question positions dealt round-robin over their documents (in order of first mention): halving's sample order.

    Every sample of successive halving then asks about as many documents as it
    can, and the order is the same on every run (no seed: a random sample of a
    few questions can drop the best configuration, issue 28).
    """
    by_doc: dict[str, list[int]] = {}
    for position, doc in enumerate(docs):
        by_doc.setdefault(doc, []).append(position)
    queues = list(by_doc.values())
    order: list[int] = []
    for depth in range(max(len(queue) for queue in queues)):
        order.extend(queue[depth] for queue in queues if depth < len(queue))
    return order


def clearly_worse(per_item: Mapping[int, Sequence[float]], z: float = CUT_Z) -> set[int]:
    """Arms whose quality on each sampled item is below the sample's best arm's by more than ``z`` standard errors.

    ``per_item[arm]`` is the arm's quality on each item of the sample (the same items, in the same order, for
    every arm). The difference to the best arm (highest mean; the first such arm) is paired item by item, so two
    arms that fail on the same hard questions are not told apart by them.
    """
    if not per_item:
        return set()
    best = max(per_item, key=lambda arm: (_mean(per_item[arm]), -arm))
    worse = set()
    for arm, values in per_item.items():
        mean, error = paired_gain(per_item[best], values)
        if mean > 1e-12 and mean > z * error:
            worse.add(arm)
    return worse


def paired_gain(better: Sequence[float], other: Sequence[float]) -> tuple[float, float]:
    """The mean of ``better - other`` item by item, and its standard error (0 for a single item)."""
    gaps = [b - v for b, v in zip(better, other, strict=True)]
    count = len(gaps)
    mean = _mean(gaps)
    spread = math.sqrt(sum((g - mean) ** 2 for g in gaps) / (count - 1)) if count > 1 else 0.0
    return mean, spread / math.sqrt(count) if count else 0.0


def halve_rows(
    arm_count: int,
    item_count: int,
    run: Callable[[list[int], int, int, int], None],
    rows: Mapping[int, dict],
    quality: str,
    cost: str,
    *,
    eta: int = 2,
    keep: int = 8,
    min_items: int = 4,
) -> tuple[dict[int, dict], list[dict]]:
    """The tuner's successive halving: ``run(arms, items, round, rounds)`` measures arms, ``rows`` then holds them.

    Each row holds ``quality``, ``cost`` and ``per_query[quality]`` (the quality per sampled item, in sample
    order); an arm without a row (its configuration was skipped) ranks last. Returns the row of each arm as the
    search last measured it, and a summary of each round.
    """
    rounds = len(schedule(arm_count, item_count, eta=eta, keep=keep, min_items=min_items))
    chosen: dict[int, dict] = {}

    def on_rung(number: int, alive: list[int], items: int) -> None:
        run(alive, items, number, rounds)  # the round's arms together, spread over the engine

    def measure(arm: int, count: int) -> tuple[float, float]:
        if arm not in rows:
            return -math.inf, math.inf
        row = chosen[arm] = rows[arm]
        return row[quality], row[cost]

    def spare(alive: list[int], count: int) -> set[int]:
        sampled = {arm: rows[arm]["per_query"][quality] for arm in alive if arm in rows}
        return set(sampled) - clearly_worse(sampled)

    halving = successive_halving(
        arm_count, measure, item_count, eta=eta, keep=keep, min_items=min_items, on_rung=on_rung, spare=spare
    )
    return chosen, [{"queries": r.items, "measured": len(r.arms), "kept": len(r.kept)} for r in halving.rungs]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
