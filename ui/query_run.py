"""Running the Query page's query: split (cached), embed with a progress bar, retrieve, run the chain.

Embedding is the one slow step, so it reports its progress and the time left;
everything else is quick once the vectors are at hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import streamlit as st

from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.errors import ChunkScopeError
from core.postprocessors import Postprocessor
from core.query.chain import QueryResult, chain_needs_embedder, final_context, run_query
from core.query.hierarchy import searched
from core.schema import Document, MetadataMode, Node, contents
from ui import cache, state, widgets


class TimeLeft:
    """Seconds left in an embedding run, from its pace since the first progress report.

    The first report may count texts found in the cache, which cost nothing, so
    the pace is taken between reports of batches the model encoded.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._first: tuple[float, int] | None = None

    def __call__(self, done: int, total: int) -> float | None:
        now = self._clock()
        if self._first is None:
            self._first = (now, done)
            return None
        started, done_then = self._first
        if done <= done_then or now <= started:
            return None
        return (total - done) * (now - started) / (done - done_then)


def progress_text(label: str, done: int, total: int, seconds_left: float | None) -> str:
    """The progress bar's line: what is embedded with what, how far, and (once known) about how long is left."""
    text = f"Embedding the nodes with {label}… {done:,} of {total:,}"
    if seconds_left is None:
        return text + (" · estimating the time left" if done < total else "")
    if seconds_left < 1:
        return text + " · less than a second left"
    minutes, seconds = divmod(round(seconds_left), 60)
    return text + f" · about {f'{minutes} min ' if minutes else ''}{seconds} s left"


def node_embeddings(nodes: Sequence[Node], embedder: Any) -> np.ndarray:
    """Every node's EMBED view embedded, with a progress bar and the time left while the model works.

    The embedder caches vectors by (model, text hash), in memory and on disk, so
    only texts it has never seen are encoded: a parameter change embeds only the
    chunks that changed, and a restarted app embeds nothing it did before.
    """
    texts = contents(nodes, MetadataMode.EMBED)
    label = embedder.model_name
    bar = st.empty()
    time_left = TimeLeft()

    def report(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=progress_text(label, done, total, time_left(done, total)))

    bar.progress(0.0, text=progress_text(label, 0, len(texts), None))
    vectors = embedder.embed(texts, progress=report)
    bar.empty()
    return vectors


def run(
    nodes: Sequence[Node],
    query: str,
    chain: Sequence[Postprocessor],
    retrieval: RetrievalSettings,
    *,
    embedder: Any,
    embeddings: np.ndarray | None,
    every: Sequence[Node] = (),
) -> QueryResult:
    """``core.query.chain.run_query`` with the page's embedder and precomputed node embeddings.

    ``nodes`` are the chunks searched; ``every`` the whole split a hierarchy's parents are returned from.
    Not cached by Streamlit: with the vectors at hand it is quick, and the nodes'
    views (which the Metadata page changes) would all have to be part of a key.
    """
    return run_query(
        list(nodes),
        query,
        retrieval,
        embedder=embedder,
        postprocessors=list(chain),
        node_embeddings=embeddings,
        every={node.id: node for node in every or nodes},
    )


def run_or_stop(
    documents: Sequence[Document], config: PipelineConfig, query: str
) -> tuple[list[Node], list[Node], QueryResult]:
    """Split the documents (cached), retrieve and run the chain; on a failure or no nodes, say so and end the run.

    Returns every node of the split, the nodes searched (a hierarchy's leaves, unless retrieval returns its
    chunks) and the result.
    """
    retrieval, chain = config.retrieval, config.postprocessors
    try:
        with st.spinner("Splitting…"):
            split = list(cache.run_split_cached(documents, config))
            # A hierarchy retrieved for its parents (or merged) searches its leaves (core.query.hierarchy).
            nodes = [split[i] for i in searched(split, retrieval)]
        if not nodes:
            st.warning("The current splitter made no nodes from the loaded documents.", icon=":material/warning:")
            st.stop()
        needs_model = chain_needs_embedder(retrieval.mode, chain)
        # While the model loads and embeds, the page says what it already knows instead of staying blank.
        pending = st.empty()
        with pending.container():
            pending_caption(config, len(nodes), len(documents))
            embedder = cache.embedder() if needs_model else None
            embeddings = node_embeddings(nodes, embedder) if retrieval.mode != "bm25" else None
        pending.empty()
        result = run(nodes, query, chain, retrieval, embedder=embedder, embeddings=embeddings, every=split)
    except ChunkScopeError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()
    state.set_last_query(result, config)
    return split, nodes, result


def pending_caption(config: PipelineConfig, node_count: int, document_count: int) -> None:
    """What is known before retrieval: the nodes to search, from how many documents, split how."""
    st.caption(
        f"Searching **{node_count:,} nodes** from {document_count} documents, "
        f"split by **{config.splitter.title()}** · retrieval **{config.retrieval.mode}**"
        + (" · embedding the nodes first" if config.retrieval.mode != "bm25" else "")
    )


def context_with_tokens(result: QueryResult) -> tuple[str, int]:
    """The final context the LLM reads, and its length counted with the embedding model's tokenizer."""
    context = final_context(result.final)
    return context, cache.count_tokens((context,), "model")[0]
