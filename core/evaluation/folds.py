"""Folds for the tuner's cross-validation: which questions are held out together.

A configuration picked because it scored best on the questions it is then
scored on looks better than it will be on new questions (the more
configurations searched, the larger the gap). So the labelled questions are
cut into **folds**:

- by **document** (the default): every question about one document lands in the
  same fold, so a held-out fold asks about documents the choice never saw,
  which is how a tuned configuration is used on a growing corpus;
- by **question**: a seeded shuffle dealt round-robin;
- **declared**: a ``"fold"`` on every entry of the queries file is used as it is.

What is chosen on them, and what that scores held out, is :mod:`core.evaluation.cross_validation`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import ConfigError

FOLD_KINDS = ("document", "question")
DEFAULT_FOLDS = 5
__all__ = ["DEFAULT_FOLDS", "FOLD_KINDS", "Folds", "make_folds"]


@dataclass(frozen=True)
class Folds:
    """The fold of each question (by position), how they were made, and why if not as asked."""

    by: str  # "document", "question" or "declared"
    assignment: tuple[int, ...]
    count: int
    note: str = ""

    def members(self, fold: int) -> list[int]:
        return [i for i, f in enumerate(self.assignment) if f == fold]

    def weight(self, question: int) -> float:
        """The question's weight in a held-out estimate (the mean over folds of each fold's mean)."""
        fold = self.assignment[question]
        return 1.0 / (self.count * self.assignment.count(fold))

    def to_dict(self) -> dict[str, Any]:
        sizes = [len(self.members(fold)) for fold in range(self.count)]
        return {"by": self.by, "count": self.count, "questions": sizes, "note": self.note}


def make_folds(
    docs: Sequence[str],
    declared: Sequence[str | None] = (),
    *,
    by: str = "document",
    count: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> Folds:
    """Folds for questions about ``docs`` (one file name per question); ``declared`` folds win when present.

    Folds by document need two documents with questions: with one, the questions
    are folded by question instead and ``note`` says so. Fewer than two
    questions, or a count below 2, is a ConfigError.
    """
    if by not in FOLD_KINDS:
        raise ConfigError(f"folds are made by one of {', '.join(FOLD_KINDS)}, got {by!r}")
    if count < 2:
        raise ConfigError(f"cross-validation needs at least 2 folds, got {count}")
    if len(docs) < 2:
        raise ConfigError(
            f"cross-validation needs at least 2 questions whose documents are loaded, got {len(docs)}: "
            "label more questions"
        )
    given = [fold for fold in declared if fold is not None]
    if given:
        return _declared(declared)
    note = ""
    if by == "document":
        names = sorted(set(docs))
        if len(names) >= 2:
            return _by_document(docs, names, count)
        note = (
            f"folds by document need questions about at least 2 documents; only {names[0]} has any, "
            "so the questions are folded by question"
        )
    folds = _by_question(len(docs), count, seed)
    if folds.count < count:
        note = _join(note, f"{len(docs)} questions make only {folds.count} folds")
    return Folds("question", folds.assignment, folds.count, note)


def _declared(declared: Sequence[str | None]) -> Folds:
    missing = [number for number, fold in enumerate(declared, start=1) if fold is None]
    if missing:
        shown = ", ".join(str(n) for n in missing[:5]) + (" …" if len(missing) > 5 else "")
        raise ConfigError(
            f'the queries file declares folds but questions {shown} have no "fold": give every one a fold'
        )
    labels = sorted({str(fold) for fold in declared})
    if len(labels) < 2:
        raise ConfigError(f"the queries file declares a single fold ({labels[0]!r}): cross-validation needs 2 or more")
    index = {label: i for i, label in enumerate(labels)}
    return Folds("declared", tuple(index[str(fold)] for fold in declared), len(labels))


def _by_document(docs: Sequence[str], names: list[str], count: int) -> Folds:
    """Whole documents into folds, the document with most questions first into the emptiest fold (deterministic)."""
    folds = min(count, len(names))
    questions = {name: sum(1 for doc in docs if doc == name) for name in names}
    sizes = [0] * folds
    fold_of: dict[str, int] = {}
    for name in sorted(names, key=lambda n: (-questions[n], n)):
        target = min(range(folds), key=lambda f: (sizes[f], f))
        fold_of[name] = target
        sizes[target] += questions[name]
    note = f"{len(names)} documents have questions, so {folds} folds" if folds < count else ""
    return Folds("document", tuple(fold_of[doc] for doc in docs), folds, note)


def _by_question(total: int, count: int, seed: int) -> Folds:
    order = list(range(total))
    random.Random(seed).shuffle(order)
    folds = min(count, total)
    assignment = [0] * total
    for position, question in enumerate(order):
        assignment[question] = position % folds
    return Folds("question", tuple(assignment), folds)


def _join(first: str, second: str) -> str:
    return f"{first}; {second}" if first else second
