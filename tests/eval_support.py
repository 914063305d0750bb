"""A fake embedding model for evaluation tests: no torch, words hashed into a small vector, every text counted."""

from __future__ import annotations

import hashlib

import numpy as np

from core.embed.embedder import Embedder

DIMENSION = 32


def words_embed(texts: list[str]) -> np.ndarray:
    """A bag of hashed lower-case words per text: texts sharing words are close (also a semantic ``embed_fn``)."""
    rows = np.zeros((len(texts), DIMENSION))
    for row, text in zip(rows, texts, strict=True):
        for word in text.lower().split():
            word = word.strip(".,?!:;")
            row[int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIMENSION] += 1.0
    rows[:, 0] += 0.01  # no all-zero rows
    return rows


class FakeModel:
    max_seq_length = 16  # tokens: a sentence or two fits, a long chunk does not

    def get_embedding_dimension(self):
        return DIMENSION


class WordsEmbedder(Embedder):
    """An Embedder (caches included) whose model is :func:`words_embed`; ``encoded`` lists every text it encoded."""

    def _load_model(self, path):
        self.encoded: list[str] = []
        return FakeModel()

    def _encode(self, texts):
        self.encoded.extend(texts)
        return words_embed(list(texts))
