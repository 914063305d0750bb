"""Retrieval: dense (cosine), BM25 and hybrid fusion; one test with the real packaged model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.query.retrieval import bm25_scores, min_max, retrieve
from core.schema import Document, MetadataMode, Node
from core.splitters import get_splitter


class AxisEmbedder:
    """Unit vectors by keyword: 'cat' -> x, 'dog' -> y, anything else -> z."""

    def embed(self, texts, progress=None):
        return np.stack([self._vector(text) for text in texts])

    def embed_query(self, text):
        return self._vector(text)

    @staticmethod
    def _vector(text):
        vector = np.array([text.count("cat"), text.count("dog"), 0.5], dtype=np.float32)
        return vector / np.linalg.norm(vector)


NODES = [
    Node(text="the dog barks at night", id="a"),
    Node(text="a cat and a dog share a cat bed", id="b"),
    Node(text="the cat sleeps on the warm sofa", id="c"),
    Node(text="weather report", id="d"),
]


def test_dense_ranks_by_cosine_and_tags_the_query():
    results = retrieve(NODES, "cat", embedder=AxisEmbedder(), retrieval=RetrievalSettings(mode="dense", top_k=2))
    assert [r.id for r in results] == ["c", "b"]
    assert results[0].score == pytest.approx(1 / np.sqrt(1.25) * 1 / np.sqrt(1.25) + 0.25 / 1.25)
    assert all(r.query == "cat" for r in results)
    assert results[0].node is NODES[2]  # retrieval does not copy nodes


def test_dense_uses_given_embeddings_instead_of_embedding_the_nodes():
    given = np.eye(4, 3, dtype=np.float32)[[2, 1, 0, 0]]  # a->z, b->y, c->x, d->x
    results = retrieve(NODES, "cat", embedder=AxisEmbedder(), node_embeddings=given, retrieval=RetrievalSettings(mode="dense", top_k=4))
    assert [r.id for r in results] == ["c", "d", "a", "b"]  # c and d tie: input order


def test_bm25_scores_term_matches_and_gives_zero_to_the_rest():
    scores = bm25_scores(NODES, "cat")
    assert scores[0] == 0 and scores[3] == 0
    assert scores[1] > scores[2] > 0  # two occurrences in a node of similar length beat one


def test_bm25_mode_needs_no_embedder():
    results = retrieve(NODES, "weather", retrieval=RetrievalSettings(mode="bm25", top_k=1))
    assert [r.id for r in results] == ["d"]


def test_bm25_with_only_unknown_or_stop_words_scores_zero():
    assert list(bm25_scores(NODES, "the zebra")) == [0.0, 0.0, 0.0, 0.0]


def test_bm25_reads_the_embed_view_so_metadata_can_match():
    node = Node(text="nothing relevant", id="m", metadata={"title": "Quarterly revenue"})
    hidden = Node(text="nothing relevant", id="h", metadata={"title": "Quarterly revenue"}, excluded_embed_metadata_keys=["title"])
    assert "revenue" in node.get_content(MetadataMode.EMBED).lower()
    scores = bm25_scores([node, hidden], "revenue")
    assert scores[0] > 0 and scores[1] == 0


@pytest.mark.parametrize(("alpha", "first"), [(1.0, "c"), (0.0, "b")])
def test_hybrid_alpha_moves_between_dense_and_bm25(alpha, first):
    results = retrieve(NODES, "cat", embedder=AxisEmbedder(), retrieval=RetrievalSettings(mode="hybrid", alpha=alpha, top_k=1))
    assert results[0].id == first


def test_hybrid_score_is_the_weighted_sum_of_normalized_scores():
    embedder = AxisEmbedder()
    dense = np.array([r.score for r in sorted(retrieve(NODES, "cat", embedder=embedder, retrieval=RetrievalSettings(mode="dense", top_k=4)), key=lambda r: r.id)])
    sparse = bm25_scores(NODES, "cat")
    fused = 0.3 * min_max(dense) + 0.7 * min_max(sparse)
    results = {r.id: r.score for r in retrieve(NODES, "cat", embedder=embedder, retrieval=RetrievalSettings(mode="hybrid", alpha=0.3, top_k=4))}
    assert [results[i] for i in "abcd"] == pytest.approx(list(fused))


def test_min_max_of_equal_scores_is_zero():
    assert list(min_max(np.array([2.0, 2.0]))) == [0.0, 0.0]
    assert list(min_max(np.array([1.0, 3.0, 2.0]))) == [0.0, 1.0, 0.5]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "sparse"}, "retrieval: mode must be one of dense, bm25, hybrid"),
        ({"top_k": 0}, "retrieval: top_k must be at least 1"),
        ({"top_k": 201}, "retrieval: top_k must be at most 200"),
        ({"alpha": 1.5}, "retrieval: alpha must be at most 1"),
    ],
)
def test_bad_settings_are_config_errors_as_the_settings_are_made(kwargs, message):
    # Declared once (RetrievalSettings): Python, the CLI, configs and links refuse the same values.
    with pytest.raises(ConfigError, match=message):
        RetrievalSettings.from_params(kwargs)


def test_an_empty_query_is_a_config_error():
    with pytest.raises(ConfigError, match="the query is empty"):
        retrieve(NODES, "  ", embedder=AxisEmbedder())


def test_no_nodes_retrieve_nothing():
    assert retrieve([], "cat", embedder=AxisEmbedder()) == []


# -- the real model, loaded once for this module ------------------------------------


@pytest.fixture(scope="session")
def real_embedder():
    from core.embed.embedder import get_embedder

    return get_embedder()


@pytest.mark.model
@pytest.mark.xdist_group("model")
def test_the_packaged_model_ranks_the_answer_first(real_embedder, sample_docs):
    text = (sample_docs / "chunking_guide.md").read_text(encoding="utf-8")
    document = Document(text=text, metadata={"file_name": "chunking_guide.md"})
    nodes = get_splitter("character", chunk_size=500, chunk_overlap=0).split([document])
    entry = next(q for q in json.loads((sample_docs / "queries.json").read_text()) if "reciprocal rank" in q["query"])
    assert entry["query"] == "How is mean reciprocal rank calculated?"

    results = retrieve(nodes, entry["query"], embedder=real_embedder, retrieval=RetrievalSettings(mode="dense", top_k=3))

    assert entry["excerpts"][0] in results[0].node.text
    assert entry["excerpts"][0] not in results[1].node.text
    assert results[0].score > results[1].score + 0.1
    assert real_embedder.model_name == "all-MiniLM-L6-v2"
    assert real_embedder.dimension == 384 and real_embedder.max_seq_length == 256
    vectors = real_embedder.embed([nodes[0].get_content(MetadataMode.EMBED)])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    before = real_embedder.cache_stats()["hits"]
    retrieve(nodes, entry["query"], embedder=real_embedder, retrieval=RetrievalSettings(mode="dense", top_k=3))  # every text is cached now
    assert real_embedder.cache_stats()["hits"] == before + len(nodes) + 1
