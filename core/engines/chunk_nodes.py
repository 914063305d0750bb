"""Framework chunks to nodes: each chunk placed in the source, with the framework's text, metadata and links.

Each node's text is the framework's text; its span comes from
:mod:`core.spans.recovery` (or from the offsets the framework states, where they hold
the chunk), and its ``span_status`` metadata says whether
``text == document.text[start_char:end_char]`` (``exact``), the framework changed the
text (``rewritten``, the span covers the source it was aligned with), or it could not
be placed (``unplaced``, an empty span).

The node carries the framework's metadata (header paths, windows, …) and its
PARENT/CHILD links; the keys ChunkScope adds for its own views (``span_status``,
a hierarchy's ``level``) are hidden from the LLM and EMBED readers, so what they
read is what the framework's node gives them. ChunkScope's own derived keys
(``page_label``, ``table_header``) are not added: the framework does not add them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from core.schema import Document, Node, NodeRelationship
from core.spans.recovery import SPAN_STATUS_KEY, RecoveredSpan, SpanRecovery, SpanStatus
from core.splitters.nodes import build_nodes, link_chain


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
    groups = _groups(chunks)
    found = _stated_spans(document.text, chunks) or _recovered_spans(document.text, chunks, groups)
    assert None not in found  # every chunk is in a group, so each has been placed
    llm_keys, embed_keys = document.excluded_llm_metadata_keys, document.excluded_embed_metadata_keys
    first = chunks[0] if chunks else FrameworkChunk("")
    shared = all(_own_hidden_keys(c) == _own_hidden_keys(first) for c in chunks)
    # The framework adds no page labels or table headers: build from the text and metadata alone.
    bare = replace(
        document,
        elements=[],
        pages=[],
        # When every chunk hides the same keys (most engines), the node builder's own copies are the final lists.
        excluded_llm_metadata_keys=_hidden(llm_keys, first, first.excluded_llm_metadata_keys) if shared else llm_keys,
        excluded_embed_metadata_keys=(
            _hidden(embed_keys, first, first.excluded_embed_metadata_keys) if shared else embed_keys
        ),
    )
    # A flat split (most engines) is one chain: the node builder links it as it builds.
    flat = list(groups) == [None]
    nodes = build_nodes(
        bare,
        _spans_with_status(chunks, found),
        include_metadata=include_metadata,
        include_prev_next_rel=include_prev_next_rel and flat,
    )
    exact = SpanStatus.EXACT
    if not shared or any(span is not None and span.status is not exact for span in found):
        for node, chunk, span in zip(nodes, chunks, found, strict=True):
            if span is not None and span.status is not exact:
                node.text = chunk.text
            if not shared:
                node.excluded_llm_metadata_keys = _hidden(llm_keys, chunk, chunk.excluded_llm_metadata_keys)
                node.excluded_embed_metadata_keys = _hidden(embed_keys, chunk, chunk.excluded_embed_metadata_keys)
    _link_groups(nodes, groups, chain=include_prev_next_rel and not flat)
    return nodes


def _groups(chunks: Sequence[FrameworkChunk]) -> dict[int | None, list[int]]:
    """The chunks' indexes by their parent's (None: no parent), each group in order; a ValueError for a parent that
    does not come before its child."""
    groups: dict[int | None, list[int]] = {}
    if any(chunk.parent is not None for chunk in chunks):
        for index, chunk in enumerate(chunks):
            if chunk.parent is not None and not 0 <= chunk.parent < index:
                raise ValueError(f"chunk {index}'s parent {chunk.parent} does not come before it")
            groups.setdefault(chunk.parent, []).append(index)
    elif chunks:
        groups[None] = list(range(len(chunks)))  # a flat split (most engines): one group, in order
    return groups


def _spans_with_status(
    chunks: Sequence[FrameworkChunk], found: Sequence[RecoveredSpan]
) -> list[tuple[int, int, dict[str, Any]]]:
    """Each chunk's span, with its metadata and its span status as the node's own metadata."""
    # A chunk without metadata of its own shares its status's dict: the node builder copies it into each node's own.
    status_only = {status: {SPAN_STATUS_KEY: status.value} for status in SpanStatus}
    return [
        (
            span.start,
            span.end,
            {**chunk.metadata, **status_only[span.status]} if chunk.metadata else status_only[span.status],
        )
        for chunk, span in zip(chunks, found, strict=True)
    ]


def _own_hidden_keys(chunk: FrameworkChunk) -> tuple[Sequence[str], Sequence[str], Sequence[str]]:
    return chunk.excluded_llm_metadata_keys, chunk.excluded_embed_metadata_keys, chunk.own_keys


def _hidden(document_keys: Sequence[str], chunk: FrameworkChunk, extra: Sequence[str]) -> list[str]:
    """The keys a node hides from one reader: the document's, then its chunk's and the span status (each once, in
    that order)."""
    added = dict.fromkeys([*extra, SPAN_STATUS_KEY, *chunk.own_keys])
    return [*document_keys, *(key for key in added if key not in document_keys)]


def _link_groups(nodes: list[Node], groups: dict[int | None, list[int]], *, chain: bool) -> None:
    """PARENT/CHILD between each group and its parent; PREVIOUS/NEXT within each group too, with ``chain``."""
    for parent, members in groups.items():
        if chain:
            link_chain([nodes[i] for i in members])
        if parent is not None:
            children = nodes[parent].relationships.setdefault(NodeRelationship.CHILD, [])
            for index in members:
                nodes[index].relationships[NodeRelationship.PARENT] = nodes[parent].id
                children.append(nodes[index].id)  # type: ignore[union-attr]


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
