"""Applying a PipelineConfig to documents: load with its options, set metadata, extract, split.

Nodes inherit a document's metadata and view settings through ``build_nodes``,
so setting them on (copies of) the documents is all it takes for every node to
render its LLM and EMBED views the configured way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ChunkScopeError
from core.limits import DEFAULT_LIMITS, Limits
from core.runtime.memo import added_to_tables, keep_in_tables, mark_tables
from core.schema import Document, Node
from core.splitters.size_check import check_node_count, check_split_size

if TYPE_CHECKING:
    from core.config import PipelineConfig
    from core.config_parts import MetadataSettings
    from core.splitters.base import Splitter


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


class _Watch:
    """``progress`` called with the replies so far; what it raises cancels the run and is held till the run stops."""

    def __init__(self, control: Any, progress: Callable[[int, int], object] | None, calls: int) -> None:
        self.control, self.progress, self.calls = control, progress, calls
        self.held: BaseException | None = None

    def __call__(self) -> None:
        if self.progress is None or self.held is not None:
            return
        try:
            self.progress(self.control.done, self.calls)
        except BaseException as exc:  # noqa: BLE001 - a page's rerun or a KeyboardInterrupt: raised after the stop
            self.held = exc
            self.control.cancel()

    def raise_held(self) -> None:
        if self.held is not None:
            raise self.held


def _run_llm(
    work: Callable[..., Any], nodes: list[Node], what: str, config: PipelineConfig, limits: Limits, bounded: bool, watch: _Watch
) -> Any:
    """The LLM run of :func:`extract_with_llm`: in a bounded child (``watch`` called while it waits), or here."""
    if not bounded:
        if watch.control is not None and watch.progress is not None:
            watch.control.on_reply = watch  # in-process: each reply is seen in this thread as it comes
        return work()
    from core.runtime.bounded import run_bounded

    return run_bounded(
        work,
        file_name=str(nodes[0].metadata.get("file_name") or nodes[0].doc_id),
        what=what,
        seconds=config.llm.deadline_seconds,
        memory_mb=limits.work_memory_mb,
        seconds_name="llm deadline_seconds",
        poll=watch if watch.progress is not None else None,
    )


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


def extract_with_llm(
    nodes: list[Node],
    config: PipelineConfig,
    limits: Limits = DEFAULT_LIMITS,
    *,
    bounded: bool = False,
    report: Callable[[str], object] | None = None,
    on_run: Callable[[Any], object] | None = None,
    progress: Callable[[int, int], object] | None = None,
    control: Any = None,
) -> list[Node]:
    """The configuration's LLM extractors (:mod:`core.extractors.llm`) run on ``nodes``, their keys written in
    (in place). Nothing happens, and nothing is sent, without one. ``bounded``: in a child stopped at the
    connection's ``deadline_seconds`` (the extractors are framework code, and wait on the network).
    ``on_run`` is handed the run's :class:`~core.extractors.llm.LLMRun` (what it sent and spent), once it is done.

    ``progress(done, calls)``: the replies so far (sent or from the cache) of at most ``calls``, called in this
    thread while the run goes (every :data:`core.runtime.bounded.POLL_SECONDS` in a child, else at each reply).
    ``control`` (an :class:`~core.llm.control.LLMControl`) cancels the run from elsewhere. Either way a cancel
    stops before the next request (the replies already received are cached) and raises
    :class:`~core.llm.control.LLMCancelled`; what ``progress`` raises (a page's rerun) cancels the run the same
    way and is raised once the run has stopped."""
    from core.extractors.llm import apply_run, llm_extractors, plan, run_llm_extractors
    from core.llm.control import LLMControl

    chosen = llm_extractors(config.extractors)
    if not chosen or not nodes:
        return nodes
    # Counted (the prompts tokenized) only for those who hear it: a batch worker's files pay nothing for it.
    planned = plan(nodes, chosen, config.llm) if report is not None or progress is not None else None
    if report is not None and planned is not None:
        report(planned.sentence(config.llm))
    control = control if control is not None or progress is None else LLMControl()
    watch = _Watch(control, progress, planned.calls if planned is not None else 0)
    work = partial(run_llm_extractors, nodes, chosen, config.llm, control)
    try:
        what = f"asking {config.llm.model} for {', '.join(extractor.name for extractor in chosen)}"
        run = _run_llm(work, nodes, what, config, limits, bounded, watch)
    finally:
        watch.raise_held()
    apply_run(nodes, run)
    if report is not None:
        report(run.sentence())
    if on_run is not None:
        on_run(run)
    return nodes


def documents_to_split(
    documents: Sequence[Document], config: PipelineConfig, limits: Limits = DEFAULT_LIMITS
) -> list[Document]:
    """What every split runs before its splitter (the app, the CLI and each batch worker alike): the node
    bound checked before any work, then extractors and the user's metadata (:func:`prepare_documents`)."""
    check_split_size(documents, config.splitter, limits)
    return prepare_documents(documents, config)


def split_bounded(
    documents: Sequence[Document],
    splitter: Splitter,
    limits: Limits = DEFAULT_LIMITS,
    *,
    in_process_chars: int | None = None,
) -> list[Node]:
    """``splitter.split(documents)``, in a child that can be stopped where :func:`split_needs_child` says so.

    The child sends back the spans of the nodes where the splitter builds them from spans, and what it added
    to the per-text tables (:class:`core.runtime.memo.TextTables`); the nodes are built here, equal to an
    in-process split's. A Chunks rerun of a 1 MB text at a new chunk_size splits in a child each time.
    """
    if not split_needs_child(documents, splitter, in_process_chars=in_process_chars):
        return _split_here(documents, splitter, limits)
    from core.runtime.bounded import map_bounded
    from core.splitters.fast.gc_pause import gc_paused

    _warm(splitter)
    # One document at a time, so a deadline names its file; Splitter.split is the same loop.
    per_document = map_bounded(
        partial(_split_keeping, splitter, limits),
        documents,
        file_names=[file_name_of(document) for document in documents],
        what=f"splitting with {splitter.name}",
        seconds=limits.split_seconds,
        memory_mb=limits.work_memory_mb,
        seconds_name="split_seconds",
    )
    count = 0
    for document, (_, made, _) in zip(documents, per_document, strict=True):
        count += len(made)
        check_node_count(count, document, splitter, limits)  # before a node is built here
    nodes: list[Node] = []
    # Nodes form no reference cycles (core.splitters.fast.gc_pause), as in Splitter.split.
    with gc_paused():
        for document, (as_spans, made, kept) in zip(documents, per_document, strict=True):
            keep_in_tables(document.text, kept)
            nodes.extend(splitter.nodes_from_spans(document, made) if as_spans else made)
    return nodes


def _split_here(documents: Sequence[Document], splitter: Splitter, limits: Limits) -> list[Node]:
    """``splitter.split(documents)`` in this process, one document at a time as a child splits them, each
    document's spans counted against ``limits.max_nodes`` before its nodes are built."""
    from core.splitters.base import spans_of_nodes
    from core.splitters.fast.gc_pause import gc_paused

    if splitter.level_sizes:  # its count was estimated before the work (check_split_size): the split as it is
        nodes = splitter.split(documents)
        if nodes:
            check_node_count(len(nodes), documents[-1], splitter, limits)
        return nodes
    nodes = []
    with gc_paused():
        for document in documents:
            spans = spans_of_nodes(splitter, document)
            if spans is None:
                nodes.extend(splitter.split([document]))
            else:
                check_node_count(len(nodes) + len(spans), document, splitter, limits)
                nodes.extend(splitter.nodes_from_spans(document, spans))
            check_node_count(len(nodes), document, splitter, limits)
    return nodes


def _split_keeping(splitter: Splitter, limits: Limits, document: Document) -> tuple[bool, Sequence[Any], list]:
    """In a child: the spans of the document's nodes (built in the parent: they travel in a fraction of the time),
    or the nodes themselves where the splitter makes them another way; and what the split added to the per-text
    tables (e.g. the sentences of its paragraphs), so the parent keeps them and the next child, at another
    chunk_size, does not compute them again (a sentence rerun of a 1 MB text: ~100 ms less). A document that
    alone makes more nodes than ``limits.max_nodes`` is refused here, before anything is sent."""
    from core.splitters.base import spans_of_nodes

    marks = mark_tables(document.text)
    spans = spans_of_nodes(splitter, document)
    made = splitter.split([document]) if spans is None else spans
    check_node_count(len(made), document, splitter, limits)
    return spans is not None, made, added_to_tables(document.text, marks)


@lru_cache(maxsize=32)
def _warm(splitter: Splitter) -> None:
    """Prepare the splitter's framework here, once (:meth:`~core.engines.base.FrameworkSplitter.prepare`: its
    imports and bundled data): every child forked after it inherits them.

    A child's imports die with it; without this each split in a child paid the framework's import again
    (about a second for LangChain; NLTK for LlamaIndex, 2-3 s). Never the framework's splitting code: that,
    with the user's settings in it, runs only in the child.
    """
    prepare = getattr(splitter, "prepare", None)
    if not callable(prepare):
        return
    try:
        prepare()
    except Exception:  # only a head start: the split, in the child, reports what is wrong
        pass


# A split of ChunkScope's own splitters on at most this many characters runs in-process (see split_needs_child).
IN_PROCESS_CHARS = 300_000
# ... and on at most this many when the split is light (Splitter.split_is_light: the text's tokenizer pass is kept,
# or it counts characters). Measured on hostile text (benchmarks/light_splits.py, benchmarks/NOTES.md "Light
# splits"): no light split of 1.2 M characters costs more time or memory than the worst first split that
# IN_PROCESS_CHARS already allows in-process, so the bound on a split holding the server is not weakened; a Chunks
# rerun of a 1 MB text at a new chunk_size spares the fork (30-40 ms).
LIGHT_IN_PROCESS_CHARS = 1_200_000


def split_needs_child(
    documents: Sequence[Document], splitter: Splitter, *, in_process_chars: int | None = None
) -> bool:
    """Whether a split of untrusted input must run in a child that can be stopped (:mod:`core.runtime.bounded`).

    In-process, sparing the fork (5-20 ms) and keeping what the split caches (a
    text's token index) for the next one, only when the work is known to be
    small: one of ChunkScope's own splitters (linear in the text, Python that
    lets the server's other threads run every few milliseconds), with no regex
    of the user's (matched in C, holding the GIL), on at most
    :data:`IN_PROCESS_CHARS` characters (``in_process_chars``: another bound, for a process that serves
    no other thread: a batch worker, whose fork per large file cost a third of its CPU), or without it
    :data:`LIGHT_IN_PROCESS_CHARS` where the split is light (:meth:`~core.splitters.base.Splitter.split_is_light`:
    a rerun on a text the server has indexed). Framework engines and plugins always go
    to a child: their code is not ours to bound. A splitter that embeds
    (``semantic``) never does: forking a process whose torch threads have started
    can hang the child, and its work is already bounded by ``max_embed_chars``
    (the model releases the GIL while it computes).
    """
    if splitter.embeds_text:
        return False
    if not type(splitter).__module__.startswith("core.splitters."):
        return True
    if splitter.regex_values():
        return True
    bound = IN_PROCESS_CHARS if in_process_chars is None else in_process_chars
    characters = sum(len(document.text) for document in documents)
    if characters <= bound:
        return False
    # A text whose tokenizer pass is kept (a rerun), or counted in characters: a split of it is cheap per character.
    light = in_process_chars is None and characters <= LIGHT_IN_PROCESS_CHARS
    return not (light and all(splitter.split_is_light(document.text) for document in documents))


# Loaders whose work is linear in a small file and pure Python (the server's other threads run meanwhile):
# at most IN_PROCESS_BYTES of these are loaded in-process. Measured, 300 KB of markdown-it-py's worst inputs
# found ("[" * n, long table rows) took 3.4 s of CPU; plain text and code take milliseconds.
_LINEAR_LOADERS = frozenset({"text", "markdown", "code"})
IN_PROCESS_BYTES = 300_000


# A process that serves no other thread (a batch worker) loads a linear loader's file of at most this many bytes
# in-process, stopped by an alarm at load_seconds instead of in a child: a worker's fork cost ~12 ms a file, 17-20%
# of its CPU on a corpus with 15 Markdown files over 300 KB in 331 (benchmarks/NOTES.md). Past it, a child's
# memory ceiling is worth its fork (markdown-it's tokens take many times a large file's bytes).
ALONE_IN_PROCESS_BYTES = 4_000_000


def load_needs_child(file_name: str, size: int | None, *, in_process_bytes: int = IN_PROCESS_BYTES) -> bool:
    """Whether loading a file of ``size`` bytes (None: not a regular file) must run in a child that can be stopped.

    Everything but a small text, Markdown or code file does (at most ``in_process_bytes``): a 277 KB DOCX can
    unpack to gigabytes, a PDF's streams can inflate, a parser in C holds the GIL.
    """
    from core.loaders import loader_for

    if size is None or size > in_process_bytes:
        return True
    try:
        return loader_for(file_name).name not in _LINEAR_LOADERS
    except Exception:  # no loader for it: the load itself says so, in a child like any other
        return True


def load_bounded(
    read: Callable[[], list[Document]],
    file_name: str,
    size: int | None,
    limits: Limits = DEFAULT_LIMITS,
    *,
    alone: bool = False,
) -> list[Document]:
    """``read()`` (a :func:`core.loaders.load_bytes` or ``load`` call for a file of ``size`` bytes), in a child
    stopped after ``limits.load_seconds`` or beyond ``limits.work_memory_mb`` (:mod:`core.runtime.bounded`) unless
    :func:`load_needs_child` finds the work small.

    ``alone``: this process serves no other thread and this is its main thread (a batch worker); a linear
    loader's file of up to :data:`ALONE_IN_PROCESS_BYTES` is then read here under an alarm at
    ``limits.load_seconds`` (:func:`core.runtime.bounded.run_with_alarm`: those loaders are pure Python).
    """
    if not load_needs_child(file_name, size):
        return read()
    from core.runtime.bounded import run_bounded, run_with_alarm

    if alone and not load_needs_child(file_name, size, in_process_bytes=ALONE_IN_PROCESS_BYTES):
        return run_with_alarm(read, file_name=file_name, what="loading it", seconds=limits.load_seconds,
                              seconds_name="load_seconds")
    from core.loaders.packed import pack, unpack

    # Packed: the documents cross the pipe as a few flat buffers, so taking them in never holds this process
    # (the server) for long (core.loaders.packed).
    return unpack(
        run_bounded(
            lambda: pack(read()),
            file_name=file_name,
            what="loading it",
            seconds=limits.load_seconds,
            memory_mb=limits.work_memory_mb,
            seconds_name="load_seconds",
        )
    )


def _regular_size(path: Path) -> int | None:
    try:
        status = path.stat()
    except OSError:  # the load says why, in a child
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def file_name_of(document: Document) -> str:
    """How an error names a document: its file name, else its id."""
    return str(document.metadata.get("file_name") or document.id)
