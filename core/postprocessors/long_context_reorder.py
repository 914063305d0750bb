"""Long-context reorder: the strongest nodes at both ends of the context."""

from __future__ import annotations

from dataclasses import dataclass

from core.postprocessors.base import Outcome, PostprocessContext, Postprocessor
from core.postprocessors.registry import POSTPROCESSORS
from core.schema import NodeWithScore
from core.translate.snippet import LLAMAINDEX_POSTPROCESSOR, CodeSnippet, call


@POSTPROCESSORS.register
@dataclass(frozen=True)
class LongContextReorderPostprocessor(Postprocessor):
    """As LlamaIndex's LongContextReorder (models read the middle of a long context worst).

    Sort by score ascending (a missing score counts as 0; ties keep input
    order), then walk that list putting even positions at the front and odd
    ones at the back. Scores 0.9, 0.8, ..., 0.1 come out as
    0.9, 0.7, 0.5, 0.3, 0.1, 0.2, 0.4, 0.6, 0.8.
    """

    name = "long_context_reorder"
    summary = "Put the best nodes at the start and end of the context, the weakest in the middle."
    reorders = True

    def llamaindex(self, code: CodeSnippet) -> str | None:
        code.use(LLAMAINDEX_POSTPROCESSOR + "LongContextReorder")
        return call("LongContextReorder")

    def langchain(self, code: CodeSnippet) -> list[str]:
        code.use("from langchain_community.document_transformers import LongContextReorder")
        return ["    results = list(LongContextReorder().transform_documents(results))"]

    def run(self, nodes: list[NodeWithScore], query: str, context: PostprocessContext | None = None) -> Outcome:
        ascending = sorted(nodes, key=lambda item: item.score if item.score is not None else 0.0)
        # Inserting each even position at the front is the same as reversing the list of them.
        front: list[NodeWithScore] = []
        back: list[NodeWithScore] = []
        for index, item in enumerate(ascending):
            (front if index % 2 == 0 else back).append(item)
        return Outcome(nodes=front[::-1] + back)
