"""What a framework engine costs over the framework called directly, as its users call it.

    .venv/bin/python benchmarks/engine_overhead.py [--mb 1] [--rounds 5] [--parts files,rest,non_ascii,large_file]

For each engine, on each corpus part (:mod:`corpus_parts`: READMEs one per file, reST with
runs of blank lines, non-ASCII prose, one large real file; whole documents up to ``--mb`` MB),
three callables are timed from the same ``str`` per file, interleaved round by round:

- *direct*: the framework's own call, as a user writes it, on the framework object the engine
  runs (built once from the engine's declared arguments, untimed, as a user builds it once):
  LangChain's ``split_text(text)``, LlamaIndex's ``get_nodes_from_documents([Document(text=text)])``
  (LlamaIndex's ``Document`` built inside the timer), chonkie's ``chunk(text)``, semchunk's
  ``chunker(text, overlap=...)``. Not ChunkScope's ``engine.chunks()`` wrapper, which earlier
  rounds timed as "the framework";
- *positioned*: the framework's own call that returns chunks *with their place in the text*, the
  job the engine does: LangChain's ``create_documents([text])`` with ``add_start_index=True``
  (``start_index`` found with ``str.find``), semchunk's ``offsets=True``; chonkie's chunks carry
  their offsets and LlamaIndex returns nodes, so for them it is the direct call;
- *engine*: ``engine.split([Document(text=text, metadata=...)])``, ChunkScope's ``Document``
  built inside the timer: the framework call, span recovery and node building, what the app and
  the CLI run.

The overhead is engine / direct - 1 (and engine / positioned - 1), by CPU time
(``time.process_time``) and wall time: the median over rounds, with the min-max of the same
ratio round by round. Results go to ``benchmarks/engine_overhead.json``; ``report.py`` renders
them as RESULTS.md's "Engine overhead" section. Issue 14's target: at most 15%.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from contestants import MB, TEXT_PARTS, read_files  # noqa: E402
from corpus_parts import read_part  # noqa: E402

OUTPUT = HERE / "engine_overhead.json"
TARGET = 0.15

ENGINES: tuple[tuple[str, dict[str, object]], ...] = (
    ("langchain.recursive", {"chunk_size": 1000, "chunk_overlap": 200}),
    ("langchain.character", {"chunk_size": 1000, "chunk_overlap": 200}),
    ("llamaindex.sentence", {}),  # its defaults: 1024 cl100k tokens, overlap 200
    ("llamaindex.token", {}),
    ("chonkie.recursive", {}),
    ("semchunk", {}),
)

Call = Callable[[str], object]


def direct_calls(engine) -> tuple[Call, Call]:  # noqa: ANN001 - a FrameworkSplitter
    """The framework's own call on a file's text, and its call that also places the chunks (see the docstring)."""
    if engine.name.startswith("langchain."):
        splitter = engine.build_framework()
        positioned = copy.copy(splitter)
        positioned._add_start_index = True  # what add_start_index=True sets
        return splitter.split_text, lambda text: positioned.create_documents([text])
    if engine.name.startswith("llamaindex."):
        from llama_index.core import Document as LlamaDocument

        parser = engine.node_parser()  # the engine's set-up (bundled NLTK data, the global tokenizer), then its object
        call = lambda text: parser.get_nodes_from_documents([LlamaDocument(text=text)])  # noqa: E731
        return call, call
    if engine.name.startswith("chonkie."):
        chunker = engine.build_framework()
        return chunker.chunk, chunker.chunk
    if engine.name == "semchunk":
        chunker = engine.chunker()
        overlap = engine.overlap
        if overlap is not None and overlap >= 1 and float(overlap).is_integer():
            overlap = int(overlap)
        return (lambda text: chunker(text, overlap=overlap)), (lambda text: chunker(text, overlap=overlap, offsets=True))
    raise ValueError(f"no direct call written for {engine.name}")


def part_texts(part: str, mb: float) -> list[str]:
    """Whole documents of one corpus part until they hold ``mb`` MB (``large_file``: its one file)."""
    documents = read_files("corpus.txt", mb) if part == "files" else read_part(part)
    picked, size = [], 0
    for text in documents:
        if size >= mb * MB and part != "large_file":
            break
        picked.append(text)
        size += len(text.encode("utf-8"))
    return picked


def timed(call: Call, texts: list[str]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    for text in texts:
        call(text)
    return time.process_time() - cpu, time.perf_counter() - wall


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def measure(name: str, params: dict[str, object], part: str, texts: list[str], rounds: int) -> dict:
    from core.schema import Document
    from core.splitters import get_splitter

    engine = get_splitter(name, **params)
    direct, positioned = direct_calls(engine)
    same_call = positioned is direct or name.startswith(("llamaindex.", "chonkie."))

    def ours(text: str) -> object:
        return engine.split([Document(text=text, metadata={"file_name": "input.txt"})])

    # Warm, untimed, over the whole input: lazy state loaded, and the memo the engine and the direct call share
    # (semchunk's token counts) filled for both, so neither pays for the other's first round.
    for call in (direct, positioned, ours):
        timed(call, texts)
    samples: dict[str, list[float]] = {k: [] for k in ("direct_cpu", "positioned_cpu", "engine_cpu", "direct_wall",
                                                        "engine_wall")}
    for _ in range(rounds):
        d_cpu, d_wall = timed(direct, texts)
        p_cpu = d_cpu if same_call else timed(positioned, texts)[0]
        e_cpu, e_wall = timed(ours, texts)
        for key, value in (("direct_cpu", d_cpu), ("positioned_cpu", p_cpu), ("engine_cpu", e_cpu),
                           ("direct_wall", d_wall), ("engine_wall", e_wall)):
            samples[key].append(value)
    ratios = lambda a, b: [x / y - 1 for x, y in zip(samples[a], samples[b], strict=True)]  # noqa: E731
    return {
        "engine": name,
        "part": part,
        "documents": len(texts),
        "mb": sum(len(t.encode("utf-8")) for t in texts) / MB,
        "direct_cpu_ms": 1000 * statistics.median(samples["direct_cpu"]),
        "positioned_cpu_ms": 1000 * statistics.median(samples["positioned_cpu"]),
        "engine_cpu_ms": 1000 * statistics.median(samples["engine_cpu"]),
        "overhead_cpu": spread(ratios("engine_cpu", "direct_cpu")),
        "overhead_wall": spread(ratios("engine_wall", "direct_wall")),
        "over_positioned_cpu": spread(ratios("engine_cpu", "positioned_cpu")),
    }


def main(argv: list[str] | None = None) -> int:
    # LangChain logs every chunk over its size: printed, that would count as its time. Switched off here, for
    # this run, not on import (a test that imports this module must not silence other modules' warnings).
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=1.0, help="MB of each corpus part (whole documents)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--parts", default=",".join(TEXT_PARTS), help=f"comma-separated ({', '.join(TEXT_PARTS)})")
    parser.add_argument("--engines", default="", help="comma-separated engine names (default: all)")
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    wanted = [e for e in args.engines.split(",") if e]
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "benchmarks/engine_overhead.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "loadavg_start": os.getloadavg()[0],
        "rounds": args.rounds,
        "target": TARGET,
        "rows": [],
    }
    print(f"{'engine':22} {'part':11} {'direct ms':>10} {'positioned ms':>14} {'engine ms':>10} "
          f"{'over direct, CPU':>24} {'over positioned, CPU':>24}")
    for part in parts:
        texts = part_texts(part, args.mb)
        for name, params in ENGINES:
            if wanted and name not in wanted:
                continue
            row = measure(name, params, part, texts, args.rounds)
            result["rows"].append(row)

            def show(s: dict[str, float]) -> str:
                return f"{s['median']:+.1%} ({s['min']:+.0%}..{s['max']:+.0%})"

            print(f"{name:22} {part:11} {row['direct_cpu_ms']:10.1f} {row['positioned_cpu_ms']:14.1f} "
                  f"{row['engine_cpu_ms']:10.1f} {show(row['overhead_cpu']):>24} {show(row['over_positioned_cpu']):>24}",
                  flush=True)
    result["loadavg_end"] = os.getloadavg()[0]
    OUTPUT.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
