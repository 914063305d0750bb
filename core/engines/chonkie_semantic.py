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
The Chunks page draws no distance curve for it: chonkie cuts at the minima of a filtered curve, a rule the
native view's "a cut wherever the score is above the threshold" does not describe.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from core.engines.base import FrameworkArg, engine_summary
from core.engines.chonkie import CHONKIE, DISTRIBUTION, OWN_LINKS, ChonkieEngine, check_delim
from core.errors import ConfigError
from core.params import param
from core.splitters.base import chunk_size_param
from core.splitters.registry import SPLITTERS
from core.splitters.semantic import embed_texts

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
