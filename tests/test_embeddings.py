"""The embedder's contract, on a fake encoder (no torch): normalization, cache, batches, progress, EMBED view;
then what runs the real model (transformers for the mean-pooling layout, else sentence-transformers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.embed.embedder as embeddings
import core.embed.models as embedding_models
from core.embed.cache import DiskCache
from core.embed.embedder import Embedder, embed_nodes, get_embedder
from core.errors import ModelUnavailableError
from core.schema import MetadataMode, Node
from core.tokens.tokenizers import default_model_path

ROOT = Path(__file__).resolve().parent.parent


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
    # New texts are encoded longest first, as SentenceTransformer.encode orders them; the repeat once.
    assert first.batches == [["three", "one"], ["two"]]
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


# -- damaged vectors on disk (issue 25): checked as they are read, encoded again, replaced -----------

# What a damaged or foreign writer can leave in the file for a text of the fake model (3 values, unit length).
DAMAGED = {
    "wrong length": np.array([0.6, 0.8], dtype=np.float32).tobytes(),
    "NaN": np.array([np.nan, 0.0, 1.0], dtype=np.float32).tobytes(),
    "infinite": np.array([np.inf, 0.0, 0.0], dtype=np.float32).tobytes(),
    "all zero": np.zeros(3, dtype=np.float32).tobytes(),
    "not unit length": np.array([3.0, 4.0, 0.0], dtype=np.float32).tobytes(),
    "not whole float32 values": b"\x00" * 7,
    "text, not a blob": "0.6,0.8,0.0",
}


def _corrupt(path: Path, value: object) -> None:
    """Overwrite every stored vector with ``value``, as a damaged file or a foreign writer would."""
    import sqlite3

    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE vectors SET vector = ?", (value,))


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_a_damaged_vector_on_disk_is_encoded_again_and_replaced(tmp_path, own_cache_dir, damage, caplog):
    good = FakeEmbedder(str(tmp_path)).embed(["a text"])
    _corrupt(own_cache_dir / "embeddings.sqlite3", DAMAGED[damage])

    second = FakeEmbedder(str(tmp_path))
    with caplog.at_level("WARNING", logger="core.embed.cache"):
        vectors = second.embed(["a text"])
    assert second.batches == [["a text"]]  # not trusted: encoded again
    np.testing.assert_array_equal(vectors, good)
    assert second._disk.rejected == 1
    assert "1 cached vector(s) were damaged" in caplog.text

    third = FakeEmbedder(str(tmp_path))
    np.testing.assert_array_equal(third.embed(["a text"]), good)
    assert third.batches == [] and third._disk.rejected == 0  # the good vector took the damaged one's place


def test_a_healthy_vector_on_disk_is_used_as_it_is(tmp_path, own_cache_dir):
    FakeEmbedder(str(tmp_path)).embed(["a text"])
    stored = np.array([0.0, 0.6, 0.8], dtype=np.float32)  # another model run's vector: valid, so trusted
    _corrupt(own_cache_dir / "embeddings.sqlite3", stored.tobytes())
    reader = FakeEmbedder(str(tmp_path))
    np.testing.assert_array_equal(reader.embed(["a text"])[0], stored)
    assert reader.batches == [] and reader._disk.rejected == 0


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    blob=st.binary(max_size=20)
    | st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), max_size=5).map(
        lambda values: np.array(values, dtype=np.float32).tobytes()
    )
)
def test_whatever_the_file_holds_every_row_is_finite_unit_and_of_the_models_length(tmp_path, own_cache_dir, blob):
    path = own_cache_dir / "embeddings.sqlite3"
    fresh = FakeEmbedder(str(tmp_path), disk_cache=False).embed(["a text"])
    FakeEmbedder(str(tmp_path)).embed(["a text"])
    _corrupt(path, blob)
    reader = FakeEmbedder(str(tmp_path))
    (row,) = reader.embed(["a text"])
    assert row.shape == (3,) and np.isfinite(row).all()
    assert abs(float(np.linalg.norm(row)) - 1) < 1e-3
    if reader.batches:  # the stored bytes were refused: the row is the model's own
        np.testing.assert_array_equal(row, fresh[0])


def test_one_shared_embedder_per_model_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "Embedder", FakeEmbedder)
    monkeypatch.setattr(embeddings, "_SHARED", {})
    first = get_embedder(str(tmp_path))
    assert get_embedder(str(tmp_path)) is first
    assert get_embedder(str(tmp_path / ".")) is first  # the same folder, spelled otherwise


# -- what runs the model: transformers for Transformer -> mean pooling -> Normalize, else sentence-transformers --

HEAVY = ("sentence_transformers", "transformers", "sklearn", "torch")

STANDARD_MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
]
DENSE = {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}


def write_model(folder, modules=None, pooling=None, transformer=None, settings=None):
    """A model folder's sentence-transformers files (no weights): all-MiniLM-L6-v2's, with any part replaced."""
    folder.mkdir(parents=True, exist_ok=True)
    modules = modules or STANDARD_MODULES
    pooling = pooling or {
        "word_embedding_dimension": 384,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
    }
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 384}))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (folder / "sentence_bert_config.json").write_text(
        json.dumps(transformer or {"max_seq_length": 128, "do_lower_case": False})
    )
    if settings is not None:
        (folder / "config_sentence_transformers.json").write_text(json.dumps(settings))
    return folder


def test_the_packaged_model_is_the_mean_pooling_layout():
    assert embedding_models.mean_pooling_layout(default_model_path()) == embedding_models.MeanPoolingLayout(256, 384)


def test_a_mean_pooling_folder_reads_its_own_sequence_length_and_dimension(tmp_path):
    folder = write_model(tmp_path / "m", transformer={"max_seq_length": 128})
    assert embedding_models.mean_pooling_layout(str(folder)) == embedding_models.MeanPoolingLayout(128, 384)
    # sentence-transformers 6 writes the module's full path and the new pooling_mode key.
    modern = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.base.modules.transformer.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.sentence_transformer.modules.Pooling",
        },
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.base.modules.Normalize"},
    ]
    folder = write_model(
        tmp_path / "v6", modules=modern, pooling={"word_embedding_dimension": 768, "pooling_mode": "mean"}
    )
    assert embedding_models.mean_pooling_layout(str(folder)) == embedding_models.MeanPoolingLayout(128, 768)


@pytest.mark.parametrize(
    "parts",
    [
        pytest.param({"modules": [*STANDARD_MODULES[:2], DENSE, STANDARD_MODULES[2]]}, id="a Dense module"),
        pytest.param({"modules": STANDARD_MODULES[:2]}, id="no Normalize"),
        pytest.param({"pooling": {"word_embedding_dimension": 384, "pooling_mode_cls_token": True}}, id="CLS pooling"),
        pytest.param(
            {
                "pooling": {
                    "word_embedding_dimension": 384,
                    "pooling_mode_mean_tokens": True,
                    "pooling_mode_max_tokens": True,
                }
            },
            id="mean and max pooling",
        ),
        pytest.param(
            {"pooling": {"word_embedding_dimension": 384, "pooling_mode": "lasttoken"}}, id="last-token pooling"
        ),
        pytest.param({"transformer": {"max_seq_length": 128, "do_lower_case": True}}, id="lower-cased input"),
        pytest.param(
            {"transformer": {"max_seq_length": 128, "model_args": {"trust_remote_code": True}}}, id="model args"
        ),
        pytest.param(
            {"settings": {"prompts": {"query": "query: "}, "default_prompt_name": "query"}}, id="a default prompt"
        ),
    ],
)
def test_any_other_layout_is_left_to_sentence_transformers(tmp_path, parts):
    folder = write_model(tmp_path / "m", **parts)
    assert embedding_models.mean_pooling_layout(str(folder)) is None
    assert isinstance(Embedder(str(folder))._model, embedding_models.SentenceTransformersModel)


class FakeSentenceTransformer:
    """Stands in for sentence_transformers.SentenceTransformer: records how it was made and asked."""

    made: list[tuple[str, dict]] = []

    def __init__(self, path, **options):
        FakeSentenceTransformer.made.append((path, options))
        self.max_seq_length = 77

    def get_embedding_dimension(self):
        return 2

    def encode(self, texts, **options):
        assert options["normalize_embeddings"] is True and options["batch_size"] == len(texts)
        return np.array([[1.0, float(len(text))] for text in texts], dtype=np.float32)


def test_a_non_standard_layout_runs_through_sentence_transformers_from_its_folder(tmp_path, monkeypatch):
    folder = write_model(tmp_path / "m", modules=[*STANDARD_MODULES[:2], DENSE, STANDARD_MODULES[2]])
    fake = types.ModuleType("sentence_transformers")
    fake.SentenceTransformer = FakeSentenceTransformer
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    monkeypatch.setattr(embedding_models, "_use_all_cores", lambda: None)
    monkeypatch.setattr(embedding_models, "_quiet_transformers", lambda: None)
    monkeypatch.setattr(FakeSentenceTransformer, "made", [])
    embedder = Embedder(str(folder))
    assert FakeSentenceTransformer.made == []  # nothing loads before it is needed
    vectors = embedder.embed(["ab", "abcd"])
    # Loaded from the folder, never from the Hub.
    assert FakeSentenceTransformer.made == [(str(folder), {"device": "cpu", "local_files_only": True})]
    np.testing.assert_allclose(
        vectors, [[1 / np.sqrt(5), 2 / np.sqrt(5)], [1 / np.sqrt(17), 4 / np.sqrt(17)]], rtol=1e-6
    )
    assert (embedder.dimension, embedder.max_seq_length) == (2, 77)


def test_nothing_heavy_is_imported_while_every_text_is_cached(tmp_path):
    """A new process whose texts (chunks and query alike) are on disk imports no model package and loads no model."""
    script = f"""
import json, sys
import numpy as np
from core.embed.embedder import Embedder
first = Embedder()
unit = np.eye(384, dtype=np.float32)[0]  # the packaged model's length, unit norm: what the cache checks
first._disk.put(first._disk_model, [(first._key(t), unit) for t in ("chunk", "query?")])
embedder = Embedder()
vectors = embedder.embed(["chunk", "query?"])
assert embedder.embed_query("query?").tolist() == unit.tolist() and vectors.shape == (2, 384)
assert not embedder._model.loaded and embedder.cache_stats()["disk_hits"] == 2
print(json.dumps(sorted({{name.split('.')[0] for name in sys.modules}} & set({HEAVY!r}))))
"""
    env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


# -- the packaged model: the transformers route equals SentenceTransformer.encode -----------------


@pytest.fixture(scope="module")
def sample_texts():
    """Every EMBED view of the sample documents' nodes (default pipeline), and the sample queries."""
    from core.config import PipelineConfig
    from core.documents import run_split
    from core.loaders import load
    from core.splitters.hierarchical import leaf_nodes

    nodes = leaf_nodes(run_split(load(ROOT / "sample_docs"), PipelineConfig()))
    queries = [entry["query"] for entry in json.loads((ROOT / "sample_docs" / "queries.json").read_text())]
    return [node.get_content(MetadataMode.EMBED) for node in nodes], queries


def mixed_batches(texts):
    """The texts shuffled (queries among long chunks) and cut into batches of 1, 3, 8, 32, 5 and 17."""
    order = np.random.default_rng(7).permutation(len(texts))
    sizes, batches, start = [1, 3, 8, 32, 5, 17], [], 0
    while start < len(order):
        size = sizes[len(batches) % len(sizes)]
        batches.append([texts[i] for i in order[start : start + size]])
        start += size
    return batches


@pytest.fixture(scope="module")
def both_routes(sample_texts):
    """Every sample text's vector by the transformers route as the Embedder runs it now, and by
    SentenceTransformer.encode as the Embedder ran it before, batch by batch: {text: (new, old)}."""
    from sentence_transformers import SentenceTransformer

    path = default_model_path()
    ours = Embedder(path, disk_cache=False, cache_entries=0)
    assert isinstance(ours._model, embedding_models.MeanPoolingModel)
    reference = SentenceTransformer(path, device="cpu", local_files_only=True)
    chunks, queries = sample_texts
    texts = [*chunks, *queries, "", "  padded with spaces  ", "word " * 400]  # empty, spaces, truncated
    vectors = {}
    for batch in mixed_batches(texts):
        new = ours._encode(batch)
        old = reference.encode(
            batch, batch_size=len(batch), convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )
        vectors.update(zip(batch, zip(new, old.astype(np.float32), strict=True), strict=True))
    return vectors


@pytest.mark.model
@pytest.mark.xdist_group("model")
def test_the_transformers_route_computes_what_sentence_transformers_did(both_routes):
    new = np.stack([pair[0] for pair in both_routes.values()])
    old = np.stack([pair[1] for pair in both_routes.values()])
    assert np.abs(new - old).max() <= 1e-6
    cosine = np.sum(new * old, axis=1) / (np.linalg.norm(new, axis=1) * np.linalg.norm(old, axis=1))
    assert cosine.min() >= 0.999999
    # Bit for bit, in fact: that is why the disk cache's key did not change (core.embed.embedder._model_key).
    # If this fails after an upgrade, the two routes must be told apart in that key.
    np.testing.assert_array_equal(new, old)


@pytest.mark.model
@pytest.mark.xdist_group("model")
def test_every_sample_query_retrieves_the_same_top_five(sample_texts, both_routes):
    chunks, queries = sample_texts

    def top_five(route: int) -> dict[str, list[int]]:
        nodes = np.stack([both_routes[chunk][route] for chunk in chunks])
        return {
            query: np.argsort(-(nodes @ both_routes[query][route]), kind="stable")[:5].tolist() for query in queries
        }

    assert top_five(0) == top_five(1)
