"""``chunkscope doctor`` names every compiled module and says whether it runs, and why not: a failed compile is
never silent (setup.py leaves a note beside the module; doctor reads it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from core.cli import doctor
from core.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def test_doctor_lists_every_c_file_in_the_tree():
    sources = sorted(
        path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".") for path in ROOT.glob("core/**/*_native.c")
    )
    assert sorted(path.module for path in doctor.NATIVE_PATHS) == sources


def test_doctor_says_each_native_path_is_active_here(capsys):
    # The install builds it (setup.py; the Makefile installs gcc): without it the twin runs, slower.
    assert main(["doctor"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{path.module}: active (built at install)" for path in doctor.NATIVE_PATHS]
    sanitized = os.environ.get("CHUNKSCOPE_SANITIZED")
    if sanitized:  # make fuzz: the modules that run are the sanitizer builds (tests/conftest.py)
        for path in doctor.NATIVE_PATHS:
            assert sys.modules[path.module].__file__.startswith(sanitized)


@pytest.fixture
def fake_owner(tmp_path, monkeypatch) -> doctor.NativePath:
    """A module that imports no ``fake_native`` (as an install without the build leaves it)."""
    owner = types.ModuleType("fake_owner")
    owner.__file__ = str(tmp_path / "fake_owner.py")
    owner.fake_native = None
    owner.NATIVE_IMPORT_ERROR = "undefined symbol: PyFoo"
    monkeypatch.setitem(sys.modules, "fake_owner", owner)
    return doctor.NativePath("fake.fake_native", "fake_owner", "fakes", "fake_twin")


def test_doctor_tells_a_missing_build_from_a_failed_compile_and_a_build_that_does_not_load(fake_owner, tmp_path):
    assert doctor.native_status(fake_owner).startswith("inactive: not built (no C compiler at install); fake_twin runs")
    (tmp_path / "fake_native.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (tmp_path / "fake_native.so").write_bytes(b"")
    assert doctor.native_status(fake_owner).startswith("INACTIVE: built but does not load (undefined symbol: PyFoo)")
    (tmp_path / "fake_native.build-failed").write_text("CompileError: gcc failed with exit status 1\n")
    assert doctor.native_status(fake_owner).startswith(
        "INACTIVE: its compile FAILED at install (CompileError: gcc failed with exit status 1); fake_twin runs"
    )


def test_a_compile_that_fails_at_install_leaves_the_note_doctor_reads(tmp_path):
    # setup.py's build_ext with a compiler that always fails: the install goes on (optional), and says so.
    for name in ("setup.py", "pyproject.toml", "README.md", "core/tokens/wordpiece_native.c"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    env = {**os.environ, "CC": "/bin/false"}
    done = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "did not compile" in done.stdout
    note = tmp_path / "core" / "tokens" / "wordpiece_native.build-failed"
    assert note.read_text().startswith("CompileError: ")
