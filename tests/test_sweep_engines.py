"""Sweeps and the tuner on every engine (core.runtime.parallel): the same rows in the same order, wherever they ran.

BM25 only, so no model is needed. One local Ray (two CPUs) for the module; its
start-up is most of the time. Like tests/test_batch_ray.py, the module shares
one xdist worker so two Rays never compete for the machine's cores.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from dataclasses import dataclass

import numpy as np
import pytest
from eval_support import WordsEmbedder

from core.cli import evaluate as cli_evaluate
from core.cli import tune as cli_tune
from core.config_parts import RetrievalSettings
from core.embed.cache import DiskCache
from core.errors import ConfigError
from core.evaluation.queries import load_queries
from core.evaluation.sweep import SweepSpec, sweep_evaluations
from core.evaluation.tune import tune
from core.evaluation.tune_space import TuneSpace
from core.loaders import load
from core.runtime.parallel import Engine, ordered_map

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow]

FOUR = [SweepSpec("sentence", {"chunk_size": [128, 256], "chunk_overlap": [0, 32]})]


@pytest.fixture(scope="module")
def corpus(sample_docs):
    return load(sample_docs), load_queries(sample_docs / "queries.json")


def sweep_rows(corpus, engine: Engine | None) -> list[tuple[str, dict, list]]:
    documents, queries = corpus
    done = sweep_evaluations(documents, queries, FOUR, engine=engine, retrieval=RetrievalSettings(mode="bm25", top_k=3))
    return [(label, result.to_row(), result.per_query) for label, result in done]


def tune_rows(corpus, engine: Engine | None, search: str) -> list[dict]:
    documents, queries = corpus
    space = TuneSpace(
        (SweepSpec("sentence", {"chunk_size": [160, 256, 384, 512], "chunk_overlap": [0]}),),
        modes=("bm25",),
        top_ks=(1, 2, 3, 5, 8),
    )
    result = tune(
        documents, queries, space, search=search, keep=4, eta=2, min_queries=2, engine=engine, include_default=False
    )
    return result.to_dict()


# -- the same results on every engine --------------------------------------------------


def test_a_bm25_sweep_gives_the_same_rows_locally_and_on_ray(ray_cluster, corpus):
    local = sweep_rows(corpus, None)
    assert [label for label, _, _ in local] == ["128/0", "128/32", "256/0", "256/32"]
    assert len({row["mrr"] for _, row, _ in local}) > 1  # the configurations do differ
    assert sweep_rows(corpus, Engine("ray", workers=2)) == local
    assert ray_cluster.is_initialized()  # a Ray the caller started is left running


@pytest.mark.parametrize("search", ["exhaustive", "halving"])
def test_the_tuner_measures_the_same_rows_and_front_on_ray(ray_cluster, corpus, search):
    local = tune_rows(corpus, None, search)
    assert local["search"] == search
    assert tune_rows(corpus, Engine("ray", workers=2), search) == local


def test_a_process_pool_gives_the_same_rows_as_this_process(corpus):
    assert sweep_rows(corpus, Engine("processes", workers=2)) == sweep_rows(corpus, None)
    assert tune_rows(corpus, Engine("processes", workers=2), "exhaustive") == tune_rows(corpus, None, "exhaustive")


def test_halving_on_workers_measures_each_round_together(ray_cluster, corpus, monkeypatch):
    from core.evaluation import tune as tune_module

    calls = []
    real = tune_module.ordered_map
    monkeypatch.setattr(
        tune_module, "ordered_map", lambda fn, tasks, *rest: calls.append(tasks) or real(fn, tasks, *rest)
    )
    result = tune_rows(corpus, Engine("ray", workers=2), "halving")
    measured = [rung["measured"] for rung in result["rungs"]]
    assert measured[0] == 20 and len(measured) == 4
    # One spread per round, holding exactly the round's arms (none measured alone, none in vain).
    assert [sum(len(task.arms) for task in tasks) for tasks in calls] == measured


def test_ordered_map_keeps_the_input_order_and_raises_the_workers_own_error():
    engine = Engine("processes", workers=2)
    assert list(ordered_map(_slow_square, range(8), 10, engine)) == [10 + i * i for i in range(8)]
    with pytest.raises(ConfigError, match="no 3 here"):
        list(ordered_map(_refuse_three, range(6), None, engine))


def _slow_square(item: int, offset: int) -> int:
    import time

    time.sleep(0.05 * (8 - item))  # the first items finish last
    return offset + item * item


def _refuse_three(item: int, shared: object) -> int:
    if item == 3:
        raise ConfigError("no 3 here")
    return item


# -- embeddings shared between workers through the disk cache ---------------------------


@dataclass(frozen=True)
class WordsRef:
    """What a worker is sent for the fake model: it makes its own WordsEmbedder (one per process, disk cache on)."""

    def get(self) -> WordsEmbedder:
        key = os.getpid()  # a forked worker must not reuse its parent's (and its memory cache)
        if key not in _MADE:
            _MADE[key] = WordsEmbedder()
        return _MADE[key]


_MADE: dict[int, WordsEmbedder] = {}


def test_workers_reuse_each_others_vectors_through_the_disk_cache(corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path))
    documents, queries = corpus
    space = TuneSpace((SweepSpec("sentence", {"chunk_size": [128, 256], "chunk_overlap": [0, 32]}),))
    engine = Engine("processes", workers=2)
    first = tune(documents, queries, space, embedder=WordsRef(), engine=engine, search="exhaustive")
    assert first.embedded_texts > 0
    # New worker processes, new models: every chunk and query vector comes from the disk.
    again = tune(documents, queries, space, embedder=WordsRef(), engine=engine, search="exhaustive")
    assert again.embedded_texts == 0
    assert [row["mrr"] for row in again.rows] == [row["mrr"] for row in first.rows]


def test_concurrent_writers_share_one_disk_cache_safely(tmp_path):
    path = tmp_path / "embeddings.sqlite3"
    context = multiprocessing.get_context("fork")
    with context.Pool(4) as pool:
        problems = pool.starmap(_write_vectors, [(str(path), writer) for writer in range(4)])
    assert problems == [""] * 4
    cache = DiskCache(path)
    digests = [f"{writer}-{batch}-{i}" for writer in range(4) for batch in range(20) for i in range(10)]
    found = cache.get("model", digests)
    assert len(found) == len(digests) and not cache.problem
    assert found["2-7-3"][0] == pytest.approx(2 * 1000 + 7 * 10 + 3)


def _write_vectors(path: str, writer: int) -> str:
    cache = DiskCache(path)
    for batch in range(20):  # a transaction each, interleaved with the other writers'
        rows = [(f"{writer}-{batch}-{i}", np.full(8, writer * 1000 + batch * 10 + i)) for i in range(10)]
        cache.put("model", rows)
        cache.get("model", [digest for digest, _ in rows])
    return cache.problem


# -- the command line -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--workers", "2"], "--workers needs --engine processes or ray"),
        (["--engine", "processes", "--workers", "0"], "--workers must be at least 1"),
        (["--engine", "processes", "--ray-address", "auto"], "--ray-address needs --engine ray"),
    ],
)
@pytest.mark.parametrize("command", ["evaluate", "tune"])
def test_engine_flags_are_checked_before_anything_is_loaded(sample_docs, capsys, command, flags, message):
    main, mode = (cli_evaluate.main, "--mode") if command == "evaluate" else (cli_tune.main, "--modes")
    code = main([command, str(sample_docs), "--queries", "no-such-file.json", mode, "bm25", *flags])
    assert code == 2
    assert message in capsys.readouterr().err  # not the missing queries file


def test_cli_evaluate_on_ray_prints_the_local_rows(ray_cluster, sample_docs, capsys):
    args = [str(sample_docs), "--queries", str(sample_docs / "queries.json"), "--mode", "bm25", "--quiet"]
    args += ["--splitter", "sentence", "--sweep-sizes", "128,256", "--sweep-overlaps", "0,32", "--format", "json"]
    assert cli_evaluate.main(["evaluate", *args]) == 0
    local = json.loads(capsys.readouterr().out)
    assert cli_evaluate.main(["evaluate", *args, "--engine", "ray", "--workers", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == local
    assert len(local["rows"]) == 4
