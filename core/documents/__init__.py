"""Applying a PipelineConfig to documents: load with its options, set metadata, extract, split.

Where untrusted work runs (in-process or in a child that can be stopped) is :mod:`core.documents.bounded`;
the LLM extractors' run, with its progress and cancel, is :mod:`core.documents.llm_run`.

Nodes inherit a document's metadata and view settings through ``build_nodes``,
so setting them on (copies of) the documents is all it takes for every node to
render its LLM and EMBED views the configured way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.documents.bounded import load_bounded, split_bounded
from core.documents.llm_run import extract_with_llm
from core.errors import ChunkScopeError
from core.limits import DEFAULT_LIMITS, Limits
from core.schema import Document, Node
from core.splitters.size_check import check_split_size

if TYPE_CHECKING:
    from core.config import PipelineConfig
    from core.config_parts import MetadataSettings


def load_documents(
    paths: Sequence[str | os.PathLike[str]],
    config: PipelineConfig,
    limits: Limits = DEFAULT_LIMITS,
    *,
    bounded: bool = False,
    failures: list[tuple[str, ChunkScopeError]] | None = None,
) -> list[Document]:
    """Load files (or every supported file under a directory), each with its own loader's options.

    ``bounded``: each file is loaded in a child stopped at ``limits.load_seconds`` or
    ``limits.work_memory_mb`` (:func:`load_bounded`). ``failures``: a file that cannot be loaded is left
    out and listed there as (its path, the error), instead of stopping the rest.
    """
    from core.loaders import folder_extensions, loader_for
    from core.loaders.cache import load  # a file read the same way before comes from core.loaders.cache

    documents: list[Document] = []
    for path in map(Path, paths):
        if path.is_dir():
            supported = folder_extensions()
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in supported)
        else:
            files = [path]
        for file in files:
            options = config.loader_options(loader_for(file.name).name)
            # Only a read the disk cache cannot serve runs in the bounded child.
            child = partial(load_bounded, file_name=file.name, size=_regular_size(file), limits=limits)
            try:
                documents.extend(load(file, limits=limits, run_load=child if bounded else None, **options))
            except ChunkScopeError as exc:
                if failures is None:
                    raise
                failures.append((str(file), exc))
    return documents


def apply_extractors(documents: Sequence[Document], extractors: Sequence[Any]) -> list[Document]:
    """Copies of the documents with each extractor's keys added to their metadata."""
    # LLM extractors run on the nodes, after the split (finish_nodes).
    extractors = [extractor for extractor in extractors if not extractor.node_level]
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
    prepared = [document.with_metadata({**document.metadata, **extra}, **view) for document in documents]
    return with_embed_allow_list(prepared, settings)


def with_embed_allow_list(documents: Sequence[Document], settings: MetadataSettings) -> list[Document]:
    """Copies of the documents with the keys ``settings.embed_metadata_keys`` leaves out hidden from the
    embedding model (the documents themselves where there is no allow list). Before the split, because
    metadata-aware splitters size chunks by the longer of the two views."""
    if settings.embed_metadata_keys is None:
        return list(documents)
    return [
        replace(document, excluded_embed_metadata_keys=settings.embed_hidden(document.metadata, document.excluded_embed_metadata_keys))
        for document in documents
    ]


def finish_nodes(
    nodes: list[Node],
    documents: Sequence[Document],
    settings: MetadataSettings,
    extract: Callable[[list[Node]], object] | None = None,
) -> list[Node]:
    """What the metadata settings do after the split (in place; ``nodes`` is returned): each node's section
    path (:mod:`core.extractors.sections`), the node-level extractors (``extract``: :func:`extract_with_llm`),
    and the embedding model's allow list over the keys the split and the extractors added."""
    if settings.section_metadata != "off":
        from core.extractors.sections import SECTION_KEY, add_sections

        add_sections(nodes, documents)
        if settings.section_metadata == "embed":
            for node in nodes:
                if SECTION_KEY in node.metadata and SECTION_KEY not in node.excluded_llm_metadata_keys:
                    node.excluded_llm_metadata_keys = [*node.excluded_llm_metadata_keys, SECTION_KEY]
    if extract is not None:
        extract(nodes)
    if settings.embed_metadata_keys is not None:
        for node in nodes:
            node.excluded_embed_metadata_keys = settings.embed_hidden(node.metadata, node.excluded_embed_metadata_keys)
    return nodes


def prepare_documents(documents: Sequence[Document], config: PipelineConfig) -> list[Document]:
    """Extractors first (they read the text), then the user's metadata, which has the last word."""
    return apply_metadata_settings(apply_extractors(documents, config.extractors), config)


def run_split(
    documents: Sequence[Document],
    config: PipelineConfig,
    limits: Limits = DEFAULT_LIMITS,
    *,
    bounded: bool = False,
    report: Callable[[str], object] | None = None,
    progress: Callable[[int, int], object] | None = None,
    control: Any = None,
) -> list[Node]:
    """The one call that turns documents into nodes the way ``config`` says.

    A split that would make more nodes than ``limits`` allows is refused before any work.
    ``bounded`` (the app, ``chunkscope split`` and ``batch``: input from anyone) runs the
    split, where :func:`split_needs_child` says so, in a child stopped after
    ``limits.split_seconds`` per document or beyond ``limits.work_memory_mb``
    (:mod:`core.runtime.bounded`); its nodes are the same as in-process. ``report`` hears, in a sentence each,
    what the LLM extractors will send before they run and what they sent after; ``progress`` and ``control``
    follow and stop them (:func:`extract_with_llm`).
    """
    prepared = documents_to_split(documents, config, limits)
    nodes = split_bounded(prepared, config.splitter, limits) if bounded else config.splitter.split(prepared)
    extract = partial(
        extract_with_llm, config=config, limits=limits, bounded=bounded, report=report, progress=progress, control=control
    )
    return finish_nodes(nodes, prepared, config.metadata, extract)



def documents_to_split(
    documents: Sequence[Document], config: PipelineConfig, limits: Limits = DEFAULT_LIMITS
) -> list[Document]:
    """What every split runs before its splitter (the app, the CLI and each batch worker alike): the node
    bound checked before any work, then extractors and the user's metadata (:func:`prepare_documents`)."""
    check_split_size(documents, config.splitter, limits)
    return prepare_documents(documents, config)


def _regular_size(path: Path) -> int | None:
    try:
        status = path.stat()
    except OSError:  # the load says why, in a child
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None
