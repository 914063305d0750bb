"""The server's memory over many distinct uploads from sessions that then close (issue 42, item 4).

A real ``streamlit run app.py`` and Debian's chromium: each round opens a new browser session, uploads a
text of its own (about 5 MB, different in every round), opens Chunks (which splits it) and closes the
session. After each round the server's resident memory (VmRSS) is read from /proc, and health is
polled while the upload lands. Counted in entries, ten such rounds took the server from 1 to 2.1 GB;
bounded in bytes, it should level off once the caches hold CHUNKSCOPE_SERVER_CACHE_MB.

    python benchmarks/server_memory.py --rounds 50 --mb 4.9 --json benchmarks/data/server_memory.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser_support import (  # noqa: E402
    WAIT_MS,
    _open,
    app_server,
    idle,
    launch,
    start_upload,
    wait_for_count,
)


def server_pid(url: str) -> int:
    port = url.rsplit(":", 1)[1]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(command) and port.encode() in command:
            return int(entry.name)
    raise RuntimeError(f"no streamlit process serves port {port}")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def text_of(seed: int, size: int) -> bytes:
    words = ["chunk", "overlap", "token", "window", "retrieval", "embedding", "node", "span", "query", "rerank"]
    lines, total, i = [], 0, 0
    while total < size:
        line = f"Round {seed} line {i}: " + " ".join(words[(seed + i + k) % len(words)] for k in range(12)) + ".\n"
        if i % 9 == 8:
            line += "\n"
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines).encode()


def health_poller(url: str, stop: threading.Event, found: list[float]) -> None:
    while not stop.is_set():
        started = time.monotonic()
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as response:
            response.read()
        found.append(time.monotonic() - started)
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--mb", type=float, default=4.9)  # under the 5,000,000-character text limit
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rows = []
    with app_server() as url, sync_playwright() as playwright:
        pid = server_pid(url)
        browser = launch(playwright)
        print(f"server {pid}: {rss_mb(pid):.0f} MB at start (CHUNKSCOPE_SERVER_CACHE_MB="
              f"{os.environ.get('CHUNKSCOPE_SERVER_CACHE_MB', '512')})", flush=True)
        for round_ in range(args.rounds):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(url, wait_until="domcontentloaded")
            try:
                page.get_by_text("Loaded documents").first.wait_for(state="visible")
            except Exception:
                page.screenshot(path="/tmp/server_memory_stuck.png")
                raise
            data = text_of(round_, int(args.mb * 1_000_000))
            stop, health = threading.Event(), []
            poller = threading.Thread(target=health_poller, args=(url, stop, health))
            poller.start()
            started = time.monotonic()
            try:
                before = start_upload(page, [{"name": f"round_{round_}.txt", "mimeType": "text/plain", "buffer": data}])
                wait_for_count(page, before + 1)
                page.locator('[data-testid="stSidebarNav"]').get_by_text("Chunks", exact=True).click()
                page.get_by_text("LLM view").first.wait_for(state="visible")
                idle(page)
                # The uploaded text, split at the default settings: the work a closed session leaves behind.
                _open(page, "Document").filter(has_text=f"round_{round_}.txt").first.click()
                page.get_by_text(f"round_{round_}.txt").first.wait_for(state="visible")
                idle(page)
                page.get_by_text("LLM view").first.wait_for(state="visible")
            finally:
                stop.set()
                poller.join()
            seconds = time.monotonic() - started
            context.close()
            time.sleep(1)
            row = {"round": round_ + 1, "rss_mb": round(rss_mb(pid), 1), "seconds": round(seconds, 1),
                   "worst_health_s": round(max(health), 3)}
            rows.append(row)
            print(json.dumps(row), flush=True)
        browser.close()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
