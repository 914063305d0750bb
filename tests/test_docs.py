"""The docs name what is there: every core module appears in docs/architecture.md, and README's Layout names
only folders that exist (it once named ``evaluate/`` where the folder is ``evaluation/``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"


def _module_stems() -> set[str]:
    stems = set()
    for path in CORE.rglob("*.py"):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        stems.add(path.stem)
    for path in CORE.rglob("*_native.c"):
        stems.add(path.stem)
    return stems


def test_every_core_module_is_named_in_the_architecture_page() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`([a-z_0-9]+)(?:\.py|\.c)?`", page))
    missing = sorted(stem for stem in _module_stems() if stem not in named)
    assert not missing, f"core modules docs/architecture.md does not name: {missing}"


def test_the_readmes_layout_names_real_folders() -> None:
    readme = (ROOT / "README.md").read_text()
    layout = readme.split("## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = "\n".join(line for line in layout.splitlines() if line.startswith("    "))
    core_line = block.split("core/", 1)[1]
    core_folders = set(re.findall(r"\b([a-z_]+)/", core_line.split("tests/", 1)[0]))
    top = set(re.findall(r"^    ([a-z_.]+/?)", block, flags=re.MULTILINE))
    missing = sorted(f"core/{name}" for name in core_folders if not (CORE / name).is_dir())
    missing += sorted(name for name in top if not (ROOT / name.rstrip("/")).exists())
    assert not missing, f"README's Layout names what is not there: {missing}"
    # Every folder of core/ is named there too.
    unnamed = sorted(p.name for p in CORE.iterdir() if p.is_dir() and p.name != "__pycache__" and p.name not in core_folders)
    assert not unnamed, f"README's Layout leaves out core/ folders: {unnamed}"


def test_the_readme_names_exactly_the_splitters_that_never_cut_a_table_row() -> None:
    import re

    from core.splitters import SPLITTERS

    readme = " ".join((ROOT / "README.md").read_text().split())
    said = re.search(r"Tables a loader finds are never cut mid-row by the (.+?) splitters", readme)
    assert said, "README no longer says which splitters keep table rows whole"
    named = set(re.findall(r"`([a-z_.]+)`", said.group(1)))
    # tests/test_splitter_properties.py holds each of them to it on generated tables.
    assert named == {cls.name for cls in SPLITTERS if cls.keeps_table_rows}
