"""The semantic splitter's compatible modes: LlamaIndex's SemanticSplitterNodeParser and LangChain's SemanticChunker,
step for step, over spans.

Each rule is the framework's own, in its order and with its float arithmetic (the
same numpy calls on the same shapes, so the distances are equal to the last bit,
not merely close): its sentences, its buffered groups, one embedding per group
(ChunkScope's embedder, as the engines use), its cosine distances, its threshold,
its grouping. :mod:`core.splitters.semantic` holds the splitter and ChunkScope's own rule.

- LlamaIndex (``SemanticSplitterNodeParser``, llama-index-core): sentences from an
  untrained Punkt tokenizer, each running to the next one's start (so they tile the
  text from the first); a group is its sentences concatenated, a chunk too, so every
  chunk is a slice of the source. Distance: ``1 - dot(a, b) / (norm(a) * norm(b))``
  on 1-D vectors; threshold ``np.percentile(distances, breakpoint_percentile_threshold)``.
- LangChain (``SemanticChunker``, langchain-experimental 0.4.2): sentences from
  ``re.split(sentence_split_regex, text)``; groups and chunks join sentences with
  one space, so a chunk whose sentences were split at anything but one space has a
  text of its own (``rewritten``). Distance from ``langchain_community``'s
  ``cosine_similarity`` on (1, d) matrices, its NumPy path (with ``simsimd``
  installed LangChain computes in float32 instead; this project does not install
  it). Thresholds: percentile, mean + amount std, mean + amount IQR, a percentile
  of ``np.gradient(distances, range(n))``, or ``number_of_chunks`` inverted into a
  percentile; a chunk shorter than ``min_chunk_size`` skips its breakpoint.

Where the engine places a chunk by span recovery, these place it by the cut: equal
except where the chunk's text occurs more than once (the engine may pick another copy).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from core.errors import ConfigError
from core.spans.recovery import SPAN_STATUS_KEY, SpanStatus
from core.splitters.compat import CompatChunk, empty_text_chunks
from core.splitters.semantic_analysis import SemanticAnalysis, chunks_percentile
from core.tokens.segmentation import punkt_sentence_starts

# ``embed(texts)``: one row per text, as ChunkScope's embedder returns them (float32; the frameworks get them as
# Python floats, i.e. the same values in float64).
Embed = Callable[[list[str]], np.ndarray]


# BaseEmbedding.embed_batch_size's default: LlamaIndex asks for its group vectors ten at a time. The same calls
# give the same vectors without a cache too (a float32 forward pass's last bits depend on a text's batch).
LLAMAINDEX_EMBED_BATCH = 10


class SemanticCut(NamedTuple):
    """What a compatible mode saw (for the Chunks page's curve) and the chunks it made."""

    analysis: SemanticAnalysis
    chunks: list[CompatChunk]


def _vectors(embed: Embed, groups: list[str]) -> np.ndarray:
    return np.asarray(embed(groups), dtype=np.float32).astype(np.float64)


# ------------------------------------------------------------------------------------------ LlamaIndex


def llamaindex_cut(text: str, buffer_size: int, percentile: int, embed: Embed) -> SemanticCut:
    """``SemanticSplitterNodeParser.build_semantic_nodes_from_documents`` on one text."""
    starts = punkt_sentence_starts(text)
    sentences = list(zip(starts, [*starts[1:], len(text)], strict=False))
    if not sentences:
        # No sentence: LlamaIndex's one chunk is " ".join([]), an empty node.
        return SemanticCut(SemanticAnalysis([], [], [], None, []), empty_text_chunks())
    if len(sentences) == 1:
        # One sentence: no distance, so the whole of it is one chunk (LlamaIndex embeds it all the same).
        return SemanticCut(SemanticAnalysis(sentences, [], [], None, []), [CompatChunk(*sentences[0])])
    last = len(sentences) - 1
    # _build_sentence_groups: the sentences concatenated; they tile the text, so a group is a slice.
    groups = [
        text[sentences[max(i - buffer_size, 0)][0] : sentences[min(i + buffer_size, last)][1]]
        for i in range(len(sentences))
    ]
    batches = range(0, len(groups), LLAMAINDEX_EMBED_BATCH)
    vectors = np.concatenate([_vectors(embed, groups[i : i + LLAMAINDEX_EMBED_BATCH]) for i in batches])
    distances = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(len(sentences) - 1):
            # llama_index.core.base.embeddings.base.similarity, mode DEFAULT.
            current, following = vectors[i], vectors[i + 1]
            similarity = np.dot(current, following) / (np.linalg.norm(current) * np.linalg.norm(following))
            distances.append(1 - similarity)
    threshold = np.percentile(distances, percentile)
    breakpoints = [i for i, distance in enumerate(distances) if distance > threshold]
    firsts = [0, *(i + 1 for i in breakpoints)]
    ends = [*breakpoints, last]
    chunks = [CompatChunk(sentences[a][0], sentences[b][1]) for a, b in zip(firsts, ends, strict=True)]
    floats = [float(d) for d in distances]
    return SemanticCut(SemanticAnalysis(sentences, floats, floats, float(threshold), breakpoints), chunks)


# ------------------------------------------------------------------------------------------ LangChain


def split_spans(text: str, pattern: str) -> list[tuple[int, int]]:
    """The spans of ``re.split(pattern, text)``'s pieces (a capturing group's text is a piece too)."""
    compiled = re.compile(pattern)
    spans: list[tuple[int, int]] = []
    at = 0
    for match in compiled.finditer(text):
        spans.append((at, match.start()))
        for group in range(1, compiled.groups + 1):
            span = match.span(group)
            if span == (-1, -1):
                # re.split gives None, which SemanticChunker cannot join: LangChain fails on this text.
                raise ConfigError(
                    "semantic: compat=langchain: a group of sentence_split_regex matched nothing, which LangChain's "
                    "SemanticChunker cannot join (use a non-capturing group, (?:...))"
                )
            spans.append(span)
        at = match.end()
    spans.append((at, len(text)))
    return spans


def langchain_cut(
    text: str,
    *,
    buffer_size: int,
    threshold_type: str,
    amount: float,
    number_of_chunks: int | None,
    sentence_split_regex: str,
    min_chunk_size: int | None,
    embed: Embed,
) -> SemanticCut:
    """``SemanticChunker.split_text`` on one text."""
    pieces = split_spans(text, sentence_split_regex)
    sentences = [text[a:b] for a, b in pieces]
    nothing = SemanticAnalysis(pieces, [], [], None, [])
    # SemanticChunker returns the sentences as they are: too few for np.percentile (one) or np.gradient (two).
    if len(pieces) == 1 or (threshold_type == "gradient" and len(pieces) == 2):
        return SemanticCut(nothing, _langchain_chunks(text, pieces, [[i] for i in range(len(pieces))]))
    # combine_sentences: the buffer's sentences joined with single spaces.
    groups = [" ".join(sentences[max(i - buffer_size, 0) : i + buffer_size + 1]) for i in range(len(sentences))]
    vectors = _vectors(embed, groups)
    distances = []
    for i in range(len(sentences) - 1):
        # langchain_community.utils.math.cosine_similarity([a], [b])[0][0], NumPy path.
        x, y = np.array(vectors[i : i + 1]), np.array(vectors[i + 1 : i + 2])
        x_norm, y_norm = np.linalg.norm(x, axis=1), np.linalg.norm(y, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            similarity = np.dot(x, y.T) / np.outer(x_norm, y_norm)
        similarity[np.isnan(similarity) | np.isinf(similarity)] = 0.0
        distances.append(1 - similarity[0][0])
    if number_of_chunks is not None:
        threshold, scores = _threshold_from_clusters(distances, number_of_chunks), distances
    else:
        threshold, scores = _breakpoint_threshold(distances, threshold_type, amount)
    breakpoints: list[int] = []
    start = 0
    for index in (i for i, score in enumerate(scores) if score > threshold):
        # len(" ".join(sentences[start : index + 1])), counted.
        joined = sum(b - a for a, b in pieces[start : index + 1]) + index - start
        if min_chunk_size is not None and joined < min_chunk_size:
            continue
        breakpoints.append(index)
        start = index + 1
    firsts = [0, *(i + 1 for i in breakpoints)]
    members = [list(range(a, b)) for a, b in zip(firsts, [*firsts[1:], len(pieces)], strict=True) if a < b]
    analysis = SemanticAnalysis(
        pieces, [float(d) for d in distances], [float(s) for s in scores], float(threshold), breakpoints
    )
    return SemanticCut(analysis, _langchain_chunks(text, pieces, members))


def _breakpoint_threshold(distances: list, threshold_type: str, amount: float) -> tuple[float, Sequence[float]]:
    """``SemanticChunker._calculate_breakpoint_threshold``."""
    if threshold_type == "percentile":
        return np.percentile(distances, amount), distances
    if threshold_type == "standard_deviation":
        return np.mean(distances) + amount * np.std(distances), distances
    if threshold_type == "interquartile":
        q1, q3 = np.percentile(distances, [25, 75])
        return np.mean(distances) + amount * (q3 - q1), distances
    if threshold_type == "gradient":
        gradient = np.gradient(distances, range(0, len(distances)))
        return np.percentile(gradient, amount), gradient
    raise ConfigError(f"semantic: unknown breakpoint_type {threshold_type!r}")


def _threshold_from_clusters(distances: list, number_of_chunks: int) -> float:
    """``SemanticChunker._threshold_from_clusters``: the percentile that leaves about ``number_of_chunks`` chunks."""
    return np.percentile(distances, chunks_percentile(len(distances), number_of_chunks))


def _langchain_chunks(text: str, pieces: list[tuple[int, int]], members: list[list[int]]) -> list[CompatChunk]:
    """Each group of pieces joined with single spaces, placed as span recovery places SemanticChunker's chunks.

    Verbatim at its first piece's start: that slice. Otherwise ``rewritten``, its span
    from the first to the last non-space character its pieces cover. An empty chunk (a
    trailing empty sentence) sits where the previous chunk ended.
    """
    chunks: list[CompatChunk] = []
    for group in members:
        joined = " ".join(text[a:b] for a, b in (pieces[i] for i in group))
        start, end = pieces[group[0]][0], pieces[group[-1]][1]
        if not joined:
            at = chunks[-1].end if chunks else 0
            chunks.append(CompatChunk(at, at, None, {SPAN_STATUS_KEY: SpanStatus.EXACT.value}))
        elif text.startswith(joined, start):
            chunks.append(CompatChunk(start, start + len(joined)))
        else:
            covered = text[start:end]
            head = start + len(covered) - len(covered.lstrip())
            tail = start + len(covered.rstrip())
            chunks.append(CompatChunk(head, max(head, tail), joined))
    return chunks
