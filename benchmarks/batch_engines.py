"""Where a batch's CPU goes: the driver against its workers, Ray against the local engine, and actors' memory.

    .venv/bin/python benchmarks/batch_engines.py                       # 21 MB, x1 and x4; local 1, 2 and Ray 2
    .venv/bin/python benchmarks/batch_engines.py --copies 1 --runs local:2 ray:2 --rounds 3
    .venv/bin/python benchmarks/batch_engines.py --copies 1 --rounds 3 --runs local:1 local:2   # 2 workers over 1

Method:

- **Corpus, built at run time from text on this machine** (nothing third-party is committed): the
  documentation files of the installed packages (``*.md``, ``*.rst``, ``*.txt`` in site-packages, 2 KB to
  1 MB each), then the Python standard library's modules as ``.txt``, in sorted order until ``--mb``
  megabytes. ``--copies 4`` puts the same files in four folders (four times the bytes; ids differ by path).
- **Runs.** Each run is a fresh interpreter (``--child``) that imports ChunkScope (and, for Ray, starts a
  local Ray with ``num_cpus`` = the workers: its start-up is reported apart, ``ray_start_cpu_s``), then
  ``core.batch.run_batch`` with ``recursive`` 1000/200 and the default outputs.
- **CPU.** The driver's own (``getrusage(RUSAGE_SELF)`` less this script's watcher thread); the local
  workers' (``RUSAGE_CHILDREN``, exact); for Ray every process of the local Ray (driver, actors, GCS,
  raylet, ...) from ``/proc``, read before the run, every 0.2 s and at its end (an actor ends with the
  run: its last reading stands for it). ``driver_cpu_per_mb_ms`` and the driver's share of the workers'
  CPU are the issue's measure; ``--copies 1 4`` gives the driver's cost per added MB apart from its
  fixed start (imports, planning, the report).
- **Memory.** Peak RSS (``VmHWM``) of the driver, of the largest local worker, and of each Ray actor.
- **Checks.** Every run of a corpus writes byte-identical parts.
- **Bytecode.** ``core/`` is compiled first, as in ``benchmarks/batch.py`` (``--no-compile``: as it is).
- **Summary** (stderr and ``summary``): per corpus and run, the medians over ``--rounds`` and the speed-up of
  each run's median wall over local:1's, with the highest load average seen before a round: a wall-clock
  speed-up is only worth reading where that load is well under one.

Prints one JSON object (``--out FILE`` also writes it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from batch import _tree, _Watcher, compile_core  # noqa: E402 - the /proc readings and bytecode of benchmarks/batch.py


class _NamingWatcher(_Watcher):
    """benchmarks/batch.py's watcher, keeping each process's name and peak memory: an actor killed at the end is
    a zombie for a moment, its CPU still readable in /proc but its command line and memory gone."""

    def _watch(self) -> None:
        while not self._stop.wait(self.every):
            started = time.thread_time()
            for pid, reading in _tree(os.getpid()).items():
                if pid in self.seen:
                    reading["name"] = reading["name"] or self.seen[pid]["name"]
                    reading["peak_mb"] = max(float(reading["peak_mb"]), float(self.seen[pid]["peak_mb"]))
                self.seen[pid] = reading
            self.cpu += time.thread_time() - started

DOC_SUFFIXES = (".md", ".rst", ".txt")


def text_files(limit_bytes: int) -> list[Path]:
    """Installed packages' documentation, then stdlib modules, sorted, until ``limit_bytes``."""
    found: list[Path] = []
    total = 0
    packages = [Path(p) for p in site.getsitepackages()]
    docs = sorted(
        path
        for root in packages
        for path in root.rglob("*")
        if path.suffix in DOC_SUFFIXES and path.is_file() and 2_000 <= path.stat().st_size <= 1_000_000
    )
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    modules = sorted(
        path
        for path in stdlib.rglob("*.py")
        if "site-packages" not in path.parts and 2_000 <= path.stat().st_size <= 1_000_000
    )
    for path in [*docs, *modules]:
        if total >= limit_bytes:
            break
        found.append(path)
        total += path.stat().st_size
    return found


def write_corpus(folder: Path, sources: list[Path], copies: int) -> dict[str, int]:
    total = 0
    for copy in range(copies):
        target = folder / f"copy{copy}"
        target.mkdir(parents=True, exist_ok=True)
        for number, source in enumerate(sources):
            suffix = source.suffix if source.suffix in DOC_SUFFIXES else ".txt"
            data = source.read_bytes()
            (target / f"{number:05d}{suffix}").write_bytes(data)
            total += len(data)
    return {"files": len(sources) * copies, "bytes": total}


def child(engine: str, workers: int, corpus: str, out: str) -> dict[str, object]:
    from core.batch import run_batch
    from core.config import PipelineConfig
    from core.splitters import get_splitter

    config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=1000, chunk_overlap=200))
    phases = _time_driver_phases()
    ray = None
    start_cpu = 0.0
    before = _tree(os.getpid())
    if engine == "ray":
        import ray

        ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        time.sleep(1.0)  # let Ray's own processes finish starting before the readings
        started = _tree(os.getpid())
        start_cpu = sum(float(r["cpu"]) - float(before.get(pid, {"cpu": 0.0})["cpu"]) for pid, r in started.items())
        before = started
    # Ray's processes are read from /proc as the run goes; a local run needs no watcher (its workers are reaped
    # children), and a thread would make the pool start its workers with spawn, not fork (core.runtime.parallel):
    # the measure would then be of a run the CLI does not make.
    watcher = _NamingWatcher() if engine == "ray" else None
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter()
    result = run_batch([corpus], config, out, engine=engine, workers=workers)
    wall = time.perf_counter() - wall
    if watcher is not None:
        watcher.stop()
    self_after = resource.getrusage(resource.RUSAGE_SELF)
    watched = watcher.cpu if watcher is not None else 0.0
    driver = (self_after.ru_utime + self_after.ru_stime) - (self_before.ru_utime + self_before.ru_stime) - watched
    row: dict[str, object] = {"engine": engine, "workers": workers, "bytes": result.bytes, "nodes": result.nodes}
    row["files"] = result.processed
    row["parts"] = len(result.parts)
    row["wall_s"] = round(wall, 3)
    row["driver_cpu_s"] = round(driver, 3)
    row["driver_peak_rss_mb"] = round(self_after.ru_maxrss / 1024, 1)
    # The driver's main thread by phase: before the workers start (listing, planning), while they run (recording
    # shards: what bounds how many workers one driver keeps up with), after (the report).
    row["driver_phase_cpu_s"] = {key: round(value, 3) for key, value in phases.items()}
    if engine == "local":
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        row["worker_cpu_s"] = round(children.ru_utime + children.ru_stime, 3)
        row["worker_peak_rss_mb"] = round(children.ru_maxrss / 1024, 1)
        row["other_cpu_s"] = 0.0
    else:
        after = _tree(os.getpid())
        assert watcher is not None
        last = dict(watcher.seen)
        for pid, reading in after.items():  # live to the end: this last reading, with the peak seen before
            if reading["name"]:
                seen_peak = float(watcher.seen.get(pid, reading)["peak_mb"])
                last[pid] = {**reading, "peak_mb": max(float(reading["peak_mb"]), seen_peak)}
        cpu = {pid: float(r["cpu"]) - float(before.get(pid, {"cpu": 0.0})["cpu"]) for pid, r in last.items()}
        actors = {pid for pid, r in last.items() if str(r["name"]).startswith("ray::") and cpu[pid] >= 0.5}
        row["processes"] = sorted(f"{(str(last[pid]['name']) or '?').split()[0]} {cpu[pid]:.2f}s" for pid in last)
        row["worker_cpu_s"] = round(sum(cpu[pid] for pid in actors), 3)
        row["other_cpu_s"] = round(sum(c for pid, c in cpu.items() if pid not in actors and pid != os.getpid()), 3)
        row["actor_peak_rss_mb"] = sorted(round(float(last[pid]["peak_mb"]), 1) for pid in actors)
        row["ray_system_peak_rss_mb"] = round(
            sum(float(r["peak_mb"]) for pid, r in after.items() if pid != os.getpid() and pid not in actors), 1
        )
        row["ray_start_cpu_s"] = round(start_cpu, 3)
        ray.shutdown()
    mb = result.bytes / 1e6
    row["total_cpu_s"] = round(driver + float(row["worker_cpu_s"]) + float(row["other_cpu_s"]), 3)
    row["worker_mb_per_cpu_s"] = round(mb / max(float(row["worker_cpu_s"]), 1e-9), 3)
    row["driver_cpu_per_mb_ms"] = round(1000 * driver / mb, 2)
    row["driver_share_of_workers"] = round(driver / max(float(row["worker_cpu_s"]), 1e-9), 4)
    row["parts_mb"] = round(sum(p.stat().st_size for p in Path(out, "nodes").glob("part-*.parquet")) / 1e6, 2)
    row["part_sha256"] = hashlib.sha256(
        b"".join(hashlib.sha256(p.read_bytes()).digest() for p in sorted(Path(out, "nodes").glob("part-*.parquet")))
    ).hexdigest()
    return row


def _time_driver_phases() -> dict[str, float]:
    """Wrap the driver's steps to add up their CPU time (this thread's) by phase."""
    from core.batch import report, run, shards

    phases = {"list_inputs": 0.0, "plan_shards": 0.0, "record_shards": 0.0, "report": 0.0}

    def timed(function, key):  # noqa: ANN001, ANN202
        def wrapper(*args, **kwargs):  # noqa: ANN202
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                phases[key] += time.thread_time() - started

        return wrapper

    run.expand_inputs = timed(run.expand_inputs, "list_inputs")
    run.plan_shards = timed(run.plan_shards, "plan_shards")
    shards.ShardRecorder.add = timed(shards.ShardRecorder.add, "record_shards")
    report.write_report = timed(report.write_report, "report")
    return phases


def summary(runs: list[dict[str, object]]) -> dict[str, object]:
    """Per corpus and run: the median wall, CPU and rates over the rounds; and each run's speed-up over local:1
    (its median wall against local:1's), the number to read on a quiet machine (with the load beside it)."""
    from statistics import median

    found: dict[str, object] = {}
    for copies in sorted({int(row["copies"]) for row in runs}):
        mine = [row for row in runs if row["copies"] == copies]
        by_run: dict[str, dict[str, float]] = {}
        for name in dict.fromkeys(f"{row['engine']}:{row['workers']}" for row in mine):
            rows = [row for row in mine if f"{row['engine']}:{row['workers']}" == name]
            by_run[name] = {
                key: round(median(float(row[key]) for row in rows), 4)
                for key in ("wall_s", "worker_cpu_s", "driver_cpu_s", "worker_mb_per_cpu_s", "driver_share_of_workers")
            }
            by_run[name]["load_1min_before"] = round(max(float(row["load_1min_before"]) for row in rows), 2)
            by_run[name]["rounds"] = len(rows)
        one = by_run.get("local:1")
        if one:
            for numbers in by_run.values():
                numbers["speedup_over_local_1"] = round(one["wall_s"] / numbers["wall_s"], 3)
        found[f"x{copies}"] = by_run
    return found


def run_child(engine: str, workers: int, corpus: Path, out: Path) -> dict[str, object]:
    argv = [sys.executable, __file__, "--child", engine, str(workers), str(corpus), str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{engine}:{workers} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=21.0, help="megabytes of text in one copy of the corpus")
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--runs", nargs="+", default=["local:1", "local:2", "ray:2"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-compile", action="store_true", help="time core/ as it is, bytecode or not")
    parser.add_argument("--child", nargs=4, metavar=("ENGINE", "WORKERS", "CORPUS", "OUT"))
    args = parser.parse_args(argv)
    if args.child:
        engine, workers, corpus, out = args.child
        print(json.dumps(child(engine, int(workers), corpus, out)))
        return 0
    results: dict[str, object] = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    results["cpus"] = os.cpu_count()
    results["core_bytecode"] = compile_core(not args.no_compile)
    runs = []
    sources = text_files(int(args.mb * 1e6))
    with tempfile.TemporaryDirectory(prefix="chunkscope-engines-") as temporary:
        root = Path(temporary)
        corpora = {n: write_corpus(root / f"corpus-x{n}", sources, n) for n in args.copies}
        results["corpora"] = {f"x{n}": info for n, info in corpora.items()}
        for copies in args.copies:
            for number in range(args.rounds):
                for run in args.runs:
                    engine, workers = run.split(":")
                    out = root / f"out-{copies}-{run.replace(':', '-')}-{number}"
                    load = os.getloadavg()[0]
                    row = run_child(engine, int(workers), root / f"corpus-x{copies}", out)
                    shutil.rmtree(out, ignore_errors=True)
                    row.update({"copies": copies, "round": number, "load_1min_before": round(load, 2)})
                    row["load_1min_after"] = round(os.getloadavg()[0], 2)
                    runs.append(row)
                    print(json.dumps(row), file=sys.stderr)
            hashes = {row["part_sha256"] for row in runs if row["copies"] == copies}
            if len(hashes) > 1:
                raise SystemExit(f"x{copies}: the runs wrote different part files")
    results["runs"] = runs
    results["summary"] = summary(runs)
    print(json.dumps(results["summary"], indent=1), file=sys.stderr)
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
