"""What every splitter shares: the Splitter base and its sizing parameters (the Span it cuts lives in ``nodes``).

A splitter computes spans ``(start, end)`` into the document's text;
:func:`core.splitters.nodes.build_nodes` turns spans into nodes with
SOURCE/PREVIOUS/NEXT relationships, inherited metadata, pages and table headers.
The pieces a splitter cuts and the plain packing rule are in
:mod:`core.splitters.pieces`; the speed code lives in :mod:`core.splitters.fast`,
each piece beside the plain rule it must equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from core.errors import ConfigError
from core.params import Configurable, param
from core.schema import Document, MetadataMode, Node
from core.splitters.compat import NONE, compat_nodes
from core.splitters.fast.gc_pause import gc_paused
from core.splitters.nodes import Span, build_nodes
from core.splitters.semantic_analysis import DISTANCE_VIEW, CurveView
from core.tokens.token_index import index_held
from core.tokens.tokenizers import TOKENIZER_NAMES, SizeFn, Tokenizer, get_tokenizer
from core.translate.framework_code import langchain_recursive
from core.translate.snippet import CodeSnippet, call, split_with


@dataclass(frozen=True)
class Splitter(Configurable):
    """Base of every splitter (node parser).

    Subclasses implement :meth:`spans`; those that build more than a flat chain
    (e.g. hierarchical) override :meth:`split_document`.
    """

    # True for splitters that never cut inside a table row (see :func:`protected_cuts`).
    keeps_table_rows: ClassVar[bool] = False
    # True for splitters that embed the whole text (so the embedding limit applies).
    embeds_text: ClassVar[bool] = False
    # The kinds of a document's elements this splitter reads (None: any). A loader may leave out the others
    # where nothing else reads them (core.loaders.base.reading_elements: a batch without extractors).
    # A subclass that reads more declares it.
    elements_read: ClassVar[frozenset[str] | None] = None
    # What the pages show besides the chunks; they ask these, never a splitter's name.
    # Nodes come at several sizes, linked PARENT/CHILD, each with ``level`` metadata (0 = the largest):
    has_levels: ClassVar[bool] = False
    # Each node holds the ``window_size`` sentences on either side under ``window_metadata_key``:
    has_windows: ClassVar[bool] = False
    # ``analyze(document)`` gives the distances and the threshold behind the cuts, drawn as ``curve_view`` says:
    has_breakpoint_curve: ClassVar[bool] = False
    curve_view: ClassVar[CurveView] = DISTANCE_VIEW
    # It splits documents that can hold tables, so a node may carry ``table_header`` (core.splitters.nodes):
    reads_tables: ClassVar[bool] = True
    # The parameter values a framework's own splitter defaults to, under a label naming it, so a
    # user can start from them in one click. The algorithm stays this splitter's (sizes in its units).
    framework_defaults: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    # Measured (benchmarks/light_splits.py): once its tokenizer has indexed a text (or when it counts characters),
    # this splitter's work on it, even on hostile text, is cheap per character (see :meth:`split_is_light`).
    light_once_indexed: ClassVar[bool] = False

    include_metadata: bool = param(True, "Nodes inherit the document's metadata.", advanced=True)
    include_prev_next_rel: bool = param(True, "Link consecutive nodes with PREVIOUS/NEXT.", advanced=True)

    @property
    def view_hidden_keys(self) -> tuple[str, ...]:
        """Metadata keys this splitter's nodes keep out of both readers' views (a sentence window's window)."""
        return ()

    def mirror(self) -> Any:
        """The framework engine whose call this splitter's ``compat`` mode reproduces, with the same settings
        (:func:`core.splitters.compat.mirror_engine`); None when it cuts its own way. Export writes the engine's call.
        """
        return None

    def split_is_light(self, text: str) -> bool:
        """Whether splitting ``text`` is cheap per character: the splitter says so once its tokenizer pass is done
        (``light_once_indexed``), cuts its own way (no ``compat`` mode), sizes with a tokenizer of its own (not a
        size function), and that tokenizer counts characters or holds the text's index
        (:func:`core.tokens.token_index.index_held`). :func:`core.documents.bounded.split_needs_child` lets such a split
        run in-process on more characters."""
        if not self.light_once_indexed or getattr(self, "compat", NONE) != NONE:
            return False
        name = self.size_unit
        return isinstance(name, str) and index_held(get_tokenizer(name), text)

    def unsuited_reason(self, document: Document) -> str | None:
        """Why this splitter cannot do its job on ``document`` (e.g. no headings to cut at), else None.

        The pages say it beside the result rather than let one node stand for a whole file.
        """
        return None

    def split(self, documents: Sequence[Document]) -> list[Node]:
        nodes: list[Node] = []
        # Nodes form no reference cycles: the collector's rescans of them only cost time (fast/gc_pause.py).
        with gc_paused():
            for document in documents:
                nodes.extend(self.split_document(document))
        return nodes

    def split_document(self, document: Document) -> list[Node]:
        spans = self.node_spans(document)
        if spans is None:  # a compat mode that keeps the framework's text: its chunks, placed and marked
            return compat_nodes(self, document, self.compat_chunks(document))
        return self.nodes_from_spans(document, spans)

    def spans(self, document: Document) -> list[Span]:
        raise NotImplementedError

    def node_spans(self, document: Document) -> Sequence[Span | tuple[int, int]] | None:
        """The spans :meth:`split_document` makes ``document``'s nodes of (with :meth:`nodes_from_spans`), or None
        where the nodes are a framework's chunks (a compat mode that keeps its text: ``compat_chunks``).

        A bounded split sends these from its child instead of the nodes (:func:`spans_of_nodes`). A subclass
        that overrides :meth:`split_document` overrides this too, or its spans are never asked for.
        """
        return self.spans(document)

    def nodes_from_spans(self, document: Document, spans: Sequence[Span | tuple[int, int]]) -> list[Node]:
        """The nodes of ``document`` at ``spans``, with this splitter's metadata and links (:func:`build_nodes`)."""
        return build_nodes(
            document,
            spans,
            include_metadata=self.include_metadata,
            include_prev_next_rel=self.include_prev_next_rel,
        )

    @property
    def size_limit(self) -> int | None:
        """The size no node should exceed, in :attr:`size_unit` (the metrics flag nodes over it); None: no limit."""
        return None

    @property
    def size_unit(self) -> str | SizeFn:
        """What sizes count: a tokenizer's name, or the caller's size function (a splitter's ``tokenizer``, if it has one)."""
        return getattr(self, "tokenizer", "characters")

    @property
    def overlap_limit(self) -> int | None:
        """The most :attr:`size_unit` units two consecutive nodes may share; None when the splitter does not bound it."""
        return None

    @property
    def level_sizes(self) -> tuple[int, ...]:
        """The size limit of each level of nodes, largest first (the node-count estimate adds them up)."""
        return (self.size_limit,) if self.size_limit else ()

    def llamaindex(self, code: CodeSnippet) -> str:
        """The LlamaIndex node parser that does this splitter's job, as Python; notes say where it differs.

        Without an equivalent (a plugin), a SentenceSplitter at this splitter's size stands in
        (at LlamaIndex's defaults, 1024 and 20, when it has no size).
        """
        code.note(
            f"{self.name}: a ChunkScope plugin with no LlamaIndex equivalent; SentenceSplitter stands in.", at_call=True
        )
        code.use("from llama_index.core.node_parser import SentenceSplitter")
        size, overlap = self._stand_in_sizes(1024, 20)
        return call("SentenceSplitter", chunk_size=size, chunk_overlap=overlap)

    def langchain(self, code: CodeSnippet) -> str:
        """The LangChain lines that cut ``documents`` into ``chunks``; notes say where they differ.

        Without an equivalent (a plugin), a RecursiveCharacterTextSplitter at this splitter's
        size stands in (at the character splitter's defaults when it has no size).
        """
        code.note(
            f"{self.name}: a ChunkScope plugin with no LangChain equivalent; RecursiveCharacterTextSplitter stands in.",
            at_call=True,
        )
        size, overlap = self._stand_in_sizes(SizedSplitter.chunk_size, SizedSplitter.chunk_overlap)
        return split_with(langchain_recursive(code, size, overlap))

    def _stand_in_sizes(self, chunk_size: int, chunk_overlap: int) -> tuple[int, int]:
        """This splitter's size and overlap for a stand-in; the given ones where it has none."""
        if self.size_limit is None:
            return chunk_size, chunk_overlap
        return self.size_limit, chunk_overlap if self.overlap_limit is None else self.overlap_limit


# Sizing is declared once: every splitter's chunk_size, chunk_overlap and tokenizer come from these,
# with the splitter's own default (and, for chunk_size, whether 0 is allowed to mean "no limit").
MAX_CHUNK_SIZE = 1_000_000


def chunk_size_param(default: int, help: str | None = None, *, ge: int = 1) -> Any:
    """The ``chunk_size`` parameter; ``ge=0`` lets 0 mean no limit. ``help`` says the unit where it is not the
    tokenizer's (an engine counts as its framework does)."""
    no_limit = "; 0 means no limit" if ge == 0 else ""
    return param(
        default,
        help or f"Largest chunk, in the tokenizer's units{no_limit}.",
        ge=ge,
        le=MAX_CHUNK_SIZE,
        unset="no limit" if ge == 0 else None,
    )


def chunk_overlap_param(default: int, help: str | None = None) -> Any:
    """The ``chunk_overlap`` parameter (below ``chunk_size``: :func:`check_overlap`)."""
    return param(
        default,
        help or "Units consecutive chunks share, in the tokenizer's units; below the chunk size.",
        ge=0,
        le=MAX_CHUNK_SIZE,
    )


def tokenizer_param(default: str, *, advanced: bool = False) -> Any:
    """The ``tokenizer`` parameter: a name in configs; from Python, any ``Callable[[str], int]`` as well."""
    return param(
        default,
        "What sizes count: characters, whitespace words, the embedding model's tokens, or tiktoken's (cl100k, o200k).",
        choices=TOKENIZER_NAMES,
        advanced=advanced,
    )


@dataclass(frozen=True)
class SizedSplitter(Splitter):
    """A splitter that packs text into chunks of at most ``chunk_size`` tokens."""

    chunk_size: int = chunk_size_param(1000)
    chunk_overlap: int = chunk_overlap_param(200)
    tokenizer: str | SizeFn = tokenizer_param("characters")

    @property
    def size_limit(self) -> int | None:
        return self.chunk_size

    @property
    def overlap_limit(self) -> int | None:
        return self.chunk_overlap

    def validate(self) -> None:
        check_overlap(self)

    def get_tokenizer(self) -> Tokenizer:
        return get_tokenizer(self.tokenizer)

    def budget_after_metadata(self, document: Document, used: int, counted: str, remedy: str) -> int:
        """``chunk_size`` less the ``used`` units of metadata a node of ``document`` carries: the one metadata
        budget of the metadata-aware splitters. ``counted`` says how the metadata was counted, ``remedy`` the
        way out besides a larger chunk_size; a budget of nothing is refused with both."""
        budget = self.chunk_size - used
        if budget <= 0:
            where = document.metadata.get("file_name") or document.id
            unit = {"characters": "characters", "words": "words"}.get(self.tokenizer, "tokens")
            raise ConfigError(
                f"{self.name}: the metadata of {where}{counted} is {used} {unit} long, which leaves no room in "
                f"chunk_size {self.chunk_size}; raise chunk_size, {remedy}"
            )
        return budget


def llamaindex_metadata_length(document: Document, tokenizer: Tokenizer) -> int:
    """What LlamaIndex's metadata-aware splitters subtract from chunk_size: the tokens of the longer of the
    document's LLM and EMBED metadata strings (``MetadataAwareTextSplitter._get_metadata_str``)."""
    llm = document.get_metadata_str(MetadataMode.LLM)
    embed = document.get_metadata_str(MetadataMode.EMBED)
    longest = embed if len(embed) > len(llm) else llm
    return tokenizer.count(longest) if longest else 0


def check_overlap(splitter: Any) -> None:
    """ChunkScope's one overlap rule, for every sized splitter and the framework engines: below chunk_size.

    The frameworks refuse only a larger overlap; an equal one only repeats whole
    chunks, so it is refused here with the same sentence as everywhere else.
    """
    if splitter.chunk_overlap >= splitter.chunk_size:
        raise ConfigError(
            f"{splitter.name}: chunk_overlap ({splitter.chunk_overlap}) must be smaller than chunk_size ({splitter.chunk_size})"
        )


def spans_of_nodes(splitter: Splitter, document: Document) -> Sequence[Span | tuple[int, int]] | None:
    """``splitter.node_spans(document)``, where ``splitter.split([document]) == splitter.nodes_from_spans(document,
    spans)`` holds by construction: the class that makes the nodes (``split``, ``split_document``) is the one that
    says which spans they are built from. None otherwise, and where the splitter makes them another way.

    What a bounded child sends back instead of the nodes: spans pickle in a fraction of the time (3,585
    sentence nodes of 1 MB: 0.3 against 11 ms, and 0.4 against 12 ms to read), and the nodes are built here.
    """
    cls = type(splitter)
    maker = _defined_by(cls, "split_document")
    if _defined_by(cls, "split") is not Splitter or maker not in (Splitter, _defined_by(cls, "node_spans")):
        return None
    return splitter.node_spans(document)


def _defined_by(cls: type, name: str) -> type:
    return next(klass for klass in cls.__mro__ if name in vars(klass))
