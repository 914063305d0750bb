"""The native semantic splitter against LangChain's SemanticChunker and LlamaIndex's SemanticSplitterNodeParser.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/semantic_speed.py [--kb 150] [--model-kb 20] [--rounds 3]

The first ``--kb`` kB of ``data/corpus.txt`` (cut at a paragraph break; build it with
``benchmarks/corpus.py --mb 3`` if missing; the embedding-included runs take its first
``--model-kb`` kB: the model reads some 2-5 kB per CPU second here), split by:

- ``native``: ``semantic`` (ChunkScope's rule: blingfire sentences, vectorised distances);
- ``native compat=langchain`` / ``native compat=llamaindex``: the compatible modes (the
  frameworks' steps, their per-pair distance arithmetic);
- ``LangChain``: ``SemanticChunker(...).split_text(text)``, called directly;
- ``LlamaIndex``: ``SemanticSplitterNodeParser.from_defaults(...).get_nodes_from_documents([Document(text)])``.

All at their defaults (buffer 1, the 95th percentile), all embedding with the same packaged
all-MiniLM-L6-v2 through one function, so the frameworks differ only in what they do around it:

- *embedding excluded*: every group text each contestant asks for is embedded once before the
  timing (through ChunkScope's cached embedder), and the function looks its vector up (a dict and
  a stack: the same small cost for all);
- *embedding included*: the function runs the model (ChunkScope's embedder, its caches off), in the
  calls each contestant makes (LlamaIndex, and compat=llamaindex, ask ten texts at a time).

Time is CPU seconds of this process (``time.process_time``: every thread, torch's included) and wall
seconds, the median over rounds; contestants alternate within each round, in a rotated order.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
from contestants import read_input  # noqa: E402

from core.schema import Document  # noqa: E402
from core.splitters import get_splitter  # noqa: E402
from core.splitters.semantic import embedder_override  # noqa: E402


class Recorder:
    """The embed function every contestant uses: the model, or vectors looked up from a table filled beforehand
    (by ``fill``: ChunkScope's embedder with its disk cache, so a rerun fills it in seconds)."""

    def __init__(self, encode: Callable[[list[str]], np.ndarray], fill: Callable[[list[str]], np.ndarray]) -> None:
        self.encode = encode
        self.fill = fill
        self.table: dict[str, np.ndarray] | None = None

    def __call__(self, texts: Any) -> np.ndarray:
        texts = list(texts)
        if self.table is None:
            return self.encode(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self.table]
        if missing:
            for text, vector in zip(missing, self.fill(missing), strict=True):
                self.table[text] = vector
        return np.stack([self.table[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)


def contestants(text: str) -> dict[str, Callable[[], int]]:
    """Each contestant's call on ``text``, returning its chunk count (built once, untimed, as a user builds it)."""
    from core.engines.langchain_semantic import _embeddings_class, import_chunker
    from core.engines.llamaindex_semantic import _embedding_class
    from core.tokens.bundled_data import use_bundled_nltk_data

    use_bundled_nltk_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from llama_index.core import Document as LlamaDocument
        from llama_index.core.node_parser import SemanticSplitterNodeParser
    chunker = import_chunker()(_embeddings_class()())
    parser = SemanticSplitterNodeParser.from_defaults(embed_model=_embedding_class()())
    native = get_splitter("semantic")
    as_langchain = get_splitter("semantic", compat="langchain")
    as_llamaindex = get_splitter("semantic", compat="llamaindex")
    return {
        "native": lambda: len(native.split([Document(text=text)])),
        "native compat=langchain": lambda: len(as_langchain.split([Document(text=text)])),
        "native compat=llamaindex": lambda: len(as_llamaindex.split([Document(text=text)])),
        "LangChain SemanticChunker": lambda: len(chunker.split_text(text)),
        "LlamaIndex SemanticSplitterNodeParser": lambda: len(
            parser.get_nodes_from_documents([LlamaDocument(text=text)])
        ),
    }


def timed(rounds: int, calls: dict[str, Callable[[], int]]) -> dict[str, dict[str, float]]:
    """Median CPU and wall seconds per contestant; the order rotates each round."""
    names = list(calls)
    cpu: dict[str, list[float]] = {name: [] for name in names}
    wall: dict[str, list[float]] = {name: [] for name in names}
    chunks: dict[str, int] = {}
    for round_ in range(rounds):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            c0, w0 = time.process_time(), time.perf_counter()
            chunks[name] = calls[name]()
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - w0)
    return {
        name: {"cpu": statistics.median(cpu[name]), "wall": statistics.median(wall[name]), "chunks": chunks[name]}
        for name in names
    }


def report(title: str, rows: dict[str, dict[str, float]]) -> None:
    print(f"\n{title}")
    print(f"| {'contestant':40} | CPU s | wall s | chunks |")
    print(f"|{'-' * 42}|------:|-------:|-------:|")
    for name, row in rows.items():
        print(f"| {name:40} | {row['cpu']:5.2f} | {row['wall']:6.2f} | {row['chunks']:6d} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=float, default=150)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model-kb", type=float, default=20)
    parser.add_argument("--model-rounds", type=int, default=3)
    parser.add_argument("--no-model", action="store_true", help="skip the embedding-included runs")
    args = parser.parse_args()

    from core.embed.embedder import Embedder, get_embedder

    text = read_input("corpus.txt", args.kb / 1000)
    # ChunkScope's embedding path (texts sorted by length, batched) with no cache to find anything in.
    embedder = Embedder(disk_cache=False, cache_entries=0)
    embedder.embed(["warm up"])  # the weights load here, untimed
    recorder = Recorder(embedder.embed, get_embedder().embed)
    print(f"text: {len(text):,} characters of corpus.txt; load average {os.getloadavg()[0]:.1f} at the start")
    with embedder_override(recorder):
        calls = contestants(text)
        recorder.table = {}
        for call in calls.values():  # every contestant's groups embedded once, untimed
            call()
        report(f"embedding excluded ({len(recorder.table):,} group vectors precomputed)", timed(args.rounds, calls))
    if not args.no_model:
        short = read_input("corpus.txt", args.model_kb / 1000)
        recorder.table = None
        with embedder_override(recorder):
            rows = timed(args.model_rounds, contestants(short))
        report(f"embedding included (the model runs every call; {len(short):,} characters)", rows)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
