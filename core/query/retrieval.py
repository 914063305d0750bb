"""Retrieval: the top-k nodes for a query, by embeddings, by BM25, or by both.

- ``dense``: cosine similarity between the query and each node's EMBED view.
- ``bm25``: BM25 (the ``bm25s`` library) over the same EMBED views, English stopwords removed. The
  index depends on the nodes only: :class:`BM25Index` builds it once for a set of nodes and scores
  any number of queries against it.
- ``hybrid``: the two fused, by ``fusion``:
  ``relative_score``: each score list min-max normalized over all nodes, then
  ``alpha * dense + (1 - alpha) * bm25`` (alpha 1 is pure dense, 0 pure BM25);
  ``reciprocal_rank``: ``alpha / (60 + dense rank) + (1 - alpha) / (60 + BM25 rank)``, a retriever adding
  nothing for a node past its top_k (LangChain's EnsembleRetriever, each retriever returning top_k).

Over hierarchical chunks, ``returns`` may search the leaves only and return their parents or merge them
(:mod:`core.query.hierarchy`). Ties keep the nodes' input order, so results are deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from core.config_parts import DEFAULT_RETRIEVAL, RetrievalMode, RetrievalSettings
from core.errors import ConfigError
from core.query.hierarchy import lift, searched
from core.schema import MetadataMode, Node, NodeWithScore, contents

if TYPE_CHECKING:
    from core.embed.embedder import Embedder

RETRIEVAL_MODES: tuple[str, ...] = get_args(RetrievalMode)
# Where an evaluation retrieves a query's chunks from: every loaded document, or only the query's own.
Scope = Literal["corpus", "document"]
SCOPES: tuple[str, ...] = ("corpus", "document")


def retrieve(
    nodes: Sequence[Node],
    query: str,
    retrieval: RetrievalSettings = DEFAULT_RETRIEVAL,
    *,
    embedder: Embedder | None = None,
    node_embeddings: np.ndarray | None = None,
    bm25: BM25Index | None = None,
    every: Mapping[str, Node] | None = None,
    tokens: Callable[[Node], int] | None = None,
) -> list[NodeWithScore]:
    """The ``retrieval.top_k`` best nodes for ``query``, best first, each scored and tagged with the query.

    ``retrieval`` was validated when it was made (its parameters are declared once, in
    :class:`~core.config_parts.RetrievalSettings`). ``node_embeddings`` (one row per node, normalized) skips
    embedding the nodes, and ``bm25`` (an index of the nodes searched) skips indexing them; without an
    ``embedder`` the shared default model is used for dense and hybrid. With ``returns`` other than chunks,
    only the leaves of a hierarchy are searched and the parents returned are looked up in ``every`` (by id;
    default: ``nodes``). ``tokens`` counts a chunk's cost for a ``context_budget`` (default: the packaged
    model's tokens of its LLM view).
    """
    if not query.strip():
        raise ConfigError("the query is empty")
    if not nodes:
        return []
    positions = searched(nodes, retrieval)
    pool = nodes
    if len(positions) != len(nodes):
        pool = [nodes[i] for i in positions]
        node_embeddings = None if node_embeddings is None else np.asarray(node_embeddings)[positions]
        bm25 = bm25 if bm25 is not None and bm25.size == len(pool) else None
    scores = score_nodes(pool, query, retrieval, embedder=embedder, node_embeddings=node_embeddings, bm25=bm25)
    order = np.argsort(-scores, kind="stable")[: retrieval.top_k]
    found = [NodeWithScore(node=pool[i], score=float(scores[i]), query=query) for i in order]
    if retrieval.returns == "chunks":
        return found
    return lift(found, every if every is not None else {node.id: node for node in nodes}, retrieval, tokens)


def score_nodes(
    nodes: Sequence[Node],
    query: str,
    retrieval: RetrievalSettings = DEFAULT_RETRIEVAL,
    *,
    embedder: Embedder | None = None,
    node_embeddings: np.ndarray | None = None,
    bm25: BM25Index | None = None,
) -> np.ndarray:
    """Every node's score for the query (float64, input order); ``retrieval.top_k`` is read by reciprocal rank
    fusion only (each retriever's depth)."""
    mode, alpha = retrieval.mode, retrieval.alpha
    if mode != "dense" and bm25 is None:
        bm25 = BM25Index(nodes)
    if mode == "bm25":
        return bm25.scores(query)
    dense = dense_scores(nodes, query, embedder=embedder, node_embeddings=node_embeddings)
    if mode == "dense":
        return dense
    if retrieval.fusion == "reciprocal_rank":
        return reciprocal_rank_fusion([dense, bm25.scores(query)], [alpha, 1.0 - alpha], retrieval.top_k)
    return alpha * min_max(dense) + (1.0 - alpha) * min_max(bm25.scores(query))


# The constant of reciprocal rank fusion (Cormack et al. 2009), LangChain's ``c`` and LlamaIndex's ``k``.
RRF_K = 60


def reciprocal_rank_fusion(scores: Sequence[np.ndarray], weights: Sequence[float], depth: int) -> np.ndarray:
    """Each node's ``sum(weight / (RRF_K + rank))`` over the score lists where it ranks within ``depth`` (rank from 1).

    A list's ties are ranked in node order (a stable sort), as a retriever returning them would.
    """
    fused = np.zeros(len(scores[0]) if scores else 0, dtype=np.float64)
    for values, weight in zip(scores, weights, strict=True):
        top = np.argsort(-np.asarray(values, dtype=np.float64), kind="stable")[:depth]
        fused[top] += weight / (RRF_K + np.arange(1, len(top) + 1, dtype=np.float64))
    return fused


def dense_scores(
    nodes: Sequence[Node],
    query: str,
    *,
    embedder: Embedder | None = None,
    node_embeddings: np.ndarray | None = None,
) -> np.ndarray:
    """Cosine similarity of the query with each node (rows are normalized, so a dot product)."""
    if embedder is None:
        from core.embed.embedder import get_embedder

        embedder = get_embedder()
    if node_embeddings is None:
        from core.embed.embedder import embed_nodes

        node_embeddings = embed_nodes(nodes, embedder)
    node_embeddings = np.asarray(node_embeddings, dtype=np.float32)
    if node_embeddings.shape[0] != len(nodes):
        raise ConfigError(f"node_embeddings has {node_embeddings.shape[0]} rows for {len(nodes)} nodes")
    query_vector = np.asarray(embedder.embed_query(query), dtype=np.float32)
    return (node_embeddings @ query_vector).astype(np.float64)


class BM25Index:
    """BM25 over the EMBED views of a fixed list of nodes: tokenized and indexed once, then any number of queries.

    The scores are the ones a fresh index per query gives (the index depends on
    the nodes alone); building it only once makes an evaluation's BM25 time grow
    with queries + corpus instead of queries x corpus.
    """

    def __init__(self, nodes: Sequence[Node]) -> None:
        import bm25s

        self.size = len(nodes)
        self._index = None
        self._known: set[str] = set()
        if not nodes:
            return
        texts = contents(nodes, MetadataMode.EMBED)
        corpus_tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
        self._known = set(corpus_tokens.vocab)
        self._index = bm25s.BM25()
        self._index.index(corpus_tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """Each node's score for the query, in node order (0 where no query term occurs)."""
        import bm25s

        if self._index is None:
            return np.zeros(self.size, dtype=np.float64)
        query_tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
        query_tokens = [token for token in query_tokens if token in self._known]
        if not query_tokens:
            return np.zeros(self.size, dtype=np.float64)
        return np.asarray(self._index.get_scores(query_tokens), dtype=np.float64)


def bm25_scores(nodes: Sequence[Node], query: str) -> np.ndarray:
    """BM25 score of each node's EMBED view for the query (0 where no query term occurs)."""
    return BM25Index(nodes).scores(query)


def min_max(scores: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; all-equal scores become 0 (they say nothing about order)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    low, high = float(scores.min()), float(scores.max())
    if high == low:
        return np.zeros_like(scores)
    return (scores - low) / (high - low)
