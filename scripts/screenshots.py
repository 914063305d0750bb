"""Screenshots of each main page for the README, taken with headless Debian chromium.

    .venv/bin/python scripts/screenshots.py            # starts the app on a free port
    .venv/bin/python scripts/screenshots.py --url http://localhost:8501

Writes ``docs/screenshots/<page>.png``. The pages are opened in a fresh session,
so they show the sample documents the app loads on a first visit.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@dataclass(frozen=True)
class Shot:
    """One README picture: which page, what shows it is drawn, and an optional button to press first."""

    name: str
    path: str
    marker: str | None
    height: int
    press: str | None = None  # a button's label, for pages that compute on demand
    then: str | None = None  # text that shows the pressed button's work is done
    first: tuple[str, ...] = ()  # buttons (or segmented-control options) to click before ``press``, in order
    scroll_to: str | None = None  # text each source pane scrolls to (as a reader would), e.g. a table's header


# Scrolls every source pane so that the first line holding the text sits near its top.
_SCROLL_PANES = """(text) => {
  for (const pane of document.querySelectorAll('.cs-source')) {
    const hit = [...pane.querySelectorAll('span')].find((s) => s.textContent.includes(text));
    if (hit) pane.scrollTop += hit.getBoundingClientRect().top - pane.getBoundingClientRect().top - 40;
  }
}"""


PAGES = [
    Shot("home", "", "Loaded documents", 1000),
    # The configuration a user meets first (the recommended hierarchy): its leaves, each inside the model window.
    Shot("chunks", "Chunks", "LLM view", 2300),
    Shot("metadata", "Metadata", None, 1600),
    Shot("compare", "Compare", None, 1800),
    # A chain with a visible effect: a cutoff drops weak nodes, the reorder puts the best at both ends.
    Shot(
        "query",
        "Query?postprocessors=similarity_cutoff,long_context_reorder"
        "&postprocessor.similarity_cutoff.similarity_cutoff=0.7",
        "Exactly what the LLM reads",
        2000,
    ),
    Shot("evaluate", "Evaluate", None, 2100, press="Run the evaluation", then="queries each"),
    # The tuner's Pareto front on the shipped samples and queries: the default space, every default choice.
    Shot("tune", "Evaluate", None, 2000, press="Search", then="Pareto front", first=("Tune",)),
    # One PDF through two parsers, side by side on the page with the table: loose words against a Markdown table.
    Shot("compare_parsers", "Compare", None, 1900, first=("Parsers", "Chunks side by side"),
         then="What each parser found", scroll_to="Document type"),
    # A framework engine that rewrites text: the span-recovery counts and a rewritten node's changes.
    Shot("engine", "Chunks?splitter=langchain.markdown_header", "Span recovery", 1700),
    Shot("export", "Export", None, 1400),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_app(port: int | None = None, timeout: float = 120, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``streamlit run app.py`` headless on a free localhost port (``env`` added to its environment); yield its
    URL."""
    port = port or free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    command = [
        sys.executable, "-m", "ui.launch",  # streamlit run app.py, as make run starts it
        "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]
    # The server's output goes to a file, not a pipe: a pipe nobody reads fills up
    # (64 KB) and then blocks a chatty server mid-request.
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                log.seek(0)
                output = log.read().decode(errors="replace")
                raise RuntimeError(f"streamlit exited with {process.returncode}:\n{output}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"streamlit did not answer on {url} within {timeout:.0f}s")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def launch_browser(playwright):  # noqa: ANN001, ANN201 - playwright types
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: install Debian's chromium (make system-deps)")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def wait_until_drawn(page, marker: str | None, timeout_ms: int = 120_000) -> None:  # noqa: ANN001
    """Wait for the page's marker text, then for Streamlit to stop running the script."""
    if marker:
        page.get_by_text(marker, exact=False).first.wait_for(state="visible", timeout=timeout_ms)
    # Done means: no script running, no stale elements, no skeletons, and it stays so for a moment.
    settled = (
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"], [data-stale=\"true\"], "
        "[data-testid=\"stSkeleton\"]')"
    )
    for _ in range(2):
        page.wait_for_timeout(1500)
        page.wait_for_function(settled, timeout=timeout_ms)
    page.wait_for_timeout(1000)  # plotly and fonts settle after the script ends


def take(url: str, pages: list[Shot] = PAGES) -> list[Path]:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as playwright:
        browser = launch_browser(playwright)
        context = browser.new_context(viewport={"width": 1440, "height": 1000}, device_scale_factor=1)
        page = context.new_page()
        for shot in pages:
            name = shot.name
            # Streamlit scrolls inside its own container, so a tall window shows the whole page.
            page.set_viewport_size({"width": 1440, "height": shot.height})
            page.goto(f"{url}/{shot.path}", wait_until="domcontentloaded")
            try:
                wait_until_drawn(page, shot.marker)
                for label in shot.first:
                    # A tab (its name carries its icon's ligature), else a button or a segmented option.
                    tab = page.get_by_role("tab", name=label)
                    (tab if tab.count() else page.get_by_text(label, exact=True)).first.click()
                    wait_until_drawn(page, None)
                if shot.first and not shot.press and shot.then:
                    wait_until_drawn(page, shot.then, timeout_ms=600_000)
                if shot.press:
                    page.get_by_role("button", name=shot.press).filter(has_text=shot.press).first.click()  # not a help icon
                    page.mouse.move(0, 0)  # no tooltip over the picture
                    wait_until_drawn(page, shot.then, timeout_ms=600_000)
                if shot.scroll_to:
                    page.evaluate(_SCROLL_PANES, shot.scroll_to)
                    page.wait_for_timeout(300)
            except Exception as exc:  # noqa: BLE001 - a page that is not there yet is skipped, not fatal
                page.screenshot(path=str(OUT / f"{name}.failed.png"))
                print(f"skipped {name} (see {name}.failed.png): {exc}", file=sys.stderr)
                continue
            target = OUT / f"{name}.png"
            page.screenshot(path=str(target), full_page=True)
            written.append(target)
            print(f"wrote {target.relative_to(ROOT)}")
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="an already running ChunkScope (default: start one)")
    parser.add_argument("--only", nargs="*", help="page names to take (home, chunks, ...)")
    args = parser.parse_args()
    pages = [p for p in PAGES if not args.only or p.name in args.only]
    if args.url:
        take(args.url.rstrip("/"), pages)
    else:
        with running_app() as url:
            take(url, pages)


if __name__ == "__main__":
    main()
