"""Postprocessors, literally: short inputs, the parameters, the exact output."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from core import get_postprocessor
from core.errors import ConfigError, ModelUnavailableError
from core.postprocessors import POSTPROCESSORS, PostprocessContext, describe_postprocessors
from core.postprocessors.rerank import RerankPostprocessor
from core.schema import Node, NodeRelationship, NodeWithScore
from core.splitters.nodes import link_chain

REGISTERED = [
    "similarity_cutoff",
    "keyword",
    "metadata_replacement",
    "long_context_reorder",
    "sentence_embedding_optimizer",
    "prev_next",
    "top_n",
    "rerank",
]


def scored(*scores: float | None, texts: list[str] | None = None) -> list[NodeWithScore]:
    texts = texts or [f"text {i}" for i in range(len(scores))]
    return [NodeWithScore(node=Node(text=t, id=f"n{i}"), score=s, query="q") for i, (t, s) in enumerate(zip(texts, scores, strict=True))]


def ids(nodes: list[NodeWithScore]) -> list[str]:
    return [item.id for item in nodes]


# -- the registry ---------------------------------------------------------------


def test_registry_names_are_fixed():
    assert POSTPROCESSORS.names() == REGISTERED


def test_listing_marks_rerank_unavailable_and_is_json():
    listing = {entry["name"]: entry for entry in json.loads(json.dumps(describe_postprocessors()))}
    assert listing["rerank"]["available"] is False
    assert "no cross-encoder model is installed locally" in listing["rerank"]["unavailable_reason"]
    assert all(listing[name]["available"] for name in REGISTERED if name != "rerank")
    assert [p["name"] for p in listing["keyword"]["params"]] == ["required_keywords", "exclude_keywords"]


@pytest.mark.parametrize("name", [n for n in REGISTERED if n not in ("rerank", "prev_next", "sentence_embedding_optimizer")])
def test_process_never_mutates_its_input(name):
    nodes = scored(0.9, None, 0.5, texts=["alpha beta", "gamma", "beta delta"])
    nodes[0].node.metadata["window"] = "wide alpha beta window"
    snapshot = copy.deepcopy(nodes)
    get_postprocessor(name).process(nodes, "beta")
    assert [(n.id, n.score, n.node.text, n.node.metadata) for n in nodes] == [
        (n.id, n.score, n.node.text, n.node.metadata) for n in snapshot
    ]


def test_unknown_parameter_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown parameter 'cutoff'"):
        get_postprocessor("similarity_cutoff", cutoff=0.5)


# -- similarity_cutoff ----------------------------------------------------------


def test_cutoff_drops_missing_and_lower_keeps_equal():
    nodes = scored(0.9, 0.5, None, 0.49, 0.7)
    out = get_postprocessor("similarity_cutoff", similarity_cutoff=0.5).process(nodes, "q")
    assert ids(out) == ["n0", "n1", "n4"]


def test_cutoff_reasons_name_the_score():
    outcome = get_postprocessor("similarity_cutoff", similarity_cutoff="0.5").run(scored(0.25, None), "q")
    assert outcome.dropped == {
        "n0": "its score 0.25 is below the cutoff 0.5",
        "n1": "it has no score and the cutoff is 0.5",
    }


def test_no_cutoff_keeps_everything_even_unscored_and_says_so():
    nodes = scored(None, 0.1, -3.0)
    unset = get_postprocessor("similarity_cutoff", similarity_cutoff=None)
    assert ids(unset.process(nodes, "q")) == ["n0", "n1", "n2"]
    assert unset.idle_reason() == "no similarity_cutoff is set, so every node is kept"


def test_the_default_cutoff_acts_on_cosine_scores():
    nodes = scored(0.62, 0.12, 0.31)
    assert ids(get_postprocessor("similarity_cutoff").process(nodes, "q")) == ["n0", "n2"]
    assert get_postprocessor("similarity_cutoff").idle_reason() is None


@pytest.mark.parametrize(
    ("name", "params", "reason"),
    [
        ("keyword", {}, "no required or excluded keyword is set, so every node is kept"),
        ("keyword", {"required_keywords": "  "}, "no required or excluded keyword is set, so every node is kept"),
        (
            "sentence_embedding_optimizer",
            {"percentile_cutoff": None},
            "neither percentile_cutoff nor threshold_cutoff is set, so every sentence is kept",
        ),
    ],
)
def test_a_stage_that_cannot_act_says_why(name: str, params: dict, reason: str) -> None:
    assert get_postprocessor(name, **params).idle_reason() == reason


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How much overlap should chunks have?", {"required_keywords": ("overlap",)}),
        ("Is it ok?", {}),  # no word of four letters or more: nothing to require
    ],
)
def test_a_keyword_filter_starts_from_the_querys_longest_word(query: str, expected: dict) -> None:
    from core.postprocessors import POSTPROCESSORS

    assert POSTPROCESSORS.get_class("keyword").starting_values(query) == expected


# -- keyword --------------------------------------------------------------------

TEXTS = [
    "Chunk size matters.",  # n0
    "Chunking is an art.",  # n1
    "The chunk\nsize was raised.",  # n2
    "Overlap repeats text between chunks.",  # n3
]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"required_keywords": "chunk"}, ["n0", "n2"]),  # whole word: not "Chunking", not "chunks"
        ({"required_keywords": "CHUNK SIZE"}, ["n0", "n2"]),  # a phrase, any case, any whitespace
        ({"required_keywords": "chunk,raised"}, ["n2"]),  # all required
        ({"exclude_keywords": "chunk"}, ["n1", "n3"]),
        ({"exclude_keywords": "art,text"}, ["n0", "n2"]),  # any excluded drops
        ({"required_keywords": "size", "exclude_keywords": "raised"}, ["n0"]),
        ({}, ["n0", "n1", "n2", "n3"]),
    ],
)
def test_keyword_whole_word_phrases(params, expected):
    nodes = scored(0.4, 0.3, 0.2, 0.1, texts=TEXTS)
    assert ids(get_postprocessor("keyword", **params).process(nodes, "q")) == expected


def test_keyword_reasons():
    outcome = get_postprocessor("keyword", required_keywords="size", exclude_keywords="art").run(
        scored(0.4, 0.3, texts=["Chunking is an art.", "Size and art."]), "q"
    )
    assert outcome.dropped == {
        "n0": "it lacks the required keyword 'size'",
        "n1": "it contains the excluded keyword 'art'",
    }


def test_keyword_reasons_name_several_keywords_in_plain_words():
    outcome = get_postprocessor("keyword", required_keywords="overlap, window, stride").run(
        scored(0.4, texts=["Overlap only."]), "q"
    )
    assert outcome.dropped == {"n0": "it lacks the required keywords 'window' and 'stride'"}


def test_keyword_matches_symbols_literally():
    nodes = scored(0.5, 0.4, texts=["Written in C++ today.", "Written in C today."])
    assert ids(get_postprocessor("keyword", required_keywords="c++").process(nodes, "q")) == ["n0"]


# -- metadata_replacement -------------------------------------------------------


def test_window_replaces_the_sentence_and_a_node_without_it_is_unchanged():
    nodes = scored(0.8, 0.6, texts=["The limit is 500.", "Unrelated."])
    nodes[0].node.metadata["window"] = "Rate limits apply. The limit is 500. It was raised in May."
    out = get_postprocessor("metadata_replacement", target_metadata_key="window").process(nodes, "q")
    assert [n.node.text for n in out] == ["Rate limits apply. The limit is 500. It was raised in May.", "Unrelated."]
    assert [n.score for n in out] == [0.8, 0.6]
    assert out[1] is nodes[1]
    assert nodes[0].node.text == "The limit is 500."  # the input node is untouched


def test_window_replacement_on_nodes_without_a_window_says_why_it_changed_nothing():
    from core.query.chain import trace_stage
    from core.query.trace_view import stage_summary

    nodes = scored(0.8, 0.6, 0.4)
    step = get_postprocessor("metadata_replacement")
    outcome = step.run(list(nodes), "q")
    assert [n.node.text for n in outcome.nodes] == [n.node.text for n in nodes]
    reason = (
        "no node carries the 'window' metadata key, so every text stays as it was "
        "(split with sentence_window or llamaindex.sentence_window, or name a key they carry)"
    )
    assert outcome.idle_reason == reason
    assert step.missing_input_reason({"file_name", "page_label"}) == reason
    assert step.missing_input_reason({"file_name", "window"}) is None
    assert stage_summary(trace_stage(step, nodes, outcome)) == f"3 in → 3 out · changed nothing: {reason}"
    # One node with a window is enough to act on: no reason then.
    nodes[1].node.metadata["window"] = "A wider window."
    assert step.run(list(nodes), "q").idle_reason is None


# -- long_context_reorder -------------------------------------------------------


def test_reorder_puts_the_best_at_both_ends_exactly_as_llamaindex():
    nodes = scored(0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
    out = get_postprocessor("long_context_reorder").process(nodes, "q")
    assert [n.score for n in out] == [0.9, 0.7, 0.5, 0.3, 0.1, 0.2, 0.4, 0.6, 0.8]


def test_reorder_counts_a_missing_score_as_zero_and_keeps_ties_in_order():
    nodes = scored(0.5, None, 0.0, 0.5, -0.2)
    out = get_postprocessor("long_context_reorder").process(nodes, "q")
    # ascending, stable: n4(-0.2), n1(None=0), n2(0), n0(0.5), n3(0.5); evens to the front, odds to the back
    assert ids(out) == ["n3", "n2", "n4", "n1", "n0"]


# -- top_n ----------------------------------------------------------------------


def test_top_n_keeps_the_first_n_in_their_order():
    nodes = scored(0.1, 0.9, 0.5, 0.7)
    outcome = get_postprocessor("top_n", top_n=2).run(nodes, "q")
    assert ids(outcome.nodes) == ["n0", "n1"]
    assert outcome.dropped == {"n2": "it came at position 3, after the first 2", "n3": "it came at position 4, after the first 2"}


# -- prev_next ------------------------------------------------------------------


def chain(count: int) -> list[Node]:
    nodes = [Node(text=f"part {i}", id=f"c{i}") for i in range(count)]
    link_chain(nodes)
    return nodes


@pytest.mark.parametrize(
    ("mode", "num_nodes", "expected"),
    [
        ("next", 1, ["c2", "c3"]),
        ("previous", 1, ["c1", "c2"]),
        ("both", 1, ["c1", "c2", "c3"]),
        ("both", 2, ["c0", "c1", "c2", "c3", "c4"]),
        ("next", 5, ["c2", "c3", "c4", "c5"]),  # stops at the end of the chain
    ],
)
def test_prev_next_adds_neighbours_through_relationships(mode, num_nodes, expected):
    store = chain(6)
    hit = [NodeWithScore(node=store[2], score=0.8, query="q")]
    context = PostprocessContext.from_nodes(store)
    out = get_postprocessor("prev_next", mode=mode, num_nodes=num_nodes).process(hit, "q", context)
    assert ids(out) == expected
    assert [n.score for n in out if n.id != "c2"] == [None] * (len(expected) - 1)
    assert next(n for n in out if n.id == "c2").score == 0.8


def test_prev_next_does_not_duplicate_a_neighbour_already_retrieved():
    store = chain(4)
    hits = [NodeWithScore(node=store[1], score=0.9), NodeWithScore(node=store[2], score=0.7)]
    outcome = get_postprocessor("prev_next", mode="both").run(hits, "q", PostprocessContext.from_nodes(store))
    assert ids(outcome.nodes) == ["c0", "c1", "c2", "c3"]
    assert [n.score for n in outcome.nodes] == [None, 0.9, 0.7, None]
    assert outcome.added == {"c0": "it comes 1 node before c1", "c3": "it comes 1 node after c2"}


def test_prev_next_without_the_node_store_says_so():
    store = chain(2)
    with pytest.raises(ConfigError, match="prev_next needs the node store"):
        get_postprocessor("prev_next").process([NodeWithScore(node=store[0], score=1.0)], "q")


def test_prev_next_mode_is_a_declared_choice():
    with pytest.raises(ConfigError, match="mode must be one of previous, next, both"):
        get_postprocessor("prev_next", mode="sideways")


# -- sentence_embedding_optimizer -----------------------------------------------


class FakeEmbedder:
    """Embeds by keyword: axis 0 for 'limit', axis 1 for 'raised', axis 2 otherwise."""

    def embed(self, texts, progress=None):
        rows = []
        for text in texts:
            lowered = text.lower()
            row = np.array([lowered.count("limit"), 0.5 * lowered.count("raised"), 0.1], dtype=np.float32)
            rows.append(row / np.linalg.norm(row))
        return np.stack(rows)

    def embed_query(self, text):
        return np.array([1.0, 0.0, 0.0], dtype=np.float32)


OPTIMIZER_TEXT = "Intro line here. The limit is 500. It was raised in May. Weather was fine. Limits matter."


def optimize(**params):
    nodes = scored(0.7, texts=[OPTIMIZER_TEXT])
    context = PostprocessContext(embedder=FakeEmbedder())
    return get_postprocessor("sentence_embedding_optimizer", **params).run(nodes, "What is the limit?", context)


def test_optimizer_threshold_keeps_the_matching_sentences_in_order():
    outcome = optimize(threshold_cutoff=0.9, context_before=0, context_after=0)
    assert outcome.nodes[0].node.text == "The limit is 500. Limits matter."
    assert outcome.nodes[0].score == 0.7
    selection = outcome.sentences["n0"]
    assert [OPTIMIZER_TEXT[s:e] for s, e in selection.kept] == ["The limit is 500.", "Limits matter."]
    assert [OPTIMIZER_TEXT[s:e] for s, e in selection.removed] == [
        "Intro line here.",
        "It was raised in May.",
        "Weather was fine.",
    ]


def test_optimizer_context_after_adds_the_following_sentence():
    outcome = optimize(threshold_cutoff=0.9, context_before=0, context_after=1)
    assert outcome.nodes[0].node.text == "The limit is 500. It was raised in May. Limits matter."


def test_optimizer_percentile_keeps_the_best_fraction():
    # 5 sentences x 0.2 = 1 sentence: the first of the two equally best, by text order.
    outcome = optimize(percentile_cutoff=0.2, context_before=0, context_after=0)
    assert outcome.nodes[0].node.text == "The limit is 500."


def test_optimizer_percentile_and_threshold_combine():
    # The best 3 are the two 'limit' sentences and 'raised'; the threshold then removes 'raised'.
    outcome = optimize(percentile_cutoff=0.6, threshold_cutoff=0.9, context_before=1, context_after=0)
    assert outcome.nodes[0].node.text == "Intro line here. The limit is 500. Weather was fine. Limits matter."


def test_optimizer_drops_a_node_with_no_sentence_over_the_threshold():
    nodes = scored(0.7, texts=["Nothing here. Nor here."])
    outcome = get_postprocessor("sentence_embedding_optimizer", threshold_cutoff=0.5).run(
        nodes, "limit?", PostprocessContext(embedder=FakeEmbedder())
    )
    assert outcome.nodes == []
    assert outcome.dropped["n0"] == "none of its sentences reaches the threshold 0.5 (best 0)"


def test_optimizer_without_cutoffs_changes_nothing():
    outcome = optimize()
    assert outcome.nodes[0].node.text == OPTIMIZER_TEXT
    assert outcome.changed == {}


# -- rerank ---------------------------------------------------------------------


def length_scorer(query, texts):
    return [float(len(text)) for text in texts]


def test_rerank_sorts_by_the_cross_encoder_and_keeps_top_n():
    nodes = scored(0.9, 0.8, 0.7, texts=["a", "ccc", "bb"])
    outcome = RerankPostprocessor(top_n=2, scorer=length_scorer).run(nodes, "q")
    assert ids(outcome.nodes) == ["n1", "n2"]
    assert [n.score for n in outcome.nodes] == [3.0, 2.0]
    assert outcome.dropped == {"n0": "the cross-encoder ranked it 3 (score 1), after the best 2"}


def test_rerank_without_a_model_says_so_plainly():
    with pytest.raises(ModelUnavailableError, match="^no cross-encoder model is installed locally; set model_path"):
        get_postprocessor("rerank").process(scored(0.5), "q")


def test_rerank_with_a_missing_model_directory_names_it(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(ModelUnavailableError, match="no cross-encoder model directory at"):
        get_postprocessor("rerank", model_path=str(missing)).process(scored(0.5), "q")


def test_relationships_survive_a_text_change():
    store = chain(2)
    store[0].metadata["window"] = "wide"
    out = get_postprocessor("metadata_replacement").process([NodeWithScore(node=store[0], score=1.0)], "q")
    assert out[0].node.relationships[NodeRelationship.NEXT] == "c1"
    assert out[0].node.relationships is not store[0].relationships
