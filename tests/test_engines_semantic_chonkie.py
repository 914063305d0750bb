"""chonkie.semantic: chonkie's SemanticChunker with the packaged all-MiniLM-L6-v2, as an engine.

What must hold: the engine's chunks and their offsets are SemanticChunker's called directly with chonkie's own
SentenceTransformerEmbeddings of the packaged model, on every sample and on short texts written here; a text
that changes topic is cut where it changes; every span is exact; a rerun embeds nothing new; settings chonkie
refuses are refused with a sentence naming the engine. Each comparison embeds every sentence and window twice
(the app's cached embedder, chonkie's own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_engines import SEMANTIC_GROUP, chonkie_chunks

from core import load
from core.config import PipelineConfig
from core.errors import ConfigError
from core.schema import Document
from core.spans.recovery import SPAN_STATUS_KEY
from core.splitters import SPLITTERS

# With the other engines that embed (test_engines.py's SEMANTIC_GROUP): one worker loads the model.
pytestmark = [pytest.mark.model, pytest.mark.xdist_group(SEMANTIC_GROUP)]

SAMPLES = Path(__file__).resolve().parents[1] / "sample_docs"
CHUNKING = (
    "Chunk size sets how much text each node holds. Overlap repeats the end of one chunk at the start of the next. "
    "A retriever finds chunks by comparing their embeddings with the query. Small chunks match narrow questions "
    "well. Large chunks keep more context for the model to read. "
)
PANDAS = (
    "Giant pandas eat bamboo for most of the day. They live in the mountains of central China. "
    "A newborn panda weighs about as much as a stick of butter. Pandas spend many hours resting between meals. "
    "Their black and white coat helps them hide in snow and shadow."
)


def split(text: str, **settings: Any) -> tuple[list[Any], list[Any]]:
    """The engine's nodes of ``text`` and SemanticChunker's own chunks, at ``settings``."""
    engine = SPLITTERS.create("chonkie.semantic", **settings)
    nodes = engine.split([Document(text=text, metadata={"file_name": "t.txt"})])
    return nodes, chonkie_chunks("chonkie.semantic", engine.to_params(), text)


def test_a_change_of_topic_is_where_it_cuts() -> None:
    nodes, theirs = split(CHUNKING + PANDAS)
    assert [node.text for node in nodes] == [chunk.text for chunk in theirs] == [CHUNKING, PANDAS]
    assert [(node.start_char, node.end_char) for node in nodes] == [
        (0, len(CHUNKING)),
        (len(CHUNKING), len(CHUNKING + PANDAS)),
    ]


def test_fewer_sentences_than_the_window_are_one_chunk() -> None:
    text = "Chunking decides what a retriever can find. Overlap repeats context."
    nodes, theirs = split(text)
    assert [node.text for node in nodes] == [chunk.text for chunk in theirs] == [text]


def test_blank_text_has_no_chunks() -> None:
    nodes, theirs = split("  \n ")
    assert nodes == [] and theirs == []


def test_a_group_over_chunk_size_is_cut_between_sentences() -> None:
    nodes, theirs = split(CHUNKING + PANDAS, chunk_size=24)
    assert [node.text for node in nodes] == [chunk.text for chunk in theirs]
    assert len(nodes) > 2 and "".join(node.text for node in nodes) == CHUNKING + PANDAS


SMALL = {"threshold": 0.5, "chunk_size": 128, "similarity_window": 1, "skip_window": 1}
SAMPLE_CASES = [
    *((name, {}) for name in ("chunking_guide.md", "release_notes.txt", "vector_search_faq.html", "chunk_stats.py")),
    ("rag_handbook.pdf", {}),
    ("chunking_guide.md", SMALL),
    ("release_notes.txt", SMALL),
]


@pytest.mark.parametrize(
    ("name", "settings"), SAMPLE_CASES, ids=[f"{n}-{'small' if s else 'defaults'}" for n, s in SAMPLE_CASES]
)
def test_on_every_sample_the_chunks_and_offsets_are_semanticchunkers(name: str, settings: dict[str, Any]) -> None:
    for document in load(SAMPLES / name):
        nodes, theirs = split(document.text, **settings)
        assert [node.text for node in nodes] == [chunk.text for chunk in theirs]
        assert [(node.start_char, node.end_char) for node in nodes] == [(c.start_index, c.end_index) for c in theirs]
        assert {node.metadata[SPAN_STATUS_KEY] for node in nodes} == {"exact"}
        assert len(nodes) > 1


def test_a_rerun_embeds_nothing_new() -> None:
    from core.embed.embedder import get_embedder

    engine = SPLITTERS.create("chonkie.semantic", similarity_window=2)
    document = load(SAMPLES / "release_notes.txt")[0]
    first = [node.text for node in engine.split([document])]
    before = get_embedder().cache_stats()
    assert [node.text for node in engine.split([document])] == first
    after = get_embedder().cache_stats()
    assert after["misses"] == before["misses"] and after["hits"] > before["hits"]


def test_its_parameters_round_trip_through_a_config() -> None:
    engine = SPLITTERS.create(
        "chonkie.semantic", threshold=0.6, delim=(". ", "\n\n"), include_delim="next", filter_window=7
    )
    config = PipelineConfig(splitter=engine)
    assert PipelineConfig.from_json(config.to_json()).splitter == engine
    assert engine.size_unit == "model" and engine.embeds_text


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"threshold": 1}, "threshold must be between 0 and 1"),
        ({"filter_tolerance": 0}, "filter_tolerance must be between 0 and 1"),
        ({"filter_window": 3, "filter_polyorder": 3}, "filter_polyorder must be below filter_window"),
        ({"delim": ()}, "delim needs at least one delimiter"),
    ],
)
def test_what_chonkie_refuses_is_refused_naming_the_engine(settings: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=f"chonkie.semantic: {says}"):
        SPLITTERS.create("chonkie.semantic", **settings)


def boundaries(nodes: list[Any]) -> set[int]:
    """Where the nodes' chunks end, but the last."""
    return {node.end_char for node in nodes[:-1]}


CURVE_CASES = [
    *((name, {}) for name in ("chunking_guide.md", "release_notes.txt", "vector_search_faq.html", "chunk_stats.py")),
    ("rag_handbook.pdf", {}),
    ("chunking_guide.md", {**SMALL, "chunk_size": 48}),
    ("release_notes.txt", SMALL),
]


def curve_documents(name: str) -> list[Document]:
    if name == "two topics":
        return [Document(text=CHUNKING + PANDAS, metadata={"file_name": "t.txt"})]
    return load(SAMPLES / name)


@pytest.mark.parametrize(
    ("name", "settings"),
    [("two topics", {}), ("two topics", {"chunk_size": 24}), *CURVE_CASES],
    ids=["two-topics", "two-topics-size-cuts", *(f"{n}-{'small' if s else 'defaults'}" for n, s in CURVE_CASES)],
)
def test_the_breakpoints_drawn_are_the_cuts_chonkie_made_on_its_curve(name: str, settings: dict[str, Any]) -> None:
    import chonkie_core
    import numpy as np

    from core.splitters.base import MAX_CHUNK_SIZE

    engine = SPLITTERS.create("chonkie.semantic", **settings)
    # The same chunker with no size limit makes only the curve's cuts: chunk_size splits groups, never joins them.
    unsized = SPLITTERS.create("chonkie.semantic", **{**settings, "chunk_size": MAX_CHUNK_SIZE})
    p = engine.to_params()
    for document in curve_documents(name):
        analysis = engine.analyze(document)
        assert "".join(document.text[s:e] for s, e in analysis.sentence_spans) == document.text
        ends = [end for _, end in analysis.sentence_spans]
        drawn = {ends[i] for i in analysis.breakpoints}
        size_cuts = {ends[i] for i in analysis.size_cuts}
        curve_cuts = boundaries(unsized.split([document]))
        assert drawn == curve_cuts and drawn, "every cut from the curve, and only those, is a breakpoint"
        assert size_cuts == boundaries(engine.split([document])) - curve_cuts
        # chonkie's rule on the curve: a low point of the Savitzky-Golay filtered similarity (its slope within
        # filter_tolerance of flat, curving up) whose similarity is at or below the threshold.
        window = p["similarity_window"]
        similarity = np.asarray(analysis.scores[window - 1 :])
        slope = chonkie_core.savgol_filter(similarity, p["filter_window"], p["filter_polyorder"], 1)
        bend = chonkie_core.savgol_filter(similarity, p["filter_window"], p["filter_polyorder"], 2)
        smoothed = chonkie_core.savgol_filter(similarity, p["filter_window"], p["filter_polyorder"], 0)
        assert np.allclose(analysis.smoothed[window - 1 :], smoothed)
        assert analysis.threshold is not None and len(analysis.scores) == len(analysis.sentence_spans) - 1
        for i in analysis.breakpoints:
            assert abs(slope[i - window + 1]) < p["filter_tolerance"] and bend[i - window + 1] > 0
            assert analysis.scores[i] <= analysis.threshold
        assert np.allclose(1 - np.asarray(analysis.distances[window - 1 :]), similarity)  # its distance form


def test_a_text_too_short_for_the_window_has_no_curve() -> None:
    engine = SPLITTERS.create("chonkie.semantic")
    text = "Chunking decides what a retriever can find. Overlap repeats context."
    analysis = engine.analyze(Document(text=text, metadata={"file_name": "t.txt"}))
    assert analysis.threshold is None and analysis.scores == [] and analysis.breakpoints == []
    assert analysis.sentence_spans[0][0] == 0 and analysis.sentence_spans[-1][1] == len(text)
