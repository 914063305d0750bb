"""The tuner (core.evaluation.tune, chunkscope tune): scores equal to evaluate's, embeddings reused, a checked front."""

from __future__ import annotations

import json

import pytest
from eval_support import WordsEmbedder

from core.cli import tune as cli_tune
from core.config_parts import RetrievalSettings, default_splitter
from core.errors import ConfigError
from core.evaluation.evaluate import evaluate
from core.evaluation.pareto import dominates
from core.evaluation.queries import load_queries
from core.evaluation.sweep import SweepSpec, plan_sweeps
from core.evaluation.tune import tune
from core.evaluation.tune_space import TuneSpace, retrieval_values
from core.loaders import load
from core.splitters import get_splitter

METRICS = ("hit_rate", "mrr", "recall", "precision", "iou")


@pytest.fixture(scope="module")
def corpus(sample_docs):
    documents = [*load(sample_docs / "release_notes.txt"), *load(sample_docs / "chunking_guide.md")]
    names = {"release_notes.txt", "chunking_guide.md"}
    queries = [q for q in load_queries(sample_docs / "queries.json") if q.doc in names]
    assert len(queries) >= 4
    return documents, queries


def sizes(*values: int, splitter: str = "sentence") -> tuple[SweepSpec, ...]:
    return (SweepSpec(splitter, {"chunk_size": list(values), "chunk_overlap": [0]}),)


def test_every_row_scores_as_evaluate_scores_that_configuration(corpus):
    documents, queries = corpus
    embedder = WordsEmbedder(disk_cache=False)
    space = TuneSpace(sizes(128, 256), modes=("dense", "bm25", "hybrid"), alphas=(0.3,), top_ks=(2, 4))
    result = tune(documents, queries, space, embedder=embedder, search="exhaustive")
    # The space, and the recommended configuration (hierarchical 2048/250, parents, hybrid, k=5) as the yardstick.
    assert len(result.rows) == 2 * 3 * 2 + 1
    default = result.rows[result.default]
    assert default["default"] and default["splitter"] == "hierarchical"
    # The yardstick is the configuration a user meets first: the default splitter at its defaults.
    assert get_splitter(default["splitter"], **default["params"]) == default_splitter()
    assert (default["mode"], default["top_k"], default["returns"]) == ("hybrid", 5, "parents")
    for row in result.rows:
        expected = evaluate(
            documents,
            queries,
            get_splitter(row["splitter"], **row["settings"]["splitter"]["params"]),
            embedder=embedder,
            retrieval=RetrievalSettings(**row["settings"]["retrieval"]),
        )
        assert row["nodes"] == expected.node_count
        assert row["queries"] == len(queries)
        for metric in METRICS:
            assert row[metric] == pytest.approx(expected.to_row()[metric]), (row["config"], metric)


def test_context_tokens_are_the_retrieved_chunks_llm_views_in_model_tokens(corpus):
    from core.schema import MetadataMode
    from core.tokens.tokenizers import get_tokenizer

    documents, queries = corpus
    result = tune(documents, queries, TuneSpace(sizes(200), modes=("bm25",), top_ks=(1,)), include_default=False)
    (row,) = result.rows
    splitter = get_splitter("sentence", chunk_size=200, chunk_overlap=0)
    counter = get_tokenizer("model")
    evaluation = evaluate(documents, queries, splitter, retrieval=RetrievalSettings(mode="bm25", top_k=1))
    nodes = {node.id: node for node in splitter.split(documents)}
    tokens = [counter.count(nodes[score.retrieved[0]].get_content(MetadataMode.LLM)) for score in evaluation.per_query]
    assert row["context_tokens"] == pytest.approx(sum(tokens) / len(tokens))
    # A larger top_k sends more text.
    wider = tune(documents, queries, TuneSpace(sizes(200), modes=("bm25",), top_ks=(1, 3)), include_default=False)
    assert wider.rows[1]["context_tokens"] > wider.rows[0]["context_tokens"] == row["context_tokens"]


def test_a_second_configuration_with_the_same_chunks_embeds_nothing(corpus, tmp_path, monkeypatch):
    documents, queries = corpus
    notes = [doc for doc in documents if doc.metadata["file_name"] == "release_notes.txt"]
    asked = [q for q in queries if q.doc == "release_notes.txt"]
    # Both sizes hold the whole file in one chunk: the same chunk texts.
    first, second = TuneSpace(sizes(3000)), TuneSpace(sizes(6000))
    embedder = WordsEmbedder(disk_cache=False)
    done = tune(notes, asked, first, embedder=embedder)
    assert done.embedded_texts == len(embedder.encoded) > 0
    before = len(embedder.encoded)
    again = tune(notes, asked, second, embedder=embedder)
    assert again.embedded_texts == 0 and len(embedder.encoded) == before
    assert again.rows[0]["mrr"] == done.rows[0]["mrr"]
    # Within one run, both configurations together encode each text once.
    together = WordsEmbedder(disk_cache=False)
    both = tune(notes, asked, TuneSpace(sizes(3000, 6000)), embedder=together)
    assert len(together.encoded) == len(set(together.encoded)) == before == both.embedded_texts
    # And across processes: a new embedder on the same disk cache encodes nothing.
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path))
    tune(notes, asked, first, embedder=WordsEmbedder())
    fresh = WordsEmbedder()
    assert tune(notes, asked, second, embedder=fresh).embedded_texts == 0
    assert fresh.encoded == []


def test_halving_measures_survivors_on_every_query_and_the_front_is_undominated(corpus):
    documents, queries = corpus
    space = TuneSpace(sizes(64, 128, 256, 512), modes=("bm25",), top_ks=(1, 2, 3, 5, 8))
    result = tune(documents, queries, space, search="halving", keep=4, eta=2, min_queries=2, include_default=False)
    assert result.search == "halving"
    measured = [rung["measured"] for rung in result.rungs]
    assert [rung["queries"] for rung in result.rungs] == [2, 4, 7, 14]
    assert measured[0] == 20 and measured == sorted(measured, reverse=True)
    assert result.rungs[-1]["queries"] == len(queries) > result.rungs[0]["queries"]
    full = [row for row in result.rows if row["queries"] == len(queries)]
    assert len(full) == measured[-1] and result.front
    # Every arm cut could no longer be the best: the exhaustive pick reaches the last round and is the pick.
    exhaustive = tune(documents, queries, space, search="exhaustive", include_default=False)
    best = exhaustive.rows[exhaustive.pick]["config"]
    assert best in [row["config"] for row in full] and result.rows[result.pick]["config"] == best
    for row in result.front_rows():
        assert row["on_front"] and row["queries"] == len(queries)
        assert not any(
            dominates((other["mrr"], other["context_tokens"]), (row["mrr"], row["context_tokens"]), ("max", "min"))
            for other in full
        )
    costs = [row["context_tokens"] for row in result.front_rows()]
    assert costs == sorted(costs)


def test_bad_settings_fail_before_anything_is_split(corpus):
    documents, queries = corpus
    with pytest.raises(ConfigError, match="quality must be one of"):
        tune(documents, queries, TuneSpace(sizes(128)), quality="speed")
    with pytest.raises(ConfigError, match="cost must be one of"):
        tune(documents, queries, TuneSpace(sizes(128)), cost="money")
    with pytest.raises(ConfigError, match="top_k"):
        retrieval_values("top_k", "3, 0")
    with pytest.raises(ConfigError, match="alpha"):
        retrieval_values("alpha", "1.5")
    with pytest.raises(ConfigError, match="mode"):
        retrieval_values("mode", "dense, sparse")
    assert retrieval_values("top_k", "5, 3,5") == [3, 5]


def test_cli_tune_prints_the_front_as_json(sample_docs, capsys):
    code = cli_tune.main(
        [
            "tune",
            str(sample_docs / "release_notes.txt"),
            str(sample_docs / "chunking_guide.md"),
            "--queries",
            str(sample_docs / "queries.json"),
            "--splitter",
            "sentence",
            "--sweep",
            "chunk_size=128,256",
            "--modes",
            "bm25",
            "--top-ks",
            "1,3",
            "--metric",
            "hit_rate",
            "--format",
            "json",
            "--quiet",
            "--without-default",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["quality"] == "hit_rate" and report["cost"] == "context_tokens"
    assert report["search"] == "exhaustive" and len(report["rows"]) == 4
    assert report["front"] and all(row["on_front"] for row in report["front"])
    best = max(row["hit_rate"] for row in report["rows"])
    assert max(row["hit_rate"] for row in report["front"]) == best
    first = report["front"][0]["settings"]
    assert first["splitter"]["name"] == "sentence" and first["retrieval"]["mode"] == "bm25"


def test_cli_tune_refuses_a_bad_list_before_loading(sample_docs, capsys):
    code = cli_tune.main(
        ["tune", str(sample_docs / "missing.txt"), "--queries", "nowhere.json", "--top-ks", "3,zero", "--quiet"]
    )
    assert code == 2
    assert "top_k" in capsys.readouterr().err


def test_the_default_space_sweeps_sizes_and_overlaps_of_each_splitter():
    args = cli_tune_args("--splitter", "sentence,markdown", "--modes", "dense,hybrid", "--alphas", "0.2,0.8")
    space = cli_tune.build_space(args)
    assert [spec.splitter for spec in space.specs] == ["sentence", "markdown"]
    assert space.specs[0].grid == {"chunk_size": [128, 256, 512, 1024], "chunk_overlap": [0, 64]}
    # dense once, hybrid at each alpha and fusion; one top_k; neither splitter has levels, so chunks are returned.
    assert len(space.arms()) == len(space.setups()) * (1 + 2 * 2)
    assert {arm.returns for arm in space.arms()} == {"chunks"}
    assert plan_sweeps(["sentence"], {}, {"chunk_size": "1,2"})[0].grid == {"chunk_size": [1, 2]}


def cli_tune_args(*argv: str):
    import argparse

    parser = argparse.ArgumentParser()
    cli_tune.register(parser.add_subparsers())
    return parser.parse_args(["tune", "x", "--queries", "q.json", *argv])


@pytest.mark.slow
def test_on_the_samples_the_cross_validated_pick_is_never_below_the_default_held_out(corpus):
    """The issue's yardstick, with the packaged model (its vectors come from the disk cache after the first run)."""
    documents, queries = corpus
    space = TuneSpace(sizes(128, 512), modes=("dense", "hybrid"), alphas=(0.5,), top_ks=(5,))
    for quality in ("mrr", "hit_rate"):
        result = tune(documents, queries, space, quality=quality)
        assert result.folds["by"] == "document" and result.folds["count"] == 2  # two documents have questions
        default, pick = result.rows[result.default], result.rows[result.pick]
        assert default["default"] and default["fold_mean"] is not None
        assert pick["fold_mean"] >= default["fold_mean"], (quality, pick["config"], default["config"])
        assert pick["on_front"]
        # The held-out estimate is each fold's mean, beside the in-sample mean over all questions.
        assert pick["fold_mean"] == pytest.approx(sum(pick["by_fold"]) / 2)
        validation = result.cross_validation
        assert validation["default_estimate"] == default["fold_mean"]
        assert len(validation["folds"]) == 2


def test_the_front_and_the_pick_are_by_held_out_quality_and_declared_folds_are_honoured(corpus):
    import dataclasses

    documents, queries = corpus
    declared = [dataclasses.replace(q, fold=str(i % 3)) for i, q in enumerate(queries)]
    space = TuneSpace(sizes(64, 128, 256), modes=("bm25",), top_ks=(1, 3))
    result = tune(documents, declared, space, embedder=WordsEmbedder(disk_cache=False))
    assert result.folds == {"by": "declared", "count": 3, "questions": [5, 5, 4], "note": ""}
    full = [row for row in result.rows if row["fold_mean"] is not None]
    assert len(full) == len(result.rows) == 7
    for row in result.front_rows():
        assert not any(
            dominates((o["fold_mean"], o["context_tokens"]), (row["fold_mean"], row["context_tokens"]), ("max", "min"))
            for o in full
        )
    # The pick is the best held out, or the untuned yardstick when the best is not clearly better than it.
    best = max(row["fold_mean"] for row in full)
    assert result.rows[result.pick]["fold_mean"] == best or result.pick == result.default
    assert sum(row["chosen_in_folds"] for row in full) == 3


def test_cli_tune_table_shows_held_out_beside_in_sample_and_says_how_it_folded(sample_docs, capsys):
    code = cli_tune.main(
        [
            "tune",
            str(sample_docs / "release_notes.txt"),
            "--queries",
            str(sample_docs / "queries.json"),
            "--splitter",
            "sentence",
            "--sweep",
            "chunk_size=128,256",
            "--modes",
            "bm25",
            "--quiet",
            "--without-default",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    # Every per-row score is labelled in sample; only the nested estimate is called held out.
    header = out.splitlines()[1]
    for label in ("mrr fold mean (in sample)", "spread", "hit_rate (in sample)", "mrr (in sample)", "recall (in sample)"):
        assert label in header
    assert "held" not in header
    # One document with questions: folded by question instead, and the output says why.
    assert "Folds: 4 by question (1, 1, 1, 1 questions); folds by document need questions about at least 2" in out
    assert "Pick (best MRR over the folds, in sample):" in out and "Chosen on the other folds, scored on each held-out fold:" in out


@pytest.mark.slow
def test_the_semantic_splitters_sentence_embeddings_count_in_its_tokens_and_seconds(sample_docs):
    import numpy as np

    from core.embed.embedder import get_embedder
    from core.measure.metrics import SPECIAL_TOKENS
    from core.schema import MetadataMode
    from core.splitters.semantic import embedder_override
    from core.tokens.tokenizers import get_tokenizer

    documents = load(sample_docs / "release_notes.txt")
    queries = [q for q in load_queries(sample_docs / "queries.json") if q.doc == "release_notes.txt"]
    space = TuneSpace((SweepSpec("semantic", {"buffer_size": [1]}),), modes=("bm25",), top_ks=(3,))
    (row,) = tune(documents, queries, space, include_default=False).rows
    # What the splitter embeds, recorded independently, and the chunks' EMBED views.
    seen: list[str] = []
    with embedder_override(lambda texts: seen.extend(texts) or get_embedder().embed(texts)):
        nodes = get_splitter("semantic", buffer_size=1).split(documents)
    counter, window = get_tokenizer("model"), get_embedder().max_seq_length - SPECIAL_TOKENS
    views = [node.get_content(MetadataMode.EMBED) for node in nodes]
    tokens = sum(min(n, window) + SPECIAL_TOKENS for n in np.array(counter.count_many(views + seen)))
    assert row["split_embeddings"] == len(seen) > len(nodes)
    assert row["embed_tokens"] == tokens
    assert row["embed_seconds"] > 0  # BM25 embeds no chunk: this is the splitting's time


@pytest.mark.slow
def test_halving_keeps_the_exhaustive_pick_on_the_samples_and_its_schedule_does_not_depend_on_the_seed(
    corpus, monkeypatch
):
    from core.evaluation import tune_measure as tune_bench

    documents, queries = corpus
    space = TuneSpace(sizes(64, 128, 256, 512), modes=("dense", "bm25", "hybrid"), alphas=(0.3, 0.7), top_ks=(3, 5))
    retrievals, real = [], tune_bench.ScopedRetriever.retrieve

    def counted(self, *args, **kwargs):
        retrievals.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(tune_bench.ScopedRetriever, "retrieve", counted)
    full = tune(documents, queries, space, search="exhaustive")
    exhaustive_work = len(retrievals)
    halved = tune(documents, queries, space, search="halving", keep=4, min_queries=4)
    assert len(halved.rungs) > 1 and halved.rungs[0]["measured"] == len(full.rows)
    # Even on 14 questions it cuts what is clearly worse on the sample, and so ranks fewer queries.
    assert halved.rungs[-1]["measured"] < halved.rungs[0]["measured"]
    assert len(retrievals) - exhaustive_work < exhaustive_work
    assert halved.rows[halved.pick]["config"] == full.rows[full.pick]["config"]
    assert halved.rows[halved.pick]["fold_mean"] == full.rows[full.pick]["fold_mean"]
    again = tune(documents, queries, space, search="halving", keep=4, min_queries=4, seed=7, folds_by="document")
    assert again.rungs == halved.rungs and [r["config"] for r in again.rows] == [r["config"] for r in halved.rows]


def test_the_sample_order_of_halving_deals_questions_round_robin_over_documents():
    from core.evaluation.halving import interleaved

    assert interleaved(["a", "a", "a", "b", "c", "c"]) == [0, 3, 4, 1, 5, 2]


def test_a_spent_budget_or_ctrl_c_returns_what_was_measured_the_default_first(corpus, monkeypatch):
    from core.evaluation import tune as tune_module

    documents, queries = corpus
    space = TuneSpace(sizes(128, 256, 512), modes=("bm25", "dense"), top_ks=(5,))
    embedder = WordsEmbedder(disk_cache=False)
    spent = tune(documents, queries, space, embedder=embedder, budget=0)
    assert spent.stopped == "budget" and spent.rows == [] and spent.pick is None and spent.space_size == 7
    real, calls = tune_module.measure_setup, []

    def interrupted_on_the_second(task, inputs):
        calls.append(task.label)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(task, inputs)

    monkeypatch.setattr(tune_module, "measure_setup", interrupted_on_the_second)
    result = tune(documents, queries, space, embedder=embedder)
    assert result.stopped == "interrupted" and calls[0] == "hierarchical (recommended)"
    (row,) = result.rows  # the recommended configuration: only its default retrieval is tried on it
    assert row["default"] and result.default == result.pick == 0 and row["on_front"]


def test_the_cli_prints_and_saves_the_front_so_far_on_ctrl_c(sample_docs, tmp_path, capsys, monkeypatch):
    from core.evaluation import tune as tune_module

    real, seen = tune_module.measure_setup, []

    def interrupted_on_the_second(task, inputs):
        seen.append(task.label)
        if len(seen) == 2:
            raise KeyboardInterrupt
        return real(task, inputs)

    monkeypatch.setattr(tune_module, "measure_setup", interrupted_on_the_second)
    monkeypatch.chdir(tmp_path)
    argv = ["tune", str(sample_docs / "release_notes.txt"), "--queries", str(sample_docs / "queries.json")]
    code = cli_tune.main([*argv, "--splitter", "sentence", "--sweep", "chunk_size=128,256", "--modes", "bm25", "--quiet", "--without-default"])
    assert code == 130
    captured = capsys.readouterr()
    assert "stopped (interrupted): 1 of 2 configurations measured" in captured.err
    saved = json.loads((tmp_path / "chunkscope-tune-partial.json").read_text())
    assert saved["stopped"] == "interrupted" and len(saved["rows"]) == 1
    assert saved["rows"][0]["config"] in captured.out  # the front so far, printed


def test_progress_inside_a_configuration_counts_the_chunks_embedded_and_chunks_past_the_window_are_flagged(corpus):
    documents, queries = corpus
    said: list[str] = []
    space = TuneSpace(sizes(512), modes=("dense",), top_ks=(5,))
    result = tune(
        documents,
        queries,
        space,
        embedder=WordsEmbedder(disk_cache=False),
        include_default=False,
        report=lambda fraction, text: said.append(text),
    )
    (row,) = result.rows
    embedding = [text for text in said if text.startswith("512/0: embedding chunks ")]
    assert embedding and embedding[-1] == f"512/0: embedding chunks {row['nodes']:,} of {row['nodes']:,}"
    # The fake model reads 16 tokens: most 512-token chunks are cut, and the row says which share.
    assert row["over_window"] > 0 and row["truncated_share"] == row["over_window"] / row["nodes"]
    (shown,) = cli_tune.table_rows(result.rows, "mrr")
    assert shown["truncated"] == f"{row['truncated_share']:.0%}"


def test_the_default_space_holds_the_levers_and_the_frameworks_untuned_splitters():
    from core.evaluation.tune_space import recommended_splitter

    space = cli_tune.build_space(cli_tune_args())
    assert [spec.splitter for spec in space.specs] == [
        "sentence",
        "hierarchical",
        "llamaindex.sentence",
        "langchain.recursive",
    ]
    assert space.specs[2].grid == space.specs[3].grid == {} and space.modes == ("dense", "bm25", "hybrid")
    assert space.fusions == ("relative_score", "reciprocal_rank") and space.returns == ("parents", "merged")
    assert space.budgets == (5500,)
    *_, (llama_label, llama, _), (langchain_label, langchain, _) = space.setups()
    assert llama_label == "llamaindex.sentence" and llama.to_params(only_changed=True) == {}
    assert langchain_label == "langchain.recursive" and langchain.to_params(only_changed=True) == {}
    assert (langchain.chunk_size, langchain.chunk_overlap) == (4000, 200)  # RecursiveCharacterTextSplitter()'s
    # Retrieve small, read large: the recommended hierarchy is a point of the space, searched with both rules.
    setups = space.setups()
    (position,) = [i for i, (_, other, _) in enumerate(setups) if other == recommended_splitter()]
    assert {arm.returns for arm in space.arms(setups) if arm.setup == position} == {"parents", "merged"}
    # Naming splitters or values is a space of one's own: no extra configuration.
    assert len(cli_tune.build_space(cli_tune_args("--splitter", "sentence")).specs) == 1
    # What the embedding model reads is searched when asked (README): as loaded by default.
    assert space.views == ("loaded",)
    assert cli_tune.build_space(cli_tune_args("--views", "loaded,title+section")).views == ("loaded", "title+section")


def test_a_configuration_whose_metadata_leaves_no_room_is_skipped_with_its_reason_and_the_rest_measured(
    corpus, capsys, tmp_path
):
    from core.schema import Document

    documents, queries = corpus
    # A long metadata value: 32 tokens cannot hold it and any text, 512 can.
    noted = [Document(text=doc.text, metadata={**doc.metadata, "summary": "word " * 60}) for doc in documents]
    space = TuneSpace(sizes(32, 512), modes=("bm25",), top_ks=(5,))
    result = tune(noted, queries, space, include_default=False)
    (skipped,) = result.skipped
    assert skipped["config"] == "32/0" and "leaves no room in chunk_size 32" in skipped["reason"]
    assert [row["config"] for row in result.rows] == ["512/0 · bm25 · k=5"] and result.stopped is None
    assert result.to_dict()["skipped"] == [skipped]


def test_cli_tune_warns_of_a_skipped_configuration_and_checks_the_budget_by_its_declaration(sample_docs, capsys):
    argv = ["tune", str(sample_docs / "release_notes.txt"), "--queries", str(sample_docs / "queries.json"), "--quiet"]
    space = ["--splitter", "sentence", "--sweep", "chunk_size=8,256", "--sweep", "chunk_overlap=0", "--modes", "bm25", "--without-default"]
    assert cli_tune.main([*argv, *space, "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "warning: skipped 8/0: sentence: the metadata of release_notes.txt" in captured.err
    data = json.loads(captured.out)
    assert [row["config"] for row in data["rows"]] == ["256/0 · bm25 · k=5"]
    assert data["skipped"][0]["config"] == "8/0" and "leaves no room in chunk_size 8" in data["skipped"][0]["reason"]
    assert cli_tune.main([*argv, "--budget", "-1"]) == 2
    assert "budget_minutes must be at least 0" in capsys.readouterr().err


@pytest.mark.slow
def test_a_stopped_default_search_still_holds_both_yardsticks_the_recommended_and_llamaindexs(corpus, monkeypatch):
    from core.evaluation import tune as tune_module

    documents, queries = corpus
    real, calls = tune_module.measure_setup, []

    def interrupted_on_the_third(task, inputs):
        calls.append(task.label)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(task, inputs)

    monkeypatch.setattr(tune_module, "measure_setup", interrupted_on_the_third)
    space = cli_tune.build_space(cli_tune_args("--modes", "bm25"))
    result = tune(documents, queries, space, embedder=WordsEmbedder(disk_cache=False))
    assert calls[:2] == ["hierarchical · chunk_sizes=(2048, 250)", "llamaindex.sentence"]
    assert result.stopped == "interrupted"
    assert {row["splitter"] for row in result.rows} == {"hierarchical", "llamaindex.sentence"}


def test_the_untuned_yardsticks_in_order_are_the_recommended_configuration_then_the_frameworks_defaults():
    from core.evaluation import tune as tune_module

    space = cli_tune.build_space(cli_tune_args())
    setups, arms = space.setups(), space.arms()
    default = tune_module._add_default(setups, arms)
    _, untuned = tune_module._yardsticks(setups, arms, default)
    shown = [(setups[arms[i].setup][0], arms[i].retrieval_label()) for i in untuned]
    recommended = "hierarchical · chunk_sizes=(2048, 250)"
    assert shown == [
        (recommended, "hybrid α=0.5 · k=5 · parents ≤ 5,500 tokens"),
        (recommended, "dense · k=5 · parents ≤ 5,500 tokens"),
        (recommended, "bm25 · k=5 · parents ≤ 5,500 tokens"),
        # Then LlamaIndex's SentenceSplitter() and LangChain's RecursiveCharacterTextSplitter() at their
        # defaults, hybrid first (the strongest untuned retrieval).
        ("llamaindex.sentence", "hybrid α=0.5 · k=5"),
        ("langchain.recursive", "hybrid α=0.5 · k=5"),
        ("llamaindex.sentence", "dense · k=5"),
        ("langchain.recursive", "dense · k=5"),
        ("llamaindex.sentence", "bm25 · k=5"),
        ("langchain.recursive", "bm25 · k=5"),
    ]


def test_the_semantic_splitters_sentence_embedding_time_counts_beside_the_chunks_in_dense_mode(sample_docs, monkeypatch):
    import time

    from core.evaluation import tune_measure

    class Slow(tune_measure.SplitEmbeddings):
        """The splitter's own embedding, made to take half a second more than it does."""

        def __call__(self, texts):
            time.sleep(0.5)
            self.seconds += 0.5
            return super().__call__(texts)

    monkeypatch.setattr(tune_measure, "SplitEmbeddings", Slow)
    documents = load(sample_docs / "release_notes.txt")
    queries = [q for q in load_queries(sample_docs / "queries.json") if q.doc == "release_notes.txt"]
    space = TuneSpace((SweepSpec("semantic", {"buffer_size": [1]}),), modes=("dense",), top_ks=(3,))
    embedder = WordsEmbedder(disk_cache=False)  # the chunks embed in milliseconds
    (row,) = tune(documents, queries, space, embedder=embedder, include_default=False).rows
    assert row["split_embeddings"] > 0
    assert row["embed_seconds"] >= 0.5  # it was the chunks' time alone, the sentences' overwritten


def test_a_budget_stops_inside_a_configuration_and_keeps_what_was_finished(corpus, monkeypatch):
    import time

    from core.evaluation import tune_measure

    real = tune_measure._Bench.measure

    def slow(self, prepared, settings, count):
        time.sleep(0.4)  # scoring a configuration takes longer than the whole budget
        return real(self, prepared, settings, count)

    monkeypatch.setattr(tune_measure._Bench, "measure", slow)
    documents, queries = corpus
    space = TuneSpace(sizes(128, 256, 512), modes=("bm25",), top_ks=(1, 2, 3, 4, 5))
    start = time.monotonic()
    result = tune(documents, queries, space, include_default=False, budget=0.3)
    assert result.stopped == "budget"
    # Its first configuration alone (5 arms of 0.4 s) would take 2 s: it stopped inside it.
    assert time.monotonic() - start < 1.5
    assert len(result.rows) < 15


def test_parents_merges_and_fusions_are_searched_and_score_as_evaluate_scores_them(corpus):
    documents, queries = corpus
    embedder = WordsEmbedder(disk_cache=False)
    specs = (
        SweepSpec("sentence", {"chunk_size": [128]}, {"chunk_overlap": 0}),
        SweepSpec("hierarchical", base={"chunk_sizes": (512, 64), "chunk_overlap": 0}),
    )
    space = TuneSpace(
        specs,
        modes=("hybrid",),
        alphas=(0.5,),
        top_ks=(2, 4),
        fusions=("relative_score", "reciprocal_rank"),
        returns=("chunks", "parents", "merged"),
    )
    result = tune(documents, queries, space, embedder=embedder, search="exhaustive", include_default=False)
    by_splitter: dict[str, set] = {}
    for row in result.rows:
        by_splitter.setdefault(row["splitter"], set()).add(row["returns"])
    # What a hierarchy returns is a lever of hierarchical splits only.
    assert by_splitter == {"sentence": {"chunks"}, "hierarchical": {"chunks", "parents", "merged"}}
    assert len(result.rows) == 2 * 2 + 3 * 2 * 2
    for row in result.rows:
        retrieval = RetrievalSettings(**row["settings"]["retrieval"])
        expected = evaluate(
            documents,
            queries,
            get_splitter(row["splitter"], **row["settings"]["splitter"]["params"]),
            embedder=embedder,
            retrieval=retrieval,
        )
        assert row["nodes"] == expected.node_count  # what the index holds: a hierarchy's leaves when they are searched
        for metric in METRICS:
            assert row[metric] == pytest.approx(expected.to_row()[metric]), (row["config"], metric)
    parents = [row for row in result.rows if row["returns"] == "parents"]
    assert all("· parents" in row["config"] for row in parents)
    assert any(" rrf" in row["config"] for row in result.rows)


def test_each_embed_view_is_a_configuration_that_scores_as_evaluate_scores_it_with_those_metadata_settings(corpus):
    from core.config import PipelineConfig
    from core.config_parts import MetadataSettings
    from core.documents import prepare_documents

    documents, queries = corpus
    embedder = WordsEmbedder(disk_cache=False)
    space = TuneSpace(sizes(200), modes=("dense", "bm25"), views=("loaded", "text", "title+section"))
    result = tune(documents, queries, space, embedder=embedder, search="exhaustive", include_default=False)
    labels = [row["config"] for row in result.rows if row["mode"] == "dense"]
    assert ["EMBED" in labels[0], "· EMBED text ·" in labels[1], "· EMBED title+section ·" in labels[2]] == [
        False,
        True,
        True,
    ]
    for row in result.rows:
        metadata = MetadataSettings.from_params(row["settings"]["metadata"])
        prepared = prepare_documents(documents, PipelineConfig(metadata=metadata))
        expected = evaluate(
            prepared,
            queries,
            get_splitter(row["splitter"], **row["settings"]["splitter"]["params"]),
            embedder=embedder,
            retrieval=RetrievalSettings(**row["settings"]["retrieval"]),
            metadata=metadata,
        )
        for metric in METRICS:
            assert row[metric] == pytest.approx(expected.to_row()[metric]), (row["config"], metric)
    # Loading a row gives its view: the metadata settings it names (nothing, for the view as loaded).
    assert [row["settings"]["metadata"] for row in result.rows if row["mode"] == "dense"] == [
        {},
        {"embed_metadata_keys": []},
        {"embed_metadata_keys": ["title", "section"], "section_metadata": "embed"},
    ]


def test_cli_tune_refuses_an_unknown_view_before_loading(sample_docs, capsys):
    code = cli_tune.main(["tune", str(sample_docs / "missing.txt"), "--queries", "nowhere.json", "--views", "loaded,bogus"])
    assert code == 2
    assert "'bogus' is not a view" in capsys.readouterr().err


def test_a_pick_reads_no_more_context_than_llamaindexs_defaults_unless_the_cap_is_lifted(corpus):
    documents, queries = corpus
    embedder = WordsEmbedder(disk_cache=False)
    specs = (
        SweepSpec("sentence", {"chunk_size": [128, 2048]}, {"chunk_overlap": 0}),
        SweepSpec("llamaindex.sentence"),
    )
    space = TuneSpace(specs, modes=("hybrid",), alphas=(0.5,), top_ks=(5,))
    capped = tune(
        documents, queries, space, embedder=embedder, search="exhaustive", include_default=False, context_cap="framework"
    )
    cap = capped.cross_validation["context_cap"]
    framework = capped.rows[cap["arm"]]
    assert framework["splitter"] == "llamaindex.sentence" and framework["mode"] == "hybrid"
    assert cap["tokens"] == pytest.approx(framework["context_tokens"])
    assert capped.rows[capped.pick]["context_tokens"] <= framework["context_tokens"] + 1e-9
    for fold in capped.cross_validation["folds"]:
        assert fold["chosen_tokens"] is not None and fold["cap_tokens"] is not None
    # 2048-token chunks read more than LlamaIndex's 1024: never chosen under the cap.
    big = [row["id"] for row in capped.rows if row["splitter"] == "sentence" and "2048" in row["config"]]
    assert big and capped.pick not in big and not set(big) & {f["chosen"] for f in capped.cross_validation["folds"]}
    free = tune(documents, queries, space, embedder=embedder, search="exhaustive", include_default=False)
    assert free.cross_validation["context_cap"] is None  # no cap unless asked
    with pytest.raises(ConfigError, match="context_cap"):
        tune(documents, queries, space, embedder=embedder, context_cap="yardstick")


def test_cli_tune_takes_the_context_cap_none_by_default():
    assert cli_tune_args().context_cap == "none"
    assert cli_tune_args("--context-cap", "framework").context_cap == "framework"
