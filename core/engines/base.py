"""What every framework engine shares: the base class and chunks-to-nodes.

An engine runs one real framework splitter (LlamaIndex, LangChain, chonkie,
semchunk): it declares the framework's parameters once, with the framework's own
defaults, calls the framework once per document, and turns the chunks it returns
into nodes with :func:`framework_nodes`. Each node's text is the framework's text;
its span comes from :mod:`core.span_recovery`, and its ``span_status`` metadata says
whether ``text == document.text[start_char:end_char]`` (``exact``), the framework
changed the text (``rewritten``, the span covers the source it was aligned with),
or it could not be placed (``unplaced``, an empty span).

The node carries the framework's metadata (header paths, windows, …) and its
PARENT/CHILD links; the keys ChunkScope adds for its own views (``span_status``,
a hierarchy's ``level``) are hidden from the LLM and EMBED readers, so what they
read is what the framework's node gives them. ChunkScope's own derived keys
(``page_label``, ``table_header``) are not added: the framework does not add them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any, ClassVar

from core.codegen import Code, CodeSnippet, call, langchain_recursive, split_with
from core.errors import ConfigError
from core.schema import Document, Node, NodeRelationship
from core.span_recovery import SPAN_STATUS_KEY, RecoveredSpan, SpanRecovery, SpanStatus
from core.splitters.base import Span, Splitter, build_nodes, link_chain

# The frameworks' names for units -> ChunkScope's tokenizer names (core.tokenizers).
_UNITS = {"cl100k_base": "cl100k", "o200k_base": "o200k", "character": "characters", "word": "words"}


@cache
def framework_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (e.g. ``llama-index-core``), None if it is not installed."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def engine_summary(framework: str, distribution: str, what: str) -> str:
    """``"LlamaIndex 0.14.25 · SentenceSplitter: ..."``: the framework and its version beside what it does."""
    installed = framework_version(distribution)
    release = installed if installed else f"(not installed: pip install {distribution})"
    return f"{framework} {release} · {what}"


@dataclass
class FrameworkChunk:
    """One chunk as a framework returned it, before it has a span."""

    text: str
    # What the framework's node adds to the document's metadata (header path, window, ...).
    metadata: dict[str, Any] = field(default_factory=dict)
    # Keys the framework hides from the LLM / the embedding model (beyond the document's own).
    excluded_llm_metadata_keys: Sequence[str] = ()
    excluded_embed_metadata_keys: Sequence[str] = ()
    # The index of this chunk's parent in the same list (a hierarchy); parents come before their children.
    parent: int | None = None
    # Keys of ``metadata`` ChunkScope adds for its own views (e.g. a hierarchy's ``level``): hidden from both readers.
    own_keys: Sequence[str] = ()
    # Where the framework says the chunk starts in the text (chonkie's start_index, semchunk's offsets): taken
    # only when the text there is the chunk, else the chunk is placed by span recovery like any other.
    start: int | None = None


class FrameworkArg:
    """An argument whose value at run time is not its own Python text: a loaded tokenizer, an enum member, parsers.

    :meth:`value` is what the framework is called with; :meth:`code` writes the
    same argument as Python (its imports and setup go to ``code``).
    """

    def value(self) -> Any:
        raise NotImplementedError

    def code(self, code: CodeSnippet) -> Code:
        raise NotImplementedError


def run_values(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The framework's arguments as it is called with them: each :class:`FrameworkArg` by its value."""
    return {key: arg.value() if isinstance(arg, FrameworkArg) else arg for key, arg in kwargs.items()}


def code_values(kwargs: Mapping[str, Any], code: CodeSnippet) -> dict[str, Any]:
    """The same arguments as Python: each :class:`FrameworkArg` by its code (its imports go to ``code``)."""
    return {key: arg.code(code) if isinstance(arg, FrameworkArg) else arg for key, arg in kwargs.items()}


@dataclass(frozen=True)
class FrameworkSplitter(Splitter):
    """Base of the framework engines: a real framework splitter behind ChunkScope's Splitter API.

    Subclasses set the class attributes below, declare the framework's parameters
    (same names and defaults where the framework has them) and implement :meth:`chunks`.
    """

    # Who does the splitting: "LlamaIndex", the installed distribution, and the framework's class.
    framework: ClassVar[str] = ""
    distribution: ClassVar[str] = ""
    framework_class: ClassVar[str] = ""
    # "module:qualname" of the callable whose signature holds the framework's defaults.
    defaults_from: ClassVar[str] = ""
    # Our parameter -> the framework's argument it is passed as, declared with the framework's default.
    mirrored: ClassVar[Mapping[str, str]] = {}
    # Our parameters with no framework default to copy, and why (a test checks every parameter is in one of the two).
    own_params: ClassVar[Mapping[str, str]] = {}
    # The framework reads HTML markup (HTMLNodeParser, HTMLHeaderTextSplitter): it is given the page's source.
    reads_markup: ClassVar[bool] = False
    # LangChain's header splitters: split_text gives Documents, so LangchainNodeParser cannot wrap them.
    splits_to_documents: ClassVar[bool] = False

    @classmethod
    def title(cls) -> str:
        """The framework and its class, as its users know them: ``LlamaIndex SentenceSplitter``."""
        return f"{cls.framework} {cls.framework_class}"

    def chunks(self, document: Document) -> list[FrameworkChunk]:
        """The framework's chunks of ``document``, in its order (one call to the framework)."""
        raise NotImplementedError

    def source_text(self, document: Document) -> str:
        """What the framework is given: the document's text, or for an engine that reads markup, its markup.

        A document not loaded from HTML has no markup of its own: its text is read
        as markup, as the framework reads whatever text it is handed (and
        :meth:`unsuited_reason` says so). Spans are always found in the text.
        """
        if self.reads_markup and document.markup is not None:
            return document.markup
        return document.text

    def unsuited_reason(self, document: Document) -> str | None:
        if not self.reads_markup or document.markup is not None:
            return None
        name = document.metadata.get("file_name", "this document")
        kind = document.metadata.get("file_type")
        return (
            f"{self.framework}'s {self.framework_class} reads HTML markup, and {name}{f' ({kind})' if kind else ''} "
            "is not an HTML page, so its text is read as markup; pick a splitter that cuts text"
        )

    # -- the framework's object, built and written from one set of arguments ---------------------

    def framework_target(self) -> str:
        """``"module:qualname"`` of what :meth:`build_framework` calls: by default the class ``defaults_from`` reads."""
        return self.defaults_from.removesuffix(".__init__")

    def framework_kwargs(self) -> dict[str, Any]:
        """The framework's arguments, declared once: :meth:`build_framework` runs them, :meth:`framework_call` writes them.

        Values are plain Python (written with ``repr``) or :class:`FrameworkArg`.
        """
        raise NotImplementedError

    def build_framework(self) -> Any:
        """The framework's splitter: ``framework_target()(**framework_kwargs())``."""
        module, _, qualname = self.framework_target().partition(":")
        target: Any = import_module(module)
        for part in qualname.split("."):
            target = getattr(target, part)
        kwargs = self.framework_kwargs()
        return target(**run_values(kwargs))

    def split_document(self, document: Document) -> list[Node]:
        return framework_nodes(
            document,
            self.chunks(document),
            include_metadata=self.include_metadata,
            include_prev_next_rel=self.include_prev_next_rel,
        )

    def spans(self, document: Document) -> list[Span]:
        return [Span(node.start_char, node.end_char) for node in self.split_document(document)]

    @property
    def covers_text(self) -> bool:
        """True when the framework's chunks hold every non-whitespace character of the source."""
        return True

    @property
    def size_unit(self) -> str:
        """What the framework's sizes count, as ChunkScope's tokenizer name (``cl100k``, ``words``, ...)."""
        for name in ("tokenizer", "encoding_name", "token_counter"):
            if isinstance(unit := getattr(self, name, None), str):
                return _UNITS.get(unit, unit)
        return "characters"

    @property
    def level_sizes(self) -> tuple[int, ...]:
        """The framework's chunk size(s) in :attr:`size_unit`: the node-count guard (core.limits) estimates from them.

        Its overlap is left out (the framework bounds it its own way), so the
        estimate is low, never high: a fair request is not refused.
        """
        sizes = getattr(self, "chunk_sizes", None) or [getattr(self, "chunk_size", 0)]
        return tuple(size for size in sizes if size)

    @property
    def size_limit(self) -> int | None:
        """None: the framework's sizes are not counted in a unit ChunkScope measures (subclasses say when they are)."""
        return None

    @property
    def overlap_limit(self) -> int | None:
        """None: the framework bounds its overlap in its own way (separators, whole splits)."""
        return None

    # -- the code the Export page writes --------------------------------------------------

    def framework_call(self, code: CodeSnippet) -> str:
        """The call :meth:`build_framework` makes, as Python (its imports and setup go to ``code``)."""
        module, _, qualname = self.framework_target().partition(":")
        code.use(f"from {module} import {qualname.split('.')[0]}")
        kwargs = self.framework_kwargs()
        return call(qualname, **code_values(kwargs, code))

    def llamaindex(self, code: CodeSnippet) -> str:
        """LlamaIndex's engines: the call that ran. LangChain's: the same splitter in LlamaIndex's LangchainNodeParser."""
        if self.framework == "LlamaIndex":
            return self.framework_call(code)
        if self.framework == "LangChain" and not self.splits_to_documents:
            code.use("from llama_index.core.node_parser import LangchainNodeParser")
            return call("LangchainNodeParser", Code(self.framework_call(code)))
        code.note(
            f"{self.name}: ChunkScope ran {self.framework} {self.framework_class}, which LlamaIndex cannot run as a "
            "node parser; SentenceSplitter at its chunk size stands in."
        )
        code.use("from llama_index.core.node_parser import SentenceSplitter")
        return call("SentenceSplitter", chunk_size=getattr(self, "chunk_size", 1024), chunk_overlap=0)

    def langchain(self, code: CodeSnippet) -> str:
        """LangChain's engines: the call that ran; the others' stand-in says what ran instead."""
        if self.framework == "LangChain":
            return split_with(self.framework_call(code))
        code.note(
            f"{self.name}: ChunkScope ran {self.framework} {self.framework_class}, which LangChain has no splitter for; "
            "RecursiveCharacterTextSplitter at its chunk size (in characters) stands in."
        )
        return split_with(langchain_recursive(code, getattr(self, "chunk_size", 4000), 0))

    def failed(self, exc: Exception) -> ConfigError:
        """The framework's own error, as a sentence naming the engine.

        Most come from settings (LlamaIndex's "metadata longer than chunk size"); a
        framework that fails on the text itself (semchunk recursing too deep) is
        said the same way, so a page shows the sentence instead of a traceback.
        """
        return ConfigError(f"{self.name}: {self.framework} {self.framework_class} refused: {type(exc).__name__}: {exc}")


def _stated_spans(text: str, chunks: Sequence[FrameworkChunk]) -> list[RecoveredSpan] | None:
    """The spans the framework stated, when every chunk has one, holds the chunk there, and starts in order.

    chonkie and semchunk track where each chunk starts, so searching the text again
    would only cost time (the overhead issue 14 bounds); one wrong offset and the
    whole split goes through span recovery instead.
    """
    spans = []
    previous = 0
    for chunk in chunks:
        start = chunk.start
        if start is None or start < previous or chunk.parent is not None:
            return None
        end = start + len(chunk.text)
        if text[start:end] != chunk.text:
            return None
        spans.append(RecoveredSpan(start, end, SpanStatus.EXACT))
        previous = start
    return spans


def _recovered_spans(
    text: str, chunks: Sequence[FrameworkChunk], groups: dict[int | None, list[int]]
) -> list[RecoveredSpan | None]:
    """Each chunk placed by span recovery: the top level in the text, a parent's children inside its span."""
    recovery = SpanRecovery(text)
    found: list[RecoveredSpan | None] = [None] * len(chunks)
    # A parent's index is below its children's, and its own group's key below its index: in key order,
    # every parent is placed before the group of its children.
    for parent in sorted(groups, key=lambda key: -1 if key is None else key):
        members = groups[parent]
        start, end = 0, len(text)
        if parent is not None:
            outer = found[parent]
            if outer is not None and outer.status is not SpanStatus.UNPLACED:
                start, end = outer.start, outer.end
        for index, span in zip(members, recovery.recover([chunks[i].text for i in members], start, end), strict=True):
            found[index] = span
    return found


def no_headings_reason(engine: FrameworkSplitter, document: Document) -> str:
    """What the pages say beside a heading splitter's result on a document without the headings it cuts at."""
    name = document.metadata.get("file_name", "this document")
    kind = document.metadata.get("file_type")
    return (
        f"{engine.framework}'s {engine.framework_class} cuts at Markdown headings, and {name}"
        f"{f' ({kind})' if kind else ''} has none it recognises, so the whole document is one chunk; "
        "pick a splitter that cuts by size"
    )


def check_overlap(engine: Any) -> None:
    """ChunkScope's one overlap rule, for the engines as for every sized splitter: below chunk_size.

    The frameworks refuse only a larger overlap; an equal one only repeats whole
    chunks, so it is refused here with the same sentence as everywhere else.
    """
    if engine.chunk_overlap >= engine.chunk_size:
        raise ConfigError(
            f"{engine.name}: chunk_overlap ({engine.chunk_overlap}) must be smaller than chunk_size ({engine.chunk_size})"
        )


def framework_nodes(
    document: Document,
    chunks: Sequence[FrameworkChunk],
    *,
    include_metadata: bool = True,
    include_prev_next_rel: bool = True,
) -> list[Node]:
    """Nodes from a framework's chunks: recovered spans, the framework's text, metadata and links.

    Chunks without a parent are placed in the document in order; the children of
    one parent are placed in order inside the parent's span. PREVIOUS/NEXT link
    the chunks of one group (all of them, for a flat split), as the frameworks do.
    """
    text = document.text
    groups: dict[int | None, list[int]] = {}
    if any(chunk.parent is not None for chunk in chunks):
        for index, chunk in enumerate(chunks):
            if chunk.parent is not None and not 0 <= chunk.parent < index:
                raise ValueError(f"chunk {index}'s parent {chunk.parent} does not come before it")
            groups.setdefault(chunk.parent, []).append(index)
    elif chunks:
        groups[None] = list(range(len(chunks)))  # a flat split (most engines): one group, in order
    found = _stated_spans(text, chunks) or _recovered_spans(text, chunks, groups)
    # A chunk without metadata of its own shares its status's dict: the node builder copies it into each node's own.
    status_only = {status: {SPAN_STATUS_KEY: status.value} for status in SpanStatus}
    spans = [
        (
            span.start,
            span.end,
            {**chunk.metadata, **status_only[span.status]} if chunk.metadata else status_only[span.status],
        )
        for chunk, span in zip(chunks, found, strict=True)
        if span is not None
    ]
    assert len(spans) == len(chunks)

    # The framework adds no page labels or table headers: build from the text and metadata alone.
    # Each node hides the document's keys, then its chunk's and the span status (each once, in that order).
    def hidden(document_keys: Sequence[str], chunk: FrameworkChunk, extra: Sequence[str]) -> list[str]:
        added = dict.fromkeys([*extra, SPAN_STATUS_KEY, *chunk.own_keys])
        return [*document_keys, *(key for key in added if key not in document_keys)]

    llm_keys, embed_keys = document.excluded_llm_metadata_keys, document.excluded_embed_metadata_keys
    first = chunks[0] if chunks else FrameworkChunk("")
    shared = all(
        (c.excluded_llm_metadata_keys, c.excluded_embed_metadata_keys, c.own_keys)
        == (first.excluded_llm_metadata_keys, first.excluded_embed_metadata_keys, first.own_keys)
        for c in chunks
    )
    bare = replace(
        document,
        elements=[],
        pages=[],
        # When every chunk hides the same keys (most engines), the node builder's own copies are the final lists.
        excluded_llm_metadata_keys=hidden(llm_keys, first, first.excluded_llm_metadata_keys) if shared else llm_keys,
        excluded_embed_metadata_keys=(
            hidden(embed_keys, first, first.excluded_embed_metadata_keys) if shared else embed_keys
        ),
    )
    # A flat split (most engines) is one chain: the node builder links it as it builds.
    flat = list(groups) == [None]
    nodes = build_nodes(
        bare, spans, include_metadata=include_metadata, include_prev_next_rel=include_prev_next_rel and flat
    )
    exact = SpanStatus.EXACT
    if not shared or any(span is not None and span.status is not exact for span in found):
        for node, chunk, span in zip(nodes, chunks, found, strict=True):
            if span is not None and span.status is not exact:
                node.text = chunk.text
            if not shared:
                node.excluded_llm_metadata_keys = hidden(llm_keys, chunk, chunk.excluded_llm_metadata_keys)
                node.excluded_embed_metadata_keys = hidden(embed_keys, chunk, chunk.excluded_embed_metadata_keys)
    for parent, members in groups.items():
        if include_prev_next_rel and not flat:
            link_chain([nodes[i] for i in members])
        if parent is not None:
            children = nodes[parent].relationships.setdefault(NodeRelationship.CHILD, [])
            for index in members:
                nodes[index].relationships[NodeRelationship.PARENT] = nodes[parent].id
                children.append(nodes[index].id)  # type: ignore[union-attr]
    return nodes
