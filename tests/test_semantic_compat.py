"""The semantic splitter's compatible modes equal the engines they mirror, and the frameworks on the edge cases.

``compat="llamaindex"`` must cut as ``llamaindex.semantic`` (SemanticSplitterNodeParser)
and ``compat="langchain"`` as ``langchain.semantic`` (SemanticChunker): the same
``(start_char, end_char, text)`` in order, on documents hypothesis draws (prose,
Markdown, code, CJK, repeated passages, whitespace) with settings it draws (every
threshold type and amount, buffers, number_of_chunks, min_chunk_size, sentence
regexes). Both sides embed through the same function, so the vectors are the same:
a small fake embedder for the many examples, the packaged model for a few.

Only a repeated passage may move a span (the engine places the framework's text by
span recovery and may pick another copy; the compat mode knows its cut): there the
texts must still be equal (``assert_same_split``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import prose
from test_compat_properties import assert_same_split, check_compat_equals_mirror, documents
from test_splitter_properties import fake_embed

from core.engines.mirrors import mirrored_engine
from core.errors import ConfigError
from core.output.splitter_code import splitter_code
from core.schema import Document
from core.splitters import get_splitter
from core.splitters.semantic import embedder_override
from core.tokens.bundled_data import use_bundled_nltk_data
from core.translate.snippet import CodeSnippet

FUZZ_RUN = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
EXAMPLES = settings(
    max_examples=1_000 if FUZZ_RUN else 60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
# Every example embeds each sentence group with the packaged model (cached on disk after the first run).
MODEL_EXAMPLES = settings(EXAMPLES, max_examples=100 if FUZZ_RUN else 6)

REGEXES = [r"(?<=[.?!])\s+", r"(?<=[.?!])\s+", r"\n+", r"(?<=[.?!]) ", r"\s+", r"(?<=\.)(\s)"]


@st.composite
def langchain_params(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["percentile", "standard_deviation", "interquartile", "gradient"]))
    percent = kind in ("percentile", "gradient")
    amount = draw(st.one_of(st.none(), st.floats(0, 100) if percent else st.floats(0, 4)))
    return {
        "compat": "langchain",
        "buffer_size": draw(st.integers(0, 3)),
        "breakpoint_type": kind,
        "breakpoint_amount": amount,
        "number_of_chunks": draw(st.one_of(st.none(), st.none(), st.integers(1, 12))),
        "min_chunk_size": draw(st.one_of(st.none(), st.none(), st.integers(1, 300))),
        "sentence_split_regex": draw(st.sampled_from(REGEXES)),
        "include_metadata": draw(st.booleans()),
        "include_prev_next_rel": draw(st.booleans()),
    }


@st.composite
def llamaindex_params(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "compat": "llamaindex",
        "buffer_size": draw(st.integers(0, 3)),
        "breakpoint_amount": draw(st.one_of(st.none(), st.integers(0, 100).map(float))),
        "include_metadata": draw(st.booleans()),
        "include_prev_next_rel": draw(st.booleans()),
    }


@pytest.fixture(autouse=True, scope="module")
def _nltk_data():
    use_bundled_nltk_data()


@pytest.mark.parametrize("params", [llamaindex_params(), langchain_params()], ids=["llamaindex", "langchain"])
def test_a_semantic_compat_mode_equals_the_engine_on_generated_documents(params: st.SearchStrategy) -> None:
    @EXAMPLES
    @given(document=documents, settings=params)
    def run(document: Document, settings: dict[str, Any]) -> None:
        compat = settings.pop("compat")
        with embedder_override(fake_embed):
            check_compat_equals_mirror("semantic", compat, settings, document, ())

    run()


@pytest.mark.model
@pytest.mark.parametrize("params", [llamaindex_params(), langchain_params()], ids=["llamaindex", "langchain"])
def test_with_the_packaged_model_too(params: st.SearchStrategy) -> None:
    @MODEL_EXAMPLES
    @given(text=prose(), settings=params)
    def run(text: str, settings: dict[str, Any]) -> None:
        compat = settings.pop("compat")
        check_compat_equals_mirror("semantic", compat, settings, Document(text=text[:1500]), ())

    run()


# ------------------------------------------------------------------------------------------ literal edge cases


def topic_embed(texts: list[str]) -> np.ndarray:
    """Cats one way, cars another: a group's vector counts its sentences about each."""
    return np.array([[1.0 + t.count("cat"), 1.0 + t.count("car"), 0.01] for t in texts])


def constant_embed(texts: list[str]) -> np.ndarray:
    """Every group alike: every distance is the same (zero)."""
    return np.ones((len(texts), 3))


def both(text: str, embed: Any, **params: Any) -> tuple[list[str], list[str]]:
    """The compat mode's chunk texts and its engine's (the framework called through ChunkScope's adapter)."""
    splitter = get_splitter("semantic", **params)
    document = Document(text=text)
    with embedder_override(embed):
        ours = splitter.split([document])
        theirs = mirrored_engine(splitter).split([document])
    assert_same_split(document, ours, theirs, ())
    return [n.text for n in ours], [n.text for n in theirs]


TOPICS = "A cat sat. The cat purred. My cat slept. A car honked. The car sped. Her car stopped."


@pytest.mark.parametrize("compat", ["llamaindex", "langchain"])
def test_one_sentence_is_one_chunk(compat: str) -> None:
    ours, theirs = both("Only one sentence here", topic_embed, compat=compat)
    assert ours == theirs == ["Only one sentence here"]


@pytest.mark.parametrize(
    ("compat", "kind", "expected"),
    [
        # Two sentences, one distance: the percentile of one value is that value, and nothing is above it.
        ("llamaindex", "percentile", ["A cat sat. A car honked."]),
        ("langchain", "percentile", ["A cat sat. A car honked."]),
        ("langchain", "standard_deviation", ["A cat sat. A car honked."]),
        ("langchain", "interquartile", ["A cat sat. A car honked."]),
        # SemanticChunker returns two sentences as they are for gradient (np.gradient needs two distances).
        ("langchain", "gradient", ["A cat sat.", "A car honked."]),
    ],
)
def test_two_sentences(compat: str, kind: str, expected: list[str]) -> None:
    ours, theirs = both("A cat sat. A car honked.", topic_embed, compat=compat, breakpoint_type=kind)
    assert ours == theirs == expected


@pytest.mark.parametrize(
    "params",
    [
        {"compat": "llamaindex"},
        {"compat": "langchain"},
        {"compat": "langchain", "breakpoint_type": "standard_deviation"},
        {"compat": "langchain", "breakpoint_type": "interquartile"},
        {"compat": "langchain", "breakpoint_type": "gradient"},
        {"compat": "langchain", "number_of_chunks": 3},
    ],
)
def test_equal_distances_make_one_chunk(params: dict[str, Any]) -> None:
    # Every distance equal: no distance (or gradient) is strictly above any threshold drawn from them.
    ours, theirs = both(TOPICS, constant_embed, **params)
    assert ours == theirs == [TOPICS]


@pytest.mark.parametrize(
    ("compat", "first"),
    [
        # LlamaIndex's sentences run to the next one's start (the space stays); LangChain's lose the space.
        ("llamaindex", "A cat sat. The cat purred. My cat slept. "),
        ("langchain", "A cat sat. The cat purred. My cat slept."),
    ],
)
def test_the_topic_change_is_the_cut(compat: str, first: str) -> None:
    ours, theirs = both(TOPICS, topic_embed, compat=compat, buffer_size=0, breakpoint_amount=80)
    assert ours == theirs == [first, "A car honked. The car sped. Her car stopped."]


def test_more_chunks_asked_for_than_sentences_cuts_at_every_sentence_but_the_lowest() -> None:
    # number_of_chunks is capped at the number of distances: the 0th percentile, so every distance above
    # the smallest is a cut.
    ours, theirs = both(TOPICS, topic_embed, compat="langchain", buffer_size=0, number_of_chunks=50)
    assert ours == theirs
    assert len(ours) >= 2 and "".join(ours).replace(" ", "") == TOPICS.replace(" ", "")


def test_min_chunk_size_runs_a_short_chunk_on() -> None:
    ours, theirs = both(TOPICS, topic_embed, compat="langchain", buffer_size=0, number_of_chunks=50, min_chunk_size=30)
    assert ours == theirs and all(len(chunk) >= 30 for chunk in ours[:-1])


def test_a_line_break_between_sentences_makes_langchains_chunk_rewritten() -> None:
    splitter = get_splitter("semantic", compat="langchain", buffer_size=0, breakpoint_amount=50)
    text = "A cat sat.\nThe cat purred.\nA car honked.\nThe car sped."
    with embedder_override(topic_embed):
        nodes = splitter.split([Document(text=text)])
    assert [n.text for n in nodes] == ["A cat sat. The cat purred.", "A car honked. The car sped."]
    assert [n.metadata["span_status"] for n in nodes] == ["rewritten", "rewritten"]
    sources = [text[n.start_char : n.end_char] for n in nodes]
    assert sources == ["A cat sat.\nThe cat purred.", "A car honked.\nThe car sped."]


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"compat": "llamaindex", "breakpoint_type": "gradient"}, "breakpoint_type=gradient"),
        ({"compat": "llamaindex", "breakpoint_amount": 92.5}, "breakpoint_amount=92.5"),
        ({"compat": "langchain", "max_chunk_size": 500}, "max_chunk_size"),
        ({"compat": "llamaindex", "number_of_chunks": 4}, "number_of_chunks has no LlamaIndex equivalent"),
        ({"compat": "llamaindex", "min_chunk_size": 4}, "min_chunk_size has no LlamaIndex equivalent"),
        ({"sentence_split_regex": r"\n"}, "set compat=langchain"),
    ],
)
def test_settings_no_framework_call_expresses_are_refused_in_one_sentence(params: dict, words: str) -> None:
    with pytest.raises(ConfigError, match="^semantic: ") as refused:
        get_splitter("semantic", **params)
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_the_default_mode_is_unchanged() -> None:
    splitter = get_splitter("semantic", buffer_size=0).with_embedder(topic_embed)
    assert splitter.compat == "none" and mirrored_engine(splitter) is None
    spans = [(n.start_char, n.end_char) for n in splitter.split([Document(text=TOPICS)])]
    assert spans == [(0, 40), (41, len(TOPICS))]


def test_number_of_chunks_and_min_chunk_size_hold_natively_too() -> None:
    splitter = get_splitter("semantic", buffer_size=0, number_of_chunks=2).with_embedder(topic_embed)
    spans = [(n.start_char, n.end_char) for n in splitter.split([Document(text=TOPICS)])]
    assert spans == [(0, 40), (41, len(TOPICS))]
    # Every distance above the smallest is a cut, but none leaves a chunk under 20 characters.
    splitter = get_splitter("semantic", buffer_size=0, number_of_chunks=99, min_chunk_size=20)
    nodes = splitter.with_embedder(topic_embed).split([Document(text=TOPICS)])
    assert all(len(n.text) >= 20 for n in nodes[:-1]) and len(nodes) >= 2


# ------------------------------------------------------------------------------------------ export


@pytest.mark.parametrize(
    ("params", "library", "call"),
    [
        ({"compat": "llamaindex", "breakpoint_amount": 90}, "LlamaIndex", "SemanticSplitterNodeParser.from_defaults("),
        ({"compat": "langchain", "number_of_chunks": 4}, "LangChain", "SemanticChunker("),
        ({"compat": "langchain", "breakpoint_type": "gradient"}, "LlamaIndex", "LangchainNodeParser(SemanticChunker("),
    ],
)
def test_the_exported_script_is_the_framework_call_and_says_so(params: dict, library: str, call: str) -> None:
    splitter = get_splitter("semantic", **params)
    snippet = CodeSnippet(library, "")
    code = splitter_code(splitter, snippet)
    assert call in "".join(code.split())
    title = mirrored_engine(splitter).title()
    assert f"semantic: ChunkScope ran compat={params['compat']}, which cuts as {title} does; this is that call." in (
        snippet.notes
    )
    if "number_of_chunks" in params:
        assert f"number_of_chunks={params['number_of_chunks']}" in code
    # No note says the framework lacks max_chunk_size: compat refuses it, so the script cuts as the app did.
    assert not any("max_chunk_size" in note for note in snippet.notes)
