"""Similarity cutoff: drop nodes scored below a threshold."""

from __future__ import annotations

from dataclasses import dataclass

from core.params import param
from core.postprocessors.base import Outcome, PostprocessContext, Postprocessor, fmt_score
from core.postprocessors.registry import POSTPROCESSORS
from core.schema import NodeWithScore
from core.translate.snippet import LLAMAINDEX_POSTPROCESSOR, Code, CodeSnippet, call, indent


@POSTPROCESSORS.register
@dataclass(frozen=True)
class SimilarityCutoffPostprocessor(Postprocessor):
    """As LlamaIndex's SimilarityPostprocessor.

    With a cutoff set, a node with no score or a score strictly below it is
    dropped; a score equal to the cutoff is kept. With no cutoff, all are kept.
    """

    name = "similarity_cutoff"
    summary = "Drop nodes whose score is below a cutoff (unscored nodes too)."

    # LlamaIndex defaults to no cutoff (a no-op); 0.3 separates related from unrelated passages for
    # all-MiniLM-L6-v2's cosine scores. BM25 scores are unbounded: pick a cutoff for them by eye.
    similarity_cutoff: float | None = param(
        0.3,
        "Lowest score kept; empty keeps every node (LlamaIndex's default). What a score is depends on the retrieval: "
        "dense, a cosine (about 0.1-0.8 with all-MiniLM-L6-v2); bm25, unbounded; hybrid relative_score, 0-1 scaled "
        "per query (the best node of every query is near 1); hybrid reciprocal_rank, at most 1/61 (about 0.016), so "
        "a cutoff above that drops every node.",
    )

    def idle_reason(self) -> str | None:
        return "no similarity_cutoff is set, so every node is kept" if self.similarity_cutoff is None else None

    def llamaindex(self, code: CodeSnippet) -> str | None:
        code.use(LLAMAINDEX_POSTPROCESSOR + "SimilarityPostprocessor")
        return call("SimilarityPostprocessor", similarity_cutoff=self.similarity_cutoff)

    def langchain(self, code: CodeSnippet) -> list[str]:
        if self.similarity_cutoff is None:
            return []
        code.use_compressor("EmbeddingsFilter")
        code.note(
            "similarity_cutoff: EmbeddingsFilter re-embeds the results and keeps those at or above the threshold."
        )
        return [
            "    results = "
            + indent(
                call("EmbeddingsFilter", embeddings=Code("embeddings"), similarity_threshold=self.similarity_cutoff)
            )
            + ".compress_documents(results, query)"
        ]

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
