"""Cross-encoder rerank: rescore each (query, node) pair with a local cross-encoder, keep the best."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from core.errors import ModelUnavailableError
from core.params import param
from core.postprocessors.base import Outcome, PostprocessContext, Postprocessor, fmt_score, with_score
from core.postprocessors.registry import POSTPROCESSORS
from core.schema import MetadataMode, NodeWithScore
from core.translate.snippet import LLAMAINDEX_POSTPROCESSOR, Code, CodeSnippet, call, indent

# (query, texts) -> one relevance score per text.
Scorer = Callable[[str, Sequence[str]], Sequence[float]]

NO_MODEL = "no cross-encoder model is installed locally; set model_path to a local cross-encoder directory"
# What generated LlamaIndex and LangChain code loads without a model_path (they may download it).
STAND_IN_MODEL = "cross-encoder/ms-marco-MiniLM-L-6-v2"


@POSTPROCESSORS.register
@dataclass(frozen=True)
class RerankPostprocessor(Postprocessor):
    """As LlamaIndex's SentenceTransformerRerank, with the model read from a local directory.

    Every node's EMBED view is scored against the query by a
    sentence-transformers CrossEncoder; nodes are sorted by that score (ties
    keep their order), their scores replaced by it, and the best ``top_n`` kept.
    No PyPI package ships a cross-encoder's weights, and nothing is downloaded,
    so without ``model_path`` this postprocessor is unavailable.
    """

    name = "rerank"
    summary = "Rescore nodes with a local cross-encoder model and keep the best n."

    model_path: str | None = param(None, "Directory of a local sentence-transformers cross-encoder model.")
    top_n: int = param(3, "How many nodes to keep after reranking.", ge=1, le=1000)
    # Not a parameter: a scoring function to use instead of a model (tests, notebooks).
    scorer: Scorer | None = field(default=None, compare=False, repr=False)

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return NO_MODEL

    def llamaindex(self, code: CodeSnippet) -> str | None:
        code.use(LLAMAINDEX_POSTPROCESSOR + "SentenceTransformerRerank")
        return call("SentenceTransformerRerank", model=self.model_path or STAND_IN_MODEL, top_n=self.top_n)

    def langchain(self, code: CodeSnippet) -> list[str]:
        code.use_compressor("CrossEncoderReranker")
        code.use("from langchain_community.cross_encoders import HuggingFaceCrossEncoder")
        model = self.model_path or STAND_IN_MODEL
        return [
            "    reranker = "
            + indent(
                call(
                    "CrossEncoderReranker",
                    model=Code(call("HuggingFaceCrossEncoder", model_name=model)),
                    top_n=self.top_n,
                )
            ),
            "    results = list(reranker.compress_documents(results, query))",
        ]

    def run(self, nodes: list[NodeWithScore], query: str, context: PostprocessContext | None = None) -> Outcome:
        scorer = self.scorer or _cross_encoder_scorer(self.model_path)
        if not nodes:
            return Outcome(nodes=[])
        scores = [
            float(score) for score in scorer(query, [item.node.get_content(MetadataMode.EMBED) for item in nodes])
        ]
        ranked = sorted(range(len(nodes)), key=lambda i: -scores[i])
        outcome = Outcome(nodes=[])
        for rank, index in enumerate(ranked, start=1):
            item = nodes[index]
            if rank <= self.top_n:
                outcome.nodes.append(with_score(item, scores[index]))
                outcome.changed[item.id] = f"the cross-encoder scored it {fmt_score(scores[index])}"
            else:
                outcome.dropped[item.id] = (
                    f"the cross-encoder ranked it {rank} (score {fmt_score(scores[index])}), after the best {self.top_n}"
                )
        return outcome


_MODELS: dict[str, object] = {}
_MODELS_LOCK = threading.Lock()


def _cross_encoder_scorer(model_path: str | None) -> Scorer:
    if not model_path:
        raise ModelUnavailableError(NO_MODEL)
    path = os.path.abspath(os.path.expanduser(model_path))
    if not os.path.isdir(path):
        raise ModelUnavailableError(f"rerank: no cross-encoder model directory at {model_path}")
    with _MODELS_LOCK:
        model = _MODELS.get(path)
        if model is None:
            from sentence_transformers import CrossEncoder

            try:
                model = CrossEncoder(path, device="cpu", local_files_only=True)
            except (OSError, ValueError) as exc:
                raise ModelUnavailableError(
                    f"rerank: the cross-encoder at {model_path} could not be loaded ({exc})"
                ) from exc
            _MODELS[path] = model
    lock = _MODELS_LOCK

    def score(query: str, texts: Sequence[str]) -> list[float]:
        with lock:
            return [float(value) for value in model.predict([(query, text) for text in texts], show_progress_bar=False)]

    return score
