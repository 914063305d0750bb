"""Loaded documents kept on disk, so a cold CLI run or app start never parses an unchanged file again.

OCR, PDF extraction and Office parsing cost seconds a file; the documents they give are
kept as JSON in ``documents/`` beside the embedding cache (:func:`core.runtime.cache_folder.cache_root`).
An entry's key is the sha256 of everything that decides the loader's output: the file's
bytes (their sha256), its name (documents carry it in metadata and ids), the loader asked
for and its options, the limits, and :func:`loader_code_version` (the loaders' source, the parsing
libraries' versions, the Tesseract program), so changing any of them misses rather than
serving stale documents.

Entries are plain JSON of the Document fields (:mod:`core.loaders.document_json`), checked field by
field as they are read (never pickle: nothing read back can run code). A document whose fields JSON cannot give
back exactly (a tuple, a datetime, a non-string key) is not kept. Entries are written to a
temporary file and renamed into place, so a reader never sees half of one; an entry that
does not parse or check is deleted and counts as a miss. The folder is bounded by
:data:`MAX_BYTES`: past it, the entries least recently used (written or read: a hit touches
the file's modification time) are deleted. Quick loads are kept too (an entry reads back in
about 0.3 ms): a run whose every file is kept never imports the loaders (pypdf, markdown-it, ...).
``CHUNKSCOPE_NO_DOCUMENT_CACHE=1`` turns it off.

:func:`load` and :func:`load_bytes` take the arguments of :func:`core.loaders.load` and
:func:`core.loaders.load_bytes` and return equal documents (tests/test_document_cache.py
checks every sample document).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.limits import DEFAULT_LIMITS, Limits
from core.loaders.document_json import Damaged, document_from_json, document_to_json, expect
from core.loaders.file_kinds import folder_files, read_file
from core.runtime.cache_folder import cache_root
from core.schema import Document

# The entry layout; raise it when the JSON below changes shape.
FORMAT_VERSION = 1
# Least recently used entries go beyond this many bytes (JSON of the text, its elements and pages).
MAX_BYTES = 256 * 1024 * 1024
# An entry up to this size is read in the caller's process even where loads run in a child (0.3 ms for a small
# one); a larger one is read in the child, since decoding its JSON holds the process for a second or more.
IN_PROCESS_ENTRY_BYTES = 2_000_000
DISABLE_VARIABLE = "CHUNKSCOPE_NO_DOCUMENT_CACHE"

# What the loaders' output depends on besides their own folder (their imports inside core).
# Files, or folders read whole.
_CORE_MODULES = ("errors.py", "runtime/forking.py", "limits.py", "params", "registry.py", "schema.py")
# The parsing libraries the loaders call: a new release may read a file differently.
_LIBRARIES = (
    "pypdf",
    "pdfplumber",
    "pdfminer.six",
    "pypdfium2",
    "openpyxl",
    "markdown-it-py",
    "defusedxml",
    "charset-normalizer",
    # The reader engines' frameworks (core/loaders/readers) and what they parse with.
    "llama-index-core",
    "llama-index-readers-file",
    "langchain-community",
    "markitdown",
    "docx2txt",
    "mammoth",
    "beautifulsoup4",
    "python-pptx",
    "pandas",
)

FileMetadata = Callable[[str], dict[str, Any]]
_LOG = logging.getLogger(__name__)


def enabled() -> bool:
    return os.environ.get(DISABLE_VARIABLE, "").strip() in ("", "0")


@functools.lru_cache(maxsize=1)
def loader_code_version() -> str:
    """A digest of what the loaders run: their source files, the parsing libraries' versions, Tesseract's binary."""
    from importlib import metadata

    core = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"format {FORMAT_VERSION} python {sys.version}".encode())
    modules = [core / name for name in _CORE_MODULES]
    files = [file for path in modules for file in (sorted(path.rglob("*.py")) if path.is_dir() else [path])]
    for path in [*sorted((core / "loaders").rglob("*.py")), *files]:
        digest.update(path.relative_to(core).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for library in _LIBRARIES:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{library}={version}\0".encode())
    # Tesseract is a program, not a package: its path, size and modification time stand for its version.
    tesseract = shutil.which("tesseract")
    if tesseract:
        stat = os.stat(tesseract)
        digest.update(f"tesseract={tesseract}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def entry_key(data: bytes, file_name: str, loader: str | None, options: dict[str, Any], limits: Limits) -> str:
    """The entry's name: a digest of the bytes, the name, the loader asked for and its options, limits and code.

    The request, not the loader it resolves to: which loader reads a name and what its defaults are is
    loader code, which :func:`loader_code_version` digests, so a hit never needs the loaders imported
    (pypdf, markdown-it, ...: 0.12 s of CPU). Only a request that loaded is ever stored.
    """
    parts = {
        "bytes": hashlib.sha256(data).hexdigest(),
        "file_name": file_name,
        "loader": loader,
        "options": options,
        "limits": limits.to_params(),
        "code": loader_code_version(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()


# -- the folder ------------------------------------------------------------------------------------


class DocumentCache:
    """Entries ``<key>.json`` in one folder, at most ``max_bytes`` of them; every failure is a miss, never an error."""

    def __init__(self, folder: Path, max_bytes: int = MAX_BYTES) -> None:
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        self.damaged = 0  # entries found unreadable (and deleted) by get

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> list[Document] | None:
        """The documents kept under ``key``, or None (nothing kept, or an entry that does not check: deleted)."""
        return self._read(key, lambda value: [document_from_json(item) for item in expect(value, list)])

    def entry_bytes(self, key: str) -> int | None:
        """The size of the entry under ``key`` on disk, or None when there is none."""
        try:
            return self._path(key).stat().st_size
        except OSError:
            return None

    def get_or_keep(self, key: str, read: Callable[[], list[Document]]) -> list[Document]:
        """The documents kept under ``key``, or ``read()``'s, kept under it."""
        documents = self.get(key)
        if documents is None:
            documents = read()
            self.put(key, documents)
        return documents

    def put(self, key: str, documents: list[Document]) -> bool:
        """Keep ``documents`` under ``key`` if JSON gives them back exactly; True when written."""
        try:
            value = [document_to_json(d) for d in documents]
            # Equal after the round trip, or not kept: JSON turns tuples into lists and keys into strings.
            if [document_from_json(item) for item in json.loads(json.dumps(value))] != documents:
                return False
        except (ValueError, TypeError):  # a value JSON cannot hold (a datetime, bytes)
            return False
        return self._write(key, value)

    def _read(self, key: str, check: Callable[[Any], Any]) -> Any:
        path = self._path(key)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        try:
            entry = expect(json.loads(raw), dict)
            if entry.get("format") != FORMAT_VERSION or entry.get("key") != key:
                raise Damaged("another format or key")
            value = check(entry["value"])
        except (ValueError, KeyError, TypeError) as exc:  # Damaged and json's errors are ValueErrors
            self.damaged += 1
            _LOG.warning("%s: damaged document cache entry (%s): loading the file again", path, exc)
            path.unlink(missing_ok=True)
            return None
        try:
            os.utime(path)  # recently used: the last to go when the folder is over its bound
        except OSError:
            pass
        return value

    def _write(self, key: str, value: Any) -> bool:
        try:
            text = json.dumps(
                {"format": FORMAT_VERSION, "key": key, "value": value}, ensure_ascii=False, allow_nan=False
            )
        except (ValueError, TypeError):
            return False
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > self.max_bytes:
            return False
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(data)
                os.replace(temporary, self._path(key))  # atomic: a reader sees the old entry or the whole new one
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as exc:
            _LOG.warning("%s: cannot keep a loaded document (%s)", self.folder, exc)
            return False
        self._trim()
        return True

    def _trim(self) -> None:
        """Delete the least recently used entries until the folder holds at most ``max_bytes``."""
        entries = []
        for path in self.folder.glob("*.json"):
            try:
                stat = path.stat()
            except OSError:  # deleted by another process meanwhile
                continue
            entries.append((stat.st_mtime_ns, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries, key=lambda entry: entry[0]):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size

    def folder_extensions(self) -> set[str]:
        """:func:`core.loaders.folder_extensions`, kept beside the documents under the loader code's version."""
        key = hashlib.sha256(f"folder extensions {loader_code_version()}".encode()).hexdigest()
        found = self._read(key, lambda value: {expect(item, str) for item in expect(value, list)})
        if found is None:
            from core.loaders import folder_extensions

            found = folder_extensions()
            self._write(key, sorted(found))
        return found


def default_cache() -> DocumentCache:
    return DocumentCache(cache_root() / "documents")


# -- loading through it ------------------------------------------------------------------------------


def load_bytes(
    data: bytes,
    file_name: str,
    *,
    loader: str | None = None,
    file_metadata: FileMetadata | None = None,
    filename_as_id: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    cache: DocumentCache | None = None,
    run_load: Callable[[Callable[[], list[Document]]], list[Document]] | None = None,
    **options: Any,
) -> list[Document]:
    """:func:`core.loaders.load_bytes`, served from ``cache`` when this file was read the same way before.

    ``cache`` defaults to :func:`default_cache`; with none given and the cache turned off
    (:func:`enabled`), this is :func:`core.loaders.load_bytes`. ``run_load`` runs a read the
    cache cannot serve (the app passes :func:`core.documents.bounded.load_bounded`'s child), so a hit
    costs no fork.
    """

    def load_uncached(*args: Any, **kwargs: Any) -> list[Document]:
        from core.loaders import load_bytes as uncached  # imported on a miss only: a hit needs no loader

        return uncached(*args, **kwargs)

    run = run_load or (lambda read: read())
    if (cache is None and not enabled()) or len(data) > limits.max_upload_bytes:
        return run(  # and the refusal of a file over the limit
            lambda: load_uncached(
                data,
                file_name,
                loader=loader,
                file_metadata=file_metadata,
                filename_as_id=filename_as_id,
                limits=limits,
                **options,
            )
        )
    cache = cache or default_cache()
    key = entry_key(data, file_name, loader, options, limits)
    # A large entry is read where the load would run (run_load's child): decoding its JSON holds the process.
    small = run_load is None or (cache.entry_bytes(key) or 0) <= IN_PROCESS_ENTRY_BYTES
    documents = cache.get(key) if small else None
    if documents is None:
        # The read and the keeping of what it read, both in the child where there is one: checking and writing the
        # JSON of a document with 150,000 elements took the server 3 s.
        documents = run(
            lambda: cache.get_or_keep(key, lambda: load_uncached(data, file_name, loader=loader, limits=limits, **options))
        )
    extra = file_metadata(file_name) if file_metadata else {}
    for index, document in enumerate(documents):
        document.metadata.update(extra)
        if filename_as_id:
            document.id = file_name if len(documents) == 1 else f"{file_name}_part_{index}"
    return documents


def load(
    path: str | os.PathLike[str],
    *,
    limits: Limits = DEFAULT_LIMITS,
    cache: DocumentCache | None = None,
    **options: Any,
) -> list[Document]:
    """:func:`core.loaders.load` (a file, or every supported file under a folder) through the cache."""
    path = Path(path)
    if path.is_dir():
        if cache is None and enabled():
            cache = default_cache()
        if cache is None:
            from core.loaders import folder_extensions

            supported = folder_extensions()
        else:
            supported = cache.folder_extensions()
        documents: list[Document] = []
        for child in folder_files(path, supported):
            documents.extend(load(child, limits=limits, cache=cache, **options))
        return documents
    return load_bytes(read_file(path, limits), path.name, limits=limits, cache=cache, **options)
