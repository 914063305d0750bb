"""How close the Embedder's vectors are to ``SentenceTransformer.encode``, as the README states it.

Bit for bit when the texts are new and distinct: the Embedder encodes them in sentence-transformers'
order (longest first, batches of 32), so every text shares its padded batch with the same texts.
Within float32 rounding otherwise: a float32 forward pass gives a text's vector last bits that
depend on which texts share its batch (sentence-transformers too: one text at a time against one
call, most sample rows differ in the 7th decimal), and with a cache, which texts share a batch
depends on what was cached before.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from core.config import PipelineConfig
from core.documents import run_split
from core.embed.embedder import Embedder
from core.loaders import load
from core.schema import MetadataMode
from core.splitters.hierarchical import leaf_nodes
from core.tokens.tokenizers import default_model_path

ROOT = Path(__file__).resolve().parent.parent
# What the README promises: the largest difference of one component, and of a cosine from 1.
MAX_COMPONENT_DIFFERENCE = 1e-6
MAX_COSINE_DIFFERENCE = 1e-6

pytestmark = [pytest.mark.model, pytest.mark.xdist_group("model")]


@pytest.fixture(scope="module")
def texts():
    """Every sample chunk's EMBED view (default pipeline), then every sample query."""
    nodes = leaf_nodes(run_split(load(ROOT / "sample_docs"), PipelineConfig()))
    queries = [entry["query"] for entry in json.loads((ROOT / "sample_docs" / "queries.json").read_text())]
    return [node.get_content(MetadataMode.EMBED) for node in nodes] + queries


@pytest.fixture(scope="module")
def reference():
    """``SentenceTransformer.encode`` of the packaged model. The same texts in the same order with the same batch
    size make the same call, whose vectors are the same bits every time: they are encoded once per module (every
    sample text costs ~0.2 CPU-s a call) and handed out read-only."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(default_model_path(), device="cpu", local_files_only=True)

    @cache
    def encode(texts: tuple[str, ...], batch_size: int) -> np.ndarray:
        vectors = model.encode(
            list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        vectors.flags.writeable = False
        return vectors

    return lambda texts, batch_size=32: encode(tuple(texts), batch_size)


def fresh() -> Embedder:
    return Embedder(disk_cache=False)


@pytest.fixture(scope="module")
def ours(texts):
    """Every sample text embedded in one call by a fresh Embedder (nothing cached), as two tests read it."""
    vectors = fresh().embed(texts)
    vectors.flags.writeable = False
    return vectors


def assert_within_rounding(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert ours.shape == theirs.shape and ours.dtype == np.float32
    assert np.abs(ours - theirs).max() <= MAX_COMPONENT_DIFFERENCE
    cosine = np.sum(ours.astype(np.float64) * theirs, axis=1)
    assert np.abs(cosine - 1).max() <= MAX_COSINE_DIFFERENCE


def test_a_batch_the_embedder_encodes_is_bit_identical_to_sentence_transformers_encoding_it(texts, reference):
    for start in range(0, len(texts), 32):
        batch = texts[start : start + 32]
        np.testing.assert_array_equal(fresh().embed(batch), reference(batch, batch_size=len(batch)))


def test_every_sample_chunk_and_query_is_bit_identical_to_one_encode_call(texts, ours, reference):
    assert len(set(texts)) == len(texts)  # distinct: a repeat is encoded once, so its batches would differ
    np.testing.assert_array_equal(ours, reference(texts))


def test_bit_identity_holds_for_an_order_the_length_sort_must_undo(texts, reference):
    shuffled = [texts[i] for i in np.random.default_rng(7).permutation(len(texts))]
    np.testing.assert_array_equal(fresh().embed(shuffled), reference(shuffled))


def test_the_embedder_encodes_longest_first_as_sentence_transformers_does():
    from core.embed.embedder import encoding_order

    pending = [("a", "xx"), ("b", "xxxx"), ("c", "x"), ("d", "xxx")]
    assert [key for key, _ in encoding_order(pending)] == ["b", "d", "a", "c"]


def test_the_bound_holds_when_part_of_the_texts_were_cached_first(texts, reference):
    embedder = fresh()
    embedder.embed(texts[::3])  # cached: the rest is encoded in batches of its own
    vectors = embedder.embed(texts)
    assert embedder.cache_stats()["hits"] == len(texts[::3])
    assert_within_rounding(vectors, reference(texts))


def test_every_sample_query_ranks_the_chunks_as_sentence_transformers_does(texts, ours, reference):
    queries = len(json.loads((ROOT / "sample_docs" / "queries.json").read_text()))
    theirs = reference(texts)

    def top_five(vectors: np.ndarray) -> list[list[int]]:
        chunks = vectors[:-queries]
        return [np.argsort(-(chunks @ query), kind="stable")[:5].tolist() for query in vectors[-queries:]]

    assert top_five(ours) == top_five(theirs)


def test_the_plain_torch_route_is_bit_identical_to_transformers_bert_model(texts):
    """The packaged model runs without transformers (core.embed.models.PlainBertModel); transformers'
    AutoModel on the same folder gives the same bits, padded batches and single texts, truncated or not."""
    from core.embed.models import MeanPoolingModel, PlainBertModel, mean_pooling_layout

    path = default_model_path()
    plain, through_transformers = (
        PlainBertModel(path, mean_pooling_layout(path)),
        MeanPoolingModel(path, mean_pooling_layout(path)),
    )
    assert isinstance(fresh()._model, PlainBertModel)
    extra = ["", "  padded with spaces  ", "word " * 400, "ünïcödé ☃ 中文"]
    for batch in ([*texts, *extra][i : i + 13] for i in range(0, len(texts) + len(extra), 13)):
        np.testing.assert_array_equal(plain.encode(batch), through_transformers.encode(batch))
    for text in extra:
        np.testing.assert_array_equal(plain.encode([text]), through_transformers.encode([text]))


def test_a_new_query_imports_torch_but_not_transformers(tmp_path):
    import os
    import subprocess
    import sys

    script = """
import json, sys
from core.embed.embedder import Embedder
Embedder(disk_cache=False).embed_query("a query no cache holds")
print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'transformers', 'scipy', 'sklearn', 'sentence_transformers'})))
"""
    env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["torch"]
