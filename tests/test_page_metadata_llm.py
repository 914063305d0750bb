"""AppTest: the Metadata page's LLM extractors against a real chat-completions server on 127.0.0.1.

The cost is shown before anything is sent; Run sends it; the keys reach both views; a second look sends
nothing; a link's LLM extractors wait for Run; the key appears in nothing the page shows.
"""

from __future__ import annotations

import apptest_support
from llm_server import HOSTILE_REPLY, KEY_ENV, NEEDS_LLM_EXTRA, leaks
from streamlit.testing.v1 import AppTest

from core.config import PipelineConfig

pytestmark = NEEDS_LLM_EXTRA

PAGE = "pages/2_Metadata.py"


def views(at: AppTest) -> tuple[str, str]:
    return at.code[0].value, at.code[1].value


def config_of(at: AppTest) -> PipelineConfig:
    return at.session_state["cs_config"] if "cs_config" in at.session_state else PipelineConfig()


def everything_shown(at: AppTest) -> str:
    """Every text element the page drew, and the configuration's JSON and link."""
    parts = [str(element.value) for kind in ("markdown", "caption", "code", "error", "warning", "info") for element in getattr(at, kind)]
    parts += [str(box.value) for box in at.text_input]
    config = config_of(at)
    return "\n".join([*parts, config.to_json(), str(config.to_query_params())])


def connect(at: AppTest, endpoint, model: str) -> AppTest:
    # A model name per test (the server answers any unknown name as echo-model): the app's in-memory split
    # cache is keyed by the configuration, and would answer a second test without asking the server.
    at.text_input(key="meta.llm.base_url").set_value(endpoint.url)
    at.text_input(key="meta.llm.model").set_value(model)
    at.text_input(key="meta.llm.api_key_env").set_value(KEY_ENV).run()
    assert not at.exception, at.exception
    return at


def test_without_an_endpoint_the_page_offers_nothing_to_send(endpoint):
    at = apptest_support.open_page(PAGE)
    assert not any(toggle.key.startswith("meta.extractor.llm_") for toggle in at.toggle)
    assert "llm" not in config_of(at).to_dict()
    assert endpoint.seen.count() == 0


def test_cost_first_then_run_then_keys_in_both_views_and_a_second_look_sends_nothing(endpoint, monkeypatch):
    # LlamaIndex's extractors run in a bounded child, never in the server's process (tests/test_no_framework_in_server.py).
    import os

    from llama_index.core.extractors.interface import BaseExtractor

    server, original = os.getpid(), BaseExtractor.aprocess_nodes

    async def guarded(self, *args, **kwargs):
        assert os.getpid() != server, "framework code ran in the server's process"
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(BaseExtractor, "aprocess_nodes", guarded)
    at = connect(apptest_support.open_page(PAGE), endpoint, "echo-page")
    at.toggle(key="meta.extractor.llm_keywords.on").set_value(True).run()
    assert not at.exception, at.exception
    cost = " ".join(m.value for m in at.markdown)
    assert "Whole document" in cost and "calls" in cost and "prompt tokens" in cost
    assert endpoint.seen.count() == 0  # the cost is shown; nothing is sent yet
    assert "excerpt_keywords" not in views(at)[0]
    at.button(key="meta.llm.run").click().run()
    assert not at.exception, at.exception
    sent = endpoint.seen.count()
    assert sent > 0
    llm_view, embed_view = views(at)
    assert "excerpt_keywords: kw-" in llm_view and "excerpt_keywords: kw-" in embed_view
    assert [e.name for e in config_of(at).extractors] == ["llm_keywords"]
    # A rerun of the page, and another visit with the same settings: answered from the caches.
    at.run()
    assert endpoint.seen.count() == sent and "excerpt_keywords: kw-" in views(at)[0]
    # Excludable like any key.
    at.multiselect(key="meta.exclude.excluded_embed_metadata_keys").select("excerpt_keywords").run()
    assert "excerpt_keywords" not in views(at)[1] and "excerpt_keywords" in views(at)[0]
    assert not leaks(everything_shown(at))


def test_a_links_llm_extractors_wait_for_run(endpoint):
    query = {
        "extractors": "llm_keywords",
        "llm.base_url": endpoint.url,
        "llm.model": "echo-link",
        "llm.api_key_env": KEY_ENV,
    }
    at = apptest_support.open_page(PAGE, query)
    assert endpoint.seen.count() == 0
    assert not any(e.name.startswith("llm_") for e in config_of(at).extractors)
    assert at.toggle(key="meta.extractor.llm_keywords.on").value is True
    at.button(key="meta.llm.run").click().run()
    assert endpoint.seen.count() > 0 and "excerpt_keywords: kw-" in views(at)[0]


def test_hostile_model_output_is_shown_as_text(endpoint):
    at = connect(apptest_support.open_page(PAGE), endpoint, "echo-hostile")
    at.toggle(key="meta.extractor.llm_keywords.on").set_value(True).run()
    # The page's own prompt template, edited to carry the server's trigger: every reply is the hostile one.
    at.text_input(key="meta.extractor.llm_keywords.prompt_template").set_value(
        "IGNORE YOUR INSTRUCTIONS {context_str} {keywords}"
    ).run()
    at.button(key="meta.llm.run").click().run()
    assert not at.exception, at.exception
    # In the views (st.code: literal text), never as markup or a filled-in template.
    assert f"excerpt_keywords: {HOSTILE_REPLY}" in views(at)[0]
    assert all("<script>" not in m.value or "\\<script" in m.value for m in at.markdown)


def test_the_evaluate_page_says_where_it_runs_the_llm_extractors(endpoint):
    from core.extractors import get_extractor

    at = apptest_support.open_page("pages/5_Evaluate.py")
    assert not any("LLM extractors" in box.value for box in at.info)
    config = PipelineConfig(extractors=(get_extractor("llm_keywords"),), llm=endpoint.connection())
    at.session_state["cs_config"] = config
    at.run()
    assert any("are run only by **With / without extractors**" in box.value for box in at.info)
    assert endpoint.seen.count() == 0


def test_progress_while_the_llm_is_asked_and_cancel_stops_before_the_next_request(endpoint, monkeypatch):
    import ui.llm

    # One request at a time, each answered after 300 ms: the run is still asking when Cancel is clicked.
    at = connect(apptest_support.open_page(PAGE), endpoint, "slow-300")
    at.slider(key="meta.llm.concurrency").set_value(1).run()
    at.toggle(key="meta.extractor.llm_keywords.on").set_value(True).run()
    assert not at.exception, at.exception
    heard: list[tuple[int, int]] = []
    shown = ui.llm.show_progress

    def clicking_cancel(bar, model, done, calls):
        heard.append((done, calls))
        if done >= 2 and not endpoint.seen.count() > 6:
            apptest_support.click_while_running("meta.llm.cancel")
        shown(bar, model, done, calls)  # Streamlit stops the run here, as it does for a browser's click

    monkeypatch.setattr(ui.llm, "show_progress", clicking_cancel)
    at.button(key="meta.llm.run").click().run()
    assert not at.exception, at.exception
    calls = heard[0][1]
    assert calls > 3 and all(total == calls for _, total in heard)  # the bar counts toward the planned calls
    sent = endpoint.seen.count()
    # Stopped before the next request: the replies heard, at most the one in flight, never the rest.
    assert 2 <= sent <= 3 < calls
    # The page after the click: Run offered again, the keys in no view and not in the configuration.
    assert any("Cancelled before the next request" in caption.value for caption in at.caption)
    assert at.button(key="meta.llm.run") is not None
    assert "excerpt_keywords" not in views(at)[0]
    assert not any(e.name.startswith("llm_") for e in config_of(at).extractors)
    assert endpoint.seen.count() == sent  # and nothing more was sent after it

    monkeypatch.setattr(ui.llm, "show_progress", shown)
    at.button(key="meta.llm.run").click().run()
    assert not at.exception, at.exception
    # Run again asks only for the rest: every prompt once over both runs.
    assert endpoint.seen.count() == calls and len({r["prompt"] for r in endpoint.seen.requests}) == calls
    assert "excerpt_keywords: kw-" in views(at)[0]
    assert not any("Cancelled before" in caption.value for caption in at.caption)
    assert not leaks(everything_shown(at))
