"""The first visit after a fresh start: how long until the Documents page lists the samples, then the first sample query.

What a person meets after ``make run``: a server just started (``--launch ui``: through ``ui.launch``,
as ``make run`` starts it; ``--launch streamlit``: plain ``streamlit run app.py``, for comparison) on
ChunkScope's disk caches as ``make run``'s install step leaves them (run ``make setup`` first, or the
step's own ``chunkscope evaluate sample_docs --queries sample_docs/queries.json``). Debian's chromium opens
the app (timed from the request to "Loaded documents" and to the document table drawn), then the Query page
(timed from the click to its "Final context", the first sample query answered). A fresh server per rep;
the modes alternate rep by rep, so a busy moment hits both. Prints one JSON line with each rep and the
load average around the runs.

    .venv/bin/python benchmarks/first_visit.py [--reps 3] [--launch ui,streamlit]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser_support import shots  # noqa: E402

WAIT_MS = 180_000
COMMANDS = {
    "ui": [sys.executable, "-m", "ui.launch"],
    "streamlit": [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py")],
}


def _server(launch: str) -> tuple[subprocess.Popen, str, float]:
    port = shots.free_port()
    options = ["--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1"]
    options += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    log = tempfile.TemporaryFile()
    started = time.monotonic()
    process = subprocess.Popen([*COMMANDS[launch], *options], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                return process, url, time.monotonic() - started
        except OSError:
            if process.poll() is not None or time.monotonic() - started > 120:
                raise RuntimeError(f"the {launch} server did not start") from None
            time.sleep(0.1)


def one_visit(playwright, launch: str) -> dict[str, float]:  # noqa: ANN001
    process, url, ready = _server(launch)
    try:
        browser = shots.launch_browser(playwright)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        start = time.monotonic()
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_text("Loaded documents").first.wait_for(state="visible", timeout=WAIT_MS)
        listed = time.monotonic() - start
        page.locator('[data-testid="stDataFrame"]').first.wait_for(state="visible", timeout=WAIT_MS)
        table = time.monotonic() - start
        start = time.monotonic()
        page.locator('[data-testid="stSidebarNav"]').get_by_text("Query", exact=True).click()
        page.get_by_text("Final context").first.wait_for(state="visible", timeout=WAIT_MS)
        query = time.monotonic() - start
        browser.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    return {"server_ready_s": ready, "documents_listed_s": listed, "document_table_s": table, "first_query_s": query}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--launch", default="ui,streamlit", help="ui (make run's ui.launch), streamlit, or both")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    launches = args.launch.split(",")
    runs: dict[str, list[dict[str, float]]] = {launch: [] for launch in launches}
    load_before = os.getloadavg()[0]
    with sync_playwright() as playwright:
        for _ in range(args.reps):
            for launch in launches:
                runs[launch].append(one_visit(playwright, launch))
    summary = {
        launch: {key: statistics.median(run[key] for run in reps) for key in reps[0]} for launch, reps in runs.items()
    }
    print(json.dumps({"median": summary, "runs": runs, "load_average": [load_before, os.getloadavg()[0]]}))


if __name__ == "__main__":
    main()
