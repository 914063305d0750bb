"""How many of the app's chunks an exported script's splitter rebuilds, found by running it here.

Where a framework has no equivalent, the script's splitter is a stand-in, and
"it differs" says little: this runs the very splitter code the script holds
(:func:`core.output.splitter_code.splitter_code`: its imports, its setup and its call, as
:mod:`core.translate.snippet` builds them, every value a literal) on the documents the app
split, and counts the app's chunks it gives back. The Export page shows the count
("the LangChain stand-in would change 12 of 48 chunks") when asked, not on every
run: a framework splitter over a corpus takes a while.

Each document is given to the framework as the script gives it: its text (an
HTML page's source where the app kept it), its metadata, excluded keys and
templates (LlamaIndex's metadata-aware splitters shrink their budget by them).

``bounded`` (the app: settings and documents from anyone) runs the script's splitter in a
child stopped at a deadline and a memory ceiling (:mod:`core.runtime.bounded`): the framework's
``re`` with a user's separator can backtrack for hours holding the GIL, and in the server's
process that froze every session. Only the chunk texts come back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.config import PipelineConfig
from core.documents import prepare_documents
from core.documents.bounded import file_name_of, split_bounded
from core.errors import ConfigError
from core.limits import DEFAULT_LIMITS, Limits
from core.loaders.readers.script import framework_suffixes
from core.output.export_own_split import own_split_applies
from core.schema import Document, Node
from core.tokens.bundled_data import bundled_encodings, tiktoken_encoding, use_bundled_nltk_data
from core.translate.snippet import MODEL_SETUP, CodeSnippet

LIBRARIES = ("LlamaIndex", "LangChain")


@dataclass(frozen=True)
class ExportCheck:
    """The app's chunks against those of a script's splitter, on the same documents."""

    library: str
    app_chunks: int
    script_chunks: int
    # App chunks the script gives too, with the same text (each counted as often as both give it).
    identical: int
    same_order: bool
    # Whether the script cuts with ChunkScope's own splitter where ChunkScope is installed (the counts above are
    # then its translation's, which runs without ChunkScope: core.output.export_own_split).
    own_split: bool = False

    @property
    def changed(self) -> int:
        """App chunks the script does not give back."""
        return self.app_chunks - self.identical

    @property
    def exact(self) -> bool:
        return self.changed == 0 and self.script_chunks == self.app_chunks

    def sentence(self) -> str:
        """One line for the page: how many chunks the script's splitter changes, of how many."""
        if self.own_split:
            translation = (
                "so does its translation"
                if self.exact
                else f"its translation would change {self.changed:,} (it makes {self.script_chunks:,})"
            )
            return (
                f"With ChunkScope installed, the {self.library} script cuts with ChunkScope's own splitter: all "
                f"{self.app_chunks:,} chunks. Without it, {translation}."
            )
        if self.exact:
            order = "" if self.same_order else ", in another order"
            return f"The {self.library} script rebuilds all {self.app_chunks:,} chunks{order}."
        return (
            f"The {self.library} script would change {self.changed:,} of {self.app_chunks:,} chunks "
            f"(it makes {self.script_chunks:,})."
        )


def check_export(
    config: PipelineConfig,
    documents: Sequence[Document],
    library: str,
    nodes: Sequence[Node] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    *,
    bounded: bool = False,
) -> ExportCheck:
    """Run the ``library`` script's splitter on ``documents`` and compare its chunks with the app's.

    ``nodes`` are the app's nodes of ``documents`` under ``config`` when already at
    hand (the Export page has them); otherwise they are split here. ``bounded``: the
    script's splitter (and the app's split, where it needs one) runs in a child,
    ``limits.split_seconds`` per document at most.
    """
    if library not in LIBRARIES:
        raise ConfigError(f"export check: library must be one of {', '.join(LIBRARIES)}, got {library!r}")
    prepared = prepare_documents(documents, config)
    if nodes is None:
        nodes = split_bounded(prepared, config.splitter, limits) if bounded else config.splitter.split(prepared)
    app = [node.text for node in nodes]
    if bounded:
        script = _script_chunks_bounded(config.splitter, library, prepared, limits)
    else:
        script = script_chunks(config.splitter, library, prepared)
    identical = sum((Counter(app) & Counter(script)).values())
    own = own_split_applies(config.splitter, library, framework_suffixes(config))
    return ExportCheck(library, len(app), len(script), identical, same_order=app == script, own_split=own)


def prepare_script_data() -> None:
    """The data a script loads from llama-index-core's files: tiktoken's encodings (loaded here first,
    tiktoken hands them out by name) and NLTK's folder (importing NLTK costs seconds). Loaded before the
    bounded child is forked, so it inherits them; no framework code runs."""
    for encoding in bundled_encodings():
        tiktoken_encoding(encoding)
    use_bundled_nltk_data()


def _script_chunks_bounded(splitter: Any, library: str, documents: Sequence[Document], limits: Limits) -> list[str]:
    """:func:`script_chunks` in a child stopped after ``limits.split_seconds`` per document or beyond
    ``limits.work_memory_mb``. One call for all the documents, as the script makes it (a hierarchy's
    script lists every level of every document in its own order)."""
    from core.runtime.bounded import run_bounded

    prepare_script_data()
    names = [file_name_of(document) for document in documents]
    return run_bounded(
        lambda: script_chunks(splitter, library, documents),
        file_name=names[0] if len(names) == 1 else f"{len(names)} documents",
        what=f"running the {library} script's splitter",
        seconds=limits.split_seconds * max(1, len(documents)),
        memory_mb=limits.work_memory_mb,
        seconds_name="split_seconds",
    )


def script_chunks(splitter: Any, library: str, documents: Sequence[Document]) -> list[str]:
    """The chunk texts the ``library`` script's splitter makes of ``documents``, in order (every level, if it has levels)."""
    from core.output.splitter_code import splitter_code

    code = CodeSnippet(library, "")
    body = splitter_code(splitter, code)
    prepare_script_data()
    namespace: dict[str, Any] = {"__name__": "chunkscope_export_check"}
    setup = [MODEL_SETUP] if code.needs_model else []
    try:
        exec("\n".join([*code.imports, *setup, *code.setup]), namespace)  # noqa: S102 - built by core.translate.snippet
        if library == "LlamaIndex":
            parser = eval(body, namespace)  # noqa: S307 - an expression core.translate.snippet built
            return _llamaindex_chunks(parser, [(document, _source(splitter, document)) for document in documents])
        return _langchain_chunks(body, namespace, [_source(splitter, document) for document in documents], documents)
    except Exception as exc:  # the framework's own failure, said as a sentence
        raise ConfigError(f"the {library} script's splitter failed here: {type(exc).__name__}: {exc}") from exc


def _source(splitter: Any, document: Document) -> str:
    """What the script's splitter reads: an HTML page's source where it reads markup, else the text the app split."""
    reads_markup = getattr(splitter, "reads_markup", False) or getattr(splitter, "script_reads_markup", False)
    return document.markup if reads_markup and document.markup is not None else document.text


def _llamaindex_chunks(parser: Any, sources: Sequence[tuple[Document, str]]) -> list[str]:
    from core.engines.llamaindex import llama_document

    texts: list[str] = []
    for document, source in sources:
        nodes = parser.get_nodes_from_documents([llama_document(document, source)])
        texts += [node.get_content() for node in nodes]
    return texts


def _langchain_chunks(
    body: str, namespace: dict[str, Any], sources: Sequence[str], documents: Sequence[Document]
) -> list[str]:
    from langchain_core.documents import Document as LangChainDocument

    namespace["documents"] = [
        LangChainDocument(page_content=source, metadata=dict(document.metadata))
        for source, document in zip(sources, documents, strict=True)
    ]
    exec(body, namespace)  # noqa: S102 - built by core.translate.snippet
    # A hierarchy's script keeps every level in all_chunks (and the smallest in chunks), as the app lists them all.
    chunks = namespace.get("all_chunks", namespace["chunks"])
    return [chunk.page_content for chunk in chunks]
