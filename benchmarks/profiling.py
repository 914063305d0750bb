"""Profile one contestant, or the app's chunk_size change, with pyinstrument (the ``bench`` extra).

    .venv/bin/python benchmarks/profiling.py splitter recursive "ChunkScope recursive" --mb 2 [--large]
    .venv/bin/python benchmarks/profiling.py app recursive

Prints pyinstrument's text report (``--html FILE`` writes the interactive one).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from contestants import group, read_files, read_input  # noqa: E402
from pyinstrument import Profiler  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("splitter", "app"))
    parser.add_argument("group")
    parser.add_argument("label", nargs="?")
    parser.add_argument("--mb", type=float, default=2)
    parser.add_argument("--html")
    parser.add_argument("--large", action="store_true", help="splitter: one large document, not the per-file corpus")
    parser.add_argument("--input", choices=("readmes", "mixed"), default="readmes", help="app: browser_latency's inputs")
    parser.add_argument("--changes", type=int, default=1, help="app: new chunk_size values profiled, one after another")
    args = parser.parse_args()
    profiler = Profiler(interval=0.0005)
    if args.what == "splitter":
        g = group(args.group)
        split = g.contestant(args.label or g.ours.label).prepare()
        # The per-file corpus (what the verdicts use), or with --large the group's one large document.
        texts = [read_input(g.source, args.mb)] if args.large else read_files(g.source, args.mb)
        for text in texts:
            split(text)
        profiler.start()
        for text in texts:
            split(text)
        profiler.stop()
    else:
        # AppTest runs the page in its own thread, and pyinstrument samples the thread that
        # starts it: profile inside the script runner's run instead.
        from app_latency import first_view
        from streamlit.runtime.scriptrunner import script_runner

        original = script_runner.ScriptRunner._run_script
        active = {"on": False}

        def profiled(self, rerun_data):  # noqa: ANN001, ANN202
            if not active["on"]:
                return original(self, rerun_data)
            profiler.start()
            try:
                return original(self, rerun_data)
            finally:
                profiler.stop()

        script_runner.ScriptRunner._run_script = profiled

        from browser_latency import mixed_text

        data = (read_input("corpus.txt", 1) if args.input == "readmes" else mixed_text(1.0)).encode("utf-8")
        at, _ = first_view("bench_1mb.txt", data, args.group)
        key = f"splitter.{args.group}.chunk_size"
        value = at.sidebar.number_input(key=key).value
        active["on"] = True
        for change in range(args.changes):
            at.sidebar.number_input(key=key).set_value(value - 7 * (change + 1)).run()
    if args.html:
        Path(args.html).write_text(profiler.output_html())
    print(profiler.output_text(unicode=False, color=False, show_all=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
