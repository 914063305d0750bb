"""Hierarchical splitter: the same text at several sizes, linked parent to child.

As LlamaIndex's HierarchicalNodeParser does: level 0 packs the document into
chunks of ``chunk_sizes[0]`` tokens with the ``sentence`` splitter; each further
level splits every node of the level above with ``chunk_sizes[k]``. A child's
span lies inside its parent's, so ``text == document.text[start:end]`` holds at
every level. Nodes carry ``level`` metadata (0 = root), a PARENT id and a CHILD
id list; ids are unique across levels (``doc#L1-7``). :meth:`split_document`
returns every level, roots first. PREVIOUS/NEXT link the nodes of one level, in
order of their start, so each level is a chain of its own (a compatible mode keeps
LlamaIndex's order and links: see the class).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

from core.errors import ConfigError
from core.params import param
from core.schema import Document, Element, Node, NodeRelationship, Page
from core.spans.recovery import SpanStatus, recover_spans
from core.splitters.base import MAX_CHUNK_SIZE, Span, Splitter, chunk_overlap_param, tokenizer_param
from core.splitters.compat import (
    LLAMAINDEX,
    NONE,
    CompatChunk,
    compat_param,
    llamaindex_tokenizer_name,
    mark_rewritten,
    mirror_engine,
    refuse_unmirrored,
)
from core.splitters.nodes import build_nodes, link_chain
from core.splitters.registry import SPLITTERS
from core.tokens.tokenizers import SizeFn
from core.translate.framework_code import langchain_recursive, llamaindex_tokenizer
from core.translate.snippet import Code, CodeSnippet, call, indent, literal

MAX_LEVELS = 6


def check_levels(owner: str, sizes: tuple[int, ...], overlap: int, *, descending: bool) -> None:
    """Raise ConfigError unless a hierarchy's chunk sizes are 1 to 6 levels (largest first, if ``descending``),
    each bigger than the overlap. Shared with LlamaIndex's hierarchical engine, which does not need the order."""
    if not sizes:
        raise ConfigError(f"{owner}: chunk_sizes needs at least one size")
    if len(sizes) > MAX_LEVELS:
        raise ConfigError(f"{owner}: chunk_sizes has {len(sizes)} levels; at most {MAX_LEVELS} are allowed")
    for bigger, smaller in pairwise(sizes) if descending else ():
        if smaller >= bigger:
            raise ConfigError(f"{owner}: chunk_sizes must get smaller level by level, got {smaller} after {bigger}")
    if overlap >= min(sizes):
        raise ConfigError(
            f"{owner}: chunk_overlap ({overlap}) must be smaller than every chunk size (smallest: {min(sizes)})"
        )


@SPLITTERS.register
@dataclass(frozen=True)
class HierarchicalSplitter(Splitter):
    """Parent/child nodes at several chunk sizes (for auto-merging retrieval).

    ``compat="llamaindex"`` cuts as LlamaIndex's HierarchicalNodeParser does: every
    level is the sentence splitter's ``compat="llamaindex"`` mode, each child level
    splits its parent node's text (LlamaIndex's, where it is not the source slice),
    and each level lists (and links PREVIOUS/NEXT) its nodes parent by parent, as
    LlamaIndex does, rather than in order of their start.
    """

    name = "hierarchical"
    keeps_table_rows = True  # every level is the sentence splitter's native cut, which never cuts a row
    summary = "The same text at several chunk sizes (e.g. 2048 and 250 tokens), children linked to parents."
    has_levels = True

    # Two levels, not LlamaIndex's (2048, 512, 128): leaves the embedding model reads whole (a leaf's EMBED view,
    # its keys counted, is at most 250 model tokens, inside all-MiniLM-L6-v2's 254), and their 2048-token parents,
    # returned by the default retrieval: the best general configuration of benchmarks/RESULTS.md ("The defaults a
    # user meets").
    chunk_sizes: tuple[int, ...] = param(
        (2048, 250),
        "Chunk size of each level, largest first (root level first). LlamaIndex's default is 2048, 512, 128.",
        ge=1,
        le=MAX_CHUNK_SIZE,
    )
    # Between consecutive chunks of one parent, at every level.
    chunk_overlap: int = chunk_overlap_param(20)
    tokenizer: str | SizeFn = tokenizer_param("model")
    metadata_aware: bool = param(
        True, "Leave room in every chunk for the document's metadata as readers see it (as LlamaIndex does)."
    )
    compat: str = compat_param(LLAMAINDEX, sets="llamaindex: every level is the sentence splitter's llamaindex mode")

    def validate(self) -> None:
        check_levels(self.name, self.chunk_sizes, self.chunk_overlap, descending=True)
        refuse_unmirrored(
            self,
            (not self.metadata_aware, "leaves room for the metadata as LlamaIndex always does", "metadata_aware=false"),
        )

    @property
    def size_limit(self) -> int | None:
        """The root level's size: no node at any level is bigger."""
        return self.chunk_sizes[0]

    @property
    def overlap_limit(self) -> int | None:
        return self.chunk_overlap

    @property
    def level_sizes(self) -> tuple[int, ...]:
        return self.chunk_sizes

    def mirror(self) -> Any:
        return mirror_engine(
            self,
            "llamaindex.hierarchical",
            chunk_sizes=tuple(self.chunk_sizes),
            chunk_overlap=self.chunk_overlap,
            tokenizer=llamaindex_tokenizer_name(self.tokenizer),
        )

    def llamaindex(self, code: CodeSnippet) -> str:
        code.use(
            "from llama_index.core.node_parser import HierarchicalNodeParser",
            "from llama_index.core.node_parser import SentenceSplitter",
        )
        tokenizer = llamaindex_tokenizer(code, self.tokenizer)
        ids = [f"chunk_size_{size}" for size in self.chunk_sizes]
        parsers = "".join(
            f"    {literal(ident)}: "
            f"{call('SentenceSplitter', chunk_size=size, chunk_overlap=self.chunk_overlap, tokenizer=tokenizer)},\n"
            for ident, size in zip(ids, self.chunk_sizes, strict=True)
        )
        return call(
            "HierarchicalNodeParser.from_defaults",
            node_parser_ids=ids,
            node_parser_map=Code("{\n" + parsers + "}"),
        )

    def langchain(self, code: CodeSnippet) -> str:
        code.note(
            "hierarchical: LangChain has no hierarchical node parser (ParentDocumentRetriever covers two levels "
            "with a vector store); the loop below splits each level's chunks with the next size and records the parent.",
            at_call=True,
        )
        splitters = ",\n    ".join(
            indent(langchain_recursive(code, size, min(self.chunk_overlap, size - 1), self.tokenizer))
            for size in self.chunk_sizes
        )
        return "\n".join(
            [
                f"levels = [\n    {splitters},\n]",
                "parents, all_chunks = documents, []",
                "for level, splitter in enumerate(levels):",
                "    children = []",
                "    for parent_index, parent in enumerate(parents):",
                "        for child in splitter.split_documents([parent]):",
                "            child.metadata.update(level=level, parent=parent_index if level else None)",
                "            children.append(child)",
                "    all_chunks += children",
                "    parents = children",
                "chunks = parents  # the smallest level, which ChunkScope retrieves over",
            ]
        )

    def level_splitter(self, level: int) -> Splitter:
        """The sentence splitter that cuts the nodes of ``level``."""
        return SPLITTERS.create(
            "sentence",
            chunk_size=self.chunk_sizes[level],
            chunk_overlap=self.chunk_overlap,
            tokenizer=self.tokenizer,
            include_metadata=self.include_metadata,
            metadata_aware=self.metadata_aware,
            **({"compat": self.compat} if self.compat != NONE else {}),
        )

    def spans(self, document: Document) -> list[Span]:
        """The leaf level's spans (what a flat view of this splitter would show)."""
        return [
            Span(node.start_char, node.end_char, {"level": node.metadata["level"]})
            for node in leaf_nodes(self.split_document(document))
        ]

    def split_document(self, document: Document) -> list[Node]:
        try:
            return self._split_levels(document)
        except ConfigError as exc:  # say which setting of ours the sentence splitter tripped on
            raise ConfigError(f"{self.name}: {exc}".replace("sentence: ", "", 1)) from exc

    def _split_levels(self, original: Document) -> list[Node]:
        document = original
        all_nodes: list[Node] = []
        parents: list[Node] = []
        for level in range(len(self.chunk_sizes)):
            splitter = self.level_splitter(level)
            extra = {"level": level}
            # The table headers this level's nodes repeat, fitted once for the whole document (as they show it):
            # every parent's part fits them unchanged, so its budget counts the header its nodes get.
            document = _fitted_for(splitter, original, extra)
            # (span, parent, text) triples; the root level's parent is the document itself; the text, where it is
            # not the span's slice (a compatible mode's rewritten chunk).
            cut: list[tuple[Span, Node | None, str | None]] = []
            if self.compat != NONE:
                for parent in parents if level else [None]:
                    for chunk in compat_chunks_within(splitter, document, parent):
                        cut.append((Span(chunk.start, chunk.end, extra), parent, chunk.text))
            elif level == 0:
                sized = document.with_metadata({**document.metadata, **extra})  # a node shows its level: budget it
                cut = [(Span(s[0], s[1], extra), None, None) for s in splitter.spans(sized)]
            else:
                for parent in parents:
                    for s in spans_within(splitter, document, parent.start_char, parent.end_char, extra):
                        cut.append((Span(s[0], s[1], extra), parent, None))
            # Children of neighbouring parents can interleave where the parents overlap: ChunkScope's own mode
            # lists a level in order of its start; a compatible mode parent by parent, as LlamaIndex does.
            if self.compat == NONE:
                cut.sort(key=lambda triple: (triple[0].start, triple[0].end))
            nodes = build_nodes(
                document,
                [span for span, _, _ in cut],
                include_metadata=self.include_metadata,
                include_prev_next_rel=False,
                id_prefix=f"L{level}-",
            )
            mark_rewritten(nodes, [text for _, _, text in cut])
            for node, (_, parent, _) in zip(nodes, cut, strict=True):
                if parent is not None:
                    node.relationships[NodeRelationship.PARENT] = parent.id
                    children = parent.relationships.setdefault(NodeRelationship.CHILD, [])
                    children.append(node.id)  # type: ignore[union-attr]
            if self.include_prev_next_rel:
                for chain in _chains(nodes, cut, by_parent=self.compat != NONE):
                    link_chain(chain)
            all_nodes.extend(nodes)
            parents = nodes
        return all_nodes


def _chains(
    nodes: list[Node], cut: Sequence[tuple[Span, Node | None, str | None]], *, by_parent: bool
) -> list[list[Node]]:
    """The PREVIOUS/NEXT chains of one level: the whole level, or (as LlamaIndex links them) each parent's children."""
    if not by_parent:
        return [nodes]
    chains: dict[str | None, list[Node]] = {}
    for node, (_, parent, _) in zip(nodes, cut, strict=True):
        chains.setdefault(None if parent is None else parent.id, []).append(node)
    return list(chains.values())


def _fitted_for(splitter: Splitter, document: Document, extra: dict[str, Any]) -> Document:
    """``document`` with the table headers ``splitter`` repeats in nodes carrying ``extra`` (SentenceSplitter.fitted)."""
    fitted = getattr(splitter, "fitted", None)
    if fitted is None:
        return document
    sized = fitted(document.with_metadata({**document.metadata, **extra}))
    return document if sized.elements is document.elements else replace(document, elements=sized.elements)


def spans_within(
    splitter: Splitter, document: Document, start: int, end: int, extra: dict[str, Any] | None = None
) -> list[Span]:
    """``splitter``'s spans over ``document.text[start:end]``, as offsets into the whole text.

    The splitter sees a document holding just that text, the elements and pages that lie
    inside it, and the document's metadata (with ``extra``, the keys its nodes will carry) and views, so a
    metadata-aware splitter budgets for what each node shows (its page label too) and its cuts can only fall
    inside the range.
    """
    inner = Document(
        text=document.text[start:end],
        id=document.id,
        metadata={**document.metadata, **(extra or {})},
        # An element that runs past the range (a table a parent ends inside) is kept for the part inside it:
        # its rows stay whole and its header budgeted in the children too.
        elements=[_clipped(e, start, end) for e in document.elements if e.start_char < end and e.end_char > start],
        pages=[
            Page(page.number, page.label, max(page.start_char, start) - start, min(page.end_char, end) - start)
            for page in document.pages_for_span(start, end)
        ],
        **document.view_settings(),
    )
    return [Span(s[0] + start, s[1] + start, s[2] if len(s) > 2 else None) for s in splitter.spans(inner)]


def compat_chunks_within(splitter: Splitter, document: Document, parent: Node | None) -> list[CompatChunk]:
    """A compatible mode's chunks of ``parent``'s text (of the document when None), placed in the document.

    As a framework splits a node: the splitter sees the node's text (the source
    slice, or the framework's text where the node was rewritten) and the metadata
    the node holds (the document's, when nodes inherit it). Chunks of a rewritten parent are placed in its span by span recovery.
    """
    if parent is None:
        return splitter.compat_chunks(document)  # type: ignore[attr-defined,no-any-return]
    # The parent node holds the document's metadata only if nodes inherit it: LlamaIndex budgets for what it holds.
    metadata = dict(document.metadata) if splitter.include_metadata else {}
    inner = Document(text=parent.text, id=document.id, metadata=metadata, **document.view_settings())
    chunks: list[CompatChunk] = splitter.compat_chunks(inner)  # type: ignore[attr-defined]
    start, end = parent.start_char, parent.end_char
    if parent.text == document.text[start:end]:
        return [CompatChunk(c.start + start, c.end + start, c.text, c.metadata) for c in chunks]
    texts = [c.text if c.text is not None else inner.text[c.start : c.end] for c in chunks]
    placed = recover_spans(document.text, texts, start, end)
    return [
        CompatChunk(span.start, span.end, None if span.status is SpanStatus.EXACT else text, c.metadata)
        for c, text, span in zip(chunks, texts, placed, strict=True)
    ]


def _clipped(element: Element, start: int, end: int) -> Element:
    """``element``'s part inside ``[start, end)``, as offsets from ``start``."""
    attrs = dict(element.attrs)
    if "header_end" in attrs:
        attrs["header_end"] = min(max(attrs["header_end"], start), end) - start
    return Element(
        element.kind,
        max(element.start_char, start) - start,
        min(element.end_char, end) - start,
        element.level,
        element.page,
        attrs,
    )


def leaf_nodes(nodes: Sequence[Node]) -> list[Node]:
    """Nodes without children (the smallest chunks), in the given order."""
    return [node for node in nodes if not node.relationships.get(NodeRelationship.CHILD)]


def root_nodes(nodes: Sequence[Node]) -> list[Node]:
    """Nodes without a parent (the largest chunks), in the given order."""
    return [node for node in nodes if NodeRelationship.PARENT not in node.relationships]


def nodes_at_level(nodes: Sequence[Node], level: int) -> list[Node]:
    """The nodes of one level (0 = roots), in the given order."""
    return [node for node in nodes if node.metadata.get("level") == level]
