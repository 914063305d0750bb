"""Validate sample_docs/queries.json against the sample documents.

Every entry must have a non-empty query, name a document that exists in
sample_docs/, and list excerpts that each occur exactly once, character for
character, in that document's raw text and are 60 to 300 characters long.

Usage (from the repository root)::

    python scripts/check_queries.py [QUERIES_JSON]

Exits with status 0 when all checks pass and 1 otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_docs"
DEFAULT_QUERIES = SAMPLE_DIR / "queries.json"
# Only documents whose loaded text equals the raw file text may be referenced.
ALLOWED_DOCS = {"chunking_guide.md", "release_notes.txt"}
MIN_LEN, MAX_LEN = 60, 300


def check(queries_path: Path) -> list[str]:
    """Return a list of problems found in ``queries_path`` (empty if valid)."""
    problems: list[str] = []
    entries = json.loads(queries_path.read_text(encoding="utf-8"))
    if not isinstance(entries, list) or not entries:
        return ["queries file must contain a non-empty JSON list"]

    texts: dict[str, str] = {}
    for i, entry in enumerate(entries):
        label = f"entry {i}"
        if not isinstance(entry, dict):
            problems.append(f"{label}: not an object")
            continue
        if not str(entry.get("query", "")).strip():
            problems.append(f"{label}: empty query")
        doc = entry.get("doc")
        if doc not in ALLOWED_DOCS:
            problems.append(f"{label}: doc {doc!r} is not one of {sorted(ALLOWED_DOCS)}")
            continue
        if doc not in texts:
            path = SAMPLE_DIR / doc
            if not path.is_file():
                problems.append(f"{label}: {path} does not exist")
                continue
            texts[doc] = path.read_text(encoding="utf-8")
        excerpts = entry.get("excerpts")
        if not isinstance(excerpts, list) or not excerpts:
            problems.append(f"{label}: excerpts must be a non-empty list")
            continue
        for j, excerpt in enumerate(excerpts):
            where = f"{label} excerpt {j}"
            if not isinstance(excerpt, str):
                problems.append(f"{where}: not a string")
                continue
            if not MIN_LEN <= len(excerpt) <= MAX_LEN:
                problems.append(f"{where}: length {len(excerpt)} outside {MIN_LEN}-{MAX_LEN}")
            count = texts[doc].count(excerpt)
            if count != 1:
                problems.append(f"{where}: found {count} times in {doc}, expected exactly 1")
    return problems


def main(argv: list[str]) -> int:
    queries_path = Path(argv[1]) if len(argv) > 1 else DEFAULT_QUERIES
    problems = check(queries_path)
    if problems:
        for problem in problems:
            print(f"FAIL {problem}")
        return 1
    entries = json.loads(queries_path.read_text(encoding="utf-8"))
    n_excerpts = sum(len(e["excerpts"]) for e in entries)
    print(f"OK: {len(entries)} queries, {n_excerpts} excerpts, all found exactly once")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
