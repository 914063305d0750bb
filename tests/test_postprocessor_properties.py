"""Postprocessor properties over generated node lists."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from core import get_postprocessor
from core.postprocessors.rerank import RerankPostprocessor
from core.schema import Node, NodeWithScore

WORDS = ["chunk", "size", "overlap", "window", "Chunking", "CHUNK", "vector", "size."]
scores = st.one_of(st.none(), st.floats(min_value=-1, max_value=1, allow_nan=False))
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)


@st.composite
def node_lists(draw):
    pairs = draw(st.lists(st.tuples(scores, texts), max_size=12))
    return [NodeWithScore(node=Node(text=text, id=f"n{i}"), score=score, query="q") for i, (score, text) in enumerate(pairs)]


def ids(nodes):
    return [item.id for item in nodes]


def is_subsequence(small, big):
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


@given(node_lists(), st.floats(min_value=-1, max_value=1, allow_nan=False))
def test_cutoff_returns_an_ordered_subset_with_every_score_at_least_the_cutoff(nodes, cutoff):
    out = get_postprocessor("similarity_cutoff", similarity_cutoff=cutoff).process(nodes, "q")
    assert is_subsequence(ids(out), ids(nodes))
    assert all(item.score is not None and item.score >= cutoff for item in out)
    # and nothing that qualifies is lost
    assert len(out) == sum(1 for item in nodes if item.score is not None and item.score >= cutoff)


@given(node_lists())
def test_reorder_is_a_permutation_with_the_best_at_an_end(nodes):
    out = get_postprocessor("long_context_reorder").process(nodes, "q")
    assert Counter(ids(out)) == Counter(ids(nodes))
    if nodes:
        best = max((item.score or 0.0) for item in nodes)
        assert (out[0].score or 0.0) == best or (out[-1].score or 0.0) == best


@given(node_lists(), st.integers(min_value=1, max_value=15))
def test_top_n_is_a_prefix(nodes, n):
    out = get_postprocessor("top_n", top_n=n).process(nodes, "q")
    assert out == nodes[:n]


@given(node_lists(), st.lists(st.sampled_from(["chunk", "size", "chunk size", "vector"]), max_size=2), st.lists(st.sampled_from(["overlap", "window"]), max_size=2))
def test_keyword_returns_an_ordered_subset(nodes, required, excluded):
    out = get_postprocessor("keyword", required_keywords=required, exclude_keywords=excluded).process(nodes, "q")
    assert is_subsequence(ids(out), ids(nodes))
    for item in out:
        words = item.node.text.lower().replace(".", " ").split()
        assert not any(word in words for word in excluded)


@given(node_lists(), st.lists(st.floats(min_value=-10, max_value=10, allow_nan=False), min_size=12, max_size=12))
def test_rerank_with_room_for_all_is_a_permutation_sorted_by_the_new_scores(nodes, fake_scores):
    def scorer(query, texts):
        return fake_scores[: len(texts)]

    out = RerankPostprocessor(top_n=50, scorer=scorer).process(nodes, "q")
    assert Counter(ids(out)) == Counter(ids(nodes))
    assert [item.score for item in out] == sorted(fake_scores[: len(nodes)], reverse=True)


@given(
    st.integers(min_value=1, max_value=8),
    st.lists(st.integers(min_value=0, max_value=7), unique=True, max_size=5),
    st.integers(min_value=1, max_value=3),
    st.sampled_from(["previous", "next", "both"]),
)
def test_prev_next_keeps_every_input_adds_unscored_neighbours_and_never_duplicates(length, picks, num_nodes, mode):
    from core.postprocessors import PostprocessContext
    from core.splitters.nodes import link_chain

    store = [Node(text=f"part {i}", id=f"c{i}") for i in range(length)]
    link_chain(store)
    hits = [NodeWithScore(node=store[i], score=1.0) for i in picks if i < length]
    out = get_postprocessor("prev_next", num_nodes=num_nodes, mode=mode).process(hits, "q", PostprocessContext.from_nodes(store))
    assert is_subsequence(ids(hits), ids(out))
    assert len(set(ids(out))) == len(out)
    hit_positions = [int(item.id[1:]) for item in hits]
    for item in out:
        if item.id in ids(hits):
            continue
        assert item.score is None
        position = int(item.id[1:])
        after = mode in ("next", "both") and any(0 < position - p <= num_nodes for p in hit_positions)
        before = mode in ("previous", "both") and any(0 < p - position <= num_nodes for p in hit_positions)
        assert after or before


class HashEmbedder:
    """Deterministic pseudo-random unit vectors per text."""

    def embed(self, texts, progress=None):
        import zlib

        import numpy as np

        rows = [np.random.default_rng(zlib.crc32(t.encode())).normal(size=4) for t in texts]
        return np.stack([row / np.linalg.norm(row) for row in rows]).astype("float32")

    def embed_query(self, text):
        return self.embed([text])[0]


SENTENCES = ["Alpha one.", "Beta two!", "Gamma three?", "Delta four.", "Epsilon five."]


@given(
    st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=6),
    st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0)),
    st.one_of(st.none(), st.floats(min_value=-1.0, max_value=0.5)),
    st.integers(min_value=0, max_value=2),
    st.integers(min_value=0, max_value=2),
)
def test_optimizer_keeps_whole_sentences_in_order(sentences, percentile, threshold, before, after):
    from core.postprocessors import PostprocessContext
    from core.tokens.segmentation import sentence_spans

    text = " ".join(sentences)
    item = NodeWithScore(node=Node(text=text, id="n"), score=0.5)
    optimizer = get_postprocessor(
        "sentence_embedding_optimizer",
        percentile_cutoff=percentile,
        threshold_cutoff=threshold,
        context_before=before,
        context_after=after,
    )
    outcome = optimizer.run([item], "query", PostprocessContext(embedder=HashEmbedder()))
    if "n" in outcome.dropped:
        assert outcome.nodes == []
        return
    selection = outcome.sentences["n"]
    assert sorted(selection.kept + selection.removed) == sentence_spans(text)
    assert selection.kept
    expected = text if not selection.removed else " ".join(text[s:e] for s, e in selection.kept)
    assert outcome.nodes[0].node.text == expected
    assert outcome.nodes[0].score == 0.5
