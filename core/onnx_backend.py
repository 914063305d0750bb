"""ONNX Runtime for the transformer inside a sentence-transformers model: the same vectors, faster on CPU.

The model's own tokenizer and its pooling modules stay as they are; only the
transformer's forward pass runs in ONNX Runtime. The ONNX graph is exported
from the installed weights with ``torch.onnx.export`` the first time a model is
used (a few seconds, no download) and kept on disk, keyed by the model's files,
so later processes only open it. On the packaged all-MiniLM-L6-v2 the vectors
match torch's to 2e-7 (cosine 0.9999999), so retrieval order is kept, and
encoding is ~1.6x faster on two cores (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np

# Bump when the export below changes, so graphs written by an older export are not reused.
EXPORT_VERSION = 1
_EXPORT_LOCK = threading.Lock()


def cache_dir() -> Path:
    """Where exported graphs are kept: ``$CHUNKSCOPE_CACHE_DIR`` or ``$XDG_CACHE_HOME/chunkscope`` (``~/.cache``)."""
    configured = os.environ.get("CHUNKSCOPE_CACHE_DIR")
    if configured:
        return Path(configured) / "onnx"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "chunkscope" / "onnx"


def graph_path(model_path: str) -> Path:
    """The exported graph's file for a model directory: named by its files' names, sizes and times."""
    digest = hashlib.sha1(f"v{EXPORT_VERSION}:{os.path.abspath(model_path)}".encode())
    for root, _, files in sorted(os.walk(model_path)):
        for name in sorted(files):
            stat = os.stat(os.path.join(root, name))
            digest.update(
                f"{os.path.relpath(os.path.join(root, name), model_path)}:{stat.st_size}:{stat.st_mtime_ns}".encode()
            )
    import torch

    digest.update(torch.__version__.encode())
    return cache_dir() / f"{digest.hexdigest()[:20]}.onnx"


class OnnxEncoder:
    """Encodes texts like ``model.encode`` (before normalization), with the transformer in ONNX Runtime."""

    def __init__(self, model: Any, model_path: str) -> None:
        import onnxruntime
        import torch

        self.model = model
        transformer = model[0]
        if not hasattr(transformer, "auto_model"):
            raise TypeError("the model's first module is not a Hugging Face transformer")
        sample = self._features(["a probe sentence", "and another"])
        self.input_names = [name for name, value in sample.items() if isinstance(value, torch.Tensor)]
        path = graph_path(model_path)
        if not path.exists():
            _export(transformer.auto_model, sample, self.input_names, path)
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = max(1, torch.get_num_threads())
        options.log_severity_level = 3  # errors only: its notes would land in CLI output and server logs
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.path = path

    def encode(self, texts: list[str]) -> np.ndarray:
        import torch

        features = self._features(texts)
        inputs = {name: features[name].numpy().astype(np.int64, copy=False) for name in self.input_names}
        (hidden,) = self.session.run(["token_embeddings"], inputs)
        features["token_embeddings"] = torch.from_numpy(hidden)
        # The model's own modules after the transformer (pooling, normalization) finish the job.
        with torch.inference_mode():
            for module in list(self.model)[1:]:
                features = module(features)
        return features["sentence_embedding"].numpy()

    def _features(self, texts: list[str]) -> dict[str, Any]:
        """The model's own tokenization (``preprocess`` since sentence-transformers 6, ``tokenize`` before)."""
        prepare = getattr(self.model, "preprocess", None) or self.model.tokenize
        return prepare(texts)


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
