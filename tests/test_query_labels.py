"""Building a queries file in the app: each passage is checked against its document the way an evaluation finds it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ConfigError
from core.evaluation.queries import parse_queries
from core.evaluation.query_labels import labelled_query, queries_json

TEXT = "Overlap repeats the end of one chunk\nat the start of the next, so a sentence cut in two is whole once."


def test_a_passage_copied_across_a_line_break_is_accepted():
    query = labelled_query(" Why overlap? ", "guide.md", "end of one chunk at the start", TEXT)
    assert (query.query, query.doc, query.excerpts) == ("Why overlap?", "guide.md", ("end of one chunk at the start",))


@pytest.mark.parametrize(
    ("question", "passage", "reason"),
    [
        ("", "end of one chunk at the start", "write the question first"),
        ("Why?", "chunk", "at least 12 characters"),
        ("Why?", "a passage that is not there", "not in guide.md"),
    ],
)
def test_a_query_that_an_evaluation_could_not_use_is_refused_with_the_reason(question, passage, reason):
    with pytest.raises(ConfigError, match=reason):
        labelled_query(question, "guide.md", passage, TEXT)


@given(st.lists(st.tuples(st.text(min_size=1).filter(str.strip), st.integers(0, 40)), min_size=1, max_size=5))
def test_the_file_reads_back_as_the_queries_written(items):
    queries = [labelled_query(q, "guide.md", TEXT[start : start + 30], TEXT) for q, start in items]
    assert parse_queries(json.loads(queries_json(queries))) == queries
