"""`chunkscope batch --engine ray`: the same work as a Ray Data pipeline writes the local engine's bytes.

One local Ray (two CPUs) for the module; its start-up is most of the time. The
tests share one xdist worker so two Rays never compete for the machine's cores.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_batch import BAD, dataset, make_corpus, part_hashes, small_config

from core.batch import run_batch

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("ray"))


@pytest.mark.parametrize("metrics", [False, True], ids=["sizes", "metrics"])
def test_ray_and_the_process_pool_write_byte_identical_datasets(
    ray_cluster, corpus: Path, tmp_path: Path, metrics: bool
):
    options = {"workers": 2, "part_rows": 50, "metrics": metrics}
    ray_run = run_batch([str(corpus)], small_config(), tmp_path / "ray", engine="ray", **options)
    local_run = run_batch([str(corpus)], small_config(), tmp_path / "local", engine="local", **options)
    assert ray_cluster.is_initialized()  # a Ray the caller started is left running
    hashes = part_hashes(tmp_path / "ray")
    assert len(hashes) > 2 and hashes == part_hashes(tmp_path / "local")
    assert dataset(tmp_path / "ray").equals(dataset(tmp_path / "local"))
    ray_report = json.loads((tmp_path / "ray" / "report.json").read_text())
    local_report = json.loads((tmp_path / "local" / "report.json").read_text())
    assert ray_report["corpus"]["nodes"] == local_report["corpus"]["nodes"] == ray_run.nodes == local_run.nodes
    assert [d["metrics"] for d in ray_report["documents"]] == [d["metrics"] for d in local_report["documents"]]
    assert {Path(f["source"]).name for f in ray_report["failed"]} == set(BAD)


def test_ray_resume_keeps_what_the_local_engine_wrote(ray_cluster, corpus: Path, tmp_path: Path):
    out = tmp_path / "out"
    run_batch([str(corpus)], small_config(), out, engine="local", workers=2, part_rows=50)
    before = part_hashes(out)
    again = run_batch([str(corpus)], small_config(), out, engine="ray", workers=2, part_rows=50, resume=True)
    assert again.skipped == 6 and part_hashes(out) == before


def test_ray_writes_through_a_pyarrow_filesystem_what_it_writes_locally(ray_cluster, corpus: Path, tmp_path: Path):
    import hashlib

    from fsspec.implementations.memory import MemoryFileSystem
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    from core.batch.storage import OutputStore

    backing = MemoryFileSystem()
    filesystem = PyFileSystem(FSSpecHandler(backing))
    try:
        run_batch(
            [str(corpus)],
            small_config(),
            "/ray-bucket/out",
            filesystem=filesystem,
            engine="ray",
            workers=2,
            part_rows=50,
        )
        run_batch([str(corpus)], small_config(), tmp_path / "local", engine="local", workers=2, part_rows=50)
        store = OutputStore(filesystem, "/ray-bucket/out")
        stored = {
            name: hashlib.sha256(store.read_bytes("nodes", name)).hexdigest()
            for name in store.files("nodes", "part-", ".parquet")
        }
        assert stored == part_hashes(tmp_path / "local") and len(stored) > 2
    finally:
        backing.rm("/ray-bucket", recursive=True)


def test_ray_on_several_shards_writes_the_local_engines_bytes(ray_cluster, corpus: Path, tmp_path: Path):
    from test_batch import SHARD, shards_of

    run_batch([str(corpus)], small_config(), tmp_path / "ray", engine="ray", workers=2, part_rows=50, shard_bytes=SHARD)
    run_batch([str(corpus)], small_config(), tmp_path / "local", workers=1, part_rows=50, shard_bytes=SHARD)
    assert shards_of(tmp_path / "ray") == [0, 1, 2, 3]
    assert part_hashes(tmp_path / "ray") == part_hashes(tmp_path / "local")


def test_a_driver_given_ray_address_by_the_environment_joins_that_cluster(ray_cluster, corpus: Path, tmp_path: Path):
    """`ray job submit` runs its entrypoint with RAY_ADDRESS set: no --ray-address, and no resources asked of the
    cluster (num_cpus is refused when joining one). Here the cluster is this test's local Ray, joined by its address
    from another process, as a job's driver joins the cluster."""
    import os
    import subprocess
    import sys

    address = ray_cluster.get_runtime_context().gcs_address
    out = tmp_path / "joined"
    argv = [sys.executable, "-m", "core", "batch", str(corpus), "--splitter", "recursive", "--set", "chunk_size=400"]
    argv += ["--set", "chunk_overlap=40", "--out", str(out), "--engine", "ray", "--part-rows", "50", "-q"]
    env = {**os.environ, "RAY_ADDRESS": address, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    run_batch([str(corpus)], small_config(), tmp_path / "local", workers=1, part_rows=50)
    assert part_hashes(out) == part_hashes(tmp_path / "local") and len(part_hashes(out)) > 2
    report = json.loads((out / "report.json").read_text())
    assert report["complete"] and report["corpus"]["files_ok"] == 6


def _ray_init_calls(monkeypatch, fail: Exception | None = None) -> list[dict]:
    """ray.init as a recorder (this process has no Ray of its own for the call), raising ``fail`` if given."""
    import ray

    calls: list[dict] = []

    def init(**kwargs):  # noqa: ANN202
        calls.append(kwargs)
        if fail is not None:
            raise fail

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    return calls


def test_joining_a_cluster_asks_it_for_no_resources_and_a_local_ray_gets_the_workers(monkeypatch):
    from core.runtime.parallel import ray_session

    calls = _ray_init_calls(monkeypatch)
    monkeypatch.setenv("RAY_ADDRESS", "auto")
    with ray_session(4):
        pass
    with ray_session(4, "ray://head:10001"):  # an address given wins over the environment
        pass
    monkeypatch.delenv("RAY_ADDRESS")
    with ray_session(3):
        pass
    assert [call.get("address") for call in calls] == ["auto", "ray://head:10001", None]
    assert [call.get("num_cpus") for call in calls] == [None, None, 3]
    assert not any("resources" in call or "num_gpus" in call for call in calls)


def test_a_failed_connect_is_one_line_and_writes_nothing(monkeypatch, corpus: Path, tmp_path: Path):
    from core.errors import ConfigError

    _ray_init_calls(monkeypatch, ConnectionError("Could not find any running Ray instance.\nPlease start one."))
    monkeypatch.setenv("RAY_ADDRESS", "auto")
    out = tmp_path / "out"
    with pytest.raises(ConfigError) as refused:
        run_batch([str(corpus)], small_config(), out, engine="ray", part_rows=50)
    assert str(refused.value) == (
        "--engine ray: cannot join the Ray cluster at 'auto': Could not find any running Ray instance. Please start one."
    )
    assert not out.exists()  # no manifest that --overwrite would then be needed for


# Loaded by every Python process of the test's Ray (a sitecustomize on PYTHONPATH): a parser that kills its
# process on one file, as a segfault or the OOM killer would.
_POISONED_SITE = """
import os
from core.batch import work

_process = work._process


def _poisoned(task, *args):
    if task["source"].endswith("release_notes.txt"):
        os._exit(1)
    return _process(task, *args)


work._process = _poisoned
"""

_RAY_RUN = """
import json, sys
import ray
from core.batch import run_batch
from core.config import PipelineConfig
from core.splitters import get_splitter

ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=400, chunk_overlap=40))
result = run_batch([sys.argv[1]], config, sys.argv[2], engine="ray", workers=2, part_rows=50, shard_bytes=20_000)
ray.shutdown()
print(json.dumps(result.report["failed"]))
"""


def test_a_file_that_kills_its_actor_fails_alone_and_the_rest_is_written(corpus: Path, tmp_path: Path):
    import os
    import subprocess
    import sys

    import pyarrow.compute as pc

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_POISONED_SITE)
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{root}", "RAY_ADDRESS": ""}
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", _RAY_RUN, str(corpus), str(out)],
        env=env, capture_output=True, text=True, timeout=600, check=False, cwd=root,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    failed = {Path(entry["source"]).name: entry["reason"] for entry in json.loads(done.stdout.strip().splitlines()[-1])}
    assert set(failed) == set(BAD) | {"release_notes.txt"}
    assert "worker process died" in failed["release_notes.txt"]
    run_batch([str(corpus)], small_config(), tmp_path / "local", workers=1, part_rows=50)
    expected = dataset(tmp_path / "local")
    kept = expected.filter(pc.invert(pc.match_substring(expected.column("source_path"), "release_notes")))
    assert dataset(out).equals(kept)


def test_an_actor_loads_a_large_markdown_file_itself_on_its_main_thread(ray_cluster, tmp_path: Path):
    """A sync actor runs its tasks on its main thread, so it serves alone as a local worker does: a Markdown file
    the server would load in a forked child is loaded in the actor, under an alarm, to the same rows."""
    from core.batch.ray_engine import ShardActor
    from core.documents import bounded as bounded_module

    big = tmp_path / "big.md"
    big.write_text(("## Part\n\n" + "Sentences about retrieval and chunk overlap. " * 30 + "\n\n") * 300)
    assert bounded_module.load_needs_child("big.md", big.stat().st_size)  # the server would fork
    config = small_config().to_json(indent=None)
    task = {"index": 0, "source": str(big), "path": str(big), "problem": "", "metrics": False}

    def load_without_fork(actor: ShardActor, task: dict, config: str) -> tuple:
        import os
        import threading

        from core.batch import work

        def no_fork() -> int:
            raise AssertionError("forked")

        fork, os.fork = os.fork, no_fork
        try:
            result = work.process_file(task, config)
        finally:
            os.fork = fork
        main = threading.current_thread() is threading.main_thread()
        return work._ALONE[0], main, result["status"], result["reason"], result["nodes"]

    actor = ray_cluster.remote(num_cpus=1)(ShardActor).remote({"config": config, "embed": ""})
    try:
        alone, main, status, reason, nodes = ray_cluster.get(actor.__ray_call__.remote(load_without_fork, task, config))
    finally:
        ray_cluster.kill(actor)
    from core.batch.work import process_file

    assert (alone, main, status, reason) == (True, True, "ok", "")
    assert nodes == process_file(task, config)["nodes"] > 100  # the driver's process: not alone, a child
