"""Build the benchmark corpus offline, deterministically, from text that ships on this machine.

Sources, in this order (each sorted by path, so the same machine always builds the same bytes):

1. the long description (``.dist-info/METADATA`` body) of every wheel in the local
   PyPI file store (``/opt/pypi/files`` here; ``--wheels DIR`` elsewhere) and in the
   project venv's site-packages: mostly project READMEs, in Markdown or reStructuredText;
2. the ``.md`` / ``.rst`` / ``.txt`` documentation files inside those wheels;
3. README / ``*.md`` / ``*.txt`` files under Debian's ``/usr/share/doc`` (gzip or plain),
   leaving out changelogs and copyright files.

A document counts as Markdown when its METADATA declares ``text/markdown`` or
its file name ends in ``.md``, and goes into ``corpus.md`` only if its code
fences are balanced. A file is kept only if it reads as English prose: at least 2,000 characters, at
least 80% letters and whitespace, and at least 12% of its words among the most
common English function words (so code listings, tables of numbers, changelogs
and non-English READMEs fall out). Duplicates (same normalized text) are kept once.

Outputs in ``benchmarks/data/`` (git-ignored: third-party text is never committed):

- ``corpus.txt``   every kept document, separated by blank lines, up to ``--mb`` MB (default 20);
- ``corpus.md``    the kept Markdown documents only (the Markdown pairs run on it);
- ``corpus.pdf``   a 300-page PDF (fpdf2, Helvetica) typeset from the start of ``corpus.txt``;
- ``files.json``   the same documents one by one (``text``: all, ``markdown``: the Markdown ones), up to the
  same size: the per-file corpus, what users load;
- ``manifest.json`` sizes, SHA-256 of each output, and how many documents each source gave.

Run: ``.venv/bin/python benchmarks/corpus.py`` (about a minute; skips outputs that exist unless ``--force``).
"""

from __future__ import annotations

import argparse
import email.parser
import gzip
import hashlib
import json
import re
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
WHEELS = Path("/opt/pypi/files")
DEBIAN_DOCS = Path("/usr/share/doc")
MB = 1_000_000
PDF_PAGES = 300

FUNCTION_WORDS = frozenset(
    "the of and to a in is that for it as with was on be by this are or from at an not which "
    "can you your we if will have has but all more one their they its also these use used when".split()
)
_WORD = re.compile(r"[A-Za-z']+")
_FENCE = re.compile(r"(?m)^ {0,3}(```|~~~)")


def balanced_fences(text: str) -> bool:
    """Every code fence is closed (an open one would swallow the rest of the concatenated corpus)."""
    return len(_FENCE.findall(text)) % 2 == 0


def english_prose(text: str) -> bool:
    """True for text that reads as English prose (see the module docstring for the thresholds)."""
    if len(text) < 2000:
        return False
    letters = sum(1 for ch in text if ch.isalpha() or ch.isspace())
    if letters < 0.80 * len(text):
        return False
    words = _WORD.findall(text.lower())
    if len(words) < 300:
        return False
    return sum(1 for w in words if w in FUNCTION_WORDS) >= 0.12 * len(words)


def _metadata_body(raw: bytes) -> tuple[str, bool] | None:
    """The long description of a METADATA file and whether it is Markdown."""
    message = email.parser.BytesParser().parsebytes(raw)
    body = message.get_payload()
    if not isinstance(body, str) or not body.strip():
        body = message.get("Description", "")
    if not body:
        return None
    content_type = (message.get("Description-Content-Type") or "").lower()
    return body, "markdown" in content_type


def wheel_documents(wheel_dirs: list[Path]) -> Iterator[tuple[str, str, bool]]:
    """(source, text, is_markdown) for every README and doc file in the wheels."""
    for directory in wheel_dirs:
        for path in sorted(directory.glob("*.whl")):
            try:
                archive = zipfile.ZipFile(path)
            except (zipfile.BadZipFile, OSError):
                continue
            with archive:
                for info in sorted(archive.infolist(), key=lambda i: i.filename):
                    name = info.filename
                    if info.file_size > 2 * MB:
                        continue
                    if name.endswith(".dist-info/METADATA"):
                        parsed = _metadata_body(archive.read(info))
                        if parsed:
                            yield f"{path.name}:{name}", parsed[0], parsed[1]
                    elif name.lower().endswith((".md", ".rst", ".txt")) and "LICENSE" not in name.upper():
                        text = archive.read(info).decode("utf-8", "replace")
                        yield f"{path.name}:{name}", text, name.lower().endswith(".md")


def site_package_documents() -> Iterator[tuple[str, str, bool]]:
    site = Path(sysconfig.get_paths()["purelib"])
    for path in sorted(site.glob("*.dist-info/METADATA")):
        parsed = _metadata_body(path.read_bytes())
        if parsed:
            yield str(path), parsed[0], parsed[1]


def debian_documents() -> Iterator[tuple[str, str, bool]]:
    if not DEBIAN_DOCS.is_dir():
        return
    for path in sorted(DEBIAN_DOCS.rglob("*")):
        lower = path.name.lower()
        if not path.is_file() or "changelog" in lower or "copyright" in lower or "news" in lower:
            continue
        stem = lower[:-3] if lower.endswith(".gz") else lower
        if not (stem.startswith("readme") or stem.endswith((".md", ".txt"))):
            continue
        try:
            raw = gzip.decompress(path.read_bytes()) if lower.endswith(".gz") else path.read_bytes()
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        yield str(path), raw.decode("utf-8", "replace"), stem.endswith(".md")


def build_text(limit_bytes: int, wheel_dirs: list[Path]) -> tuple[str, str, dict[str, int], dict[str, list[str]]]:
    """The corpus and its Markdown part, how many documents each source gave, and the documents one by one."""
    seen: set[str] = set()
    parts: list[str] = []
    markdown_parts: list[str] = []
    size = 0
    counts: dict[str, int] = {"wheels": 0, "site-packages": 0, "debian": 0}
    sources = [("wheels", wheel_documents(wheel_dirs)), ("site-packages", site_package_documents()), ("debian", debian_documents())]
    for label, documents in sources:
        for _, text, is_markdown in documents:
            if size >= limit_bytes:
                break
            text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
            digest = hashlib.sha1(" ".join(text.split()).encode()).hexdigest()
            if digest in seen or not english_prose(text):
                continue
            seen.add(digest)
            parts.append(text)
            if is_markdown and balanced_fences(text):
                markdown_parts.append(text)
            size += len(text.encode()) + 2
            counts[label] += 1
    documents = {"text": parts, "markdown": markdown_parts}
    return "\n\n".join(parts) + "\n", "\n\n".join(markdown_parts) + "\n", counts, documents


def build_pdf(text: str, path: Path, pages: int = PDF_PAGES) -> None:
    """Typeset paragraphs of ``text`` into exactly ``pages`` pages (Helvetica, Latin-1)."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    # A fixed date, so the same text always gives the same bytes.
    pdf.set_creation_date(datetime(2025, 1, 1, tzinfo=UTC))
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.set_font("Helvetica", size=10)
    pdf.add_page()
    for paragraph in text.split("\n\n"):
        # At most ~1/3 of a page, so a paragraph begun on page N-1 never spills past page N.
        paragraph = " ".join(paragraph.split())[:1500]
        if not paragraph:
            continue
        # Core PDF fonts are Latin-1; other characters become '?'.
        paragraph = paragraph.encode("latin-1", "replace").decode("latin-1")
        pdf.multi_cell(0, 5, paragraph)
        pdf.ln(2)
        if pdf.page_no() >= pages:
            break
    if pdf.page_no() != pages:
        raise SystemExit(f"corpus.pdf: the text filled {pdf.page_no()} pages, not {pages}")
    pdf.output(str(path))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=20, help="size of corpus.txt in MB (default 20)")
    parser.add_argument("--wheels", type=Path, action="append", help="a directory of wheels (default /opt/pypi/files)")
    parser.add_argument("--force", action="store_true", help="rebuild outputs that already exist")
    args = parser.parse_args(argv)
    DATA.mkdir(parents=True, exist_ok=True)
    wheel_dirs = [d for d in (args.wheels or [WHEELS]) if d.is_dir()]
    corpus, markdown = DATA / "corpus.txt", DATA / "corpus.md"
    files = DATA / "files.json"
    counts: dict[str, int] = {}
    if args.force or not corpus.exists() or not markdown.exists() or not files.exists():
        text, markdown_text, found, documents = build_text(int(args.mb * MB), wheel_dirs)
        if args.force or not corpus.exists() or not markdown.exists():
            counts = found
            corpus.write_text(text, encoding="utf-8")
            markdown.write_text(markdown_text, encoding="utf-8")
        elif corpus.read_text(encoding="utf-8") != text:
            # The machine's files changed since corpus.txt was built: the per-file corpus is still
            # whole documents, but no longer the same bytes as corpus.txt (the manifest says so).
            print("files.json: the documents found now differ from corpus.txt's (--force rebuilds both)", file=sys.stderr)
        files.write_text(json.dumps(documents, ensure_ascii=False), encoding="utf-8")
    pdf = DATA / "corpus.pdf"
    if args.force or not pdf.exists():
        build_pdf(corpus.read_text(encoding="utf-8")[: 3 * MB], pdf)
    previous = json.loads((DATA / "manifest.json").read_text()) if (DATA / "manifest.json").exists() else {}
    manifest = {
        "sources": [str(d) for d in wheel_dirs] + ["venv site-packages", str(DEBIAN_DOCS)],
        "documents_per_source": counts or previous.get("documents_per_source", {}),
        "files": {p.name: {"bytes": p.stat().st_size, "sha256": sha256(p)} for p in (corpus, markdown, pdf, files)},
    }
    (DATA / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    json.dump(manifest, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
