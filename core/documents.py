"""Applying a PipelineConfig to documents: load with its options, set metadata, extract, split.

Nodes inherit a document's metadata and view settings through ``build_nodes``,
so setting them on (copies of) the documents is all it takes for every node to
render its LLM and EMBED views the configured way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.limits import DEFAULT_LIMITS, Limits, check_split_size
from core.schema import Document, Node

if TYPE_CHECKING:
    from core.config import PipelineConfig


def load_documents(paths: Sequence[str | os.PathLike[str]], config: PipelineConfig) -> list[Document]:
    """Load files (or every supported file under a directory), each with its own loader's options."""
    from core.document_cache import load  # a file read the same way before comes from core.document_cache
    from core.loaders import folder_extensions, loader_for

    documents: list[Document] = []
    for path in map(Path, paths):
        if path.is_dir():
            supported = folder_extensions()
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in supported)
        else:
            files = [path]
        for file in files:
            options = config.loader_options(loader_for(file.name).name)
            documents.extend(load(file, **options))
    return documents


def apply_extractors(documents: Sequence[Document], extractors: Sequence[Any]) -> list[Document]:
    """Copies of the documents with each extractor's keys added to their metadata."""
    if not extractors:
        return list(documents)
    out = []
    for document in documents:
        found: dict[str, Any] = {}
        for extractor in extractors:
            found.update(extractor.extract(document))
        out.append(document.with_metadata({**document.metadata, **found}))
    return out


def apply_metadata_settings(documents: Sequence[Document], config: PipelineConfig) -> list[Document]:
    """Copies of the documents with the config's extra metadata and view settings.

    The user's extra keys win over the loader's keys of the same name. Excluded
    keys left unset in the config keep what the loader chose.
    """
    settings = config.metadata
    extra = settings.extra_metadata
    view = settings.view_settings()
    return [document.with_metadata({**document.metadata, **extra}, **view) for document in documents]


def prepare_documents(documents: Sequence[Document], config: PipelineConfig) -> list[Document]:
    """Extractors first (they read the text), then the user's metadata, which has the last word."""
    return apply_metadata_settings(apply_extractors(documents, config.extractors), config)


def run_split(documents: Sequence[Document], config: PipelineConfig, limits: Limits = DEFAULT_LIMITS) -> list[Node]:
    """The one call that turns documents into nodes the way ``config`` says.

    A split that would make more nodes than ``limits`` allows is refused before any work.
    """
    check_split_size(documents, config.splitter, limits)
    return config.splitter.split(prepare_documents(documents, config))
