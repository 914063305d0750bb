"""App latency through Streamlit's AppTest: a chunk_size change to the re-rendered Chunks page.

For a 1 MB text document (the start of ``data/corpus.txt``) and each splitter measured:

- cold: empty content caches (``ui.cache.clear()``), session holding only that file; the app frame runs,
  then the Chunks page renders (load + split + metrics + table + spans);
- warm, new value: chunk_size set to a value not seen before in this session
  (the split is computed; the document load is cached) — what a person tuning feels;
- warm, seen value: chunk_size set back to a value already rendered (split cached).

And the first view of the 300-page ``data/corpus.pdf`` (cache empty): app frame + Chunks page.
Prints one JSON line. AppTest runs the page script in this process, without a browser,
so these times are the server's share of the latency (no websocket or paint).
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

from contestants import DATA, read_input  # noqa: E402

PAGE = "pages/1_Chunks.py"
TIMEOUT = 600


def fresh_app(file_name: str, data: bytes):  # noqa: ANN201 - an AppTest
    from streamlit.testing.v1 import AppTest

    from ui import cache
    from ui.state import SourceFile, digest_of

    cache.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["cs_sources"] = [SourceFile(file_name=file_name, data=data, digest=digest_of(data))]
    return at


def timed(action) -> float:  # noqa: ANN001 - a callable that runs the app
    start = time.perf_counter()
    at = action()
    seconds = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the app raised: {at.exception[0].message}")
    return seconds


def first_view(file_name: str, data: bytes, splitter: str | None = None) -> tuple[object, dict]:
    at = fresh_app(file_name, data)
    frame = timed(lambda: at.run())
    page = timed(lambda: at.switch_page(PAGE).run())
    if splitter and at.sidebar.selectbox(key="chunks.splitter").value != splitter:
        at.sidebar.selectbox(key="chunks.splitter").set_value(splitter).run()
    return at, {"frame_s": frame, "chunks_page_s": page, "total_s": frame + page}


def chunk_size_changes(splitter: str, data: bytes, reps: int) -> dict:
    at, cold = first_view("bench_1mb.txt", data, splitter)
    key = f"splitter.{splitter}.chunk_size"
    start_value = at.sidebar.number_input(key=key).value
    new_values = [start_value - 50 * (i + 1) for i in range(reps)]
    warm_new = [timed(lambda v=v: at.sidebar.number_input(key=key).set_value(v).run()) for v in new_values]
    seen = new_values[:-1] + [start_value]
    warm_seen = [timed(lambda v=v: at.sidebar.number_input(key=key).set_value(v).run()) for v in seen]
    nodes = next((m.value for m in at.metric if m.label == "Nodes"), None)
    return {
        "splitter": splitter,
        "cold_first_view_s": cold["total_s"],
        "cold_parts": cold,
        "warm_new_value_s": statistics.median(warm_new),
        "warm_new_value_all_s": warm_new,
        "warm_seen_value_s": statistics.median(warm_seen),
        "warm_seen_value_all_s": warm_seen,
        "nodes_shown": nodes,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--splitters", default="recursive,sentence")
    args = parser.parse_args()
    os.chdir(ROOT)
    text = read_input("corpus.txt", 1)
    data = text.encode("utf-8")
    process_start = time.perf_counter()
    _, process_cold = first_view("bench_1mb.txt", data)
    result: dict = {"document_mb": len(data) / 1e6, "fresh_process_first_view": process_cold,
                    "fresh_process_wall_s": time.perf_counter() - process_start}
    result["chunk_size_change"] = [chunk_size_changes(name, data, args.reps) for name in args.splitters.split(",")]
    pdf_bytes = (DATA / "corpus.pdf").read_bytes()
    _, pdf_view = first_view("corpus.pdf", pdf_bytes)
    result["pdf_first_view"] = pdf_view
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
