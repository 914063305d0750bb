"""Untrusted text in a real browser: hostile documents, file names and metadata show literally and never run.

One session uploads the catalogue's hostile HTML and Markdown, a file whose
name is markup (and a Markdown image pointing off-site), and an encrypted PDF,
with a metadata value from the link that is an ``<img onerror>`` payload. On
Home and on the Chunks page (source, node detail, LLM and EMBED views) the
payloads read as text; no dialog opens, no element is injected, no handler is
set, and the page requests nothing outside the app's own origin.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from browser_support import WAIT_MS, RequestLog, idle, open_chunks, options, pick, start_upload, wait_for_count
from hostile.make_hostile import XSS_IMG

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

HOSTILE = Path(__file__).resolve().parent / "hostile"
META_PAYLOAD = "<img src=x onerror=\"window.__pwned=2;alert('meta')\">"
MARKUP_NAME = "<img src=x onerror=alert(3)>.md"
# A file name that is a Markdown image to an outside address: rendered as Markdown, it would fetch it.
IMAGE_NAME = "![t](https:evil.example) name.md"

# Things that exist only if something ran or was injected.
PROBE = """() => ({
    pwned: window.__pwned === undefined ? null : window.__pwned,
    xImages: [...document.querySelectorAll('img')].filter(i => (i.getAttribute('src') || '') === 'x').length,
    offsiteImages: [...document.querySelectorAll('img')].filter(i => (i.src || '').includes('evil.example')).length,
    handlers: document.querySelectorAll('[onerror],[onload],[onclick],[onmouseover]').length,
    alertScripts: [...document.querySelectorAll('script')].filter(s => s.textContent.includes('alert(')).length,
    iframes: [...document.querySelectorAll('iframe')].filter(f => (f.src || '').includes('evil')).length,
    jsLinks: [...document.querySelectorAll('a')].filter(a => (a.getAttribute('href') || '').startsWith('javascript')).length,
})"""
CLEAN = {"pwned": None, "xImages": 0, "offsiteImages": 0, "handlers": 0, "alertScripts": 0, "iframes": 0, "jsLinks": 0}


def code_blocks(page) -> list[str]:  # noqa: ANN001
    return [block.inner_text() for block in page.locator('[data-testid="stCode"] code').all()]


def test_hostile_documents_names_and_metadata_show_literally_and_run_nothing(browser, app_url: str) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 1600})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    requests = RequestLog(page, app_url)
    try:
        page.goto(f"{app_url}/?meta.author={quote(META_PAYLOAD)}", wait_until="domcontentloaded")
        page.get_by_text("Loaded documents").first.wait_for(state="visible")
        raw_md = (HOSTILE / "raw_html.md").read_bytes()
        files = [
            {"name": "script_and_handlers.html", "mimeType": "text/html", "buffer": (HOSTILE / "script_and_handlers.html").read_bytes()},
            {"name": "raw_html.md", "mimeType": "text/markdown", "buffer": raw_md},
            # Different bytes each: identical files would be one document.
            {"name": MARKUP_NAME, "mimeType": "text/markdown", "buffer": raw_md + b"\nCopy two.\n"},
            {"name": IMAGE_NAME, "mimeType": "text/markdown", "buffer": raw_md + b"\nCopy three.\n"},
            {"name": "encrypted.pdf", "mimeType": "application/pdf", "buffer": (HOSTILE / "encrypted.pdf").read_bytes()},
        ]  # fmt: skip
        before = start_upload(page, files)
        wait_for_count(page, before + 4)

        # The encrypted PDF's sentence stands next to its name; the other uploads stayed.
        failure = page.get_by_text("is encrypted and cannot be read without its password").first
        failure.wait_for(state="visible")
        assert "encrypted.pdf" in page.locator('[data-testid="stMain"]').inner_text()
        assert page.evaluate(PROBE) == CLEAN

        open_chunks(page)
        documents = options(page, "Document")
        for name in ("script_and_handlers.html", "raw_html.md", MARKUP_NAME, IMAGE_NAME):
            assert any(name in option for option in documents), f"{name!r} not among {documents}"

        for name in ("raw_html.md", MARKUP_NAME, IMAGE_NAME):
            pick(page, "Document", next(option for option in documents if name in option))
            # The node detail has been redrawn for this file (the reader views name it).
            page.locator('[data-testid="stCode"] code').filter(has_text=f"file_name: {name}").first.wait_for()
            idle(page)
            if name == IMAGE_NAME:  # the picked file's name, shown as text, not a picture fetched from elsewhere
                shown = page.get_by_text(re.compile(re.escape("![t](https:evil.example)")))
                shown.first.wait_for(state="attached", timeout=WAIT_MS)
                assert page.locator('img[src*="evil.example"]').count() == 0
            source = page.locator(".cs-source").first
            source.get_by_text("<script>alert('markdown script')</script>").first.wait_for(state="visible")
            assert XSS_IMG in source.inner_text()
            assert "[javascript link](javascript:alert('md-link'))" in source.inner_text()
            # The node detail: what the LLM and the embedding model read, metadata and all, as text.
            views = "\n".join(code_blocks(page))
            assert f"author: {META_PAYLOAD}" in views
            assert f"file_name: {name}" in views
            assert XSS_IMG in views
            assert page.evaluate(PROBE) == CLEAN

        pick(page, "Document", next(option for option in documents if "script_and_handlers.html" in option))
        source = page.locator(".cs-source").first
        source.get_by_text("Escaped markup shows literally").first.wait_for(state="visible")
        assert "<script>alert(1)</script>" in source.inner_text()
        assert "alert('head script')" not in page.locator('[data-testid="stMain"]').inner_text()

        # The IMAGE_NAME caption and labels are text, not a picture fetched from elsewhere.
        idle(page)
        page.wait_for_timeout(500)  # give any wrongly scheduled handler the chance to fire before checking
        assert page.evaluate(PROBE) == CLEAN
        assert dialogs == []
        assert requests.foreign == [], requests.foreign
    finally:
        context.close()


# Markdown a shared link or a file name may carry: a live off-site link and images that would be fetched.
PHISH_KEY = "[Your session expired - click to sign in again](http://attacker.example/phish)"
BEACON = "![b](http://attacker.example/beacon.png)"
QUERIES_NAME = "![q](http://attacker.example/queries.png) mine.json"
OFF_SITE = """() => ({
    links: [...document.querySelectorAll('a')].filter(a => (a.getAttribute('href') || '').includes('attacker')).length,
    images: [...document.querySelectorAll('img')].filter(i => (i.getAttribute('src') || '').includes('attacker')).length,
})"""


def test_markdown_in_links_and_file_names_is_text_and_fetches_nothing(browser, app_url: str) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    requests = RequestLog(page, app_url)
    try:
        link = f"{app_url}/?{quote(PHISH_KEY)}=1&splitter={quote(BEACON)}&meta.{quote(BEACON)}={quote(BEACON)}"
        page.goto(link, wait_until="domcontentloaded")
        page.get_by_text("Loaded documents").first.wait_for(state="visible")
        idle(page)
        # The link's keys and values are reported, literally.
        warnings = page.locator('[data-testid="stAlert"]').all_inner_texts()
        assert any("Your session expired" in text and "attacker.example/phish" in text for text in warnings), warnings
        assert page.evaluate(OFF_SITE) == {"links": 0, "images": 0}

        page.locator('[data-testid="stSidebarNav"]').get_by_text("Evaluate", exact=True).click()
        page.get_by_text("Queries", exact=True).first.click()
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
            [{"name": QUERIES_NAME, "mimeType": "application/json", "buffer": b"{not json"}]
        )
        error = page.locator('[data-testid="stAlert"]').filter(has_text="is not valid JSON").first
        error.wait_for(state="visible")
        assert "attacker.example/queries.png" in error.inner_text()
        idle(page)
        page.wait_for_timeout(500)  # an image wrongly rendered would have been requested by now
        assert page.evaluate(OFF_SITE) == {"links": 0, "images": 0}
        assert requests.foreign == [], requests.foreign
    finally:
        context.close()
