"""The corpus in parts of different kinds, so a verdict says on which kind of text a lead holds.

Built at run time from text on this machine (never committed: ``benchmarks/data/`` is git-ignored),
each part a list of whole documents in a fixed order (sorted by path):

- ``readme``: the per-file corpus of :mod:`corpus` (``files.json``'s text documents): project
  READMEs and docs from wheels and Debian, mostly ASCII English in Markdown and reST;
- ``rest``: every reStructuredText file on the machine that holds a run of blank lines
  (two or more in a row, as Python's and Sphinx projects' docs put before a section): the
  installed packages', the standard library's and ``/usr/share``'s;
- ``non_ascii``: prose in other scripts and accents: Debian's translated manual pages
  (``/usr/share/man/<language>/``, roff markup dropped) and GnuPG's translated help texts;
- ``large_file``: one large real document, the largest ``.txt``/``.rst``/``.md`` file of
  1-10 MB on the machine that reads as prose (here Vim's ``version8.txt``, 1.6 MB).

Each part is cut at ``--mb`` MB (whole documents). ``parts.json`` holds the documents,
``parts_manifest.json`` where they came from, their sizes and SHA-256, and the share of
non-ASCII letters and the blank-line runs each part holds (what the verdicts depend on).

Run: ``.venv/bin/python benchmarks/corpus_parts.py`` (run.py builds it when missing).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

from corpus import DATA, MB

PARTS = DATA / "parts.json"
MANIFEST = DATA / "parts_manifest.json"
KINDS = ("readme", "rest", "non_ascii", "large_file")
TEXT_ROOTS = (
    Path(sysconfig.get_paths()["purelib"]),  # the project venv's packages
    Path(sysconfig.get_paths()["stdlib"]),
    Path("/usr/lib/python3"),
    Path("/usr/share"),
)
MAN_LANGUAGES = ("de", "fr", "es", "it", "pt", "pt_BR", "pl", "cs", "ru", "uk", "ja", "ko", "zh_CN", "zh_TW")
_BLANK_RUN = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
# Roff: a request line, font and character escapes.
_ROFF_TEXT_REQUEST = re.compile(r"^\.(?:B|I|BR|RB|IR|RI|BI|IB|SM|SH|SS)\s+(.*)$")
_ROFF_PARAGRAPH = re.compile(r"^\.(?:PP|P|LP|TP|IP|sp|br|SH|SS)\b")
_ROFF_UNICODE = re.compile(r"\\\[u([0-9A-Fa-f]{4,6})\]")  # \[u00E9]: the character itself
_ROFF_ESCAPE = re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)|\\\(..|\\\[[^\]]*\]|\\[&|^%]|\\s[-+]?\d")


def _files(roots: tuple[Path, ...], suffixes: tuple[str, ...]) -> Iterator[Path]:
    seen: set[Path] = set()
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix.lower() in suffixes and path.is_file():
                real = path.resolve()
                if real not in seen:
                    seen.add(real)
                    yield path


def _read(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8").replace("\r\n", "\n")
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile):
        return None


def rest_documents() -> Iterator[tuple[str, str]]:
    """reST files with at least one run of blank lines, and at least 2,000 characters."""
    for path in _files(TEXT_ROOTS, (".rst",)):
        text = _read(path)
        if text and len(text) >= 2000 and _BLANK_RUN.search(text):
            yield str(path), text


def roff_to_text(source: str) -> str:
    """The words of a manual page: text lines and the text of font requests, paragraphs as blank lines."""
    lines: list[str] = []
    for line in source.splitlines():
        if line.startswith((".", "'")):
            request = _ROFF_TEXT_REQUEST.match(line)
            if _ROFF_PARAGRAPH.match(line):
                lines.append("")
            if request:
                lines.append(request.group(1).replace('"', ""))
            continue
        lines.append(line)
    text = _ROFF_UNICODE.sub(_roff_character, "\n".join(lines))
    text = _ROFF_ESCAPE.sub("", text).replace("\\-", "-").replace("\\e", "\\")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _roff_character(match: re.Match[str]) -> str:
    code = int(match.group(1), 16)
    return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else ""


def non_ascii_documents() -> Iterator[tuple[str, str]]:
    """Translated manual pages and GnuPG help texts whose letters are at least 3% non-ASCII."""
    man = Path("/usr/share/man")
    candidates = [(p, True) for lang in MAN_LANGUAGES for p in _files((man / lang,), (".gz",))]
    candidates += [(p, False) for p in _files((Path("/usr/share/gnupg"),), (".txt",)) if p.name != "help.txt"]
    for path, is_roff in candidates:
        text = _read(path)
        if not text:
            continue
        text = roff_to_text(text) if is_roff else text
        letters = [ch for ch in text if ch.isalpha()]
        if len(text) >= 2000 and letters and sum(ord(ch) > 127 for ch in letters) >= 0.03 * len(letters):
            yield str(path), text


def large_file() -> Iterator[tuple[str, str]]:
    """The largest .txt/.rst/.md file of 1-10 MB that reads as prose (80% letters and whitespace)."""
    sized = sorted(
        ((p.stat().st_size, str(p)) for p in _files(TEXT_ROOTS, (".txt", ".rst", ".md")) if MB <= p.stat().st_size <= 10 * MB),
        key=lambda item: (-item[0], item[1]),
    )
    for _, path in sized:
        text = _read(Path(path))
        if text and sum(ch.isalpha() or ch.isspace() for ch in text) >= 0.8 * len(text):
            yield path, text
            return


def part_stats(documents: list[str]) -> dict:
    text = "\n\n".join(documents)
    letters = sum(ch.isalpha() for ch in text)
    return {
        "documents": len(documents),
        "bytes": len(text.encode("utf-8")),
        "non_ascii_letters": sum(ch.isalpha() and ord(ch) > 127 for ch in text) / max(letters, 1),
        "blank_line_runs": len(_BLANK_RUN.findall(text)),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }


def build(limit_mb: float) -> tuple[dict[str, list[str]], dict]:
    readme = json.loads((DATA / "files.json").read_text(encoding="utf-8"))["text"]
    sources = {
        "readme": ((f"files.json #{i}", text) for i, text in enumerate(readme)),
        "rest": rest_documents(),
        "non_ascii": non_ascii_documents(),
        "large_file": large_file(),
    }
    parts: dict[str, list[str]] = {}
    manifest: dict[str, dict] = {}
    for kind in KINDS:
        documents, paths, size = [], [], 0
        for path, text in sources[kind]:
            if size >= limit_mb * MB:
                break
            documents.append(text)
            paths.append(path)
            size += len(text.encode("utf-8"))
        parts[kind] = documents
        manifest[kind] = {**part_stats(documents), "first_sources": paths[:5]}
    return parts, manifest


def read_part(kind: str) -> list[str]:
    """The documents of one corpus part (built first if missing)."""
    if not PARTS.exists():
        main([])
    return json.loads(PARTS.read_text(encoding="utf-8"))[kind]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=2.0, help="size of each part in MB (whole documents; default 2)")
    args = parser.parse_args(argv)
    if not (DATA / "files.json").exists():
        import corpus

        corpus.main([])
    parts, manifest = build(args.mb)
    empty = [kind for kind, documents in parts.items() if not documents]
    if empty:
        raise SystemExit(f"corpus_parts: no text found on this machine for {', '.join(empty)}")
    PARTS.write_text(json.dumps(parts, ensure_ascii=False), encoding="utf-8")
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n")
    json.dump(manifest, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
