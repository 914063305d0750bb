"""Third-party test files for the parser benchmark, fetched at run time from source distributions on PyPI.

The sdists of pypdf, python-docx, python-pptx and pdfplumber carry the PDFs,
DOCX and PPTX files their own tests read; those of tabula-py, pdf2docx and pikepdf
more PDFs (tabula-py's with the CSVs its tests expect), xlsx2csv's and
python-calamine's XLSX workbooks (xlsx2csv's with the CSV it writes for each),
trafilatura's HTML pages. Each sdist is found through PyPI's JSON
API at a pinned version, checked against the SHA-256 PyPI publishes, and only its
document files are unpacked (regular files, within a size bound) into
``benchmarks/data/fixtures/<project>/`` (git-ignored): nothing third-party is
committed, and a second run reads the cache. A project's own expected outputs
(:data:`EXPECTED_OUTPUTS`) are unpacked beside its documents and give expected
table cells (:func:`expected_outputs`).

Looked at and not used (their sdists carry no test documents): pdfminer.six
20260107, camelot-py 2.0.0, openpyxl 3.1.5, docx2python 3.7.1, mammoth 1.13.0,
EbookLib 0.20, markitdown 0.1.9, readability-lxml 0.9; odfpy 1.4.1 carries ODT
only; python-docx-ng 2.1.0's DOCX are python-docx's. No sdist looked at carries
an EPUB.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath
from urllib.parse import urljoin

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "benchmarks" / "data" / "fixtures"
# Pinned, so a run reads the same files; the versions installed here when the benchmark was written.
# The first four since issue 30; the rest since issue 44 (the latest release on PyPI then).
SDISTS = {
    "pypdf": "7.1.1",
    "python-docx": "1.2.0",
    "python-pptx": "1.0.2",
    "pdfplumber": "0.11.10",
    "tabula-py": "2.10.0",
    "pdf2docx": "0.5.13",
    "pikepdf": "10.18.0",
    "xlsx2csv": "0.8.6",
    "python-calamine": "0.9.1",
    "trafilatura": "2.3.1",
}
SUFFIXES = (".pdf", ".docx", ".pptx", ".xlsx")
# Kinds of file kept beyond SUFFIXES, per project: HTML pages, and the CSVs a project's tests expect (read as
# expected cells, never as documents). The first projects keep SUFFIXES only, so their cached sets stay as they were.
MORE_SUFFIXES = {"tabula-py": (".csv",), "xlsx2csv": (".csv",), "trafilatura": (".html",)}
DOCUMENTS = (*SUFFIXES, ".html", ".epub")
# The expected output of a document, as the project's own tests compare it (paths inside the sdist, less its top
# folder): tabula-py's tests/test_read_pdf_table.py and xlsx2csv's test/run. Left out: tabula-py's data_2-3.csv
# (its guess=False artefact: "0.2 setosa" as one cell) and its template outputs; xlsx2csv's cases run with options
# that change the values (--dateformat, -e escapes, --hyperlinks, other delimiters). Sheet-name lines of ``-a``
# ("-------- 1 - Sheet1") are not cells.
EXPECTED_OUTPUTS = {
    "tabula-py": {
        "tests/resources/data.pdf": "tests/resources/data_1.csv",
        "tests/resources/campaign_donors.pdf": "tests/resources/campaign_donors.csv",
        "tests/resources/MultiColumn.pdf": "tests/resources/MultiColumn.csv",
        "tests/resources/data_dtype.pdf": "tests/resources/data_dtype_expected.csv",
    },
    "xlsx2csv": {
        f"test/{case}.xlsx": f"test/{case}.csv"
        for case in (
            "empty_row junk-small last-column-empty sheets skip_empty_lines twolettercolumns xlsx2csv-test-file "
            "namespace float utf8 no_cell_ids sheets_order formatted_inline_string"
        ).split()
    },
}
# Of those, the tables drawn with ruling lines (tabula-py's lattice PDFs); the others are unruled or sheets.
RULED_OUTPUTS = {"tabula-py": ("tests/resources/data.pdf", "tests/resources/data_dtype.pdf")}
# Files above this are left out: the suite's point is variety, and each file is read by five readers.
MAX_FILE_BYTES = 3_000_000
MAX_SDIST_BYTES = 80_000_000


def _sdist_url(project: str, version: str) -> tuple[str, str]:
    # The project's JSON lists every release (the per-version address is not served by every mirror).
    index = f"https://pypi.org/pypi/{project}/json"
    with urllib.request.urlopen(index, timeout=60) as response:
        release = json.load(response)["releases"].get(version, [])
    for entry in release:
        if entry["packagetype"] == "sdist":  # a mirror may give the address relative to the index's
            return urljoin(index, entry["url"]), entry["digests"]["sha256"]
    raise SystemExit(f"{project} {version} has no source distribution on PyPI")


def _download(url: str, sha256: str) -> bytes:
    with urllib.request.urlopen(url, timeout=300) as response:
        data = response.read(MAX_SDIST_BYTES + 1)
    if len(data) > MAX_SDIST_BYTES:
        raise SystemExit(f"{url}: larger than {MAX_SDIST_BYTES:,} bytes")
    if hashlib.sha256(data).hexdigest() != sha256:
        raise SystemExit(f"{url}: SHA-256 differs from PyPI's")
    return data


def _members(data: bytes, url: str, suffixes: tuple[str, ...] = SUFFIXES) -> list[tuple[str, bytes]]:
    """(path inside the sdist, bytes) of each file in it whose name ends with one of ``suffixes``."""
    found = []
    if url.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if info.filename.lower().endswith(suffixes) and 0 < info.file_size <= MAX_FILE_BYTES:
                    found.append((info.filename, archive.read(info)))
        return found
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        for member in archive:
            if member.isfile() and member.name.lower().endswith(suffixes) and 0 < member.size <= MAX_FILE_BYTES:
                extracted = archive.extractfile(member)
                if extracted is not None:
                    found.append((member.name, extracted.read()))
    return found


def fetch(projects: dict[str, str] = SDISTS) -> list[Path]:
    """Every fixture file, fetched on first use; named ``<project>/<path in the sdist, slashes as __>``."""
    files: list[Path] = []
    for project, version in projects.items():
        folder = CACHE / f"{project}-{version}"
        if not (folder / ".complete").exists():
            url, sha256 = _sdist_url(project, version)
            folder.mkdir(parents=True, exist_ok=True)
            suffixes = (*SUFFIXES, *MORE_SUFFIXES.get(project, ()))
            for name, content in _members(_download(url, sha256), url, suffixes):
                (folder / cached_name(name)).write_bytes(content)
            (folder / ".complete").write_text(url + "\n", encoding="utf-8")
        files += sorted(path for path in folder.iterdir() if path.suffix.lower() in DOCUMENTS)
    return _first_of_each(files)


def _first_of_each(files: list[Path]) -> list[Path]:
    """``files`` less any whose bytes another has (tabula-py ships its data.pdf twice), the copy whose expected output
    is known kept."""
    named = {f"{project}-{SDISTS[project]}/{cached_name(f'top/{doc}')}" for project in EXPECTED_OUTPUTS
             for doc in EXPECTED_OUTPUTS[project]}  # fmt: skip
    seen: dict[str, Path] = {}
    for path in sorted(files, key=lambda path: f"{path.parent.name}/{path.name}" not in named):
        seen.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    kept = set(seen.values())
    return [path for path in files if path in kept]


def cached_name(name: str) -> str:
    """A path inside an sdist as its cached file is named: its top folder left out, the rest joined by ``__``."""
    parts = PurePosixPath(name).parts[1:]
    return "__".join(part for part in parts if part not in ("", ".", ".."))


def expected_outputs(projects: dict[str, str] = SDISTS) -> tuple[dict[str, list[str]], set[str]]:
    """The expected cells of the fetched documents whose project ships its expected output (:data:`EXPECTED_OUTPUTS`),
    by file as the benchmark names it, and which of them are ruled tables. Only what is in the cache."""
    from parser_checks import csv_cells

    cells: dict[str, list[str]] = {}
    ruled: set[str] = set()
    for project, outputs in EXPECTED_OUTPUTS.items():
        folder = CACHE / f"{project}-{projects[project]}"
        for document, output in outputs.items():
            source = folder / cached_name(f"top/{output}")
            if source.exists():
                key = f"{folder.name}/{cached_name(f'top/{document}')}"
                cells[key] = csv_cells(source.read_text(encoding="utf-8"))
                if document in RULED_OUTPUTS.get(project, ()):
                    ruled.add(key)
    return cells, ruled
