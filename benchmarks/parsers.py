"""Pages per second of each PDF parser: pypdf, pdfplumber (structure), and Tesseract's OCR.

Measured on benchmarks/data/corpus.pdf (300 text pages; build it with
``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/corpus.py``) and on
sample_docs/scanned_handbook_page.pdf (one page with no text layer, so 'auto' OCR
reads it). Each timing is the whole ``core.loaders.load_bytes`` call, the best
of ``--repeat`` runs, on one process (pypdf forks a second one for 24 pages and
more, as the app does).

Usage (from the repository root)::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/parsers.py [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.loaders import load_bytes  # noqa: E402
from core.loaders.pdf_ocr import ocr_unavailable_reason  # noqa: E402

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per parser; the best counts")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
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
