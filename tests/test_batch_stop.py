"""Stopping `chunkscope batch`: Ctrl-C and SIGTERM leave a consistent output; no worker outlives its driver.

Each test starts a real batch in a fresh interpreter whose workers stall on one input
(a FIFO the test holds open), so the signal always comes mid-run, whatever the
machine's load, instead of racing the run's end.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.batch import MANIFEST, read_manifest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_docs"

# The input named stall.md is a regular file (a FIFO input is refused outright); the worker that takes it
# opens the FIFO given as argv[1] and waits there for as long as the test holds its write end open.
_STALLED_BATCH = """
import signal, sys
# Python leaves SIGINT ignored when its parent started it ignored (a background job): restore it as a terminal has it.
signal.signal(signal.SIGINT, signal.default_int_handler)
from core.batch import work
from core.cli.main import main

process = work._process


def wait_on_fifo(task, *args):
    if task["source"].endswith("stall.md"):
        with open(sys.argv[1], "rb") as fifo:
            fifo.read()
    return process(task, *args)


work._process = wait_on_fifo  # the forked workers inherit it
sys.exit(main(sys.argv[2:]))
"""


def _start_stalled_batch(tmp_path: Path) -> tuple[subprocess.Popen, Path, int]:
    """A batch of six guides and stall.md on two workers, once a worker waits on the FIFO: (process, out, fd)."""
    corpus = tmp_path / "many"
    corpus.mkdir()
    for i in range(6):
        shutil.copy(SAMPLES / "chunking_guide.md", corpus / f"guide_{i:02d}.md")
    stall = tmp_path / "stall.md"
    shutil.copy(SAMPLES / "chunking_guide.md", stall)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    argv = [sys.executable, "-c", _STALLED_BATCH, str(fifo), "batch", str(corpus), str(stall)]
    argv += ["--splitter", "sentence", "--out", str(out), "--workers", "2", "--part-rows", "40"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
    try:
        writer = _open_once_a_reader_waits(fifo, process, deadline=time.monotonic() + 120)
    except BaseException:
        process.kill()
        process.communicate()
        raise
    return process, out, writer


def _open_once_a_reader_waits(fifo: Path, process: subprocess.Popen, deadline: float) -> int:
    """Open the FIFO's write end as soon as a batch worker waits to read it (the run then cannot finish)."""
    while True:
        try:
            # Without a reader a non-blocking open for writing fails with ENXIO; a worker blocked in open() counts.
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
        if process.poll() is not None:
            pytest.fail(f"the batch ended before it reached the FIFO: {process.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail("no worker opened the FIFO in time")
        time.sleep(0.02)


def _children(pid: int) -> list[int]:
    """The live (not zombie) processes whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait is missing


@pytest.mark.parametrize(
    ("number", "to_group", "code"),
    [
        (signal.SIGINT, True, 130),  # Ctrl-C: the terminal signals the whole foreground group
        (signal.SIGTERM, False, 143),  # kill PID, docker stop, a scheduler: the driver alone
    ],
    ids=["ctrl-c", "sigterm"],
)
def test_a_signal_stops_the_workers_and_leaves_a_consistent_output(
    tmp_path: Path, number: signal.Signals, to_group: bool, code: int
):
    process, out, writer = _start_stalled_batch(tmp_path)
    try:
        if to_group:
            os.killpg(process.pid, number)
        else:
            os.kill(process.pid, number)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(writer)
    assert process.returncode == code, (process.returncode, err)
    assert f"interrupted ({number.name}) after" in err and "--resume" in err
    assert "Traceback" not in err  # neither the driver's nor a terminated worker's
    # No worker outlives the run: the driver terminated and reaped its workers before it exited.
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)
    lines = read_manifest(out / MANIFEST)
    parts = {line["part"]: line["rows"] for line in lines if line["kind"] == "part"}
    inputs = [line for line in lines if line["kind"] == "input"]
    assert {path.name for path in (out / "nodes").glob("*")} == set(parts)
    assert sum(parts.values()) == sum(line["nodes"] for line in inputs)
    assert not any(line["path"].endswith("stall.md") for line in inputs)
    report = json.loads((out / "report.json").read_text())
    assert report["complete"] is False
    assert "This run was interrupted" in (out / "report.html").read_text()


def test_workers_die_with_a_driver_killed_by_sigkill(tmp_path: Path):
    process, _, writer = _start_stalled_batch(tmp_path)
    workers = _children(process.pid)
    try:
        assert len(workers) == 2, workers
        os.kill(process.pid, signal.SIGKILL)  # nothing of the driver runs: no handler, no finally
        process.communicate(timeout=60)
        deadline = time.monotonic() + 5
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in workers if _alive(pid)]
    finally:
        os.close(writer)
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    # Both: the one waiting on the FIFO and the idle one waiting for a task.
    assert left == []


def test_without_prctl_the_watchdog_ends_a_worker_whose_driver_died(monkeypatch):
    """Where the kernel cannot be asked (not Linux), the worker's watchdog sees its parent gone and exits."""
    from core.batch import local_engine

    monkeypatch.setattr(sys, "platform", "darwin")  # die_with then skips prctl: the watchdog alone
    monkeypatch.setattr(local_engine, "WATCHDOG_SECONDS", 0.05)
    read, write = os.pipe()
    driver = os.fork()
    if driver == 0:  # the "driver": starts a worker, reports its pid, and dies at once
        try:
            me = os.getpid()
            worker = os.fork()
            if worker == 0:
                local_engine.die_with(me)
                time.sleep(60)  # a worker stuck in a file: only the watchdog can end it
                os._exit(0)
            os.write(write, str(worker).encode())
        finally:
            os._exit(0)
    os.close(write)
    worker = int(os.read(read, 32))
    os.close(read)
    os.waitpid(driver, 0)
    deadline = time.monotonic() + 5
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(worker)
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert not alive
