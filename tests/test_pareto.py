"""Pareto dominance and fronts on literal points, and successive halving on a literal toy objective."""

from __future__ import annotations

import pytest

from core.evaluation.halving import clearly_worse, schedule, successive_halving
from core.evaluation.pareto import MAXIMISE, MINIMISE, dominates, front, layers

QUALITY_COST = (MAXIMISE, MINIMISE)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((0.8, 100), (0.7, 200), True),  # better on both
        ((0.8, 100), (0.8, 200), True),  # as good on quality, cheaper
        ((0.8, 100), (0.7, 100), True),  # better quality, same cost
        ((0.8, 100), (0.8, 100), False),  # equal points dominate neither way
        ((0.9, 300), (0.8, 100), False),  # a trade-off: better but dearer
        ((0.7, 200), (0.8, 100), False),  # worse on both
    ],
)
def test_dominance_maximises_quality_and_minimises_cost(a, b, expected):
    assert dominates(a, b, QUALITY_COST) is expected


def test_the_front_keeps_trade_offs_and_drops_what_is_beaten():
    points = [(0.50, 100), (0.70, 300), (0.60, 300), (0.90, 900), (0.70, 250), (0.40, 120)]
    # (0.70, 300) is beaten by (0.70, 250); (0.60, 300) by it too; (0.40, 120) by (0.50, 100).
    assert front(points) == [0, 3, 4]


def test_equal_points_both_stay_on_the_front():
    assert front([(0.8, 100), (0.8, 100), (0.5, 200)]) == [0, 1]


def test_ties_on_one_objective_keep_only_the_better_on_the_other():
    assert front([(0.8, 100), (0.8, 150), (0.6, 100)]) == [0]


def test_a_single_point_is_its_own_front_and_nothing_is_empty():
    assert front([(0.1, 5)]) == [0]
    assert front([]) == []


def test_directions_can_be_flipped_and_extended():
    # Minimise both: the cheapest-and-worst point now wins.
    assert front([(0.5, 100), (0.9, 300)], (MINIMISE, MINIMISE)) == [0]
    # Three objectives: quality up, tokens down, nodes down.
    assert front([(0.8, 100, 50), (0.8, 100, 40), (0.9, 200, 60)], (MAXIMISE, MINIMISE, MINIMISE)) == [1, 2]


def test_layers_peel_fronts_one_after_another():
    points = [(0.9, 100), (0.8, 200), (0.7, 300), (0.95, 500)]
    assert layers(points) == [0, 1, 2, 0]


def test_a_point_of_the_wrong_length_or_direction_is_refused():
    with pytest.raises(ValueError, match="2 values for 3 objectives"):
        dominates((1, 2), (1, 2), (MAXIMISE, MINIMISE, MINIMISE))
    with pytest.raises(ValueError, match="'up'"):
        front([(1, 2)], ("up", MINIMISE))


# -- successive halving ------------------------------------------------------------------------


def test_the_schedule_grows_the_sample_eta_fold_to_every_item():
    assert schedule(16, 16, eta=2, keep=1, min_items=1) == [1, 2, 4, 8, 16]
    assert schedule(27, 90, eta=3, keep=1, min_items=1) == [4, 10, 30, 90]
    # A sample that cannot grow is used once (the same items again tell nothing new).
    assert schedule(16, 16, eta=2, keep=1, min_items=3) == [3, 4, 8, 16]
    assert schedule(200, 14, eta=2, keep=8, min_items=4) == [4, 7, 14]
    assert schedule(3, 10, keep=4) == [10]  # few arms: every one on every item


def test_halving_keeps_the_best_arm_of_a_noisy_toy_objective():
    # Arm 11 is best; a small sample adds noise that favours other arms, and shrinks as the sample grows.
    def measure(arm: int, items: int) -> tuple[float, float]:
        noise = (arm % 4) * 3.0 / items
        return -((arm - 11) ** 2) + noise, 1.0

    calls = []
    result = successive_halving(
        16, lambda arm, n: calls.append((arm, n)) or measure(arm, n), 16, eta=2, keep=1, min_items=1
    )
    assert result.survivors == [11]
    assert [(rung.items, len(rung.arms)) for rung in result.rungs] == [(1, 16), (2, 8), (4, 4), (8, 2), (16, 1)]
    assert len(calls) == 16 + 8 + 4 + 2 + 1
    # The last survivor was measured on every item.
    assert (11, 16) in calls


def test_halving_prefers_the_cheaper_of_equally_good_arms_and_keeps_trade_offs():
    # Arms 0..7: quality arm // 2, cost arm (so arm 2k+1 is beaten by 2k); keep 4 of 8 in one halving.
    result = successive_halving(8, lambda arm, n: (arm // 2, arm), 8, eta=2, keep=4, min_items=4)
    assert result.survivors == [0, 2, 4, 6]


def test_an_arm_spared_by_the_caller_reaches_the_last_rung_whatever_its_rank():
    # Arm 0 ranks last on every sample; the caller spares it (the tuner spares arms that can still be the best).
    result = successive_halving(8, lambda arm, n: (arm, 0.0), 8, eta=2, keep=2, min_items=2, spare=lambda alive, n: {0})
    assert [rung.arms for rung in result.rungs][0] == tuple(range(8))
    assert 0 in result.survivors and 0 in result.rungs[1].arms
    assert len(result.rungs[1].arms) == 5  # the best half, and the spared one


def test_an_arm_is_clearly_worse_only_when_the_samples_best_beats_it_by_two_standard_errors_question_by_question():
    per_question = {
        0: [1.0, 1.0, 1.0, 1.0],  # the best
        1: [0.0, 0.0, 0.0, 0.0],  # worse by 1 on every question: cut
        2: [1.0, 0.0, 1.0, 1.0],  # worse on one question of four: a mean gap of 0.25 within two errors of 0.25
        3: [0.5, 0.5, 0.5, 0.5],  # worse by 0.5 every time: no spread, cut
    }
    assert clearly_worse(per_question) == {1, 3}
    assert clearly_worse({0: [1.0, 0.0], 1: [1.0, 0.0]}) == set()  # ties are never cut
    assert clearly_worse({}) == set()
