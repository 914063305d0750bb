"""Sweeps with a cold and a warm embedding cache, BM25 evaluation time against the number of queries, and the tuner.

    .venv/bin/python benchmarks/sweep_cache.py            # print the numbers
    .venv/bin/python benchmarks/sweep_cache.py --append   # and append a section to benchmarks/RESULTS.md

1. **Cold and warm sweep.** The app's sample documents and ``sample_docs/queries.json``, the sentence splitter at
   chunk_size 128, 256, 512, 1024 × chunk_overlap 0, 64, dense top-5 (``core.evaluation.sweep.sweep``). Each run is a fresh
   process (no vectors in memory) on the same fresh ``CHUNKSCOPE_CACHE_DIR``: the first finds it empty (cold), the
   second finds the first's vectors on disk (warm). The model is loaded and one text embedded before the clock
   starts, so both time the sweep alone. Wall time and the process's CPU time (every thread).
2. **BM25 against queries.** ``evaluate(mode="bm25")`` at 256/0 with the 14 sample queries repeated 1, 2, 4, 8 and
   16 times; a least-squares line through (queries, seconds) and its R².
3. **Tuner against the default sweep.** The Evaluate page's default sweep (256, 512, 1024 × 0, 64, dense, top-5) and
   the tuner over sizes 128-1024 × overlaps 0, 64 × dense, BM25, hybrid (α 0.3, 0.5, 0.7) × top_k 1-5 (200
   configurations: exhaustive under search="auto"), quality MRR, cost context tokens per query; with the warm cache.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SIZES, OVERLAPS = [128, 256, 512, 1024], [0, 64]


def sample_corpus():
    from core.config import PipelineConfig
    from core.documents import prepare_documents
    from core.evaluation.queries import load_queries
    from core.loaders import load
    from ui.documents import sample_files

    documents = prepare_documents([doc for path in sample_files() for doc in load(path)], PipelineConfig())
    return documents, load_queries(ROOT / "sample_docs" / "queries.json")


def child_sweep() -> None:
    """One timed sweep in this process; prints its numbers as JSON."""
    from core.config_parts import RetrievalSettings
    from core.embed.embedder import RUNTIME, get_embedder
    from core.evaluation.sweep import sweep

    documents, queries = sample_corpus()
    start = time.perf_counter()
    embedder = get_embedder()
    embedder.embed(["warm-up"])  # the model loaded before the clock starts
    load_seconds = time.perf_counter() - start
    wall, cpu = time.perf_counter(), time.process_time()
    rows = sweep(documents, queries, "sentence", SIZES, OVERLAPS, embedder=embedder, retrieval=RetrievalSettings(top_k=5))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    stats = embedder.cache_stats()
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "load": load_seconds,
                "configurations": len(rows),
                "encoded": stats["misses"] - stats["disk_hits"],
                "disk_hits": stats["disk_hits"],
                "backend": RUNTIME,
                "mrr": [row["mrr"] for row in rows],
            }
        )
    )


def sweeps(cache: str) -> dict:
    env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": cache, "HF_HUB_OFFLINE": "1"}
    runs = {}
    for name in ("cold", "warm"):
        out = subprocess.run(
            [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=True, cwd=ROOT
        )
        runs[name] = json.loads(out.stdout.strip().splitlines()[-1])
    assert runs["cold"]["mrr"] == runs["warm"]["mrr"], "a warm sweep must score exactly as a cold one"
    return runs


def bm25_scaling() -> dict:
    from core.config_parts import RetrievalSettings
    from core.evaluation.evaluate import evaluate
    from core.splitters import get_splitter

    documents, queries = sample_corpus()
    splitter = get_splitter("sentence", chunk_size=256, chunk_overlap=0)
    evaluate(documents, queries, splitter, retrieval=RetrievalSettings(mode="bm25"))  # imports and first-use costs out of the way
    points = []
    for times in (1, 2, 4, 8, 16):
        many = list(queries) * times
        best = min(_timed(lambda many=many: evaluate(documents, many, splitter, retrieval=RetrievalSettings(mode="bm25"))) for _ in range(3))
        points.append((len(many), best))
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    intercept = mean_y - slope * mean_x
    total = sum((y - mean_y) ** 2 for _, y in points)
    residual = sum((y - intercept - slope * x) ** 2 for x, y in points)
    return {"points": points, "per_query": slope, "intercept": intercept, "r2": 1 - residual / total}


def _timed(work) -> float:  # noqa: ANN001
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def tuner_vs_sweep() -> dict:
    from core.embed.embedder import get_embedder
    from core.evaluation.sweep import SweepSpec
    from core.evaluation.tune import tune
    from core.evaluation.tune_space import TuneSpace

    documents, queries = sample_corpus()
    embedder = get_embedder()
    default = TuneSpace((SweepSpec("sentence", {"chunk_size": [256, 512, 1024], "chunk_overlap": [0, 64]}),))
    baseline = tune(documents, queries, default, embedder=embedder, search="exhaustive")
    best = max(baseline.rows, key=lambda row: (row["mrr"], -row["context_tokens"]))
    space = TuneSpace(
        (SweepSpec("sentence", {"chunk_size": SIZES, "chunk_overlap": OVERLAPS}),),
        modes=("dense", "bm25", "hybrid"),
        alphas=(0.3, 0.5, 0.7),
        top_ks=(1, 2, 3, 4, 5),
    )
    start = time.perf_counter()
    found = tune(documents, queries, space, embedder=embedder)  # auto: 200 × 14 pairs, exhaustive
    seconds = time.perf_counter() - start
    better = [
        row
        for row in found.front_rows()
        if row["mrr"] >= best["mrr"] and row["context_tokens"] < best["context_tokens"]
    ]
    pick = min(better, key=lambda row: row["context_tokens"]) if better else None
    return {
        "best_default": _brief(best),
        "front": [_brief(row) for row in found.front_rows()],
        "pick": pick and _brief(pick),
        "arms": len(found.rows),
        "search": found.search,
        "rungs": found.rungs,
        "seconds": seconds,
    }


def _brief(row: dict) -> dict:
    return {key: row[key] for key in ("config", "hit_rate", "mrr", "recall", "context_tokens", "nodes")}


def markdown(runs: dict, bm25: dict, tuned: dict) -> str:
    cold, warm = runs["cold"], runs["warm"]
    lines = [
        "",
        "## Sweeps with a warm embedding cache, BM25 against queries, the tuner (issue 15)",
        "",
        "Method: `benchmarks/sweep_cache.py` (its docstring). Sample documents and queries; sentence splitter at "
        "chunk_size 128/256/512/1024 × overlap 0/64, dense top-5; each sweep a fresh process on one fresh "
        "`CHUNKSCOPE_CACHE_DIR`, model loaded before the clock starts; wall and process CPU time "
        f"(backend: {cold['backend']}, 2-core machine shared with other work).",
        "",
        "| sweep (8 configurations) | wall s | CPU s | texts encoded | read from disk |",
        "|---|---|---|---|---|",
        f"| cold | {cold['wall']:.2f} | {cold['cpu']:.2f} | {cold['encoded']:,} | {cold['disk_hits']:,} |",
        f"| warm | {warm['wall']:.2f} | {warm['cpu']:.2f} | {warm['encoded']:,} | {warm['disk_hits']:,} |",
        f"| **cold / warm** | **{cold['wall'] / warm['wall']:.1f}×** | **{cold['cpu'] / warm['cpu']:.1f}×** | | |",
        "",
        f"Target warm ≥ 5× faster than cold: {'met' if cold['wall'] / warm['wall'] >= 5 else 'NOT met'} "
        "(scores identical in both runs).",
        "",
        "BM25 evaluation (256/0) against the number of queries (best of 3): "
        + ", ".join(f"{q} → {s:.3f} s" for q, s in bm25["points"])
        + f"; least squares {bm25['intercept']:.3f} s + {bm25['per_query'] * 1000:.2f} ms × queries, "
        f"R² = {bm25['r2']:.4f} (linear).",
        "",
        f"Tuner ({tuned['arms']} configurations, {tuned['search']}, {tuned['seconds']:.1f} s warm) against the default sweep's best by MRR, "
        f"{tuned['best_default']['config']}: MRR {tuned['best_default']['mrr']:.3f}, "
        f"{tuned['best_default']['context_tokens']:.0f} context tokens per query. "
        + (
            f"Found {tuned['pick']['config']}: MRR {tuned['pick']['mrr']:.3f} with "
            f"{tuned['pick']['context_tokens']:.0f} context tokens per query."
            if tuned["pick"]
            else "The front holds no configuration as good with fewer context tokens."
        ),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--append", action="store_true", help="Append the section to benchmarks/RESULTS.md.")
    args = parser.parse_args()
    if args.child:
        child_sweep()
        return
    with tempfile.TemporaryDirectory(prefix="chunkscope-bench-") as cache:
        runs = sweeps(cache)
        bm25 = bm25_scaling()
        os.environ["CHUNKSCOPE_CACHE_DIR"] = cache  # the tuner finds the sweeps' vectors (warm)
        tuned = tuner_vs_sweep()
    print(json.dumps({"sweeps": runs, "bm25": bm25, "tuner": tuned}, indent=2, default=str))
    text = markdown(runs, bm25, tuned)
    print(text)
    if args.append:
        with open(ROOT / "benchmarks" / "RESULTS.md", "a", encoding="utf-8") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
