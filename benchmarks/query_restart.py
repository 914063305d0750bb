"""The Query page's first answer on the sample documents, right after the app (re)starts.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/query_restart.py --restarts 3

Each round starts a fresh ``streamlit run app.py`` (a restart: no process memory,
no Streamlit caches), opens ``/Query`` in headless Debian chromium and times from
the navigation to the "Final nodes" metric card, which is drawn once retrieval
and the postprocessor chain have run. All rounds share one cache folder
(``$CHUNKSCOPE_CACHE_DIR``): the first round starts from an empty one (every
node is embedded), the later ones find the node vectors on disk, as a restarted
app does. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from screenshots import launch_browser, running_app  # noqa: E402

TIMEOUT_MS = 600_000


def first_answer_seconds(url: str) -> float:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_browser(playwright)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            started = time.perf_counter()
            page.goto(f"{url}/Query", wait_until="domcontentloaded")
            page.locator('[data-testid="stMetric"]').filter(has_text="Final nodes").first.wait_for(
                state="visible", timeout=TIMEOUT_MS
            )
            return time.perf_counter() - started
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restarts", type=int, default=3, help="Rounds after the first (cold) one.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="chunkscope-cache-") as cache:
        os.environ["CHUNKSCOPE_CACHE_DIR"] = cache
        rounds = []
        for _ in range(1 + args.restarts):
            with running_app(timeout=300) as url:
                rounds.append(first_answer_seconds(url))
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "empty_cache_s": round(rounds[0], 2),
                "after_restart_s": [round(r, 2) for r in rounds[1:]],
                "after_restart_median_s": round(statistics.median(rounds[1:]), 2) if rounds[1:] else None,
                "servers_cpu_s": round(children.ru_utime + children.ru_stime, 1),
                "load_average": os.getloadavg()[0],
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
