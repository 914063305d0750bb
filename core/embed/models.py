"""What runs an embedding model: transformers alone for the mean-pooling layout, else sentence-transformers.

:class:`MeanPoolingModel` computes what ``SentenceTransformer.encode`` computes for a
Transformer -> mean pooling -> Normalize folder (bit-identical vectors for the same batch; a text in
another batch can differ in its last bits, within 1e-6: tests/test_embedding_identity.py),
without importing sentence-transformers and scikit-learn; :class:`SentenceTransformersModel`
runs any other layout. Both load their weights only when first asked to encode.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass

import numpy as np

from core.errors import ModelUnavailableError
from core.tokens.tokenizers import default_model_path

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
        if not _is_mean_pooling_pipeline(modules):
            return None
        pooling = _read_json(os.path.join(path, str(modules[1]["path"]), "config.json"))
        if not _pools_by_mean(pooling):
            return None
        transformer = _read_json(os.path.join(path, "sentence_bert_config.json"))
        if not _plain_transformer(transformer) or _has_default_prompt(path):
            return None
        return MeanPoolingLayout(int(transformer["max_seq_length"]), int(pooling["word_embedding_dimension"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _is_mean_pooling_pipeline(modules: list[dict]) -> bool:
    """modules.json lists exactly Transformer (at the folder's root), Pooling, Normalize."""
    types = [str(module["type"]) for module in modules]
    if len(types) != 3 or not all(
        kind.startswith("sentence_transformers.") and kind.rsplit(".", 1)[-1] == step
        for kind, step in zip(types, _MEAN_POOLING_STEPS, strict=True)
    ):
        return False
    return modules[0].get("path", "") == ""


def _pools_by_mean(pooling: dict) -> bool:
    """The Pooling module's config.json asks for the mean of the token vectors and nothing else."""
    modes = {key for key, on in pooling.items() if key.startswith("pooling_mode_") and on}
    if pooling.get("pooling_mode", "mean") != "mean" or modes - {"pooling_mode_mean_tokens"}:
        return False
    if set(pooling) - _POOLING_KEYS - {key for key in pooling if key.startswith("pooling_mode_")}:
        return False
    return "pooling_mode" in pooling or bool(modes)


def _plain_transformer(transformer: dict) -> bool:
    """sentence_bert_config.json sets the window and nothing else (no lower-casing, no extra arguments)."""
    if set(transformer) != {"max_seq_length", "do_lower_case"} and set(transformer) != {"max_seq_length"}:
        return False
    return not transformer.get("do_lower_case")


def _has_default_prompt(path: str) -> bool:
    settings_file = os.path.join(path, "config_sentence_transformers.json")
    return os.path.exists(settings_file) and bool(_read_json(settings_file).get("default_prompt_name"))


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
            return _mean_pool_normalized(tokens, batch["attention_mask"])

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


class PlainBertModel(MeanPoolingModel):
    """The packaged all-MiniLM-L6-v2 (a 6-layer BERT) run in plain torch: no transformers import.

    ``AutoModel.from_pretrained`` costs ~4 s of CPU before the first forward pass, nearly all of it
    imports transformers makes whatever the model (its loss functions import scipy.optimize, its mask
    utilities torch._dynamo); a new query's vector then took ~5.6 s of CPU in a fresh process, this
    ~2 s. The same torch calls in the same order as transformers' ``BertModel`` with SDPA attention
    (no mask when nothing is padded, a boolean one otherwise), the tokenizer its own ``tokenizer.json``
    with the truncation and padding transformers sets, so the vectors are bit-identical to the
    transformers route (tests/test_embeddings.py checks every sample text in mixed batches). Only
    the packaged folder runs here: another folder's tokenizer settings could differ from its file's.
    """

    def encode(self, texts: list[str]) -> np.ndarray:
        import torch
        import torch.nn.functional as F

        tokenizer, weights, config = self._load()
        encoded = tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in encoded], dtype=torch.long)
        types = torch.tensor([e.type_ids for e in encoded], dtype=torch.long)
        padding = torch.tensor([e.attention_mask for e in encoded], dtype=torch.long)
        size, heads, eps = config["hidden_size"], config["num_attention_heads"], config["layer_norm_eps"]
        head_size = size // heads
        batch, length = ids.shape

        def norm(x: torch.Tensor, name: str) -> torch.Tensor:
            return F.layer_norm(x, (size,), weights[name + ".weight"], weights[name + ".bias"], eps)

        def linear(x: torch.Tensor, name: str) -> torch.Tensor:
            return F.linear(x, weights[name + ".weight"], weights[name + ".bias"])

        def split_heads(x: torch.Tensor) -> torch.Tensor:
            return x.view(batch, length, -1, head_size).transpose(1, 2)

        with torch.inference_mode():
            x = F.embedding(ids, weights["embeddings.word_embeddings.weight"])
            x = x + F.embedding(types, weights["embeddings.token_type_embeddings.weight"])
            x = x + F.embedding(torch.arange(length).unsqueeze(0), weights["embeddings.position_embeddings.weight"])
            x = norm(x, "embeddings.LayerNorm")
            # transformers gives SDPA no mask when nothing is padded (its faster kernel), else a boolean one.
            mask = (
                None
                if bool(padding.bool().all())
                else padding.bool()[:, None, None, :].expand(batch, 1, length, length)
            )
            for layer in range(config["num_hidden_layers"]):
                at = f"encoder.layer.{layer}."
                query, key, value = (
                    split_heads(linear(x, at + f"attention.self.{n}")) for n in ("query", "key", "value")
                )
                attended = F.scaled_dot_product_attention(
                    query, key, value, attn_mask=mask, dropout_p=0.0, scale=head_size**-0.5, is_causal=False
                )
                attended = attended.reshape(batch, -1, length, head_size).transpose(1, 2).contiguous()
                attended = attended.reshape(batch, length, -1).contiguous()
                attended = norm(linear(attended, at + "attention.output.dense") + x, at + "attention.output.LayerNorm")
                inner = F.gelu(linear(attended, at + "intermediate.dense"))
                x = norm(linear(inner, at + "output.dense") + attended, at + "output.LayerNorm")
            return _mean_pool_normalized(x, padding)

    def _load(self):  # noqa: ANN202 - (tokenizer, weights, config)
        with self._lock:
            if self._loaded is None:
                _use_all_cores()
                from safetensors.torch import load_file
                from tokenizers import Tokenizer

                try:
                    config = _read_json(os.path.join(self.path, "config.json"))
                    tokenizer = Tokenizer.from_file(os.path.join(self.path, "tokenizer.json"))
                    weights = load_file(os.path.join(self.path, "model.safetensors"))
                except Exception as exc:  # noqa: BLE001 - tokenizers and safetensors raise their own types
                    raise ModelUnavailableError(
                        f"the embedding model at {self.path} could not be loaded ({exc})"
                    ) from exc
                # What transformers' tokenizer call sets (padding=True, truncation="longest_first"), over the file's.
                tokenizer.enable_truncation(max_length=self.max_seq_length, strategy="longest_first")
                tokenizer.enable_padding(pad_id=int(config.get("pad_token_id", 0)), pad_token="[PAD]")
                weights = {name.removeprefix("bert."): tensor for name, tensor in weights.items()}
                self._loaded = (tokenizer, weights, config)
            return self._loaded


def plain_bert_runs(path: str) -> bool:
    """Whether :class:`PlainBertModel` runs this folder: the packaged model, as shipped (BERT, GELU, safetensors)."""
    if path != default_path_or_none():
        return False
    try:
        config = _read_json(os.path.join(path, "config.json"))
    except (OSError, ValueError):
        return False
    return (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and os.path.exists(os.path.join(path, "model.safetensors"))
        and os.path.exists(os.path.join(path, "tokenizer.json"))
    )


def _mean_pool_normalized(tokens, attention_mask):  # noqa: ANN001, ANN202 - torch tensors
    """Mean of the token vectors over the attention mask, L2-normalized.

    Twice, as sentence-transformers does (its Normalize module, then encode's normalize_embeddings): the
    second pass moves the last bit of some components, and repeating it keeps these vectors bit-identical
    to the ones that route computed and the disk cache already holds.
    """
    import torch

    mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
    summed = (tokens * mask).sum(dim=1)
    counts = torch.clamp(mask.sum(dim=1), min=1e-9)
    vectors = torch.nn.functional.normalize(summed / counts, p=2, dim=-1)
    return torch.nn.functional.normalize(vectors, p=2, dim=-1).numpy()


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


# A model's own L2 normalization leaves a float32 row's norm within a few 1e-8 of 1.
_UNIT = 1e-5


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; a row the model already normalized is returned as it is, bit for bit.

    Both routes normalize (as ``SentenceTransformer.encode(..., normalize_embeddings=True)`` does);
    dividing such a row by its norm again would move the last bit of some components away from
    what sentence-transformers gives, so only a row that is not unit length is scaled here.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
    # An all-zero vector stays zero rather than becoming NaN.
    scale = np.where((np.abs(norms - 1) <= _UNIT) | (norms == 0), 1, norms)
    return vectors if (scale == 1).all() else (vectors / scale).astype(np.float32)


def default_path_or_none() -> str | None:
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
