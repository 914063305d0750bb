"""Folds for the tuner's cross-validation (core.evaluation.folds): who is held out, and what choosing on the rest scores there."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ConfigError
from core.evaluation.cross_validation import cross_validate
from core.evaluation.folds import Folds, make_folds


def test_folds_by_document_keep_each_documents_questions_together_and_balance_the_counts():
    docs = ["a.md"] * 5 + ["b.md"] * 3 + ["c.md"] * 2 + ["d.md"]
    folds = make_folds(docs, by="document", count=2)
    assert folds.by == "document" and folds.count == 2 and folds.note == ""
    # The largest document first into the emptiest fold: a | b, then c and d beside b.
    assert folds.assignment == (0,) * 5 + (1,) * 3 + (1,) * 2 + (0,)
    assert folds.to_dict()["questions"] == [6, 5]


def test_fewer_documents_than_folds_make_fewer_folds_and_say_so():
    folds = make_folds(["a.md"] * 3 + ["b.md"] * 2, count=5)
    assert folds.count == 2
    assert folds.note == "2 documents have questions, so 2 folds"


def test_one_document_folds_by_question_instead_and_says_why():
    folds = make_folds(["only.md"] * 4, by="document", count=2)
    assert folds.by == "question" and folds.count == 2
    assert "only only.md has any" in folds.note and "folded by question" in folds.note
    assert sorted(folds.assignment) == [0, 0, 1, 1]


def test_declared_folds_win_and_must_be_on_every_question():
    folds = make_folds(["a.md", "a.md", "b.md"], ["x", "y", "x"], by="document")
    assert (folds.by, folds.assignment, folds.count) == ("declared", (0, 1, 0), 2)
    with pytest.raises(ConfigError, match='questions 2 have no "fold"'):
        make_folds(["a.md", "a.md"], ["x", None])
    with pytest.raises(ConfigError, match="a single fold"):
        make_folds(["a.md", "b.md"], ["x", "x"])


def test_too_few_questions_or_folds_is_an_error_that_says_what_to_do():
    with pytest.raises(ConfigError, match="at least 2 questions .* got 1: label more questions"):
        make_folds(["a.md"])
    with pytest.raises(ConfigError, match="at least 2 folds, got 1"):
        make_folds(["a.md", "b.md"], count=1)
    with pytest.raises(ConfigError, match="folds are made by one of"):
        make_folds(["a.md", "b.md"], by="chapter")


@given(
    st.lists(st.sampled_from("abcdef"), min_size=2, max_size=40),
    st.integers(2, 6),
    st.sampled_from(["document", "question"]),
    st.integers(0, 3),
)
def test_every_question_is_in_one_fold_no_fold_is_empty_and_a_document_is_never_split(docs, count, by, seed):
    folds = make_folds(docs, by=by, count=count, seed=seed)
    assert len(folds.assignment) == len(docs)
    assert 2 <= folds.count <= count
    assert set(folds.assignment) == set(range(folds.count))
    if folds.by == "document":
        for doc in set(docs):
            assert len({f for f, d in zip(folds.assignment, docs, strict=True) if d == doc}) == 1
    assert make_folds(docs, by=by, count=count, seed=seed) == folds  # deterministic


def test_cross_validation_chooses_on_the_training_folds_and_scores_on_the_held_out_one():
    folds = Folds("question", (0, 0, 1, 1), 2)
    scores = {
        0: [1.0, 1.0, 0.0, 0.0],  # perfect on fold 0 only: overfits whichever fold it is chosen on
        1: [0.5, 0.5, 0.5, 0.5],  # steady
        2: [0.5, 0.5, 0.5, 0.5],  # as steady, but dearer
    }
    result = cross_validate(scores, {0: 10.0, 1: 20.0, 2: 30.0}, folds, default=2)
    assert result["arms"][0] == {"fold_mean": 0.5, "spread": pytest.approx(0.7071, abs=1e-4), "by_fold": [1.0, 0.0]}
    assert result["arms"][1]["spread"] == 0.0
    # Fold 0 held out: trained on fold 1, where arms 1 and 2 tie and the default (2) stays; fold 1: arm 0 wins.
    assert [(f["chosen"], f["chosen_heldout"], f["default_heldout"]) for f in result["folds"]] == [
        (2, 0.5, 0.5),
        (0, 0.0, 0.5),
    ]
    assert result["estimate"] == 0.25 and result["default_estimate"] == 0.5
    # Ties on held-out quality go to the default, then to the steadier across folds, then to the lower cost.
    assert result["pick"] == 2
    assert cross_validate(scores, {0: 10.0, 1: 20.0, 2: 30.0}, folds, default=None)["pick"] == 1
    assert cross_validate({0: scores[0], 1: scores[1]}, {0: 10.0, 1: 20.0}, folds, default=None)["pick"] == 1


def test_held_out_rows_give_every_metric_of_each_row_and_of_the_training_choices():
    from core.evaluation.cross_validation import held_out_rows

    folds = make_folds(["a", "a", "b", "b"])  # two folds by document: questions 0, 1 and 2, 3
    rows = [
        {"id": 0, "queries": 4, "cost": 1.0, "per_query": {"mrr": [1.0, 0.5, 0.0, 0.0], "hit_rate": [1, 1, 0, 0]}},
        {"id": 1, "queries": 4, "cost": 2.0, "per_query": {"mrr": [0.0, 0.0, 1.0, 1.0], "hit_rate": [0, 1, 1, 1]}},
    ]
    validation = held_out_rows(rows, [0, 1, 2, 3], folds, "mrr", "cost", None)
    assert rows[0]["fold_means"] == {"mrr": (0.75 + 0.0) / 2, "hit_rate": (1.0 + 0.0) / 2}
    assert rows[1]["fold_means"] == {"mrr": (0.0 + 1.0) / 2, "hit_rate": (0.5 + 1.0) / 2}
    # Trained on fold b, row 1 is chosen and scored on fold a; trained on fold a, row 0 and scored on b.
    assert [fold["chosen"] for fold in validation["folds"]] == [1, 0]
    assert validation["estimates"] == {"mrr": (0.0 + 0.0) / 2, "hit_rate": (0.5 + 0.0) / 2}


def test_a_choice_stays_with_the_yardstick_unless_another_arm_is_clearly_better_question_by_question():
    folds = make_folds(["a", "a", "a", "a", "b", "b", "b", "b"])
    costs = {0: 1.0, 1: 1.0, 2: 1.0}
    # Arm 1 beats the yardstick 0 on one question in four (luck on a few questions); arm 2 on every question.
    lucky = {0: [0.5] * 8, 1: [1.0, 0.5, 0.5, 0.5, 1.0, 0.5, 0.5, 0.5]}
    assert cross_validate(lucky, costs, folds)["pick"] == 1
    stays = cross_validate(lucky, costs, folds, yardsticks=[0])
    assert stays["pick"] == 0 and [fold["chosen"] for fold in stays["folds"]] == [0, 0]
    # Why it stayed: arm 1 gains 0.125 a question (0.5 on 2 of 8), less than 2 standard errors of that gain.
    gaps = [0.5, 0, 0, 0, 0.5, 0, 0, 0]
    error = (sum((g - 0.125) ** 2 for g in gaps) / 7) ** 0.5 / 8**0.5
    assert stays["challenger"] == {"arm": 1, "gain": pytest.approx(0.125), "needed": pytest.approx(2 * error)}
    assert stays["challenger"]["gain"] < stays["challenger"]["needed"]
    clear = {**lucky, 2: [1.0] * 8}
    moved = cross_validate(clear, costs, folds, yardsticks=[0])
    assert moved["pick"] == 2 and [fold["chosen"] for fold in moved["folds"]] == [2, 2]
    assert moved["challenger"] is None  # the pick is the best: nothing to explain


def test_a_choice_reads_no_more_than_the_cap_arm_on_the_questions_it_is_made_on():
    folds = make_folds(["a", "a", "a", "a", "b", "b", "b", "b"])
    costs = {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}
    scores = {
        0: [0.5] * 8,  # the recommended yardstick, but it reads more than the framework's defaults
        1: [0.25] * 8,  # the framework's defaults: the cap
        2: [1.0] * 8,  # the best of all, reading the most
        3: [0.75] * 8,  # clearly better than the cap, reading less
    }
    reading = {0: [600.0] * 8, 1: [500.0] * 8, 2: [900.0] * 8, 3: [400.0] * 8}
    free = cross_validate(scores, costs, folds, yardsticks=[0, 1], reading=reading)  # no cap arm: no cap
    assert free["pick"] == 2 and free["context_cap"] is None
    capped = cross_validate(scores, costs, folds, yardsticks=[0, 1], reading=reading, cap=1)
    assert capped["pick"] == 3 and [fold["chosen"] for fold in capped["folds"]] == [3, 3]
    assert capped["context_cap"] == {"arm": 1, "tokens": 500.0, "over": 2}
    assert [(fold["chosen_tokens"], fold["cap_tokens"]) for fold in capped["folds"]] == [(400.0, 500.0)] * 2


def test_the_cap_holds_on_each_folds_training_questions_not_on_all_of_them():
    folds = make_folds(["a", "a", "b", "b"])
    scores = {0: [0.0, 0.0, 0.0, 0.0], 1: [1.0, 1.0, 1.0, 1.0]}
    # Arm 1 reads less than the cap (0) on fold a's questions, more on fold b's.
    reading = {0: [100.0, 100.0, 100.0, 100.0], 1: [50.0, 50.0, 300.0, 300.0]}
    result = cross_validate(scores, {0: 1.0, 1: 1.0}, folds, reading=reading, cap=0)
    # Held out a: trained on b, where arm 1 reads 300 > 100, so the cap is chosen; held out b: trained on a, arm 1.
    assert [fold["chosen"] for fold in result["folds"]] == [0, 1]
    assert result["pick"] == 0 and result["context_cap"]["over"] == 1  # over all questions arm 1 reads 175


def test_the_summary_says_what_the_cap_left_out():
    from core.evaluation.cross_validation import validation_summary

    rows = [
        {"config": "llamaindex.sentence · hybrid", "fold_mean": 0.5, "fold_spread": 0.0, "mrr": 0.5, "yardstick": True},
        {"config": "sentence 2048", "fold_mean": 0.9, "fold_spread": 0.0, "mrr": 0.9},
    ]
    result = {
        "rows": rows,
        "quality": "mrr",
        "pick": 0,
        "folds": {"count": 2, "by": "document", "questions": [2, 2], "note": ""},
        "cross_validation": {
            "folds": [],
            "estimate": None,
            "default_estimate": None,
            "challenger": None,
            "context_cap": {"arm": 0, "tokens": 4994.4, "over": 1},
        },
    }
    assert (
        "Reading capped at llamaindex.sentence · hybrid's 4,994 context tokens a query (on the questions a choice "
        "is made on); configurations over it, never chosen: 1"
    ) in validation_summary(result, "MRR")
