"""Embeddings: a sentence-transformers model from a local directory, with a text cache in memory and on disk.

The default model is the packaged all-MiniLM-L6-v2 (:func:`core.tokens.tokenizers.default_model_path`);
nothing is ever downloaded. Every vector is float32 and L2-normalized, so a dot
product is the cosine similarity. Vectors are cached by (model, sha1 of the text):
changing a splitter parameter embeds only the chunk texts that are new, and a
restarted app or a second CLI run finds them on disk (:class:`DiskCache`). Query
strings go through the same cache, so a repeated query needs no model at all.

Nothing heavy is imported until a text that no cache holds must be encoded. A model
whose sentence-transformers layout is Transformer -> mean pooling -> Normalize (all
MiniLM/mpnet-style sentence models) is then run by transformers alone
(:class:`MeanPoolingModel`), computing what ``SentenceTransformer.encode`` computes
without importing sentence-transformers (seconds of CPU on two cores: it pulls in
scikit-learn); the packaged model, a BERT, by plain torch (:class:`PlainBertModel`: the
same bits without importing transformers, ~4 s of CPU less for a cold query's first
vector); any other layout by sentence-transformers (:class:`SentenceTransformersModel`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from core.embed.cache import DiskCache, hash_model_files, usable_vector
from core.embed.models import (
    MeanPoolingModel,
    PlainBertModel,
    SentenceTransformersModel,
    default_path_or_none,
    mean_pooling_layout,
    normalize,
    plain_bert_runs,
)
from core.errors import ModelUnavailableError
from core.runtime.cache_folder import cache_root
from core.schema import MetadataMode, Node, contents
from core.tokens.tokenizers import default_model_path

Progress = Callable[[int, int], None]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_BATCH_SIZE = 32
# About 30 MB of 384-dimension float32 vectors: enough for several sweeps over the samples.
DEFAULT_CACHE_ENTRIES = 20_000
# Torch runs the model (plain for the packaged BERT, through transformers, or sentence-transformers for an
# unusual layout: the same vectors for the same batch). An ONNX Runtime backend was no faster on two cores (0.98x wall, 0.78x per CPU on 256-token
# chunks, benchmarks/NOTES.md) and was removed with its switch. The disk cache's key still names the
# runtime, so vectors cached before stay valid and a future runtime gets keys of its own.
RUNTIME = "torch"


class Embedder:
    """A sentence-transformers model from a local directory, loaded when a text no cache holds is first encoded.

    ``embed`` is safe to call from several threads (Streamlit sessions share one
    instance): encoding is serialized by a lock, the cache by another. With
    ``disk_cache`` the vectors are also kept in ``embeddings.sqlite3`` under
    :func:`cache_root`, keyed by the model's files and what runs it.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache_entries: int = DEFAULT_CACHE_ENTRIES,
        disk_cache: bool = True,
    ) -> None:
        self.model_path = os.path.abspath(model_path) if model_path else default_model_path()
        self.batch_size = batch_size
        self._cache_entries = cache_entries
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._encode_lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        self._disk_hits = 0
        self._model = self._load_model(self.model_path)
        self._disk = DiskCache(cache_root() / "embeddings.sqlite3") if disk_cache else None
        self._disk_model = _model_key(self.model_path)

    # -- the model (tests replace these two to run without torch) -------------

    def _load_model(self, path: str):  # noqa: ANN202 - a MeanPoolingModel or SentenceTransformersModel
        """What will run the model; cheap (its config files only): the weights load on the first encode."""
        if not os.path.isdir(path):
            raise ModelUnavailableError(
                f"no embedding model at {path}: give the path of a local sentence-transformers model directory"
            )
        if not os.path.exists(os.path.join(path, "modules.json")) and not os.path.exists(
            os.path.join(path, "config.json")
        ):
            raise ModelUnavailableError(
                f"{path} does not look like a sentence-transformers model (no modules.json or config.json)"
            )
        layout = mean_pooling_layout(path)
        if layout is None:
            return SentenceTransformersModel(path)
        return PlainBertModel(path, layout) if plain_bert_runs(path) else MeanPoolingModel(path, layout)

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._encode_lock:
            vectors = self._model.encode(texts)
        return np.asarray(vectors, dtype=np.float32)

    # -- what the model is ----------------------------------------------------

    @property
    def model_name(self) -> str:
        if self.model_path == default_path_or_none():
            return DEFAULT_MODEL_NAME
        return os.path.basename(self.model_path.rstrip(os.sep)) or self.model_path

    @property
    def dimension(self) -> int:
        return int(self._model.get_embedding_dimension())

    def _known_dimension(self) -> int | None:
        """The vectors' length when knowing it loads nothing (a sentence-transformers layout not loaded yet: None)."""
        if isinstance(self._model, SentenceTransformersModel) and not self._model.loaded:
            return None
        return self.dimension

    @property
    def max_seq_length(self) -> int:
        return int(self._model.max_seq_length)

    # -- embedding --------------------------------------------------------------

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """One normalized float32 row per text, in order; texts cached in memory or on disk cost nothing.

        ``progress(done, total)`` is called after each batch (and once at the end),
        counting texts, cached ones included.
        """
        texts = list(texts)
        total = len(texts)
        keys = [self._key(text) for text in texts]
        found: dict[str, np.ndarray] = {}
        missing: dict[str, str] = {}  # key -> text, first occurrence order
        with self._cache_lock:
            for key, text in zip(keys, texts, strict=True):
                vector = self._cache.get(key)
                if vector is not None:
                    self._cache.move_to_end(key)
                    found[key] = vector
                    self._hits += 1
                elif key not in missing:
                    missing[key] = text
                    self._misses += 1
                else:
                    # A repeat inside this call is encoded once: it counts as a hit.
                    self._hits += 1
        if missing and self._disk is not None:
            # A damaged vector on disk is left out (and deleted): its text is encoded below like a new one.
            dimension = self._known_dimension()
            stored = self._disk.get(self._disk_model, list(missing), lambda vector: usable_vector(vector, dimension))
            with self._cache_lock:
                for key, vector in stored.items():
                    found[key] = vector
                    self._store(key, vector)
                    del missing[key]
                self._disk_hits += len(stored)
        done = total - len(missing)
        pending = encoding_order(list(missing.items()))
        for start in range(0, len(pending), self.batch_size):
            batch = pending[start : start + self.batch_size]
            vectors = normalize(self._encode([text for _, text in batch]))
            with self._cache_lock:
                for (key, _), vector in zip(batch, vectors, strict=True):
                    found[key] = vector
                    self._store(key, vector)
            # Each batch is kept as soon as it is done: an interrupted run keeps what it embedded.
            if self._disk is not None:
                self._disk.put(self._disk_model, zip((key for key, _ in batch), vectors, strict=True))
            done += len(batch)
            if progress is not None:
                progress(min(done, total), total)
        if progress is not None and not pending:
            progress(total, total)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        """The query's normalized vector (1-D)."""
        return self.embed([text])[0]

    def cache_stats(self) -> dict[str, int]:
        """Texts served from memory (hits), not found there (misses), and of those read from disk (disk_hits);
        misses less disk_hits were encoded. Entries: vectors held in memory."""
        with self._cache_lock:
            return {
                "hits": self._hits,
                "misses": self._misses,
                "disk_hits": self._disk_hits,
                "entries": len(self._cache),
            }

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _store(self, key: str, vector: np.ndarray) -> None:
        self._cache[key] = vector
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_entries:
            self._cache.popitem(last=False)


def encoding_order(pending: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(key, text)`` pairs in the order ``SentenceTransformer.encode`` encodes texts: longest first.

    sentence-transformers sorts a call's texts by ``np.argsort`` of minus their lengths in
    characters, then cuts batches in that order. A float32 forward pass gives a text last bits
    that depend on which texts share its padded batch, so the same order makes the same batches
    and the same bits: a call whose texts are all new and distinct gets exactly the rows
    ``encode(texts, batch_size=32, normalize_embeddings=True)`` returns (tests/test_embedding_identity.py).
    Sorting also pads less: texts of similar length share a batch.
    """
    order = np.argsort([-len(text) for _, text in pending])
    return [pending[i] for i in order]


def embed_nodes(nodes: Sequence[Node], embedder: Embedder, progress: Progress | None = None) -> np.ndarray:
    """Embed nodes as a real pipeline does: through their EMBED view (metadata the embedder may see, then text)."""
    return embedder.embed(contents(nodes, MetadataMode.EMBED), progress)


_SHARED: dict[str, Embedder] = {}
_SHARED_LOCK = threading.Lock()


def get_embedder(model_path: str | None = None) -> Embedder:
    """The process-wide embedder for a model folder (the packaged one by default): loaded once, then shared."""
    path = os.path.abspath(model_path) if model_path else default_model_path()
    with _SHARED_LOCK:
        embedder = _SHARED.get(path)
        if embedder is None:
            embedder = Embedder(path)
            _SHARED[path] = embedder
        return embedder


def _model_key(model_path: str) -> str:
    """Names a model's vectors on disk: its folder and files (new weights, new key) and what runs it
    (another runtime's vectors may differ in the 7th decimal; a cached vector is exactly the one a run computes).

    Both routes (:class:`MeanPoolingModel`, :class:`SentenceTransformersModel`) are "torch": the same torch
    modules on the same token ids, giving the same vectors (tests/test_embeddings.py checks it on the samples),
    so the vectors cached by the sentence-transformers route before stay valid."""
    digest = hashlib.sha1(f"{RUNTIME}:{model_path}".encode())
    hash_model_files(digest, model_path)
    return digest.hexdigest()
