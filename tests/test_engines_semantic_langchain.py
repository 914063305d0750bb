"""langchain.semantic: langchain-experimental's SemanticChunker with the packaged all-MiniLM-L6-v2, as an engine.

What must hold: the engine's chunks are SemanticChunker's called directly with LangChain's HuggingFaceEmbeddings
of the packaged model, in order, at every threshold type and the other settings, on a sample the tests did not
write; the threshold rules' edge cases (one sentence, two, equal distances, more chunks asked for than there
are sentences) go as LangChain's go; what ``analyze`` draws is what the chunker cut. Short texts only: every
comparison embeds each sentence group twice (the app's cached embedder, LangChain's own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_engines import SEMANTIC_GROUP, framework_vectors_remembered, semantic_chunker  # noqa: F401 - a fixture

from core import load
from core.errors import ConfigError
from core.schema import Document
from core.spans.recovery import SPAN_STATUS_KEY
from core.splitters import SPLITTERS

# Grouped with test_engines.py's semantic cases (see SEMANTIC_GROUP there): six of the eight settings below make the same
# SemanticChunker embedding call (one buffer size, one sentence rule), answered once (framework_vectors_remembered,
# asked for by the tests that embed).
pytestmark = [pytest.mark.model, pytest.mark.xdist_group(SEMANTIC_GROUP)]
embeds = pytest.mark.usefixtures("framework_vectors_remembered")

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "sample_docs" / "release_notes.txt"  # 34 sentences, written for the app's samples


def both(text: str, **settings: Any) -> tuple[list[str], list[str], Any]:
    """The engine's chunk texts, SemanticChunker's own, and the engine's analysis, for ``text``."""
    engine = SPLITTERS.create("langchain.semantic", **settings)
    document = Document(text=text, metadata={"file_name": "t.txt"})
    ours = [node.text for node in engine.split([document])]
    theirs = semantic_chunker(engine.to_params()).split_text(text)
    return ours, theirs, engine.analyze(document)


def chunks_from(text: str, analysis: Any) -> list[str]:
    """The chunks the analysis's breakpoints make, joined as SemanticChunker joins sentences."""
    sentences = [text[a:b] for a, b in analysis.sentence_spans]
    bounds = [0, *(i + 1 for i in analysis.breakpoints), len(sentences)]
    return [" ".join(sentences[a:b]) for a, b in zip(bounds, bounds[1:], strict=False) if a < b]


@embeds
@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"breakpoint_threshold_amount": 70},
        {"breakpoint_threshold_type": "standard_deviation", "breakpoint_threshold_amount": 1},
        {"breakpoint_threshold_type": "interquartile", "breakpoint_threshold_amount": 0.5},
        {"breakpoint_threshold_type": "gradient", "breakpoint_threshold_amount": 80},
        {"number_of_chunks": 6, "buffer_size": 0},
        {"breakpoint_threshold_amount": 60, "min_chunk_size": 400},
        {"sentence_split_regex": r"\n+", "buffer_size": 2, "breakpoint_threshold_amount": 75},
    ],
    ids=["defaults", "p70", "stdev", "iqr", "gradient", "n6", "min400", "lines"],
)
def test_the_chunks_are_semanticchunkers_in_order_and_analyze_draws_its_cuts(settings: dict[str, Any]) -> None:
    document = load(NOTES)[0]
    engine = SPLITTERS.create("langchain.semantic", **settings)
    nodes = engine.split([document])
    expected = semantic_chunker(engine.to_params()).split_text(document.text)
    assert [node.text for node in nodes] == expected
    assert len(expected) > 1
    for node in nodes:  # joined with spaces: exact where no line break was inside, else rewritten on its words
        source = document.text[node.start_char : node.end_char]
        assert node.metadata[SPAN_STATUS_KEY] in ("exact", "rewritten")
        assert source.split() == node.text.split()
    assert chunks_from(document.text, engine.analyze(document)) == expected


@embeds
@pytest.mark.parametrize("kind", ["percentile", "standard_deviation", "interquartile", "gradient"])
def test_one_sentence_is_one_chunk_with_nothing_to_draw(kind: str) -> None:
    ours, theirs, analysis = both("Chunking decides what a retriever can find", breakpoint_threshold_type=kind)
    assert ours == theirs == ["Chunking decides what a retriever can find"]
    assert analysis.threshold is None and analysis.breakpoints == []


@embeds
@pytest.mark.parametrize("kind", ["percentile", "standard_deviation", "interquartile", "gradient"])
def test_two_sentences(kind: str) -> None:
    text = "Overlap repeats the end of a chunk. Pandas eat bamboo in the mountains."
    ours, theirs, analysis = both(text, breakpoint_threshold_type=kind)
    assert ours == theirs
    if kind == "gradient":  # LangChain returns the two sentences as they are: np.gradient needs two distances
        assert theirs == ["Overlap repeats the end of a chunk.", "Pandas eat bamboo in the mountains."]
        assert analysis.threshold is None
    else:  # one distance: every rule's threshold is that distance (or above it), and it is not above itself
        assert theirs == [text]
        assert analysis.breakpoints == [] and len(analysis.distances) == 1


@embeds
def test_equal_distances_cut_nowhere() -> None:
    # Each sentence embedded alone (buffer 0): the same vector four times, the same distance three times.
    text = "The index is rebuilt nightly. " * 4
    for kind in ("percentile", "standard_deviation", "interquartile", "gradient"):
        ours, theirs, analysis = both(text.strip(), buffer_size=0, breakpoint_threshold_type=kind)
        assert ours == theirs == [text.strip()], kind
        assert len(set(analysis.distances)) == 1 and analysis.breakpoints == [], kind


@embeds
def test_more_chunks_asked_for_than_sentences() -> None:
    # number_of_chunks above the distances' count: the threshold is their least, so every larger one cuts.
    text = (
        "Chunk size sets the budget. Overlap repeats a little context. "
        "Pandas eat bamboo. The tide comes in twice a day. Chunk size is counted in tokens."
    )
    ours, theirs, analysis = both(text, number_of_chunks=50)
    assert ours == theirs
    assert analysis.threshold == min(analysis.distances)
    assert len(theirs) == len(analysis.distances) + 1 - analysis.distances.count(min(analysis.distances))


def test_a_percentile_above_100_is_refused() -> None:
    with pytest.raises(ConfigError, match="at most 100"):
        SPLITTERS.create("langchain.semantic", breakpoint_threshold_type="gradient", breakpoint_threshold_amount=150)
    SPLITTERS.create("langchain.semantic", breakpoint_threshold_type="standard_deviation", breakpoint_threshold_amount=150)


def test_the_summary_names_langchain_experimental() -> None:
    from importlib.metadata import version

    summary = SPLITTERS.get_class("langchain.semantic").summary
    assert summary.startswith(f"LangChain {version('langchain-experimental')} · SemanticChunker")
