"""Retrieve small, read large: what a retrieval over hierarchical chunks returns.

The hierarchical splitter gives the same text at several sizes, each chunk linked to its
parent (PARENT) and children (CHILD). Small chunks are embedded whole (a 128-token chunk
fits all-MiniLM-L6-v2's window; a 1024-token one is read by its first 256 tokens only),
large ones give the LLM the context around an answer. Two rules people deploy, read from
the frameworks:

- ``parents`` (LangChain's ParentDocumentRetriever, LlamaIndex's recursive retrieval): only
  the leaves are searched; the top_k leaves are replaced by their top-level parent, each
  parent once, in the order of its best leaf (so at most top_k chunks, often fewer); with a
  ``context_budget``, best leaf first, the parent while its tokens fit what is left of the
  budget, else the leaf itself, else nothing (the best leaf is always returned): what a
  query reads is bounded, and the best leaves keep their whole parent;
- ``merged`` (LlamaIndex's AutoMergingRetriever): the top_k leaves are retrieved, then,
  until nothing changes, a chunk lying between two neighbours in the list is filled in
  (score: the mean of the two), and the retrieved children of a parent are replaced by
  the parent when they are more than ``merge_ratio`` of its children (score: their mean);
  the result is sorted by score, each chunk once.

:func:`searched` says which chunks are indexed, :func:`lift` turns the leaves' ranking into
what is returned. Chunks with no hierarchy (no PARENT or CHILD link) are returned as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from core.config_parts import RetrievalSettings
from core.schema import MetadataMode, Node, NodeRelationship, NodeWithScore

__all__ = ["hierarchical", "lift", "llm_view_tokens", "searched"]


def hierarchical(nodes: Sequence[Node]) -> bool:
    """Whether any chunk has a parent (the chunks come from a hierarchy)."""
    return any(NodeRelationship.PARENT in node.relationships for node in nodes)


def searched(nodes: Sequence[Node], retrieval: RetrievalSettings) -> list[int]:
    """Positions of the chunks a retrieval searches: the leaves when it returns parents or merges, else all."""
    if retrieval.returns == "chunks" or not hierarchical(nodes):
        return list(range(len(nodes)))
    # The leaves, as core.splitters.hierarchical.leaf_nodes finds them, by position (for their embeddings' rows).
    return [i for i, node in enumerate(nodes) if not node.relationships.get(NodeRelationship.CHILD)]


def lift(
    found: Sequence[NodeWithScore],
    by_id: Mapping[str, Node],
    retrieval: RetrievalSettings,
    tokens: Callable[[Node], int] | None = None,
) -> list[NodeWithScore]:
    """What the retrieval returns for the top_k leaves ``found`` (best first); ``by_id`` holds every chunk.

    ``tokens`` counts what a chunk costs the LLM for a ``context_budget`` (default: :func:`llm_view_tokens`).
    """
    if retrieval.returns == "parents" and retrieval.context_budget:
        return _parents_within(found, by_id, retrieval.context_budget, tokens or llm_view_tokens)
    if retrieval.returns == "parents":
        return _parents(found, by_id)
    if retrieval.returns == "merged":
        return _merged(list(found), by_id, retrieval.merge_ratio)
    return list(found)


def llm_view_tokens(node: Node) -> int:
    """What a chunk costs the LLM: the packaged embedding model's tokens of its LLM view (as the evaluation counts
    context tokens, :func:`core.evaluation.runner.mean_context_tokens`)."""
    from core.tokens.tokenizers import get_tokenizer

    return get_tokenizer("model").count_many([node.get_content(MetadataMode.LLM)])[0]


def _root(node: Node, by_id: Mapping[str, Node]) -> Node:
    seen = {node.id}
    while (parent := _link(node, NodeRelationship.PARENT)) is not None and parent in by_id:
        node = by_id[parent]
        if node.id in seen:  # a cycle (not made by any splitter here): stop where it closes
            break
        seen.add(node.id)
    return node


def _parents(found: Sequence[NodeWithScore], by_id: Mapping[str, Node]) -> list[NodeWithScore]:
    out: dict[str, NodeWithScore] = {}
    for item in found:
        root = _root(item.node, by_id)
        if root.id not in out:
            out[root.id] = NodeWithScore(node=root, score=item.score, query=item.query)
    return list(out.values())


def _parents_within(
    found: Sequence[NodeWithScore], by_id: Mapping[str, Node], budget: int, tokens: Callable[[Node], int]
) -> list[NodeWithScore]:
    out: dict[str, NodeWithScore] = {}
    used = 0
    for item in found:
        root = _root(item.node, by_id)
        if root.id in out:  # its text is already there
            continue
        for chunk in (root, item.node) if root.id != item.node.id else (root,):
            cost = tokens(chunk)
            if used + cost <= budget or (not out and chunk is item.node):  # the best leaf, whatever it costs
                out[chunk.id] = NodeWithScore(node=chunk, score=item.score, query=item.query)
                used += cost
                break
    return list(out.values())


def _merged(nodes: list[NodeWithScore], by_id: Mapping[str, Node], ratio: float) -> list[NodeWithScore]:
    changed = True
    while changed:
        nodes, filled = _fill_in(nodes, by_id)
        nodes, merged = _merge_into_parents(nodes, by_id, ratio)
        changed = filled or merged
    ranked = sorted(nodes, key=lambda item: -(item.score or 0.0))  # a stable sort, as list.sort is
    # A chunk filled in beside one merged into it comes twice: once, at its best, as every LlamaIndex retriever
    # returns (BaseRetriever.retrieve keeps the first of each node id).
    seen: set[str] = set()
    return [item for item in ranked if not (item.node.id in seen or seen.add(item.node.id))]


def _link(node: Node, kind: NodeRelationship) -> str | None:
    related = node.relationships.get(kind)
    return related if isinstance(related, str) else None


def _fill_in(nodes: list[NodeWithScore], by_id: Mapping[str, Node]) -> tuple[list[NodeWithScore], bool]:
    """A chunk whose next is the following one's previous (one chunk between them) gets that chunk after it."""
    out, changed = [], False
    for index, item in enumerate(nodes):
        out.append(item)
        if index + 1 >= len(nodes):
            continue
        between = _link(item.node, NodeRelationship.NEXT)
        if between is not None and between == _link(nodes[index + 1].node, NodeRelationship.PREVIOUS):
            if between in by_id:
                changed = True
                score = ((item.score or 0.0) + (nodes[index + 1].score or 0.0)) / 2
                out.append(NodeWithScore(node=by_id[between], score=score, query=item.query))
    return out, changed


def _merge_into_parents(
    nodes: list[NodeWithScore], by_id: Mapping[str, Node], ratio: float
) -> tuple[list[NodeWithScore], bool]:
    """Children replaced by their parent where more than ``ratio`` of its children are in the list."""
    children: dict[str, list[NodeWithScore]] = {}
    for item in nodes:
        parent = _link(item.node, NodeRelationship.PARENT)
        if parent is not None and parent in by_id:
            children.setdefault(parent, []).append(item)
    drop: set[str] = set()
    added: dict[str, NodeWithScore] = {}
    for parent_id, present in children.items():
        parent = by_id[parent_id]
        count = len(parent.relationships.get(NodeRelationship.CHILD) or ()) or 1
        if len(present) / count > ratio:
            drop.update(item.node.id for item in present)
            score = sum(item.score or 0.0 for item in present) / len(present)
            added[parent_id] = NodeWithScore(node=parent, score=score, query=present[0].query)
    kept = [item for item in nodes if item.node.id not in drop]
    return kept + list(added.values()), bool(drop)
