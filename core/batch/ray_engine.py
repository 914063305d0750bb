"""The Ray engine: the same :func:`core.batch.work.process_file` as a Ray Data map, results streamed back in order."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from core.batch.work import process_file
from core.errors import ConfigError
from core.parallel import ray_session


def run_ray(
    tasks: Sequence[dict[str, Any]], config: str, embed: str, workers: int, address: str | None = None
) -> Iterator[dict[str, Any]]:
    """The same ``process_file`` as a Ray Data pipeline (read the task list, map, stream back in order).

    Uses the Ray already initialized in this process, else starts one for the run
    (``num_cpus=workers``, or joins ``address``) and shuts it down after (:func:`core.parallel.ray_session`).
    """
    try:
        import ray.data
    except ImportError as exc:
        raise ConfigError(f"--engine ray: Ray is not installed ({exc}); pip install 'ray[data]'") from None
    with ray_session(workers, address):
        if not tasks:
            return
        import logging

        # Ray Data logs each execution's start and plan at INFO on stderr, over our progress line.
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        context = ray.data.DataContext.get_current()
        # Results in input order: the dataset's parts then do not depend on which worker finished first.
        context.execution_options.preserve_order = True
        context.enable_progress_bars = False  # our own progress line says files, nodes and MB/s
        # A block per ~16 files but at least 4 per CPU: small corpora still spread over every worker.
        blocks = min(len(tasks), max(4 * workers, -(-len(tasks) // 16)))
        dataset = ray.data.from_items(list(tasks), override_num_blocks=blocks).map(
            process_file, fn_kwargs={"config": config, "embed": embed}, num_cpus=1
        )
        for row in dataset.iter_rows():
            yield dict(row)
