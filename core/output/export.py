"""Export: the scripts that rebuild a configuration with LlamaIndex or LangChain.

The snippets are runnable Python that rebuild the configuration with the real
classes of those libraries (names and constructor parameters checked against
their sources). Where a library has no exact equivalent, the snippet says so in
its header and uses the closest thing. Each component writes its own part (its
``llamaindex``/``langchain`` methods, built with :mod:`core.translate.snippet`); this module
adds the reading of documents (:mod:`core.output.export_script`), the metadata views and retrieval
(:mod:`core.output.export_retrieval`) around them. The node files are :mod:`core.output.node_files`.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.config import PipelineConfig
from core.extractors.llm import llm_extractors
from core.loaders.readers.script import framework_suffixes
from core.loaders.text import LOAD_DETAIL_KEYS
from core.output.export_llm import llm_note_langchain, llm_step_llamaindex
from core.output.export_metadata import embed_allow_list, section_step_langchain, section_step_llamaindex
from core.output.export_own_split import (
    HIERARCHY_KEYS,
    OWN_NODES_LLAMAINDEX,
    own_chunks_langchain,
    own_split_applies,
    own_split_functions,
)
from core.output.export_retrieval import RETRIEVAL_PACKAGES, retrieval_langchain, retrieval_llamaindex, searches_leaves
from core.output.export_script import main_block, reading_code, retrieval_section
from core.output.splitter_code import splitter_code
from core.translate.snippet import Code, CodeSnippet, call, comment, literal

# What a script's split needs: the framework, in the versions the tests ran its scripts against (pyproject's range).
FRAMEWORK_REQUIREMENTS = {
    "LlamaIndex": "llama-index-core>=0.14.25,<0.15",
    "LangChain": "langchain-text-splitters>=1.1.3,<1.2",
}


def llamaindex_snippet(config: PipelineConfig, paths: str | Sequence[str] = "sample_docs") -> str:
    """Python that rebuilds ``config`` with LlamaIndex: the app's nodes from the files at ``paths``, in ``nodes``."""
    snippet = CodeSnippet("LlamaIndex", f"pip install {FRAMEWORK_REQUIREMENTS['LlamaIndex']!r}")
    reading_code(snippet, config, paths)
    _metadata_llamaindex(snippet, config)
    _extractor_notes(snippet, config, llamaindex=True)
    _section_note(snippet, config)
    own = own_split_applies(config.splitter, snippet.library, framework_suffixes(config))
    if own:
        own_split_functions(snippet, config)
    snippet.add(f"node_parser = {splitter_code(config.splitter, snippet)}")
    snippet.add(OWN_NODES_LLAMAINDEX if own else "nodes = node_parser.get_nodes_from_documents(documents)")
    asks_llm = bool(llm_extractors(config.extractors))
    # The allow list comes after the LLM extractors' keys, as in core.documents.finish_nodes.
    section_step_llamaindex(snippet, config.metadata, allow_list=not asks_llm)
    llm_step_llamaindex(snippet, config)
    if searches_leaves(config):
        snippet.use("from llama_index.core.node_parser import get_leaf_nodes")
        snippet.add("leaf_nodes = get_leaf_nodes(nodes)  # the smallest level is searched, its parents returned")
    retrieval_section(snippet, config, retrieval_llamaindex, RETRIEVAL_PACKAGES["LlamaIndex"])
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
    if settings.embed_metadata_keys is not None:
        lines.append("    document.excluded_embed_metadata_keys = embed_hidden(document)")
    allow_list = embed_allow_list(snippet, settings)
    snippet.add(
        (f"{allow_list}\n\n\n" if allow_list else "")
        + "# Metadata and how each reader sees it; nodes inherit all of this from their document.\n"
        "for document in documents:\n" + "\n".join(lines)
    )


def _section_note(snippet: CodeSnippet, config: PipelineConfig) -> None:
    if config.metadata.section_metadata != "off":
        snippet.note(
            "section paths come from the headings ChunkScope's loaders find: read without ChunkScope (or with "
            "a framework's reader), no node gets one."
        )


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
    llm_note_langchain(snippet, config)
    _section_note(snippet, config)
    if own_split_applies(config.splitter, snippet.library, framework_suffixes(config)):
        own_split_functions(snippet, config)
        translation = splitter_code(config.splitter, snippet)
        snippet.add(own_chunks_langchain(config, translation, snippet.take_call_notes()))
    else:
        snippet.add(splitter_code(config.splitter, snippet))
    section_step_langchain(snippet, settings, levels=config.splitter.has_levels)
    _views_langchain(snippet, config)
    retrieval_section(snippet, config, retrieval_langchain, RETRIEVAL_PACKAGES["LangChain"])
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
    # What the splitter's nodes keep out of both views (a window), and a hierarchy's parent place, kept for
    # retrieve() to walk up: no reader sees them in the app.
    unseen = [*config.splitter.view_hidden_keys, *(HIERARCHY_KEYS if config.splitter.has_levels else ())]
    llm_excluded, embed_excluded = [*llm_excluded, *unseen], [*embed_excluded, *unseen]
    if settings.section_metadata == "embed":  # the section path is for the embedding model only
        llm_excluded = [*llm_excluded, "section"]
    allow_list = embed_allow_list(snippet, settings)
    snippet.add(
        "\n".join(
            [
                "",
                f"METADATA_TEMPLATE = {literal(settings.metadata_template)}",
                f"METADATA_SEPARATOR = {literal(settings.metadata_separator)}",
                f"TEXT_TEMPLATE = {literal(settings.text_template)}",
                f"EXCLUDED_LLM_METADATA_KEYS = {literal(llm_excluded)}",
                f"EXCLUDED_EMBED_METADATA_KEYS = {literal(embed_excluded)}",
                *([allow_list] if allow_list else []),
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
                *(
                    [
                        "    not_allowed = [key for key in chunk.metadata if key not in EMBED_METADATA_KEYS]",
                        "    return _view(chunk, EXCLUDED_EMBED_METADATA_KEYS + not_allowed)",
                    ]
                    if allow_list
                    else ["    return _view(chunk, EXCLUDED_EMBED_METADATA_KEYS)"]
                ),
            ]
        )
    )


def _extractor_notes(snippet: CodeSnippet, config: PipelineConfig, *, llamaindex: bool) -> None:
    # The LLM extractors are LlamaIndex's own, run after the split (core.output.export_llm).
    offline = [extractor for extractor in config.extractors if not extractor.node_level]
    if not offline:
        return
    names = ", ".join(extractor.name for extractor in offline)
    keys = ", ".join(key for extractor in offline for key in extractor.keys)
    if llamaindex:
        snippet.note(
            f"extractors ({names}): read_documents() adds {keys} with ChunkScope's offline extractors when "
            "ChunkScope is installed; without it the keys are missing and metadata-aware splits cut elsewhere. "
            "LlamaIndex's TitleExtractor, KeywordExtractor and SummaryExtractor write the same keys but call an "
            "LLM (commented out below)."
        )
        calls = [code for code in (extractor.llamaindex() for extractor in offline) if code is not None]
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
