"""The working parts of an evaluation run: progress through its phases, retrieval within a scope, the window check.

:func:`core.evaluation.evaluate.evaluate` splits, embeds and scores; this module holds
what it does that is not scoring:

- :class:`RunPhases` turns the counts of each phase (documents split, chunks
  embedded, queries scored) into one fraction of the whole run and a line of text;
- :class:`ScopedRetriever` embeds the chunks once and builds a BM25 index once
  per scope (the corpus, or one document's chunks), then retrieves for any number
  of queries with them;
- :func:`over_window` counts the chunks whose EMBED view is longer than the
  embedding model reads (as the chunk metrics do, :mod:`core.measure.metrics`);
- :func:`mean_context_tokens` is what the LLM is sent per query: the model tokens of
  the retrieved chunks' LLM views (the tuner's ``context_tokens``, :mod:`core.evaluation.tune`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from core.config_parts import RetrievalMode, RetrievalSettings
from core.measure.metrics import DEFAULT_MAX_SEQ_LENGTH, SPECIAL_TOKENS
from core.query.retrieval import SCOPES, BM25Index, Scope, retrieve
from core.schema import Document, MetadataMode, Node, NodeWithScore, contents
from core.splitters.hierarchical import leaf_nodes

if TYPE_CHECKING:
    from core.embed.embedder import Embedder
    from core.splitters import Splitter

__all__ = [
    "SCOPES",
    "Report",
    "RunPhases",
    "Scope",
    "ScopedRetriever",
    "mean_context_tokens",
    "over_window",
    "split_with_progress",
]
# (fraction of the whole run done, what is happening): how a run reports progress.
Report = Callable[[float, str], None]


class RunPhases:
    """Progress of one evaluation: splitting, then embedding (unless BM25 only), then scoring, as one fraction."""

    def __init__(self, report: Report | None, *, splitting: float, embedding: bool) -> None:
        self.report = report
        self.split_end = splitting
        # Embedding the chunks is most of a dense run; scoring (a query embedding and a dot product each) the rest.
        self.embed_end = splitting + (0.8 * (1.0 - splitting) if embedding else 0.0)

    def say(self, fraction: float, text: str) -> None:
        """Report ``text`` at ``fraction`` of the run (e.g. a line about the LLM extractors, after splitting)."""
        if self.report is not None:
            self.report(min(max(fraction, 0.0), 1.0), text)

    def splitting(self, done: int, total: int) -> None:
        self.say(self.split_end * done / max(total, 1), f"Splitting: {done:,} of {total:,} documents")

    def embedding(self, done: int, total: int) -> None:
        width = self.embed_end - self.split_end
        self.say(self.split_end + width * done / max(total, 1), f"Embedding: {done:,} of {total:,} chunks")

    def scoring(self, done: int, total: int) -> None:
        width = 1.0 - self.embed_end
        self.say(self.embed_end + width * done / max(total, 1), f"Scoring: {done:,} of {total:,} queries")


def split_with_progress(splitter: Splitter, documents: Sequence[Document], phases: RunPhases) -> list[Node]:
    """``splitter.split(documents)``, one document at a time so the progress moves (a split is per document)."""
    from core.documents.bounded import split_bounded

    nodes: list[Node] = []
    phases.splitting(0, len(documents))
    for done, document in enumerate(documents, start=1):
        nodes.extend(split_bounded([document], splitter))  # a link's engine must not hold the server (core.runtime.bounded)
        phases.splitting(done, len(documents))
    return nodes


class ScopedRetriever:
    """Retrieval over one configuration's chunks, for many queries: each chunk embedded once, each BM25 index built once.

    ``leaves`` indexes only the smallest chunks of a hierarchy (what a retrieval that returns parents or
    merges searches, :mod:`core.query.hierarchy`); the parents are still returned from every chunk.
    """

    def __init__(
        self,
        nodes: Sequence[Node],
        documents: Sequence[Document],
        embedder: Embedder | None,
        mode: RetrievalMode,
        phases: RunPhases,
        *,
        leaves: bool = False,
        tokens: Callable[[Node], int] | None = None,
    ) -> None:
        from core.embed.embedder import embed_nodes

        self.every = {node.id: node for node in nodes}
        # What a chunk costs the LLM, for a context budget: counted as mean_context_tokens counts, once a chunk.
        self.tokens = tokens or _TokenCounts(embedder)
        self.nodes = leaf_nodes(nodes) if leaves else list(nodes)
        self.embedder = embedder
        self.mode = mode
        self.embeddings: np.ndarray | None = None
        if mode != "bm25" and self.nodes:
            phases.embedding(0, len(self.nodes))
            self.embeddings = embed_nodes(self.nodes, embedder, progress=phases.embedding)
        file_of = {doc.id: doc.metadata.get("file_name") for doc in documents}
        # Chunk positions by the file name of their document: a "document" scope's candidates.
        self.groups: dict[Any, list[int]] = {}
        for index, node in enumerate(self.nodes):
            self.groups.setdefault(file_of.get(node.doc_id), []).append(index)
        self._bm25: dict[Any, BM25Index] = {}

    def embed_queries(self, queries: Sequence[str]) -> None:
        """Embed the queries in batches up front (the embedder keeps them, so retrieval finds them cached)."""
        if self.mode != "bm25" and self.embedder is not None and queries:
            self.embedder.embed(list(queries))

    def retrieve(self, query: str, doc: str | None, settings: RetrievalSettings) -> list[NodeWithScore]:
        """The top chunks for ``query``: among all chunks (``doc`` None), or among the chunks of the file ``doc``.

        ``settings.mode`` must be this retriever's mode.
        """
        if doc is None:
            nodes, embeddings = self.nodes, self.embeddings
        else:
            positions = self.groups.get(doc, [])
            nodes = [self.nodes[i] for i in positions]
            embeddings = self.embeddings[positions] if self.embeddings is not None else None
        if not nodes:
            return []
        bm25 = None
        if self.mode != "dense":
            bm25 = self._bm25.get(doc)
            if bm25 is None:
                bm25 = self._bm25[doc] = BM25Index(nodes)
        return retrieve(
            nodes,
            query,
            settings,
            embedder=self.embedder,
            node_embeddings=embeddings,
            bm25=bm25,
            every=self.every,
            tokens=self.tokens,
        )


class _TokenCounts:
    """The model tokens of a chunk's LLM view (the embedder's tokenizer), each chunk counted once."""

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self.counts: dict[str, int] = {}

    def __call__(self, node: Node) -> int:
        if node.id not in self.counts:
            view = node.get_content(MetadataMode.LLM)
            self.counts[node.id] = model_counter(self.embedder).count_many([view])[0]
        return self.counts[node.id]


def over_window(nodes: Sequence[Node], embedder: Embedder | None) -> tuple[int, int]:
    """(chunks whose EMBED view has more model tokens than the window, the window in tokens).

    The window is the model's ``max_seq_length`` less its two special tokens, as
    in the chunk metrics; a view of no more UTF-8 bytes than the window cannot
    exceed it (every token covers at least one byte), so only longer ones are counted.
    """
    max_seq_length = int(getattr(embedder, "max_seq_length", 0) or DEFAULT_MAX_SEQ_LENGTH)
    window = max_seq_length - SPECIAL_TOKENS
    views = contents(nodes, MetadataMode.EMBED)
    long_views = list(dict.fromkeys(view for view in views if len(view.encode("utf-8", "surrogatepass")) > window))
    if not long_views:
        return 0, window
    counts = dict(zip(long_views, model_counter(embedder).count_many(long_views), strict=True))
    return sum(1 for view in views if counts.get(view, 0) > window), window


def model_counter(embedder: Embedder | None) -> Any:
    """The tokenizer of the embedding model: the embedder's own where its folder has one, else the packaged one."""
    from core.tokens.tokenizers import get_tokenizer

    model_path = getattr(embedder, "model_path", None)
    own = model_path and os.path.exists(os.path.join(model_path, "tokenizer.json"))
    return get_tokenizer("model", model_path if own else None)


def mean_context_tokens(contexts: Sequence[Sequence[Node]], embedder: Embedder | None) -> float:
    """Per query (one list of retrieved chunks each), the model tokens of the chunks' LLM views, averaged: what
    the LLM is sent. Each distinct view is counted once."""
    if not contexts:
        return 0.0
    views = [contents(nodes, MetadataMode.LLM) for nodes in contexts]
    unique = list(dict.fromkeys(view for query_views in views for view in query_views))
    counts = dict(zip(unique, model_counter(embedder).count_many(unique), strict=True)) if unique else {}
    return sum(sum(counts[view] for view in query_views) for query_views in views) / len(views)
