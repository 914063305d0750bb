"""Making the output folder ready: a fresh start, or ``--resume`` keeping what an earlier run recorded.

An input is kept when its manifest line is there, every part it lists is present, and
the file is unchanged (same size and mtime, or the same bytes). The rows of anything
else (a changed, removed or half-written input) are taken out of the parts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.batch.dataset import MANIFEST, NODES, PART_PREFIX, file_sha256, read_manifest
from core.batch.inputs import Input
from core.errors import ConfigError

OUTPUT_FILES = ("report.json", "report.html")


def prepare_output(
    out: Path, header: dict[str, Any], files: Sequence[Input], *, resume: bool, overwrite: bool
) -> tuple[set[str], int]:
    """Make ``out`` ready; returns the input paths already written (with ``resume``) and the next part number."""
    nodes = out / NODES
    nodes.mkdir(parents=True, exist_ok=True)
    manifest_path = out / MANIFEST
    existing = sorted(nodes.glob(f"{PART_PREFIX}*.parquet"))
    for stale in nodes.glob(f".{PART_PREFIX}*.tmp"):  # a part being written when a run was killed
        stale.unlink()
    if not resume:
        if (manifest_path.exists() or existing) and not overwrite:
            raise ConfigError(
                f"{out}: already holds a batch output; pass --resume to continue it or --overwrite to replace it"
            )
        for path in [*existing, manifest_path, *(out / name for name in OUTPUT_FILES)]:
            if path.exists():
                path.unlink()
        manifest_path.touch()
        return set(), 0

    lines = read_manifest(manifest_path)
    previous = next((line for line in lines if line.get("kind") == "header"), None)
    if previous is None:
        for path in existing:
            path.unlink()
        manifest_path.write_text("")
        return set(), 0
    if previous.get("config_key") != header["config_key"] or previous.get("embed", "") != header["embed"]:
        raise ConfigError(
            f"{out}: was written with another configuration; --resume needs the same one (or use --overwrite)"
        )
    current = {entry.path: entry for entry in files if not entry.problem}
    inputs = {}
    for line in lines:
        if line.get("kind") == "input" and line.get("status") == "ok":
            inputs[line["path"]] = line
    parts = {line["part"]: line for line in lines if line.get("kind") == "part"}
    present = {path.name for path in existing} & set(parts)
    valid = {
        path
        for path, line in inputs.items()
        if path in current and all(part in present for part in line.get("parts", [])) and _unchanged(line)
    }
    # Rows of anything else (a changed, removed or half-written input) leave the parts that hold them;
    # the other rows stay where they are, so one changed file costs one file's work, not its neighbours'.
    kept_parts = []
    for name in sorted(present):
        line = parts[name]
        keep = [path for path in line["inputs"] if path in valid]
        if len(keep) == len(line["inputs"]):
            kept_parts.append(line)
        elif keep:
            kept_parts.append(_filter_part(nodes / name, line, keep, {inputs[path]["source"] for path in keep}))
        else:
            (nodes / name).unlink()
    for path in existing:
        if path.name not in present:
            path.unlink()
    kept = [header, *kept_parts, *(inputs[path] for path in inputs if path in valid)]
    temporary = out / f".{MANIFEST}.tmp"
    temporary.write_text("".join(json.dumps(line, ensure_ascii=False, default=str) + "\n" for line in kept))
    os.replace(temporary, manifest_path)
    good_parts = [line["part"] for line in kept_parts]
    numbers = [int(name[len(PART_PREFIX) : -len(".parquet")]) for name in good_parts]
    return valid, max(numbers, default=-1) + 1


def _filter_part(path: Path, line: dict[str, Any], keep: list[str], sources: set[str]) -> dict[str, Any]:
    """Rewrite a part with only the rows of ``sources``; returns its new manifest line."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    table = table.filter(pc.is_in(table.column("source_path"), value_set=pa.array(sorted(sources), pa.string())))
    temporary = path.with_name(f".{path.name}.tmp")
    pq.write_table(table.combine_chunks(), temporary, compression="zstd")
    digest = file_sha256(temporary)
    os.replace(temporary, path)
    return {**line, "rows": table.num_rows, "sha256": digest, "inputs": keep}


def _unchanged(line: dict[str, Any]) -> bool:
    """The file still has the size and mtime recorded; a touched file with the same bytes also counts."""
    try:
        stat = os.stat(line["path"])
    except OSError:
        return False
    if stat.st_size != line.get("size"):
        return False
    if stat.st_mtime_ns == line.get("mtime_ns"):
        return True
    return file_sha256(Path(line["path"])) == line.get("sha256")
