"""The Chunks page's source view in chromium on a long text: paged by number, the selected node's part and span,
the last part reachable, and the text's markup shown as text, never run."""

from __future__ import annotations

import os
import re

import pytest
from browser_support import idle, loaded_count, open_chunks
from browser_support import pick as choose
from test_page_chunks_source import HOSTILE, NAME, TEXT

from core import load_bytes
from core.config import PipelineConfig
from core.documents import run_split
from core.output.highlight import source_windows, window_chars_for
from core.splitters import get_splitter

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

WAIT_MS = int(os.environ.get("CHUNKSCOPE_BROWSER_WAIT_MS", "180000"))


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1440, "height": 1600})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(app_url, wait_until="domcontentloaded")
    page.get_by_text("Loaded documents").first.wait_for(state="visible")
    yield page
    context.close()


def set_number(page, label: str | re.Pattern, value: int) -> None:  # noqa: ANN001
    idle(page)
    box = page.get_by_role("spinbutton", name=label, exact=isinstance(label, str))
    box.fill(str(value))
    box.press("Enter")
    idle(page)


def test_a_long_text_pages_to_its_end_and_shows_the_selected_node(page) -> None:  # noqa: ANN001
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    idle(page)
    before = loaded_count(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        [{"name": NAME, "mimeType": "text/plain", "buffer": TEXT.encode()}]
    )
    page.get_by_text(f"Loaded documents · {before + 1}").first.wait_for(state="visible")
    idle(page)
    open_chunks(page)  # it opens on the file just uploaded
    page.get_by_text(f"{NAME} · ", exact=False).first.wait_for(state="visible")
    choose(page, "Splitter", "Character")
    set_number(page, "Chunk overlap", 50)
    set_number(page, "Chunk size", 400)
    (document,) = load_bytes(TEXT.encode(), NAME)
    nodes = run_split([document], PipelineConfig(splitter=get_splitter("character", chunk_size=400, chunk_overlap=50)))
    windows = source_windows(document, window_chars_for(len(document.text), len(nodes)))
    page.get_by_text(f"Part 1 of {len(windows)}: ").first.wait_for(state="visible")

    # The last part ends where the text does, its markup drawn as text.
    set_number(page, re.compile(r"Showing part of the document: part"), len(windows))
    source = page.locator(".cs-source").first
    source.get_by_text("THE END", exact=False).first.wait_for(state="visible")
    assert source.inner_text().rstrip().endswith("THE END " + HOSTILE)
    injected = page.evaluate(
        """() => ({
            images: [...document.querySelectorAll('img')].filter(i => i.getAttribute('src') === 'x').length,
            scripts: [...document.querySelectorAll('script')].filter(s => s.textContent.includes('alert(')).length,
        })"""
    )
    assert injected == {"images": 0, "scripts": 0} and not dialogs

    # Opening a node far in the text shows its part, its tag selected and its span outlined.
    far = len(nodes) * 2 // 3
    node = nodes[far]
    holding = next(i for i, w in enumerate(windows) if w.start <= node.start_char < w.end)
    set_number(page, re.compile(r"^Open node #"), far)
    page.get_by_role("heading", name=f"Node #{far}").wait_for(state="visible")
    page.get_by_text(f"Part {holding + 1} of {len(windows)}: ").first.wait_for(state="visible")
    assert page.locator(".cs-source .sel-tag").inner_text() == f"#{far}"
    outlined = "".join(page.locator(".cs-source .c.sel").all_inner_texts())
    shown_end = min(node.end_char, windows[holding].end)
    assert outlined.replace("\n", "") == document.text[node.start_char : shown_end].replace("\n", "")
