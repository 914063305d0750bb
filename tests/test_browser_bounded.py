"""A link whose split would hold the GIL for hours: the server keeps answering and other sessions keep working.

``\\s*\\s*\\s*\\d`` passes the regex check (its backtracking is polynomial, not
exponential), yet LangChain's ``re.split`` on a run of 20,000 spaces tries about
10^12 ways, in C, holding the GIL the whole time: in-process, that froze every
session of the server. Split in a child (core.runtime.bounded), the server's event loop
runs on: ``/_stcore/health`` answers within a second, a second session renders,
and the first session gets the deadline's sentence instead of a spinner for ever.
"""

from __future__ import annotations

import json
import time
import urllib.request
from contextlib import contextmanager
from urllib.parse import quote

import pytest
from browser_support import WAIT_MS, app_server, idle, open_tab, pick, start_upload, visible_text, wait_for_count

from core.limits import LIMITS_ENV

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

SLOW_SEPARATOR = "\\s*\\s*\\s*\\d"
SLOW_TEXT = ("A line of ordinary text.\n" + " " * 20_000 + "and the end.\n").encode()
SLOW_LINK = f"?splitter=langchain.character&separator={quote(SLOW_SEPARATOR)}&is_separator_regex=true"


# The tests that wait out a split's deadline run on a server of their own whose deadline is half the
# default (a deployment's $CHUNKSCOPE_LIMITS): long enough for the second session to render meanwhile.
SPLIT_SECONDS = 30


@pytest.fixture(scope="module")
def short_deadline_url():
    with app_server(env={LIMITS_ENV: f"split_seconds={SPLIT_SECONDS}"}) as url:
        yield url


def health_seconds(app_url: str) -> float:
    started = time.monotonic()
    with urllib.request.urlopen(f"{app_url}/_stcore/health", timeout=10) as response:
        assert response.status == 200
    return time.monotonic() - started


@contextmanager
def two_sessions(browser):  # noqa: ANN001, ANN201 - playwright types
    """Two people's browser contexts: one that does the heavy thing, and another that must not wait on it."""
    first = browser.new_context(viewport={"width": 1280, "height": 1000})
    other = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        yield first, other
    finally:
        first.close()
        other.close()


def _health_answers(app_url: str, count: int = 5) -> list[float]:
    """How long ``/_stcore/health`` took, ``count`` times half a second apart."""
    answers = []
    for _ in range(count):
        answers.append(health_seconds(app_url))
        time.sleep(0.5)
    return answers


def _second_session_renders_chunks(other, app_url: str) -> None:  # noqa: ANN001
    second = other.new_page()
    second.set_default_timeout(WAIT_MS)
    second.goto(app_url, wait_until="domcontentloaded")
    second.get_by_text("Loaded documents").first.wait_for(state="visible", timeout=60_000)
    second.locator('[data-testid="stSidebarNav"]').get_by_text("Chunks", exact=True).click()
    second.get_by_text("LLM view").first.wait_for(state="visible", timeout=60_000)
    idle(second)


def test_a_slow_split_from_a_link_stalls_neither_the_server_nor_other_sessions(browser, short_deadline_url) -> None:
    app_url = short_deadline_url
    with two_sessions(browser) as (slow, other):
        page = slow.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(f"{app_url}/{SLOW_LINK}", wait_until="domcontentloaded")
        page.get_by_text("Loaded documents").first.wait_for(state="visible")
        before = start_upload(page, [{"name": "spaces.txt", "mimeType": "text/plain", "buffer": SLOW_TEXT}])
        wait_for_count(page, before + 1)

        page.locator('[data-testid="stSidebarNav"]').get_by_text("Chunks", exact=True).click()
        page.get_by_text("Splitting…").first.wait_for(state="visible")  # the split has started and is stuck

        # While it runs: the server answers at once, every time.
        answers = _health_answers(app_url)
        assert max(answers) < 1.0, answers

        # ...and another person's session renders, and splits its own document.
        _second_session_renders_chunks(other, app_url)
        assert page.get_by_text("Splitting…").first.is_visible()  # the first session is still waiting on its child
        assert health_seconds(app_url) < 1.0

        # At the deadline the first session gets the sentence naming the file, the splitter and the limit.
        error = page.locator('[data-testid="stAlert"]').filter(has_text="took longer than the")
        error.first.wait_for(state="visible", timeout=(SPLIT_SECONDS + 120) * 1000)
        text = error.first.inner_text()
        assert "spaces.txt" in text and "langchain.character" in text
        assert f"{SPLIT_SECONDS:g} s limit" in text
        assert health_seconds(app_url) < 1.0


# Passes the regex check (no quantifier inside a quantifier) and fails in a millisecond in the native splitter's
# `regex`, yet Python's `re`, which LangChain's splitter uses, tries about 2**26 ways at every run of 25 a's
# before it fails there (0.4 s at 2**20; each step doubles it).
BACKTRACKING_SEPARATOR = "a?" * 26 + "a" * 26
RUNS_OF_A = (("a" * 25 + "b\n") * 16).encode()
EXPORT_LINK = (
    f"Export?splitter=recursive&separators={quote(json.dumps([BACKTRACKING_SEPARATOR]))}"
    "&is_separator_regex=true&chunk_size=100&chunk_overlap=0"
)


def test_the_export_checks_framework_regex_stalls_neither_the_server_nor_other_sessions(
    browser, short_deadline_url
) -> None:
    app_url = short_deadline_url
    with two_sessions(browser) as (slow, other):
        page = slow.new_page()
        page.set_default_timeout(WAIT_MS)
        # The link sets the configuration; the file is uploaded in the same session, then Export opened.
        page.goto(f"{app_url}/{EXPORT_LINK}", wait_until="domcontentloaded")
        page.get_by_role("tab", name="LangChain").first.wait_for(state="visible")
        idle(page)
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.get_by_text("Documents", exact=True).click()
        page.get_by_text("Loaded documents").first.wait_for(state="visible")
        before = start_upload(page, [{"name": "runs.txt", "mimeType": "text/plain", "buffer": RUNS_OF_A}])
        wait_for_count(page, before + 1)
        nav.get_by_text("Export", exact=True).click()
        page.get_by_role("tab", name="LangChain").first.wait_for(state="visible")
        idle(page)
        # Only the uploaded file is checked, as in the report: the deadline is split_seconds per document checked.
        picker = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Documents to export").first
        picker.get_by_role("button", name="Clear all").first.click()
        idle(page)
        picker.locator("input").first.fill("runs.txt")
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        idle(page)
        open_tab(page, "LangChain")
        visible_text(page, "Count the chunks this script changes").click()
        page.get_by_text("Running the LangChain script's splitter").first.wait_for(state="visible")

        answers = _health_answers(app_url)
        # Before forking the child, the server loads once what the script's splitter reads (tiktoken's encoding,
        # NLTK's folder): up to 1.4 s seen with the suite loading both cores. The stall guarded against here was
        # 28 s, doubling with each character of the run.
        assert max(answers) < 2.5, answers
        _second_session_renders_chunks(other, app_url)
        assert health_seconds(app_url) < 1.0

        error = page.locator('[data-testid="stAlert"]').filter(has_text="took longer than the")
        error.first.wait_for(state="visible", timeout=(SPLIT_SECONDS + 120) * 1000)
        text = error.first.inner_text()
        assert "runs.txt: running the LangChain script's splitter" in text and "split_seconds" in text


def _html_of(size: int) -> bytes:
    section = "<h2>Section {i}</h2><p>Paragraph {i} with <b>bold</b> words and <a href='#s{i}'>a link</a>.</p>\n"
    parts, total, i = [], 0, 0
    while total < size:
        part = section.format(i=i)
        parts.append(part)
        total += len(part)
        i += 1
    return ("<html><body>" + "".join(parts) + "</body></html>").encode()


def test_a_5_mb_upload_stalls_neither_the_server_nor_other_sessions(browser, app_url: str) -> None:
    with two_sessions(browser) as (heavy, other):
        page = heavy.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(app_url, wait_until="domcontentloaded")
        page.get_by_text("Loaded documents").first.wait_for(state="visible")
        data = _html_of(4_900_000)
        before = start_upload(page, [{"name": "big_page.html", "mimeType": "text/html", "buffer": data}])
        # While it is read (in a child) and taken in (packed), the server answers at once.
        answers = []
        while not page.get_by_text(f"Loaded documents · {before + 1}").first.is_visible():
            answers.append(health_seconds(app_url))
            assert len(answers) < 600, "the upload never finished"
            time.sleep(0.2)
        assert answers and max(answers) < 1.0, answers
        _second_session_renders_chunks(other, app_url)


# The Title extractor runs in the server's process. Its closing-marks pattern retried every space of a run, in C
# holding the GIL: a first line with 20,000 spaces stalled the server 11 s when Title was switched on, a megabyte
# of them for hours (core.extractors.title).
WIDE_FIRST_LINE = ("Intro" + " " * 1_000_000 + "end of the first line.\n\nA second paragraph of text.\n").encode()
WIDE_TITLE = "document_title: Intro end of the first line."


def test_switching_title_on_for_a_wide_first_line_stalls_neither_the_server_nor_other_sessions(
    browser, app_url: str
) -> None:
    with two_sessions(browser) as (heavy, other):
        page = heavy.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(app_url, wait_until="domcontentloaded")
        page.get_by_text("Loaded documents").first.wait_for(state="visible")
        before = start_upload(page, [{"name": "wide_title.txt", "mimeType": "text/plain", "buffer": WIDE_FIRST_LINE}])
        wait_for_count(page, before + 1)
        page.locator('[data-testid="stSidebarNav"]').get_by_text("Metadata", exact=True).click()
        page.get_by_text("Live preview").first.wait_for(state="visible")
        idle(page)
        pick(page, "Document", "wide_title.txt")
        visible_text(page, "Title →").click()
        # While the page reruns with Title on, the server answers at once; then the title is in the preview.
        answers = []
        while not page.evaluate("text => document.body.innerText.includes(text)", WIDE_TITLE):
            answers.append(health_seconds(app_url))
            assert len(answers) < 600, "the title never appeared"
            time.sleep(0.2)
        answers.append(health_seconds(app_url))
        assert max(answers) < 2.0, answers
        _second_session_renders_chunks(other, app_url)
        assert health_seconds(app_url) < 1.0
