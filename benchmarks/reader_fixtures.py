"""Third-party test files for the parser benchmark, fetched at run time from source distributions on PyPI.

The sdists of pypdf, python-docx, python-pptx and pdfplumber carry the PDFs,
DOCX and PPTX files their own tests read. Each sdist is found through PyPI's JSON
API at a pinned version, checked against the SHA-256 PyPI publishes, and only its
document files are unpacked (regular files, within a size bound) into
``benchmarks/data/fixtures/<project>/`` (git-ignored): nothing third-party is
committed, and a second run reads the cache.
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
SDISTS = {"pypdf": "7.1.1", "python-docx": "1.2.0", "python-pptx": "1.0.2", "pdfplumber": "0.11.10"}
SUFFIXES = (".pdf", ".docx", ".pptx", ".xlsx")
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


def _members(data: bytes, url: str) -> list[tuple[str, bytes]]:
    """(path inside the sdist, bytes) of each document file in it."""
    found = []
    if url.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if info.filename.lower().endswith(SUFFIXES) and 0 < info.file_size <= MAX_FILE_BYTES:
                    found.append((info.filename, archive.read(info)))
        return found
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        for member in archive:
            if member.isfile() and member.name.lower().endswith(SUFFIXES) and 0 < member.size <= MAX_FILE_BYTES:
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
            for name, content in _members(_download(url, sha256), url):
                parts = PurePosixPath(name).parts[1:]  # less the sdist's top folder
                safe = "__".join(part for part in parts if part not in ("", ".", ".."))
                (folder / safe).write_bytes(content)
            (folder / ".complete").write_text(url + "\n", encoding="utf-8")
        files += sorted(path for path in folder.iterdir() if path.suffix.lower() in SUFFIXES)
    return files
