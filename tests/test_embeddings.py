"""The embedder's contract, on a fake encoder (no torch): normalization, cache, batches, progress, EMBED view."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import core.embeddings as embeddings
from core.embedding_cache import DiskCache
from core.embeddings import Embedder, embed_nodes, get_embedder
from core.errors import ConfigError, ModelUnavailableError
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


@pytest.fixture(autouse=True)
def own_cache_dir(tmp_path_factory, monkeypatch):
    """Each test's vectors on disk in a folder of its own (outside the fake model's folder, which is hashed)."""
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(folder))
    return folder


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
    small = FakeEmbedder(str(tmp_path), cache_entries=2, disk_cache=False)
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


# -- the disk cache ----------------------------------------------------------------------


def test_a_second_embedder_with_the_same_cache_dir_encodes_nothing(tmp_path):
    texts = ["one", "two", "three", "one"]
    first = FakeEmbedder(str(tmp_path), batch_size=2)
    vectors = first.embed(texts)
    assert first.batches == [["one", "two"], ["three"]]
    # A restarted app or a second CLI run: a new instance, same model, same cache dir.
    second = FakeEmbedder(str(tmp_path), batch_size=2)
    calls = []
    again = second.embed(texts, progress=lambda done, total: calls.append((done, total)))
    assert second.batches == []
    np.testing.assert_array_equal(again, vectors)
    assert calls == [(4, 4)]
    assert second.cache_stats() == {"hits": 1, "misses": 3, "disk_hits": 3, "entries": 3}
    # Only what the disk does not hold is encoded.
    second.embed(["two", "four"])
    assert second.batches == [["four"]]


def test_the_disk_cache_is_keyed_by_the_model_and_its_files(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    FakeEmbedder(str(model)).embed(["text"])
    other = tmp_path / "other-model"
    other.mkdir()
    elsewhere = FakeEmbedder(str(other))
    elsewhere.embed(["text"])
    assert elsewhere.batches == [["text"]]
    (model / "model.safetensors").write_bytes(b"new weights")  # the same folder, other weights
    changed = FakeEmbedder(str(model))
    changed.embed(["text"])
    assert changed.batches == [["text"]]


def test_without_the_disk_cache_nothing_is_kept(tmp_path, own_cache_dir):
    FakeEmbedder(str(tmp_path), disk_cache=False).embed(["text"])
    assert list(own_cache_dir.iterdir()) == []
    later = FakeEmbedder(str(tmp_path))
    later.embed(["text"])
    assert later.batches == [["text"]]


def test_concurrent_writers_share_the_disk_cache_safely(tmp_path):
    """Eight embedders (eight app sessions or CLI runs) writing overlapping texts at once."""
    texts = [[f"text {(i * 7 + j) % 40}" for j in range(25)] for i in range(8)]
    start = threading.Barrier(8)
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            embedder = FakeEmbedder(str(tmp_path), batch_size=3)
            start.wait()
            results[i] = embedder.embed(texts[i])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    reader = FakeEmbedder(str(tmp_path))
    everything = sorted({text for chunk in texts for text in chunk})
    vectors = reader.embed(everything)
    assert reader.batches == []
    expected = FakeEmbedder(str(tmp_path), disk_cache=False).embed(everything)
    np.testing.assert_array_equal(vectors, expected)
    for i, chunk in enumerate(texts):
        np.testing.assert_array_equal(results[i], reader.embed(chunk))


def test_the_disk_cache_forgets_its_oldest_vectors_beyond_its_bound(tmp_path):
    cache = DiskCache(tmp_path / "vectors.sqlite3", max_entries=3)
    rows = {f"digest{i}": np.full(3, i, dtype=np.float32) for i in range(5)}
    for digest, vector in rows.items():
        cache.put("model", [(digest, vector)])
    kept = cache.get("model", list(rows))
    assert sorted(kept) == ["digest2", "digest3", "digest4"]
    np.testing.assert_array_equal(kept["digest4"], rows["digest4"])


def test_an_unusable_cache_dir_only_costs_the_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache dir should be")
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(blocker))
    model = tmp_path / "model"
    model.mkdir()
    embedder = FakeEmbedder(str(model))
    assert embedder.embed(["still works"]).shape == (1, 3)
    assert FakeEmbedder(str(model)).embed(["still works"]).shape == (1, 3)


# -- backends ---------------------------------------------------------------------------


def test_an_unknown_backend_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="embedding backend must be one of torch, auto"):
        FakeEmbedder(str(tmp_path), backend="tensorrt")


def test_the_removed_onnx_backend_says_why(tmp_path):
    with pytest.raises(ConfigError, match="the ONNX backend was removed"):
        FakeEmbedder(str(tmp_path), backend="onnx")


def test_auto_is_torch_and_keys_the_shared_instance(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "Embedder", FakeEmbedder)
    monkeypatch.setattr(embeddings, "_SHARED", {})
    first = get_embedder(str(tmp_path))
    assert (first.backend, first.backend_note) == ("torch", "")
    assert get_embedder(str(tmp_path), backend="torch") is first
    assert get_embedder(str(tmp_path), backend="auto") is first
