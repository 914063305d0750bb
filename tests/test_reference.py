"""docs/reference.md is generated from the declarations, and is never stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.output.reference import reference_markdown
from core.splitters import SPLITTERS

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference.md"


def test_the_committed_reference_is_what_the_declarations_say() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == reference_markdown(), (
        "docs/reference.md is stale: run `chunkscope reference --output docs/reference.md`"
    )


def test_every_built_in_splitter_and_parameter_is_listed() -> None:
    text = reference_markdown()
    for cls in SPLITTERS:
        if cls.__module__.startswith("core."):
            assert f"### `{cls.name}`" in text
            for spec in cls.params():
                assert f"| `{spec.name}` |" in text


def test_the_cli_writes_it(tmp_path: Path) -> None:
    out = tmp_path / "reference.md"
    subprocess.run([sys.executable, "-m", "core", "reference", "--output", str(out)], check=True, cwd=ROOT)
    assert out.read_text(encoding="utf-8") == reference_markdown()
