"""Cross-validation of the tuner: choose on some folds' questions, score on the fold the choice never saw.

For each fold (:mod:`core.evaluation.folds`), :func:`cross_validate` chooses the best configuration on the
other folds (training) and scores it on this one (held out); the mean of those
scores is the honest estimate of what tuning buys, and the only held-out number.
Each configuration also gets the mean of its score over the folds (in sample: its
questions took part in every choice), with its standard deviation across them as
the spread; the pick is the configuration with the best such mean, unless an
untuned yardstick is not clearly worse than it (a choice on a few questions among
dozens is partly luck), and then the result names the challenger and the gain it needed.
A cap on what a choice may read (context tokens) bounds every choice alike.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.evaluation.folds import Folds
from core.evaluation.halving import CUT_Z, clearly_worse, paired_gain

__all__ = ["cross_validate", "held_out_rows", "validation_summary"]


def cross_validate(
    scores: Mapping[int, Sequence[float]],
    costs: Mapping[int, float],
    folds: Folds,
    default: int | None = None,
    yardsticks: Sequence[int] = (),
    reading: Mapping[int, Sequence[float]] | None = None,
    cap: int | None = None,
) -> dict[str, Any]:
    """Held-out estimates from per-question scores (``scores[arm][question]``, every arm on every question).

    Returns ``arms`` (per arm: ``fold_mean``, its score's mean over folds, in sample; ``spread`` their
    standard deviation, ``by_fold``), ``folds`` (per fold: the arm chosen on the
    other folds and its held-out score, and the default's), ``estimate`` (the mean
    held-out score of the training folds' choices), ``default_estimate`` and
    ``pick`` (the best held-out estimate; ties go to the default, the smaller spread, then the lower cost).

    ``yardsticks`` are untuned configurations in order of preference (a framework's defaults, then evaluate's):
    a choice, on the training folds or for the pick, stays with the first unless another is **clearly better**
    question by question (:func:`core.evaluation.halving.clearly_worse`), moving along the list and last to the best arm.
    The best of dozens of arms on a few questions is partly luck; on paraphrased questions that luck lost to
    LlamaIndex's defaults held out (benchmarks/RESULTS.md). The pick is never below the default's held-out score.

    ``reading`` (``reading[arm][question]``: context tokens) and ``cap`` (an arm) bound what may be chosen: on
    the questions a choice is made on, it reads no more than the cap arm does there (reading more text is not a
    win). ``context_cap`` then says the cap's tokens per query and how many arms read more over all questions.
    """
    if not scores:  # a search stopped before anything was measured on every question
        return dict(_NOTHING_MEASURED)
    if cap not in scores:  # no cap: the reading is still reported, per fold
        cap = None
    chooser = _Chooser(scores, costs, default, yardsticks, reading, cap)
    members = [folds.members(fold) for fold in range(folds.count)]
    arms = {arm: _arm_row(values, members) for arm, values in scores.items()}
    everyone = range(len(folds.assignment))
    per_fold = [chooser.fold_row(arms, fold, group, everyone) for fold, group in enumerate(members)]
    allowed = chooser.allowed(everyone)
    held = {arm: arms[arm]["fold_mean"] for arm in allowed}
    best = _best(held, costs, default, {arm: arms[arm]["spread"] for arm in allowed})
    pick = chooser.anchored(best, everyone, allowed)
    if default in held and held[default] > held[pick]:
        pick = default  # the recommended configuration is the floor of a pick (a yardstick kept may be below it)
    return {
        "arms": arms,
        "folds": per_fold,
        "estimate": _mean([f["chosen_heldout"] for f in per_fold]),
        "default_estimate": arms[default]["fold_mean"] if default in arms else None,
        "pick": pick,
        "challenger": _challenger(scores, best, pick),
        "context_cap": chooser.summary(len(scores) - len(allowed)),
    }


_NOTHING_MEASURED: dict[str, Any] = {
    "arms": {},
    "folds": [],
    "estimate": None,
    "default_estimate": None,
    "pick": None,
    "challenger": None,
    "context_cap": None,
}


def _arm_row(values: Sequence[float], members: Sequence[Sequence[int]]) -> dict[str, Any]:
    """An arm's score per fold, their mean (in sample) and their standard deviation."""
    by_fold = [_mean([values[i] for i in group]) for group in members]
    spread = statistics.stdev(by_fold) if len(by_fold) > 1 else 0.0
    return {"fold_mean": _mean(by_fold), "spread": spread, "by_fold": by_fold}


def _challenger(scores: Mapping[int, Sequence[float]], best: int, pick: int) -> dict[str, Any] | None:
    """Why the pick stayed: the best configuration's gain over it, question by question, and what it needed."""
    if best == pick:
        return None
    gain, error = paired_gain(scores[best], scores[pick])
    return {"arm": best, "gain": gain, "needed": CUT_Z * error}


@dataclass(frozen=True)
class _Chooser:
    """How a choice is made on some questions: the best arm within the reading cap, anchored on the yardsticks."""

    scores: Mapping[int, Sequence[float]]
    costs: Mapping[int, float]
    default: int | None
    yardsticks: Sequence[int]
    reading: Mapping[int, Sequence[float]] | None  # context tokens per arm and question (None: not measured)
    cap: int | None  # the arm whose reading bounds a choice

    def allowed(self, questions: Sequence[int]) -> list[int]:
        """The arms reading no more context tokens per question on ``questions`` than the cap arm (all: no cap)."""
        if self.reading is None or self.cap is None:
            return list(self.scores)
        limit = self.tokens(self.cap, questions)
        # A rounding margin only: the cap arm itself, summed in another order, must stay within.
        return [arm for arm in self.scores if self.tokens(arm, questions) <= limit + 1e-9]

    def tokens(self, arm: int, questions: Sequence[int]) -> float:
        assert self.reading is not None
        return _mean([self.reading[arm][i] for i in questions])

    def anchored(self, best: int, questions: Sequence[int], allowed: Sequence[int]) -> int:
        return _anchored(best, self.scores, questions, [arm for arm in self.yardsticks if arm in allowed])

    def fold_row(
        self, arms: Mapping[int, dict[str, Any]], fold: int, group: Sequence[int], everyone: Sequence[int]
    ) -> dict[str, Any]:
        """The arm chosen on the other folds' questions, and what it and the default score on this fold's."""
        held = set(group)
        training = [i for i in everyone if i not in held]
        allowed = self.allowed(training)
        trained = {arm: _mean([self.scores[arm][i] for i in training]) for arm in allowed}
        chosen = self.anchored(_best(trained, self.costs, self.default), training, allowed)
        capped = self.reading is not None and self.cap is not None
        return {
            "fold": fold,
            "questions": len(group),
            "chosen": chosen,
            "chosen_heldout": arms[chosen]["by_fold"][fold],
            "default_heldout": arms[self.default]["by_fold"][fold] if self.default in arms else None,
            # What the choice and the cap read on the held-out questions (the cap holds on the training ones).
            "chosen_tokens": self.tokens(chosen, group) if self.reading is not None else None,
            "cap_tokens": self.tokens(self.cap, group) if capped else None,
        }

    def summary(self, over: int) -> dict[str, Any] | None:
        """The cap's arm, its context tokens per query over all questions, and how many arms read more."""
        if self.reading is None or self.cap is None:
            return None
        return {"arm": self.cap, "tokens": _mean(self.reading[self.cap]), "over": over}


def _anchored(
    best: int, scores: Mapping[int, Sequence[float]], questions: Sequence[int], yardsticks: Sequence[int]
) -> int:
    """The first yardstick, moved on to the next (and last to ``best``) only when that one is clearly better."""
    present = [arm for arm in yardsticks if arm in scores]
    if not present:
        return best
    anchor = present[0]
    for arm in [*present[1:], best]:
        paired = {arm: [scores[arm][i] for i in questions], anchor: [scores[anchor][i] for i in questions]}
        if arm != anchor and anchor in clearly_worse(paired):
            anchor = arm
    return anchor


def _best(
    quality: Mapping[int, float],
    costs: Mapping[int, float],
    default: int | None,
    spreads: Mapping[int, float] | None = None,
) -> int:
    """The best quality; ties go to the default (nothing says to move away from it), the steadier, the cheaper.

    On a few training questions many configurations tie (every one a hit):
    the cheapest of them is a guess, and a poor one held out.
    """
    spread = spreads or {}
    return min(
        quality,
        key=lambda arm: (-round(quality[arm], 12), arm != default, round(spread.get(arm, 0.0), 12), costs[arm], arm),
    )


def held_out_rows(
    rows: list[dict[str, Any]],
    order: list[int],
    folding: Folds,
    quality: str,
    cost: str,
    default: int | None,
    yardsticks: Sequence[int] = (),
    cap: int | None = None,
) -> dict[str, Any]:
    """Held-out quality of every row measured on every question (None for the rest), in place; the fold summary.

    Each such row also gets ``fold_means`` (every metric's mean over folds), and the summary ``estimates``
    (every metric of the training folds' choices, scored on their held-out folds): a pick by MRR says its hit rate,
    and the context tokens it read. ``cap``: the row whose context tokens bound a choice (:func:`cross_validate`).
    """
    members = [folding.members(fold) for fold in range(folding.count)]
    full = _full_rows(rows, order)  # each full row's every metric per question, in question order
    scores = {row_id: values[quality] for row_id, values in full.items()}
    reading = {row_id: values["context_tokens"] for row_id, values in full.items() if "context_tokens" in values}
    # Every metric's mean per fold, of each full row.
    by_fold = {
        row_id: {metric: [_mean([got[i] for i in group]) for group in members] for metric, got in values.items()}
        for row_id, values in full.items()
    }
    validation = cross_validate(
        scores,
        {i: rows[i][cost] for i in scores},
        folding,
        default,
        yardsticks,
        reading if len(reading) == len(scores) else None,
        cap,
    )
    chosen = [fold["chosen"] for fold in validation["folds"]]
    for row in rows:
        _mark_row(row, validation["arms"].get(row["id"]), by_fold.get(row["id"]), chosen)
        row["default"] = row["id"] == default
        row["yardstick"] = row["id"] in yardsticks
    # What choosing on the other folds scored on each held-out fold, in every metric.
    validation["estimates"] = (
        {m: _mean([by_fold[c][m][f] for f, c in enumerate(chosen)]) for m in next(iter(by_fold.values()))}
        if chosen
        else {}
    )
    return validation


def _full_rows(rows: list[dict[str, Any]], order: list[int]) -> dict[int, dict[str, list[float]]]:
    """Each row measured on every question: its metrics per question, moved from sampling order to question order.

    Takes ``per_query`` out of every row (the rows are saved without it).
    """
    total = len(order)
    full: dict[int, dict[str, list[float]]] = {}
    for row in rows:
        per_query = row.pop("per_query")
        if row["queries"] != total:
            continue
        values = {metric: [0.0] * total for metric in per_query}
        for metric, measured in per_query.items():
            for position, value in zip(order, measured, strict=True):
                values[metric][position] = value
        full[row["id"]] = values
    return full


def _mark_row(
    row: dict[str, Any], held: dict[str, Any] | None, folds_of: dict[str, list[float]] | None, chosen: list[int]
) -> None:
    """A row's scores over folds (None where it was not measured on every question) and how often it was chosen."""
    row["fold_mean"] = held["fold_mean"] if held else None
    row["fold_spread"] = held["spread"] if held else None
    row["by_fold"] = held["by_fold"] if held else None
    # Every metric held out (the mean over folds), so a pick by MRR also says its hit rate on unseen questions.
    row["fold_means"] = {m: _mean(v) for m, v in folds_of.items()} if folds_of else None
    row["chosen_in_folds"] = chosen.count(row["id"])


def validation_summary(result: Mapping[str, Any], quality_name: str, quote: Callable[[str], str] = str) -> list[str]:
    """The folds, the pick, what choosing on the other folds scored held out, and the default's held-out score.

    One sentence a line, for the CLI and the Tune page alike; ``quote`` renders text that came from the
    user's configuration or files (the page escapes it as Markdown).
    """
    rows, folds, validation = result["rows"], result["folds"], result["cross_validation"]
    sizes = ", ".join(str(n) for n in folds["questions"])
    lines = [
        f"Folds: {folds['count']} by {folds['by']} ({sizes} questions)"
        + (f"; {quote(folds['note'])}" if folds["note"] else "")
    ]
    if result["pick"] is not None:
        pick = rows[result["pick"]]
        why = (
            "untuned: no configuration was clearly better, question by question"
            if pick.get("yardstick")
            else f"best {quality_name} over the folds, in sample"
        )
        lines.append(
            f"Pick ({why}): {quote(pick['config'])}: mean over folds {pick['fold_mean']:.3f} ± "
            f"{pick['fold_spread']:.3f}, over all questions {pick[result['quality']]:.3f} (both in sample)"
        )
        challenger = validation.get("challenger")
        if challenger is not None:
            other = rows[challenger["arm"]]
            lines.append(
                f"It stayed: the best mean over folds, {quote(other['config'])} ({other['fold_mean']:.3f}), gains "
                f"{challenger['gain']:+.3f} a question on average over all questions, and counts as clearly better "
                f"only above {CUT_Z:g} standard errors of that paired gain ({challenger['needed']:.3f})"
            )
    cap = validation.get("context_cap")
    if cap is not None and cap["over"]:
        lines.append(
            f"Reading capped at {quote(rows[cap['arm']]['config'])}'s {cap['tokens']:,.0f} context tokens a query "
            f"(on the questions a choice is made on); configurations over it, never chosen: {cap['over']}"
        )
    chosen = "; ".join(
        f"fold {fold['fold'] + 1}: {quote(rows[fold['chosen']]['config'])} {fold['chosen_heldout']:.3f}"
        for fold in validation["folds"]
    )
    if validation["estimate"] is not None:
        lines.append(
            f"Chosen on the other folds, scored on each held-out fold: {validation['estimate']:.3f} ({chosen})"
        )
    if validation["default_estimate"] is not None:
        # Untuned: no choice was made on any question, so its score is as good as held out.
        lines.append(f"Recommended configuration (untuned), mean over folds: {validation['default_estimate']:.3f}")
    return lines


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
