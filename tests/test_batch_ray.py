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

pytestmark = pytest.mark.xdist_group("ray")


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
