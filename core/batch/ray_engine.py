"""The Ray engine: :func:`core.batch.shards.process_shard` on a pool of Ray actors, records streamed back in order.

One actor per CPU (``num_cpus=1``): each imports ChunkScope, parses the configuration and
loads the tokenizers once, computes on one thread, then takes shards; it writes each shard's
part files itself and returns the shard's manifest lines. The driver keeps two shards queued
on every actor and yields the records in shard order, so the manifest and the parts do not
depend on which actor finished first.

Plain Ray Core actors, not Ray Data: a record is a few lines of text, so there is nothing for
a streaming executor to move, and neither the driver nor the actors pay for importing and
running one (the Ray Data pipeline this replaced cost the driver 7-8 CPU-seconds a run).

An actor that dies (a crash or the OOM killer in a parser) is replaced; the shards it held
have their files run one at a time, each as a task of its own, so the file that kills its
worker fails with that reason and the rest are written (by the driver).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from core.batch.shards import process_shard, recovered
from core.batch.work import process_file, serve_alone, use_one_core, warm_worker
from core.errors import ConfigError
from core.runtime.parallel import ray_session

# Shards queued on an actor: one running, one waiting, so an actor never idles between two.
SHARDS_PER_ACTOR = 2
# Shards sent but not yet yielded (running, or finished behind a slower one), per actor.
SHARDS_OUTSTANDING_PER_ACTOR = 4
_DIED = "the worker process died while reading this file (a crash, or out of memory)"


class ShardActor:
    """One Ray actor: one CPU, one tokenizer thread, the configuration parsed once.

    A sync actor with one task at a time runs its tasks on its process's main thread, which serves nothing else: it
    loads large text, Markdown and code files itself under an alarm, as a local worker does (:func:`serve_alone`;
    a load on any other thread still goes to a child). The tasks that recover a dead actor's files do not.
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        use_one_core()
        serve_alone()
        warm_worker(spec["config"])
        self.spec = spec

    def run(self, shard: dict[str, Any]) -> dict[str, Any]:
        return process_shard(shard, self.spec)

    def ready(self) -> bool:
        return True


def _file_alone(task: dict[str, Any], config: str, embed: str) -> dict[str, Any]:
    use_one_core()
    return process_file(task, config, embed)


@contextmanager
def ray_connected(workers: int | None, address: str | None) -> Iterator[Any]:
    """Ray, connected before anything is written: the Ray of this process, ``address``, ``RAY_ADDRESS``, or one started
    for the run with ``workers`` CPUs (:func:`core.runtime.parallel.ray_session`). A connection that fails raises here."""
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"--engine ray: Ray is not installed ({exc}); pip install 'ray'") from None
    with ray_session(workers, address) as ray:
        yield ray


def run_ray(shards: Iterable[dict[str, Any]], spec: dict[str, Any], workers: int | None) -> Iterator[dict[str, Any]]:
    """``process_shard`` of each shard on an actor pool of the connected Ray, records yielded in shard order.

    ``workers``: the actors (one CPU each); None: every CPU of the Ray it runs on.
    """
    import ray
    from ray.exceptions import RayActorError, RayTaskError

    shards = list(shards)
    if not shards:
        return
    size = min(workers or max(1, int(ray.cluster_resources().get("CPU", 1))), len(shards))
    actor_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(ShardActor)
    # No CPU asked: the actors hold every CPU they were given, so a task that asked for one would wait forever.
    # Recovery is rare and brief; these tasks run beside the actors.
    file_task = ray.remote(num_cpus=0, max_retries=0)(_file_alone)
    spec_ref = ray.put(spec)
    actors = [actor_class.remote(spec_ref) for _ in range(size)]
    queued = {actor: 0 for actor in actors}  # shards sent to an actor and not finished
    order: deque[tuple[dict[str, Any], Any, Any]] = deque()  # (shard, ref, actor), in shard order
    running: dict[Any, Any] = {}  # ref -> actor, for refs not finished yet
    iterator = iter(shards)
    exhausted = False

    def fill() -> None:
        nonlocal exhausted
        while not exhausted and len(order) < SHARDS_OUTSTANDING_PER_ACTOR * len(actors):
            actor = min(queued, key=queued.__getitem__)
            if queued[actor] >= SHARDS_PER_ACTOR:
                return
            shard = next(iterator, None)
            if shard is None:
                exhausted = True
                return
            ref = actor.run.remote(shard)
            queued[actor] += 1
            running[ref] = actor
            order.append((shard, ref, actor))

    def recover(shard: dict[str, Any]) -> dict[str, Any]:
        refs = [file_task.remote(task, spec["config"], spec["embed"]) for task in shard["tasks"]]
        results = []
        for task, ref in zip(shard["tasks"], refs, strict=True):
            try:
                results.append(ray.get(ref))
            except (RayActorError, RayTaskError, ray.exceptions.WorkerCrashedError):
                results.append(process_file({**task, "problem": _DIED}, spec["config"]))
        return recovered(shard, results)

    try:
        while True:
            fill()
            if not order:
                return
            shard, head, actor = order[0]
            while head in running:
                done, _ = ray.wait(list(running), num_returns=1)
                for ref in done:
                    finished = running.pop(ref)
                    if finished in queued:
                        queued[finished] -= 1
                fill()
            order.popleft()
            try:
                record = ray.get(head)
            except RayActorError:
                if actor in queued:  # replace it once, whichever of its shards noticed first
                    del queued[actor]
                    replacement = actor_class.remote(spec_ref)
                    queued[replacement] = 0
                    actors[actors.index(actor)] = replacement
                record = recover(shard)
            yield record
    finally:
        # A stop (Ctrl-C, SIGTERM, a refused write): the actors end now, not after their shard.
        for actor in actors:
            ray.kill(actor)
        for actor in actors:
            try:
                ray.get(actor.ready.remote(), timeout=30)
            except Exception:  # noqa: BLE001 - dead is what was asked: any error says it is
                pass
