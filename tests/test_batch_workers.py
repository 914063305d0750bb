"""A batch worker computes on one core: one tokenizer thread and one pyarrow thread, the same tokens.

The engines run one worker per core (`--workers`), so a worker that also encoded on a
second thread took time from its sibling. The app's process keeps its two threads.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import pyarrow as pa

from core.batch.local_engine import _start_worker
from core.batch.work import use_one_core
from core.config import PipelineConfig
from core.runtime.forking import Forked
from core.runtime.parallel import pool_context
from core.tokens import threads as tokenizer_threads
from core.tokens.tokenizers import get_tokenizer

# Long enough that the app's process would encode it on two threads (2 KB per thread at least).
TEXTS = [f"Paragraph {n}: chunk overlap keeps a sentence whole across the cut. " * 20 for n in range(40)]


def _threads_and_tokens() -> tuple[int, int, int, list[int]]:
    model = get_tokenizer("model")
    return (
        tokenizer_threads.parallel_workers(sum(map(len, TEXTS))),
        pa.cpu_count(),
        pa.io_thread_count(),
        model.count_many(TEXTS),
    )


def _after_use_one_core() -> tuple[int, int, int, list[int]]:
    use_one_core()
    return _threads_and_tokens()


def test_a_worker_encodes_on_one_thread_with_the_same_tokens_and_the_app_keeps_two():
    app_threads, *_, app_tokens = _threads_and_tokens()
    worker = Forked(_after_use_one_core).result()
    assert worker is not None
    assert worker[:3] == (1, 1, 1)
    assert worker[3] == app_tokens
    # The calling process is unchanged: the app still encodes a large batch on its threads.
    assert app_threads == tokenizer_threads.WORKERS == _threads_and_tokens()[0]


def test_the_local_engines_workers_start_on_one_core():
    with ProcessPoolExecutor(max_workers=1, mp_context=pool_context(), initializer=_start_worker) as pool:
        threads, cpu_pool, io_pool, _ = pool.submit(_threads_and_tokens).result()
    assert (threads, cpu_pool, io_pool) == (1, 1, 1)


def test_one_thread_runs_parallel_tasks_one_after_another_in_order():
    def run() -> tuple[list[int], set[str]]:
        import threading

        use_one_core()
        names: set[str] = set()

        def task(n: int) -> int:
            names.add(threading.current_thread().name)
            return n * n

        results = tokenizer_threads.in_parallel([lambda n=n: task(n) for n in range(4)])
        return results, names

    outcome = Forked(run).result()
    assert outcome is not None
    assert outcome[0] == [0, 1, 4, 9] and outcome[1] == {"MainThread"}


def _shards_sent_before_the_first_result(tmp_path, monkeypatch, bytes_per_worker: int) -> int:  # noqa: ANN001
    from core.batch import local_engine
    from core.batch.dataset import PartLimits
    from core.batch.shards import plan_shards, work_spec
    from core.batch.storage import OutputStore

    monkeypatch.setattr(local_engine, "BYTES_PER_WORKER", bytes_per_worker)
    paths = []
    for n in range(200):
        path = tmp_path / f"doc-{n}.txt"
        path.write_text(f"Document {n}. " * 100)  # 1.3 KB each
        paths.append(str(path))
    tasks = [
        {"index": n, "source": path, "path": path, "problem": "", "bytes": os.path.getsize(path)}
        for n, path in enumerate(paths)
    ]
    shards = plan_shards(tasks, 0, PartLimits().bytes, budget=1)  # a file a shard
    sent = 0

    def counted():  # noqa: ANN202
        nonlocal sent
        for shard in shards:
            sent += 1
            yield shard

    out = OutputStore.at(tmp_path / "out")
    out.make_dirs("nodes")
    spec = work_spec(PipelineConfig().to_json(), "", out, True, PartLimits())
    results = local_engine.run_local(counted(), spec, workers=2)
    first = next(results)
    results.close()
    assert first["shard"] == 0 and first["counts"]["files"] == 1
    return sent


def test_the_local_engine_keeps_a_window_of_shards_in_flight_bounded_by_count_and_bytes(tmp_path, monkeypatch):
    from core.batch.local_engine import SHARDS_PER_WORKER

    # Small shards: the count bounds the window.
    assert _shards_sent_before_the_first_result(tmp_path, monkeypatch, 64 * 2**20) == 2 * SHARDS_PER_WORKER
    # Two a worker always, then no more once 2 x 4,000 bytes are in flight: 7 shards of 1.3 KB.
    assert _shards_sent_before_the_first_result(tmp_path, monkeypatch, 4_000) == 7


_HALF_A_RESULT = """
import os, struct, sys
from concurrent.futures import ProcessPoolExecutor
from core.runtime.parallel import pool_context, stop_pool

pool = ProcessPoolExecutor(max_workers=1, mp_context=pool_context())
assert pool.submit(abs, -1).result() == 1
# What a worker terminated halfway through sending a result leaves: a message header and part of its bytes.
os.write(pool._result_queue._writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
thread = pool._executor_manager_thread
stop_pool(pool)
thread.join(timeout=30)
sys.exit(3 if thread.is_alive() else 0)
"""


def test_a_result_cut_off_by_stopping_the_pool_does_not_hang_the_interpreter_at_exit():
    """A Ctrl-C while a worker sent its result once left `chunkscope batch` waiting forever at exit."""
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run(
        [sys.executable, "-c", _HALF_A_RESULT], cwd=Path(__file__).parent.parent, timeout=120, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()


def test_a_worker_loads_only_the_structure_its_splitter_and_extractors_read():
    from core.batch.work import elements_read
    from core.extractors import EXTRACTORS
    from core.splitters import get_splitter

    tables = frozenset({"table", "table_row"})
    assert elements_read(PipelineConfig(splitter=get_splitter("recursive"))) == tables
    # The sentence splitter declares nothing (it may read any element), an extractor reads headings and code.
    assert elements_read(PipelineConfig(splitter=get_splitter("sentence"))) is None
    titled = PipelineConfig(splitter=get_splitter("recursive"), extractors=(EXTRACTORS.get_class("title")(),))
    assert elements_read(titled) is None
