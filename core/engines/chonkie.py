"""chonkie's chunkers as engines: the real ``chonkie`` RecursiveChunker, TokenChunker and SentenceChunker.

Each engine builds the chunker from its declared parameters (chonkie's defaults)
and calls ``chunk`` once per document. chonkie's chunks carry their own offsets;
they go through the shared span recovery like every engine's (a test checks the
two agree). A tiktoken tokenizer is handed to chonkie as a loaded encoding (from
the bundled file): by name chonkie would fetch it through ``tokie``. SemanticChunker is
:mod:`core.engines.chonkie_semantic`.

chonkie's CodeChunker is not an engine: it needs tree-sitter-language-pack>=1.8, whose wheels hold no grammar;
CodeChunker's constructor calls its ``download_all()``, which fetches them from GitHub (offline, 1.8.0 and 1.25.0
fail with "Download error: Failed to fetch manifest from https://github.com/.../parsers.json"). ChunkScope runs
nothing it must download, so ``llamaindex.code`` (grammar packages from PyPI) is the code engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from core.engines.base import FrameworkArg, FrameworkSplitter, engine_summary
from core.engines.chunk_nodes import FrameworkChunk
from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.base import check_overlap, chunk_overlap_param, chunk_size_param
from core.splitters.registry import SPLITTERS
from core.tokens.bundled_data import TIKTOKEN_ENCODINGS, tiktoken_encoding
from core.translate.framework_code import bundled_tiktoken
from core.translate.snippet import Code, CodeSnippet, literal

CHONKIE = "chonkie"
DISTRIBUTION = "chonkie"
# chonkie's own tokenizers by name ("character" is its default) and the bundled tiktoken encodings.
TOKENIZERS = ("character", "word", *TIKTOKEN_ENCODINGS)
TOKENIZER_HELP = (
    "What sizes count: characters (chonkie's default), words, or tiktoken's cl100k_base / o200k_base tokens."
)
OWN_LINKS = {
    "include_metadata": "ChunkScope's: chonkie's chunks carry no metadata; nodes inherit the document's.",
    "include_prev_next_rel": "ChunkScope's: chonkie's chunks have no links; this adds PREVIOUS/NEXT.",
}


def check_delim(engine: Any) -> None:
    """chonkie's sentence splitters (SentenceChunker, SemanticChunker) need at least one delimiter, none empty."""
    if not engine.delim or not all(engine.delim):
        raise ConfigError(f"{engine.name}: delim needs at least one delimiter, none of them empty")


def chonkie_tokenizer(name: str) -> Any:
    """What chonkie's ``tokenizer`` argument gets: its own name, or a loaded tiktoken encoding."""
    return tiktoken_encoding(name) if name in TIKTOKEN_ENCODINGS else name


@dataclass(frozen=True)
class TokenizerArg(FrameworkArg):
    """chonkie's ``tokenizer=``: its own name, or (for tiktoken) the encoding loaded from the bundled file."""

    name: str

    def value(self) -> Any:
        return chonkie_tokenizer(self.name)

    def code(self, code: CodeSnippet) -> Code:
        if self.name not in TIKTOKEN_ENCODINGS:
            return Code(literal(self.name))
        return bundled_tiktoken(code, self.name)


@dataclass(frozen=True)
class ChonkieEngine(FrameworkSplitter):
    """A chonkie chunker: ``chunk(text)`` once per document."""

    framework: ClassVar[str] = CHONKIE
    distribution: ClassVar[str] = DISTRIBUTION

    def chunker(self) -> Any:
        """The configured chonkie chunker (built once per configuration)."""
        return _chunker(self)

    def chunks(self, document: Document) -> list[FrameworkChunk]:
        chunker = self.chunker()
        try:
            found = chunker.chunk(document.text)
        except Exception as exc:  # the framework's own failure, said as a sentence
            raise self.failed(exc) from exc
        return [FrameworkChunk(chunk.text, start=chunk.start_index) for chunk in found]

    @property
    def size_limit(self) -> int | None:
        return getattr(self, "chunk_size", None) if getattr(self, "tokenizer", None) == "character" else None


@lru_cache(maxsize=32)
def _chunker(engine: ChonkieEngine) -> Any:
    return engine.build_framework()


@SPLITTERS.register
@dataclass(frozen=True)
class ChonkieRecursiveSplitter(ChonkieEngine):
    """chonkie's RecursiveChunker with its default rules: paragraphs, sentences, punctuation, words, characters."""

    name = "chonkie.recursive"
    framework_class = "RecursiveChunker"
    summary = engine_summary(CHONKIE, DISTRIBUTION, "RecursiveChunker: its default rules, pieces packed to chunk_size.")
    defaults_from = "chonkie:RecursiveChunker.__init__"
    own_params = OWN_LINKS

    tokenizer: str = param("character", TOKENIZER_HELP, choices=TOKENIZERS)
    chunk_size: int = chunk_size_param(2048, "Largest chunk, in the tokenizer's units.")
    min_characters_per_chunk: int = param(
        24, "Shortest piece, in characters; shorter ones join their neighbour.", ge=1, le=1_000_000, advanced=True
    )

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "tokenizer": TokenizerArg(self.tokenizer),
            "chunk_size": self.chunk_size,
            "min_characters_per_chunk": self.min_characters_per_chunk,
        }


@SPLITTERS.register
@dataclass(frozen=True)
class ChonkieTokenSplitter(ChonkieEngine):
    """chonkie's TokenChunker: windows of chunk_size tokens, decoded back to text."""

    name = "chonkie.token"
    framework_class = "TokenChunker"
    summary = engine_summary(CHONKIE, DISTRIBUTION, "TokenChunker: windows of chunk_size tokens.")
    defaults_from = "chonkie:TokenChunker.__init__"
    own_params = OWN_LINKS

    tokenizer: str = param("character", TOKENIZER_HELP, choices=TOKENIZERS)
    chunk_size: int = chunk_size_param(2048, "Tokens per window.")
    chunk_overlap: int = chunk_overlap_param(0, "Tokens consecutive windows share; below chunk_size.")

    def validate(self) -> None:
        check_overlap(self)

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "tokenizer": TokenizerArg(self.tokenizer),
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
        }


@SPLITTERS.register
@dataclass(frozen=True)
class ChonkieSentenceSplitter(ChonkieEngine):
    """chonkie's SentenceChunker: sentences (split at its delimiters) packed to chunk_size tokens."""

    name = "chonkie.sentence"
    framework_class = "SentenceChunker"
    summary = engine_summary(CHONKIE, DISTRIBUTION, "SentenceChunker: whole sentences packed to chunk_size.")
    defaults_from = "chonkie:SentenceChunker.__init__"
    own_params = OWN_LINKS

    tokenizer: str = param("character", TOKENIZER_HELP, choices=TOKENIZERS)
    chunk_size: int = chunk_size_param(2048, "Largest chunk, in the tokenizer's units.")
    chunk_overlap: int = chunk_overlap_param(0, "Tokens consecutive chunks share; below chunk_size.")
    min_sentences_per_chunk: int = param(1, "Fewest sentences in a chunk.", ge=1, le=1000, advanced=True)
    min_characters_per_sentence: int = param(
        12, "Shortest sentence, in characters; shorter ones join the next.", ge=1, le=100_000, advanced=True
    )
    delim: tuple[str, ...] = param((". ", "! ", "? ", "\n"), "Where sentences end.", advanced=True)
    include_delim: str | None = param(
        "prev",
        "Which sentence keeps the delimiter: the one before it or the one after (none: dropped).",
        choices=("prev", "next"),
        advanced=True,
    )

    def validate(self) -> None:
        check_overlap(self)
        check_delim(self)

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "tokenizer": TokenizerArg(self.tokenizer),
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "min_sentences_per_chunk": self.min_sentences_per_chunk,
            "min_characters_per_sentence": self.min_characters_per_sentence,
            "delim": list(self.delim),
            "include_delim": self.include_delim,
        }
