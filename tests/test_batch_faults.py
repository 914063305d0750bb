"""`chunkscope batch` when the output or the inputs misbehave: a disk that refuses a write, pipes and broken links.

A write the output refuses (a full disk, a read-only folder, a file where a folder should be)
ends the run with one line naming the path and the errno, exit code 74, no temporary file left
and a manifest that `--resume` continues. A FIFO, a device or a socket is refused by its kind
before anything reads it (`chunkscope split` on a FIFO used to block forever); a broken symbolic
link is a failed input in the report, not a file skipped unseen.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.batch import MANIFEST, OutputWriteError, expand_inputs, read_manifest, run_batch
from core.batch.manifest import Manifest
from core.cli.main import main
from core.config import PipelineConfig
from core.errors import LoadError
from core.loaders import load
from core.loaders.file_kinds import refuse_special_file, special_file_problem
from core.splitters import get_splitter

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_docs"
NAMES = ["chunking_guide.md", "release_notes.txt", "vector_search_faq.html", "splitter_benchmarks.csv"]


def small_config() -> PipelineConfig:
    return PipelineConfig(splitter=get_splitter("recursive", chunk_size=400, chunk_overlap=40))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("faults") / "corpus"
    folder.mkdir()
    for name in NAMES:
        shutil.copy(SAMPLES / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def clean(corpus: Path) -> pa.Table:
    """The dataset of an undisturbed run, rows in a stable order."""
    out = corpus.parent / "clean"
    run_batch([str(corpus)], small_config(), out, workers=1, part_rows=30)
    return _rows(out)


def _rows(out: Path) -> pa.Table:
    parts = sorted((out / "nodes").glob("part-*.parquet"))
    table = pa.concat_tables([pq.read_table(part) for part in parts])
    return table.sort_by([("source_path", "ascending"), ("node_index", "ascending")])


def _leftovers(out: Path) -> list[str]:
    return sorted(str(path.relative_to(out)) for path in out.rglob(".*.tmp"))


def _assert_consistent(out: Path) -> None:
    """Every part the manifest lists is there and nothing else is; recorded inputs account for every row."""
    lines = read_manifest(out / MANIFEST)
    parts = {line["part"]: line["rows"] for line in lines if line["kind"] == "part"}
    assert {path.name for path in (out / "nodes").iterdir()} == set(parts)
    inputs = [line for line in lines if line["kind"] == "input" and line["status"] == "ok"]
    assert sum(line["nodes"] for line in inputs) <= sum(parts.values())


# ----------------------------------------------------------------------------- the output refuses a write


def _full_disk_at(monkeypatch, name: str) -> None:
    """The disk fills while ``name`` is written: the file aside is created, part of it written, then ENOSPC.

    The parts are written by the batch's worker processes, which see this patch only when forked from this one:
    pool_context spawns them instead once another thread runs here (a test server an earlier test started in
    this pytest worker), so the pool is made to fork."""
    import multiprocessing

    from core.batch import local_engine
    from core.batch.storage import _OsFiles

    monkeypatch.setattr(local_engine, "pool_context", lambda: multiprocessing.get_context("fork"))

    real = _OsFiles.write

    def write(self: _OsFiles, path: str, data: bytes) -> None:
        if path.endswith(f".{name}.tmp"):
            real(self, path, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, path, data)

    monkeypatch.setattr(_OsFiles, "write", write)


def test_a_full_disk_partway_leaves_no_temporary_file_and_resume_finishes_the_same_dataset(
    corpus: Path, clean: pa.Table, tmp_path: Path, monkeypatch
):
    out = tmp_path / "out"
    _full_disk_at(monkeypatch, "part-00000-0002.parquet")  # the first shard's third part
    with pytest.raises(OutputWriteError) as refused:
        run_batch([str(corpus)], small_config(), out, workers=1, part_rows=30)
    message = str(refused.value)
    assert message == f"cannot write {out}/nodes/part-00000-0002.parquet: No space left on device (ENOSPC)"
    assert refused.value.errno == errno.ENOSPC
    assert _leftovers(out) == []
    _assert_consistent(out)
    parts = [line["part"] for line in read_manifest(out / MANIFEST) if line["kind"] == "part"]
    assert parts == ["part-00000-0000.parquet", "part-00000-0001.parquet"]  # in place before the disk filled
    # The report of what is recorded went through (the disk refused one part, not the small files).
    assert json.loads((out / "report.json").read_text())["complete"] is False

    monkeypatch.undo()
    result = run_batch([str(corpus)], small_config(), out, workers=1, part_rows=30, resume=True)
    assert result.report["complete"] and result.report["corpus"]["files_ok"] == len(NAMES)
    assert _rows(out).equals(clean)


def test_a_manifest_line_cut_by_a_full_disk_is_dropped_and_resume_finishes(
    corpus: Path, clean: pa.Table, tmp_path: Path, monkeypatch
):
    out = tmp_path / "out"
    real = Manifest._append
    lines_written = []

    def append(self: Manifest, data: bytes) -> None:
        if len(lines_written) == 3:  # the header, a part, an input; then half of the next line
            self._handle.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        lines_written.append(data)
        real(self, data)

    monkeypatch.setattr(Manifest, "_append", append)
    with pytest.raises(OutputWriteError, match=r"manifest\.jsonl: No space left on device \(ENOSPC\)"):
        run_batch([str(corpus)], small_config(), out, workers=1, part_rows=30)
    assert _leftovers(out) == []
    text = (out / MANIFEST).read_text()
    assert not text.endswith("\n")  # the torn line is there on disk ...
    assert len(read_manifest(out / MANIFEST)) == 3  # ... and not read as a line

    monkeypatch.undo()
    run_batch([str(corpus)], small_config(), out, workers=1, part_rows=30, resume=True)
    assert _rows(out).equals(clean)
    _assert_consistent(out)


def test_an_output_under_a_file_is_one_line_and_exit_74_and_runs_once_fixed(corpus: Path, tmp_path: Path, capsys):
    # Root writes into read-only folders, so the refusal here is a file where a folder should be.
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder")
    out = blocker / "out"
    code = main(["batch", str(corpus), "--splitter", "character", "--out", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 74
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"cannot create the folder {out}/nodes: Not a directory (ENOTDIR)" in err
    # No manifest could be written, so there is nothing to resume: the sentence says so.
    assert "nothing was written" in err and "--resume" not in err

    # The folder fixed, the same command runs the whole corpus (and so would one with --resume).
    blocker.unlink()
    blocker.mkdir()
    assert main(["batch", str(corpus), "--splitter", "character", "--out", str(out), "-q"]) == 0
    assert json.loads((out / "report.json").read_text())["corpus"]["files_ok"] == len(NAMES)


def _limited_file_size(limit: int):  # noqa: ANN202 - a preexec_fn
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_report_the_disk_cuts_short_leaves_no_tmp_file_and_resume_writes_it(corpus: Path, tmp_path: Path):
    # A real refusal, not a patched one: a file-size limit makes the kernel refuse report.html (plotly is
    # inlined: megabytes) with EFBIG partway through, as a full disk refuses with ENOSPC. Python ignores
    # SIGXFSZ, so the write fails instead of killing the process.
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "core", "batch", str(corpus), "--splitter", "character", "--out", str(out)]
    argv += ["--workers", "1", "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env, preexec_fn=_limited_file_size(1 << 20)
    )
    assert done.returncode == 74, done.stderr
    assert f"cannot write {out}/report.html: File too large (EFBIG)" in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert _leftovers(out) == [] and not (out / "report.html").exists()
    lines = read_manifest(out / MANIFEST)
    assert len([line for line in lines if line["kind"] == "input"]) == len(NAMES)  # every input was recorded

    again = subprocess.run(argv + ["--resume"], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert again.returncode == 0, again.stderr
    # Nothing is redone (every input was recorded before the report failed), and no worker complains.
    assert again.stderr.startswith(f"{len(NAMES)} files ({len(NAMES)} kept from before)"), again.stderr
    assert "Traceback" not in again.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["complete"] and report["corpus"]["files_ok"] == len(NAMES)
    assert (out / "report.html").stat().st_size > 1 << 20


# ----------------------------------------------------------------------------- inputs that are not files


@pytest.fixture
def odd_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "odd"
    folder.mkdir()
    shutil.copy(SAMPLES / "release_notes.txt", folder / "notes.txt")
    os.mkfifo(folder / "pipe.md")
    os.symlink("/dev/null", folder / "device.txt")
    os.symlink(folder / "gone.md", folder / "dangling.md")
    os.symlink("loop.md", folder / "loop.md")
    os.symlink(folder / "notes.txt", folder / "alias.txt")  # a link to a regular file is that file
    os.symlink(folder / "elsewhere.bin", folder / "unsupported.bin")  # broken, but no loader reads .bin
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "socket.md"))
    yield folder
    listener.close()


def test_a_special_file_is_named_by_its_kind(odd_folder: Path):
    assert special_file_problem(odd_folder / "notes.txt") == ""
    assert special_file_problem(odd_folder / "alias.txt") == ""
    assert special_file_problem(odd_folder / "missing.txt") == ""  # left to the reader's "file not found"
    assert special_file_problem(odd_folder) == ""
    assert "named pipe (FIFO)" in special_file_problem(odd_folder / "pipe.md")
    assert special_file_problem(odd_folder / "device.txt") == "is a device, not a regular file"
    assert special_file_problem(odd_folder / "socket.md") == "is a socket, not a regular file"
    gone = str(odd_folder / "gone.md")
    assert special_file_problem(odd_folder / "dangling.md") == f"is a symbolic link to {gone!r}, which does not exist"
    assert "loop" in special_file_problem(odd_folder / "loop.md")
    with pytest.raises(LoadError, match=r"^pipe\.md: is a named pipe"):
        refuse_special_file(odd_folder / "pipe.md")


def test_load_refuses_a_fifo_and_a_device_instead_of_reading_them(odd_folder: Path):
    # If the check were gone, the FIFO would block this test forever and /dev/null would be "empty".
    with pytest.raises(LoadError, match="named pipe"):
        load(odd_folder / "pipe.md")
    with pytest.raises(LoadError, match="is a device"):
        load(odd_folder / "device.txt")


def test_split_on_a_fifo_ends_at_once_with_one_line(odd_folder: Path):
    done = subprocess.run(
        [sys.executable, "-m", "core", "split", str(odd_folder / "pipe.md")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2
    assert done.stderr == (
        "chunkscope: pipe.md: is a named pipe (FIFO), not a regular file: reading it could wait forever\n"
    )


def test_batch_lists_pipes_devices_sockets_and_broken_links_as_failures(odd_folder: Path, tmp_path: Path):
    found = {Path(entry.source).name: entry.problem for entry in expand_inputs([str(odd_folder)])}
    # .bin is no document: a broken link there is not an input at all.
    assert set(found) == {"notes.txt", "alias.txt", "pipe.md", "device.txt", "socket.md", "dangling.md", "loop.md"}
    assert found["notes.txt"] == found["alias.txt"] == ""

    named = expand_inputs([str(odd_folder / "pipe.md"), str(odd_folder / "d*.md")])
    assert [(Path(entry.source).name, bool(entry.problem)) for entry in named] == [
        ("pipe.md", True),
        ("dangling.md", True),
    ]

    result = run_batch([str(odd_folder)], small_config(), tmp_path / "out", workers=1)
    failed = {Path(entry["source"]).name: entry["reason"] for entry in result.report["failed"]}
    assert set(failed) == {"pipe.md", "device.txt", "socket.md", "dangling.md", "loop.md"}
    assert "which does not exist" in failed["dangling.md"] and "named pipe" in failed["pipe.md"]
    assert result.report["corpus"]["files_ok"] == 2
    html = (tmp_path / "out" / "report.html").read_text()
    assert "dangling.md" in html and "Failed files (5)" in html


def test_a_folder_walk_lists_what_rglob_lists_in_its_order(odd_folder: Path, monkeypatch):
    """core.batch.inputs.folder_walk against the pathlib walk it replaced, on a tree with every odd case."""
    from core.batch.inputs import folder_walk

    tree = odd_folder / "tree"
    for folder in ("a", "a-b", "a/b", "a/b/c", ".hidden", "ünï", "dir.md", "locked"):
        (tree / folder).mkdir(parents=True)
    for name in (
        "a/x.md", "a-b/y.MD", "a/b/z.txt", "a/b/c/deep.rst", ".hidden/h.md", ".md", "ünï/é.txt", "dir.md/in.md",
        "top.Txt", "no_suffix", "trailing.", "a/b/ignored.bin", "locked/secret.md", "a.b.c.md",
    ):
        (tree / name).write_text("text")
    os.symlink(tree / "a", tree / "link-to-a.md")  # a link to a folder: not a file, and not entered
    os.symlink(tree / "a", tree / "a-link")
    os.symlink(tree / "nowhere.md", tree / "broken.md")
    (tree / "locked").chmod(0)
    supported = {".md", ".txt", ".rst"}
    try:
        for root in (tree, odd_folder, Path(os.path.relpath(tree))):
            expected = sorted(p for p in root.rglob("*") if p.suffix.lower() in supported and not p.is_dir())
            assert folder_walk(root, supported) == [(str(p), p.relative_to(root).as_posix()) for p in expected]
        monkeypatch.chdir(tree)
        expected = sorted(p for p in Path(".").rglob("*") if p.suffix.lower() in supported and not p.is_dir())
        assert folder_walk(Path("."), supported) == [(str(p), p.as_posix()) for p in expected]
    finally:
        (tree / "locked").chmod(0o755)
