"""AppTest: the Evaluate page scores configurations and sweeps, one row per configuration, per document too.

The numbers on the page must be core's (``core.evaluation.evaluate``) for the same
documents, queries and settings. The dense run uses the real packaged model
(loaded once, shared); the sweep uses BM25 so it embeds nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import apptest_support
import pytest
from apptest_support import shown
from streamlit.testing.v1 import AppTest

from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.documents import prepare_documents
from core.embed.embedder import get_embedder
from core.evaluation.evaluate import evaluate
from core.evaluation.queries import load_queries
from core.evaluation.sweep import sweep
from core.loaders import load
from core.splitters import get_splitter
from ui.documents import sample_files

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/5_Evaluate.py"
TIMEOUT = 900
METRICS = ["hit_rate", "mrr", "recall", "precision", "iou"]


def open_page() -> AppTest:
    return apptest_support.open_page(PAGE, apptest_support.SENTENCE, timeout=TIMEOUT)


def run(at: AppTest) -> AppTest:
    at.button(key="eval.run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def results(at: AppTest):
    """The results table: the one with a chunk count (the queries table comes first, the per-document one last)."""
    (table,) = [frame.value for frame in at.dataframe if "nodes" in frame.value.columns]
    assert "hit_rate" in table.columns
    return table


def per_document(at: AppTest):
    return at.dataframe[-1].value


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def sample_documents():
    documents = [doc for path in sample_files() for doc in load(path)]
    return prepare_documents(documents, PipelineConfig())


def queries():
    return load_queries(ROOT / "sample_docs" / "queries.json")



def test_the_query_pages_chain_is_said_not_to_be_scored():
    at = apptest_support.open_page(PAGE, {**apptest_support.SENTENCE, "postprocessors": "long_context_reorder"}, timeout=TIMEOUT)
    assert not at.exception, at.exception
    assert any("chain from the Query page (long_context_reorder) is not part of these scores" in shown(c.value) for c in at.caption)
    plain = open_page()
    assert not any("chain from the Query page" in c.value for c in plain.caption)

def test_nothing_runs_until_asked():
    at = open_page()
    assert any("Run the evaluation" in info.value for info in at.info)
    assert not [chart for chart in at.get("plotly_chart")]


def test_two_configurations_give_two_rows_of_core_metrics_in_unit_range():
    at = run(open_page())
    table = results(at)
    assert table["config"].tolist() == ["A", "B"]
    for metric in METRICS:
        assert table[metric].between(0.0, 1.0).all(), metric
    # A is the session's splitter (the defaults), scored as core scores it.
    expected = evaluate(sample_documents(), queries(), get_splitter("sentence"), embedder=get_embedder(), retrieval=RetrievalSettings(top_k=5))
    row = table.iloc[0]
    assert row["nodes"] == expected.node_count
    for metric, value in expected.to_row().items():
        if metric in METRICS:
            assert row[metric] == pytest.approx(value), metric
    bars = [figure for figure in figures(at) if figure["data"][0]["type"] == "bar"]
    assert len(bars) == 1
    assert [trace["name"] for trace in bars[0]["data"]] == ["Hit rate@k", "MRR", "Recall", "Precision", "IoU"]
    assert all(trace["x"] == ["A", "B"] for trace in bars[0]["data"])


def test_a_sweep_skips_invalid_pairs_and_draws_a_heatmap():
    at = open_page()
    at.segmented_control(key="eval.mode").set_value("Sweep").run()
    at.text_input(key="eval.sweep.sizes").set_value("128, 256").run()
    at.text_input(key="eval.sweep.overlaps").set_value("0, 128").run()
    at.selectbox(key="eval.retrieval.mode").set_value("bm25").run()
    assert any("2 × 2 = 4 combinations, 3 valid" in caption.value for caption in at.caption)
    table = results(run(at))
    assert table["config"].tolist() == ["128/0", "256/0", "256/128"]
    for metric in METRICS:
        assert table[metric].between(0.0, 1.0).all(), metric
    expected = sweep(sample_documents(), queries(), "sentence", [128, 256], [0, 128], retrieval=RetrievalSettings(mode="bm25", top_k=5))
    assert table["mrr"].tolist() == pytest.approx([row["mrr"] for row in expected])
    assert table["nodes"].tolist() == [row["nodes"] for row in expected]
    heatmaps = [figure for figure in figures(at) if figure["data"][0]["type"] == "heatmap"]
    assert len(heatmaps) == 1
    z = heatmaps[0]["data"][0]["z"]
    # Rows are chunk sizes 128, 256; columns overlaps 0, 128; the invalid pair stays blank.
    assert z[0][1] is None
    assert z[0][0] == pytest.approx(expected[0]["mrr"]) and z[1][1] == pytest.approx(expected[2]["mrr"])


def test_a_bad_size_list_is_refused_in_one_sentence():
    at = open_page()
    at.segmented_control(key="eval.mode").set_value("Sweep").run()
    at.text_input(key="eval.sweep.sizes").set_value("256, big").run()
    assert any("chunk_size must be a whole number, got 'big'" in shown(error.value) for error in at.error)
    assert at.button(key="eval.run").disabled


def test_results_go_stale_when_a_setting_changes():
    at = open_page()
    at.segmented_control(key="eval.mode").set_value("Sweep").run()
    at.text_input(key="eval.sweep.sizes").set_value("256").run()
    at.selectbox(key="eval.retrieval.mode").set_value("bm25").run()
    run(at)
    assert not any("settings changed" in info.value for info in at.info)
    at.text_input(key="eval.sweep.overlaps").set_value("0").run()
    assert any("settings changed" in info.value for info in at.info)
    # The stored rows stay on screen until the next run.
    assert results(at)["config"].tolist() == ["256/0", "256/64"]


def test_document_scope_shows_core_per_document_scores_and_a_hit_curve():
    at = open_page()
    at.selectbox(key="eval.retrieval.mode").set_value("bm25").run()
    at.segmented_control(key="eval.scope").set_value("document").run()
    run(at)
    assert any("each query within its own document" in caption.value for caption in at.caption)
    expected = evaluate(sample_documents(), queries(), get_splitter("sentence"), scope="document", retrieval=RetrievalSettings(mode="bm25"))
    table = per_document(at)
    mine = table[table["config"] == "A"]
    assert mine["doc"].tolist() == [row["doc"] for row in expected.per_document()]
    assert mine["mrr"].tolist() == pytest.approx([row["mrr"] for row in expected.per_document()])
    (curve,) = [figure for figure in figures(at) if figure["data"][0]["type"] == "scatter"]
    assert [trace["name"] for trace in curve["data"]] == ["A", "B"]
    assert curve["data"][0]["x"] == [1, 2, 3, 4, 5]
    assert curve["data"][0]["y"] == pytest.approx(expected.hit_curve())


def test_any_declared_parameter_can_be_swept_here_markdowns_heading_level():
    at = open_page()
    at.segmented_control(key="eval.mode").set_value("Sweep").run()
    at.selectbox(key="eval.sweep.splitter").set_value("markdown").run()
    at.multiselect(key="eval.sweep.markdown.params").set_value(["heading_level"]).run()
    at.text_input(key="eval.sweep.values.heading_level").set_value("1, 2").run()
    at.selectbox(key="eval.retrieval.mode").set_value("bm25").run()
    assert any("2 = 2 combinations, 2 valid" in caption.value for caption in at.caption)
    table = results(run(at))
    assert table["config"].tolist() == ["heading_level=1", "heading_level=2"]
    expected = sweep(sample_documents(), queries(), "markdown", grid={"heading_level": [1, 2]}, retrieval=RetrievalSettings(mode="bm25"))
    assert table["nodes"].tolist() == [row["nodes"] for row in expected]
    assert table["mrr"].tolist() == pytest.approx([row["mrr"] for row in expected])
    # One swept parameter: no heatmap, the hit curve instead.
    assert [figure["data"][0]["type"] for figure in figures(at)] == ["bar", "scatter"]


def test_chunks_over_the_embedding_window_are_warned_about():
    at = open_page()
    at.segmented_control(key="eval.mode").set_value("Sweep").run()
    at.text_input(key="eval.sweep.sizes").set_value("1024").run()
    at.text_input(key="eval.sweep.overlaps").set_value("0").run()
    at.button(key="eval.run").click().run()
    assert not at.exception, at.exception
    warnings = [shown(warning.value) for warning in at.warning]
    assert any(
        w.startswith("**1024/0**: ") and "longer than the embedding model's window (254 tokens)" in w for w in warnings
    )
    assert results(at)["over_window"].iloc[0] > 0


def test_queries_written_on_the_page_are_checked_listed_and_evaluated():
    at = open_page()
    at.text_input(key="evaluate.builder.question").set_value("What does overlap repeat?")
    at.selectbox(key="evaluate.builder.doc").set_value("chunking_guide.md")
    at.text_area(key="evaluate.builder.passage").set_value("a passage that is in no document at all")
    at.button(key="evaluate.builder.add").click().run()
    assert not at.exception
    assert any("not in chunking_guide.md" in shown(e.value) for e in at.error)

    guide = load(ROOT / "sample_docs" / "chunking_guide.md")[0].text
    passage = guide[400:520]
    at.text_input(key="evaluate.builder.question").set_value("What does overlap repeat?")
    at.selectbox(key="evaluate.builder.doc").set_value("chunking_guide.md")
    at.text_area(key="evaluate.builder.passage").set_value(passage)
    at.button(key="evaluate.builder.add").click().run()
    assert not at.exception and not at.error
    assert at.dataframe[0].value["passage"].tolist() == [passage.strip()]
    assert at.text_input(key="evaluate.builder.question").value == ""  # emptied for the next query

    at.toggle(key="evaluate.use_written").set_value(True).run()
    assert any("1 of 1 queries written here" in shown(c.value) for c in at.caption)


def test_the_results_table_of_configurations_fits_the_page_at_1280_px():
    # The columns a Configurations run shows (as at 1440 px); at 1280 "Over window" was cut at the edge.
    from ui.evaluate_results import _column_config

    shown_columns = ["splitter", "settings", "hit_rate", "mrr", "recall", "precision", "iou", "nodes",
                     "chunk_size", "chunk_overlap", "over_window"]
    columns = _column_config()
    config_column = 55  # "Config" over "A", sized by the grid
    assert config_column + sum(columns[name]["width"] for name in shown_columns) <= 820
    for name in shown_columns:
        assert 6.5 * len(columns[name]["label"]) + 8 <= columns[name]["width"], name
