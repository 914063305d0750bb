"""Write constraints.txt, the lock, from what a freshly resolved venv holds (`make lock` runs this).

Usage: python scripts/write_lock.py VENV_PYTHON [OUT]. Every distribution ``pip freeze`` lists, but pip
itself and editable installs (the project and its example plugin), pinned with ``==``, sorted by name.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEADER = """\
# The lock: every package a fresh install gets, at the version the whole suite last passed on.
# `make run`, `make test` and `.ci/run` install with `pip install --constraint constraints.txt`, so a machine
# set up today gets these versions, not the newest ones. Versions move only through `make lock` (a fresh
# resolve of pyproject.toml's ranges into a throwaway venv), followed by `make test` before the commit.
# Written by `make lock`; do not edit by hand (tests/test_lock.py checks it against the installed packages).
"""


def pins(python: str) -> list[str]:
    frozen = subprocess.run(
        [python, "-m", "pip", "freeze", "--all", "--exclude-editable"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    kept = [line for line in frozen if "==" in line and not line.startswith(("pip==", "chunkscope"))]
    return sorted(kept, key=str.lower)


def main() -> None:
    python = sys.argv[1]
    out = Path(sys.argv[2] if len(sys.argv) > 2 else "constraints.txt")
    lines = pins(python)
    if not lines:
        sys.exit(f"{python} holds no packages: nothing to lock")
    out.write_text(HEADER + "\n".join(lines) + "\n")
    print(f"{out}: {len(lines)} packages pinned")


if __name__ == "__main__":
    main()
