"""Sentence-embedding optimizer: keep only the sentences of each node that matter for the query."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import ConfigError
from core.params import param
from core.postprocessors.base import (
    Outcome,
    PostprocessContext,
    Postprocessor,
    SentenceSelection,
    with_text,
)
from core.postprocessors.registry import POSTPROCESSORS
from core.schema import NodeWithScore
from core.tokens.segmentation import sentence_spans
from core.translate.snippet import LLAMAINDEX_POSTPROCESSOR, Code, CodeSnippet, call


@POSTPROCESSORS.register
@dataclass(frozen=True)
class SentenceEmbeddingOptimizerPostprocessor(Postprocessor):
    """As LlamaIndex's SentenceEmbeddingOptimizer, with the kept sentences in text order.

    Each node's text is cut into sentences; each sentence is embedded and
    compared with the query. ``percentile_cutoff`` keeps the best fraction of
    sentences (the best ``int(n * p)``, at least one); ``threshold_cutoff``
    keeps sentences whose similarity is at least the threshold; set both and a
    sentence must pass both. Around each chosen sentence, ``context_before`` and
    ``context_after`` neighbours are kept too. The node's text becomes the kept
    sentences, in their original order, joined by single spaces (a node that
    keeps every sentence is left as it was). A node none of whose sentences
    reaches the threshold is dropped.
    """

    name = "sentence_embedding_optimizer"
    summary = "Trim each node to the sentences most similar to the query (plus neighbours)."
    needs_embedder = True

    # LlamaIndex sets neither cutoff by default (a no-op); keeping the better half of each node's sentences acts.
    percentile_cutoff: float | None = param(
        0.5, "Fraction of each node's sentences to keep, the most similar first (0-1); empty: no limit.", ge=0.0, le=1.0
    )
    threshold_cutoff: float | None = param(
        None, "Lowest query similarity a sentence needs to be kept (-1 to 1); empty: no threshold.", ge=-1.0, le=1.0
    )
    context_before: int = param(1, "Sentences kept before each chosen sentence.", ge=0, le=20)
    context_after: int = param(1, "Sentences kept after each chosen sentence.", ge=0, le=20)

    def idle_reason(self) -> str | None:
        if self.percentile_cutoff is None and self.threshold_cutoff is None:
            return "neither percentile_cutoff nor threshold_cutoff is set, so every sentence is kept"
        return None

    def llamaindex(self, code: CodeSnippet) -> str | None:
        code.use(LLAMAINDEX_POSTPROCESSOR + "SentenceEmbeddingOptimizer")
        return call(
            "SentenceEmbeddingOptimizer",
            embed_model=Code("embedding"),
            percentile_cutoff=self.percentile_cutoff,
            threshold_cutoff=self.threshold_cutoff,
            context_before=self.context_before,
            context_after=self.context_after,
        )

    def run(self, nodes: list[NodeWithScore], query: str, context: PostprocessContext | None = None) -> Outcome:
        if not query.strip():
            raise ConfigError("sentence_embedding_optimizer needs a query to compare sentences with")
        embedder = context.embedder if context is not None and context.embedder is not None else None
        if embedder is None:
            from core.embed.embedder import get_embedder

            embedder = get_embedder()
        query_vector = np.asarray(embedder.embed_query(query), dtype=np.float32)
        outcome = Outcome(nodes=[])
        for item in nodes:
            text = item.node.text
            spans = sentence_spans(text)
            if not spans:
                outcome.nodes.append(item)
                continue
            vectors = np.asarray(embedder.embed([text[start:end] for start, end in spans]), dtype=np.float32)
            similarities = [float(value) for value in vectors @ query_vector]
            chosen = self.choose(similarities)
            if not chosen:
                best = max(similarities)
                outcome.dropped[item.id] = (
                    f"none of its sentences reaches the threshold {self.threshold_cutoff:g} (best {best:.4g})"
                )
                continue
            kept = self.with_context(chosen, len(spans))
            selection = SentenceSelection(
                kept=tuple(spans[i] for i in kept),
                removed=tuple(spans[i] for i in range(len(spans)) if i not in kept),
                scores=tuple(similarities),
            )
            outcome.sentences[item.id] = selection
            if len(kept) == len(spans):
                outcome.nodes.append(item)
                continue
            new_text = " ".join(text[start:end] for start, end in selection.kept)
            outcome.nodes.append(with_text(item, new_text))
            outcome.changed[item.id] = f"it kept {len(kept)} of its {len(spans)} sentences"
        return outcome

    def choose(self, similarities: list[float]) -> list[int]:
        """Indices of the sentences that pass the cutoffs (before adding context)."""
        order = sorted(range(len(similarities)), key=lambda i: -similarities[i])  # stable: ties keep text order
        if self.percentile_cutoff is not None:
            order = order[: max(1, int(len(similarities) * self.percentile_cutoff))]
        if self.threshold_cutoff is not None:
            order = [i for i in order if similarities[i] >= self.threshold_cutoff]
        return sorted(order)

    def with_context(self, chosen: list[int], count: int) -> list[int]:
        kept: set[int] = set()
        for index in chosen:
            kept.update(range(max(0, index - self.context_before), min(count, index + self.context_after + 1)))
        return sorted(kept)
