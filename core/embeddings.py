"""Embeddings: a sentence-transformers model from a local directory, with a text cache in memory and on disk.

The default model is the packaged all-MiniLM-L6-v2 (:func:`core.tokenizers.default_model_path`);
nothing is ever downloaded. Every vector is float32 and L2-normalized, so a dot
product is the cosine similarity. Vectors are cached by (model, sha1 of the text):
changing a splitter parameter embeds only the chunk texts that are new, and a
restarted app or a second CLI run finds them on disk (:class:`DiskCache`). Query
strings go through the same cache, so a repeated query needs no model at all.

Nothing heavy is imported until a text that no cache holds must be encoded. A model
whose sentence-transformers layout is Transformer -> mean pooling -> Normalize (all
MiniLM/mpnet-style sentence models, the packaged one included) is then run by
transformers alone (:class:`MeanPoolingModel`), computing what
``SentenceTransformer.encode`` computes without importing sentence-transformers
(seconds of CPU on two cores: it pulls in scikit-learn); any other layout is run by
sentence-transformers (:class:`SentenceTransformersModel`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core.embedding_cache import DiskCache, cache_root, hash_model_files
from core.errors import ConfigError, ModelUnavailableError
from core.schema import MetadataMode, Node
from core.tokenizers import default_model_path

Progress = Callable[[int, int], None]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_BATCH_SIZE = 32
# About 30 MB of 384-dimension float32 vectors: enough for several sweeps over the samples.
DEFAULT_CACHE_ENTRIES = 20_000
# What may run the model. Only torch (through transformers, or sentence-transformers for an unusual
# layout: both are torch and give the same vectors): an ONNX Runtime backend was no
# faster on two cores (0.98x wall, 0.78x per CPU on 256-token chunks, benchmarks/NOTES.md) and was
# removed; "auto" is still accepted and means torch.
BACKENDS = ("torch", "auto")


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
        backend: str = "torch",
        disk_cache: bool = True,
    ) -> None:
        if backend not in BACKENDS:
            raise ConfigError(f"embedding backend must be one of {', '.join(BACKENDS)}, not {backend!r}"
                              + (" (the ONNX backend was removed: it was no faster)" if backend == "onnx" else ""))
        self.model_path = os.path.abspath(model_path) if model_path else default_model_path()
        self.batch_size = batch_size
        self._cache_entries = cache_entries
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._encode_lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        self._disk_hits = 0
        # What runs the model (always torch now; kept for the callers that show it) and why not something else.
        self.backend = "torch"
        self.backend_note = ""
        self._model = self._load_model(self.model_path)
        self._disk = DiskCache(cache_root() / "embeddings.sqlite3") if disk_cache else None
        self._disk_model = _model_key(self.model_path, self.backend)

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
        return MeanPoolingModel(path, layout) if layout is not None else SentenceTransformersModel(path)

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._encode_lock:
            vectors = self._model.encode(texts)
        return np.asarray(vectors, dtype=np.float32)

    # -- what the model is ----------------------------------------------------

    @property
    def model_name(self) -> str:
        if self.model_path == _default_path_or_none():
            return DEFAULT_MODEL_NAME
        return os.path.basename(self.model_path.rstrip(os.sep)) or self.model_path

    @property
    def dimension(self) -> int:
        return int(self._model.get_embedding_dimension())

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
            stored = self._disk.get(self._disk_model, list(missing))
            with self._cache_lock:
                for key, vector in stored.items():
                    found[key] = vector
                    self._store(key, vector)
                    del missing[key]
                self._disk_hits += len(stored)
        done = total - len(missing)
        pending = list(missing.items())
        for start in range(0, len(pending), self.batch_size):
            batch = pending[start : start + self.batch_size]
            vectors = _normalize(self._encode([text for _, text in batch]))
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


def embed_nodes(nodes: Sequence[Node], embedder: Embedder, progress: Progress | None = None) -> np.ndarray:
    """Embed nodes as a real pipeline does: through their EMBED view (metadata the embedder may see, then text)."""
    return embedder.embed([node.get_content(MetadataMode.EMBED) for node in nodes], progress)


_SHARED: dict[tuple[str, str], Embedder] = {}
_SHARED_LOCK = threading.Lock()


def get_embedder(model_path: str | None = None, backend: str | None = None) -> Embedder:
    """The process-wide embedder for a model (loaded once, then shared); ``backend`` as :class:`Embedder` takes it."""
    path = os.path.abspath(model_path) if model_path else default_model_path()
    # "auto" is torch: one shared model, not one per spelling.
    backend = "torch" if backend in (None, "auto") else backend
    with _SHARED_LOCK:
        embedder = _SHARED.get((path, backend))
        if embedder is None:
            embedder = Embedder(path, backend=backend)
            _SHARED[(path, backend)] = embedder
        return embedder


def _model_key(model_path: str, backend: str) -> str:
    """Names a model's vectors on disk: its folder and files (new weights, new key) and what runs it
    (another runtime's vectors may differ in the 7th decimal; a cached vector is exactly the one a run computes).

    Both routes (:class:`MeanPoolingModel`, :class:`SentenceTransformersModel`) are "torch": the same torch
    modules on the same token ids, giving the same vectors (tests/test_embeddings.py checks it on the samples),
    so the vectors cached by the sentence-transformers route before stay valid."""
    digest = hashlib.sha1(f"{backend}:{model_path}".encode())
    hash_model_files(digest, model_path)
    return digest.hexdigest()


# -- what runs a model ----------------------------------------------------------------------

# The modules.json "type" of each step of the one layout run without sentence-transformers: older
# releases name the short alias, sentence-transformers 6 may write the module's full path.
_MEAN_POOLING_STEPS = ("Transformer", "Pooling", "Normalize")
# Pooling settings that still mean "the mean of the token vectors" (include_prompt only matters with a prompt).
_POOLING_KEYS = {"word_embedding_dimension", "pooling_mode", "include_prompt"}


@dataclass(frozen=True)
class MeanPoolingLayout:
    """A model folder that is exactly Transformer (at its root) -> Pooling(mean tokens) -> Normalize."""

    max_seq_length: int  # tokens, [CLS] and [SEP] included: sentence_bert_config.json's max_seq_length
    dimension: int  # 1_Pooling/config.json's word_embedding_dimension


def mean_pooling_layout(path: str) -> MeanPoolingLayout | None:
    """The folder's layout if :class:`MeanPoolingModel` computes what sentence-transformers does for it, else None.

    Read from modules.json, the Pooling module's config.json, sentence_bert_config.json and
    config_sentence_transformers.json; anything unexpected (another module, another pooling mode,
    lower-casing, extra tokenizer or model arguments, a default prompt) means None.
    """
    try:
        modules = _read_json(os.path.join(path, "modules.json"))
        types = [str(module["type"]) for module in modules]
        if len(types) != 3 or not all(
            kind.startswith("sentence_transformers.") and kind.rsplit(".", 1)[-1] == step
            for kind, step in zip(types, _MEAN_POOLING_STEPS, strict=True)
        ):
            return None
        if modules[0].get("path", "") != "":
            return None
        pooling = _read_json(os.path.join(path, str(modules[1]["path"]), "config.json"))
        modes = {key for key, on in pooling.items() if key.startswith("pooling_mode_") and on}
        if pooling.get("pooling_mode", "mean") != "mean" or modes - {"pooling_mode_mean_tokens"}:
            return None
        if set(pooling) - _POOLING_KEYS - {key for key in pooling if key.startswith("pooling_mode_")}:
            return None
        if "pooling_mode" not in pooling and not modes:
            return None
        transformer = _read_json(os.path.join(path, "sentence_bert_config.json"))
        if set(transformer) != {"max_seq_length", "do_lower_case"} and set(transformer) != {"max_seq_length"}:
            return None
        if transformer.get("do_lower_case"):
            return None
        settings_file = os.path.join(path, "config_sentence_transformers.json")
        if os.path.exists(settings_file) and _read_json(settings_file).get("default_prompt_name"):
            return None
        return MeanPoolingLayout(int(transformer["max_seq_length"]), int(pooling["word_embedding_dimension"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


class MeanPoolingModel:
    """Transformer -> mean pooling -> L2 normalization with transformers' AutoTokenizer and AutoModel.

    The computation of ``SentenceTransformer.encode(texts, normalize_embeddings=True)`` for a
    :class:`MeanPoolingLayout` folder: the batch tokenized with padding to its longest text and
    truncated to ``max_seq_length`` tokens, the last hidden states averaged over the attention
    mask, then scaled to unit length. Tokenizer and weights load on the first :meth:`encode`.
    """

    def __init__(self, path: str, layout: MeanPoolingLayout) -> None:
        self.path = path
        self.max_seq_length = layout.max_seq_length
        self._dimension = layout.dimension
        self._loaded = None  # (tokenizer, model) once loaded
        self._lock = threading.Lock()

    def get_embedding_dimension(self) -> int:
        return self._dimension

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def encode(self, texts: list[str]) -> np.ndarray:
        import torch

        tokenizer, model = self._load()
        batch = tokenizer(
            texts, padding=True, truncation="longest_first", max_length=self.max_seq_length, return_tensors="pt"
        )
        with torch.inference_mode():
            tokens = model(**batch, return_dict=True).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            summed = (tokens * mask).sum(dim=1)
            counts = torch.clamp(mask.sum(dim=1), min=1e-9)
            vectors = torch.nn.functional.normalize(summed / counts, p=2, dim=-1)
            # Twice, as sentence-transformers does (its Normalize module, then encode's normalize_embeddings):
            # the second pass moves the last bit of some components, and repeating it keeps these vectors
            # bit-identical to the ones that route computed and the disk cache already holds.
            vectors = torch.nn.functional.normalize(vectors, p=2, dim=-1)
        return vectors.numpy()

    def _load(self):  # noqa: ANN202 - (tokenizer, model)
        with self._lock:
            if self._loaded is None:
                _use_all_cores()
                _quiet_transformers()
                from transformers import AutoModel, AutoTokenizer

                try:
                    tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
                    model = AutoModel.from_pretrained(self.path, local_files_only=True).to("cpu").eval()
                except (OSError, ValueError) as exc:
                    raise ModelUnavailableError(
                        f"the embedding model at {self.path} could not be loaded ({exc})"
                    ) from exc
                self._loaded = (tokenizer, model)
            return self._loaded


class SentenceTransformersModel:
    """Any other model layout, run by sentence-transformers, loaded on the first use."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._loaded = None  # the SentenceTransformer once loaded
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    @property
    def max_seq_length(self) -> int:
        return int(self._load().max_seq_length)

    def get_embedding_dimension(self) -> int:
        model = self._load()
        # sentence-transformers 5 renamed the method; older releases only have the long name.
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._load().encode(
            texts, batch_size=len(texts), convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )

    def _load(self):  # noqa: ANN202 - a SentenceTransformer
        with self._lock:
            if self._loaded is None:
                _use_all_cores()
                _quiet_transformers()
                from sentence_transformers import SentenceTransformer

                try:
                    self._loaded = SentenceTransformer(self.path, device="cpu", local_files_only=True)
                except (OSError, ValueError) as exc:
                    raise ModelUnavailableError(
                        f"the embedding model at {self.path} could not be loaded ({exc})"
                    ) from exc
            return self._loaded


def _read_json(path: str):  # noqa: ANN202 - whatever the file holds
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _quiet_transformers() -> None:
    """Turn off transformers' weight-loading progress bar, which would land in CLI output and server logs."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


def _normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # An all-zero vector stays zero rather than becoming NaN.
    return vectors / np.where(norms == 0, 1, norms)


def _default_path_or_none() -> str | None:
    try:
        return default_model_path()
    except ModelUnavailableError:
        return None


_THREADS_SET = False


def _use_all_cores() -> None:
    """Let torch use every core once; its default can be far below or above what the machine has."""
    global _THREADS_SET
    if _THREADS_SET:
        return
    _THREADS_SET = True
    import torch

    torch.set_num_threads(max(1, os.cpu_count() or 1))
