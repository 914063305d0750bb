"""Where a load or a split of untrusted input runs: in this process when the work is known to be small, else in a
forked child stopped at a deadline or a memory ceiling (:mod:`core.runtime.bounded`), with the same result.

:func:`split_needs_child` and :func:`load_needs_child` are the rules (what is small, and why); :func:`split_bounded`
and :func:`load_bounded` apply them. The pipeline that calls them is :mod:`core.documents`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

from core.limits import DEFAULT_LIMITS, Limits
from core.runtime.memo import added_to_tables, keep_in_tables, mark_tables
from core.schema import Document, Node
from core.splitters.size_check import check_node_count

if TYPE_CHECKING:
    from core.splitters.base import Splitter


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


def file_name_of(document: Document) -> str:
    """How an error names a document: its file name, else its id."""
    return str(document.metadata.get("file_name") or document.id)
