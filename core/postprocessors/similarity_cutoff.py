"""Similarity cutoff: drop nodes scored below a threshold."""

from __future__ import annotations

from dataclasses import dataclass

from core.params import param
from core.postprocessors.base import Outcome, PostprocessContext, Postprocessor, fmt_score
from core.postprocessors.registry import POSTPROCESSORS
from core.schema import NodeWithScore


@POSTPROCESSORS.register
@dataclass(frozen=True)
class SimilarityCutoffPostprocessor(Postprocessor):
    """As LlamaIndex's SimilarityPostprocessor.

    With a cutoff set, a node with no score or a score strictly below it is
    dropped; a score equal to the cutoff is kept. With no cutoff, all are kept.
    """

    name = "similarity_cutoff"
    summary = "Drop nodes whose score is below a cutoff (unscored nodes too)."

    similarity_cutoff: float | None = param(None, "Lowest score kept (scores depend on the retrieval mode); empty keeps every node.")

    def run(self, nodes: list[NodeWithScore], query: str, context: PostprocessContext | None = None) -> Outcome:
        if self.similarity_cutoff is None:
            return Outcome(nodes=list(nodes))
        cutoff = self.similarity_cutoff
        outcome = Outcome(nodes=[])
        for item in nodes:
            if item.score is None:
                outcome.dropped[item.id] = f"it has no score and the cutoff is {fmt_score(cutoff)}"
            elif item.score < cutoff:
                outcome.dropped[item.id] = f"its score {fmt_score(item.score)} is below the cutoff {fmt_score(cutoff)}"
            else:
                outcome.nodes.append(item)
        return outcome
