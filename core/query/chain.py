"""The query simulation: retrieve, then run a chain of postprocessors, tracing every stage.

A :class:`StageTrace` tells what one postprocessor did: the nodes it got and
gave back, the nodes it dropped (with the postprocessor's own reason), the nodes
it added, and the scores, ranks and texts it changed. Ranks are 1-based
positions in the stage's input and output lists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from core.config_parts import DEFAULT_RETRIEVAL, RetrievalMode, RetrievalSettings
from core.postprocessors import PostprocessContext, Postprocessor, SentenceSelection, get_postprocessor
from core.query.retrieval import retrieve
from core.schema import MetadataMode, Node, NodeWithScore

if TYPE_CHECKING:
    from core.embed.embedder import Embedder

# A step of the chain: a registry name and its parameters, e.g. ("top_n", {"top_n": 3}).
PostprocessorStep = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Dropped:
    id: str
    reason: str


@dataclass(frozen=True)
class Added:
    id: str
    reason: str
    position: int  # 1-based rank in the stage's output


@dataclass(frozen=True)
class ScoreChange:
    id: str
    before: float | None
    after: float | None


@dataclass(frozen=True)
class PositionChange:
    id: str
    before: int  # 1-based rank in the stage's input
    after: int  # 1-based rank in the stage's output


@dataclass(frozen=True)
class TextChange:
    """A node whose text changed; for the optimizer, which sentences (spans into ``before``) stayed."""

    id: str
    before: str
    after: str
    reason: str
    kept_spans: tuple[tuple[int, int], ...] = ()
    removed_spans: tuple[tuple[int, int], ...] = ()


@dataclass
class StageTrace:
    """What one postprocessor did to the nodes."""

    name: str
    params: dict[str, Any]
    nodes_in: list[NodeWithScore]
    nodes_out: list[NodeWithScore]
    dropped: list[Dropped] = field(default_factory=list)
    added: list[Added] = field(default_factory=list)
    score_changes: list[ScoreChange] = field(default_factory=list)
    position_changes: list[PositionChange] = field(default_factory=list)
    text_changes: list[TextChange] = field(default_factory=list)
    # The optimizer's per-node sentence choice, also for nodes that kept every sentence.
    sentences: dict[str, SentenceSelection] = field(default_factory=dict)
    # Why the stage, as set, could not change anything (a value left unset), else None.
    idle_reason: str | None = None
    # The postprocessor only reorders nodes (its class says so): the Query page draws the new order.
    reorders: bool = False

    def fate(self, node_id: str) -> str:
        """One line for a node's fate in this stage: kept, dropped (why), added (why), moved, changed."""
        for item in self.dropped:
            if item.id == node_id:
                return f"dropped: {item.reason}"
        for item in self.added:
            if item.id == node_id:
                return f"added: {item.reason}"
        notes = []
        for move in self.position_changes:
            if move.id == node_id:
                notes.append(f"moved {move.before} → {move.after}")
        for change in self.score_changes:
            if change.id == node_id:
                notes.append(f"score {_fmt(change.before)} → {_fmt(change.after)}")
        for text in self.text_changes:
            if text.id == node_id:
                notes.append(f"text changed: {text.reason}")
        return "; ".join(notes) if notes else "kept"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "params": self.params,
            "nodes_in": [_brief(item, rank) for rank, item in enumerate(self.nodes_in, start=1)],
            "nodes_out": [_brief(item, rank) for rank, item in enumerate(self.nodes_out, start=1)],
            "dropped": [vars(item) for item in self.dropped],
            "added": [vars(item) for item in self.added],
            "score_changes": [vars(item) for item in self.score_changes],
            "position_changes": [vars(item) for item in self.position_changes],
            "text_changes": [
                {
                    "id": item.id,
                    "before": item.before,
                    "after": item.after,
                    "reason": item.reason,
                    "kept_spans": [list(span) for span in item.kept_spans],
                    "removed_spans": [list(span) for span in item.removed_spans],
                }
                for item in self.text_changes
            ],
        }


@dataclass
class QueryResult:
    """What retrieval returned, what each postprocessor did, and what the LLM gets."""

    query: str
    mode: str
    top_k: int
    candidates: int  # nodes searched
    retrieved: list[NodeWithScore]
    stages: list[StageTrace]
    final: list[NodeWithScore]

    def counts(self) -> list[tuple[str, int]]:
        """The funnel: node count after retrieval and after each stage."""
        return [("retrieval", len(self.retrieved))] + [(stage.name, len(stage.nodes_out)) for stage in self.stages]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "top_k": self.top_k,
            "candidates": self.candidates,
            "retrieved": [_full(item, rank) for rank, item in enumerate(self.retrieved, start=1)],
            "stages": [stage.to_dict() for stage in self.stages],
            "final": [_full(item, rank) for rank, item in enumerate(self.final, start=1)],
            "final_context": final_context(self.final),
        }


def build_chain(postprocessors: Sequence[PostprocessorStep | Postprocessor]) -> list[Postprocessor]:
    """Instantiate every step first, so a bad parameter fails before any embedding work.

    A step is a (registry name, parameters) pair, or an already built postprocessor.
    """
    return [
        step if isinstance(step, Postprocessor) else get_postprocessor(step[0], **dict(step[1]))
        for step in postprocessors
    ]


def chain_needs_embedder(mode: RetrievalMode, chain: Sequence[Postprocessor]) -> bool:
    """Whether a query run needs the embedding model: dense or hybrid retrieval, or a step that embeds text."""
    return mode != "bm25" or any(step.needs_embedder for step in chain)


def run_query(
    nodes: Sequence[Node],
    query: str,
    retrieval: RetrievalSettings = DEFAULT_RETRIEVAL,
    *,
    embedder: Embedder | None = None,
    postprocessors: Sequence[PostprocessorStep | Postprocessor] = (),
    node_embeddings: np.ndarray | None = None,
    every: Mapping[str, Node] | None = None,
) -> QueryResult:
    """Retrieve ``retrieval.top_k`` nodes for ``query``, then run the postprocessor chain in order, tracing each stage.

    ``every`` holds, by id, the chunks a retrieval returning a hierarchy's parents looks them up in, when ``nodes``
    are only the leaves searched (default: ``nodes``).
    """
    chain = build_chain(postprocessors)
    if embedder is None and chain_needs_embedder(retrieval.mode, chain):
        from core.embed.embedder import get_embedder

        embedder = get_embedder()
    retrieved = retrieve(nodes, query, retrieval, embedder=embedder, node_embeddings=node_embeddings, every=every)
    context = PostprocessContext.from_nodes(nodes, embedder)
    current = retrieved
    stages: list[StageTrace] = []
    for step in chain:
        outcome = step.run(list(current), query, context)
        stages.append(trace_stage(step, current, outcome))
        current = outcome.nodes
    return QueryResult(
        query=query,
        mode=retrieval.mode,
        top_k=retrieval.top_k,
        candidates=len(nodes),
        retrieved=retrieved,
        stages=stages,
        final=list(current),
    )


def trace_stage(step: Postprocessor, nodes_in: list[NodeWithScore], outcome) -> StageTrace:  # noqa: ANN001
    """Compare a stage's input and output by node id, with the postprocessor's own reasons."""
    nodes_out = outcome.nodes
    rank_in = {item.id: rank for rank, item in enumerate(nodes_in, start=1)}
    rank_out = {item.id: rank for rank, item in enumerate(nodes_out, start=1)}
    before = {item.id: item for item in nodes_in}
    trace = StageTrace(
        name=step.name,
        params=step.to_params(),
        nodes_in=list(nodes_in),
        nodes_out=list(nodes_out),
        idle_reason=step.idle_reason() or getattr(outcome, "idle_reason", None),
        reorders=step.reorders,
    )
    for item in nodes_in:
        if item.id not in rank_out:
            trace.dropped.append(Dropped(item.id, outcome.dropped.get(item.id, f"{step.name} left it out")))
    for item in nodes_out:
        old = before.get(item.id)
        if old is None:
            reason = outcome.added.get(item.id, f"{step.name} added it")
            trace.added.append(Added(item.id, reason, rank_out[item.id]))
            continue
        if rank_in[item.id] != rank_out[item.id]:
            trace.position_changes.append(PositionChange(item.id, rank_in[item.id], rank_out[item.id]))
        if old.score != item.score:
            trace.score_changes.append(ScoreChange(item.id, old.score, item.score))
        if old.node.text != item.node.text:
            selection = outcome.sentences.get(item.id)
            trace.text_changes.append(
                TextChange(
                    id=item.id,
                    before=old.node.text,
                    after=item.node.text,
                    reason=outcome.changed.get(item.id, f"{step.name} changed its text"),
                    kept_spans=selection.kept if selection else (),
                    removed_spans=selection.removed if selection else (),
                )
            )
    trace.sentences = dict(outcome.sentences)
    return trace


def final_context(nodes: Sequence[NodeWithScore | Node], mode: MetadataMode = MetadataMode.LLM) -> str:
    """The context exactly as the LLM reads it: each node's ``mode`` view, joined by a blank line."""
    return "\n\n".join(item.get_content(mode) for item in nodes)


def _fmt(score: float | None) -> str:
    return "none" if score is None else f"{score:.4g}"


def _brief(item: NodeWithScore, rank: int) -> dict[str, Any]:
    return {"rank": rank, "id": item.id, "score": item.score}


def _full(item: NodeWithScore, rank: int) -> dict[str, Any]:
    node = item.node
    return {
        "rank": rank,
        "id": node.id,
        "score": item.score,
        "doc_id": node.doc_id,
        "file_name": node.metadata.get("file_name"),
        "start_char": node.start_char,
        "end_char": node.end_char,
        "text": node.text,
    }
