"""Run the benchmark suite: ChunkScope against the peer chunkers, interleaved, on the same text.

``make bench`` (or ``.venv/bin/python benchmarks/run.py``) builds the corpus if it
is missing, runs every section, writes ``benchmarks/results.json`` and renders
``benchmarks/RESULTS.md`` and the ratio chart from it (:mod:`report`).

How each number is taken (the machine is shared, so only ratios are trusted):

- Speed: every contestant is timed from the same input, a file's text as a
  ``str``, to its chunks (ChunkScope builds its ``Document`` inside the timer).
  Inputs, each in a fresh interpreter: the per-file corpus (one document per
  file, what users load), for a group that splits any text the other corpus
  parts (:mod:`corpus_parts`: reST with runs of blank lines, non-ASCII prose,
  one large real file), and one large document; the verdicts are per part.
  Every contestant runs once to warm up, then all of them in turn
  (A B C A B C …) ``--reps`` times; each call's wall time
  (``time.perf_counter``) and CPU time of the process, every thread included
  (``time.process_time``), are kept. A ratio is the peer's median over
  ChunkScope's (above 1: we are faster), with its spread: the same ratio taken
  round by round, min to max. A contestant on more than one thread is compared
  per CPU second as well as per wall second.
- First pass: beside every warm row, each contestant's first call over the same
  input in a fresh interpreter, after its set-up only (empty WordPiece word
  table, empty caches): the warm-up above runs on the whole timed input, so the
  warm rows favour whoever keeps per-process tables. One call each, no spread.
- Memory: each contestant again in a fresh subprocess, on the large document
  (on the per-file corpus the peak is one file's and the allocator's reuse):
  after imports, input and set-up, the kernel's peak-RSS mark is reset
  (``/proc/self/clear_refs``), the work runs once, and the rise of the peak over
  the RSS at the reset is the work's own memory; the median of three such
  subprocesses (one reading moved by up to 1.4 MB run to run).
- Chunk sizes are counted in the group's unit (characters, or the model's tokens).

Sections: ``splitters`` ``pdf`` ``embedding`` ``growth`` ``app`` (``--only`` picks some).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from contestants import DATA, FILES, GROUPS, MB, group, read_files, read_input, token_counts  # noqa: E402
from corpus_parts import PARTS, read_part  # noqa: E402

RESULTS = HERE / "results.json"
SECTIONS = ("splitters", "pdf", "embedding", "growth", "app")
# The inputs a group may run on (Group.inputs picks): the per-file corpus (READMEs, mostly ASCII; a Markdown
# group's Markdown ones), the corpus parts of benchmarks/corpus_parts.py (reST with runs of blank lines,
# non-ASCII prose, one large real file) and one large document cut from corpus.txt or corpus.md.
INPUTS = ("files", "rest", "non_ascii", "large_file", "large")
GROWTH_MB = (1, 10, 100)


# -- memory ----------------------------------------------------------------------


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def reset_peak() -> int:
    """Reset the peak-RSS mark to the current RSS; return the current RSS in kB."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_kb("VmRSS")


def peak_kb() -> int:
    return _status_kb("VmHWM")


def probe(work, warm_up: bool = True) -> dict:  # noqa: ANN001 - a zero-argument callable
    """Run ``work`` once with the peak reset just before: its time and its own peak memory.

    A first, unmeasured run loads whatever the contestant loads lazily (NLTK's
    Punkt, the model tokenizer), so only the work itself is counted.
    """
    if warm_up:
        work()
    gc.collect()
    base = reset_peak()
    start = time.perf_counter()
    output = work()
    seconds = time.perf_counter() - start
    peak = peak_kb()
    del output
    return {"seconds": seconds, "base_mb": base / 1024, "peak_mb": peak / 1024, "work_mb": (peak - base) / 1024}


def in_subprocess(*args: str, timeout: float = 3600) -> dict:
    """Run this script with ``args`` in a fresh interpreter and return the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if done.returncode != 0:
        raise RuntimeError(f"subprocess {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def interleaved(contenders: dict[str, Callable[[], object]], reps: int, *, warm_up: bool = True) -> dict[str, dict[str, list[float]]]:
    """Wall and CPU seconds per call of each contender, taking turns A B C A B C … ``reps`` times (after one warm-up call each).

    CPU time is the whole process's (``time.process_time``), so it counts every thread a contender runs on.
    """
    if warm_up:
        for fn in contenders.values():
            fn()
    times: dict[str, dict[str, list[float]]] = {label: {"wall": [], "cpu": []} for label in contenders}
    for _ in range(reps):
        for label, fn in contenders.items():
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            times[label]["cpu"].append(time.process_time() - start_cpu)
            times[label]["wall"].append(time.perf_counter() - start)
    return times


def ratio_spread(peer: list[float], ours: list[float]) -> list[float]:
    """The peer's time over ours, round by round (the rounds are interleaved): min and max."""
    ratios = [p / o for p, o in zip(peer, ours, strict=True) if o > 0]
    return [min(ratios), max(ratios)] if ratios else [float("nan"), float("nan")]


# -- splitter pairs ----------------------------------------------------------------


def chunk_stats(chunks: list[str], unit: str) -> dict:
    sizes = token_counts(chunks) if unit == "tokens" else [len(c) for c in chunks]
    return {
        "chunks": len(sizes),
        "mean_size": statistics.fmean(sizes) if sizes else 0.0,
        "sd_size": statistics.pstdev(sizes) if len(sizes) > 1 else 0.0,
        "max_size": max(sizes, default=0),
    }


def group_input(key: str, which: str, mb: float) -> list[str]:
    """The texts of one input: the per-file corpus (``files``), a corpus part (whole documents up to ``mb``
    MB; ``large_file`` is its one file whole) or one large document (``large``)."""
    g = group(key)
    if which == "files":
        return read_files(g.source, mb)
    if which == "large":
        return [read_input(g.source, mb)]
    picked, size = [], 0
    for text in read_part(which):
        if size >= mb * MB:
            break
        picked.append(text)
        size += len(text.encode("utf-8"))
    return picked


def first_pass(key: str, label: str, which: str, mb: float) -> dict:
    """One contestant's first call over an input in a fresh interpreter: after its set-up (the splitter built,
    the tokenizer loaded, a two-word warm-up), with every per-process table empty (ChunkScope's WordPiece words,
    sentence and token caches; a peer's own), as a user's first split of a file meets them."""
    import logging

    logging.disable(logging.WARNING)  # as in time_group
    run = over(group(key).contestant(label).prepare(), group_input(key, which, mb))
    gc.collect()
    start, start_cpu = time.perf_counter(), time.process_time()
    run()
    return {"first_s": time.perf_counter() - start, "first_cpu_s": time.process_time() - start_cpu}


def over(split: Callable[[str], list[str]], texts: list[str]) -> Callable[[], list[str]]:
    """One call per text, every text's chunks: a timed round over an input."""
    return lambda: [chunk for text in texts for chunk in split(text)]


def time_group(key: str, which: str, mb: float, reps: int) -> dict:
    import logging

    # LangChain logs a warning for every chunk over its size (printed to stderr by logging's last resort):
    # that would be timed as LangChain's work, and flatter ChunkScope on texts with long paragraphs.
    logging.disable(logging.WARNING)
    g = group(key)
    texts = group_input(key, which, mb)
    runs, missing = {}, []
    for c in g.contestants:
        try:
            runs[c.label] = over(c.prepare(), texts)
        except ModuleNotFoundError as exc:  # a peer not installed here is said, not fatal (ChunkScope never is)
            if c is g.ours:
                raise
            missing.append(f"{c.label} ({exc.name} not installed)")
    stats = {label: chunk_stats(run(), g.unit) for label, run in runs.items()}  # also the warm-up
    times = interleaved(runs, reps, warm_up=False)
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / MB
    ours = times[g.ours.label]
    rows = []
    for c in g.contestants:
        if c.label not in runs:
            continue
        wall, cpu = times[c.label]["wall"], times[c.label]["cpu"]
        rows.append(
            {
                "label": c.label,
                "library": c.library,
                "threads": c.threads,
                "floor": c.floor,
                "median_s": statistics.median(wall),
                "cpu_s": statistics.median(cpu),
                "times_s": wall,
                "cpu_times_s": cpu,
                "mb_per_s": megabytes / statistics.median(wall),
                "cpu_mb_per_s": megabytes / statistics.median(cpu),
                # Above 1: ChunkScope is faster than this contestant (medians; the spread is round by round).
                "speedup": statistics.median(wall) / statistics.median(ours["wall"]),
                "cpu_speedup": statistics.median(cpu) / statistics.median(ours["cpu"]),
                "speedup_range": ratio_spread(wall, ours["wall"]),
                "cpu_speedup_range": ratio_spread(cpu, ours["cpu"]),
                **stats[c.label],
            }
        )
    return {"input": which, "documents": len(texts), "mb": megabytes, "characters": sum(map(len, texts)),
            "reps": reps, "loadavg": os.getloadavg()[0], "rows": rows, "missing": missing}


# Fresh processes per memory probe: one probe of the same work read +0.0 or +1.4 MB run to run (the token
# splitter on 1 MB: 0.0, 1.44, 0.0, 0.0), enough to flip a verdict against a peer at +0.0.
MEMORY_PROBES = 3


def median_probe(key: str, label: str, mb: float) -> dict:
    """The probe (:func:`rss_probe`, each in a fresh subprocess) whose work's memory is the median of
    :data:`MEMORY_PROBES`, with every probe's reading."""
    probes = sorted(
        (in_subprocess("--rss", key, label, "--mb", str(mb)) for _ in range(MEMORY_PROBES)), key=lambda p: p["work_mb"]
    )
    return {**probes[len(probes) // 2], "work_mb_probes": [round(p["work_mb"], 2) for p in probes]}


def rss_probe(key: str, label: str, mb: float) -> dict:
    g = group(key)
    return probe(over(g.contestant(label).prepare(), group_input(key, "large", mb)))


def splitters(args: argparse.Namespace) -> list[dict]:
    results = []
    for g in GROUPS:
        if args.groups and g.key not in args.groups:
            continue
        mb = g.mb * args.scale
        result = {"key": g.key, "title": g.title, "unit": g.unit, "source": g.source, "target_ratio": g.target_ratio,
                  "target_inputs": list(g.target_inputs), "floor_ratio": g.floor_ratio, "notes": list(g.notes),
                  "inputs": {}}
        for which in g.inputs:
            if args.inputs and which not in args.inputs:
                continue
            # A corpus part is at most the group's size (parts are ~2 MB); the large real file is taken whole.
            part_mb = 100.0 if which == "large_file" else mb
            print(f"[splitters] {g.title}, {which}: {part_mb:g} MB x {args.reps} reps", flush=True)
            # Each group and input in a fresh interpreter, as the memory probes are: run after the recursive
            # group's peers in one process, the character pair read 1.03-1.08x instead of 1.22-1.35x (ours
            # slowed by a quarter, LangChain's by a tenth), so a result depended on what ran before it.
            timed = in_subprocess("--time-group", g.key, "--input", which, "--mb", str(part_mb), "--reps", str(args.reps))
            firsts = {}
            for row in timed["rows"]:
                if which == "large" and not row["floor"]:
                    memory = median_probe(g.key, row["label"], part_mb)
                    row.update(peak_mb=memory["peak_mb"], work_mb=memory["work_mb"], base_mb=memory["base_mb"],
                               work_mb_probes=memory["work_mb_probes"])
                if args.first_pass:
                    firsts[row["label"]] = in_subprocess("--first-pass", g.key, row["label"], "--input", which,
                                                         "--mb", str(part_mb))
                    row.update(firsts[row["label"]])
            if firsts:
                ours_first = firsts[g.ours.label]
                for row in timed["rows"]:
                    # One call each, so no spread: above 1, ChunkScope's first pass is the faster.
                    row["first_speedup"] = row["first_s"] / ours_first["first_s"]
                    row["first_cpu_speedup"] = row["first_cpu_s"] / ours_first["first_cpu_s"]
            for row in timed["rows"]:
                first = f"  first pass CPU x{row['first_cpu_speedup']:6.2f}" if "first_cpu_speedup" in row else ""
                print(f"    {row['label']:55s} wall x{row['speedup']:6.2f}  CPU x{row['cpu_speedup']:6.2f}  "
                      f"{row['cpu_mb_per_s']:8.2f} MB/s CPU  {row['chunks']:6d} chunks{first}", flush=True)
            result["inputs"][which] = timed
        results.append(result)
    return results


# -- PDF -------------------------------------------------------------------------------


def pdf(args: argparse.Namespace) -> dict:
    from pypdf import PdfReader

    from core.loaders import load

    path = DATA / "corpus.pdf"

    def chunkscope_load() -> list:
        return load(path)

    def pypdf_text() -> list[str]:
        return [page.extract_text() for page in PdfReader(path).pages]

    pages = len(PdfReader(path).pages)
    contenders = {"ChunkScope load()": chunkscope_load, "pypdf extract_text, page by page in one process": pypdf_text}
    times = interleaved(contenders, args.reps)
    rows = []
    for label in contenders:
        median = statistics.median(times[label]["wall"])
        rows.append({"label": label, "median_s": median, "pages_per_s": pages / median, "times_s": times[label]["wall"],
                     "cpu_s": statistics.median(times[label]["cpu"])})
    memory = in_subprocess("--pdf-rss")
    rows[0].update(peak_mb=memory["peak_mb"], work_mb=memory["work_mb"])
    print(f"[pdf] {pages} pages: {rows[0]['pages_per_s']:.0f} pages/s (pypdf alone {rows[1]['pages_per_s']:.0f})", flush=True)
    return {"pages": pages, "rows": rows}


def pdf_rss() -> dict:
    from core.loaders import load

    return probe(lambda: load(DATA / "corpus.pdf"))


# -- embedding --------------------------------------------------------------------------


def embedding(args: argparse.Namespace) -> dict:
    from sentence_transformers import SentenceTransformer

    from core.embed.embedder import Embedder, embed_nodes
    from core.schema import Document
    from core.splitters import get_splitter
    from core.tokens.tokenizers import default_model_path

    text = read_input("corpus.txt", 0.25)
    nodes = get_splitter("sentence", chunk_size=256, chunk_overlap=20).split([Document(text=text)])
    texts = [n.text for n in nodes][: args.embed_texts]
    # Nothing cached (in memory or on disk), so every call encodes.
    embedder = Embedder(cache_entries=0, disk_cache=False)
    raw = SentenceTransformer(default_model_path(), device="cpu", local_files_only=True)

    def ours() -> object:
        return embedder.embed(texts)

    def theirs() -> object:
        return raw.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)

    contenders = {"ChunkScope Embedder.embed (torch)": ours, "SentenceTransformer.encode": theirs}
    times = interleaved(contenders, args.reps)
    rows = []
    for label in contenders:
        median = statistics.median(times[label]["wall"])
        rows.append({"label": label, "median_s": median, "chunks_per_s": len(texts) / median, "times_s": times[label]["wall"],
                     "cpu_s": statistics.median(times[label]["cpu"])})
    overhead = rows[0]["median_s"] / rows[1]["median_s"] - 1
    print(f"[embedding] {len(texts)} chunks: {rows[0]['chunks_per_s']:.1f}/s vs raw {rows[1]['chunks_per_s']:.1f}/s "
          f"({overhead:+.1%})", flush=True)

    # A chunk_size change that leaves most sections whole re-embeds only the new texts.
    markdown = Document(text=read_input("corpus.md", 0.1))
    cached = Embedder(disk_cache=False)  # the in-memory cache alone; a previous run's disk cache would hold every text
    before = get_splitter("markdown", chunk_size=1000).split([markdown])
    after = get_splitter("markdown", chunk_size=1200).split([markdown])
    start = time.perf_counter()
    embed_nodes(before, cached)
    first_s = time.perf_counter() - start
    stats_before = cached.cache_stats()
    start = time.perf_counter()
    embed_nodes(after, cached)
    second_s = time.perf_counter() - start
    stats_after = cached.cache_stats()
    hits = stats_after["hits"] - stats_before["hits"]
    misses = stats_after["misses"] - stats_before["misses"]
    unchanged = len({n.text for n in before} & {n.text for n in after})
    change = {
        "change": "markdown chunk_size 1000 -> 1200 on 100 KB of corpus.md",
        "nodes_before": len(before),
        "nodes_after": len(after),
        "texts_unchanged": unchanged,
        "hits": hits,
        "misses": misses,
        "hit_ratio": hits / max(hits + misses, 1),
        "first_embed_s": first_s,
        "re_embed_s": second_s,
    }
    print(f"[embedding] re-embed after {change['change']}: hit ratio {change['hit_ratio']:.0%}, "
          f"{second_s:.2f}s vs {first_s:.2f}s", flush=True)
    quantized = quantized_backend(raw, texts, min(args.reps, 3)) if args.quantized else None
    return {"texts": len(texts), "rows": rows, "overhead": overhead, "param_change": change, "quantized": quantized}


def ranking_agreement(encode_a, encode_b, chunks_a, chunks_b) -> dict:  # noqa: ANN001 - encoders and arrays
    """Over the sample queries: how often b's top-1 chunk is a's, and how much of a's top 5 b keeps."""
    import numpy as np

    queries = [q["query"] if isinstance(q, dict) else str(q) for q in _sample_queries()]
    same_top1, top5_overlap = 0, 0.0
    for a, b in zip(encode_a(queries) @ chunks_a.T, encode_b(queries) @ chunks_b.T, strict=True):
        ra, rb = np.argsort(-a)[:5], np.argsort(-b)[:5]
        same_top1 += int(ra[0] == rb[0])
        top5_overlap += len(set(ra) & set(rb)) / 5
    return {"queries": len(queries), "same_top1": same_top1 / len(queries), "top5_overlap": top5_overlap / len(queries),
            "mean_cosine_to_fp32": float(np.mean(np.sum(chunks_a * chunks_b, axis=1)))}


def quantized_backend(model, texts: list[str], reps: int) -> dict:  # noqa: ANN001 - a SentenceTransformer
    """int8 dynamic quantization of the same model's Linear layers (torch only, offline): speed and ranking agreement."""
    import copy

    import numpy as np
    import torch

    quantized = torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {torch.nn.Linear}, dtype=torch.qint8)

    def encode(m) -> np.ndarray:  # noqa: ANN001
        return m.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)

    encode(quantized)
    times = interleaved({"fp32": lambda: encode(model), "int8": lambda: encode(quantized)}, reps, warm_up=False)
    full, small = encode(model), encode(quantized)
    result = ranking_agreement(lambda q: model.encode(q, normalize_embeddings=True),
                               lambda q: quantized.encode(q, normalize_embeddings=True), full, small)
    fp32, int8 = statistics.median(times["fp32"]["wall"]), statistics.median(times["int8"]["wall"])
    result.update({"speedup": fp32 / int8, "fp32_chunks_per_s": len(texts) / fp32, "int8_chunks_per_s": len(texts) / int8})
    print(f"[embedding] int8 dynamic quantization: x{result['speedup']:.2f}, top-1 kept for "
          f"{result['same_top1']:.0%} of {result['queries']} queries, top-5 overlap {result['top5_overlap']:.0%}", flush=True)
    return result


def _sample_queries() -> list:
    data = json.loads((HERE.parent / "sample_docs" / "queries.json").read_text())
    queries = data["queries"] if isinstance(data, dict) else data
    return queries[:40]


# -- growth --------------------------------------------------------------------------


def growth_probe(key: str, mb: float) -> dict:
    g = group(key)
    text = read_input(g.source, mb)
    split = g.ours.prepare()
    split(text[:20_000])  # loads what the splitter loads lazily, on a small input
    run = over(split, [text])
    # Memory first, on the first full-size run: a run before it would leave freed memory the
    # allocator hands back, and the smaller inputs would look cheaper than they are.
    result = probe(run, warm_up=False)
    wall, cpu = [], []
    for _ in range(3):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    # Wall time swings with the other users of a shared machine; CPU time is this process's own work.
    result["seconds"] = statistics.median(wall)
    result["cpu_seconds"] = statistics.median(cpu)
    result["mb"] = len(text.encode("utf-8")) / MB
    return result


def growth(args: argparse.Namespace) -> list[dict]:
    out = []
    for key in args.growth_groups:
        points = []
        for mb in args.growth_mb:
            point = in_subprocess("--growth-probe", key, "--mb", str(mb), timeout=7200)
            point["mb_per_s"] = point["mb"] / point["seconds"]
            point["cpu_mb_per_s"] = point["mb"] / point["cpu_seconds"]
            points.append(point)
            print(f"[growth] {key} {point['mb']:.0f} MB: {point['mb_per_s']:.2f} MB/s "
                  f"({point['cpu_mb_per_s']:.2f} MB/s of CPU), +{point['work_mb']:.0f} MB RSS",
                  flush=True)
        out.append({"key": key, "title": group(key).title, "points": points})
    return out


# -- app latency --------------------------------------------------------------------


def app(args: argparse.Namespace) -> dict:
    done = subprocess.run(
        [sys.executable, str(HERE / "app_latency.py"), "--reps", str(args.reps)],
        capture_output=True, text=True, timeout=3600, cwd=HERE.parent,
    )
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"[app] {json.dumps(result)}", flush=True)
    return result


# -- the machine -----------------------------------------------------------------------


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem_kb = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal")))
    versions = {}
    for name in ("langchain-text-splitters", "llama-index-core", "chonkie", "semchunk", "semantic-text-splitter",
                 "tokenizers", "sentence-transformers", "torch", "pypdf", "streamlit"):
        try:
            from importlib.metadata import version

            versions[name] = version(name)
        except Exception:  # noqa: BLE001 - a missing peer is reported, not fatal
            versions[name] = "not installed"
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gb": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
        "loadavg_start": os.getloadavg(),
        "versions": versions,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections ({', '.join(SECTIONS)})")
    parser.add_argument("--groups", default="", help="comma-separated splitter groups (default: all)")
    parser.add_argument("--inputs", default="", help=f"comma-separated inputs ({', '.join(INPUTS)}; default: each group's)")
    parser.add_argument("--no-first-pass", dest="first_pass", action="store_false",
                        help="skip the first-pass rows (each contestant's first call in a fresh process)")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions per contestant (median taken)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every group's input size")
    parser.add_argument("--embed-texts", type=int, default=64, help="chunks to embed")
    parser.add_argument("--no-quantized", dest="quantized", action="store_false", help="skip the int8 backend")
    parser.add_argument("--growth-groups", default="recursive,character")
    parser.add_argument("--growth-mb", default=",".join(str(m) for m in GROWTH_MB))
    parser.add_argument("--merge", action="store_true", help="keep sections of results.json this run skips")
    # Internal: one measurement in a fresh interpreter.
    parser.add_argument("--rss", nargs=2, metavar=("GROUP", "LABEL"), help=argparse.SUPPRESS)
    parser.add_argument("--growth-probe", metavar="GROUP", help=argparse.SUPPRESS)
    parser.add_argument("--first-pass", nargs=2, dest="first_pass_of", metavar=("GROUP", "LABEL"), help=argparse.SUPPRESS)
    parser.add_argument("--time-group", metavar="GROUP", help=argparse.SUPPRESS)
    parser.add_argument("--pdf-rss", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--input", choices=INPUTS, default="files", help=argparse.SUPPRESS)
    parser.add_argument("--mb", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.rss:
        print(json.dumps(rss_probe(args.rss[0], args.rss[1], args.mb)))
        return 0
    if args.first_pass_of:
        print(json.dumps(first_pass(args.first_pass_of[0], args.first_pass_of[1], args.input, args.mb)))
        return 0
    if args.growth_probe:
        print(json.dumps(growth_probe(args.growth_probe, args.mb)))
        return 0
    if args.time_group:
        print(json.dumps(time_group(args.time_group, args.input, args.mb, args.reps)))
        return 0
    if args.pdf_rss:
        print(json.dumps(pdf_rss()))
        return 0

    args.groups = [g for g in args.groups.split(",") if g]
    args.inputs = [i for i in args.inputs.split(",") if i]
    args.growth_groups = [g for g in args.growth_groups.split(",") if g]
    args.growth_mb = [float(m) for m in args.growth_mb.split(",") if m]
    sections = [s for s in args.only.split(",") if s]
    if not all(p.exists() for p in (DATA / "corpus.txt", DATA / "corpus.pdf", FILES)):
        subprocess.run([sys.executable, str(HERE / "corpus.py")], check=True)
    if not PARTS.exists():
        subprocess.run([sys.executable, str(HERE / "corpus_parts.py")], check=True)

    results = json.loads(RESULTS.read_text()) if args.merge and RESULTS.exists() else {}
    results.update(
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        machine=machine(),
        command="make bench" if not argv and len(sys.argv) == 1 else "benchmarks/run.py " + " ".join(argv or sys.argv[1:]),
        corpus=json.loads((DATA / "manifest.json").read_text()),
        corpus_parts=json.loads((DATA / "parts_manifest.json").read_text()),
    )
    runners = {"splitters": splitters, "pdf": pdf, "embedding": embedding, "growth": growth, "app": app}
    for section in sections:
        started = time.perf_counter()
        # When each section was last measured: with --merge, sections come from different runs.
        results.setdefault("runs", {})[section] = {
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "command": results["command"],
            "loadavg_start": os.getloadavg()[0],
        }
        fresh = runners[section](args)
        if section == "splitters":
            for group_result in fresh:  # each group says which run measured it: --groups re-runs a few of them
                group_result["run"] = dict(results["runs"][section])
        if section == "splitters" and args.merge and (args.groups or args.inputs) and isinstance(results.get(section), list):
            # Only some groups (or inputs) were re-run: replace those, keep the others from the earlier run.
            by_key = {g["key"]: g for g in fresh}
            merged = []
            for earlier in results[section]:
                now = by_key.pop(earlier["key"], None)
                if now is not None:
                    now["inputs"] = {**earlier.get("inputs", {}), **now["inputs"]}
                merged.append(now or earlier)
            fresh = merged + list(by_key.values())
        results[section] = fresh
        print(f"  ({section}: {time.perf_counter() - started:.0f}s)", flush=True)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    results["machine"]["loadavg_end"] = os.getloadavg()
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")

    import report

    report.write(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
