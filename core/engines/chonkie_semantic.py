"""chonkie's SemanticChunker as an engine, embedding with the packaged all-MiniLM-L6-v2.

The chunker is chonkie's own: its sentences (split at ``delim`` by chonkie-core), the similarity of each
window of ``similarity_window`` sentences to the sentence after it, the local minima of that curve after a
Savitzky-Golay filter, the minima kept at or below the ``threshold`` percentile, and groups packed to
``chunk_size`` tokens. Only its ``embedding_model`` is ChunkScope's: a chonkie ``BaseEmbeddings`` over the
embedder the rest of the app uses (the packaged model, offline, vectors kept on disk, so a rerun embeds
nothing new; the tuner counts these embeddings as the native semantic splitter's). Its tokenizer counts the
model's tokens without special tokens, as chonkie's ``SentenceTransformerEmbeddings`` of the same model
does: on every sample the chunks, their offsets and their token counts are that class's
(tests/test_engines_semantic_chonkie.py).

chonkie's sentences tile the text, so its offsets hold every chunk and the spans are ``exact``.
:meth:`ChonkieSemanticSplitter.analyze` runs the chunker's own steps one by one, so the Chunks page draws the
similarity chonkie cut on, its smoothed form, the threshold and the cuts: those from the curve as breakpoints,
those made to keep ``chunk_size`` apart, under a caption that says chonkie's rule (:data:`CURVE_VIEW`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from core.engines.base import FrameworkArg, engine_summary
from core.engines.chonkie import CHONKIE, DISTRIBUTION, OWN_LINKS, ChonkieEngine, check_delim
from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.base import chunk_size_param
from core.splitters.registry import SPLITTERS
from core.splitters.semantic import Progress, embed_texts
from core.splitters.semantic_analysis import CurveView, SemanticAnalysis

# The packaged model's vectors: 384 numbers (all-MiniLM-L6-v2).
DIMENSION = 384


@lru_cache(maxsize=1)
def _embeddings_class() -> type:
    """A chonkie ``BaseEmbeddings`` whose vectors are ChunkScope's (defined on first use: chonkie loads then)."""
    from chonkie.embeddings import BaseEmbeddings

    from core.tokens.tokenizers import get_tokenizer

    class ChunkScopeEmbeddings(BaseEmbeddings):
        """The packaged all-MiniLM-L6-v2 through ChunkScope's embedder (and its disk cache of vectors)."""

        def embed(self, text: str) -> Any:
            return embed_texts([text])[0]

        def embed_batch(self, texts: list[str]) -> list[Any]:
            return list(embed_texts(list(texts)))

        @property
        def dimension(self) -> int:
            return DIMENSION

        def get_tokenizer(self) -> Any:
            # A token counter: chonkie counts with it as with its own SentenceTransformerEmbeddings' tokenizer
            # (the model's tokens, no special tokens, no truncation).
            return get_tokenizer("model").count

    return ChunkScopeEmbeddings


# chonkie's curve is a similarity, and it cuts at its low points: not the distance view's "above the threshold".
CURVE_VIEW = CurveView(
    title="Similarity of each sentence to the window of sentences before it",
    axis="cosine similarity",
    series="similarity",
    rule=(
        "chonkie cuts at a low point of the smoothed similarity (flat and curving up) where the similarity is at "
        "or below the dashed threshold, the threshold percentile of the low points' similarities. Cuts made only "
        "to keep chunk_size are drawn as grey marks; low points merged away by skip_window are not drawn."
    ),
)


@dataclass(frozen=True)
class EmbeddingModelArg(FrameworkArg):
    """``embedding_model=``: ChunkScope's embedder of the packaged model (chonkie's engines export stand-ins)."""

    def value(self) -> Any:
        return _embeddings_class()()


@SPLITTERS.register
@dataclass(frozen=True)
class ChonkieSemanticSplitter(ChonkieEngine):
    """chonkie's SemanticChunker: a cut at a low point of the (smoothed) similarity between a window of sentences
    and the sentence after it."""

    name = "chonkie.semantic"
    framework_class = "SemanticChunker"
    summary = engine_summary(
        CHONKIE, DISTRIBUTION, "SemanticChunker: cut where a sentence is least like the window before it."
    )
    defaults_from = "chonkie:SemanticChunker.__init__"
    own_params = OWN_LINKS
    embeds_text: ClassVar[bool] = True
    has_breakpoint_curve: ClassVar[bool] = True
    curve_view: ClassVar[CurveView] = CURVE_VIEW

    threshold: float = param(
        0.8,
        "Which low points cut: those at or below this percentile (0-1, exclusive) of the curve's minima.",
        ge=0,
        le=1,
    )
    chunk_size: int = chunk_size_param(2048, "Largest chunk, in the embedding model's tokens.")
    similarity_window: int = param(3, "Sentences in the window each next sentence is compared with.", ge=1, le=100)
    min_sentences_per_chunk: int = param(1, "Fewest sentences between two cuts.", ge=1, le=1000, advanced=True)
    min_characters_per_sentence: int = param(
        24, "Shortest sentence, in characters; shorter ones join the next.", ge=1, le=100_000, advanced=True
    )
    delim: tuple[str, ...] = param((". ", "! ", "? ", "\n"), "Where sentences end.", advanced=True)
    include_delim: str = param(
        "prev",
        "Which sentence keeps the delimiter: the one before it or the one after.",
        choices=("prev", "next"),
        advanced=True,
    )
    skip_window: int = param(
        0,
        "Merge a chunk with a similar one up to this many chunks ahead (0: no merging).",
        ge=0,
        le=100,
        advanced=True,
    )
    filter_window: int = param(5, "Savitzky-Golay filter window, in sentences.", ge=1, le=101, advanced=True)
    filter_polyorder: int = param(
        3, "Savitzky-Golay polynomial order; below filter_window.", ge=0, le=100, advanced=True
    )
    filter_tolerance: float = param(
        0.2, "How near zero the smoothed slope must be at a low point (0-1, exclusive).", ge=0, le=1, advanced=True
    )

    def validate(self) -> None:
        check_delim(self)
        for key in ("threshold", "filter_tolerance"):
            if not 0 < getattr(self, key) < 1:
                raise ConfigError(f"{self.name}: {key} must be between 0 and 1, both excluded")
        if self.filter_polyorder >= self.filter_window:
            raise ConfigError(f"{self.name}: filter_polyorder must be below filter_window")

    @property
    def size_unit(self) -> str:
        return "model"  # chonkie counts chunk_size with the embedding model's tokenizer

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "embedding_model": EmbeddingModelArg(),
            "threshold": self.threshold,
            "chunk_size": self.chunk_size,
            "similarity_window": self.similarity_window,
            "min_sentences_per_chunk": self.min_sentences_per_chunk,
            "min_characters_per_sentence": self.min_characters_per_sentence,
            "delim": list(self.delim),
            "include_delim": self.include_delim,
            "skip_window": self.skip_window,
            "filter_window": self.filter_window,
            "filter_polyorder": self.filter_polyorder,
            "filter_tolerance": self.filter_tolerance,
        }

    def analyze(self, document: Document, progress: Progress | None = None) -> SemanticAnalysis:
        """The chunker's own steps on the document's text (as ``SemanticChunker.chunk``): its sentences, the
        similarity of each window to the next sentence, its split indices, its groups (merged, then cut to size).

        Curve point ``i`` is the boundary after sentence ``i``: chonkie's similarity ``j`` compares sentences
        ``j .. j + window - 1`` with the next, so the curve is padded with ``window - 1`` NaN in front.
        """
        chunker = self.chunker()
        sentences = chunker._prepare_sentences(document.text)
        spans, at = [], 0
        for sentence in sentences:  # chonkie's sentences tile the text (its start_index counts sentences)
            spans.append((at, at + len(sentence.text)))
            at += len(sentence.text)
        window = chunker.similarity_window
        if len(sentences) <= window:  # chunk() returns them as one chunk, comparing nothing
            return SemanticAnalysis(spans, [], [], None, [])
        similarity = np.asarray(chunker._get_similarity(sentences), dtype=np.float64)
        split_indices = chunker._get_split_indices(similarity)
        groups = chunker._group_sentences(sentences, split_indices)
        if chunker.skip_window > 0:
            groups = chunker._skip_and_merge(groups)
        merged = _group_starts(groups)
        sized = _group_starts(chunker._split_groups(groups))
        pad = [float("nan")] * (window - 1)
        smoothed, threshold = _smoothed_and_threshold(chunker, similarity)
        return SemanticAnalysis(
            spans,
            pad + (1 - similarity).tolist(),
            pad + similarity.tolist(),
            threshold,
            # A group starting at sentence b ends a chunk after sentence b - 1; chunk_size only adds cuts.
            [start - 1 for start in sorted(merged)],
            smoothed=pad + smoothed if smoothed else [],
            size_cuts=[start - 1 for start in sorted(sized - merged)],
        )


def _group_starts(groups: list[list[Any]]) -> set[int]:
    """The sentence each group but the first starts at."""
    starts, at = set(), 0
    for group in groups[:-1]:
        at += len(group)
        starts.add(at)
    return starts


def _smoothed_and_threshold(chunker: Any, similarity: np.ndarray) -> tuple[list[float], float | None]:
    """The Savitzky-Golay smoothed similarity and the similarity a low point must be at or below to cut.

    chonkie-core's own calls with the chunker's settings, as ``_get_split_indices`` makes them: its low points
    (``find_local_minima_interpolated``: the filtered slope within ``filter_tolerance`` of flat, curving up),
    and the ``threshold`` percentile of their similarities that ``filter_split_indices`` keeps (linear, as
    NumPy's). Too short a curve for the filter (chonkie then cuts nothing): neither.
    """
    import chonkie_core

    if len(similarity) < chunker.filter_window:
        return [], None
    smoothed = chonkie_core.savgol_filter(similarity, chunker.filter_window, chunker.filter_polyorder, 0)
    _, values = chonkie_core.find_local_minima_interpolated(
        similarity,
        window_size=chunker.filter_window,
        poly_order=chunker.filter_polyorder,
        tolerance=chunker.filter_tolerance,
    )
    threshold = float(np.percentile(values, chunker.threshold * 100)) if len(values) else None
    return [float(v) for v in smoothed], threshold
