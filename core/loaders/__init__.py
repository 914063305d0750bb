"""Loaders (the "parsers" a user picks): bytes of a file in, documents out."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import UnsupportedFileError
from core.limits import DEFAULT_LIMITS, Limits, check_text_size, check_upload_size
from core.loaders.base import Loader
from core.loaders.file_kinds import folder_files, read_file
from core.loaders.registry import FOLDER_EXTENSIONS, FORMAT_EXTENSIONS, LOADERS
from core.schema import Document

FileMetadata = Callable[[str], dict[str, Any]]


def loader_for(file_name: str) -> type[Loader]:
    """The loader class that reads files with this name's extension.

    One of ChunkScope's own formats is found from :data:`FORMAT_EXTENSIONS`, importing that format's
    module alone (its loader comes first in the registry's order, whatever else is registered).
    """
    suffix = Path(file_name).suffix.lower()
    for name, extensions in FORMAT_EXTENSIONS.items():
        if suffix in extensions:
            importlib.import_module(f"core.loaders.{name}")
            found = LOADERS.registered_class(name)
            if found is not None and suffix in found.extensions:
                return found
            break
    for cls in LOADERS:
        if suffix in cls.extensions:
            return cls
    known = ", ".join(sorted({ext for cls in LOADERS for ext in cls.extensions}))
    raise UnsupportedFileError(
        file_name, f"files ending in {suffix or '(no extension)'!r} are not supported (supported: {known})"
    )


def folder_extensions() -> set[str]:
    """The extensions a folder walk loads: every loader's, less those only loaded by name (``.json``).

    ChunkScope's own formats come from a table (:data:`FOLDER_EXTENSIONS`), so this imports no
    parser; a loader registered from elsewhere adds its own.
    """
    found: set[str] = set(FOLDER_EXTENSIONS)
    for cls in LOADERS.registered():
        found.update(cls.extensions if cls.folder_extensions is None else cls.folder_extensions)
    return found


def load_bytes(
    data: bytes,
    file_name: str,
    *,
    loader: str | None = None,
    file_metadata: FileMetadata | None = None,
    filename_as_id: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    **options: Any,
) -> list[Document]:
    """Load one file's bytes. ``loader`` forces a loader by name; ``options`` are its parameters.

    ``file_metadata`` (as in LlamaIndex's SimpleDirectoryReader) maps the file
    name to extra metadata; ``filename_as_id`` makes the file name the document id
    (with ``_part_N`` for files that yield several documents). ``limits`` refuses a
    file over the upload size before parsing it, one whose text is over the
    text limit, and an Office or EPUB file whose XML holds more than its limits
    allow (counted while parsing), with a :class:`~core.errors.TooLargeError`.
    """
    cls = LOADERS.get_class(loader) if loader else loader_for(file_name)
    reader = cls.from_params(options)
    check_upload_size(len(data), file_name, limits)
    if reader.reader == "chunkscope":
        documents = reader.load_within(data, file_name, limits)
    else:
        from core.loaders.readers import read_with_reader

        documents = read_with_reader(reader, data, file_name, limits)
    check_text_size(documents, file_name, limits)
    extra = file_metadata(file_name) if file_metadata else {}
    for index, document in enumerate(documents):
        document.metadata.update(extra)
        if filename_as_id:
            document.id = file_name if len(documents) == 1 else f"{file_name}_part_{index}"
    return documents


def load(path: str | os.PathLike[str], *, limits: Limits = DEFAULT_LIMITS, **options: Any) -> list[Document]:
    """Load a file, or every supported file in a directory (sorted by path; ``.json`` only by name).

    A file over the upload limit is not read.
    """
    path = Path(path)
    if path.is_dir():
        documents: list[Document] = []
        for child in folder_files(path, folder_extensions()):
            documents.extend(load(child, limits=limits, **options))
        return documents
    return load_bytes(read_file(path, limits), path.name, limits=limits, **options)


__all__ = ["LOADERS", "Loader", "folder_extensions", "folder_files", "load", "load_bytes", "loader_for", "read_file"]
