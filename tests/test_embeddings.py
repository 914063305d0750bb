"""The embedder's contract, on a fake encoder (no torch): normalization, cache, batches, progress, EMBED view."""

from __future__ import annotations

import numpy as np
import pytest

import core.embeddings as embeddings
from core.embeddings import Embedder, embed_nodes, get_embedder
from core.errors import ModelUnavailableError
from core.schema import MetadataMode, Node


class FakeModel:
    max_seq_length = 16

    def get_embedding_dimension(self):
        return 3


class FakeEmbedder(Embedder):
    """Encodes a text as (length, vowels, 1), unnormalized, and records every batch it is asked for."""

    def _load_model(self, path):
        self.batches: list[list[str]] = []
        return FakeModel()

    def _encode(self, texts):
        self.batches.append(list(texts))
        return np.array([[len(t), sum(c in "aeiou" for c in t), 1.0] for t in texts], dtype=np.float64)


@pytest.fixture
def embedder(tmp_path):
    return FakeEmbedder(str(tmp_path), batch_size=2)


def test_rows_are_float32_and_unit_length(embedder):
    vectors = embedder.embed(["abc", "", "hello world"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 3)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(vectors[1], [0.0, 0.0, 1.0])


def test_identical_texts_are_encoded_once_and_then_come_from_the_cache(embedder):
    first = embedder.embed(["one", "two", "one"])
    assert embedder.batches == [["one", "two"]]
    assert embedder.cache_stats()["hits"] == 1 and embedder.cache_stats()["misses"] == 2
    second = embedder.embed(["two", "three", "one"])
    assert embedder.batches == [["one", "two"], ["three"]]  # only the new text was encoded
    np.testing.assert_array_equal(second[0], first[1])
    np.testing.assert_array_equal(second[2], first[0])
    assert embedder.cache_stats()["hits"] == 3 and embedder.cache_stats()["misses"] == 3


def test_progress_counts_texts_after_each_batch(embedder):
    embedder.embed(["cached"])
    calls = []
    embedder.embed(["cached", "a", "b", "c", "d"], progress=lambda done, total: calls.append((done, total)))
    assert embedder.batches[1:] == [["a", "b"], ["c", "d"]]
    assert calls == [(3, 5), (5, 5)]


def test_progress_is_reported_even_when_everything_is_cached(embedder):
    embedder.embed(["x"])
    calls = []
    embedder.embed(["x"], progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 1)]


def test_empty_input_gives_an_empty_matrix(embedder):
    assert embedder.embed([]).shape == (0, 3)


def test_query_vector_is_one_row(embedder):
    vector = embedder.embed_query("query")
    assert vector.shape == (3,)


def test_properties_come_from_the_model(embedder, tmp_path):
    assert embedder.dimension == 3
    assert embedder.max_seq_length == 16
    assert embedder.model_name == tmp_path.name


def test_nodes_are_embedded_through_their_embed_view(embedder):
    node = Node(text="body", metadata={"file_name": "a.md", "secret": "x"}, excluded_embed_metadata_keys=["secret"])
    embed_nodes([node], embedder)
    assert embedder.batches == [[node.get_content(MetadataMode.EMBED)]]
    assert embedder.batches[0][0] == "file_name: a.md\n\nbody"


def test_the_cache_is_bounded(tmp_path):
    small = FakeEmbedder(str(tmp_path), cache_entries=2)
    small.embed(["a", "b", "c"])
    assert small.cache_stats()["entries"] == 2
    small.embed(["a"])  # evicted first, so encoded again
    assert small.batches[-1] == ["a"]


def test_a_missing_model_directory_is_a_clear_error(tmp_path):
    missing = tmp_path / "no-model"
    with pytest.raises(ModelUnavailableError, match=r"^no embedding model at .*no-model: give the path"):
        Embedder(str(missing))


def test_a_directory_that_is_not_a_model_is_a_clear_error(tmp_path):
    with pytest.raises(ModelUnavailableError, match="does not look like a sentence-transformers model"):
        Embedder(str(tmp_path))


def test_get_embedder_shares_one_instance_per_model(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "Embedder", FakeEmbedder)
    monkeypatch.setattr(embeddings, "_SHARED", {})
    first = get_embedder(str(tmp_path))
    assert get_embedder(str(tmp_path)) is first
    assert get_embedder(str(tmp_path) + "/") is first  # the same directory, spelled differently
    assert get_embedder(str(tmp_path / "other")) is not first
