"""The Ray engine: the same :func:`core.batch.work.process_file` as a Ray Data pipeline, results streamed back in order.

The files go through a pool of Ray actors, one per CPU (``map_batches`` with a
callable class): each actor imports ChunkScope, parses the configuration and
loads the tokenizers once, computes on one thread, then takes batches of files.

What Ray costs beyond the local engine (measured, benchmarks/RESULTS.md): once per
cluster, ``ray.init`` and Ray Data's own actors on its first use (stats, autoscaling,
actor locations: ~2 CPU-seconds); once per run, each actor's start (~1 CPU-second:
a Ray worker importing Ray Data, pyarrow and ChunkScope) and the driver's streaming
executor. Per file, the same ``process_file`` as the local engine.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from core.batch.work import process_file, result_schema, use_one_core, warm_worker
from core.errors import ConfigError
from core.runtime.forking import CORES
from core.runtime.parallel import ray_session

# Files per batch an actor takes: large enough that Ray's per-batch cost is small beside the files' work,
# small enough that a slow file holds back few results (order is preserved).
FILES_PER_BATCH = 16


class _FileWorker:
    """One Ray actor: one CPU, one tokenizer thread, the configuration parsed once."""

    def __init__(self, config: str, embed: str) -> None:
        use_one_core()
        warm_worker(config)
        self.config, self.embed = config, embed

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        results = [process_file(task, self.config, self.embed) for task in batch.to_pylist()]
        return pa.Table.from_pylist(results, schema=result_schema())


def run_ray(
    tasks: Sequence[dict[str, Any]], config: str, embed: str, workers: int | None, address: str | None = None
) -> Iterator[dict[str, Any]]:
    """The same ``process_file`` as a Ray Data pipeline (the task list, a map over an actor pool, back in order).

    Uses the Ray already initialized in this process, else starts one for the run
    (``num_cpus=workers``, or joins ``address``) and shuts it down after (:func:`core.runtime.parallel.ray_session`).
    ``workers``: the actors (one CPU each); None: every CPU of the Ray it runs on.
    """
    try:
        import ray.data
    except ImportError as exc:
        raise ConfigError(f"--engine ray: Ray is not installed ({exc}); pip install 'ray[data]'") from None
    with ray_session(workers or CORES, address) as ray:
        if not tasks:
            return
        import logging

        actors = min(workers or max(1, int(ray.cluster_resources().get("CPU", 1))), len(tasks))
        # Batches of up to FILES_PER_BATCH, smaller when the corpus would leave actors without one.
        per_batch = min(FILES_PER_BATCH, -(-len(tasks) // actors))
        # Ray Data logs each execution's start and plan at INFO on stderr, over our progress line.
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        context = ray.data.DataContext.get_current()
        # Results in input order: the dataset's parts then do not depend on which worker finished first.
        context.execution_options.preserve_order = True
        context.enable_progress_bars = False  # our own progress line says files, nodes and MB/s
        blocks = -(-len(tasks) // per_batch)
        dataset = ray.data.from_items(list(tasks), override_num_blocks=blocks).map_batches(
            _FileWorker,
            fn_constructor_kwargs={"config": config, "embed": embed},
            batch_size=per_batch,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=actors),
            num_cpus=1,
        )
        for row in dataset.iter_rows():
            yield dict(row)
