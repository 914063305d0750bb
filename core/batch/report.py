"""The corpus report of a batch: ``report.json`` and ``report.html``, rebuilt from what is on disk.

Everything comes from the output folder, not from the run: the manifest gives
each input's status, timing and :class:`core.measure.metrics.ChunkMetrics` (the numbers
``chunkscope metrics FILE`` prints), the part files give every node's size and
flags. So a resumed run reports the whole corpus, and memory holds one part's
size columns and a count per size value, never the nodes.

Corpus numbers: node shares (mid-sentence, over-window, over-limit) count flags
over all nodes, exactly; coverage is weighted by each file's non-whitespace
characters, exactly; overlap is each file's overlap weighted by its node
characters (an approximation: a file's own denominator is the characters inside
any of its nodes); duplicate nodes are counted within each file, and files with the
same bytes (SHA-256) across the corpus are listed in ``same_content``. Size statistics are
exact (percentiles as ``numpy.percentile`` computes them, from counts per value).

The HTML page (:mod:`core.batch.report_html`) opens offline: plotly.js is inlined once; every
file name and reason is escaped.
"""

from __future__ import annotations

import heapq
import json
import math
from collections import Counter
from typing import Any

import numpy as np

from core.batch.storage import OutputStore

TOP = 10  # slowest and largest documents listed


class _Sizes:
    """An exact distribution of non-negative integers, held as a count per value."""

    def __init__(self) -> None:
        self.counts = np.zeros(0, dtype=np.int64)

    def add(self, counts: Any) -> None:
        """Add counts per value (``counts[v]``: how many hold ``v``)."""
        if counts is None or not len(counts):
            return
        counts = np.asarray(counts, dtype=np.int64)
        if len(counts) > len(self.counts):
            counts[: len(self.counts)] += self.counts
            self.counts = counts
        else:
            self.counts[: len(counts)] += counts

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def stats(self) -> dict[str, float]:
        """min, mean, p50, p95, max, sd: the same as :meth:`core.measure.metrics.SizeStats.of` on the values."""
        n = self.n
        if n == 0:
            return {"min": 0.0, "mean": 0.0, "p50": 0.0, "p95": 0.0, "max": 0.0, "sd": 0.0}
        values = np.arange(len(self.counts), dtype=float)
        mean = float((values * self.counts).sum() / n)
        present = np.nonzero(self.counts)[0]
        return {
            "min": float(present[0]),
            "mean": mean,
            "p50": self.percentile(50),
            "p95": self.percentile(95),
            "max": float(present[-1]),
            "sd": float(math.sqrt(((values - mean) ** 2 * self.counts).sum() / n)),
        }

    def percentile(self, q: float) -> float:
        # numpy's default ("linear"): between the sorted values at floor and ceil of q/100 * (n - 1).
        cumulative = np.cumsum(self.counts)
        position = q / 100 * (self.n - 1)
        low, high = math.floor(position), math.ceil(position)

        def at(k: int) -> float:
            return float(np.searchsorted(cumulative, k, side="right"))

        return at(low) + (at(high) - at(low)) * (position - low)

    def above(self, limit: int) -> int:
        """How many values exceed ``limit``."""
        return int(self.counts[limit + 1 :].sum()) if limit + 1 < len(self.counts) else 0

    def histogram(self, bins: int = 40) -> tuple[list[float], list[int]]:
        """Bin starts and counts over [0, max], at most ``bins`` bins of whole units."""
        if self.n == 0:
            return [], []
        top = len(self.counts)
        width = max(1, math.ceil(top / bins))
        padded = np.zeros(width * math.ceil(top / width), dtype=np.int64)
        padded[:top] = self.counts
        return [float(i * width) for i in range(len(padded) // width)], padded.reshape(-1, width).sum(axis=1).tolist()


def build_report(
    out: OutputStore, config: Any, run: dict[str, Any], known: tuple[set[str], Any] | None = None
) -> dict[str, Any]:
    """The report's data (what report.json holds), from the manifest and the parts in ``out``.

    ``known``: parts whose sizes are already counted (their names, and a :class:`~core.batch.part_sizes.PartSizes`
    of them: a run's own parts, from its shards' records); the other parts are read.
    """
    from core.batch.dataset import NODES
    from core.batch.manifest import read_manifest
    from core.batch.part_sizes import PartSizes
    from core.measure.window import DEFAULT_MAX_SEQ_LENGTH, SPECIAL_TOKENS

    splitter = config.splitter
    lines = read_manifest(out)
    # The last line per input counts (a failed input retried by --resume has two).
    entries: dict[str, dict[str, Any]] = {}
    parts: list[dict[str, Any]] = []
    header = next((line for line in lines if line.get("kind") == "header"), {})
    ids = header.get("ids", "")
    # Outputs from before --metrics was optional were all measured.
    measured = bool(header.get("metrics", True))
    for line in lines:
        if line.get("kind") == "input":
            entries.pop(line["path"], None)
            entries[line["path"]] = line
        elif line.get("kind") == "part":
            parts.append({"part": line["part"], "rows": line["rows"], "sha256": line["sha256"]})

    counted_parts, sizes = known if known is not None else (set(), PartSizes())
    read = PartSizes()
    columns = ["characters", "tokens", *(["embed_tokens", "flags"] if measured else [])]
    for part in parts:
        if part["part"] in counted_parts:
            continue
        import pyarrow.parquet as pq

        # ParquetFile, not read_table: read_table's dataset layer imports pandas (0.26 s at the end of a run).
        with out.open_input_file(NODES, part["part"]) as handle:
            read.add_table(pq.ParquetFile(handle).read(columns=columns))
    characters, tokens, embed_tokens = _Sizes(), _Sizes(), _Sizes()
    flags: Counter[str] = Counter()
    for each in (sizes, read):
        characters.add(each.counts.get("characters"))
        tokens.add(each.counts.get("tokens"))
        if measured:
            embed_tokens.add(each.counts.get("embed_tokens"))
            flags.update(each.flags)

    ok = [entry for entry in entries.values() if entry["status"] == "ok"]
    failed = [entry for entry in entries.values() if entry["status"] != "ok"]
    nodes = sum(entry["nodes"] for entry in ok)
    nonspace = sum(entry["nonspace"] for entry in ok) if measured else 0
    node_characters = sum(entry["metrics"]["characters"]["mean"] * entry["nodes"] for entry in ok)
    limit = splitter.size_limit

    by_content: dict[str, list[str]] = {}
    for entry in ok:
        by_content.setdefault(entry["sha256"], []).append(entry["source"])
    same_content = sorted(sorted(group) for group in by_content.values() if len(group) > 1)
    def share(flag: str) -> float | None:
        if not measured:
            return None  # not measured: no flags (--metrics)
        return flags[flag] / nodes if nodes else 0.0

    corpus = {
        "files": len(entries),
        "files_ok": len(ok),
        "files_failed": len(failed),
        "documents": sum(entry["documents"] for entry in ok),
        "nodes": nodes,
        "bytes": sum(entry["size"] for entry in ok),
        "characters_in_documents": sum(entry["characters"] for entry in ok),
        "characters": characters.stats(),
        "tokens": tokens.stats(),
        "embed_tokens": embed_tokens.stats() if measured else None,
        "coverage": _coverage(ok, nonspace) if measured else None,
        "overlap": _overlap(ok, node_characters) if measured else None,
        "mid_sentence": share("mid-sentence"),
        "over_window": share("over-window"),
        # The sizes are always there: nodes over the splitter's limit are counted from them.
        "over_limit": tokens.above(limit) / nodes if nodes and limit is not None else 0.0,
        "duplicates_within_files": sum(entry["metrics"]["duplicates"] for entry in ok) if measured else None,
        # Files whose bytes (SHA-256) another file also has: counted here, as each keeps ids of its own.
        "files_sharing_content": sum(len(group) for group in same_content),
        "shared_contents": len(same_content),
        "flags": dict(sorted(flags.items())),
        "processing_seconds": round(sum(entry["seconds"] for entry in entries.values()), 3),
    }
    run = dict(run)
    seconds = run.get("seconds") or 0
    # A run that processed nothing (a resume with nothing left) has no rate: None, not 0.00 MB/s.
    processed = run.get("processed", 0)
    run["mb_per_s"] = round(run.get("bytes", 0) / 1e6 / seconds, 3) if seconds and processed else None
    run["files_per_s"] = round(processed / seconds, 3) if seconds and processed else None

    def brief(entry: dict[str, Any]) -> dict[str, Any]:
        return {"source": entry["source"], "seconds": entry["seconds"], "bytes": entry["size"], "nodes": entry["nodes"]}

    return {
        "chunkscope_batch_report": 1,
        "complete": bool(run.get("complete", True)),
        "metrics": measured,  # --metrics: embed_tokens, flags and each file's chunk metrics were measured
        "run": run,
        "ids": ids,  # "path": ids hash the text and the path inside the input root; "content": the text alone
        "config_key": config.key(),
        "config": config.to_dict(),
        "splitter": splitter.name,
        "size_unit": splitter.size_unit if isinstance(splitter.size_unit, str) else "custom",
        "size_limit": splitter.size_limit,
        "window_tokens": DEFAULT_MAX_SEQ_LENGTH - SPECIAL_TOKENS,
        "corpus": corpus,
        "histograms": {
            "tokens": tokens.histogram(),
            "embed_tokens": embed_tokens.histogram() if measured else None,
            "coverage": _coverage_histogram(ok) if measured else None,
        },
        "slowest": [brief(e) for e in heapq.nlargest(TOP, ok, key=lambda e: (e["seconds"], e["source"]))],
        "largest": [brief(e) for e in heapq.nlargest(TOP, ok, key=lambda e: (e["size"], e["source"]))],
        "failed": [{"source": e["source"], "reason": e["reason"]} for e in failed],
        "same_content": same_content,
        "parts": parts,
        "documents": [
            {
                "source": e["source"],
                "path": e["path"],
                "bytes": e["size"],
                "sha256": e["sha256"],
                "seconds": e["seconds"],
                "documents": e["documents"],
                "nodes": e["nodes"],
                "metrics": e["metrics"],
            }
            for e in ok
        ],
    }


def _coverage(ok: list[dict[str, Any]], nonspace: int) -> float:
    return sum(e["metrics"]["coverage"] * e["nonspace"] for e in ok) / nonspace if nonspace else 0.0


def _overlap(ok: list[dict[str, Any]], node_characters: float) -> float:
    if not node_characters:
        return 0.0
    return sum(e["metrics"]["overlap"] * e["metrics"]["characters"]["mean"] * e["nodes"] for e in ok) / node_characters


def _coverage_histogram(ok: list[dict[str, Any]]) -> tuple[list[float], list[int]]:
    counts = np.histogram([entry["metrics"]["coverage"] for entry in ok], bins=20, range=(0, 1))[0]
    return [i / 20 for i in range(20)], counts.tolist()


def write_report(
    out: OutputStore, config: Any, run: dict[str, Any], known: tuple[set[str], Any] | None = None
) -> dict[str, Any]:
    """Write report.json and report.html in ``out``; returns the report's data (``known``: see build_report)."""
    report = build_report(out, config, run, known)
    out.write_bytes(report_json(report).encode("utf-8"), "report.json")
    from core.batch.report_html import report_html_bytes

    out.write_bytes(report_html_bytes(report), "report.html")
    return report


def report_json(report: dict[str, Any]) -> str:
    """report.json's text: indented, except that a list (documents, failures) has one compact item a line.

    Indenting every item runs json's pure-Python encoder: 0.26 s for 1,383 documents, after the workers are done.
    """

    encode = json.JSONEncoder(ensure_ascii=False, default=str).encode  # one encoder for every row

    def value(item: Any) -> str:
        if isinstance(item, list) and item:
            rows = ",\n".join("  " + encode(row) for row in item)
            return "[\n" + rows + "\n ]"
        return json.dumps(item, indent=1, ensure_ascii=False, default=str).replace("\n", "\n ")

    fields = ",\n".join(f" {json.dumps(key)}: {value(item)}" for key, item in report.items())
    return "{\n" + fields + "\n}\n"
