"""App latency in a real browser: a chunk_size change to the re-rendered Chunks page, and the 300-page PDF's first view.

Starts ``streamlit run app.py`` (headless, localhost) and Debian's chromium through
Playwright, then does what a person does:

- PDF first view (a fresh server, so nothing is cached): upload ``data/corpus.pdf``
  on the Documents page until its row appears, open Chunks (which opens on the file
  just uploaded), until its Nodes metric shows;
- 1 MB text, per splitter: the first view with that splitter (cold: the split and its
  metrics are computed), then chunk_size changed to values not seen before (warm, new
  value; the first of them, the page's first redraw after the cold view, is reported
  apart from the steady state) and back to values already drawn (warm, seen value).
  ``--input readmes`` is the start of ``data/corpus.txt`` (mostly ASCII READMEs);
  ``--input mixed`` a third each of the corpus parts' reST (runs of blank lines),
  non-ASCII prose and one large real file (benchmarks/corpus_parts.py), so the page
  meets every kind the splitters are slow on.

Each change is timed from pressing Enter in the Chunk size box until the Nodes metric
shows the count ``core`` gives for the new value (``metric_s``), and until Streamlit has
finished the run and dropped every stale element (``settled_s``), with the page's main-thread
work in chromium over that time (``browser_task_ms``: CDP ``Performance.getMetrics``' TaskDuration,
which holds script, style, layout and paint on the renderer's main thread, waits for a core included)
and the CPU time of every chromium process over it (``chromium_cpu_ms``, from ``/proc``: a loaded
machine does not inflate it as it does wall time). The expected counts
come from ``core.documents.run_split`` in this process. Prints one JSON line.

    .venv/bin/python benchmarks/browser_latency.py [--reps 3] [--splitters recursive,sentence]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "tests"))

# The app server, chromium and a person's steps are the browser tests' own (tests/browser_support.py).
from browser_support import idle, open_chunks, select_option, shots, start_upload, wait_for_count  # noqa: E402
from contestants import DATA, read_input  # noqa: E402

WAIT_MS = 300_000
TEXT_NAME = "bench_1mb.txt"
PDF_NAME = "corpus.pdf"


# -- what a person does, and what shows it is done --------------------------------


def nodes_shown(page, count: int) -> None:  # noqa: ANN001
    """Wait until the Nodes metric reads ``count``."""
    page.wait_for_function(
        """(count) => {
            const card = [...document.querySelectorAll('[data-testid="stMetric"]')].find(c => c.innerText.includes('Nodes'));
            const value = card && card.querySelector('[data-testid="stMetricValue"]');
            return value && Number(value.innerText.replace(/,/g, '')) === count;
        }""",
        arg=count,
        timeout=WAIT_MS,
        polling="raf",
    )


def upload(page, name: str, data: bytes, mime: str) -> None:  # noqa: ANN001
    before = start_upload(page, [{"name": name, "mimeType": mime, "buffer": data}])
    wait_for_count(page, before + 1)


def chromium_cpu_ms() -> float:
    """User and system CPU time, in ms, of every chromium process this script started (a descendant of it)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents, cpu, names = {}, {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields start after its last ")".
        name, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        pid = int(entry.name)
        parents[pid], names[pid] = int(fields[1]), name
        cpu[pid] = (int(fields[11]) + int(fields[12])) * 1000 / tick

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return sum(ms for pid, ms in cpu.items() if "chrom" in names[pid] and ours(pid))


def main_thread_ms(page) -> float:  # noqa: ANN001
    """The renderer's main-thread busy time so far (CDP Performance.getMetrics' TaskDuration), in ms."""
    session = getattr(page, "_cs_cdp", None)
    if session is None:
        session = page.context.new_cdp_session(page)
        session.send("Performance.enable")
        page._cs_cdp = session
    metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
    return metrics.get("TaskDuration", 0.0) * 1000


def timed(page, act, count: int) -> dict[str, float]:  # noqa: ANN001
    """Seconds from ``act()`` until the Nodes metric shows ``count``, and until the run has settled; the
    browser's main-thread ms over the same time."""
    busy, chromium = main_thread_ms(page), chromium_cpu_ms()
    start = time.perf_counter()
    act()
    nodes_shown(page, count)
    metric = time.perf_counter() - start
    idle(page)
    settled = time.perf_counter() - start
    # Two frames more, so the layout and paint of what the run drew are counted too.
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    return {
        "metric_s": metric,
        "settled_s": settled,
        "browser_task_ms": main_thread_ms(page) - busy,
        "chromium_cpu_ms": chromium_cpu_ms() - chromium,
    }


def expected_count(data: bytes, name: str, splitter: str, **params: int) -> int:
    """What the Nodes metric shows for ``data`` split by ``splitter``."""
    from core.config import PipelineConfig
    from core.documents import run_split
    from core.loaders import load_bytes
    from core.splitters import get_splitter

    nodes = run_split(load_bytes(data, name), PipelineConfig(splitter=get_splitter(splitter, **params)))
    # The Nodes metric counts the embedded nodes: a hierarchy's leaves, its parents (nodes with children) beside.
    return sum(not node.child_ids for node in nodes)


def default_chunk_size(splitter: str) -> int:
    from core.splitters import get_splitter

    return int(get_splitter(splitter).chunk_size)


# -- the measurements ------------------------------------------------------------------


def pdf_first_view(browser, url: str) -> dict[str, float]:  # noqa: ANN001
    data = (DATA / PDF_NAME).read_bytes()
    count = expected_count(data, PDF_NAME, "sentence")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(url)
    page.get_by_text("Loaded documents · ").first.wait_for(state="visible", timeout=WAIT_MS)
    idle(page)
    start = time.perf_counter()
    upload(page, PDF_NAME, data, "application/pdf")
    uploaded = time.perf_counter() - start
    open_chunks(page)
    opened = time.perf_counter() - start
    nodes_shown(page, count)
    shown = time.perf_counter() - start
    idle(page)
    context.close()
    return {"upload_to_home_row_s": uploaded, "to_chunks_page_s": opened, "total_s": shown,
            "settled_s": time.perf_counter() - start, "nodes": count}


def chunk_size_changes(page, data: bytes, splitter: str, reps: int, first: bool) -> dict:  # noqa: ANN001
    start_value = default_chunk_size(splitter)
    counts = {start_value: expected_count(data, TEXT_NAME, splitter)}
    if first:
        cold = timed(page, lambda: select_option(page, "Document", TEXT_NAME), counts[start_value])
    else:
        cold = timed(page, lambda: select_option(page, "Splitter", splitter.capitalize()), counts[start_value])
    box = page.get_by_label("Chunk size", exact=True)

    def set_size(value: int) -> dict[str, float]:
        if value not in counts:
            counts[value] = expected_count(data, TEXT_NAME, splitter, chunk_size=value)

        # The value is typed before the timer starts, as a person types it before pressing Enter; Enter goes to the
        # focused box through the keyboard, so no locator lookup (a scan of the whole page) falls inside the timer.
        box.fill(str(value))
        return timed(page, lambda: page.keyboard.press("Enter"), counts[value])

    step = max(start_value // 12, 1)  # values below the default, all above any default overlap
    new_values = [start_value - step * (i + 1) for i in range(reps + 1)]
    first_redraw, *warm_new = [set_size(value) for value in new_values]
    warm_seen = [set_size(value) for value in [*new_values[:-1], start_value]]
    return {
        "splitter": splitter,
        "cold_first_view": cold,
        "first_redraw": first_redraw,
        "warm_new_value_metric_s": statistics.median(r["metric_s"] for r in warm_new),
        "warm_new_value_metric_min_max_s": [min(r["metric_s"] for r in warm_new), max(r["metric_s"] for r in warm_new)],
        "warm_new_value_settled_s": statistics.median(r["settled_s"] for r in warm_new),
        "warm_seen_value_metric_s": statistics.median(r["metric_s"] for r in warm_seen),
        "warm_seen_value_metric_min_max_s": [min(r["metric_s"] for r in warm_seen), max(r["metric_s"] for r in warm_seen)],
        "warm_seen_value_settled_s": statistics.median(r["settled_s"] for r in warm_seen),
        "warm_new_value_browser_task_ms": statistics.median(r["browser_task_ms"] for r in warm_new),
        "warm_seen_value_browser_task_ms": statistics.median(r["browser_task_ms"] for r in warm_seen),
        "warm_new_value_chromium_cpu_ms": statistics.median(r["chromium_cpu_ms"] for r in warm_new),
        "warm_seen_value_chromium_cpu_ms": statistics.median(r["chromium_cpu_ms"] for r in warm_seen),
        "warm_new_all": warm_new,
        "warm_seen_all": warm_seen,
        "nodes": counts,
    }


def mixed_text(mb: float) -> str:
    """About ``mb`` MB: a third each of the corpus parts' reST, non-ASCII prose and large file, whole documents
    (the large file cut at a paragraph break), joined by blank lines."""
    from corpus_parts import read_part

    third = int(mb * 1e6 / 3)
    pieces = []
    for kind in ("rest", "non_ascii", "large_file"):
        taken, size = [], 0
        for document in read_part(kind):
            if size >= third:
                break
            room = third - size
            if len(document.encode("utf-8")) > room:
                cut = document.rfind("\n\n", 0, room)
                document = document[: cut if cut > 0 else room]
            taken.append(document)
            size += len(document.encode("utf-8"))
        pieces.append("\n\n".join(taken))
    return "\n\n".join(pieces)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--splitters", default="sentence,recursive", help="each measured after the text's first view with the page's default"
    )
    parser.add_argument("--input", choices=("readmes", "mixed"), default="readmes")
    parser.add_argument("--no-pdf", action="store_true", help="skip the PDF's first view")
    args = parser.parse_args()
    from core.config_parts import DEFAULT_SPLITTER

    splitters = args.splitters.split(",")
    from playwright.sync_api import sync_playwright

    data = (read_input("corpus.txt", 1) if args.input == "readmes" else mixed_text(1.0)).encode("utf-8")
    result: dict = {
        "input": args.input,
        "document_mb": len(data) / 1e6,
        "load_average_at_start": os.getloadavg()[0],
        "browser": shots.CHROMIUM,
        "browser_args": shots.CHROMIUM_ARGS,
    }
    with shots.running_app(timeout=180) as url, sync_playwright() as playwright:
        browser = shots.launch_browser(playwright)
        if not args.no_pdf:
            result["pdf_first_view"] = pdf_first_view(browser, url)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(url)
        upload(page, TEXT_NAME, data, "text/plain")
        open_chunks(page)
        if splitters[0] != DEFAULT_SPLITTER:
            # The Document box opens the text with the page's default splitter: that view is timed on its own, then
            # each splitter measured is picked in the Splitter box.
            count = expected_count(data, TEXT_NAME, DEFAULT_SPLITTER)
            result["default_splitter_first_view"] = {
                "splitter": DEFAULT_SPLITTER,
                **timed(page, lambda: select_option(page, "Document", TEXT_NAME), count),
            }
        result["chunk_size_change"] = [
            chunk_size_changes(page, data, name, args.reps, first=i == 0 and name == DEFAULT_SPLITTER)
            for i, name in enumerate(splitters)
        ]
        context.close()
        browser.close()
    result["load_average_at_end"] = os.getloadavg()[0]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
