"""`chunkscope batch --out URI`: the dataset, manifest and report written through a pyarrow filesystem.

No network: a ``file://`` URI, and fsspec's in-memory filesystem behind pyarrow
(``PyFileSystem(FSSpecHandler(...))``), which, like object storage, is not this
machine's disk, so the manifest takes the rewrite-at-checkpoint path.
"""

from __future__ import annotations

import hashlib
import io
import json
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_batch import BAD, make_corpus, part_hashes, small_config

from core.batch import BatchInterrupted, read_manifest, run_batch
from core.batch.storage import OutputStore
from core.cli.main import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("storage"))


@pytest.fixture(scope="module")
def local_run(corpus: Path) -> Path:
    """The reference: the same corpus and configuration written to a local folder."""
    out = corpus.parent / "local"
    run_batch([str(corpus)], small_config(), out, workers=2, part_rows=50)
    return out


@pytest.fixture
def memory():
    """A fresh folder on fsspec's in-memory filesystem, seen through pyarrow; removed after."""
    from fsspec.implementations.memory import MemoryFileSystem
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    backing = MemoryFileSystem()
    root = f"/bucket-{uuid.uuid4().hex[:8]}"
    yield PyFileSystem(FSSpecHandler(backing)), f"{root}/out"
    backing.rm(root, recursive=True)


def stored_part_hashes(filesystem, out: str) -> dict[str, str]:
    store = OutputStore(filesystem, out)
    return {
        name: hashlib.sha256(store.read_bytes("nodes", name)).hexdigest()
        for name in store.files("nodes", "part-", ".parquet")
    }


def stored_report(filesystem, out: str) -> dict:
    return json.loads(OutputStore(filesystem, out).read_bytes("report.json"))


def test_a_file_uri_writes_what_a_local_path_writes(corpus: Path, local_run: Path, tmp_path: Path):
    out = tmp_path / "via-uri"
    code = main(
        ["batch", str(corpus), "--splitter", "recursive", "--set", "chunk_size=400", "--set", "chunk_overlap=40"]
        + ["--out", out.as_uri(), "--workers", "2", "-q", "--part-rows", "50"]
    )
    assert code == 0
    assert part_hashes(out) == part_hashes(local_run) and len(part_hashes(out)) > 2
    report = json.loads((out / "report.json").read_text())["corpus"]
    expected = json.loads((local_run / "report.json").read_text())["corpus"]
    report.pop("processing_seconds"), expected.pop("processing_seconds")
    assert report == expected and report["nodes"] > 0
    assert (out / "report.html").read_text().lower().startswith("<!doctype html>")


def test_an_in_memory_filesystem_holds_the_same_parts_manifest_and_report(corpus: Path, local_run: Path, memory):
    filesystem, out = memory
    result = run_batch([str(corpus)], small_config(), out, filesystem=filesystem, workers=2, part_rows=50)
    assert not (Path(out)).exists()  # nothing went to the local disk under that name
    assert stored_part_hashes(filesystem, out) == part_hashes(local_run)
    store = OutputStore(filesystem, out)
    lines = read_manifest(store)
    assert [line["kind"] for line in lines[:1]] == ["header"]
    recorded = {line["part"]: line["sha256"] for line in lines if line["kind"] == "part"}
    assert recorded == stored_part_hashes(filesystem, out)
    assert {line["path"] for line in lines if line["kind"] == "input"} == {
        line["path"] for line in read_manifest(local_run / "manifest.jsonl") if line["kind"] == "input"
    }
    assert store.files("nodes", ".", ".tmp") == [] and store.files("", ".", ".tmp") == []
    report = stored_report(filesystem, out)
    assert report["corpus"]["nodes"] == result.nodes > 0
    assert {Path(f["source"]).name for f in report["failed"]} == set(BAD)
    # The parts read back as one dataset through the same filesystem.
    table = pq.read_table(f"{out}/nodes", filesystem=filesystem)
    assert table.num_rows == result.nodes


def test_resume_reads_the_manifest_back_from_the_filesystem(corpus: Path, memory):
    filesystem, out = memory
    run_batch([str(corpus)], small_config(), out, filesystem=filesystem, workers=2, part_rows=50)
    before = stored_part_hashes(filesystem, out)
    again = run_batch([str(corpus)], small_config(), out, filesystem=filesystem, workers=2, part_rows=50, resume=True)
    assert again.skipped == 6 and again.processed == 2  # only the two bad files are tried again
    assert stored_part_hashes(filesystem, out) == before
    assert len(stored_report(filesystem, out)["documents"]) == 6


def test_without_resume_an_existing_output_on_the_filesystem_is_refused(corpus: Path, memory):
    filesystem, out = memory
    run_batch([str(corpus)], small_config(), out, filesystem=filesystem, workers=1, part_rows=50)
    from core.errors import ConfigError

    with pytest.raises(ConfigError, match="--resume"):
        run_batch([str(corpus)], small_config(), out, filesystem=filesystem, workers=1, part_rows=50)


def test_ctrl_c_on_the_filesystem_leaves_a_consistent_manifest_and_resume_finishes(
    corpus: Path, local_run: Path, memory
):
    filesystem, out = memory

    def interrupt(state):
        raise KeyboardInterrupt

    with pytest.raises(BatchInterrupted):
        run_batch(
            [str(corpus)], small_config(), out, filesystem=filesystem, workers=2, part_rows=50, progress=interrupt
        )
    store = OutputStore(filesystem, out)
    parts = {line["part"] for line in read_manifest(store) if line["kind"] == "part"}
    assert parts == set(store.files("nodes", "part-", ".parquet"))
    assert stored_report(filesystem, out)["complete"] is False

    run_batch([str(corpus)], small_config(), out, filesystem=filesystem, workers=2, part_rows=50, resume=True)
    assert stored_part_hashes(filesystem, out) == part_hashes(local_run)
    assert stored_report(filesystem, out)["complete"]


def test_a_file_is_replaced_whole_and_nothing_is_left_aside(memory):
    filesystem, out = memory
    store = OutputStore(filesystem, out)
    store.make_dirs()
    store.write_bytes(b"first", "manifest.jsonl")
    store.write_bytes(b"second, longer", "manifest.jsonl")
    assert store.read_bytes("manifest.jsonl") == b"second, longer"
    assert store.files("", "", "") == ["manifest.jsonl"]


def test_output_locations_are_parsed_as_local_paths_or_uris(tmp_path: Path):
    import pyarrow.fs as pafs

    local = OutputStore.at("relative/out")
    assert isinstance(local.fs, pafs.LocalFileSystem) and local.base == str(Path("relative/out").resolve())
    uri = OutputStore.at((tmp_path / "x").as_uri())
    assert isinstance(uri.fs, pafs.LocalFileSystem) and uri.base == str(tmp_path / "x")
    assert str(uri) == (tmp_path / "x").as_uri() and uri.path("nodes", "part-00000.parquet").endswith(
        "/x/nodes/part-00000.parquet"
    )
    with pytest.raises(pa.ArrowInvalid):
        OutputStore.at("nosuchscheme://bucket/out")


def test_a_part_file_is_the_bytes_pyarrow_writes_to_a_local_file(tmp_path: Path):
    from core.batch.dataset import parquet_bytes

    table = pa.table({"text": ["a", "b" * 100], "n": [1, 2]})
    pq.write_table(table, tmp_path / "t.parquet", compression="zstd")
    assert parquet_bytes(table) == (tmp_path / "t.parquet").read_bytes()
    assert pq.read_table(io.BytesIO(parquet_bytes(table))).equals(table)


def test_on_object_storage_a_paced_checkpoint_rewrites_the_manifest_only_now_and_then(memory, monkeypatch):
    """A rewrite a shard would upload the growing manifest thousands of times; paced, every 10 s at most."""
    from core.batch import manifest as manifest_module
    from core.batch.manifest import Manifest

    filesystem, out = memory
    store = OutputStore(filesystem, out)
    store.make_dirs()
    clock = [100.0]
    monkeypatch.setattr(manifest_module.time, "monotonic", lambda: clock[0])
    manifest = Manifest(store)
    manifest.write({"kind": "header"})
    manifest.checkpoint(paced=True)  # the first one is written
    manifest.write({"kind": "part", "part": "part-00000-0000.parquet"})
    manifest.checkpoint(paced=True)
    assert len(read_manifest(store)) == 1  # too soon: the second line waits in memory
    clock[0] += manifest_module.CHECKPOINT_SECONDS
    manifest.checkpoint(paced=True)
    assert len(read_manifest(store)) == 2
    manifest.write({"kind": "input", "path": "x"})
    manifest.close()  # the end (or a stop) always writes
    assert [line["kind"] for line in read_manifest(store)] == ["header", "part", "input"]


def test_on_a_local_disk_a_paced_checkpoint_syncs_the_manifest_only_now_and_then(tmp_path: Path, monkeypatch):
    """A sync a shard was 5% of the driver's work on 21 MB; paced, every 10 s at most, and always at the end. Every
    line is in the file as soon as it is written (a killed process leaves it): only a lost machine waits for a sync."""
    import os

    from core.batch import manifest as manifest_module
    from core.batch.manifest import Manifest

    store = OutputStore.at(str(tmp_path), None)
    clock, synced = [100.0], []
    monkeypatch.setattr(manifest_module.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(manifest_module.os, "fsync", lambda fd: synced.append(os.fstat(fd).st_size))
    manifest = Manifest(store)
    manifest.write({"kind": "header"})
    manifest.checkpoint(paced=True)  # the first one syncs
    manifest.write({"kind": "part", "part": "part-00000-0000.parquet"})
    manifest.checkpoint(paced=True)
    assert len(synced) == 1  # too soon: not synced ...
    assert len(read_manifest(store)) == 2  # ... but already in the file
    clock[0] += manifest_module.CHECKPOINT_SECONDS
    manifest.checkpoint(paced=True)
    manifest.write({"kind": "input", "path": "x"})
    manifest.checkpoint()  # not paced (a refused write): at once
    assert len(synced) == 3
    manifest.write({"kind": "input", "path": "y"})
    manifest.checkpoint(paced=True)
    manifest.close()  # the end (or a stop) always syncs
    size = (tmp_path / manifest_module.MANIFEST).stat().st_size
    assert len(synced) == 4 and synced[-1] == size
    assert [line["kind"] for line in read_manifest(store)] == ["header", "part", "input", "input"]


def test_a_chunk_that_cannot_be_made_leaves_nothing_aside(tmp_path: Path):
    """write_chunks writes the report's rows as they come: a failure halfway removes the file it wrote aside."""

    def chunks():
        yield b'{"documents": ['
        raise ValueError("a row could not be made")

    store = OutputStore.at(str(tmp_path))
    with pytest.raises(ValueError, match="a row"):
        store.write_chunks(chunks(), "report.json")
    assert list(tmp_path.iterdir()) == []
    store.write_chunks([b"{", b"}"], "report.json")
    assert (tmp_path / "report.json").read_bytes() == b"{}"


@pytest.mark.parametrize("manifest_written", [False, True])
def test_the_cli_says_resume_only_where_a_manifest_records_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, manifest_written: bool
) -> None:
    # A read-only mount fails before anything is written: "rerun with --resume" pointed at a manifest that
    # could not be created.
    import errno

    from core.batch.manifest import MANIFEST
    from core.batch.storage import OutputWriteError
    from core.cli import batch as cli_batch
    from core.cli.main import main

    out = tmp_path / "out"
    if manifest_written:
        out.mkdir()
        (out / MANIFEST).write_text("")

    def read_only(*args, **kwargs):
        raise OutputWriteError("create the folder", str(out / "nodes"), OSError(errno.EROFS, "Read-only file system"))

    monkeypatch.setattr(cli_batch, "run_batch", read_only)
    source = tmp_path / "a.md"
    source.write_text("# A\n\nText.\n")
    assert main(["batch", str(source), "--out", str(out), "-q"]) != 0
    err = capsys.readouterr().err
    assert "Read-only file system (EROFS)" in err
    assert ("rerun with --resume" in err) is manifest_written
    assert ("nothing was written" in err) is not manifest_written
