"""ONNX Runtime for a sentence-transformers model: the same vectors, without importing sentence-transformers.

Only the transformer's forward pass runs as a graph. The rest is read from the
model folder and done here: the tokenizer from its ``tokenizer.json`` (the
``tokenizers`` package), truncation at ``max_seq_length`` from
``sentence_bert_config.json``, the pooling ``1_Pooling/config.json`` declares.
So a process that embeds never imports sentence-transformers, transformers or
torch, whose imports took 8 of the 10 s of a ``chunkscope query``.

The graph is exported from the installed weights with ``torch.onnx.export``
the first time a model is used (a few seconds, no download; only then are
sentence-transformers and torch loaded) and kept on disk, keyed by the model's
files, so later processes only open it. On the packaged all-MiniLM-L6-v2 the
vectors equal the sentence-transformers route around the same graph to 1e-6
and torch's to 2e-7 (cosine 0.9999999), so retrieval order is kept; encoding
is ~1.6x faster than torch on two cores (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from core.embedding_cache import cache_root, hash_model_files
from core.forking import CORES

# Bump when the export below changes, so graphs written by an older export are not reused.
EXPORT_VERSION = 1
_EXPORT_LOCK = threading.Lock()
# What this module computes itself after the graph; a model with any other module runs on torch.
POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens")
# Older pooling configs: one flag per mode, concatenated in this order (as sentence-transformers reads them).
_POOLING_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}


def cache_dir() -> Path:
    """Where exported graphs are kept: ``onnx`` in :func:`core.embedding_cache.cache_root`."""
    return cache_root() / "onnx"


def graph_path(model_path: str) -> Path:
    """The exported graph's file for a model directory: named by its files' names, sizes and times."""
    digest = hashlib.sha1(f"v{EXPORT_VERSION}:{os.path.abspath(model_path)}".encode())
    hash_model_files(digest, model_path)
    # The installed torch's version, read without importing torch (which takes seconds).
    try:
        digest.update(metadata.version("torch").encode())
    except metadata.PackageNotFoundError:
        digest.update(b"no torch")
    return cache_dir() / f"{digest.hexdigest()[:20]}.onnx"


@dataclass(frozen=True)
class ModelLayout:
    """What a sentence-transformers model folder declares about tokenizing and pooling."""

    tokenizer_file: str
    max_seq_length: int
    pooling: tuple[str, ...]
    dimension: int  # the pooled vector's length


def read_layout(model_path: str) -> ModelLayout:
    """The layout of a Transformer -> Pooling (-> Normalize) model; ValueError for any other."""

    def load(*parts: str) -> dict[str, Any]:
        path = os.path.join(model_path, *parts)
        if not os.path.isfile(path):
            raise ValueError(f"no {os.path.join(*parts)} in the model folder")
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)

    modules = load("modules.json")
    kinds = [module.get("type", "").rsplit(".", 1)[-1] for module in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ValueError(f"modules {kinds} (only Transformer, Pooling and Normalize run without torch)")
    transformer_dir, pooling_dir = modules[0].get("path", ""), modules[1].get("path", "")
    settings = load(transformer_dir, "sentence_bert_config.json")
    if settings.get("do_lower_case"):
        raise ValueError("do_lower_case is set")
    if not isinstance(settings.get("max_seq_length"), int):
        raise ValueError("sentence_bert_config.json gives no max_seq_length")
    pooling = load(pooling_dir, "config.json")
    modes = (
        pooling.get("pooling_mode") or [mode for flag, mode in _POOLING_FLAGS.items() if pooling.get(flag)] or "mean"
    )
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    if not set(modes) <= set(POOLING_MODES):
        raise ValueError(f"pooling {modes}")
    tokenizer_file = os.path.join(model_path, transformer_dir, "tokenizer.json")
    if not os.path.isfile(tokenizer_file):
        raise ValueError("no tokenizer.json in the model folder")
    width = pooling.get("embedding_dimension") or pooling["word_embedding_dimension"]
    return ModelLayout(tokenizer_file, settings["max_seq_length"], modes, int(width) * len(modes))


class OnnxEncoder:
    """Encodes texts like sentence-transformers' ``model.encode`` (before normalization), with no torch.

    ``load_model`` gives the sentence-transformers model; it is called only when
    the graph has to be exported.
    """

    def __init__(self, model_path: str, load_model: Callable[[], Any]) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.layout = read_layout(model_path)
        path = graph_path(model_path)
        if not path.exists():
            export_graph(load_model(), path)
        tokenizer = Tokenizer.from_file(self.layout.tokenizer_file)
        # As sentence-transformers calls it: cut at max_seq_length (special tokens included), pad to the
        # longest text of the batch. Pad positions are masked, so only the padding side could change a vector.
        tokenizer.enable_truncation(max_length=self.layout.max_seq_length)
        padding = tokenizer.padding or {}
        tokenizer.enable_padding(
            direction=padding.get("direction", "right"),
            pad_id=padding.get("pad_id", 0),
            pad_type_id=padding.get("pad_type_id", 0),
            pad_token=padding.get("pad_token", "[PAD]"),
        )
        self.tokenizer = tokenizer
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = CORES
        options.log_severity_level = 3  # errors only: its notes would land in CLI output and server logs
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.input_names = [graph_input.name for graph_input in self.session.get_inputs()]
        unknown = set(self.input_names) - {"input_ids", "attention_mask", "token_type_ids"}
        if unknown:
            raise ValueError(f"the graph takes inputs the tokenizer does not give: {sorted(unknown)}")
        self.path = path

    @property
    def dimension(self) -> int:
        return self.layout.dimension

    @property
    def max_seq_length(self) -> int:
        return self.layout.max_seq_length

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        columns = {
            "input_ids": np.array([encoding.ids for encoding in encodings], dtype=np.int64),
            "attention_mask": mask,
            "token_type_ids": np.array([encoding.type_ids for encoding in encodings], dtype=np.int64),
        }
        (hidden,) = self.session.run(["token_embeddings"], {name: columns[name] for name in self.input_names})
        return pool(hidden, mask, self.layout.pooling)


def pool(hidden: np.ndarray, mask: np.ndarray, modes: tuple[str, ...]) -> np.ndarray:
    """sentence-transformers' Pooling over token vectors ``hidden`` (batch, tokens, width): one row per text."""
    weights = mask[..., None].astype(hidden.dtype)
    counts = np.maximum(weights.sum(axis=1), 1e-9)
    pooled = []
    for mode in modes:
        if mode == "cls":
            pooled.append(hidden[np.arange(len(hidden)), mask.argmax(axis=1)])
        elif mode == "max":
            pooled.append(np.where(weights > 0, hidden, -np.inf).max(axis=1))
        elif mode == "mean":
            pooled.append((hidden * weights).sum(axis=1) / counts)
        else:  # mean_sqrt_len_tokens
            pooled.append((hidden * weights).sum(axis=1) / np.sqrt(counts))
    return np.concatenate(pooled, axis=1).astype(np.float32, copy=False)


def export_graph(model: Any, path: Path) -> None:
    """Write the transformer of sentence-transformers ``model`` to ``path`` as an ONNX graph."""
    import torch

    transformer = model[0]
    if not hasattr(transformer, "auto_model"):
        raise TypeError("the model's first module is not a Hugging Face transformer")
    # The model's own tokenization (``preprocess`` since sentence-transformers 6, ``tokenize`` before).
    prepare = getattr(model, "preprocess", None) or model.tokenize
    sample = prepare(["a probe sentence", "and another"])
    input_names = [name for name, value in sample.items() if isinstance(value, torch.Tensor)]
    _export(transformer.auto_model, sample, input_names, path)


def _export(auto_model: Any, sample: dict[str, Any], input_names: list[str], path: Path) -> None:
    """Write the transformer's graph to ``path`` (atomically: a half-written file is never opened)."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *tensors: Any) -> Any:
            return self.inner(**dict(zip(input_names, tensors, strict=True))).last_hidden_state

    axes = {name: {0: "batch", 1: "sequence"} for name in [*input_names, "token_embeddings"]}
    path.parent.mkdir(parents=True, exist_ok=True)
    with _EXPORT_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shape-dependent Python branches
        handle, partial = tempfile.mkstemp(dir=path.parent, suffix=".partial")
        os.close(handle)
        try:
            torch.onnx.export(
                LastHiddenState(auto_model.eval()),
                tuple(sample[name] for name in input_names),
                partial,
                input_names=input_names,
                output_names=["token_embeddings"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
            os.replace(partial, path)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
