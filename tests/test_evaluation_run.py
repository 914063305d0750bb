"""An evaluation run: progress through every phase, BM25 indexed once, settings checked first, scopes,
the hit@1..k curve, per-document scores, the embedding-window warning and the disk cache across CLI runs."""

from __future__ import annotations

import json

import bm25s
import numpy as np
import pytest
from eval_support import WordsEmbedder
from hypothesis import given
from hypothesis import strategies as st

import core
import core.embed.embedder
from core.cli import evaluate as cli_evaluate
from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.evaluation.evaluate import evaluate
from core.evaluation.queries import EvalQuery
from core.query.retrieval import BM25Index, bm25_scores
from core.schema import Document, MetadataMode, Node
from core.splitters import get_splitter

CATS = Document(
    text="Cats sleep all day.\n\nCats purr when happy.\n\nDogs bark at night.", metadata={"file_name": "cats.txt"}
)
DOGS = Document(
    text="Dogs fetch the ball.\n\nCats are not dogs.\n\nDogs sleep all day.", metadata={"file_name": "dogs.txt"}
)
DOCS = [CATS, DOGS]
SPLIT = {"chunk_size": 25, "chunk_overlap": 0, "separator": "\n\n"}
QUERIES = [
    EvalQuery("dogs sleep all day", "cats.txt", ("Cats sleep all day.",)),
    EvalQuery("dogs bark", "dogs.txt", ("Dogs sleep all day.",)),
    EvalQuery("cats purr", "cats.txt", ("Cats purr when happy.",)),
]


@pytest.fixture
def embedder(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "model").mkdir()
    return WordsEmbedder(str(tmp_path / "model"))


# -- progress --------------------------------------------------------------------------


def test_progress_covers_splitting_embedding_and_scoring_in_order(embedder):
    calls: list[tuple[float, str]] = []
    evaluate(DOCS, QUERIES, "character", SPLIT, embedder=embedder, report=lambda f, t: calls.append((f, t)))
    phases = [text.split(":")[0] for _, text in calls]
    assert phases[0] == "Splitting" and phases[-1] == "Scoring"
    assert phases.index("Embedding") < phases.index("Scoring")
    assert "Embedding: 6 of 6 chunks" in [text for _, text in calls]
    fractions = [fraction for fraction, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and fractions[0] == 0.0
    # Most of a dense run's bar belongs to embedding, which starts long before the queries.
    embedding_start = next(f for f, t in calls if t.startswith("Embedding"))
    assert embedding_start < 0.1


def test_the_cli_prints_progress_on_stderr_unless_quiet(sample_docs, capsys):
    corpus = ["evaluate", str(sample_docs / "chunking_guide.md"), "--queries", str(sample_docs / "queries.json")]
    assert cli_evaluate.main([*corpus, "--mode", "bm25", "--splitter", "character"]) == 0
    err = capsys.readouterr().err
    # The queries about release_notes.txt are left out, and the first line says so; then the progress.
    warning = "chunkscope: warning: 4 queries name 'release_notes.txt', which is not loaded: left out of the scores\n"
    assert err.startswith(warning + "chunkscope:   0% Splitting: 0 of 1 documents\n")
    assert "Embedding" not in err  # BM25 embeds nothing
    assert err.endswith("chunkscope: 100% Scoring: 10 of 10 queries\n")
    assert cli_evaluate.main([*corpus, "--mode", "bm25", "--splitter", "character", "--quiet"]) == 0
    assert capsys.readouterr().err == warning  # --quiet silences progress, not warnings


# -- BM25 once -------------------------------------------------------------------------


def test_bm25_indexes_the_corpus_once_for_all_queries(monkeypatch):
    builds = []
    original = bm25s.BM25.index
    monkeypatch.setattr(bm25s.BM25, "index", lambda self, *a, **k: builds.append(1) or original(self, *a, **k))
    evaluate(DOCS, QUERIES * 4, "character", SPLIT, retrieval=RetrievalSettings(mode="bm25"))
    assert len(builds) == 1
    builds.clear()
    evaluate(DOCS, QUERIES * 4, "character", SPLIT, scope="document", retrieval=RetrievalSettings(mode="bm25"))
    assert len(builds) == 2  # one index per document


def _fresh_index_scores(nodes, query):
    """What retrieval computed before the index was kept: a new index for every query."""
    texts = [node.get_content(MetadataMode.EMBED) for node in nodes]
    corpus_tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    query_tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
    query_tokens = [token for token in query_tokens if token in set(corpus_tokens.vocab)]
    if not query_tokens:
        return np.zeros(len(nodes))
    index = bm25s.BM25()
    index.index(corpus_tokens, show_progress=False)
    return np.asarray(index.get_scores(query_tokens), dtype=np.float64)


WORDS = st.sampled_from(["cat", "dog", "sleep", "bark", "ball", "the", "night", "chunk", "size"])


@given(
    texts=st.lists(st.lists(WORDS, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=6),
    queries=st.lists(st.lists(WORDS, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=4),
)
def test_a_kept_bm25_index_scores_exactly_as_a_fresh_one_per_query(texts, queries):
    nodes = [Node(text=text, doc_id="d", start_char=0, end_char=len(text)) for text in texts]
    index = BM25Index(nodes)
    for query in queries:
        expected = _fresh_index_scores(nodes, query)
        assert index.scores(query).tolist() == expected.tolist()
        assert bm25_scores(nodes, query).tolist() == expected.tolist()


# -- settings checked first --------------------------------------------------------------


class ExplodingEmbedder:
    def embed(self, texts, progress=None):
        raise AssertionError("embedded before the settings were checked")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"top_k": 0}, "retrieval: top_k must be at least 1"),
        ({"alpha": 1.5}, "retrieval: alpha must be at most 1"),
        ({"mode": "sparse"}, "retrieval: mode must be one of dense, bm25, hybrid"),
        ({"scope": "page"}, "scope must be one of corpus, document"),
    ],
)
def test_bad_settings_fail_before_anything_is_split_or_embedded(settings, message):
    class ExplodingSplitter:
        name = "boom"

        def split(self, documents):
            raise AssertionError("split before the settings were checked")

    scope = settings.pop("scope", "corpus")
    with pytest.raises(ConfigError, match=message):  # the retrieval settings refuse themselves as they are made
        retrieval = RetrievalSettings.from_params(settings)
        evaluate(DOCS, QUERIES, ExplodingSplitter(), embedder=ExplodingEmbedder(), retrieval=retrieval, scope=scope)


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        (["--alpha", "2"], "chunkscope: retrieval: alpha must be at most 1, got 2.0\n"),
        (["--top-k", "0"], "chunkscope: retrieval: top_k must be at least 1, got 0\n"),
        (["--set", "chunk_size=0"], "chunkscope: character: chunk_size must be at least 1, got 0\n"),
        (["--sweep", "chunk_overlap=a"], "chunkscope: --sweep chunk_overlap: chunk_overlap must be a whole number"),
    ],
)
def test_the_cli_refuses_bad_arguments_before_loading_the_model(sample_docs, capsys, monkeypatch, argument, message):
    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(core.embed.embedder, "get_embedder", no_model)
    corpus = [str(sample_docs / "chunking_guide.md"), "--queries", str(sample_docs / "queries.json")]
    assert cli_evaluate.main(["evaluate", *corpus, "--splitter", "character", *argument]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_a_missing_excerpt_fails_before_the_model_loads(tmp_path, sample_docs, capsys, monkeypatch):
    monkeypatch.setattr(core.embed.embedder, "get_embedder", lambda *a, **k: pytest.fail("the model was loaded"))
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps([{"query": "q", "doc": "chunking_guide.md", "excerpts": ["not in the guide at all"]}]))
    assert cli_evaluate.main(["evaluate", str(sample_docs / "chunking_guide.md"), "--queries", str(bad)]) == 2
    assert "query 1: an excerpt does not occur in chunking_guide.md" in capsys.readouterr().err


# -- scope, per document, the hit curve, the window ---------------------------------------------


def test_document_scope_retrieves_only_from_the_querys_own_document():
    corpus = evaluate(DOCS, QUERIES[:2], "character", SPLIT, retrieval=RetrievalSettings(mode="bm25", top_k=1))
    own = evaluate(DOCS, QUERIES[:2], "character", SPLIT, scope="document", retrieval=RetrievalSettings(mode="bm25", top_k=1))
    # "dogs sleep all day" matches dogs.txt's last chunk best; within cats.txt it finds "Cats sleep all day."
    assert [q.hit for q in corpus.per_query] == [0.0, 0.0]
    assert [q.hit for q in own.per_query] == [1.0, 0.0]
    assert own.to_row()["scope"] == "document"
    doc_of = {node.id: node.doc_id for node in get_splitter("character", **SPLIT).split(DOCS)}
    wide = evaluate(DOCS, QUERIES, "character", SPLIT, scope="document", retrieval=RetrievalSettings(mode="bm25", top_k=6))
    for query, score in zip(QUERIES, wide.per_query, strict=True):
        expected = CATS.id if query.doc == "cats.txt" else DOGS.id
        assert len(score.retrieved) == 3 and {doc_of[node_id] for node_id in score.retrieved} == {expected}


def test_per_document_scores_are_the_means_of_each_documents_queries():
    result = evaluate(DOCS, QUERIES, "character", SPLIT, scope="document", retrieval=RetrievalSettings(mode="bm25", top_k=2))
    rows = {row["doc"]: row for row in result.per_document()}
    assert rows["cats.txt"]["queries"] == 2 and rows["dogs.txt"]["queries"] == 1
    cats = [q for q in result.per_query if q.doc == "cats.txt"]
    assert rows["cats.txt"]["mrr"] == pytest.approx(sum(q.reciprocal_rank for q in cats) / 2)


def test_the_hit_curve_is_the_hit_rate_at_every_k():
    # First relevant ranks: 1, 2 and 3 (the third query's answer is the last of the three chunks).
    tiny = Document(
        text="Cats sleep all day.\n\nThe overlap should be ten percent of the chunk size.\n\nDogs bark at night.",
        metadata={"file_name": "notes.txt"},
    )
    queries = [
        EvalQuery("What overlap percent for chunk size?", "notes.txt", ("ten percent of the chunk size",)),
        EvalQuery("Cats sleep all day, and what overlap?", "notes.txt", ("ten percent of the chunk size",)),
        EvalQuery("cats sleep day", "notes.txt", ("Dogs bark at night.",)),
    ]
    split = {"chunk_size": 60, "chunk_overlap": 0, "separator": "\n\n"}
    result = evaluate([tiny], queries, "character", split, retrieval=RetrievalSettings(top_k=3, mode="bm25"))
    assert result.hit_curve() == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert result.to_row()["hit_curve"] == result.hit_curve()


def test_chunks_longer_than_the_embedding_window_are_counted_and_warned_about(embedder):
    # The fake model reads 16 tokens (14 after [CLS] and [SEP]); a 25-character chunk has fewer, a long one more.
    short = evaluate(DOCS, QUERIES, "character", SPLIT, embedder=embedder)
    assert short.over_window == 0 and short.warnings == []
    long = evaluate(DOCS, QUERIES, "character", {"chunk_size": 200, "chunk_overlap": 0}, embedder=embedder)
    assert long.over_window == 2 and long.window_tokens == 14
    assert long.warnings == [
        "2 of 2 chunks are longer than the embedding model's window (14 tokens): they were embedded truncated"
    ]
    assert evaluate(DOCS, QUERIES, "character", SPLIT, retrieval=RetrievalSettings(mode="bm25")).over_window is None


# -- the CLI: the report, the disk cache, the exports --------------------------------------------


def test_cli_sweep_json_holds_every_query_every_document_and_the_curve(sample_docs, capsys):
    args = ["evaluate", str(sample_docs / "chunking_guide.md"), str(sample_docs / "release_notes.txt")]
    args += ["--queries", str(sample_docs / "queries.json"), "--splitter", "character", "--mode", "bm25"]
    args += ["--sweep-sizes", "300,600", "--sweep-overlaps", "0", "--format", "json", "--quiet", "--top-k", "3"]
    assert cli_evaluate.main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert [row["config"] for row in data["rows"]] == ["300/0", "600/0"]
    queries = data["rows"][0]["queries"]
    assert len(data["per_query"]) == 2 * queries
    assert {entry["config"] for entry in data["per_query"]} == {"300/0", "600/0"}
    assert {(d["config"], d["doc"]) for d in data["per_document"]} == {
        (c, d) for c in ("300/0", "600/0") for d in ("chunking_guide.md", "release_notes.txt")
    }
    for row in data["rows"]:
        assert len(row["hit_curve"]) == 3 and row["hit_curve"][-1] == pytest.approx(row["hit_rate"])
        assert row["hit_curve"] == sorted(row["hit_curve"])


def test_a_second_cli_run_embeds_nothing_new(sample_docs, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "model").mkdir()
    runs: list[WordsEmbedder] = []

    def fresh_process_embedder(*args, **kwargs):
        runs.append(WordsEmbedder(str(tmp_path / "model")))  # a new process: nothing in memory
        return runs[-1]

    monkeypatch.setattr(core.embed.embedder, "get_embedder", fresh_process_embedder)
    args = ["evaluate", str(sample_docs / "chunking_guide.md"), "--queries", str(sample_docs / "queries.json")]
    args += ["--splitter", "character", "--sweep-sizes", "300,600", "--quiet", "--format", "json"]
    assert cli_evaluate.main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert cli_evaluate.main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert len(runs) == 2 and runs[0].encoded
    assert runs[1].encoded == []
    assert first["rows"] == second["rows"]


def test_evaluate_and_sweep_are_exported_from_core():
    assert core.evaluate is evaluate
    from core.evaluation.sweep import sweep

    assert core.sweep is sweep and {"evaluate", "sweep", "load_queries"} <= set(core.__all__)
