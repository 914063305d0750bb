"""Evaluation: span metrics on literal spans, a tiny corpus with exact scores, sweeps, queries files, the CLI."""

from __future__ import annotations

import json
import re

import pytest

from core.cli import evaluate as cli_evaluate
from core.config_parts import RetrievalSettings
from core.errors import ConfigError, LoadError
from core.evaluation.evaluate import evaluate, occurrences, rank_scores, span_scores
from core.evaluation.queries import EvalQuery, load_queries
from core.evaluation.sweep import sweep, sweep_values
from core.schema import Document

# -- metrics on literal spans -------------------------------------------------------


def test_every_retrieved_character_counts_in_the_precision_denominator():
    reference = [("d", 10, 20)]
    retrieved = [("d", 0, 15), ("d", 12, 30), ("e", 0, 5)]  # overlapping chunks, one from another document
    scores = span_scores(retrieved, reference)
    assert scores.recall == 1.0
    assert scores.precision == 10 / 38  # 15 + 18 + 5 characters read
    assert scores.iou == 10 / 38


def test_partial_overlap():
    scores = span_scores([("d", 0, 15)], [("d", 10, 20)])
    assert (scores.recall, scores.precision, scores.iou) == (0.5, 5 / 15, 5 / 20)


def test_reference_in_another_document_does_not_count():
    scores = span_scores([("a", 0, 10)], [("b", 0, 10)])
    assert (scores.recall, scores.precision, scores.iou) == (0.0, 0.0, 0.0)


def test_overlapping_reference_spans_count_once():
    scores = span_scores([("d", 0, 10)], [("d", 0, 6), ("d", 4, 10)])
    assert (scores.recall, scores.precision, scores.iou) == (1.0, 1.0, 1.0)


def test_nothing_retrieved_scores_zero():
    assert span_scores([], [("d", 0, 5)]).precision == 0.0


@pytest.mark.parametrize(
    ("relevant", "expected"),
    [([True, False], (1.0, 1.0)), ([False, False, True], (1.0, 1 / 3)), ([False], (0.0, 0.0)), ([], (0.0, 0.0))],
)
def test_hit_and_reciprocal_rank(relevant, expected):
    assert rank_scores(relevant) == expected


def test_occurrences_finds_every_one_including_overlapping():
    assert occurrences("abab ab", "ab") == [(0, 2), (2, 4), (5, 7)]
    assert occurrences("aaa", "aa") == [(0, 2), (1, 3)]
    assert occurrences("abc", "x") == []


# -- a tiny corpus, BM25, exact numbers -----------------------------------------------

TEXT = "Cats sleep all day.\n\nThe overlap should be ten percent of the chunk size.\n\nDogs bark at night."
# character splitter, chunk_size 60, no overlap: [0,19) [21,73) [75,94), i.e. 19, 52 and 19 characters
DOCS = [Document(text=TEXT, metadata={"file_name": "notes.txt"})]
QUERIES = [
    EvalQuery("What overlap percent for chunk size?", "notes.txt", ("ten percent of the chunk size",)),  # rank 1
    EvalQuery("Cats sleep all day, and what overlap?", "notes.txt", ("ten percent of the chunk size",)),  # rank 2
    EvalQuery("cats sleep day", "notes.txt", ("Dogs bark at night.",)),  # missed
    EvalQuery("anything", "other.md", ("not loaded, so skipped",)),
]
SPLIT = {"chunk_size": 60, "chunk_overlap": 0, "separator": "\n\n"}


def test_evaluate_scores_each_query_and_averages():
    result = evaluate(DOCS, QUERIES, "character", SPLIT, retrieval=RetrievalSettings(top_k=2, mode="bm25"))
    assert result.node_count == 3
    assert [(q.hit, q.reciprocal_rank, q.first_relevant_rank) for q in result.per_query] == [
        (1.0, 1.0, 1),
        (1.0, 0.5, 2),
        (0.0, 0.0, None),
    ]
    assert [(q.recall, q.precision, q.iou) for q in result.per_query] == [
        (1.0, 29 / 71, 29 / 71),
        (1.0, 29 / 71, 29 / 71),
        (0.0, 0.0, 0.0),
    ]
    assert result.skipped_queries == ["anything"]
    row = result.to_row()
    assert row["splitter"] == "character" and row["chunk_size"] == 60 and row["queries"] == 3
    assert row["hit_rate"] == pytest.approx(2 / 3)
    assert row["mrr"] == pytest.approx(0.5)
    assert row["recall"] == pytest.approx(2 / 3)
    assert row["precision"] == pytest.approx(2 * 29 / 71 / 3)


def test_an_excerpt_missing_from_its_document_names_the_query():
    bad = [EvalQuery("q", "notes.txt", ("this text is not there",))]
    with pytest.raises(ConfigError, match="query 1: an excerpt does not occur in notes.txt"):
        evaluate(DOCS, bad, "character", SPLIT, retrieval=RetrievalSettings(mode="bm25"))


def test_no_loaded_document_for_any_query_is_an_error():
    with pytest.raises(ConfigError, match="none of the queries' documents is loaded"):
        evaluate(DOCS, QUERIES[3:], "character", SPLIT, retrieval=RetrievalSettings(mode="bm25"))


def test_sweep_skips_invalid_pairs_and_returns_a_row_per_valid_one():
    rows = sweep(
        DOCS, QUERIES[:3], "character", [60, 20], [30, 0], base_params={"separator": "\n\n"}
    , retrieval=RetrievalSettings(top_k=2, mode="bm25"))
    assert [(r["chunk_size"], r["chunk_overlap"]) for r in rows] == [(20, 0), (60, 0), (60, 30)]
    assert all(r["mrr"] == pytest.approx(0.5) for r in rows)


def test_sweep_with_no_valid_pair_is_an_error():
    with pytest.raises(ConfigError, match="no combination in the sweep is valid"):
        sweep(DOCS, QUERIES, "character", [10], [10, 20], retrieval=RetrievalSettings(mode="bm25"))


def test_sweep_values_are_read_like_any_list_parameter_sorted_and_once():
    assert sweep_values("512, 128,256, 128", "sizes") == [128, 256, 512]
    assert sweep_values("[64, 0]", "overlaps") == [0, 64]
    for text, problem in [("", "give at least one"), ("256, big", "'big' is not a whole number"), ("-5", "'-5'")]:
        with pytest.raises(ConfigError, match=f"sizes: {problem}"):
            sweep_values(text, "sizes")


def test_a_parameter_a_splitter_does_not_declare_cannot_be_swept_anywhere(sample_docs, capsys):
    # markdown has a chunk_size (0: no limit) but no chunk_overlap.
    message = "splitter 'markdown' has no parameter 'chunk_overlap' to sweep (sweepable: "
    with pytest.raises(ConfigError, match=re.escape(message)):
        sweep(DOCS, QUERIES, "markdown", [100], [0], retrieval=RetrievalSettings(mode="bm25"))
    corpus = [str(sample_docs / "chunking_guide.md"), "--queries", str(sample_docs / "queries.json")]
    assert cli_evaluate.main(["evaluate", *corpus, "--splitter", "markdown", "--sweep-overlaps", "0", "--quiet"]) == 2
    assert message in capsys.readouterr().err


# -- queries files --------------------------------------------------------------------


def test_the_shipped_queries_load(sample_docs):
    queries = load_queries(sample_docs / "queries.json")
    assert len(queries) >= 10
    assert queries[0].doc == "chunking_guide.md" and queries[0].excerpts


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "bad.json: is not valid JSON"),
        ("[]", "bad.json: must hold a non-empty JSON list"),
        (
            '[{"query": "q", "doc": "a.md", "excerpts": []}]',
            "bad.json: query 1 needs a non-empty list of excerpt strings",
        ),
        ('[{"query": " ", "doc": "a.md", "excerpts": ["x"]}]', "bad.json: query 1 has no query text"),
    ],
)
def test_a_bad_queries_file_names_the_file_and_entry(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(LoadError, match=message):
        load_queries(path)


# -- the CLI ------------------------------------------------------------------------------


def test_cli_evaluate_json_and_table(sample_docs, capsys):
    common = [
        "evaluate",
        str(sample_docs / "chunking_guide.md"),
        str(sample_docs / "release_notes.txt"),
        "--queries",
        str(sample_docs / "queries.json"),
        "--splitter",
        "character",
        "--mode",
        "bm25",
    ]
    assert cli_evaluate.main(common + ["--sweep-sizes", "300,600", "--sweep-overlaps", "0,400", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r["chunk_size"], r["chunk_overlap"]) for r in data["rows"]] == [(300, 0), (600, 0), (600, 400)]
    assert all(0.0 <= r["hit_rate"] <= 1.0 and r["queries"] > 0 for r in data["rows"])

    assert cli_evaluate.main(common + ["--set", "chunk_size=500", "--format", "table"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:4] == ["splitter", "chunk_size", "chunk_overlap", "top_k"]
    assert out.splitlines()[1].split()[:3] == ["character", "500", "200"]
    assert "hit_rate" in out and "iou" in out


def test_cli_evaluate_bad_queries_file_is_one_line(tmp_path, sample_docs, capsys):
    bad = tmp_path / "q.json"
    bad.write_text("not json")
    code = cli_evaluate.main(["evaluate", str(sample_docs / "chunking_guide.md"), "--queries", str(bad), "--mode", "bm25"])
    assert code == 2
    assert capsys.readouterr().err.startswith("chunkscope: q.json: is not valid JSON")
