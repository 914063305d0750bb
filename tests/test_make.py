"""The README's `make run` on a fresh machine says what it is doing while it installs (a dry run: nothing runs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
C_SOURCES = sorted(str(path.relative_to(ROOT)) for path in ROOT.glob("core/**/*_native.c"))


@pytest.fixture
def fresh_checkout(tmp_path: Path) -> Path:
    """The files make reads, in a folder with no .venv (as on a fresh clone)."""
    for name in ("Makefile", "pyproject.toml", "constraints.txt", "setup.py", "scripts/ticking.sh", *C_SOURCES):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "examples" / "plugin").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "plugin" / "pyproject.toml", tmp_path / "examples" / "plugin")
    return tmp_path


def dry_run(folder: Path, target: str) -> list[str]:
    if shutil.which("make") is None:
        pytest.fail("make is missing: the README's two commands need it")
    done = subprocess.run(["make", "-n", target], cwd=folder, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.splitlines()


def test_make_run_on_a_fresh_checkout_announces_each_step_and_shows_pip_progress(fresh_checkout: Path) -> None:
    lines = dry_run(fresh_checkout, "run")
    steps = [line for line in lines if line.startswith("printf") and "==>" in line]
    assert [step.split('"')[1].split(" ")[0] for step in steps] == [
        "Creating", "Installing", "Preparing", "Installed;", "Starting"
    ]  # fmt: skip
    assert "~2.5 GB" in steps[1] and "5 minutes" in steps[1]
    # The samples are read, their default chunks and the Query page's sample queries embedded at install: the first
    # page and the first sample query wait for neither the parsers nor the model.
    warm = "chunkscope evaluate sample_docs --queries sample_docs/queries.json"
    assert any(warm in line and "HF_HUB_OFFLINE=1" in line for line in lines)
    # The app through ui.launch: streamlit run app.py, the first page's imports done before the first visitor.
    assert any("CHUNKSCOPE_PRELOAD_MODEL=1" in line and "-m ui.launch" in line for line in lines)
    project, readers = [line for line in lines if "pip install" in line]
    assert "torch==2.13.0" in project and "-e ." in project
    # SimpleDirectoryReader's file readers, without the pins that would downgrade pypdf and pandas.
    assert "--no-deps llama-index-readers-file==" in readers
    assert not [line for line in (project, readers) if "--quiet" in line or "-q " in line]
    # pip is silent while it unpacks: the install runs under a ticker that says it still runs.
    assert project.startswith("scripts/ticking.sh ")
    # Both install the locked versions, the ones the suite passed on.
    assert all("--constraint constraints.txt" in line for line in (project, readers))


def test_make_test_installs_the_locked_versions_too(fresh_checkout: Path) -> None:
    installs = [line for line in dry_run(fresh_checkout, "test") if "pip install" in line]
    assert len(installs) == 2 and all("--constraint constraints.txt" in line for line in installs)


def test_the_ticker_passes_the_exit_status_and_says_it_still_runs(tmp_path: Path) -> None:
    ticker = ROOT / "scripts" / "ticking.sh"
    env = {**os.environ, "TICK_SECONDS": "1"}
    done = subprocess.run(
        [str(ticker), "sh", "-c", "sleep 2.5; exit 3"], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 3
    assert "... still installing (2 s): 0 packages in .venv so far" in done.stdout


def test_a_moved_lock_installs_again(fresh_checkout: Path) -> None:
    venv = fresh_checkout / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    (venv / ".installed-run").touch()
    later = time.time() + 5
    os.utime(fresh_checkout / "constraints.txt", (later, later))
    assert any("pip install" in line for line in dry_run(fresh_checkout, "run"))


def test_make_lock_resolves_in_a_throwaway_venv_and_writes_the_lock(fresh_checkout: Path) -> None:
    lines = dry_run(fresh_checkout, "lock")
    resolve = next(line for line in lines if "pip install" in line and "torch==" in line)
    # A fresh resolve: the old lock is not a constraint of the new one, and every extra is in it.
    assert "--constraint" not in resolve and "[dev,bench,llm]" in resolve and ".venv-lock/" in resolve
    (write,) = [i for i, line in enumerate(lines) if "scripts/write_lock.py" in line]
    assert lines[write].rstrip().endswith("constraints.txt")
    # The throwaway venv goes once the lock is written (make under make adds its own directory lines).
    assert [i for i, line in enumerate(lines) if line.startswith("rm -rf .venv-lock")][-1] > write


def test_a_second_make_run_skips_the_install(fresh_checkout: Path) -> None:
    venv = fresh_checkout / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    (venv / ".installed-run").touch()  # newer than pyproject.toml
    lines = dry_run(fresh_checkout, "run")
    assert not [line for line in lines if "pip install" in line or "Installing" in line]
    assert any("Starting ChunkScope" in line for line in lines)


@pytest.mark.parametrize("source", C_SOURCES)
def test_a_changed_c_source_installs_again(fresh_checkout: Path, source: str) -> None:
    # The editable install compiles each C source (setup.py): a newer one must rebuild it.
    venv = fresh_checkout / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    stamp = venv / ".installed-run"
    stamp.touch()
    later = time.time() + 5
    os.utime(fresh_checkout / source, (later, later))
    lines = dry_run(fresh_checkout, "run")
    assert any("pip install" in line and "-e ." in line for line in lines)


def test_make_fuzz_runs_the_c_under_address_and_ub_sanitizers(fresh_checkout: Path) -> None:
    # What remains in C is held to its twin with AddressSanitizer and UBSan loaded (tests/conftest.py loads the build).
    script = "\n".join(dry_run(fresh_checkout, "fuzz"))
    built = script.index("-fsanitize=address,undefined")
    run = script.index("CHUNKSCOPE_SANITIZED=", built)
    assert "libasan.so" in script[run:] and "tests/test_wordpiece.py" in script[run:]
