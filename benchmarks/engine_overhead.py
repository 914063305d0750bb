"""What a framework engine adds to the framework it runs: span recovery and node building.

    .venv/bin/python benchmarks/engine_overhead.py [--mb 2] [--rounds 5]

For each engine, on the per-file corpus (benchmarks/data/files.json, whole
documents until ``--mb`` MB), two callables are timed from the same prepared
``Document`` objects, interleaved round by round:

- *framework*: ``engine.chunks(document)``, the framework's own call (its object
  built once, untimed) returning the chunk texts;
- *engine*: ``engine.split([document])``, the same call followed by span recovery
  and node building: what the app and the CLI run;
- *positioned*: the framework's own call that returns chunks *with their place in
  the text*, the job the engine does: LangChain's ``create_documents([text])`` with
  ``add_start_index=True`` (Documents whose ``start_index`` LangChain finds with
  ``str.find``). chonkie's chunks and semchunk's ``offsets=True`` carry their
  offsets and LlamaIndex returns nodes, so for them it is the framework call itself.

The overhead is engine / framework - 1 (and engine / positioned - 1), by CPU time
(``time.process_time``) and wall time, as the median over rounds with the spread.
Issue 14's target: at most 15%.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import logging  # noqa: E402

from contestants import read_files  # noqa: E402

logging.disable(logging.WARNING)  # LangChain logs every chunk over its size

ENGINES: tuple[tuple[str, dict[str, object]], ...] = (
    ("langchain.recursive", {"chunk_size": 1000, "chunk_overlap": 200}),
    ("langchain.character", {"chunk_size": 1000, "chunk_overlap": 200}),
    ("llamaindex.sentence", {}),  # its defaults: 1024 cl100k tokens, overlap 200
    ("llamaindex.token", {}),
    ("chonkie.recursive", {}),
    ("semchunk", {}),
)


def timed(call, documents) -> tuple[float, float]:  # noqa: ANN001
    cpu, wall = time.process_time(), time.perf_counter()
    for document in documents:
        call(document)
    return time.process_time() - cpu, time.perf_counter() - wall


def positioned_call(engine):  # noqa: ANN001, ANN201
    """The framework's own call for positioned chunks (see the module's docstring); None: the framework call is."""
    if not engine.name.startswith("langchain."):
        return None
    import copy

    splitter = copy.copy(engine.text_splitter())
    splitter._add_start_index = True  # what add_start_index=True sets
    return lambda document: splitter.create_documents([document.text])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from core.schema import Document
    from core.splitters import get_splitter

    documents = [Document(text=text) for text in read_files("corpus.txt", args.mb)]
    size = sum(len(d.text.encode("utf-8")) for d in documents) / 1e6
    print(f"{len(documents)} documents, {size:.2f} MB, {args.rounds} interleaved rounds (medians; min-max)\n")
    print(
        f"{'engine':22} {'framework CPU ms':>17} {'positioned CPU ms':>18} {'engine CPU ms':>14} "
        f"{'overhead CPU':>20} {'overhead wall':>20} {'over positioned CPU':>20}"
    )
    for name, params in ENGINES:
        engine = get_splitter(name, **params)
        engine.chunks(documents[0])  # the framework object built and warm, untimed
        engine.split([documents[0]])
        positioned = positioned_call(engine)
        cpu_ratios, wall_ratios, positioned_ratios = [], [], []
        framework_cpu, positioned_cpu, engine_cpu = [], [], []
        for _ in range(args.rounds):
            f_cpu, f_wall = timed(engine.chunks, documents)
            p_cpu = timed(positioned, documents)[0] if positioned else f_cpu
            e_cpu, e_wall = timed(lambda d: engine.split([d]), documents)  # noqa: B023
            cpu_ratios.append(e_cpu / f_cpu - 1)
            wall_ratios.append(e_wall / f_wall - 1)
            positioned_ratios.append(e_cpu / p_cpu - 1)
            framework_cpu.append(f_cpu)
            positioned_cpu.append(p_cpu)
            engine_cpu.append(e_cpu)

        def show(values: list[float]) -> str:
            return f"{statistics.median(values):+.1%} ({min(values):+.0%}..{max(values):+.0%})"

        print(
            f"{name:22} {1000 * statistics.median(framework_cpu):17.1f} {1000 * statistics.median(positioned_cpu):18.1f} "
            f"{1000 * statistics.median(engine_cpu):14.1f} {show(cpu_ratios):>20} {show(wall_ratios):>20} "
            f"{show(positioned_ratios):>20}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
