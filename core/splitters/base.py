"""What every splitter shares: the Splitter base, spans-to-nodes, and greedy merging.

A splitter computes spans ``(start, end)`` into the document's text; one shared
function, :func:`build_nodes`, turns spans into nodes with SOURCE/PREVIOUS/NEXT
relationships, inherited metadata, the pages a span touches and, for a span
inside a table that does not hold the table's header row, ``table_header``.
The splitters' speed code lives in :mod:`core.splitters.fast`, each piece beside
the plain rule it must equal.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple

from core.codegen import CodeSnippet, call, langchain_recursive, split_with
from core.params import Configurable, param
from core.schema import Document, Element, Node, NodeRelationship
from core.splitters.fast.gc_pause import gc_paused
from core.tokenizers import TOKENIZER_NAMES, SizeFn, Tokenizer, get_tokenizer


class Span(NamedTuple):
    """A cut: ``document.text[start:end]``, with metadata this node alone adds."""

    start: int
    end: int
    metadata: dict[str, Any] | None = None


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
    # What the pages show besides the chunks; they ask these, never a splitter's name.
    # Nodes come at several sizes, linked PARENT/CHILD, each with ``level`` metadata (0 = the largest):
    has_levels: ClassVar[bool] = False
    # Each node holds the ``window_size`` sentences on either side under ``window_metadata_key``:
    has_windows: ClassVar[bool] = False
    # ``analyze(document)`` gives the distances and the threshold behind the cuts:
    has_breakpoint_curve: ClassVar[bool] = False
    # The parameter values a framework's own splitter defaults to, under a label naming it, so a
    # user can start from them in one click. The algorithm stays this splitter's (sizes in its units).
    framework_defaults: ClassVar[Mapping[str, Mapping[str, Any]]] = {}

    include_metadata: bool = param(True, "Nodes inherit the document's metadata.", advanced=True)
    include_prev_next_rel: bool = param(True, "Link consecutive nodes with PREVIOUS/NEXT.", advanced=True)

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
        return build_nodes(
            document,
            self.spans(document),
            include_metadata=self.include_metadata,
            include_prev_next_rel=self.include_prev_next_rel,
        )

    def spans(self, document: Document) -> list[Span]:
        raise NotImplementedError

    @property
    def size_limit(self) -> int | None:
        """The size no node should exceed, in :attr:`size_unit` (the metrics flag nodes over it); None: no limit."""
        return None

    @property
    def size_unit(self) -> str | SizeFn:
        """What sizes count: a tokenizer's name, or the caller's size function."""
        return "characters"

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
        code.note("this splitter is a ChunkScope plugin with no LlamaIndex equivalent; SentenceSplitter stands in.")
        code.use("from llama_index.core.node_parser import SentenceSplitter")
        size, overlap = self._stand_in_sizes(1024, 20)
        return call("SentenceSplitter", chunk_size=size, chunk_overlap=overlap)

    def langchain(self, code: CodeSnippet) -> str:
        """The LangChain lines that cut ``documents`` into ``chunks``; notes say where they differ.

        Without an equivalent (a plugin), a RecursiveCharacterTextSplitter at this splitter's
        size stands in (at the character splitter's defaults when it has no size).
        """
        code.note(
            "this splitter is a ChunkScope plugin with no LangChain equivalent; RecursiveCharacterTextSplitter stands in."
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


def chunk_size_param(default: int, *, ge: int = 1) -> Any:
    """The ``chunk_size`` parameter; ``ge=0`` lets 0 mean no limit."""
    no_limit = "; 0 means no limit" if ge == 0 else ""
    return param(default, f"Largest chunk, in the tokenizer's units{no_limit}.", ge=ge, le=MAX_CHUNK_SIZE)


def chunk_overlap_param(default: int) -> Any:
    """The ``chunk_overlap`` parameter."""
    return param(
        default,
        "Units consecutive chunks share, in the tokenizer's units; below the chunk size.",
        ge=0,
        le=MAX_CHUNK_SIZE,
    )


def tokenizer_param(default: str, *, advanced: bool = False) -> Any:
    """The ``tokenizer`` parameter: a name in configs; from Python, any ``Callable[[str], int]`` as well."""
    return param(
        default,
        "What sizes count: characters, whitespace words, or the embedding model's tokens.",
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
    def size_unit(self) -> str | SizeFn:
        return self.tokenizer

    @property
    def overlap_limit(self) -> int | None:
        return self.chunk_overlap

    def validate(self) -> None:
        from core.errors import ConfigError

        if self.chunk_overlap >= self.chunk_size:
            raise ConfigError(
                f"{self.name}: chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size ({self.chunk_size})"
            )

    def get_tokenizer(self) -> Tokenizer:
        return get_tokenizer(self.tokenizer)


def build_nodes(
    document: Document,
    spans: Sequence[Span | tuple[int, int]],
    *,
    include_metadata: bool = True,
    include_prev_next_rel: bool = True,
    id_prefix: str = "",
) -> list[Node]:
    """Turn spans into nodes: exact text, inherited metadata, pages, table headers, links."""
    text = document.text
    doc_id = document.id
    tables = _TableIndex(document.elements)
    paged = bool(document.pages)
    inherited = document.metadata if include_metadata else {}
    # The view settings are read once; each node gets its own key lists so that
    # hiding a key on one node (as a user may) never hides it on its siblings.
    view = document.view_settings()
    llm_keys, embed_keys = view["excluded_llm_metadata_keys"], view["excluded_embed_metadata_keys"]
    template, separator, text_template = view["metadata_template"], view["metadata_separator"], view["text_template"]
    id_stem = f"{doc_id}#{id_prefix}"
    ids = [f"{id_stem}{index}" for index in range(len(spans))]
    source, previous, following = NodeRelationship.SOURCE, NodeRelationship.PREVIOUS, NodeRelationship.NEXT
    # The same keys in the same order link_chain would leave: SOURCE, PREVIOUS, NEXT; each
    # dict made whole by a literal, in a comprehension (cheaper than growing it per node).
    if include_prev_next_rel and len(ids) > 1:
        links = [{source: doc_id, following: ids[1]}]
        links += [
            {source: doc_id, previous: before, following: after} for before, after in zip(ids, ids[2:], strict=False)
        ]
        links.append({source: doc_id, previous: ids[-2]})
    else:
        links = [{source: doc_id} for _ in ids]
    # Bound copy methods of plain dict/list: the cheapest fresh copy per node.
    copy_inherited, copy_llm_keys, copy_embed_keys = dict(inherited).copy, llm_keys.copy, embed_keys.copy
    nodes: list[Node] = []
    append = nodes.append
    # One pass, no keyword arguments: this loop is most of a character-sized split's node cost.
    for span, node_id, relationships in zip(spans, ids, links, strict=True):
        start, end = span[0], span[1]
        metadata: dict[str, Any] = copy_inherited()
        if paged:
            pages = document.pages_for_span(start, end)
            if pages:
                first, final = pages[0].label, pages[-1].label
                metadata["page_label"] = first if first == final else f"{first}-{final}"
        if tables.tables:
            header = tables.header_for(start, end)
            if header is not None:
                metadata["table_header"] = header
        if len(span) > 2 and span[2]:
            metadata.update(span[2])
        append(
            Node(
                text[start:end],
                node_id,
                metadata,
                copy_llm_keys(),
                copy_embed_keys(),
                template,
                separator,
                text_template,
                relationships,
                doc_id,
                start,
                end,
            )
        )
    return nodes


def link_chain(nodes: Sequence[Node]) -> None:
    """Set PREVIOUS/NEXT between consecutive nodes."""
    for before, after in zip(nodes, nodes[1:], strict=False):
        before.relationships[NodeRelationship.NEXT] = after.id
        after.relationships[NodeRelationship.PREVIOUS] = before.id


class _TableIndex:
    """Finds the table whose body a span lies in without holding its header row."""

    def __init__(self, elements: Sequence[Element]) -> None:
        self.tables = sorted(
            (e for e in elements if e.kind == "table" and e.attrs.get("header")), key=lambda e: e.start_char
        )
        self.starts = [t.start_char for t in self.tables]

    def header_for(self, start: int, end: int) -> str | None:
        if not self.tables:
            return None
        i = bisect_right(self.starts, start) - 1
        candidates = [self.tables[i]] if i >= 0 else []
        j = bisect_left(self.starts, end)
        candidates += self.tables[max(i + 1, 0) : j]
        for table in candidates:
            header_end = table.attrs.get("header_end", table.start_char)
            overlaps_body = start < table.end_char and end > header_end
            holds_header = start <= table.start_char and end >= header_end
            if overlaps_body and not holds_header:
                return str(table.attrs["header"])
        return None


def merge_pieces_plainly(
    pieces: Sequence[tuple[int, int]], sizes: Sequence[int], chunk_size: int, chunk_overlap: int, text: str
) -> list[Span]:
    """Greedily pack consecutive pieces into chunks of at most ``chunk_size``: the rule, step by step.

    ``pieces`` are consecutive spans; ``sizes`` their sizes in tokens. A chunk's
    size is the sum of its pieces' sizes. A new chunk starts with the longest run
    of the previous one's trailing pieces that holds at most ``chunk_overlap`` and
    leaves room for the next piece. A piece larger than ``chunk_size`` becomes a
    chunk on its own (an indivisible unit). Chunks are trimmed of surrounding
    whitespace; whitespace-only chunks, and chunks ending where the last one did,
    vanish. The splitters call :func:`core.splitters.fast.packing.merge_pieces`,
    the same chunks found by bisection.
    """
    spans: list[Span] = []
    first, previous_end = 0, -1
    while first < len(pieces):
        last = first
        while last + 1 < len(pieces) and sum(sizes[first : last + 2]) <= chunk_size:
            last += 1
        trimmed = trim_span(text, pieces[first][0], pieces[last][1])
        if trimmed is not None and trimmed[1] > previous_end:
            spans.append(Span(*trimmed))
            previous_end = trimmed[1]
        if last + 1 == len(pieces):
            break
        # Always forward: the next chunk starts after this one's first piece.
        first += 1
        while first <= last and (
            sum(sizes[first : last + 1]) > chunk_overlap or sum(sizes[first : last + 2]) > chunk_size
        ):
            first += 1
    return spans


class CutGuard:
    """Where a cut may not fall: strictly inside a protected span (a table row).

    A splitter that keeps rows whole asks :meth:`allows` about each cut it
    considers, or lets :meth:`pieces` drop the forbidden ones, so a row is an
    indivisible unit and a table larger than a chunk is split between rows.
    """

    def __init__(self, spans: Sequence[tuple[int, int]] = ()) -> None:
        merged: list[list[int]] = []
        for start, end in sorted((s, e) for s, e in spans if e - s > 1):
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self.spans = [(start, end) for start, end in merged]
        self._starts = [start for start, _ in self.spans]

    def __bool__(self) -> bool:
        return bool(self.spans)

    def allows(self, position: int) -> bool:
        """True unless ``position`` lies strictly inside a protected span."""
        i = bisect_left(self._starts, position) - 1
        return i < 0 or position >= self.spans[i][1]

    def pieces(self, start: int, end: int, cuts: Sequence[int]) -> list[tuple[int, int]]:
        """Consecutive spans covering ``[start, end)``, cut at the allowed ``cuts`` (sorted)."""
        out: list[tuple[int, int]] = []
        previous = start
        check = bool(self.spans)
        for cut in cuts:
            if previous < cut < end and (not check or self.allows(cut)):
                out.append((previous, cut))
                previous = cut
        if previous < end:
            out.append((previous, end))
        return out


def protected_cuts(document: Document) -> CutGuard:
    """The guard that keeps table rows whole: every ``table_row`` element and each table's header row."""
    spans = []
    for element in document.elements:
        if element.kind == "table_row":
            spans.append((element.start_char, element.end_char))
        elif element.kind == "table" and "header_end" in element.attrs:
            spans.append((element.start_char, int(element.attrs["header_end"])))
    return CutGuard(spans)


def trim_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Shrink ``[start, end)`` to exclude surrounding whitespace; None if nothing is left."""
    # A character at a time: the runs at a chunk's ends are short (a separator), and
    # stripping a copy of the chunk measured slower.
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


@lru_cache(maxsize=64)
def literal_pattern(literal: str) -> re.Pattern[str]:
    """The compiled pattern that finds ``literal`` (a separator, not a regex)."""
    return re.compile(re.escape(literal))


def piece_sizes(tokenizer: Tokenizer, text: str, pieces: Sequence[tuple[int, int]]) -> list[int]:
    """Sizes of pieces; characters are counted by span length without slicing."""
    if tokenizer.name == "characters":
        return [end - start for start, end in pieces]
    return tokenizer.count_many([text[start:end] for start, end in pieces])
