"""The embedder's contract, on a fake encoder (no torch): normalization, cache, batches, progress, EMBED view."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


# The test run's cache folder (tests/conftest.py), before each test here gets its own.
RUN_CACHE_DIR = os.environ["CHUNKSCOPE_CACHE_DIR"]


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
    with pytest.raises(ConfigError, match="embedding backend must be one of torch, onnx, auto"):
        FakeEmbedder(str(tmp_path), backend="tensorrt")


@pytest.fixture
def no_onnxruntime(monkeypatch):
    import core.onnx_backend as onnx_backend

    def unavailable(model_path, load_model):
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


# The "before" route: sentence-transformers tokenizes and pools around the same ONNX graph.
def _through_sentence_transformers(texts: list[str]) -> np.ndarray:
    import onnxruntime
    import torch
    from sentence_transformers import SentenceTransformer

    from core.onnx_backend import graph_path
    from core.tokenizers import default_model_path

    path = default_model_path()
    model = SentenceTransformer(path, device="cpu", local_files_only=True)
    features = model.preprocess(texts)
    session = onnxruntime.InferenceSession(str(graph_path(path)), providers=["CPUExecutionProvider"])
    names = [graph_input.name for graph_input in session.get_inputs()]
    (hidden,) = session.run(["token_embeddings"], {name: features[name].numpy() for name in names})
    features["token_embeddings"] = torch.from_numpy(hidden)
    with torch.inference_mode():
        for module in list(model)[1:]:
            features = module(features)
    vectors = features["sentence_embedding"].numpy()
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


HEAVY = ("sentence_transformers", "transformers", "sklearn", "torch")

_EMBED_ALONE = """
import json, sys
from core.embeddings import Embedder
embedder = Embedder(backend="onnx", disk_cache=False)
vectors = embedder.embed(json.loads(sys.argv[1]))
heavy = sorted(name for name in sys.modules if name.split(".")[0] in {heavy!r})
print(json.dumps({{"vectors": vectors.tolist(), "heavy": heavy, "dimension": embedder.dimension,
                   "max_seq_length": embedder.max_seq_length}}))
"""


@pytest.mark.model
@pytest.mark.xdist_group("model")
def test_the_onnx_backend_gives_the_same_vectors_without_importing_sentence_transformers(monkeypatch):
    """Tokenizer and pooling read from the model folder: the vectors of the sentence-transformers route, to 1e-6."""
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", RUN_CACHE_DIR)  # where this run keeps the exported graph
    Embedder(backend="onnx", disk_cache=False)  # exports the graph if this run has not yet
    texts = [
        "Chunk overlap repeats the end of one chunk at the start of the next.",
        "  leading and trailing whitespace\n",
        "The embedding model reads at most 256 tokens; the rest is cut off. " * 20,
        "",
        "ünïcödé, emoji 😀 and\ttabs",
    ]
    child = subprocess.run(
        [sys.executable, "-c", _EMBED_ALONE.format(heavy=set(HEAVY)), json.dumps(texts)],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )
    assert child.returncode == 0, child.stderr
    report = json.loads(child.stdout)
    assert report["heavy"] == []
    assert (report["dimension"], report["max_seq_length"]) == (384, 256)
    np.testing.assert_allclose(np.array(report["vectors"]), _through_sentence_transformers(texts), atol=1e-6, rtol=0)
