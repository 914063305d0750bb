"""The HTML snapshot in a real browser: opened from disk, with JavaScript on and off, it shows everything and loads nothing.

No app server: the snapshot is written to a file and opened through ``file://``,
as a stakeholder opens an attachment. Hostile metadata rides along in every
node view, and the query in the trace is markup; neither may run.
"""

from __future__ import annotations

import pytest
from browser_support import WAIT_MS
from hostile.make_hostile import XSS_IMG

from core.config import PipelineConfig
from core.config_parts import MetadataSettings, RetrievalSettings
from core.documents import run_split
from core.loaders import load
from core.output.snapshot import snapshot_html
from core.query.chain import run_query
from core.schema import MetadataMode
from core.splitters import get_splitter

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

QUERY = '<img src=x onerror="window.__pwned=3"> how much overlap'


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory, sample_docs):
    config = PipelineConfig(
        splitter=get_splitter("character", chunk_size=400, chunk_overlap=60),
        metadata=MetadataSettings(extra=(("author", XSS_IMG),)),
    )
    (document,) = load(sample_docs / "chunking_guide.md")
    nodes = run_split([document], config)
    result = run_query(nodes, QUERY, postprocessors=[("top_n", {"top_n": 2})], retrieval=RetrievalSettings(mode="bm25", top_k=4))
    chosen = (nodes[2].id, nodes[3].id)
    path = tmp_path_factory.mktemp("snapshot") / "snapshot.html"
    path.write_text(snapshot_html(document, nodes, config, selected_ids=chosen, query_result=result), encoding="utf-8")
    return path, document, [nodes[2], nodes[3]], len(nodes)


@pytest.mark.parametrize("javascript", [True, False], ids=["js-on", "js-off"])
def test_the_snapshot_opens_from_disk_shows_spans_and_views_and_loads_nothing_else(browser, snapshot, javascript):
    path, document, chosen, node_count = snapshot
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, java_script_enabled=javascript)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        page.goto(path.as_uri(), wait_until="load")
        # The source: one coloured span per chunk at least, and a #n tag for every node, drawn and visible.
        source = page.locator(".cs-source").first
        source.wait_for(state="visible")
        assert page.locator(".cs-source .tag").count() == node_count
        first_span = page.locator(".cs-source span.c").first
        assert first_span.is_visible()
        assert first_span.evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"
        assert document.text[:40] in source.inner_text()
        # The chosen nodes up close: both views, as text, the hostile metadata included.
        views = page.locator("article.view")
        assert views.count() == 2
        for number, node in enumerate(chosen):
            blocks = views.nth(number).locator("pre")
            assert blocks.nth(0).is_visible() and blocks.nth(1).is_visible()
            assert blocks.nth(0).inner_text() == node.get_content(MetadataMode.LLM)
            assert blocks.nth(1).inner_text() == node.get_content(MetadataMode.EMBED)
        assert QUERY in page.locator("#query blockquote").inner_text()
        # Nothing was injected or run, and the file asked for nothing but itself.
        assert page.locator("img, script, iframe").count() == 0
        if javascript:
            assert page.evaluate("() => window.__pwned === undefined")
        assert dialogs == []
        assert requests == [path.as_uri()]
    finally:
        context.close()
