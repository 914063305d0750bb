"""Start-up costs: ``import core`` and ``chunkscope --help``, a cold ``chunkscope query`` on sample_docs, and a
second ``make run`` to HTTP 200.

Each query runs in a fresh interpreter (what a person typing the command gets), in
three states of the cache folder (``$CHUNKSCOPE_CACHE_DIR``: vectors and loaded documents):

- vectors cached: the folder a previous run of the same command filled (the query's vector and
  every loaded document too: no file is parsed, no OCR);
- vectors cached, new query: that folder, and a query it has never seen (only the query is embedded);
- nothing cached: a fresh, empty folder (every file parsed, Tesseract run, every node embedded).

The states are interleaved rep by rep, so a busy moment on a shared machine hits each of them. Each
state reports wall and CPU seconds (user + sys of the child process: its Tesseract included), median
and min-max, the load average around its runs, and lists which of the heavy packages (the model's,
the PDF parser) the run imported. Python's bytecode is not written when ``PYTHONDONTWRITEBYTECODE``
is set; the report says whether it was. ``--root`` times another checkout's code with this venv (e.g. ``git archive HEAD``
unpacked in /tmp/head) for a before/after comparison. ``--make-run`` also starts ``make run``
twice and times the second start until the server answers HTTP 200. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUERY = "How much overlap should chunks have?"
HEAVY = ("sentence_transformers", "transformers", "sklearn", "torch", "pypdf")
# Runs the CLI and, on the way out, names the heavy packages the run imported (on stderr's last line).
CLI = f"""
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})), file=sys.stderr))
from core.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def query_once(root: Path, cache_dir: Path, backend: str | None, query: str = QUERY) -> tuple[float, float, list[str]]:
    """Wall seconds, CPU seconds (user + sys) and the heavy packages imported, for one ``chunkscope query``."""
    env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": str(cache_dir), "HF_HUB_OFFLINE": "1"}
    argv = [sys.executable, "-c", CLI, "query", "sample_docs", "--query", query]
    # Only an older checkout has the option (the CLI dropped it with the ONNX backend).
    argv += ["--backend", backend] if backend else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"chunkscope query failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, json.loads(done.stderr.strip().splitlines()[-1])


def queries(root: Path, reps: int, backend: str | None) -> dict[str, dict]:
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        filled = scratch / "filled"
        seconds, cpu, heavy = query_once(root, filled, backend)  # fills the cache
        results["filling run (nothing cached)"] = {"seconds": [round(seconds, 2)], "cpu_s": [round(cpu, 2)]}
        states = ("vectors cached", "vectors cached, new query", "nothing cached")
        rows: dict[str, list[tuple[float, float]]] = {state: [] for state in states}
        loads: dict[str, list[float]] = {state: [] for state in states}
        imports: dict[str, list[str]] = {}
        for rep in range(reps):  # interleaved, so a busy moment on the shared machine hits every state
            for state in states:
                folder = scratch / f"fresh{rep}" if state == "nothing cached" else filled
                # A query no run has asked: its vector is not on disk, every node's is.
                query = f"{QUERY} (run {rep})" if state == "vectors cached, new query" else QUERY
                loads[state].append(os.getloadavg()[0])
                *row, imports[state] = query_once(root, folder, backend, query)
                rows[state].append(row)
        for state, runs in rows.items():
            walls, cpus = [wall for wall, _ in runs], [cpu for _, cpu in runs]
            results[state] = {
                "median_s": round(statistics.median(walls), 2),
                "min_max_s": [round(min(walls), 2), round(max(walls), 2)],
                "median_cpu_s": round(statistics.median(cpus), 2),
                "min_max_cpu_s": [round(min(cpus), 2), round(max(cpus), 2)],
                "seconds": [round(wall, 2) for wall in walls],
                "cpu_s": [round(cpu, 2) for cpu in cpus],
                "load_average": [round(load, 1) for load in loads[state]],
                "heavy_imports": imports[state],
            }
    return results


# Issue 27's budgets for a cheap start: `import core` under 0.3 s, `chunkscope --help` under 1 s.
IMPORT_COMMANDS = {
    "python -c 'import core'": (["-c", "import core"], 0.3),
    "chunkscope --help": (["-m", "core", "--help"], 1.0),
    "python -c 'import core.errors'": (["-c", "import core.errors"], None),
}


def imports(root: Path, reps: int) -> dict[str, dict]:
    """Wall and CPU seconds of each IMPORT_COMMANDS entry in fresh interpreters (bytecode already compiled by a
    first, uncounted run), interleaved rep by rep, with the budget and whether the median keeps it."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(root)}
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name in IMPORT_COMMANDS}
    for rep in range(reps + 1):
        for name, (argv, _) in IMPORT_COMMANDS.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([sys.executable, *argv], cwd=root, env=env, capture_output=True, check=True)
            elapsed = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if rep:  # the first round compiles bytecode where none is cached
                rows[name].append((elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)))
    results = {}
    for name, runs in rows.items():
        walls, cpus = [wall for wall, _ in runs], [cpu for _, cpu in runs]
        budget = IMPORT_COMMANDS[name][1]
        results[name] = {
            "median_s": round(statistics.median(walls), 3),
            "min_max_s": [round(min(walls), 3), round(max(walls), 3)],
            "median_cpu_s": round(statistics.median(cpus), 3),
            "budget_s": budget,
            "met": None if budget is None else statistics.median(walls) < budget,
        }
    return results


def make_run_twice(port: int) -> dict[str, float]:
    """Seconds from ``make run`` to HTTP 200, for a first and a second start (the server is stopped between)."""
    times = {}
    for name in ("first start", "second start"):
        start = time.perf_counter()
        server = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            while not answers(port):
                if server.poll() is not None:
                    raise SystemExit(f"make run exited with {server.returncode}")
                time.sleep(0.05)
            times[name] = round(time.perf_counter() - start, 2)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait()
        while answers(port):
            time.sleep(0.1)
    return times


def answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://localhost:{port}/", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    # Only for a --root checkout from before the ONNX backend was removed (its CLI took --backend).
    parser.add_argument("--backend", default=None, choices=("auto", "onnx", "torch"))
    parser.add_argument("--root", type=Path, default=ROOT, help="The checkout whose code runs (default: this one).")
    parser.add_argument("--make-run", action="store_true", help="Also time a first and a second `make run`.")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    report = {
        "root": str(args.root),
        "backend": args.backend,
        "load_average_at_start": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "PYTHONDONTWRITEBYTECODE": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
        "imports": imports(args.root.resolve(), args.reps),
        "query": queries(args.root.resolve(), args.reps, args.backend),
    }
    if args.make_run:
        report["make_run_to_http_200_s"] = make_run_twice(args.port)
    report["load_average_at_end"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
