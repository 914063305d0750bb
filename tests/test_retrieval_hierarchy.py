"""Retrieve small, read large: parents and auto-merging over hierarchical chunks, and reciprocal rank fusion.

Each rule is checked against the framework it is read from, on the same chunks and scores:
LlamaIndex's AutoMergingRetriever and LangChain's EnsembleRetriever.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.config_parts import RetrievalSettings
from core.query.hierarchy import lift, searched
from core.query.retrieval import RRF_K, reciprocal_rank_fusion, retrieve
from core.schema import Document, NodeRelationship, NodeWithScore
from core.splitters import get_splitter

TEXT = " ".join(f"Sentence {i} is about topic {i % 7} and the word w{i}." for i in range(160))


@pytest.fixture(scope="module")
def hierarchy():
    document = Document(text=TEXT, metadata={"file_name": "h.txt"})
    return get_splitter("hierarchical", chunk_sizes=(256, 64, 16), chunk_overlap=0).split([document])


def leaves_of(nodes):
    return [nodes[i] for i in searched(nodes, RetrievalSettings(returns="parents"))]


def test_only_the_leaves_are_searched_when_parents_or_merges_are_returned(hierarchy):
    leaves = leaves_of(hierarchy)
    assert leaves and all(NodeRelationship.CHILD not in node.relationships for node in leaves)
    assert len(searched(hierarchy, RetrievalSettings(returns="chunks"))) == len(hierarchy)  # chunks: every level
    plain = get_splitter("sentence", chunk_size=64, chunk_overlap=0).split([Document(text=TEXT)])
    assert searched(plain, RetrievalSettings(returns="parents")) == list(range(len(plain)))  # no hierarchy


def test_parents_are_the_top_level_chunks_of_the_leaves_each_once_in_the_order_of_its_best_leaf(hierarchy):
    every = {node.id: node for node in hierarchy}
    leaves = leaves_of(hierarchy)
    roots = [node for node in hierarchy if NodeRelationship.PARENT not in node.relationships]
    found = [NodeWithScore(leaves[i], score=1.0 - i / 100) for i in (0, len(leaves) - 1, 1)]
    lifted = lift(found, every, RetrievalSettings(returns="parents"))
    assert [item.node.id for item in lifted] == [roots[0].id, roots[-1].id]
    assert [item.score for item in lifted] == [found[0].score, found[1].score]
    for leaf, parent in (
        (found[0].node, lifted[0].node),
        (found[2].node, lifted[0].node),
        (found[1].node, lifted[1].node),
    ):
        assert parent.start_char <= leaf.start_char < leaf.end_char <= parent.end_char  # a parent holds its leaves


def _chars(node):  # a cost that is easy to reason about in the examples below
    return len(node.text)


def test_a_context_budget_keeps_parents_while_they_fit_then_leaves(hierarchy):
    every = {node.id: node for node in hierarchy}
    leaves = leaves_of(hierarchy)
    roots = [node for node in hierarchy if NodeRelationship.PARENT not in node.relationships]
    last = [leaf for leaf in leaves if leaf.start_char >= roots[-1].start_char]
    # Best first: a leaf of the first parent, one of the last, another of the first parent, a second of the last.
    found = [NodeWithScore(leaf, score=1.0 - i / 10) for i, leaf in enumerate((leaves[0], last[0], leaves[1], last[1]))]
    room = len(roots[0].text) + len(last[0].text) + len(last[1].text)
    lifted = lift(found, every, RetrievalSettings(returns="parents", context_budget=room), tokens=_chars)
    # The first parent fits; the last one does not, so its leaves come as they are; the third leaf is inside
    # the first parent already.
    assert [item.node.id for item in lifted] == [roots[0].id, last[0].id, last[1].id]
    assert [item.score for item in lifted] == [found[0].score, found[1].score, found[3].score]
    # Room for neither the parent nor the leaf: nothing more is returned, but the best leaf always is.
    lifted = lift(found, every, RetrievalSettings(returns="parents", context_budget=len(roots[0].text)), tokens=_chars)
    assert [item.node.id for item in lifted] == [roots[0].id]
    lifted = lift(found, every, RetrievalSettings(returns="parents", context_budget=1), tokens=_chars)
    assert [item.node.id for item in lifted] == [leaves[0].id]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), top_k=st.integers(1, 24), budget=st.integers(1, 6000))
def test_a_context_budget_bounds_what_is_read_and_returns_no_chunk_inside_another(hierarchy, seed, top_k, budget):
    every = {node.id: node for node in hierarchy}
    leaves = leaves_of(hierarchy)
    picked = random.Random(seed).sample(leaves, min(top_k, len(leaves)))
    found = [NodeWithScore(node, score=1.0 - i / 100) for i, node in enumerate(picked)]
    lifted = lift(found, every, RetrievalSettings(returns="parents", context_budget=budget), tokens=_chars)
    assert lifted and (sum(_chars(item.node) for item in lifted) <= budget or len(lifted) == 1)
    assert lifted[0].node.id in {found[0].node.id} | {item.node.id for item in lift(found[:1], every, RetrievalSettings(returns="parents", context_budget=0))}
    spans = [(item.node.start_char, item.node.end_char) for item in lifted]
    for i, (start, end) in enumerate(spans):
        assert not any(a <= start and end <= b for j, (a, b) in enumerate(spans) if j != i)  # none inside another
    assert [item.score for item in lifted] == sorted((item.score for item in lifted), reverse=True)
    unbounded = lift(found, every, RetrievalSettings(returns="parents", context_budget=0))
    if budget >= sum(_chars(item.node) for item in unbounded):
        assert [item.node.id for item in lifted] == [item.node.id for item in unbounded]  # room for every parent


def _llamaindex_auto_merge(nodes, found, ratio):
    """LlamaIndex's AutoMergingRetriever over the same chunks, its vector retriever returning ``found``."""
    from llama_index.core import StorageContext
    from llama_index.core.retrievers import AutoMergingRetriever
    from llama_index.core.retrievers import BaseRetriever as LlamaRetriever
    from llama_index.core.schema import NodeRelationship as Rel
    from llama_index.core.schema import NodeWithScore as LlamaScored
    from llama_index.core.schema import RelatedNodeInfo, TextNode
    from llama_index.core.storage.docstore import SimpleDocumentStore

    kinds = {
        NodeRelationship.PARENT: Rel.PARENT,
        NodeRelationship.PREVIOUS: Rel.PREVIOUS,
        NodeRelationship.NEXT: Rel.NEXT,
    }
    theirs = {}
    for node in nodes:
        links = {kinds[k]: RelatedNodeInfo(node_id=v) for k, v in node.relationships.items() if k in kinds}
        children = node.relationships.get(NodeRelationship.CHILD)
        if children:
            links[Rel.CHILD] = [RelatedNodeInfo(node_id=child) for child in children]
        theirs[node.id] = TextNode(id_=node.id, text=node.text, relationships=links)
    docstore = SimpleDocumentStore()
    docstore.add_documents(list(theirs.values()))

    class Fixed(LlamaRetriever):
        def _retrieve(self, query_bundle):
            return [LlamaScored(node=theirs[item.node.id], score=item.score) for item in found]

    merging = AutoMergingRetriever(Fixed(), StorageContext.from_defaults(docstore=docstore), simple_ratio_thresh=ratio)
    return [(item.node.node_id, item.score) for item in merging.retrieve("q")]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), top_k=st.integers(1, 24), ratio=st.sampled_from([0.0, 0.25, 0.5, 0.75]))
def test_merged_is_llamaindex_auto_merging_retriever_on_the_same_chunks_and_scores(hierarchy, seed, top_k, ratio):
    every = {node.id: node for node in hierarchy}
    leaves = leaves_of(hierarchy)
    rng = random.Random(seed)
    picked = rng.sample(leaves, min(top_k, len(leaves)))
    scores = sorted((rng.random() for _ in picked), reverse=True)
    found = [NodeWithScore(node, score=score) for node, score in zip(picked, scores, strict=True)]
    ours = lift(found, every, RetrievalSettings(returns="merged", merge_ratio=ratio))
    theirs = _llamaindex_auto_merge(hierarchy, found, ratio)
    assert [item.node.id for item in ours] == [node_id for node_id, _ in theirs]
    assert [item.score for item in ours] == pytest.approx([score for _, score in theirs])


def test_retrieve_searches_leaves_and_returns_parents(hierarchy):
    class Ones:
        def embed(self, texts, progress=None):
            return np.stack([self.embed_query(text) for text in texts])

        def embed_query(self, text):
            vector = np.array([text.count("w3."), text.count("topic 1"), 1.0], dtype=np.float32)
            return vector / np.linalg.norm(vector)

    settings_ = RetrievalSettings(top_k=3, mode="bm25", returns="parents")
    found = retrieve(hierarchy, "w37", settings_, embedder=Ones())
    assert found and all(NodeRelationship.PARENT not in item.node.relationships for item in found)
    assert "w37." in found[0].node.text
    assert len({item.node.id for item in found}) == len(found) <= 3


def _langchain_fused(first, second, weights, depth):
    """The order LangChain's EnsembleRetriever gives two retrievers that return the top ``depth`` of each list."""
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_core.documents import Document as LangDocument
    from langchain_core.retrievers import BaseRetriever as LangRetriever

    class Ranked(LangRetriever):
        scores: list[float]

        def _get_relevant_documents(self, query, *, run_manager):
            order = np.argsort(-np.asarray(self.scores), kind="stable")[:depth]
            return [LangDocument(page_content=str(i), metadata={"i": int(i)}) for i in order]

    ensemble = EnsembleRetriever(retrievers=[Ranked(scores=first), Ranked(scores=second)], weights=weights, id_key="i")
    return [doc.metadata["i"] for doc in ensemble.invoke("q")]


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(1, 30),
    depth=st.integers(1, 10),
    alpha=st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]),
    seed=st.integers(0, 1000),
)
def test_reciprocal_rank_fusion_is_langchains_ensemble_retriever(size, depth, alpha, seed):
    rng = np.random.default_rng(seed)
    dense, bm25 = rng.random(size), rng.random(size)
    fused = reciprocal_rank_fusion([dense, bm25], [alpha, 1 - alpha], depth)
    theirs = _langchain_fused(list(dense), list(bm25), [alpha, 1 - alpha], depth)
    # The nodes LangChain returns, in its order, are ours by fused score (none of ours outside it scores).
    assert set(np.flatnonzero(fused > 0)) <= set(theirs)
    assert [fused[i] for i in theirs] == sorted((fused[i] for i in theirs), reverse=True)


def test_reciprocal_rank_fusion_literal_example():
    dense = np.array([0.9, 0.1, 0.5])  # ranks 1, 3, 2
    bm25 = np.array([0.0, 2.0, 1.0])  # ranks 3, 1, 2
    fused = reciprocal_rank_fusion([dense, bm25], [0.5, 0.5], depth=2)
    assert fused == pytest.approx([0.5 / (RRF_K + 1), 0.5 / (RRF_K + 1), 0.5 / (RRF_K + 2) * 2])
