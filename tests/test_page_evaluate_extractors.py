"""AppTest: the Evaluate page's "With / without extractors", offered when the session's configuration has extractors.

Its rows are core's (``core.evaluation.with_extractors``) for the same pool, queries and settings; LLM
extractors show their cost before anything is sent, run in a bounded child against the test server, and a
second run is answered from the reply cache. BM25 throughout: nothing is embedded.
"""

from __future__ import annotations

from pathlib import Path

import apptest_support
import pytest
from llm_server import leaks
from streamlit.testing.v1 import AppTest

from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.evaluation.queries import load_queries
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
from core.splitters import get_splitter
from ui.documents import sample_files

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/5_Evaluate.py"
MODE, LABEL = "Extractors", "With / without extractors"  # the mode's value, and what the switch shows
BM25 = RetrievalSettings(mode="bm25", top_k=5)


def results(at: AppTest):
    (table,) = [frame.value for frame in at.dataframe if "nodes" in frame.value.columns]
    return table


def choose_and_run(at: AppTest) -> AppTest:
    at.segmented_control(key="eval.mode").set_value(MODE).run()
    at.selectbox(key="eval.retrieval.mode").set_value("bm25").run()
    assert not at.exception, at.exception
    at.button(key="eval.run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def test_offered_only_when_the_configuration_has_extractors():
    at = apptest_support.open_page(PAGE, apptest_support.SENTENCE, timeout=600)
    assert LABEL not in at.segmented_control(key="eval.mode").options


def test_offline_extractors_give_core_rows_with_and_without():
    at = apptest_support.open_page(PAGE, {"splitter": "sentence", "extractors": "title,keywords"}, timeout=600)
    assert LABEL in at.segmented_control(key="eval.mode").options
    config = at.session_state["cs_config"]
    assert [e.name for e in config.extractors] == ["title", "keywords"]
    table = results(choose_and_run(at))
    assert table["config"].tolist() == [WITH, WITHOUT]
    documents = [doc for path in sample_files() for doc in load(path)]
    queries = load_queries(ROOT / "sample_docs" / "queries.json")
    expected = compare_extractors(documents, queries, [session_spec(config)], config, retrieval=BM25)
    for (_, row), (label, result) in zip(table.iterrows(), expected, strict=True):
        assert row["config"] == label
        for column in ("hit_rate", "mrr", "recall", "nodes", "context_tokens"):
            assert row[column] == pytest.approx(result.to_row()[column]), column
    assert table["context_tokens"][0] > table["context_tokens"][1]
    assert not any(column.startswith("llm_") for column in table.columns)


def test_llm_extractors_cost_first_then_run_bounded_and_a_rerun_sends_nothing(endpoint, monkeypatch):
    pytest.importorskip("openai")
    pytest.importorskip("llama_index.llms.openai_like")
    import os

    from llama_index.core.extractors.interface import BaseExtractor

    server, original = os.getpid(), BaseExtractor.aprocess_nodes

    async def guarded(self, *args, **kwargs):
        assert os.getpid() != server, "framework code ran in the server's process"
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(BaseExtractor, "aprocess_nodes", guarded)
    at = apptest_support.open_page(PAGE, apptest_support.SENTENCE, timeout=600)
    config = PipelineConfig(
        splitter=get_splitter("sentence"),
        extractors=(get_extractor("llm_keywords", keywords=3),),
        llm=endpoint.connection("echo-evaluate-page"),
    )
    at.session_state["cs_config"] = config
    at.run()
    at.multiselect(key="eval.pool").set_value(["release_notes.txt"]).run()
    at.segmented_control(key="eval.mode").set_value(MODE).run()
    assert not at.exception, at.exception
    cost = " ".join(m.value for m in at.markdown)
    assert "chunks in the pool" in cost and "calls" in cost and "prompt tokens" in cost
    assert endpoint.seen.count() == 0  # the cost is shown; nothing is sent yet
    table = results(choose_and_run(at))
    sent = endpoint.seen.count()
    assert sent > 0 and table["llm_requests"][0] == sent and table["llm_prompt_tokens"][0] == sent
    assert table["config"].tolist() == [WITH, WITHOUT]
    assert f"up to **{sent:,} calls**" in cost  # one call per chunk, as counted before the run

    at.button(key="eval.run").click().run()
    assert not at.exception, at.exception
    again = results(at)
    assert endpoint.seen.count() == sent and again["llm_requests"][0] == 0 and again["llm_cached"][0] == sent
    assert again["mrr"].tolist() == table["mrr"].tolist()
    shown = [str(e.value) for kind in ("markdown", "caption", "info", "warning", "error") for e in getattr(at, kind)]
    shown += [results(at).to_csv()]
    assert not leaks("\n".join(shown))


def test_cancel_stops_the_llm_extractors_before_their_next_request_and_running_again_asks_only_the_rest(
    endpoint, monkeypatch
):
    pytest.importorskip("openai")
    pytest.importorskip("llama_index.llms.openai_like")
    import core.evaluation.evaluate as evaluation

    at = apptest_support.open_page(PAGE, apptest_support.SENTENCE, timeout=600)
    # One request at a time, each answered after 300 ms: the run is still asking when Cancel is clicked.
    at.session_state["cs_config"] = PipelineConfig(
        splitter=get_splitter("sentence"),
        extractors=(get_extractor("llm_keywords", keywords=3),),
        llm=endpoint.connection("slow-300", concurrency=1),
    )
    at.run()
    at.multiselect(key="eval.pool").set_value(["release_notes.txt"]).run()
    at.segmented_control(key="eval.mode").set_value(MODE).run()
    at.selectbox(key="eval.retrieval.mode").set_value("bm25").run()
    asking, heard = evaluation._asking, []

    def clicking_cancel(phases, model, done, calls):  # noqa: ANN001 - the bar's LLM line, as a browser sees it
        heard.append((done, calls))
        if done >= 2 and endpoint.seen.count() <= 3:
            apptest_support.click_while_running("eval.cancel")
        asking(phases, model, done, calls)  # Streamlit stops the run here, as it does for a browser's click

    monkeypatch.setattr(evaluation, "_asking", clicking_cancel)
    at.button(key="eval.run").click().run()
    assert not at.exception, at.exception
    calls, sent = heard[0][1], endpoint.seen.count()
    # Stopped before the next request: the replies heard, at most the one in flight, never the rest.
    assert 2 <= sent <= 3 < calls
    assert any("Cancelled before the LLM's next request" in caption.value for caption in at.caption)
    assert not [frame for frame in at.dataframe if "nodes" in frame.value.columns]  # no result from a cancelled run
    assert endpoint.seen.count() == sent  # and nothing more was sent after it

    monkeypatch.setattr(evaluation, "_asking", asking)
    at.button(key="eval.run").click().run()
    assert not at.exception, at.exception
    table = results(at)
    # Running again asks only for the rest: every prompt once over both runs.
    assert endpoint.seen.count() == calls == len({request["prompt"] for request in endpoint.seen.requests})
    assert table["llm_cached"][0] == sent and table["llm_requests"][0] == calls - sent
    assert not any("Cancelled before" in caption.value for caption in at.caption)


def test_the_tune_tab_scores_its_pick_with_and_without_the_llm_extractors_and_a_rerun_sends_nothing(endpoint):
    pytest.importorskip("openai")
    pytest.importorskip("llama_index.llms.openai_like")
    at = apptest_support.open_page(PAGE, apptest_support.SENTENCE, timeout=600)
    at.session_state["cs_config"] = PipelineConfig(
        splitter=get_splitter("sentence"),
        extractors=(get_extractor("llm_keywords", keywords=3),),
        llm=endpoint.connection("echo-tune-page"),
    )
    at.run()
    at.segmented_control(key="eval.mode").set_value("Tune").run()
    at.radio(key="eval.tune.space").set_value("own").run()
    at.text_input(key="eval.tune.sentence.values.chunk_size").set_value("256").run()
    at.text_input(key="eval.tune.sentence.values.chunk_overlap").set_value("0").run()
    at.multiselect(key="eval.tune.modes").set_value(["bm25"]).run()
    at.text_input(key="eval.tune.top_ks").set_value("1, 3").run()
    at.checkbox(key="eval.tune.default").uncheck().run()  # BM25 only: nothing to embed
    assert any("The LLM ones ask" in caption.value for caption in at.caption)
    at.checkbox(key="eval.tune.extractors").check().run()
    assert endpoint.seen.count() == 0  # nothing is sent before Search
    at.button(key="eval.tune.run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    (table,) = [frame.value for frame in at.dataframe if "llm_requests" in frame.value.columns]
    sent = endpoint.seen.count()
    assert table["config"].str.endswith(WITH).tolist() == [True, False]
    assert table["config"].str.endswith(WITHOUT).tolist() == [False, True]
    # One call per chunk of the pick, what the endpoint counted; the row without asks nothing.
    assert sent > 0 and table["llm_requests"][0] == sent == table["nodes"][0]
    assert table["llm_requests"].isna().tolist() == [False, True]
    # The pick's held-out number with the extractors, beside the in-sample table (core's sentence, core's numbers).
    held = held_out_with_extractors(at.session_state["cs_evaluation"]["result"])
    assert held is not None and any(caption.value == held_out_sentence(held) for caption in at.caption)

    at.button(key="eval.tune.run").click().run()
    assert not at.exception, at.exception
    (again,) = [frame.value for frame in at.dataframe if "llm_requests" in frame.value.columns]
    assert endpoint.seen.count() == sent and again["llm_cached"][0] == sent
    shown = [str(e.value) for kind in ("markdown", "caption", "info", "warning", "error") for e in getattr(at, kind)]
    assert not leaks("\n".join([*shown, again.to_csv()]))
