"""A link whose split would hold the GIL for hours: the server keeps answering and other sessions keep working.

``\\s*\\s*\\s*\\d`` passes the regex check (its backtracking is polynomial, not
exponential), yet LangChain's ``re.split`` on a run of 20,000 spaces tries about
10^12 ways, in C, holding the GIL the whole time: in-process, that froze every
session of the server. Split in a child (core.runtime.bounded), the server's event loop
runs on: ``/_stcore/health`` answers within a second, a second session renders,
and the first session gets the deadline's sentence instead of a spinner for ever.
"""

from __future__ import annotations

import time
import urllib.request
from urllib.parse import quote

import pytest
from browser_support import WAIT_MS, idle, start_upload, wait_for_count

from core.limits import DEFAULT_LIMITS

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

SLOW_SEPARATOR = "\\s*\\s*\\s*\\d"
SLOW_TEXT = ("A line of ordinary text.\n" + " " * 20_000 + "and the end.\n").encode()
SLOW_LINK = f"?splitter=langchain.character&separator={quote(SLOW_SEPARATOR)}&is_separator_regex=true"


def health_seconds(app_url: str) -> float:
    started = time.monotonic()
    with urllib.request.urlopen(f"{app_url}/_stcore/health", timeout=10) as response:
        assert response.status == 200
    return time.monotonic() - started


def test_a_slow_split_from_a_link_stalls_neither_the_server_nor_other_sessions(browser, app_url: str) -> None:
    slow = browser.new_context(viewport={"width": 1280, "height": 1000})
    other = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = slow.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(f"{app_url}/{SLOW_LINK}", wait_until="domcontentloaded")
        page.get_by_text("Loaded documents").first.wait_for(state="visible")
        before = start_upload(page, [{"name": "spaces.txt", "mimeType": "text/plain", "buffer": SLOW_TEXT}])
        wait_for_count(page, before + 1)

        page.locator('[data-testid="stSidebarNav"]').get_by_text("Chunks", exact=True).click()
        page.get_by_text("Splitting…").first.wait_for(state="visible")  # the split has started and is stuck

        # While it runs: the server answers at once, every time.
        answers = []
        for _ in range(5):
            answers.append(health_seconds(app_url))
            time.sleep(0.5)
        assert max(answers) < 1.0, answers

        # ...and another person's session renders, and splits its own document.
        second = other.new_page()
        second.set_default_timeout(WAIT_MS)
        second.goto(app_url, wait_until="domcontentloaded")
        second.get_by_text("Loaded documents").first.wait_for(state="visible", timeout=60_000)
        second.locator('[data-testid="stSidebarNav"]').get_by_text("Chunks", exact=True).click()
        second.get_by_text("LLM view").first.wait_for(state="visible", timeout=60_000)
        idle(second)
        assert page.get_by_text("Splitting…").first.is_visible()  # the first session is still waiting on its child
        assert health_seconds(app_url) < 1.0

        # At the deadline the first session gets the sentence naming the file, the splitter and the limit.
        error = page.locator('[data-testid="stAlert"]').filter(has_text="took longer than the")
        error.first.wait_for(state="visible", timeout=(DEFAULT_LIMITS.split_seconds + 120) * 1000)
        text = error.first.inner_text()
        assert "spaces.txt" in text and "langchain.character" in text
        assert f"{DEFAULT_LIMITS.split_seconds:g} s limit" in text
        assert health_seconds(app_url) < 1.0
    finally:
        slow.close()
        other.close()
