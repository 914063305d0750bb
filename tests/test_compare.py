"""Boundary diff: literal examples that read like the spec, and properties."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ConfigError
from core.measure.compare import BoundaryChange, boundary_diff, cut_points
from core.schema import Node


def chunks(*spans: tuple[int, int], doc_id: str = "doc") -> list[Node]:
    return [Node(text="x" * (end - start), doc_id=doc_id, start_char=start, end_char=end) for start, end in spans]


def test_cut_points_are_every_start_and_end_per_document():
    nodes = chunks((0, 10), (8, 20)) + chunks((0, 5), doc_id="other")
    assert cut_points(nodes) == {"doc": [0, 8, 10, 20], "other": [0, 5]}


def test_identical_chunkings_leave_every_cut_point_unchanged():
    diff = boundary_diff(chunks((0, 10), (10, 20)), chunks((0, 10), (10, 20)))
    assert diff.counts() == {"unchanged": 3, "moved": 0, "added": 0, "removed": 0}
    assert diff.is_identical


def test_a_cut_that_shifts_is_moved_with_its_distance():
    diff = boundary_diff(chunks((0, 10), (10, 20)), chunks((0, 12), (12, 20)))
    assert diff.moved == [BoundaryChange("moved", "doc", 10, 12)]
    assert diff.moved[0].shift == 2
    assert [c.before for c in diff.unchanged] == [0, 20]


def test_an_extra_cut_in_b_is_added():
    diff = boundary_diff(chunks((0, 20)), chunks((0, 10), (10, 20)))
    assert diff.added == [BoundaryChange("added", "doc", None, 10)]
    assert diff.counts() == {"unchanged": 2, "moved": 0, "added": 1, "removed": 0}


def test_a_cut_only_a_has_is_removed():
    diff = boundary_diff(chunks((0, 7), (7, 14), (14, 21)), chunks((0, 14), (14, 21)))
    assert diff.removed == [BoundaryChange("removed", "doc", 7, None)]


def test_overlap_change_moves_the_next_chunks_start():
    # Overlap 2 -> 4: the second chunk starts two characters earlier.
    diff = boundary_diff(chunks((0, 10), (8, 20)), chunks((0, 10), (6, 20)))
    assert [(c.before, c.after) for c in diff.moved] == [(8, 6)]
    assert diff.moved[0].shift == -2


def test_moved_cuts_pair_in_order_and_the_surplus_is_added():
    # Between the shared 0 and 30, A cuts at 10; B cuts at 11 and 20.
    diff = boundary_diff(chunks((0, 10), (10, 30)), chunks((0, 11), (11, 20), (20, 30)))
    assert [(c.kind, c.before, c.after) for c in diff.changes] == [
        ("unchanged", 0, 0),
        ("moved", 10, 11),
        ("added", None, 20),
        ("unchanged", 30, 30),
    ]


def test_max_shift_turns_a_long_move_into_removed_and_added():
    diff = boundary_diff(chunks((0, 10), (10, 100)), chunks((0, 60), (60, 100)), max_shift=20)
    assert diff.counts() == {"unchanged": 2, "moved": 0, "added": 1, "removed": 1}
    with pytest.raises(ConfigError, match="max_shift"):
        boundary_diff([], [], max_shift=-1)


def test_documents_are_compared_separately():
    a = chunks((0, 10), doc_id="one") + chunks((0, 10), doc_id="two")
    b = chunks((0, 10), doc_id="one") + chunks((0, 4), (4, 10), doc_id="two")
    diff = boundary_diff(a, b)
    assert [(c.doc_id, c.kind, c.after) for c in diff.added] == [("two", "added", 4)]


def test_many_cut_points_still_diff_quickly():
    # Enough cuts to take the greedy path: every cut shifts by one character.
    a = chunks(*[(i, i + 5) for i in range(1, 5000, 5)])
    b = chunks(*[(i + 1, i + 6) for i in range(1, 5000, 5)])
    diff = boundary_diff(a, b)
    assert diff.counts()["moved"] > 900
    assert all(abs(c.shift) <= 5 for c in diff.moved)


@st.composite
def chunkings(draw):
    cuts = sorted(draw(st.sets(st.integers(1, 199), max_size=15)))
    edges = [0, *cuts, 200]
    return chunks(*pairwise(edges))


@given(chunkings(), chunkings())
def test_every_cut_point_is_accounted_for_exactly_once(a, b):
    diff = boundary_diff(a, b)
    before = sorted(c.before for c in diff.changes if c.before is not None)
    after = sorted(c.after for c in diff.changes if c.after is not None)
    assert before == cut_points(a)["doc"]
    assert after == cut_points(b)["doc"]


@given(chunkings(), chunkings())
def test_moves_never_cross_each_other_or_an_unchanged_cut(a, b):
    diff = boundary_diff(a, b)
    anchored = [(c.before, c.after) for c in diff.changes if c.kind in ("moved", "unchanged")]
    anchored.sort()
    afters = [after for _, after in anchored]
    assert afters == sorted(afters)


@given(chunkings())
def test_a_chunking_against_itself_is_identical(a):
    assert boundary_diff(a, a).is_identical
