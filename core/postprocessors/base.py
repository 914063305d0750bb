"""What every node postprocessor shares.

A postprocessor is a frozen dataclass whose fields are its declared parameters.
Its public face is ``process(nodes, query, context=None) -> list[NodeWithScore]``;
it never mutates what it is given (a node whose text changes is copied first).
``run`` does the same work and also says why: which nodes it dropped and for
what reason, what it added, and which sentences of a node it kept. The query
runner (:mod:`core.query.chain`) records that in each stage's trace.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from core.params import Configurable
from core.schema import Node, NodeWithScore

if TYPE_CHECKING:
    from core.embed.embedder import Embedder
    from core.translate.snippet import CodeSnippet


@dataclass
class PostprocessContext:
    """What some postprocessors need beyond the nodes: every node by id, and the embedder."""

    nodes_by_id: Mapping[str, Node] = field(default_factory=dict)
    embedder: Embedder | None = None

    @classmethod
    def from_nodes(cls, nodes: Sequence[Node], embedder: Embedder | None = None) -> PostprocessContext:
        return cls(nodes_by_id={node.id: node for node in nodes}, embedder=embedder)


@dataclass(frozen=True)
class SentenceSelection:
    """Which sentences of a node's text the optimizer kept; spans are offsets into the original text."""

    kept: tuple[tuple[int, int], ...]
    removed: tuple[tuple[int, int], ...]
    scores: tuple[float, ...] = ()  # each sentence's similarity to the query, in text order


@dataclass
class Outcome:
    """A postprocessor's output plus its own account of what it did, by node id."""

    nodes: list[NodeWithScore]
    dropped: dict[str, str] = field(default_factory=dict)  # id -> why it was dropped
    added: dict[str, str] = field(default_factory=dict)  # id -> why it was added
    changed: dict[str, str] = field(default_factory=dict)  # id -> why its text or score changed
    sentences: dict[str, SentenceSelection] = field(default_factory=dict)
    # Why nothing could change on these nodes (they lack what the step reads), for the trace; None when it could.
    idle_reason: str | None = None


@dataclass(frozen=True)
class Postprocessor(Configurable):
    """Base of every postprocessor. Subclasses implement :meth:`run`."""

    # Whether this step embeds text itself, so a chain holding it needs the embedding model
    # even when retrieval does not (BM25); see :func:`core.query.chain.chain_needs_embedder`.
    needs_embedder: ClassVar[bool] = False
    # Whether all this step does is put the nodes in another order (the Query page draws that order).
    reorders: ClassVar[bool] = False

    def process(
        self, nodes: list[NodeWithScore], query: str = "", context: PostprocessContext | None = None
    ) -> list[NodeWithScore]:
        return self.run(list(nodes), query, context).nodes

    def run(self, nodes: list[NodeWithScore], query: str, context: PostprocessContext | None = None) -> Outcome:
        raise NotImplementedError

    def llamaindex(self, code: CodeSnippet) -> str | None:
        """LlamaIndex's counterpart as Python: a node postprocessor, or a ``results = ...`` line where
        LlamaIndex has no class for it; None leaves the stage out (and the notes say so)."""
        code.note(f"postprocessor {self.name!r} has no LlamaIndex equivalent and is left out.")
        return None

    def langchain(self, code: CodeSnippet) -> list[str]:
        """The indented lines of ``retrieve()`` that do this stage to ``results`` with LangChain; none leaves it out."""
        code.note(f"postprocessor {self.name!r} has no LangChain equivalent and is left out.")
        return []

    def idle_reason(self) -> str | None:
        """Why this postprocessor, as set, passes every node through unchanged (None when its values act).

        The trace says it beside the stage, so "5 in -> 5 out" is never a silent no-op.
        """
        return None

    def missing_input_reason(self, metadata_keys: Collection[str]) -> str | None:
        """Why this step, as set, changes nothing on nodes whose metadata holds only ``metadata_keys``; None
        when it may act.

        For a step that reads a metadata key a split may not give (the sentence window): its run puts the
        reason in the trace, and the chain editor shows it beside the step, so it is never a silent no-op.
        """
        return None

    @classmethod
    def starting_values(cls, query: str) -> dict[str, Any]:
        """Values to add this postprocessor with for ``query`` when its defaults alone would do nothing."""
        return {}

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why this postprocessor cannot run with its default parameters here (None when it can)."""
        return None

    @classmethod
    def describe(cls) -> dict[str, Any]:
        reason = cls.unavailable_reason()
        return {
            "name": cls.name,
            "summary": cls.summary,
            "available": reason is None,
            "unavailable_reason": reason,
            "params": [spec.to_json() for spec in cls.params()],
        }


def with_text(item: NodeWithScore, text: str) -> NodeWithScore:
    """A copy of ``item`` whose node has other text (span, metadata and links are kept)."""
    node = dataclasses.replace(
        item.node,
        text=text,
        metadata=dict(item.node.metadata),
        relationships=dict(item.node.relationships),
    )
    return NodeWithScore(node=node, score=item.score, query=item.query)


def with_score(item: NodeWithScore, score: float | None) -> NodeWithScore:
    """A copy of ``item`` with another score (the node itself is shared: it is not changed)."""
    return NodeWithScore(node=item.node, score=score, query=item.query)


def fmt_score(score: float | None) -> str:
    return "no score" if score is None else f"{score:.4g}"
