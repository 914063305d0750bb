"""AppTest: the Evaluate page's Tune section finds core's Pareto front, draws it, and loads a point into the session.

BM25 only, so nothing is embedded; the front must be :func:`core.evaluation.tune.tune`'s
for the same documents, queries and space.
"""

from __future__ import annotations

import json
from pathlib import Path

import apptest_support
import pytest
from streamlit.testing.v1 import AppTest

from core.config import PipelineConfig
from core.documents import prepare_documents
from core.evaluation.queries import load_queries
from core.evaluation.sweep import SweepSpec
from core.evaluation.tune import tune
from core.evaluation.tune_space import TuneSpace
from core.loaders import load
from core.splitters import get_splitter
from ui.documents import sample_files

# The configuration the page opens on (apptest_support.SENTENCE): the sentence splitter at its defaults.
SENTENCE_CONFIG = PipelineConfig(splitter=get_splitter("sentence"))

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/5_Evaluate.py"


def tune_page() -> AppTest:
    at = apptest_support.open_page(PAGE, apptest_support.SENTENCE, timeout=600)
    at.segmented_control(key="eval.mode").set_value("Tune").run()
    at.radio(key="eval.tune.space").set_value("own").run()
    at.text_input(key="eval.tune.sentence.values.chunk_size").set_value("128, 256").run()
    at.text_input(key="eval.tune.sentence.values.chunk_overlap").set_value("0").run()
    at.multiselect(key="eval.tune.modes").set_value(["bm25"]).run()
    at.text_input(key="eval.tune.top_ks").set_value("1, 3").run()
    at.checkbox(key="eval.tune.default").uncheck().run()  # BM25 only: nothing to embed
    assert not at.exception, at.exception
    return at


def expected_front():
    documents = prepare_documents([doc for path in sample_files() for doc in load(path)], SENTENCE_CONFIG)
    queries = load_queries(ROOT / "sample_docs" / "queries.json")
    space = TuneSpace(
        (
            SweepSpec(
                "sentence", {"chunk_size": [128, 256], "chunk_overlap": [0]}, SENTENCE_CONFIG.splitter.to_params()
            ),
        ),
        modes=("bm25",),
        top_ks=(1, 3),
    )
    return tune(documents, queries, space, quality="mrr", cost="context_tokens", include_default=False)


def test_the_tune_section_says_what_it_will_search_and_runs_nothing_until_asked():
    at = tune_page()
    assert any("4 configurations to search: every one on every query" in c.value for c in at.caption)
    assert any("press **Search**" in info.value for info in at.info)
    assert not list(at.get("plotly_chart"))


def test_search_draws_cores_front_and_a_picked_point_becomes_the_sessions_configuration():
    at = tune_page()
    at.button(key="eval.tune.run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    expected = expected_front()
    (chart,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    names = [trace["name"] for trace in chart["data"]]
    assert names == ["Other configurations", "Pareto front", "Pick"]
    assert chart["data"][2]["customdata"] == [expected.pick]  # starred, on the front or off it
    front_trace = chart["data"][1]
    assert front_trace["customdata"] == expected.front
    # The front is by held-out quality (folds by document), and the table shows it beside the in-sample score.
    assert front_trace["y"] == pytest.approx([row["fold_mean"] for row in expected.front_rows()])
    assert front_trace["x"] == pytest.approx([row["context_tokens"] for row in expected.front_rows()])
    assert chart["layout"]["xaxis"]["title"]["text"] == "Context tokens per query"
    (table,) = [frame.value for frame in at.dataframe if "context_tokens" in frame.value.columns]
    assert table["config"].tolist() == [row["config"] for row in expected.front_rows()]
    assert table["fold_mean"].tolist() == pytest.approx([row["fold_mean"] for row in expected.front_rows()])
    assert table["in_sample"].tolist() == pytest.approx([row["mrr"] for row in expected.front_rows()])
    assert table["fold_spread"].tolist() == pytest.approx([row["fold_spread"] for row in expected.front_rows()])
    captions = " ".join(c.value for c in at.caption)
    assert f"Folds: {expected.folds['count']} by document" in captions
    assert "Chosen on the other folds, scored on each held-out fold" in captions
    # The pick offered first is core's (the best held-out configuration, no yardstick in this space).
    assert at.selectbox(key="eval.tune.pick").value == expected.pick

    # Pick the front's costliest point (as a click on it does) and load it.
    target = expected.front[-1]
    at.selectbox(key="eval.tune.pick").set_value(target).run()
    at.button(key="eval.tune.load").click().run()
    assert not at.exception, at.exception
    config = at.session_state["cs_config"]
    settings = expected.rows[target]["settings"]
    assert config.splitter.name == "sentence"
    assert config.splitter.to_params()["chunk_size"] == settings["splitter"]["params"]["chunk_size"]
    assert (config.retrieval.mode, config.retrieval.top_k) == ("bm25", settings["retrieval"]["top_k"])
    assert any("This is the session's configuration" in s.value for s in at.success)
    # The front stays on screen, not stale: loading a point is not a change of the search.
    assert not any("settings changed" in info.value for info in at.info)


def test_with_the_recommended_configuration_the_pick_is_never_below_its_score():
    at = tune_page()
    at.checkbox(key="eval.tune.default").check().run()
    assert any("4 configurations and the recommended one to search" in c.value for c in at.caption)
    at.button(key="eval.tune.run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    result = at.session_state["cs_evaluation"]["result"]
    captions = " ".join(c.value for c in at.caption)
    default = result["rows"][result["default"]]
    assert f"Recommended configuration (untuned), mean over folds: {default['fold_mean']:.3f}" in captions
    assert default["default"] and (default["splitter"], default["mode"], default["returns"]) == (
        "hierarchical",
        "hybrid",
        "parents",
    )
    assert result["rows"][result["pick"]]["fold_mean"] >= default["fold_mean"]
    assert at.selectbox(key="eval.tune.pick").value == result["pick"]


def test_the_budget_is_the_declared_one_and_a_spent_budget_says_how_far_the_search_got():
    from core.evaluation.tune import TuneBudget

    at = tune_page()
    budget = at.number_input(key="eval.tune.budget.budget_minutes")
    assert budget.value == TuneBudget().budget_minutes and budget.label == "Budget minutes"
    assert budget.proto.format == "%g"  # the box reads "20", not "20.000"
    budget.set_value(0.00001).run()  # under a millisecond: spent before the second configuration starts
    at.button(key="eval.tune.run").click().run()
    assert not at.exception, at.exception
    result = at.session_state["cs_evaluation"]["result"]
    assert result["stopped"] == "budget" and len(result["rows"]) < 4
    warnings = [w.value for w in at.warning]
    assert f"Stopped (the time budget was spent) after {len(result['rows'])} of 4 configurations." in warnings


class HaltingEmbedder:
    """Reports half of a configuration's chunks embedded, then ends the script run, as a person sees it midway."""

    model_name = "fake-model"
    dimension = 3

    def embed(self, texts, progress=None):
        progress(len(texts) // 2, len(texts))
        import streamlit as st

        st.stop()


def test_progress_shows_the_chunks_embedded_inside_a_configuration(monkeypatch):
    import ui.cache
    from ui.widgets import md_escape

    monkeypatch.setattr(ui.cache, "embedder", HaltingEmbedder)
    at = tune_page()
    at.multiselect(key="eval.tune.modes").set_value(["dense"]).run()
    at.button(key="eval.tune.run").click().run()
    (bar,) = at.get("progress")
    label = md_escape("128/0: embedding chunks ")
    assert bar.proto.text.startswith(label), bar.proto.text
    done, total = bar.proto.text.removeprefix(label).split(" of ")
    assert int(done.replace(",", "")) == int(total.replace(",", "")) // 2 > 0


def test_the_tab_opens_on_the_clis_default_space():
    import argparse
    from dataclasses import asdict

    from core.cli import tune as cli_tune
    from core.evaluation.tune_space import default_space

    at = apptest_support.open_page(PAGE, timeout=600)
    at.segmented_control(key="eval.mode").set_value("Tune").run()
    assert not at.exception, at.exception
    assert at.radio(key="eval.tune.space").value == "default"
    parser = argparse.ArgumentParser()
    cli_tune.register(parser.add_subparsers())
    cli_space = cli_tune.build_space(parser.parse_args(["tune", "x", "--queries", "q.json"]))
    count = len(cli_space.arms())
    assert any(f"{count} configurations, the recommended one among them, to search" in c.value for c in at.caption)
    assert asdict(default_space()) == asdict(cli_space)
    # The same bound on what a pick may read: none unless asked (LlamaIndex's defaults' context tokens).
    assert at.checkbox(key="eval.tune.context_cap").value is False
    assert parser.parse_args(["tune", "x", "--queries", "q.json"]).context_cap == "none"


def test_a_hierarchy_returning_parents_is_searched_at_each_context_budget_given():
    at = apptest_support.open_page(PAGE, apptest_support.SENTENCE, timeout=600)
    at.segmented_control(key="eval.mode").set_value("Tune").run()
    at.radio(key="eval.tune.space").set_value("own").run()
    at.multiselect(key="eval.tune.splitters").set_value(["hierarchical"]).run()
    at.multiselect(key="eval.tune.modes").set_value(["bm25"]).run()
    at.multiselect(key="eval.tune.returns").set_value(["parents"]).run()

    def searched() -> str:
        return next(c.value for c in at.caption if "configurations" in c.value)

    assert at.text_input(key="eval.tune.budgets").value == "5500"  # the default retrieval's
    one = searched()
    at.text_input(key="eval.tune.budgets").set_value("0, 5500").run()
    assert not at.exception, at.exception
    count = int(one.split()[0])
    assert searched().startswith(f"{2 * count} configurations")  # each returning parents, at both budgets
    at.multiselect(key="eval.tune.returns").set_value(["merged"]).run()
    assert "eval.tune.budgets" not in [t.key for t in at.text_input]  # a budget applies to parents only
