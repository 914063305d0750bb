"""The corpus report of a batch: ``report.json`` and ``report.html``, rebuilt from what is on disk.

Everything comes from the output folder, not from the run: the manifest gives
each input's status, timing and :class:`core.measure.metrics.ChunkMetrics` (the numbers
``chunkscope metrics FILE`` prints), the part files give every node's size and
flags. So a resumed run reports the whole corpus, and memory holds one part's
size columns and a count per size value, never the nodes; the manifest is read a
block at a time and report.json's rows spooled (:mod:`core.batch.report_inputs`),
never all the inputs at once.

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

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np

from core.batch.report_inputs import InputFold, fold_inputs
from core.batch.storage import OutputStore


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
) -> tuple[dict[str, Any], InputFold]:
    """The report's data but its ``documents`` rows, from the manifest and the parts in ``out``; and the fold of the
    inputs that holds the rows (close it).

    ``known``: parts whose sizes are already counted (their names, and a :class:`~core.batch.part_sizes.PartSizes`
    of them: a run's own parts, from its shards' records); the other parts are read.
    """
    from core.measure.window import DEFAULT_MAX_SEQ_LENGTH, SPECIAL_TOKENS

    splitter = config.splitter
    header, parts, inputs = fold_inputs(out)
    ids = header.get("ids", "")
    # Outputs from before --metrics was optional were all measured.
    measured = bool(header.get("metrics", True))
    sizes = _CorpusSizes.of(out, parts, known, measured)
    same_content = inputs.same_content()
    coverage_counts = np.histogram(inputs.coverages, bins=20, range=(0, 1))[0]
    report = {
        "chunkscope_batch_report": 1,
        "complete": bool(run.get("complete", True)),
        "metrics": measured,  # --metrics: embed_tokens, flags and each file's chunk metrics were measured
        "run": _with_rates(run),
        "ids": ids,  # "path": ids hash the text and the path inside the input root; "content": the text alone
        "config_key": config.key(),
        "config": config.to_dict(),
        "splitter": splitter.name,
        "size_unit": splitter.size_unit if isinstance(splitter.size_unit, str) else "custom",
        "size_limit": splitter.size_limit,
        "window_tokens": DEFAULT_MAX_SEQ_LENGTH - SPECIAL_TOKENS,
        "corpus": _corpus(inputs, sizes, splitter.size_limit, same_content),
        "histograms": {
            "tokens": sizes.tokens.histogram(),
            "embed_tokens": sizes.embed_tokens.histogram() if measured else None,
            "coverage": ([i / 20 for i in range(20)], coverage_counts.tolist()) if measured else None,
        },
        "slowest": [_brief(e) for e in inputs.slowest],
        "largest": [_brief(e) for e in inputs.largest],
        "failed": inputs.failed,
        "same_content": same_content,
        "parts": parts,
        # The LLM extractors' requests, cached replies and tokens over every input the manifest records (a resumed
        # run's kept files with what they spent then); None when the configuration has none.
        "llm": _llm_spend(inputs.llm),
    }
    return report, inputs


class _CorpusSizes(NamedTuple):
    """Every node's sizes over the corpus, as distributions, and how many nodes carry each flag."""

    measured: bool  # --metrics: embed_tokens and flags were measured
    characters: _Sizes
    tokens: _Sizes
    embed_tokens: _Sizes
    flags: Counter[str]

    @classmethod
    def of(
        cls, out: OutputStore, parts: list[dict[str, Any]], known: tuple[set[str], Any] | None, measured: bool
    ) -> _CorpusSizes:
        """From ``known`` (parts already counted) and the size columns of every other part, read from ``out``."""
        from core.batch.dataset import NODES
        from core.batch.part_sizes import PartSizes

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
        totals = cls(measured, _Sizes(), _Sizes(), _Sizes(), Counter())
        for each in (sizes, read):
            totals.characters.add(each.counts.get("characters"))
            totals.tokens.add(each.counts.get("tokens"))
            if measured:
                totals.embed_tokens.add(each.counts.get("embed_tokens"))
                totals.flags.update(each.flags)
        return totals


def _corpus(inputs: InputFold, sizes: _CorpusSizes, limit: int | None, same_content: list[Any]) -> dict[str, Any]:
    """The report's corpus numbers (the None ones were not measured: --metrics)."""
    nodes, measured, flags = inputs.nodes, sizes.measured, sizes.flags

    def share(flag: str) -> float | None:
        if not measured:
            return None  # not measured: no flags (--metrics)
        return flags[flag] / nodes if nodes else 0.0

    nonspace, node_characters = inputs.nonspace, inputs.node_characters
    return {
        "files": inputs.files,
        "files_ok": inputs.ok,
        "files_failed": len(inputs.failed),
        "documents": inputs.documents,
        "nodes": nodes,
        "bytes": inputs.bytes,
        "characters_in_documents": inputs.characters,
        "characters": sizes.characters.stats(),
        "tokens": sizes.tokens.stats(),
        "embed_tokens": sizes.embed_tokens.stats() if measured else None,
        "coverage": (inputs.coverage_weighted / nonspace if nonspace else 0.0) if measured else None,
        "overlap": (inputs.overlap_weighted / node_characters if node_characters else 0.0) if measured else None,
        "mid_sentence": share("mid-sentence"),
        "over_window": share("over-window"),
        # The sizes are always there: nodes over the splitter's limit are counted from them.
        "over_limit": sizes.tokens.above(limit) / nodes if nodes and limit is not None else 0.0,
        "duplicates_within_files": inputs.duplicates if measured else None,
        # Files whose bytes (SHA-256) another file also has: counted here, as each keeps ids of its own.
        "files_sharing_content": sum(len(group) for group in same_content),
        "shared_contents": len(same_content),
        "flags": dict(sorted(flags.items())),
        "processing_seconds": round(inputs.seconds, 3),
    }


def _llm_spend(spend: dict[str, int] | None) -> dict[str, int] | None:
    if spend is None:
        return None
    from core.extractors.llm import SPEND_KEYS

    return {key: spend.get(key, 0) for key in SPEND_KEYS}


def _with_rates(run: dict[str, Any]) -> dict[str, Any]:
    """``run`` with its rates: MB and files per second."""
    run = dict(run)
    seconds = run.get("seconds") or 0
    # A run that processed nothing (a resume with nothing left) has no rate: None, not 0.00 MB/s.
    processed = run.get("processed", 0)
    run["mb_per_s"] = round(run.get("bytes", 0) / 1e6 / seconds, 3) if seconds and processed else None
    run["files_per_s"] = round(processed / seconds, 3) if seconds and processed else None
    return run


def _brief(entry: dict[str, Any]) -> dict[str, Any]:
    return {"source": entry["source"], "seconds": entry["seconds"], "bytes": entry["size"], "nodes": entry["nodes"]}


def write_report(
    out: OutputStore, config: Any, run: dict[str, Any], known: tuple[set[str], Any] | None = None
) -> dict[str, Any]:
    """Write report.json and report.html in ``out``; returns the report's data but its ``documents`` rows, which
    report.json holds (``known``: see build_report). The rows go from the manifest to report.json through a spool:
    the report of a corpus of millions of files never holds them all."""
    from core.batch.report_html import report_html_chunks

    report, inputs = build_report(out, config, run, known)
    try:
        out.write_chunks(report_json_chunks(report, inputs.rows_json()), "report.json")
        out.write_chunks(report_html_chunks({**report, "documents": inputs.first_rows}), "report.html")
    finally:
        inputs.close()
    return report


def report_json_chunks(report: dict[str, Any], documents: Iterable[bytes]) -> Iterator[bytes]:
    """report.json's bytes: ``report``'s fields indented, except that a list (failed, parts, ...) has one compact
    item a line, then ``documents`` (its JSON, as chunks), last.

    Indenting every item runs json's pure-Python encoder: 0.26 s for 1,383 documents, after the workers are done.
    """

    encode = json.JSONEncoder(ensure_ascii=False, default=str).encode  # one encoder for every row

    def value(item: Any) -> str:
        if isinstance(item, list) and item:
            rows = ",\n".join("  " + encode(row) for row in item)
            return "[\n" + rows + "\n ]"
        return json.dumps(item, indent=1, ensure_ascii=False, default=str).replace("\n", "\n ")

    fields = "".join(f" {json.dumps(key)}: {value(item)},\n" for key, item in report.items())
    yield ("{\n" + fields + ' "documents": ').encode("utf-8")
    yield from documents
    yield b"\n}\n"

