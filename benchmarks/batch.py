"""Corpus batch throughput: ``chunkscope batch`` on a folder of the benchmark corpus's documents, one file each.

    .venv/bin/python benchmarks/batch.py                    # 21 MB of this machine's texts; local 1, 2 and Ray
    .venv/bin/python benchmarks/batch.py --measures sizes metrics --splitters recursive   # and with --metrics
    .venv/bin/python benchmarks/batch.py --copies 1 4       # and peak memory with the corpus four times over
    .venv/bin/python benchmarks/batch.py --files 500 1000   # benchmarks/data/files.json's documents instead
    .venv/bin/python benchmarks/batch.py --rounds 3 --runs local:1 local:2   # interleaved rounds, medians

Per stage of a worker (load, split, metrics, Arrow...): ``benchmarks/batch_stages.py``.

Method:

- **Corpus.** By default ``--local-mb`` MB of the Markdown, reST and text files this machine holds
  (``batch_stages.build_local_corpus``: the Python standard library's, the installed packages', /usr/share/doc),
  copied at run time, ``--copies`` times over in sub-folders for the memory runs. With ``--files``:
  ``benchmarks/data/files.json`` (``benchmarks/corpus.py`` builds it) holds the corpus's documents one by one;
  the first ``N`` are written to a temporary folder as ``doc-NNNNN.md`` (the Markdown ones) or ``.txt``.
- **Measures.** ``--measures sizes metrics``: each run without and with ``--metrics`` (model tokens, lint
  flags, chunk metrics). ``mb_per_worker_cpu_s`` is the corpus's MB over the workers' CPU (the local engine's
  reaped children; the driver's apart in ``driver_cpu_s``).
- **Runs.** Each run is a fresh interpreter (``--child``) that imports ChunkScope and, for Ray, starts a local
  Ray with ``num_cpus=2`` and uses Ray Data once (``range(1)``, which starts its per-cluster actors) *before*
  the clock; then ``core.batch.run_batch`` with the splitter's defaults, the local engine at 1 and 2 workers, or
  ``engine="ray"`` on that Ray. Both start-ups are reported apart (``ray_start_s``, ``ray_data_start_s``); the
  Ray actors that run the files start inside the clock, at every run.
- **Time.** Wall time of ``run_batch`` (the report included). CPU time: for the local engine the driver's and
  its reaped workers' (``getrusage``), exact; for Ray every process of the local Ray (driver, workers and Ray's
  own: GCS, raylet, ...), read from ``/proc`` at the start, every 0.2 s during the run and just before
  ``ray.shutdown()``: a Ray actor's process ends with its dataset, so its last reading (at most 0.2 s old, and
  an actor idles at the end) stands for it. (Its time is not in any parent's ``cutime``: init reaps it.)
- **Memory.** Peak RSS (``VmHWM``): the driver's and each worker's. Local workers: ``getrusage(RUSAGE_CHILDREN)``
  gives the largest reaped child's peak. Ray workers: ``/proc/PID/status`` of each ``ray::`` process, its last
  reading while alive. Forked workers share the driver's imported pages: RSS counts them.
- **Run-queue wait.** ``/proc/PID/schedstat`` (run delay) of each local worker: the time it was ready but had no
  core. ``free_core_wall_estimate_s`` is the wall less the workers' mean wait: on a machine shared with other jobs,
  an estimate of the run on cores of its own (it also removes what the driver took from the workers).
- **Rounds.** ``--rounds N`` repeats every run N times, interleaved (each round runs every splitter and engine
  once), and ``summary`` gives medians with min–max: wall, CPU, the speed-up of 2 local workers over 1 and Ray's
  wall and CPU over the local engine at the same worker count, each per round, then the median of the rounds.
- **Checks.** Every run of a splitter writes byte-identical part files (compared by SHA-256), so the engines and
  worker counts are timed doing the same work.
- **Bytecode.** ``core/`` is compiled (``compileall``) before the runs, as an installed package is (pip compiles a
  wheel's modules at install; an editable install writes them on its first run). Where ``PYTHONDONTWRITEBYTECODE``
  is set (this machine sets it) and nothing compiled them, every run would compile, in the driver and again in
  each worker, each module imported after the fork: ~10 ms a process that no user's second run pays.
  ``--no-compile`` leaves ``core/`` as it is; ``core_bytecode`` in the output says which it was.

Prints one JSON object (``--out FILE`` also writes it).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
DATA = ROOT / "benchmarks" / "data"
SPLITTERS = ("recursive", "sentence")
RUNS = ("local:1", "local:2", "ray:2")
TICKS = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------ the corpus


def write_corpus(folder: Path, count: int) -> dict[str, int]:
    """The first ``count`` documents of files.json as files; returns the file count and bytes.

    Past the corpus's documents the files repeat it in order: a larger corpus for start-up costs to be
    measured against. A copy comes a whole corpus after its original, and a worker keeps what it derives
    from a text (token indexes, sentence cuts) for its last 8 texts only, so no copy finds it kept.
    """
    files = DATA / "files.json"
    if not files.exists():
        raise SystemExit(f"{files} is missing: run .venv/bin/python benchmarks/corpus.py first")
    documents = json.loads(files.read_text(encoding="utf-8"))
    markdown = set(documents["markdown"])
    corpus = documents["text"]
    texts = [corpus[i % len(corpus)] for i in range(count)]
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for i, text in enumerate(texts):
        data = text.encode("utf-8")
        (folder / f"doc-{i:05d}.{'md' if text in markdown else 'txt'}").write_bytes(data)
        total += len(data)
    return {"files": len(texts), "bytes": total, "markdown_files": sum(text in markdown for text in texts)}


# ------------------------------------------------------------ /proc readings


def _descendants(root: int) -> list[int]:
    """Every descendant of ``root``, from the kernel's children lists (no scan of all of /proc)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").glob("*") if Path(f"/proc/{pid}/task").exists() else []:
            try:
                children = [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                continue
            found.extend(children)
            todo.extend(children)
    return found


def _reading(pid: int) -> dict[str, object] | None:
    """CPU seconds so far, run-queue wait, peak RSS (MB) and name of a live process; None once it is gone.

    The wait (``schedstat``'s run_delay) is the time the process was ready to run but had no core: on a
    shared machine, what other jobs (or this run's own processes) took from it.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        delay = int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime
    peak = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
    return {"cpu": cpu, "run_delay": delay, "peak_mb": peak / 1024, "name": cmdline.strip()[:80]}


def _tree(root: int) -> dict[int, dict[str, object]]:
    readings = {pid: _reading(pid) for pid in [root, *_descendants(root)]}
    return {pid: reading for pid, reading in readings.items() if reading is not None}


class _Watcher:
    """Readings of the process tree every ``every`` seconds while a run goes: the last one of each process.

    A pool worker or a Ray actor ends with its run, so the end-of-run reading misses it; its last
    reading here (at most ``every`` old) names it and gives its CPU, run-queue wait and peak RSS.
    The watcher's own CPU (``cpu``) is subtracted from the driver's.
    """

    def __init__(self, every: float = 0.2) -> None:
        import threading

        self.every = every
        self.seen: dict[int, dict[str, object]] = {}
        self.cpu = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(self.every):
            started = time.thread_time()
            self.seen.update(_tree(os.getpid()))
            self.cpu += time.thread_time() - started

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


# -------------------------------------------------------------------- one run


def child(
    engine: str, workers: int, splitter: str, corpus: str, out: str, part_mb: float, metrics: bool = False
) -> dict[str, object]:
    """One timed run in this (fresh) process."""
    from core.batch import run_batch
    from core.config import PipelineConfig
    from core.splitters import get_splitter

    config = PipelineConfig(splitter=get_splitter(splitter))
    ray_start = ray_data_start = 0.0
    ray = None
    if engine == "ray":
        import ray

        started = time.perf_counter()
        ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        ray_start = time.perf_counter() - started
        # Ray Data's first use starts its per-cluster actors (stats, autoscaling, actor locations): part of
        # starting a cluster, which a long-lived one has paid already. Timed apart, as ray.init is.
        import ray.data

        ray.data.DataContext.get_current().enable_progress_bars = False
        started = time.perf_counter()
        ray.data.range(1).materialize()
        ray_data_start = time.perf_counter() - started
    before = _tree(os.getpid())
    if engine == "local":
        # The watcher below is a thread, and with a thread running the pool starts its workers with spawn
        # (core.runtime.parallel.pool_context); the CLI runs none, so its workers fork: measure that.
        import multiprocessing

        from core.batch import local_engine

        local_engine.pool_context = lambda: multiprocessing.get_context("fork")
    watcher = _Watcher()
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter()
    kwargs = {"part_bytes": int(part_mb * 2**20)} if part_mb else {}
    result = run_batch([corpus], config, out, engine=engine, workers=workers, metrics=metrics, **kwargs)
    wall = time.perf_counter() - wall
    watcher.stop()
    self_after = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    row: dict[str, object] = {
        "engine": engine,
        "workers": workers,
        "splitter": splitter,
        "metrics": metrics,
        "files_ok": result.report["corpus"]["files_ok"],
        "failed": result.failed,
        "nodes": result.nodes,
        "bytes": result.bytes,
        "parts": len(result.parts),
        "part_mb": part_mb or 128,
        "wall_s": round(wall, 3),
        "ray_start_s": round(ray_start, 3),
        "ray_data_start_s": round(ray_data_start, 3),
        "driver_peak_rss_mb": round(self_after.ru_maxrss / 1024, 1),
    }
    driver_cpu = (self_after.ru_utime + self_after.ru_stime) - (self_before.ru_utime + self_before.ru_stime)
    if engine == "local":
        driver_cpu -= watcher.cpu
        row["cpu_s"] = round(driver_cpu + children.ru_utime + children.ru_stime, 3)
        row["driver_cpu_s"] = round(driver_cpu, 3)
        row["worker_cpu_s"] = round(children.ru_utime + children.ru_stime, 3)
        row["mb_per_worker_cpu_s"] = round(result.bytes / 1e6 / max(row["worker_cpu_s"], 1e-9), 2)
        row["worker_peak_rss_mb"] = [round(children.ru_maxrss / 1024, 1)]  # the largest worker's
        pool = {pid: r for pid, r in watcher.seen.items() if pid != os.getpid() and float(r["cpu"]) >= 0.5}
        delays = [float(r["run_delay"]) for r in pool.values()]
        row["worker_cpu_each_s"] = sorted(round(float(r["cpu"]), 2) for r in pool.values())
        row["worker_run_delay_s"] = sorted(round(delay, 2) for delay in delays)
        # The workers are the critical path: on cores of its own the run would have ended about their
        # mean wait earlier (an estimate; it also removes what the driver took from them).
        row["free_core_wall_estimate_s"] = round(wall - sum(delays) / max(len(delays), 1), 3)
    else:
        after = _tree(os.getpid())
        assert ray is not None
        ray.shutdown()
        # Every process seen: live ones read now, ended ones (the actors) at their last reading.
        last = {**watcher.seen, **after}
        cpu = {pid: float(r["cpu"]) - float(before.get(pid, {"cpu": 0.0})["cpu"]) for pid, r in last.items()}
        cpu[os.getpid()] -= watcher.cpu
        total = sum(cpu.values())
        workers_seen = {pid: r for pid, r in last.items() if str(r["name"]).startswith("ray::")}
        # Ray keeps idle workers started too; the ones that did the files are those that spent CPU.
        busy = [pid for pid in workers_seen if cpu[pid] >= 0.5]
        row["cpu_s"] = round(total, 3)
        row["watcher_cpu_s"] = round(watcher.cpu, 3)
        row["driver_cpu_s"] = round(cpu[os.getpid()], 3)
        row["worker_cpu_s"] = round(sum(cpu[pid] for pid in workers_seen), 3)
        row["ray_system_cpu_s"] = round(row["cpu_s"] - row["driver_cpu_s"] - row["worker_cpu_s"], 3)
        row["worker_processes"] = sorted(
            f"{str(workers_seen[pid]['name']).split()[0]} {cpu[pid]:.2f}s" for pid in workers_seen
        )
        row["worker_peak_rss_mb"] = sorted(round(float(workers_seen[pid]["peak_mb"]), 1) for pid in busy)
        row["idle_worker_peak_rss_mb"] = sorted(
            round(float(r["peak_mb"]), 1) for pid, r in workers_seen.items() if pid not in busy
        )
        row["ray_system_peak_rss_mb"] = round(
            sum(float(r["peak_mb"]) for pid, r in after.items() if pid != os.getpid() and pid not in workers_seen), 1
        )
    row["files_per_s"] = round(row["files_ok"] / wall, 2)
    row["mb_per_s"] = round(result.bytes / 1e6 / wall, 3)
    row["nodes_per_s"] = round(result.nodes / wall, 1)
    row["part_sha256"] = hashlib.sha256(
        b"".join(hashlib.sha256(p.read_bytes()).digest() for p in sorted(Path(out, "nodes").glob("part-*.parquet")))
    ).hexdigest()
    return row


def run_child(
    engine: str, workers: int, splitter: str, corpus: Path, out: Path, part_mb: float = 0, metrics: bool = False
) -> dict[str, object]:
    argv = [sys.executable, __file__, "--child", engine, str(workers), splitter, str(corpus), str(out), str(part_mb)]
    argv.append("1" if metrics else "0")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAY_DEDUP_LOGS": "0"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{engine}/{workers}/{splitter} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compile_core(compile_first: bool = True) -> str:
    """Compile ``core/``'s modules (``compile_first``); say whether every one has bytecode for this interpreter."""
    if compile_first:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "core")], check=True)
    import importlib.util

    sources = list((ROOT / "core").rglob("*.py"))
    compiled = sum(Path(importlib.util.cache_from_source(str(source))).is_file() for source in sources)
    return "compiled" if compiled == len(sources) else f"{compiled} of {len(sources)} modules compiled"


def _spread(values: list[float]) -> dict[str, float]:
    median = statistics.median(values)
    return {"median": round(median, 3), "min": round(min(values), 3), "max": round(max(values), 3), "n": len(values)}


def _ratios(by_run: dict[str, dict[int, dict[str, object]]], top: str, bottom: str, key: str) -> object:
    """``top``'s ``key`` over ``bottom``'s, round by round (None when either run is missing)."""
    pairs = [
        float(by_run[top][r][key]) / float(by_run[bottom][r][key])  # type: ignore[arg-type]
        for r in by_run.get(top, {})
        if r in by_run.get(bottom, {})
    ]
    return _spread(pairs) if pairs else None


def summarize(runs: list[dict[str, object]]) -> dict[str, object]:
    """Medians (min–max) per splitter and run, and the per-round ratios the issue's targets are about."""
    timed = [row for row in runs if "round" in row]
    summary: dict[str, object] = {}
    for splitter, metrics in sorted({(str(row["splitter"]), bool(row.get("metrics"))) for row in timed}):
        rows = [row for row in timed if row["splitter"] == splitter and bool(row.get("metrics")) == metrics]
        by_run: dict[str, dict[int, dict[str, object]]] = {}
        for row in rows:
            by_run.setdefault(f"{row['engine']}:{row['workers']}", {})[int(row["round"])] = row
        entry: dict[str, object] = {}
        for name, rounds in by_run.items():
            keys = ("wall_s", "cpu_s", "driver_cpu_s", "worker_cpu_s", "mb_per_worker_cpu_s")
            entry[name] = {
                key: _spread([float(row[key]) for row in rounds.values()])
                for key in (*keys, "ray_start_s", "ray_data_start_s")
                if all(key in row for row in rounds.values())
            }
        entry["speedup_2_over_1_wall"] = _ratios(by_run, "local:1", "local:2", "wall_s")
        entry["cpu_2_over_1"] = _ratios(by_run, "local:2", "local:1", "cpu_s")
        entry["speedup_2_over_1_free_core_estimate"] = _ratios(
            by_run, "local:1", "local:2", "free_core_wall_estimate_s"
        )
        for name in by_run:
            if name.startswith("ray:"):
                local = "local:" + name.split(":")[1]
                entry[f"{name}_over_{local}_wall"] = _ratios(by_run, name, local, "wall_s")
                entry[f"{name}_over_{local}_cpu"] = _ratios(by_run, name, local, "cpu_s")
        summary[f"{splitter} --metrics" if metrics else splitter] = entry
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, nargs="+", help="files.json's first N documents (the first is timed)")
    parser.add_argument("--local-mb", type=float, default=21, help="MB of this machine's texts (default corpus)")
    parser.add_argument("--copies", type=int, nargs="+", default=[1], help="that corpus N times over (memory runs)")
    parser.add_argument("--measures", nargs="+", choices=("sizes", "metrics"), default=["sizes"])
    parser.add_argument("--splitters", nargs="+", default=list(SPLITTERS))
    parser.add_argument("--runs", nargs="+", default=list(RUNS), help="ENGINE:WORKERS runs (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved repetitions of every run")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--memory-part-mb", type=float, default=4, help="part size of the memory-by-size runs")
    parser.add_argument("--only-memory", action="store_true", help="skip the timed runs")
    parser.add_argument("--no-compile", action="store_true", help="time core/ as it is, bytecode or not")
    parser.add_argument(
        "--child", nargs=7, metavar=("ENGINE", "WORKERS", "SPLITTER", "CORPUS", "OUT", "PART_MB", "METRICS")
    )
    args = parser.parse_args(argv)
    if args.child:
        engine, workers, splitter, corpus, out, part_mb, metrics = args.child
        print(json.dumps(child(engine, int(workers), splitter, corpus, out, float(part_mb), metrics == "1")))
        return 0

    plan = [(engine, int(workers)) for engine, workers in (run.split(":") for run in args.runs)]
    results: dict[str, object] = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    results["load_before"] = os.getloadavg()
    results["core_bytecode"] = compile_core(not args.no_compile)
    with tempfile.TemporaryDirectory(prefix="chunkscope-batch-bench-") as temporary:
        root = Path(temporary)
        if args.files:
            corpora = {n: (root / f"corpus-{n}", write_corpus(root / f"corpus-{n}", n)) for n in args.files}
        else:
            from batch_stages import build_local_corpus

            corpora = {
                n: (root / f"corpus-x{n}", build_local_corpus(root / f"corpus-x{n}", args.local_mb, copies=n))
                for n in args.copies
            }
        sizes = list(corpora)
        first = sizes[0]
        results["corpus"] = {str(n): info for n, (_, info) in corpora.items()}
        runs: list[dict[str, object]] = []
        for number in [] if args.only_memory else range(args.rounds):
            for splitter, measure, (engine, workers) in itertools.product(args.splitters, args.measures, plan):
                out = root / f"out-{splitter}-{measure}-{engine}-{workers}-{number}"
                row = run_child(engine, workers, splitter, corpora[first][0], out, metrics=measure == "metrics")
                shutil.rmtree(out, ignore_errors=True)
                row["corpus_files"] = first
                row["round"] = number
                row["load_1min"] = round(os.getloadavg()[0], 2)
                runs.append(row)
                print(json.dumps(row), file=sys.stderr)
        for splitter, measure in itertools.product(args.splitters, args.measures):
            same = [row for row in runs if row["splitter"] == splitter and row["metrics"] == (measure == "metrics")]
            if len({row["part_sha256"] for row in same}) > 1:
                raise SystemExit(f"{splitter} ({measure}): the runs wrote different part files")
        # Memory against corpus size: the local engine at 2 workers, recursive, with small parts so that
        # every size writes several (the driver holds at most one part's rows: that, not the corpus, bounds it).
        for n in sizes if len(sizes) > 1 else []:
            for splitter in args.splitters[:1]:
                out = root / f"out-{splitter}-size-{n}"
                row = run_child("local", 2, splitter, corpora[n][0], out, args.memory_part_mb)
                row["corpus_files"] = n
                runs.append(row)
                print(json.dumps(row), file=sys.stderr)
    results["runs"] = runs
    results["summary"] = summarize(runs)
    results["load_after"] = os.getloadavg()
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
