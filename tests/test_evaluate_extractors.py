"""Evaluate with a configuration's metadata extractors, and with them against without (issue 46, item 3).

The "with" row embeds and searches the EMBED views every split makes (core.documents: the Chunks and
Metadata pages, ``chunkscope split``, batch); the "without" row the same configuration's with no extractor.
Offline extractors run through ``chunkscope evaluate`` in-process; the LLM ones against the test
chat-completions server (tests/llm_server.py), where a rerun is answered from the reply cache.
"""

from __future__ import annotations

import json

import pytest
from eval_support import WordsEmbedder
from llm_server import KEY_ENV, leaks

from core.cli import evaluate as cli_evaluate
from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.documents import prepare_documents, run_split
from core.errors import ConfigError
from core.evaluation.evaluate import evaluate
from core.evaluation.queries import EvalQuery
from core.evaluation.with_extractors import (
    WITH,
    WITHOUT,
    compare_extractors,
    held_out_sentence,
    held_out_with_extractors,
    session_spec,
)
from core.extractors import get_extractor
from core.loaders import load
from core.query.retrieval import retrieve
from core.schema import Document, MetadataMode
from core.splitters import get_splitter

# Two documents whose middle paragraph is the same: only the title tells the horse's from the zebra's.
ZEBRA_TEXT = "Zebra facts\n\nThey sleep standing up.\n\nStripes confuse flies."
HORSE_TEXT = "Horse facts\n\nThey sleep standing up.\n\nHooves need care."
DOCS = [
    Document(text=ZEBRA_TEXT, metadata={"file_name": "a.txt"}),
    Document(text=HORSE_TEXT, metadata={"file_name": "b.txt"}),
]
QUERIES = [EvalQuery("horse sleep standing", "b.txt", ("They sleep standing up.",))]
SPLITTER = get_splitter("character", chunk_size=25, chunk_overlap=0, separator="\n\n")
SPLIT_ARGS = ["--splitter", "character", "--set", "chunk_size=25", "--set", "chunk_overlap=0", "--set", "separator=\n\n"]
BM25 = RetrievalSettings(mode="bm25", top_k=3)
TITLED = PipelineConfig(splitter=SPLITTER, extractors=(get_extractor("title"),))


def test_the_embed_view_with_extractors_is_what_is_searched_and_scored():
    nodes = run_split(DOCS, TITLED)  # what the Chunks page shows for this configuration
    assert nodes[4].get_content(MetadataMode.EMBED) == "file_name: b.txt\ndocument_title: Horse facts\n\nThey sleep standing up."
    bare = run_split(DOCS, TITLED.replace(extractors=()))
    assert bare[4].get_content(MetadataMode.EMBED) == "file_name: b.txt\n\nThey sleep standing up."

    (with_label, with_row), (without_label, without_row) = compare_extractors(
        DOCS, QUERIES, [session_spec(TITLED)], TITLED, retrieval=BM25
    )
    assert (with_label, without_label) == (WITH, WITHOUT)
    # With the title, the horse's paragraph comes first; without it, the zebra's identical one wins the tie.
    assert with_row.per_query[0].retrieved[0] == nodes[4].id
    assert without_row.per_query[0].retrieved[0] == bare[1].id
    assert (with_row.mean("hit"), with_row.mean("reciprocal_rank")) == (1.0, 1.0)
    assert (without_row.mean("hit"), without_row.mean("reciprocal_rank")) == (1.0, 0.5)
    assert with_row.hit_curve() == [1.0, 1.0, 1.0] and without_row.hit_curve() == [0.0, 1.0, 1.0]
    # The titles are in the LLM views too: the context the LLM is sent grows.
    assert with_row.context_tokens > without_row.context_tokens > 0
    assert with_row.llm is None and without_row.llm is None  # no LLM extractor, no LLM columns

    # The scores are evaluate's for those nodes, and its ranking is retrieval's over the Chunks page's nodes.
    direct = evaluate(prepare_documents(DOCS, TITLED), QUERIES, SPLITTER, retrieval=BM25, pipeline=TITLED, context_tokens=True)
    assert direct.to_row() == with_row.to_row()
    ranked = [item.node.id for item in retrieve(nodes, QUERIES[0].query, BM25)]
    assert ranked == with_row.per_query[0].retrieved


def test_a_configuration_without_extractors_has_nothing_to_compare():
    with pytest.raises(ConfigError, match="no metadata extractors"):
        compare_extractors(DOCS, QUERIES, [session_spec(TITLED)], TITLED.replace(extractors=()), retrieval=BM25)


@pytest.fixture
def corpus(tmp_path):
    for doc in DOCS:
        (tmp_path / doc.metadata["file_name"]).write_text(doc.text, encoding="utf-8")
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps([{"query": q.query, "doc": q.doc, "excerpts": list(q.excerpts)} for q in QUERIES]))
    return [str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--queries", str(queries)]


def run_cli(args: list[str], capsys) -> tuple[dict, str]:
    assert cli_evaluate.main(["evaluate", *args, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


def test_cli_compare_extractors_gives_the_two_rows_core_gives(corpus, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    args = [*corpus, *SPLIT_ARGS, "--mode", "bm25", "--top-k", "3", "--quiet"]
    report, _ = run_cli([*args, "--extractor", "title", "--extractor", "keywords:keywords=2", "--compare-extractors"], capsys)
    rows = report["rows"]
    assert [row["config"] for row in rows] == [WITH, WITHOUT]
    config = TITLED.replace(extractors=(get_extractor("title"), get_extractor("keywords", keywords=2)))
    loaded = [doc for path in corpus[:2] for doc in load(path)]  # as the CLI reads them (its metadata too)
    expected = compare_extractors(loaded, QUERIES, [session_spec(config)], config, retrieval=BM25)
    for row, (_, result) in zip(rows, expected, strict=True):
        for column in ("hit_rate", "mrr", "recall", "context_tokens", "nodes"):
            assert row[column] == pytest.approx(result.to_row()[column]), column
        assert not any(key.startswith("llm_") for key in row)
    assert (rows[0]["mrr"], rows[1]["mrr"]) == (1.0, 0.5)
    assert rows[0]["context_tokens"] > rows[1]["context_tokens"]

    # --extractor alone: every configuration is scored with them (the "with" row), no comparison.
    alone, _ = run_cli([*args, "--extractor", "title", "--extractor", "keywords:keywords=2"], capsys)
    assert len(alone["rows"]) == 1 and alone["rows"][0]["mrr"] == 1.0 and "context_tokens" not in alone["rows"][0]


def test_cli_compare_extractors_needs_an_extractor(corpus, capsys):
    assert cli_evaluate.main(["evaluate", *corpus, "--mode", "bm25", "--compare-extractors"]) == 2
    assert "give at least one --extractor" in capsys.readouterr().err


# -- LLM extractors ------------------------------------------------------------------------------------------


def test_cli_compares_llm_extractors_says_what_they_spent_and_a_rerun_sends_nothing(endpoint, corpus, capsys):
    pytest.importorskip("openai")
    pytest.importorskip("llama_index.llms.openai_like")
    args = [
        *corpus, *SPLIT_ARGS, "--mode", "bm25", "--top-k", "3", "--compare-extractors",
        "--extractor", "llm_keywords:keywords=3",
        "--llm", f"base_url={endpoint.url}", "--llm", "model=echo-evaluate", "--llm", f"api_key_env={KEY_ENV}",
    ]  # fmt: skip
    first, err = run_cli(args, capsys)
    sent = endpoint.seen.count()
    with_row, without_row = first["rows"]
    assert (with_row["config"], without_row["config"]) == (WITH, WITHOUT)
    # One call per chunk (6), each answered once; the test server counts 1 prompt and 1 completion token a reply.
    assert sent == 6 and with_row["llm_requests"] == 6 and with_row["llm_cached"] == 0
    assert with_row["llm_prompt_tokens"] == 6 and with_row["llm_completion_tokens"] == 6
    assert not any(key.startswith("llm_") for key in without_row)
    assert with_row["context_tokens"] > without_row["context_tokens"]
    assert "up to 6 calls to echo-evaluate" in err and "sent 6 requests" in err  # the plan first, then the spend

    again, err_again = run_cli(args, capsys)
    assert endpoint.seen.count() == sent  # answered from the reply cache
    assert again["rows"][0]["llm_requests"] == 0 and again["rows"][0]["llm_cached"] == 6
    assert again["rows"][0]["llm_prompt_tokens"] == 0
    for column in ("hit_rate", "mrr", "recall", "context_tokens"):
        assert [row[column] for row in again["rows"]] == [row[column] for row in first["rows"]]
    for text in (json.dumps(first), err, json.dumps(again), err_again):
        assert not leaks(text)


def test_the_llm_keys_are_in_the_embed_views_that_are_embedded(endpoint, tmp_path):
    pytest.importorskip("openai")
    pytest.importorskip("llama_index.llms.openai_like")
    config = PipelineConfig(
        splitter=SPLITTER, extractors=(get_extractor("llm_keywords"),), llm=endpoint.connection("echo-embed")
    )
    (tmp_path / "model").mkdir()
    embedder = WordsEmbedder(str(tmp_path / "model"))
    rows = compare_extractors(DOCS, QUERIES, [session_spec(config)], config, embedder=embedder, retrieval=RetrievalSettings(top_k=3))
    sent = endpoint.seen.count()
    assert sent == 6 and rows[0][1].llm["requests"] == 6
    # The nodes a split with this configuration makes (the Chunks page's): their EMBED views, keywords included,
    # are exactly the chunk texts the "with" row embedded; the replies come from the cache.
    views = {node.get_content(MetadataMode.EMBED) for node in run_split(DOCS, config)}
    assert endpoint.seen.count() == sent
    assert all("excerpt_keywords: kw-" in view for view in views)
    assert views <= set(embedder.encoded)
    bare = {node.get_content(MetadataMode.EMBED) for node in run_split(DOCS, config.replace(extractors=()))}
    assert bare <= set(embedder.encoded) and not bare & views


# -- --config: a saved configuration evaluated without retyping it -----------------------------------------------


def test_cli_evaluates_a_saved_configuration_as_its_options_would(corpus, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    saved = TITLED.replace(
        extractors=(get_extractor("title"), get_extractor("keywords", keywords=2)), retrieval=BM25
    )
    path = tmp_path / "config.json"
    path.write_text(saved.to_json(), encoding="utf-8")
    typed, _ = run_cli(
        [*corpus, *SPLIT_ARGS, "--mode", "bm25", "--top-k", "3", "--quiet", "--compare-extractors",
         "--extractor", "title", "--extractor", "keywords:keywords=2"],
        capsys,
    )  # fmt: skip
    from_file, _ = run_cli([*corpus, "--config", str(path), "--quiet", "--compare-extractors"], capsys)
    assert from_file["rows"] == typed["rows"]
    assert (from_file["rows"][0]["mrr"], from_file["rows"][1]["mrr"]) == (1.0, 0.5)
    # Options go on top of the file: --extractor replaces its extractors, --top-k its retrieval's top_k,
    # --set its splitter's parameter (the rest of its parameters kept).
    plain, _ = run_cli([*corpus, "--config", str(path), "--quiet", "--extractor", "keywords:keywords=2"], capsys)
    assert plain["rows"][0]["mrr"] == 0.5  # without the title the zebra's paragraph wins the tie
    top_one, _ = run_cli([*corpus, "--config", str(path), "--quiet", "--top-k", "1"], capsys)
    assert top_one["rows"][0]["hit_curve"] == [1.0]
    bigger, _ = run_cli([*corpus, "--config", str(path), "--quiet", "--set", "chunk_size=200"], capsys)
    assert bigger["rows"][0]["nodes"] == 2 and typed["rows"][0]["nodes"] == 6


def test_cli_config_without_extractors_cannot_compare_and_a_bad_file_is_named(corpus, capsys, tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(TITLED.replace(extractors=()).to_json(), encoding="utf-8")
    assert cli_evaluate.main(["evaluate", *corpus, "--config", str(path), "--compare-extractors"]) == 2
    assert "a --config that has extractors" in capsys.readouterr().err
    bad = tmp_path / "broken.json"
    bad.write_text("{not json", encoding="utf-8")
    assert cli_evaluate.main(["evaluate", *corpus, "--config", str(bad)]) == 2
    assert "broken.json" in capsys.readouterr().err


def test_cli_says_a_saved_configurations_postprocessors_are_not_scored(corpus, capsys, tmp_path):
    from core.postprocessors import get_postprocessor

    path = tmp_path / "chained.json"
    chain = (get_postprocessor("long_context_reorder"),)
    path.write_text(TITLED.replace(extractors=(), postprocessors=chain).to_json(), encoding="utf-8")
    assert cli_evaluate.main(["evaluate", *corpus, "--config", str(path), "--quiet", "--format", "json"]) == 0
    assert "the configuration's postprocessors (long_context_reorder) are not scored" in capsys.readouterr().err


def test_cli_evaluates_a_saved_configuration_with_llm_extractors_and_never_says_the_key(endpoint, corpus, capsys, tmp_path):
    pytest.importorskip("openai")
    pytest.importorskip("llama_index.llms.openai_like")
    saved = TITLED.replace(
        extractors=(get_extractor("llm_keywords", keywords=3),), llm=endpoint.connection("echo-config"), retrieval=BM25
    )
    path = tmp_path / "config.json"
    path.write_text(saved.to_json(), encoding="utf-8")
    assert KEY_ENV in path.read_text(encoding="utf-8") and not leaks(path.read_text(encoding="utf-8"))
    first, err = run_cli([*corpus, "--config", str(path), "--compare-extractors"], capsys)
    assert endpoint.seen.count() == 6 and first["rows"][0]["llm_requests"] == 6
    again, err_again = run_cli([*corpus, "--config", str(path), "--compare-extractors"], capsys)
    assert endpoint.seen.count() == 6 and again["rows"][0]["llm_cached"] == 6
    for text in (json.dumps(first), err, json.dumps(again), err_again):
        assert not leaks(text)


# -- the tuner: its pick with the extractors and without -----------------------------------------------------------


# The tuner folds its questions: two, one a document.
TUNE_QUERIES = [*QUERIES, EvalQuery("zebra stripes flies", "a.txt", ("Stripes confuse flies.",))]


def tune_space():
    from core.evaluation.sweep import SweepSpec
    from core.evaluation.tune_space import TuneSpace

    spec = SweepSpec("character", {"chunk_size": [25, 60]}, {"chunk_overlap": 0, "separator": "\n\n"})
    return TuneSpace((spec,), modes=("bm25",), top_ks=(3,))


def test_the_tuner_scores_its_pick_with_the_extractors_and_without_as_evaluate_does(endpoint):
    pytest.importorskip("openai")
    pytest.importorskip("llama_index.llms.openai_like")
    from core.evaluation.sweep import SweepSpec
    from core.evaluation.tune import tune

    config = PipelineConfig(
        splitter=SPLITTER, extractors=(get_extractor("llm_keywords"),), llm=endpoint.connection("echo-tune")
    )
    plain = tune(DOCS, TUNE_QUERIES, tune_space(), include_default=False)
    assert plain.extractors == [] and endpoint.seen.count() == 0  # without the option nothing is asked
    result = tune(DOCS, TUNE_QUERIES, tune_space(), include_default=False, with_extractors=config)
    assert [row["config"] for row in result.rows] == [row["config"] for row in plain.rows]  # the search is the same
    pick = result.rows[result.pick]
    with_row, without_row = result.extractors
    assert (with_row["config"], without_row["config"]) == (f"{pick['config']} · {WITH}", f"{pick['config']} · {WITHOUT}")
    assert with_row["row"] == without_row["row"] == pick["id"]
    # Without the extractors, the pick scores as the search scored it; both as Evaluate's comparison scores them.
    assert without_row["mrr"] == pytest.approx(pick["mrr"]) and without_row["hit_rate"] == pytest.approx(pick["hit_rate"])
    spec = SweepSpec(pick["splitter"], {}, pick["settings"]["splitter"]["params"])
    retrieval = RetrievalSettings.from_params(pick["settings"]["retrieval"])
    expected = compare_extractors(DOCS, TUNE_QUERIES, [spec], config, retrieval=retrieval)
    for row, (_, evaluation) in zip(result.extractors, expected, strict=True):
        for column in ("hit_rate", "mrr", "context_tokens", "nodes"):
            assert row[column] == pytest.approx(evaluation.to_row()[column]), column
    # What the LLM was sent: one call per chunk of the pick; Evaluate's comparison above was answered from the cache.
    assert with_row["llm_requests"] == with_row["nodes"] == endpoint.seen.count()
    assert expected[0][1].llm["requests"] == 0
    assert not any(key.startswith("llm_") for key in without_row)


def test_cli_tune_compares_the_pick_from_a_saved_configuration_and_a_rerun_sends_nothing(endpoint, corpus, capsys, tmp_path):
    pytest.importorskip("openai")
    pytest.importorskip("llama_index.llms.openai_like")
    from core.cli import tune as cli_tune

    saved = TITLED.replace(extractors=(get_extractor("llm_keywords", keywords=3),), llm=endpoint.connection("echo-tune-cli"))
    path = tmp_path / "config.json"
    path.write_text(saved.to_json(), encoding="utf-8")
    queries = tmp_path / "tune_queries.json"
    queries.write_text(json.dumps([{"query": q.query, "doc": q.doc, "excerpts": list(q.excerpts)} for q in TUNE_QUERIES]))
    args = [
        "tune", *corpus[:2], "--queries", str(queries), "--splitter", "character", "--set", "chunk_overlap=0", "--set", "separator=\n\n",
        "--sweep", "chunk_size=25,60", "--modes", "bm25", "--top-ks", "3", "--without-default", "--quiet",
        "--compare-extractors", "--config", str(path),
    ]  # fmt: skip
    assert cli_tune.main([*args, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    first = json.loads(out)
    sent = endpoint.seen.count()
    with_row, without_row = first["extractors"]
    assert with_row["config"].endswith(WITH) and without_row["config"].endswith(WITHOUT)
    assert sent == with_row["llm_requests"] > 0 and with_row["llm_prompt_tokens"] == sent
    assert first["extractors_held_out"] == held_out_with_extractors(first)
    assert cli_tune.main(args) == 0
    table, err_again = capsys.readouterr()
    assert endpoint.seen.count() == sent  # answered from the reply cache
    assert "The pick with / without extractors" in table and "llm_cached" in table
    assert held_out_sentence(first["extractors_held_out"]) in table
    for text in (out, err, table, err_again):
        assert not leaks(text)
    # The extractors' options alone, or the option with no extractor, are refused before anything is loaded.
    assert cli_tune.main([*args[: args.index("--compare-extractors")], "--extractor", "title"]) == 2
    assert "are for --compare-extractors" in capsys.readouterr().err
    assert cli_tune.main([*args[: args.index("--config")]]) == 2
    assert "--compare-extractors needs extractors" in capsys.readouterr().err


def test_the_picks_held_out_number_with_extractors_adds_their_paired_difference_to_the_nested_estimate():
    # The extractors are not chosen on the questions (on or off is the user's), so their difference on the pick
    # carries no tuning bias; the pick's own optimism is what the nested estimate removes.
    result = {
        "quality": "mrr",
        "cross_validation": {"estimate": 0.50},
        "extractors": [
            {"row": 3, "config": f"sentence 256/20 · {WITH}", "mrr": 0.62, "hit_rate": 0.8},
            {"row": 3, "config": f"sentence 256/20 · {WITHOUT}", "mrr": 0.58, "hit_rate": 0.8},
        ],
    }
    held = held_out_with_extractors(result)
    assert held == {"quality": "mrr", "without": 0.50, "difference": pytest.approx(0.04), "with": pytest.approx(0.54)}
    assert held_out_sentence(held) == (
        "Held out (estimate): mrr 0.540 with the extractors, 0.500 without: the nested estimate of the search plus "
        "the extractors' difference on the pick (+0.040), which no choice was made on"
    )
    # Nothing to say without a comparison, or without a held-out estimate (a search stopped early).
    assert held_out_with_extractors({**result, "extractors": []}) is None
    assert held_out_with_extractors({**result, "cross_validation": {"estimate": None}}) is None
