"""Corpus batch throughput: ``chunkscope batch`` on a folder of the benchmark corpus's documents, one file each.

    .venv/bin/python benchmarks/batch.py                    # 500 files; recursive and sentence; local 1, 2 and Ray
    .venv/bin/python benchmarks/batch.py --files 500 1000   # and peak memory at both sizes (4 MiB parts)

Method:

- **Corpus.** ``benchmarks/data/files.json`` (``benchmarks/corpus.py`` builds it) holds the corpus's documents
  one by one; the first ``N`` are written to a temporary folder as ``doc-NNNNN.md`` (the Markdown ones) or
  ``.txt``, so the loaders run as they do on a user's folder.
- **Runs.** Each run is a fresh interpreter (``--child``) that imports ChunkScope and, for Ray, starts a local
  Ray with ``num_cpus=2`` *before* the clock; then ``core.batch.run_batch`` with the splitter's defaults, the
  local engine at 1 and 2 workers, or ``engine="ray"`` on that Ray. Ray's start-up is reported apart.
- **Time.** Wall time of ``run_batch`` (the report included). CPU time: for the local engine the driver's and
  its reaped workers' (``getrusage``), exact; for Ray every process of the local Ray (driver, workers and Ray's
  own: GCS, raylet, ...), read from ``/proc`` at the start and just before ``ray.shutdown()``.
- **Memory.** Peak RSS (``VmHWM``): the driver's and each worker's. Local workers: ``getrusage(RUSAGE_CHILDREN)``
  gives the largest reaped child's peak. Ray workers: ``/proc/PID/status`` of each ``ray::`` process, read while
  they are alive (just before the shutdown). Forked workers share the driver's imported pages: RSS counts them.
- **Checks.** Every run of a splitter writes byte-identical part files (compared by SHA-256), so the engines and
  worker counts are timed doing the same work.

Prints one JSON object (``--out FILE`` also writes it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT / "benchmarks" / "data"
SPLITTERS = ("recursive", "sentence")
RUNS = (("local", 1), ("local", 2), ("ray", 2))
TICKS = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------ the corpus


def write_corpus(folder: Path, count: int) -> dict[str, int]:
    """The first ``count`` documents of files.json as files; returns the file count and bytes."""
    files = DATA / "files.json"
    if not files.exists():
        raise SystemExit(f"{files} is missing: run .venv/bin/python benchmarks/corpus.py first")
    documents = json.loads(files.read_text(encoding="utf-8"))
    markdown = set(documents["markdown"])
    texts = documents["text"][:count]
    if len(texts) < count:
        raise SystemExit(f"files.json holds {len(texts)} documents, fewer than {count}")
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for i, text in enumerate(texts):
        data = text.encode("utf-8")
        (folder / f"doc-{i:05d}.{'md' if text in markdown else 'txt'}").write_bytes(data)
        total += len(data)
    return {"files": len(texts), "bytes": total, "markdown_files": sum(text in markdown for text in texts)}


# ------------------------------------------------------------ /proc readings


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            found.append(child)
            todo.append(child)
    return found


def _reading(pid: int) -> dict[str, object] | None:
    """CPU seconds so far, peak RSS (MB) and name of a live process; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime
    peak = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
    return {"cpu": cpu, "peak_mb": peak / 1024, "name": cmdline.strip()[:80]}


def _tree(root: int) -> dict[int, dict[str, object]]:
    readings = {pid: _reading(pid) for pid in [root, *_descendants(root)]}
    return {pid: reading for pid, reading in readings.items() if reading is not None}


# -------------------------------------------------------------------- one run


def child(engine: str, workers: int, splitter: str, corpus: str, out: str, part_mb: float) -> dict[str, object]:
    """One timed run in this (fresh) process."""
    from core.batch import run_batch
    from core.config import PipelineConfig
    from core.splitters import get_splitter

    config = PipelineConfig(splitter=get_splitter(splitter))
    ray_start = 0.0
    ray = None
    if engine == "ray":
        import ray

        started = time.perf_counter()
        ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        ray_start = time.perf_counter() - started
    before = _tree(os.getpid())
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter()
    kwargs = {"part_bytes": int(part_mb * 2**20)} if part_mb else {}
    result = run_batch([corpus], config, out, engine=engine, workers=workers, **kwargs)
    wall = time.perf_counter() - wall
    self_after = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    row: dict[str, object] = {
        "engine": engine,
        "workers": workers,
        "splitter": splitter,
        "files_ok": result.report["corpus"]["files_ok"],
        "failed": result.failed,
        "nodes": result.nodes,
        "bytes": result.bytes,
        "parts": len(result.parts),
        "part_mb": part_mb or 128,
        "wall_s": round(wall, 3),
        "ray_start_s": round(ray_start, 3),
        "driver_peak_rss_mb": round(self_after.ru_maxrss / 1024, 1),
    }
    driver_cpu = (self_after.ru_utime + self_after.ru_stime) - (self_before.ru_utime + self_before.ru_stime)
    if engine == "local":
        row["cpu_s"] = round(driver_cpu + children.ru_utime + children.ru_stime, 3)
        row["driver_cpu_s"] = round(driver_cpu, 3)
        row["worker_peak_rss_mb"] = [round(children.ru_maxrss / 1024, 1)]  # the largest worker's
    else:
        after = _tree(os.getpid())
        assert ray is not None
        ray.shutdown()
        cpu = {pid: float(r["cpu"]) - float(before.get(pid, {"cpu": 0.0})["cpu"]) for pid, r in after.items()}
        workers_seen = {pid: r for pid, r in after.items() if str(r["name"]).startswith("ray::")}
        # Ray keeps idle workers started too; the ones that did the files are those that spent CPU.
        busy = [pid for pid in workers_seen if cpu[pid] >= 0.5]
        row["cpu_s"] = round(sum(cpu.values()), 3)
        row["driver_cpu_s"] = round(cpu[os.getpid()], 3)
        row["worker_cpu_s"] = round(sum(cpu[pid] for pid in workers_seen), 3)
        row["ray_system_cpu_s"] = round(row["cpu_s"] - row["driver_cpu_s"] - row["worker_cpu_s"], 3)
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
    engine: str, workers: int, splitter: str, corpus: Path, out: Path, part_mb: float = 0
) -> dict[str, object]:
    argv = [sys.executable, __file__, "--child", engine, str(workers), splitter, str(corpus), str(out), str(part_mb)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAY_DEDUP_LOGS": "0"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{engine}/{workers}/{splitter} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, nargs="+", default=[500], help="corpus sizes (the first is timed)")
    parser.add_argument("--splitters", nargs="+", default=list(SPLITTERS))
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--memory-part-mb", type=float, default=4, help="part size of the memory-by-size runs")
    parser.add_argument("--only-memory", action="store_true", help="skip the timed runs")
    parser.add_argument("--child", nargs=6, metavar=("ENGINE", "WORKERS", "SPLITTER", "CORPUS", "OUT", "PART_MB"))
    args = parser.parse_args(argv)
    if args.child:
        engine, workers, splitter, corpus, out, part_mb = args.child
        print(json.dumps(child(engine, int(workers), splitter, corpus, out, float(part_mb))))
        return 0

    results: dict[str, object] = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    results["load_before"] = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="chunkscope-batch-bench-") as temporary:
        root = Path(temporary)
        corpora = {n: (root / f"corpus-{n}", write_corpus(root / f"corpus-{n}", n)) for n in args.files}
        first = args.files[0]
        results["corpus"] = {str(n): info for n, (_, info) in corpora.items()}
        runs = []
        for splitter in [] if args.only_memory else args.splitters:
            for engine, workers in RUNS:
                out = root / f"out-{splitter}-{engine}-{workers}"
                row = run_child(engine, workers, splitter, corpora[first][0], out)
                row["corpus_files"] = first
                runs.append(row)
                print(json.dumps(row), file=sys.stderr)
            hashes = {row["part_sha256"] for row in runs if row["splitter"] == splitter}
            if len(hashes) != 1:
                raise SystemExit(f"{splitter}: the runs wrote different part files")
        # Memory against corpus size: the local engine at 2 workers, recursive, with small parts so that
        # every size writes several (the driver holds at most one part's rows: that, not the corpus, bounds it).
        for n in args.files if len(args.files) > 1 else []:
            for splitter in args.splitters[:1]:
                out = root / f"out-{splitter}-size-{n}"
                row = run_child("local", 2, splitter, corpora[n][0], out, args.memory_part_mb)
                row["corpus_files"] = n
                runs.append(row)
                print(json.dumps(row), file=sys.stderr)
    results["runs"] = runs
    results["load_after"] = os.getloadavg()
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
