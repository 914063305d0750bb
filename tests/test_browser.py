"""Real-browser tests: Debian's chromium driven by Playwright against `streamlit run app.py`.

These run in CI (they are never skipped): a missing chromium is a failure.
Streamlit pages take a while on a small machine, so every wait is on visible
text with a generous timeout, never a fixed sleep.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from browser_support import idle, loaded_count, open_chunks
from browser_support import pick as choose

from core import MetadataMode, load_bytes
from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.documents import run_split
from core.splitters import get_splitter

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
WAIT_MS = int(os.environ.get("CHUNKSCOPE_BROWSER_WAIT_MS", "180000"))
XSS_TEXT = (
    "# Untrusted notes\n\n"
    "Here is a script: <script>alert(1)</script> and it must show as text.\n\n"
    'And an image: <img src=x onerror=alert(2)> that must not load.\n\n'
    "A closing paragraph so the splitter has more than one piece to cut.\n"
)


@pytest.fixture
def page(browser, app_url, request):
    context = browser.new_context(viewport={"width": 1440, "height": 1600})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(app_url, wait_until="domcontentloaded")
    page.get_by_text("Loaded documents").first.wait_for(state="visible")
    yield page
    # The last picture of every test, pass or fail: the first thing to look at when one fails.
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"last_{request.node.name}.png"))
    context.close()


# -- helpers ----------------------------------------------------------------------


def upload(page, files: list[dict]) -> None:
    """Upload through the file input; wait until the table counts the new documents."""
    idle(page)
    before = loaded_count(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(files)
    page.get_by_text(f"Loaded documents · {before + len(files)}").first.wait_for(state="visible")
    idle(page)


def pick(page, label: str, option: str, shows: str) -> None:
    """Choose ``option`` in the select box labelled ``label``; wait until the page ``shows`` the result."""
    choose(page, label, option)
    page.get_by_text(shows, exact=False).first.wait_for(state="visible")
    idle(page)


def nodes_metric(page) -> int:
    card = page.locator('[data-testid="stMetric"]').filter(has_text="Nodes").first
    return int(card.locator('[data-testid="stMetricValue"]').inner_text().replace(",", "").strip())


def code_blocks(page) -> list[str]:
    return [block.inner_text() for block in page.locator('[data-testid="stCode"] code').all()]


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# -- the tests --------------------------------------------------------------------


def test_upload_a_pdf_tune_the_chunk_size_and_read_a_node(page) -> None:
    data = (ROOT / "sample_docs" / "rag_handbook.pdf").read_bytes()
    name = "uploaded_rag_handbook.pdf"
    upload(page, [{"name": name, "mimeType": "application/pdf", "buffer": data}])

    open_chunks(page)
    pick(page, "Document", name, shows=f"{name} · ")
    pick(page, "Splitter", "Sentence", shows="split by Sentence")
    assert page.locator(".cs-source .page").count() >= 1  # PDF page boundaries are drawn
    before = nodes_metric(page)
    assert before == len(run_split(load_bytes(data, name), PipelineConfig(splitter=get_splitter("sentence"))))

    size_box = page.get_by_label("Chunk size", exact=True)
    size_box.fill("128")
    size_box.press("Enter")
    page.wait_for_function(
        """(before) => {
            const card = [...document.querySelectorAll('[data-testid="stMetric"]')].find(c => c.innerText.includes('Nodes'));
            const value = card && card.querySelector('[data-testid="stMetricValue"]');
            return value && Number(value.innerText.replace(/,/g, '')) !== before;
        }""",
        arg=before,
        timeout=WAIT_MS,
    )
    idle(page)
    after = nodes_metric(page)
    expected = run_split(load_bytes(data, name), PipelineConfig(splitter=get_splitter("sentence", chunk_size=128)))
    assert after == len(expected) > before

    page.get_by_role("button", name=re.compile(r"Next #1")).click()
    page.get_by_role("heading", name="Node #1").wait_for(state="visible")
    idle(page)
    llm, embed = code_blocks(page)[:2]
    assert squash(llm) == squash(expected[1].get_content(MetadataMode.LLM))
    assert squash(embed) == squash(expected[1].get_content(MetadataMode.EMBED))
    assert f"file_name: {name}" in llm

    # The source pane follows the node opened: a node far down is scrolled into the pane's view.
    far = min(len(expected) - 1, 25)
    picker = page.locator('[data-testid="stSelectbox"] input[role="combobox"][aria-label="Open node"]').first
    picker.click()
    picker.fill(f"#{far} ·")  # the list is long: type to filter it, as a person would
    page.get_by_role("option").filter(has_text=f"#{far} ·").first.click()
    page.get_by_role("heading", name=f"Node #{far}").wait_for(state="visible")
    page.wait_for_function(
        """() => {
            const tag = document.querySelector('.cs-source .sel-tag');
            if (!tag) return false;
            const pane = tag.closest('.cs-source').getBoundingClientRect(), box = tag.getBoundingClientRect();
            return tag.closest('.cs-source').scrollTop > 0 && box.top >= pane.top && box.bottom <= pane.bottom;
        }""",
        timeout=WAIT_MS,
    )

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "chunks_pdf.png"), full_page=True)


def test_untrusted_html_in_documents_never_runs(page) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    payload = XSS_TEXT.encode()
    evil_name = "notes <img src=x onerror=alert(3)>.txt"
    upload(
        page,
        [
            {"name": "evil.md", "mimeType": "text/markdown", "buffer": payload},
            {"name": evil_name, "mimeType": "text/plain", "buffer": payload},
        ],
    )
    open_chunks(page)
    for name in ("evil.md", evil_name):
        pick(page, "Document", name, shows=f"{name} · ")
        source = page.locator(".cs-source").first
        source.get_by_text("<script>alert(1)</script>", exact=False).first.wait_for(state="visible")
        assert "<img src=x onerror=alert(2)>" in source.inner_text()
        # The reader views show the payload literally as well.
        assert any("<script>alert(1)</script>" in block for block in code_blocks(page))
        injected = page.evaluate(
            """() => ({
                images: [...document.querySelectorAll('img')].filter(i => i.getAttribute('src') === 'x').length,
                scripts: [...document.querySelectorAll('script')].filter(s => s.textContent.includes('alert(')).length,
                handlers: [...document.querySelectorAll('[onerror]')].length,
            })"""
        )
        assert injected == {"images": 0, "scripts": 0, "handlers": 0}
    page.wait_for_timeout(500)  # let any (wrongly) scheduled error handler fire before we check
    assert dialogs == []
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "untrusted_text.png"), full_page=True)


def test_run_a_sample_query_and_read_a_stage_trace(page, app_url) -> None:
    from core.embed.embedder import get_embedder
    from core.loaders import load
    from core.query.chain import final_context, run_query
    from core.splitters.hierarchical import leaf_nodes
    from ui.documents import sample_files
    from ui.query import sample_queries

    # The sentence splitter (a link to it, as a shared link opens it): five chunks retrieved, three kept.
    page.goto(f"{app_url}/Query?splitter=sentence", wait_until="domcontentloaded")
    page.get_by_text("Final context").first.wait_for(state="visible")
    idle(page)
    pick(page, "Add a postprocessor", "Top n", shows="Keep only the first n nodes")
    page.get_by_role("button", name="Add to the chain").click()
    tab = page.get_by_role("tab", name="1 · top_n")
    tab.wait_for(state="visible")
    idle(page)
    tab.click()
    idle(page)

    # What core does with the same documents, query and chain (the first sample query, top 5, then top_n 3).
    documents = [doc for path in sample_files() for doc in load(path)]
    nodes = leaf_nodes(run_split(documents, PipelineConfig(splitter=get_splitter("sentence"))))
    expected = run_query(nodes, sample_queries()[0].query, embedder=get_embedder(), postprocessors=[("top_n", {})], retrieval=RetrievalSettings(top_k=5))
    stage = expected.stages[0]

    summary = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text="1 · top_n:").first.inner_text()
    assert "5 in → 3 out · 2 dropped" in summary
    # The visible tab's table: the grid keeps an accessible copy of its cells in the DOM.
    grid = page.locator('[role="tabpanel"]:visible [data-testid="stDataFrame"] table').first
    cells = grid.evaluate("t => [...t.querySelectorAll('tr')].map(r => [...r.children].map(c => c.innerText.trim()))")
    header, rows = cells[0], [row for row in cells[1:] if any(row)]
    fates = [row[header.index("Fate")] for row in rows]
    assert fates == [stage.fate(item.id) for item in stage.nodes_in]
    assert fates[3:] == ["dropped: it came at position 4, after the first 3", "dropped: it came at position 5, after the first 3"]
    context = code_blocks(page)[-1]
    assert squash(context) == squash(final_context(expected.final))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "query_trace.png"), full_page=True)
