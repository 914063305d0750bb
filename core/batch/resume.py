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
from typing import Any, NamedTuple

from core.batch.dataset import NODES, PART_PREFIX, file_sha256, parquet_bytes, part_shard
from core.batch.inputs import Input
from core.batch.manifest import MANIFEST, manifest_blocks
from core.batch.storage import OutputStore
from core.errors import ConfigError

OUTPUT_FILES = ("report.json", "report.html")


def prepare_output(
    out: OutputStore, header: dict[str, Any], files: Sequence[Input], *, resume: bool, overwrite: bool
) -> tuple[set[str], int]:
    """Make ``out`` ready; returns the input paths already written (with ``resume``) and the next shard number.

    The shards of a resumed run are numbered after the kept parts' (:func:`core.batch.dataset.part_name`).
    """
    out.make_dirs(NODES)
    existing = out.files(NODES, PART_PREFIX, ".parquet")
    for stale in out.files(NODES, f".{PART_PREFIX}", ".tmp"):  # a part being written when a run was killed
        out.delete(NODES, stale)
    if not resume:
        if (out.exists(MANIFEST) or existing) and not overwrite:
            raise ConfigError(
                f"{out}: already holds a batch output; pass --resume to continue it or --overwrite to replace it"
            )
        _start_afresh(out, existing, (MANIFEST, *OUTPUT_FILES))
        return set(), 0
    previous, inputs, parts = _recorded(out)
    if previous is None:
        _start_afresh(out, existing, ())
        return set(), 0
    _check_same_settings(out, previous, header)
    present = set(existing) & set(parts)
    valid = _still_valid(files, inputs, present)
    kept_parts = _keep_valid_rows(out, [parts[name] for name in sorted(present)], valid, inputs)
    for name in existing:
        if name not in present:
            out.delete(NODES, name)
    kept = [_line_text(line) for line in (header, *kept_parts)]
    kept.extend(inputs[path].text for path in inputs if path in valid)
    out.write_chunks((text.encode("utf-8") for text in kept), MANIFEST)
    numbers = [part_shard(line["part"]) for line in kept_parts]
    return valid, max(numbers, default=-1) + 1


def _start_afresh(out: OutputStore, parts: Sequence[str], outputs: Sequence[str]) -> None:
    """Delete ``parts`` and those of ``outputs`` there are; leave an empty manifest."""
    for name in parts:
        out.delete(NODES, name)
    for name in outputs:
        if out.exists(name):
            out.delete(name)
    out.write_bytes(b"", MANIFEST)


def _still_valid(files: Sequence[Input], inputs: dict[str, _Input], present: set[str]) -> set[str]:
    """The recorded inputs still to be kept: still an input, every part they list present, the file unchanged."""
    current = {entry.path: entry for entry in files if not entry.problem}
    return {
        path
        for path, line in inputs.items()
        if path in current and all(part in present for part in line.parts) and _unchanged(line)
    }


def _check_same_settings(out: OutputStore, previous: dict[str, Any], header: dict[str, Any]) -> None:
    """A ConfigError unless the earlier run's header has this run's configuration, embedding, ids and metrics."""
    # An output from before batch ids had their own scheme ("ids" missing) holds ids of neither kind.
    if (
        previous.get("config_key") != header["config_key"]
        or previous.get("embed", "") != header["embed"]
        or previous.get("ids") != header["ids"]
        # Outputs from before --metrics was optional were all measured.
        or previous.get("metrics", True) != header.get("metrics", True)
    ):
        raise ConfigError(
            f"{out}: was written with another configuration (or --embed, --content-ids or --metrics); --resume "
            "needs the same one (or use --overwrite)"
        )


def _keep_valid_rows(
    out: OutputStore, lines: Sequence[dict[str, Any]], valid: set[str], inputs: dict[str, _Input]
) -> list[dict[str, Any]]:
    """The manifest lines of the parts kept, each rewritten without the rows of inputs not ``valid`` (deleted where
    none is left).

    Rows of anything else (a changed, removed or half-written input) leave the parts that hold them;
    the other rows stay where they are, so one changed file costs one file's work, not its neighbours'.
    """
    kept_parts = []
    for line in lines:
        keep = [path for path in line["inputs"] if path in valid]
        if len(keep) == len(line["inputs"]):
            kept_parts.append(line)
        elif keep:
            kept_parts.append(_filter_part(out, line, keep, {inputs[path].source for path in keep}))
        else:
            out.delete(NODES, line["part"])
    return kept_parts


def _filter_part(out: OutputStore, line: dict[str, Any], keep: list[str], sources: set[str]) -> dict[str, Any]:
    """Rewrite a part with only the rows of ``sources``; returns its new manifest line."""
    import hashlib

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(out.path(NODES, line["part"]), filesystem=out.fs)
    table = table.filter(pc.is_in(table.column("source_path"), value_set=pa.array(sorted(sources), pa.string())))
    data = parquet_bytes(table.combine_chunks())
    out.write_bytes(data, NODES, line["part"])
    return {**line, "rows": table.num_rows, "sha256": hashlib.sha256(data).hexdigest(), "inputs": keep}


class _Input(NamedTuple):
    """What --resume needs of a recorded input: its file's facts, its parts, and its manifest line as it is kept."""

    path: str
    source: str
    parts: list[str]
    size: Any
    mtime_ns: Any
    sha256: Any
    text: str


def _recorded(out: OutputStore) -> tuple[dict[str, Any] | None, dict[str, _Input], dict[str, dict[str, Any]]]:
    """The manifest's first header, its inputs read whole (the last line of each, where its first one stood) and its
    part lines, read a block at a time: an input is kept as its line's text and a few facts, not its parsed line
    (~1 KB against ~5 KB with its metrics)."""
    previous = None
    inputs: dict[str, _Input] = {}
    parts: dict[str, dict[str, Any]] = {}
    for block in manifest_blocks(out):
        for line in block:
            kind = line.get("kind")
            if kind == "input" and line.get("status") == "ok":
                inputs[line["path"]] = _Input(
                    line["path"], line["source"], list(line.get("parts", [])), line.get("size"),
                    line.get("mtime_ns"), line.get("sha256"), _line_text(line),
                )  # fmt: skip
            elif kind == "part":
                parts[line["part"]] = line
            elif kind == "header" and previous is None:
                previous = line
    return previous, inputs, parts


def _line_text(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, default=str) + "\n"


def _unchanged(line: _Input) -> bool:
    """The file still has the size and mtime recorded; a touched file with the same bytes also counts."""
    try:
        stat = os.stat(line.path)
    except OSError:
        return False
    if stat.st_size != line.size:
        return False
    if stat.st_mtime_ns == line.mtime_ns:
        return True
    return file_sha256(Path(line.path)) == line.sha256
