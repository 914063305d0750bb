"""LlamaIndex's node parsers as engines: the real ``llama_index.core.node_parser`` classes.

Each engine builds the node parser from its declared parameters (LlamaIndex's
defaults) and calls ``get_nodes_from_documents`` on a LlamaIndex Document holding
the document's text, metadata, excluded keys and templates, as a pipeline would:
so the sentence and token splitters leave room for the metadata exactly as
LlamaIndex does. Sizes count tokens of tiktoken's cl100k_base by default (what
LlamaIndex's global tokenizer, gpt-3.5-turbo's, is), o200k_base, characters,
words, or the embedding model's own tokens (:func:`model_tokens`).

HTMLNodeParser reads a page's markup rather than its text: it is in
:mod:`core.engines.llamaindex_html`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, ClassVar

from core.engines.base import (
    FrameworkArg,
    FrameworkSplitter,
    engine_summary,
    no_headings_reason,
)
from core.engines.chunk_nodes import FrameworkChunk
from core.errors import ConfigError, ModelUnavailableError
from core.params import param
from core.schema import Document
from core.splitters.base import check_overlap, chunk_overlap_param, chunk_size_param
from core.splitters.registry import SPLITTERS
from core.tokens.bundled_data import TIKTOKEN_ENCODINGS, tiktoken_encoding, use_bundled_nltk_data
from core.translate.framework_code import langchain_recursive, llamaindex_tiktoken
from core.translate.framework_code import llamaindex_tokenizer as llamaindex_tokenizer_code
from core.translate.snippet import Code, CodeSnippet, split_with

LLAMAINDEX = "LlamaIndex"
DISTRIBUTION = "llama-index-core"
# What LlamaIndex's sizes can count: tiktoken encodings (cl100k_base is its default), characters,
# whitespace-separated words (str.split, the words a compat mode counts), or the embedding model's tokens.
TOKENIZERS = (*TIKTOKEN_ENCODINGS, "characters", "words", "model")
TOKENIZER_HELP = (
    "What sizes count: tiktoken's cl100k_base (LlamaIndex's default, gpt-3.5-turbo's), o200k_base, characters, "
    "whitespace-separated words, or the embedding model's own tokens (the packaged all-MiniLM-L6-v2's, "
    "as tokenizer=model counts them)."
)
OWN_TOKENIZER = (
    "LlamaIndex's default is its global tokenizer, tiktoken's cl100k_base; named here so a config says which."
)


@lru_cache(maxsize=1)
def model_tokens() -> Callable[[str], list[str]]:
    """The embedding model's tokens of a text, as an exported script takes them: ``tokenize`` of transformers'
    AutoTokenizer for the packaged all-MiniLM-L6-v2 (:func:`core.translate.framework_code.model_tokenizer` writes that line).

    No special tokens and BERT's own normalisation: as many tokens as ChunkScope's ``model`` tokenizer counts
    (tests/test_compat_model.py holds the two equal on accents, CJK, emoji, ``[CLS]`` written in the text and
    words too long for WordPiece). Read from the installed package's folder, never downloaded.
    """
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:  # pragma: no cover - a dependency of sentence-transformers
        raise ModelUnavailableError("the 'transformers' package is not installed") from exc
    from core.tokens.tokenizers import default_model_path

    tokenizer = AutoTokenizer.from_pretrained(default_model_path(), local_files_only=True)
    # The first call turns off the truncation and padding tokenizer.json sets, a change to the Rust tokenizer:
    # made here, once, so that no thread changes it while another encodes ("Already borrowed").
    tokenizer.tokenize("")
    return tokenizer.tokenize


def llamaindex_tokenizer(name: str) -> Callable[[str], list[Any]]:
    """The ``tokenizer`` LlamaIndex counts with: as its own ``get_tokenizer`` builds it, ``list`` for characters,
    ``str.split`` for words, the embedding model's ``tokenize`` for its tokens."""
    if name == "characters":
        return list
    if name == "words":
        return str.split
    if name == "model":
        return model_tokens()
    return partial(tiktoken_encoding(name).encode, allowed_special="all")


@dataclass(frozen=True)
class TokenizerArg(FrameworkArg):
    """The ``tokenizer=`` LlamaIndex counts with: ``list`` for characters, ``str.split`` for words, the embedding
    model's ``tokenize`` for its tokens, else a tiktoken encoding's ``encode``."""

    name: str

    def value(self) -> Callable[[str], list[Any]]:
        return llamaindex_tokenizer(self.name)

    def code(self, code: CodeSnippet) -> Code:
        if self.name in ("characters", "words", "model"):  # ChunkScope's own names for these units
            return llamaindex_tokenizer_code(code, self.name)
        return llamaindex_tiktoken(code, self.name)


def llama_document(document: Document, text: str | None = None) -> Any:
    """The LlamaIndex Document a pipeline would hold for ``document`` (same text, metadata, views and id).

    ``text`` replaces the document's text where the parser reads something else (an HTML page's markup).
    """
    from llama_index.core.schema import Document as LlamaDocument

    return LlamaDocument(
        text=document.text if text is None else text,
        id_=document.id,
        metadata=dict(document.metadata),
        excluded_llm_metadata_keys=list(document.excluded_llm_metadata_keys),
        excluded_embed_metadata_keys=list(document.excluded_embed_metadata_keys),
        metadata_template=document.metadata_template,
        metadata_separator=document.metadata_separator,
        text_template=document.text_template,
    )


@dataclass(frozen=True)
class LlamaIndexEngine(FrameworkSplitter):
    """A LlamaIndex node parser: ``get_nodes_from_documents`` once per document."""

    framework: ClassVar[str] = LLAMAINDEX
    distribution: ClassVar[str] = DISTRIBUTION

    def node_parser(self) -> Any:
        """The configured LlamaIndex node parser (built once per configuration)."""
        return _node_parser(self)

    def prepare(self) -> None:
        super().prepare()
        _framework_data()

    def chunks(self, document: Document) -> list[FrameworkChunk]:
        parser = self.node_parser()
        try:
            nodes = parser.get_nodes_from_documents([llama_document(document, self.source_text(document))])
        except Exception as exc:  # e.g. "Metadata length (...) is longer than chunk size (...)"
            raise self.failed(exc) from exc
        return chunks_from_nodes(nodes, document)

    @property
    def counts_characters(self) -> bool:
        return getattr(self, "tokenizer", None) == "characters"

    @property
    def size_limit(self) -> int | None:
        return getattr(self, "chunk_size", None) if self.counts_characters else None


def link_kwargs(engine: FrameworkSplitter) -> dict[str, bool]:
    """include_metadata / include_prev_next_rel where they differ from LlamaIndex's defaults (both True)."""
    return {key: False for key in ("include_metadata", "include_prev_next_rel") if not getattr(engine, key)}


@lru_cache(maxsize=32)
def _node_parser(engine: LlamaIndexEngine) -> Any:
    _framework_data()
    return engine.build_framework()


def _framework_data() -> None:
    """NLTK's bundled data on its path (importing NLTK: ~3 s on a busy machine), and LlamaIndex's global
    tokenizer (what a parser given none counts with) loaded from the bundled file, not fetched."""
    use_bundled_nltk_data()
    tiktoken_encoding("cl100k_base")


def chunks_from_nodes(nodes: list[Any], document: Document) -> list[FrameworkChunk]:
    """LlamaIndex nodes as chunks: their text, the metadata they add, their hidden keys and their parents."""
    from llama_index.core.schema import NodeRelationship as LlamaRelationship

    index = {node.node_id: i for i, node in enumerate(nodes)}
    inherited = document.metadata
    chunks = []
    for node in nodes:
        parent_info = node.relationships.get(LlamaRelationship.PARENT)
        parent = index.get(parent_info.node_id) if parent_info is not None else None
        added = {key: value for key, value in node.metadata.items() if key not in inherited or inherited[key] != value}
        chunks.append(
            FrameworkChunk(
                text=node.get_content(),
                metadata=added,
                excluded_llm_metadata_keys=tuple(node.excluded_llm_metadata_keys),
                excluded_embed_metadata_keys=tuple(node.excluded_embed_metadata_keys),
                parent=parent,
            )
        )
    return chunks


_DEFAULT_SECONDARY_REGEX = "[^,.;。？！]+[,.;。？！]?|[,.;。？！]"


@SPLITTERS.register
@dataclass(frozen=True)
class LlamaIndexSentenceSplitter(LlamaIndexEngine):
    """LlamaIndex's SentenceSplitter: paragraphs, then sentences (punkt), then words, packed to chunk_size tokens."""

    name = "llamaindex.sentence"
    framework_class = "SentenceSplitter"
    summary = engine_summary(LLAMAINDEX, DISTRIBUTION, "SentenceSplitter: chunks of whole sentences where they fit.")
    defaults_from = "llama_index.core.node_parser:SentenceSplitter.__init__"
    own_params = {"tokenizer": OWN_TOKENIZER}

    chunk_size: int = chunk_size_param(1024, "Largest chunk, in tokens (less the metadata's length).")
    chunk_overlap: int = chunk_overlap_param(200, "Tokens consecutive chunks share; below chunk_size.")
    tokenizer: str = param("cl100k_base", TOKENIZER_HELP, choices=TOKENIZERS)
    separator: str = param(" ", "Where words are split when a sentence is too long.", advanced=True)
    paragraph_separator: str = param("\n\n\n", "Where paragraphs are split first.", advanced=True)
    secondary_chunking_regex: str = param(
        _DEFAULT_SECONDARY_REGEX,
        "The backup split for a sentence too long for a chunk (a regular expression: at most 200 characters, "
        "no nested quantifiers).",
        advanced=True,
        regex=True,
    )

    def validate(self) -> None:
        check_overlap(self)

    @property
    def covers_text(self) -> bool:
        # LlamaIndex keeps only what secondary_chunking_regex matches (re.findall): the default matches every
        # character, a regex of the user's may drop some, and the engine shows that as LlamaIndex does.
        return self.secondary_chunking_regex == _DEFAULT_SECONDARY_REGEX

    def langchain_stand_in(self, code: CodeSnippet) -> str:
        """RecursiveCharacterTextSplitter at the same size, overlap and unit, cutting at paragraphs, lines,
        sentence ends and words, as SentenceSplitter prefers."""
        self.stand_in_note(
            code,
            "LangChain",
            "RecursiveCharacterTextSplitter",
            self.chunk_size,
            self.chunk_overlap,
            carries=("separator", "paragraph_separator"),
        )
        separators = list(dict.fromkeys([self.paragraph_separator, "\n", ". ", "? ", "! ", self.separator, ""]))
        splitter = langchain_recursive(
            code, self.chunk_size, self.chunk_overlap, self.size_unit, separators=separators, keep_separator="end"
        )
        return split_with(splitter)

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "tokenizer": TokenizerArg(self.tokenizer),
            "separator": self.separator,
            "paragraph_separator": self.paragraph_separator,
            "secondary_chunking_regex": self.secondary_chunking_regex,
            **link_kwargs(self),
        }


@SPLITTERS.register
@dataclass(frozen=True)
class LlamaIndexTokenSplitter(LlamaIndexEngine):
    """LlamaIndex's TokenTextSplitter: whole words (split at spaces, then newlines) packed to chunk_size tokens."""

    name = "llamaindex.token"
    framework_class = "TokenTextSplitter"
    summary = engine_summary(LLAMAINDEX, DISTRIBUTION, "TokenTextSplitter: words packed to a token budget.")
    defaults_from = "llama_index.core.node_parser:TokenTextSplitter.__init__"
    own_params = {"tokenizer": OWN_TOKENIZER}

    chunk_size: int = chunk_size_param(1024, "Largest chunk, in tokens (less the metadata's length).")
    chunk_overlap: int = chunk_overlap_param(20, "Tokens consecutive chunks share; below chunk_size.")
    tokenizer: str = param("cl100k_base", TOKENIZER_HELP, choices=TOKENIZERS)
    separator: str = param(" ", "Where words are split first.", advanced=True)
    backup_separators: tuple[str, ...] = param(("\n",), "Where a piece still too long is split next.", advanced=True)
    keep_whitespaces: bool = param(False, "Keep whitespace at the ends of chunks.", advanced=True)

    def validate(self) -> None:
        check_overlap(self)

    def langchain_stand_in(self, code: CodeSnippet) -> str:
        """RecursiveCharacterTextSplitter at the same size, overlap and unit, cutting at the same separators."""
        self.stand_in_note(
            code,
            "LangChain",
            "RecursiveCharacterTextSplitter",
            self.chunk_size,
            self.chunk_overlap,
            carries=("separator", "backup_separators"),
        )
        separators = list(dict.fromkeys([self.separator, *self.backup_separators, ""]))
        splitter = langchain_recursive(code, self.chunk_size, self.chunk_overlap, self.size_unit, separators=separators)
        return split_with(splitter)

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "tokenizer": TokenizerArg(self.tokenizer),
            "separator": self.separator,
            "backup_separators": list(self.backup_separators),
            "keep_whitespaces": self.keep_whitespaces,
            **link_kwargs(self),
        }


@SPLITTERS.register
@dataclass(frozen=True)
class LlamaIndexSentenceWindowSplitter(LlamaIndexEngine):
    """LlamaIndex's SentenceWindowNodeParser: one node per sentence, the sentences around it in metadata."""

    name = "llamaindex.sentence_window"
    framework_class = "SentenceWindowNodeParser"
    summary = engine_summary(
        LLAMAINDEX, DISTRIBUTION, "SentenceWindowNodeParser: one node per sentence, its window in metadata."
    )
    defaults_from = "llama_index.core.node_parser:SentenceWindowNodeParser.from_defaults"
    has_windows: ClassVar[bool] = True

    window_size: int = param(3, "Sentences on each side of a node's sentence that its window holds.", ge=1, le=100)
    window_metadata_key: str = param("window", "Metadata key for the window text.", advanced=True)
    original_text_metadata_key: str = param("original_text", "Metadata key for the node's own sentence.", advanced=True)

    def validate(self) -> None:
        for key in ("window_metadata_key", "original_text_metadata_key"):
            if not getattr(self, key).strip():
                raise ConfigError(f"{self.name}: {key} must not be empty")

    def langchain_stand_in(self, code: CodeSnippet) -> str:
        """ChunkScope's sentence-window function for LangChain, with the same window and metadata keys."""
        self.stand_in_note(
            code,
            "LangChain",
            "the sentence_windows() function below (same window and keys)",
            carries=("window_size", "window_metadata_key", "original_text_metadata_key"),
        )
        native = SPLITTERS.create(
            "sentence_window",
            window_size=self.window_size,
            window_metadata_key=self.window_metadata_key,
            original_text_metadata_key=self.original_text_metadata_key,
        )
        return native.langchain(code)

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "window_size": self.window_size,
            "window_metadata_key": self.window_metadata_key,
            "original_text_metadata_key": self.original_text_metadata_key,
            **link_kwargs(self),
        }


@SPLITTERS.register
@dataclass(frozen=True)
class LlamaIndexMarkdownSplitter(LlamaIndexEngine):
    """LlamaIndex's MarkdownNodeParser: one node per heading's section, the header path in metadata."""

    name = "llamaindex.markdown"
    framework_class = "MarkdownNodeParser"
    summary = engine_summary(LLAMAINDEX, DISTRIBUTION, "MarkdownNodeParser: one node per section, its header path.")
    defaults_from = "llama_index.core.node_parser:MarkdownNodeParser.from_defaults"

    header_path_separator: str = param("/", "What joins the headings of a node's header_path.", advanced=True)

    def validate(self) -> None:
        if not self.header_path_separator:
            raise ConfigError(f"{self.name}: header_path_separator must not be empty")

    def unsuited_reason(self, document: Document) -> str | None:
        # MarkdownNodeParser's own test for a heading line (outside code fences, which this ignores).
        return None if re.search(r"(?m)^#+\s", document.text) else no_headings_reason(self, document)

    def langchain_stand_in(self, code: CodeSnippet) -> str:
        """LangChain's MarkdownHeaderTextSplitter at all six levels, header lines kept: a chunk per section too."""
        self.stand_in_note(code, "LangChain", "MarkdownHeaderTextSplitter (headers in metadata, not a header path)")
        return SPLITTERS.create("markdown", heading_level=6).langchain(code)

    def framework_kwargs(self) -> dict[str, Any]:
        return {"header_path_separator": self.header_path_separator, **link_kwargs(self)}
