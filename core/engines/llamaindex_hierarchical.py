"""LlamaIndex's HierarchicalNodeParser as an engine: SentenceSplitters at several sizes, children under parents.

Apart from the other LlamaIndex engines (:mod:`core.engines.llamaindex`, whose
plumbing it shares) because a hierarchy is built from a map of level parsers,
which the exported code must write out when the tokenizer is not LlamaIndex's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from core.engines.base import FrameworkArg, code_values, engine_summary, run_values
from core.engines.chunk_nodes import FrameworkChunk
from core.engines.llamaindex import (
    DISTRIBUTION,
    LLAMAINDEX,
    OWN_TOKENIZER,
    TOKENIZER_HELP,
    TOKENIZERS,
    LlamaIndexEngine,
    TokenizerArg,
    link_kwargs,
)
from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.base import chunk_overlap_param
from core.splitters.hierarchical import HierarchicalSplitter, check_levels
from core.splitters.registry import SPLITTERS
from core.translate.snippet import Code, CodeSnippet, call, literal


@SPLITTERS.register
@dataclass(frozen=True)
class LlamaIndexHierarchicalSplitter(LlamaIndexEngine):
    """LlamaIndex's HierarchicalNodeParser: SentenceSplitters at several sizes, children linked to parents.

    Every level is returned, roots first; a node's ``level`` (0 = roots) is added
    for the pages' tree and hidden from both readers.
    """

    name = "llamaindex.hierarchical"
    framework_class = "HierarchicalNodeParser"
    summary = engine_summary(
        LLAMAINDEX, DISTRIBUTION, "HierarchicalNodeParser: the text at several chunk sizes, children under parents."
    )
    defaults_from = "llama_index.core.node_parser:HierarchicalNodeParser.from_defaults"
    has_levels: ClassVar[bool] = True
    own_params = {
        "chunk_sizes": "LlamaIndex's default is None, which it reads as 2048, 512, 128 (declared as such here).",
        "tokenizer": OWN_TOKENIZER,
    }

    chunk_sizes: tuple[int, ...] = param(
        (2048, 512, 128), "Chunk size of each level in tokens, the roots' first.", ge=1, le=1_000_000
    )
    chunk_overlap: int = chunk_overlap_param(20, "Tokens consecutive chunks of one parent share.")
    tokenizer: str = param("cl100k_base", TOKENIZER_HELP, choices=TOKENIZERS)

    def validate(self) -> None:
        check_levels(self.name, self.chunk_sizes, self.chunk_overlap, descending=False)

    @property
    def size_limit(self) -> int | None:
        return max(self.chunk_sizes) if self.counts_characters else None

    def langchain_stand_in(self, code: CodeSnippet) -> str:
        """ChunkScope's level loop for LangChain: each level's chunks split again at the next size, same overlap and unit."""
        sizes = tuple(sorted(self.chunk_sizes, reverse=True))
        try:
            native = HierarchicalSplitter(chunk_sizes=sizes, chunk_overlap=self.chunk_overlap, tokenizer=self.size_unit)
        except ConfigError:  # sizes the native splitter refuses: one level stands in
            return super().langchain_stand_in(code)
        self.stand_in_note(
            code,
            "LangChain",
            "a loop of RecursiveCharacterTextSplitters, one per level (same sizes)",
            carries=("chunk_sizes", "chunk_overlap", "tokenizer"),
        )
        return native.langchain(code)

    def framework_kwargs(self) -> dict[str, Any]:
        if self.tokenizer == "cl100k_base":  # LlamaIndex's own tokenizer: from_defaults says it all
            return {"chunk_sizes": list(self.chunk_sizes), "chunk_overlap": self.chunk_overlap, **link_kwargs(self)}
        # What from_defaults(chunk_sizes=...) builds, with the tokenizer named (from_defaults takes none).
        sizes = list(self.chunk_sizes)
        return {
            "node_parser_ids": [f"chunk_size_{size}" for size in sizes],
            "node_parser_map": _LevelParsers(tuple(sizes), self.chunk_overlap, self.tokenizer, link_kwargs(self)),
            **link_kwargs(self),
        }

    def chunks(self, document: Document) -> list[FrameworkChunk]:
        chunks = super().chunks(document)
        for chunk in chunks:
            level = 0 if chunk.parent is None else chunks[chunk.parent].metadata["level"] + 1
            chunk.metadata["level"] = level
            chunk.own_keys = ("level",)
        return chunks


@dataclass(frozen=True)
class _LevelParsers(FrameworkArg):
    """A hierarchy's ``node_parser_map``: one SentenceSplitter per chunk size, counting with ``tokenizer``."""

    sizes: tuple[int, ...]
    chunk_overlap: int
    tokenizer: str
    links: dict[str, bool]

    def _kwargs(self) -> dict[str, Any]:
        return {"chunk_overlap": self.chunk_overlap, "tokenizer": TokenizerArg(self.tokenizer), **self.links}

    def value(self) -> dict[str, Any]:
        from llama_index.core.node_parser import SentenceSplitter

        return {
            f"chunk_size_{size}": SentenceSplitter(chunk_size=size, **run_values(self._kwargs())) for size in self.sizes
        }

    def code(self, code: CodeSnippet) -> Code:
        code.use("from llama_index.core.node_parser import SentenceSplitter")
        splitter = call("SentenceSplitter", chunk_size=Code("size"), **code_values(self._kwargs(), code))
        return Code(f'{{f"chunk_size_{{size}}": {splitter} for size in {literal(list(self.sizes))}}}')
