"""The Export page in a real browser: a shared link's loader option is shown as text, and fetches nothing.

The reported attack: a share link set ``loader.json.text_field`` to Markdown; the
Export page's "Where LlamaIndex differs" box rendered it as a live off-site link
and an image the browser requested. The option now reaches the script as a value
of its ``LOADER_OPTIONS`` literal (no note quotes it): shown in the code, as text.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from browser_support import WAIT_MS, RequestLog, idle

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

PAYLOAD = "[x](https://evil.example) ![i](https://evil.example/i.png)"
# Links and images that point at the attacker's host (the share link's own "Open" button carries the payload in
# its query string, to this app: that one is fine).
OFF_SITE = """() => ({
    links: [...document.querySelectorAll('a[href]')].filter(a => new URL(a.href).hostname.includes('evil')).length,
    images: [...document.querySelectorAll('img')].filter(i => (i.getAttribute('src') || '').includes('evil')).length,
})"""


def test_a_loader_option_from_a_link_shows_as_text_in_the_exported_script(browser, app_url: str) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    requests = RequestLog(page, app_url)
    try:
        page.goto(
            f"{app_url}/Export?splitter=character&loader.json.text_field={quote(PAYLOAD)}",
            wait_until="domcontentloaded",
        )
        script = page.locator('[data-testid="stCode"]').filter(has_text="LOADER_OPTIONS").first
        script.wait_for(state="visible")
        idle(page)
        text = script.inner_text().replace("\u2060", "")
        assert f"{{'json': {{'text_field': '{PAYLOAD}'}}}}" in " ".join(text.split())  # the literal, as text
        notes = page.locator('[data-testid="stAlert"]').filter(has_text="Where LlamaIndex differs")
        assert "evil" not in " ".join(notes.all_inner_texts())  # no note quotes it
        page.wait_for_timeout(500)  # an image wrongly rendered would have been requested by now
        assert page.evaluate(OFF_SITE) == {"links": 0, "images": 0}
        assert requests.foreign == [], requests.foreign
    finally:
        context.close()
