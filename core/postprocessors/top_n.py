"""Top-n: keep the first n nodes as they come."""

from __future__ import annotations

from dataclasses import dataclass

from core.params import param
from core.postprocessors.base import Outcome, PostprocessContext, Postprocessor
from core.postprocessors.registry import POSTPROCESSORS
from core.schema import NodeWithScore
from core.translate.snippet import CodeSnippet, literal


@POSTPROCESSORS.register
@dataclass(frozen=True)
class TopNPostprocessor(Postprocessor):
    """Keep the first ``top_n`` nodes in their current order (no re-sorting)."""

    name = "top_n"
    summary = "Keep only the first n nodes."

    top_n: int = param(3, "How many nodes to keep, from the front.", ge=1, le=1000)

    def llamaindex(self, code: CodeSnippet) -> str | None:
        code.note("top_n: LlamaIndex has no top-n postprocessor; the snippet slices the list.")
        return f"results = results[: {literal(self.top_n)}]"

    def langchain(self, code: CodeSnippet) -> list[str]:
        return [f"    results = results[: {literal(self.top_n)}]"]

    def run(self, nodes: list[NodeWithScore], query: str, context: PostprocessContext | None = None) -> Outcome:
        outcome = Outcome(nodes=list(nodes[: self.top_n]))
        for position, item in enumerate(nodes[self.top_n :], start=self.top_n + 1):
            outcome.dropped[item.id] = f"it came at position {position}, after the first {self.top_n}"
        return outcome
