"""Previous/next expansion: add the nodes next to each retrieved node in its document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.errors import ConfigError
from core.params import param
from core.postprocessors.base import Outcome, PostprocessContext, Postprocessor
from core.postprocessors.registry import POSTPROCESSORS
from core.schema import Node, NodeWithScore
from core.translate.snippet import LLAMAINDEX_POSTPROCESSOR, Code, CodeSnippet, call


@POSTPROCESSORS.register
@dataclass(frozen=True)
class PrevNextPostprocessor(Postprocessor):
    """As LlamaIndex's PrevNextNodePostprocessor: follow PREVIOUS/NEXT links to add neighbours.

    Up to ``num_nodes`` neighbours are added on the chosen side(s) of every node,
    looked up in the node store (``context.nodes_by_id``). Added nodes have no
    score, as in LlamaIndex. Each node keeps its place; its previous neighbours
    go just before it and its next ones just after it, in document order. A
    neighbour already in the list is not added twice.
    """

    name = "prev_next"
    summary = "Add each node's previous and/or next neighbours from the document."

    num_nodes: int = param(1, "How many neighbours to add on each chosen side.", ge=1, le=20)
    mode: Literal["previous", "next", "both"] = param("next", "Which neighbours to add: previous, next, or both.")

    def llamaindex(self, code: CodeSnippet) -> str | None:
        code.use(LLAMAINDEX_POSTPROCESSOR + "PrevNextNodePostprocessor")
        return call(
            "PrevNextNodePostprocessor", docstore=Code("index.docstore"), num_nodes=self.num_nodes, mode=self.mode
        )

    def run(self, nodes: list[NodeWithScore], query: str, context: PostprocessContext | None = None) -> Outcome:
        if context is None or not context.nodes_by_id:
            raise ConfigError(
                "prev_next needs the node store (every node by id) to find neighbours; run it through run_query or pass a context"
            )
        store = context.nodes_by_id
        present = {item.id for item in nodes}
        outcome = Outcome(nodes=[])
        for item in nodes:
            before: list[NodeWithScore] = []
            after: list[NodeWithScore] = []
            if self.mode in ("previous", "both"):
                for distance, neighbour in enumerate(_walk(item.node, store, self.num_nodes, backwards=True), start=1):
                    if neighbour.id not in present:
                        present.add(neighbour.id)
                        before.insert(0, NodeWithScore(node=neighbour, score=None, query=item.query or query))
                        outcome.added[neighbour.id] = f"it comes {_count(distance)} before {item.id}"
            if self.mode in ("next", "both"):
                for distance, neighbour in enumerate(_walk(item.node, store, self.num_nodes, backwards=False), start=1):
                    if neighbour.id not in present:
                        present.add(neighbour.id)
                        after.append(NodeWithScore(node=neighbour, score=None, query=item.query or query))
                        outcome.added[neighbour.id] = f"it comes {_count(distance)} after {item.id}"
            outcome.nodes.extend(before + [item] + after)
        return outcome


def _walk(node: Node, store, count: int, *, backwards: bool) -> list[Node]:
    """Up to ``count`` nodes along the PREVIOUS (or NEXT) chain, nearest first; stops at a gap."""
    found: list[Node] = []
    current = node
    while len(found) < count:
        target = current.prev_id if backwards else current.next_id
        neighbour = store.get(target) if target else None
        if neighbour is None:
            break
        found.append(neighbour)
        current = neighbour
    return found


def _count(distance: int) -> str:
    return "1 node" if distance == 1 else f"{distance} nodes"
