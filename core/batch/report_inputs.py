"""The report's inputs: the manifest's input lines folded in as they stream, never all held at once.

:func:`fold_inputs` reads the manifest a block at a time (:func:`core.batch.manifest.manifest_blocks`) and keeps
what the report needs of each input: sums in the order the inputs come (so every float is the sum an in-memory
pass makes), the slowest and largest ten, the failures, the files' SHA-256 for the same-content groups, and
report.json's row for each document, encoded at once into a spool that moves to a temporary file past
:data:`ROWS_IN_MEMORY`. A report of a million inputs held ~5 GB of parsed lines, rows and their JSON; this
holds about the same-content index (~0.3 KB an input) and at most ``ROWS_IN_MEMORY`` of rows.

The last line of an input counts. This code's ``--resume`` rewrites the manifest with one line an input, but a
manifest may hold two (an older version's resume): a path seen twice (by its hash, so a collision only costs
time) makes the fold start again from the whole manifest read at once, which keeps the last line of each.
"""

from __future__ import annotations

import heapq
import json
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from core.batch.manifest import manifest_blocks, read_manifest
from core.batch.report_html import HTML_DOCUMENT_ROWS
from core.batch.storage import OutputStore

TOP = 10  # slowest and largest documents listed
ROWS_IN_MEMORY = 32 << 20  # bytes of report.json's rows kept in memory before the spool moves to a file
_CHUNK = 1 << 20


class _SeenTwice(Exception):
    """An input with two lines in the manifest: fold the whole manifest read at once instead."""


class InputFold:
    """Every counted input line of a manifest, folded in, in order (see the module's docstring)."""

    def __init__(self) -> None:
        self.files = self.ok = self.documents = self.nodes = self.bytes = self.characters = 0
        self.nonspace = self.duplicates = 0
        self.node_characters = self.coverage_weighted = self.overlap_weighted = self.seconds = 0
        self.coverages = array("d")
        self.slowest: list[dict[str, Any]] = []
        self.largest: list[dict[str, Any]] = []
        self.failed: list[dict[str, str]] = []
        # What the LLM extractors sent and spent, summed over the inputs whose lines say (None: no line does).
        self.llm: dict[str, int] | None = None
        self._sources_of: dict[str, Any] = {}  # SHA-256 -> the first source, or the list of every source
        self.rows = tempfile.SpooledTemporaryFile(max_size=ROWS_IN_MEMORY)  # noqa: SIM115 - closed by close()
        self.row_count = 0
        self.first_rows: list[dict[str, Any]] = []  # report.html's
        self._encode = json.JSONEncoder(ensure_ascii=False, default=str).encode  # report.json's rows, as before

    def add(self, entries: list[dict[str, Any]], measured: bool) -> None:
        """Fold in a block of counted input lines, in manifest order."""
        ok = []
        for entry in entries:
            self.files += 1
            self.seconds += entry["seconds"]
            if "llm" in entry:  # a failed file's requests were sent too
                from core.extractors.llm import add_spend

                self.llm = {} if self.llm is None else self.llm
                add_spend(self.llm, entry["llm"])
            if entry["status"] != "ok":
                self.failed.append({"source": entry["source"], "reason": entry["reason"]})
                continue
            ok.append(entry)
            self._add_ok(entry, measured)
        if ok:
            self.slowest = heapq.nlargest(TOP, [*self.slowest, *ok], key=lambda e: (e["seconds"], e["source"]))
            self.largest = heapq.nlargest(TOP, [*self.largest, *ok], key=lambda e: (e["size"], e["source"]))

    def _add_ok(self, entry: dict[str, Any], measured: bool) -> None:
        metrics = entry["metrics"]
        self.ok += 1
        self.documents += entry["documents"]
        self.nodes += entry["nodes"]
        self.bytes += entry["size"]
        self.characters += entry["characters"]
        self.node_characters += metrics["characters"]["mean"] * entry["nodes"]
        if measured:
            self.nonspace += entry["nonspace"]
            self.coverage_weighted += metrics["coverage"] * entry["nonspace"]
            self.overlap_weighted += metrics["overlap"] * metrics["characters"]["mean"] * entry["nodes"]
            self.duplicates += metrics["duplicates"]
            self.coverages.append(metrics["coverage"])
        sources = self._sources_of.get(entry["sha256"])
        if sources is None:
            self._sources_of[entry["sha256"]] = entry["source"]
        elif isinstance(sources, list):
            sources.append(entry["source"])
        else:
            self._sources_of[entry["sha256"]] = [sources, entry["source"]]
        row = {
            "source": entry["source"],
            "path": entry["path"],
            "bytes": entry["size"],
            "sha256": entry["sha256"],
            "seconds": entry["seconds"],
            "documents": entry["documents"],
            "nodes": entry["nodes"],
            "metrics": metrics,
        }
        if "llm" in entry:
            row["llm"] = entry["llm"]
        self.rows.write((",\n  " if self.row_count else "  ").encode("utf-8") + self._encode(row).encode("utf-8"))
        self.row_count += 1
        if len(self.first_rows) < HTML_DOCUMENT_ROWS:
            self.first_rows.append(row)

    def same_content(self) -> list[list[str]]:
        """Groups of sources whose files have the same bytes, each sorted, sorted."""
        return sorted(sorted(group) for group in self._sources_of.values() if isinstance(group, list))

    def rows_json(self) -> Iterator[bytes]:
        """report.json's ``documents`` list, as the report's JSON writes it: one compact row a line."""
        if not self.row_count:
            yield b"[]"
            return
        yield b"[\n"
        self.rows.seek(0)
        while chunk := self.rows.read(_CHUNK):
            yield chunk
        yield b"\n ]"

    def close(self) -> None:
        self.rows.close()


def fold_inputs(out: OutputStore) -> tuple[dict[str, Any], list[dict[str, Any]], InputFold]:
    """The manifest's header, its part lines, and its input lines folded (the last line of each input)."""
    try:
        return _fold(_streamed(out))
    except _SeenTwice:
        return _fold(_whole(out))


def _fold(blocks: Iterable[list[dict[str, Any]]]) -> tuple[dict[str, Any], list[dict[str, Any]], InputFold]:
    fold = InputFold()
    header: dict[str, Any] | None = None
    parts: list[dict[str, Any]] = []
    try:
        for block in blocks:
            entries = []
            for line in block:
                kind = line.get("kind")
                if kind == "input":
                    entries.append(line)
                elif kind == "part":
                    parts.append({"part": line["part"], "rows": line["rows"], "sha256": line["sha256"]})
                elif kind == "header" and header is None:
                    header = line
            # Outputs from before --metrics was optional were all measured; the header is the manifest's first line.
            fold.add(entries, measured=bool((header or {}).get("metrics", True)))
    except BaseException:
        fold.close()
        raise
    return header or {}, parts, fold


def _streamed(out: OutputStore) -> Iterator[list[dict[str, Any]]]:
    seen: set[int] = set()
    for block in manifest_blocks(out):
        for line in block:
            if line.get("kind") == "input":
                key = hash(line["path"])
                if key in seen:
                    raise _SeenTwice
                seen.add(key)
        yield block


def _whole(out: OutputStore) -> Iterator[list[dict[str, Any]]]:
    """The manifest read at once, each input's lines but its last dropped (in the last one's place)."""
    lines = read_manifest(out)
    last = {line["path"]: index for index, line in enumerate(lines) if line.get("kind") == "input"}
    yield [line for index, line in enumerate(lines) if line.get("kind") != "input" or last[line["path"]] == index]
