"""The embedder's contract, on a fake encoder (no torch): normalization, cache, batches, progress, EMBED view."""

from __future__ import annotations

import numpy as np
import pytest

import core.embeddings as embeddings
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


# -- backends ---------------------------------------------------------------------------


def test_an_unknown_backend_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="embedding backend must be one of torch, onnx, auto"):
        FakeEmbedder(str(tmp_path), backend="tensorrt")


@pytest.fixture
def no_onnxruntime(monkeypatch):
    import core.onnx_backend as onnx_backend

    def unavailable(model, path):
        raise ImportError("No module named 'onnxruntime'")

    monkeypatch.setattr(onnx_backend, "OnnxEncoder", unavailable)


def test_auto_falls_back_to_torch_and_says_why(tmp_path, no_onnxruntime):
    embedder = FakeEmbedder(str(tmp_path), backend="auto")
    assert embedder.backend == "torch"
    assert embedder.backend_note == "ONNX Runtime unavailable, using torch (ImportError: No module named 'onnxruntime')"
    assert embedder.embed(["still works"]).shape == (1, 3)


def test_onnx_asked_for_by_name_must_run(tmp_path, no_onnxruntime):
    with pytest.raises(ModelUnavailableError, match="the ONNX backend cannot run .*ImportError"):
        FakeEmbedder(str(tmp_path), backend="onnx")


def test_the_backend_comes_from_the_environment_and_keys_the_shared_instance(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "Embedder", FakeEmbedder)
    monkeypatch.setattr(embeddings, "_SHARED", {})
    monkeypatch.setenv("CHUNKSCOPE_EMBED_BACKEND", "torch")
    assert embeddings.default_backend() == "torch"
    first = get_embedder(str(tmp_path))
    assert first.backend == "torch"
    assert get_embedder(str(tmp_path), backend="torch") is first
    monkeypatch.delenv("CHUNKSCOPE_EMBED_BACKEND")
    assert embeddings.default_backend() == "auto"


def test_the_graph_file_changes_with_the_models_files(tmp_path, monkeypatch):
    from core.onnx_backend import graph_path

    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    first = graph_path(str(model))
    assert first.parent == tmp_path / "cache" / "onnx"
    assert graph_path(str(model)) == first
    (model / "model.safetensors").write_bytes(b"new weights")
    assert graph_path(str(model)) != first


@pytest.mark.model
@pytest.mark.xdist_group("model")
def test_onnx_gives_torchs_vectors_and_ranking(tmp_path, monkeypatch):
    """The real packaged model: ONNX Runtime's vectors equal torch's, so every ranking is the same."""
    from core.onnx_backend import graph_path

    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path))
    onnx = Embedder(backend="onnx")
    assert onnx.backend == "onnx" and graph_path(onnx.model_path).exists()
    torch_ = Embedder(backend="torch")
    texts = [
        "Chunk overlap repeats the end of one chunk at the start of the next.",
        "Reciprocal rank is one over the position of the first relevant result.",
        "The embedding model reads at most 256 tokens; the rest is cut off. " * 20,  # truncated the same way
        "",
        "ünïcödé, emoji 😀 and\ttabs",
    ]
    a, b = onnx.embed(texts), torch_.embed(texts)
    np.testing.assert_allclose(a, b, atol=1e-5)
    query = onnx.embed_query("how is mean reciprocal rank computed")
    assert list(np.argsort(-(a @ query))) == list(np.argsort(-(b @ query)))
    # A second embedder opens the graph written by the first instead of exporting again.
    written = graph_path(onnx.model_path).stat().st_mtime_ns
    assert Embedder(backend="onnx").backend == "onnx"
    assert graph_path(onnx.model_path).stat().st_mtime_ns == written
