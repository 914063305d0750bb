"""What a batch worker's CPU goes to, stage by stage, on a corpus built from text this machine already holds.

    .venv/bin/python benchmarks/batch_stages.py                       # 21 MB, recursive, sizes and --metrics
    .venv/bin/python benchmarks/batch_stages.py --megabytes 5 --splitters recursive sentence

The corpus (:func:`build_local_corpus`): the Markdown, reST and text files of 8 KB to 1 MB under the Python
standard library, the installed packages and /usr/share/doc, copied at run time (never committed). Each
measurement is a fresh interpreter (``--child``) that makes itself a worker as the
engines do (one thread, :func:`core.batch.work.use_one_core`; the tokenizers and the configuration warmed
before the clock) and runs :func:`core.batch.work.process_file` on every file in turn, with
:class:`core.batch.work.StageClock` summing the CPU of each stage (this process's and the bounded children's
it reaped): read (and hash), load, prepare (ids, extractors, metadata), split, views (the LLM and EMBED
texts), sizes or metrics, columns (the Python lists), embed, arrow (the table, its IPC stream, row sizes).
The worker's MB per CPU-second is the corpus's bytes over the stages' sum (the engine's own cost, pickling
the result to the driver, is not in it; ``benchmarks/batch.py`` times whole runs).

Prints one JSON object and a Markdown table per run on stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Where the machine keeps text of its own: the Python standard library's, the installed packages' (their
# README, reST docs and licences) and Debian's /usr/share/doc. Read at run time, never committed.
LOCAL_SUFFIXES = (".md", ".rst", ".txt")
LOCAL_MIN_BYTES = 8192
LOCAL_MAX_BYTES = 1_000_000


def local_roots() -> list[Path]:
    import sysconfig

    paths = sysconfig.get_paths()
    return [Path(p) for p in dict.fromkeys([paths["stdlib"], paths["purelib"], "/usr/share/doc"]) if Path(p).is_dir()]


def build_local_corpus(folder: Path, megabytes: float, copies: int = 1) -> dict[str, object]:
    """About ``megabytes`` of the Markdown, reST and text files this machine holds, copied into ``folder``.

    Files of 1 KB to 1 MB under :func:`local_roots`, in an order fixed by their paths' SHA-256 (so
    the kinds mix and two runs on one machine pick the same files), each copied as ``NNNNN-name``
    (its extension kept, so the loaders run as on a user's folder). ``copies`` > 1 repeats the
    whole set in sub-folders ``copy-K/`` (the same texts, other paths: a corpus that grows).
    """
    found = []
    for root in local_roots():
        for path in root.rglob("*"):
            if path.suffix.lower() in LOCAL_SUFFIXES and path.is_file() and not path.is_symlink():
                size = path.stat().st_size
                if LOCAL_MIN_BYTES <= size <= LOCAL_MAX_BYTES:
                    found.append(path)
    found.sort(key=lambda p: hashlib.sha256(str(p).encode()).hexdigest())
    budget, chosen = megabytes * 1e6, []
    for path in found:
        if budget <= 0:
            break
        chosen.append(path)
        budget -= path.stat().st_size
    total, kinds = 0, {}
    for copy in range(copies):
        target = folder / f"copy-{copy}" if copies > 1 else folder
        target.mkdir(parents=True, exist_ok=True)
        for i, path in enumerate(chosen):
            data = path.read_bytes()
            (target / f"{i:05d}-{path.name}").write_bytes(data)
            total += len(data)
            kinds[path.suffix.lower()] = kinds.get(path.suffix.lower(), 0) + 1
    return {"files": len(chosen) * copies, "bytes": total, "by_extension": kinds, "roots": [str(r) for r in local_roots()]}


def child(splitter: str, corpus: str, metrics: bool) -> dict[str, object]:
    """One worker's pass over the corpus, in this (fresh) process: CPU seconds per stage."""
    from core.batch import work
    from core.batch.inputs import expand_inputs
    from core.config import PipelineConfig
    from core.splitters import get_splitter

    work.use_one_core()
    config = PipelineConfig(splitter=get_splitter(splitter)).to_json(indent=None)
    work.warm_worker(config)
    files = expand_inputs([corpus])
    work.StageClock.totals = {}
    wall = time.perf_counter()
    done = failed = 0
    for index, entry in enumerate(files):
        task = {"index": index, "source": entry.source, "path": entry.path, "problem": "", "metrics": metrics}
        result = work.process_file(task, config)
        done += result["size"]
        failed += result["status"] != "ok"
    wall = time.perf_counter() - wall
    stages = {name: round(seconds, 3) for name, seconds in work.StageClock.totals.items()}
    cpu = sum(stages.values())
    return {
        "splitter": splitter,
        "metrics": metrics,
        "files": len(files),
        "failed": failed,
        "megabytes": round(done / 1e6, 3),
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "mb_per_cpu_s": round(done / 1e6 / cpu, 2) if cpu else None,
        "stages_cpu_s": stages,
    }


def table(run: dict[str, object]) -> str:
    """A run's stages as a Markdown table: CPU seconds, share, MB per CPU-second of the stage alone."""
    megabytes, stages = float(run["megabytes"]), dict(run["stages_cpu_s"])  # type: ignore[arg-type]
    total = sum(stages.values())
    lines = [
        f"{run['splitter']}, {'--metrics' if run['metrics'] else 'default outputs'}: {megabytes:.1f} MB, "
        f"{total:.2f} CPU-s ({run['wall_s']} s wall), **{megabytes / total:.2f} MB per CPU-second**",
        "",
        "| stage | CPU s | share | MB per CPU-s of the stage |",
        "|---|---|---|---|",
    ]
    for name, seconds in stages.items():
        rate = f"{megabytes / seconds:,.1f}" if seconds > 0 else "—"
        lines.append(f"| {name} | {seconds:.2f} | {seconds / total:.0%} | {rate} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import os

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=float, default=21, help="corpus size (default: %(default)s)")
    parser.add_argument("--splitters", nargs="+", default=["recursive"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--child", nargs=3, metavar=("SPLITTER", "CORPUS", "METRICS"))
    args = parser.parse_args(argv)
    if args.child:
        splitter, corpus, metrics = args.child
        print(json.dumps(child(splitter, corpus, metrics == "1")))
        return 0
    results: dict[str, object] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "load_before": os.getloadavg(),
    }
    runs = []
    with tempfile.TemporaryDirectory(prefix="chunkscope-batch-stages-") as temporary:
        corpus = Path(temporary) / "corpus"
        results["corpus"] = build_local_corpus(corpus, args.megabytes)
        for _ in range(args.rounds):
            for splitter in args.splitters:
                for metrics in ("0", "1"):
                    argv_child = [sys.executable, __file__, "--child", splitter, str(corpus), metrics]
                    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
                    done = subprocess.run(argv_child, capture_output=True, text=True, env=env, cwd=ROOT, check=True)
                    run = json.loads(done.stdout.strip().splitlines()[-1])
                    run["load_1min"] = round(os.getloadavg()[0], 2)
                    runs.append(run)
                    print(table(run) + f"\n\n(load average {run['load_1min']})\n", file=sys.stderr)
    results["runs"] = runs
    results["load_after"] = os.getloadavg()
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
