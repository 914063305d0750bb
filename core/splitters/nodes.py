"""Spans to nodes: the one place a splitter's cuts become :class:`~core.schema.Node` objects.

Every node gets its exact text (``document.text[start:end]``), the document's
metadata (one level deep), the pages its span touches as ``page_label``, for a
span inside a table that does not hold the table's header row the header as
``table_header``, and SOURCE/PREVIOUS/NEXT relationships. A splitter that budgets for
metadata may first shorten a header row too long to repeat (:func:`fit_table_headers`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from core.schema import Document, Element, Node, NodeRelationship, page_range_label


class Span(NamedTuple):
    """A cut: ``document.text[start:end]``, with metadata this node alone adds."""

    start: int
    end: int
    metadata: dict[str, Any] | None = None


# The relationships build_nodes sets, read once: an Enum member read from its class costs ~0.1 us
# (Python 3.11), three of them per split document.
_SOURCE, _PREVIOUS, _NEXT = NodeRelationship.SOURCE, NodeRelationship.PREVIOUS, NodeRelationship.NEXT

# The element kinds build_nodes reads (a node inside a table gets its header): what a splitter that reads
# no other structure declares as its ``elements_read``.
TABLE_ELEMENTS = frozenset({"table", "table_row"})


def build_nodes(
    document: Document,
    spans: Sequence[Span | tuple[int, int]],
    *,
    include_metadata: bool = True,
    include_prev_next_rel: bool = True,
    id_prefix: str = "",
) -> list[Node]:
    """Turn spans into nodes: exact text, inherited metadata, pages, table headers, links.

    Each node's relationships are SOURCE, then PREVIOUS and NEXT to its neighbours (when
    ``include_prev_next_rel``): the keys in the order :func:`link_chain` would leave them.
    """
    text = document.text
    doc_id = document.id
    # Read straight from the document, and no table index where there are no tables: on a corpus of
    # small files these set-ups (and a list of ids and one of links before the nodes) were a third of
    # a character split's time per file (benchmarks/NOTES.md, issue 32 character round).
    tables = _TableIndex.of(document.elements) if document.elements else None
    paged = bool(document.pages)
    inherited = dict(document.metadata if include_metadata else {})
    llm_keys = list(document.excluded_llm_metadata_keys)
    embed_keys = list(document.excluded_embed_metadata_keys)
    template, separator, text_template = document.metadata_template, document.metadata_separator, document.text_template
    source, previous, following = _SOURCE, _PREVIOUS, _NEXT
    id_stem = f"{doc_id}#{id_prefix}"
    # Each node gets its own copies of the metadata and the key lists, so that hiding a key on one
    # node (as a user may) never hides it on its siblings. Bound copy methods of plain dict/list:
    # the cheapest fresh copy per node.
    copy_inherited, copy_llm_keys, copy_embed_keys = inherited.copy, llm_keys.copy, embed_keys.copy
    last = len(spans) - 1
    nodes: list[Node] = []
    append = nodes.append
    before, node_id = None, f"{id_stem}0"  # the previous node's id and this one's
    # One pass, no keyword arguments: this loop is most of a character-sized split's node cost. (It also ran
    # in C until issue 41: about 1.0x on a whole split, benchmarks/RESULTS.md.)
    for index, span in enumerate(spans, 1):
        start, end = span[0], span[1]
        after = f"{id_stem}{index}" if index <= last else None
        # Each relationships dict made whole by a literal (cheaper than growing it).
        if not include_prev_next_rel:
            relationships = {source: doc_id}
        elif after is None:
            relationships = {source: doc_id} if before is None else {source: doc_id, previous: before}
        else:
            relationships = (
                {source: doc_id, following: after}
                if before is None
                else {source: doc_id, previous: before, following: after}
            )
        metadata: dict[str, Any] = copy_inherited()
        if paged:
            pages = document.pages_for_span(start, end)
            if pages:
                metadata["page_label"] = page_range_label(pages)
        if tables is not None:
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
        before, node_id = node_id, after
    return nodes


def link_chain(nodes: Sequence[Node]) -> None:
    """Set PREVIOUS/NEXT between consecutive nodes."""
    for before, after in zip(nodes, nodes[1:], strict=False):
        before.relationships[NodeRelationship.NEXT] = after.id
        after.relationships[NodeRelationship.PREVIOUS] = before.id


# What ``table_header`` says of a header row none of whose cells fits: the row is too long to repeat.
HEADER_NOTE = "(header row too long to repeat)"


def shorten_header(header: str, fits: Callable[[str], bool]) -> str:
    """A table's header row (``| a | b | c |``) as ``fits`` takes it: whole; else its first cells and a last one
    saying how many were left out (``| a | … 2 more columns |``); else HEADER_NOTE; else "" (no ``table_header``)."""
    if fits(header):
        return header
    cells = header[2:-2].split(" | ") if header.startswith("| ") and header.endswith(" |") else []
    shortened = ""
    for kept in range(1, len(cells)):
        candidate = "| " + " | ".join(cells[:kept]) + f" | … {len(cells) - kept} more columns |"
        if not fits(candidate):
            break
        shortened = candidate
    if shortened:
        return shortened
    return HEADER_NOTE if fits(HEADER_NOTE) else ""


def fit_table_headers(document: Document, fits: Callable[[str], bool]) -> Document:
    """``document`` with each table's ``header`` that ``fits`` refuses shortened (:func:`shorten_header`), so its
    nodes' ``table_header`` is; ``document`` itself when every header fits."""
    elements = list(document.elements)
    changed = False
    for index, element in enumerate(elements):
        header = element.attrs.get("header") if element.kind == "table" else None
        if header:
            short = shorten_header(str(header), fits)
            if short != header:
                elements[index] = replace(element, attrs={**element.attrs, "header": short})
                changed = True
    return replace(document, elements=elements) if changed else document


class _TableIndex:
    """Finds the table whose body a span lies in without holding its header row."""

    def __init__(self, elements: Sequence[Element]) -> None:
        if not elements:  # most documents: nothing to sort
            self.tables: list[Element] = []
            self.starts: list[int] = []
            return
        self.tables = sorted(
            (e for e in elements if e.kind == "table" and e.attrs.get("header")), key=lambda e: e.start_char
        )
        self.starts = [t.start_char for t in self.tables]

    @classmethod
    def of(cls, elements: Sequence[Element]) -> _TableIndex | None:
        """The index of ``elements``' tables with a header; None where there is none."""
        index = cls(elements)
        return index if index.tables else None

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
