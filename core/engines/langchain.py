"""LangChain's text splitters as engines: the real ``langchain_text_splitters`` classes.

Each engine builds the splitter from its declared parameters (LangChain's
defaults, sizes in characters unless it counts tokens) and calls ``split_text``
once per document. LangChain adds no metadata of its own except the
MarkdownHeaderTextSplitter's headers; nodes inherit the document's metadata as
``split_documents`` copies it.

HTMLHeaderTextSplitter reads a page's markup rather than its text: it is in
:mod:`core.engines.langchain_html`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from core.engines.base import (
    FrameworkSplitter,
    engine_summary,
    no_headings_reason,
)
from core.engines.chunk_nodes import FrameworkChunk
from core.engines.langchain_args import EncodingNameArg, LanguageArg, length_kwargs, length_param
from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.base import check_overlap, chunk_overlap_param, chunk_size_param
from core.splitters.registry import SPLITTERS
from core.tokens.bundled_data import TIKTOKEN_ENCODINGS
from core.translate.snippet import CodeSnippet, call

LANGCHAIN = "LangChain"
DISTRIBUTION = "langchain-text-splitters"
# LangChain's Language values that RecursiveCharacterTextSplitter.from_language accepts (perl is listed but
# "not implemented yet"); a test checks this against the installed package.
LANGUAGES = (
    "cpp", "go", "java", "kotlin", "js", "ts", "php", "proto", "python", "r", "rst", "ruby", "rust", "scala",
    "swift", "markdown", "latex", "html", "sol", "csharp", "cobol", "c", "lua", "haskell", "elixir", "powershell",
    "visualbasic6",
)  # fmt: skip


@dataclass(frozen=True)
class LangChainEngine(FrameworkSplitter):
    """A LangChain text splitter: ``split_text`` once per document."""

    framework: ClassVar[str] = LANGCHAIN
    distribution: ClassVar[str] = DISTRIBUTION

    def text_splitter(self) -> Any:
        """The configured LangChain splitter (built once per configuration)."""
        return _text_splitter(self)

    @property
    def size_unit(self) -> str:
        """What the sizes count: a ``length_function``'s unit where the engine has one, else LangChain's own."""
        return getattr(self, "length_function", None) or super().size_unit

    def chunks(self, document: Document) -> list[FrameworkChunk]:
        splitter = self.text_splitter()
        try:
            texts = splitter.split_text(self.source_text(document))
        except Exception as exc:  # e.g. tiktoken refusing a special token in the text
            raise self.failed(exc) from exc
        return [FrameworkChunk(text) for text in texts]


@lru_cache(maxsize=32)
def _text_splitter(engine: LangChainEngine) -> Any:
    return engine.build_framework()


_CHUNK_SIZE_HELP = "Largest chunk, in characters (separators between pieces count, those at its ends do not)."
_OVERLAP_HELP = "Characters consecutive chunks share at most; below chunk_size."
OWN_LINKS = {
    "include_metadata": "ChunkScope's: nodes inherit the document's metadata, as LangChain's split_documents copies it.",
    "include_prev_next_rel": "ChunkScope's: LangChain's chunks have no links; this adds PREVIOUS/NEXT.",
}
_OWN_LENGTH = {
    "length_function": "LangChain's default is len (characters); a named unit here, so a config can say which.",
}


@SPLITTERS.register
@dataclass(frozen=True)
class LangChainRecursiveSplitter(LangChainEngine):
    """LangChain's RecursiveCharacterTextSplitter, or ``from_language`` with a language's separators."""

    name = "langchain.recursive"
    framework_class = "RecursiveCharacterTextSplitter"
    summary = engine_summary(
        LANGCHAIN,
        DISTRIBUTION,
        "RecursiveCharacterTextSplitter: separators tried in turn, pieces packed to chunk_size.",
    )
    defaults_from = "langchain_text_splitters:RecursiveCharacterTextSplitter.__init__"
    own_params = {
        "language": "from_language's argument (it has no default): none means the plain splitter.",
        **_OWN_LENGTH,
        **OWN_LINKS,
    }

    chunk_size: int = chunk_size_param(4000, _CHUNK_SIZE_HELP)
    chunk_overlap: int = chunk_overlap_param(200, _OVERLAP_HELP)
    language: str | None = param(
        None,
        "A language's separators (RecursiveCharacterTextSplitter.from_language); none: the default ones.",
        choices=LANGUAGES,
    )
    separators: tuple[str, ...] | None = param(
        None,
        'Separators tried in turn; none: LangChain\'s ["\\n\\n", "\\n", " ", ""] (or the language\'s).',
        advanced=True,
        regex="is_separator_regex",
    )
    keep_separator: bool = param(True, "Keep each separator, at the start of the piece after it.", advanced=True)
    is_separator_regex: bool = param(
        False, "Separators are regular expressions (a language's always are).", advanced=True
    )
    strip_whitespace: bool = param(True, "Strip whitespace from the ends of each chunk.", advanced=True)
    length_function: str = length_param()

    def validate(self) -> None:
        check_overlap(self)
        if self.language is not None and self.separators is not None:
            raise ConfigError(f"{self.name}: give a language or separators, not both")

    @property
    def size_limit(self) -> int | None:
        return self.chunk_size

    @property
    def covers_text(self) -> bool:
        # Without keep_separator LangChain drops the separators: text, unless every one is whitespace.
        if self.keep_separator:
            return True
        return self.language is None and all(not sep.strip() for sep in self.separators or ("\n\n", "\n", " ", ""))

    def framework_target(self) -> str:
        target = super().framework_target()
        return target if self.language is None else f"{target}.from_language"

    def framework_kwargs(self) -> dict[str, Any]:
        common = {
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "keep_separator": self.keep_separator,
            "strip_whitespace": self.strip_whitespace,
            **length_kwargs(self),
        }
        if self.language is not None:
            return {"language": LanguageArg(self.language), **common}
        extra = {} if self.separators is None else {"separators": list(self.separators)}
        return {**extra, "is_separator_regex": self.is_separator_regex, **common}


@SPLITTERS.register
@dataclass(frozen=True)
class LangChainCharacterSplitter(LangChainEngine):
    """LangChain's CharacterTextSplitter: split at one separator, pieces packed to chunk_size."""

    name = "langchain.character"
    framework_class = "CharacterTextSplitter"
    summary = engine_summary(
        LANGCHAIN, DISTRIBUTION, "CharacterTextSplitter: split at one separator, pieces packed to chunk_size."
    )
    defaults_from = "langchain_text_splitters:CharacterTextSplitter.__init__"
    own_params = {**_OWN_LENGTH, **OWN_LINKS}

    chunk_size: int = chunk_size_param(4000, _CHUNK_SIZE_HELP)
    chunk_overlap: int = chunk_overlap_param(200, _OVERLAP_HELP)
    separator: str = param(
        "\n\n",
        "The separator pieces are split at (a piece longer than chunk_size stays whole).",
        regex="is_separator_regex",
    )
    is_separator_regex: bool = param(False, "The separator is a regular expression.", advanced=True)
    keep_separator: bool = param(False, "Keep the separator, at the start of the piece after it.", advanced=True)
    strip_whitespace: bool = param(True, "Strip whitespace from the ends of each chunk.", advanced=True)
    length_function: str = length_param()

    def validate(self) -> None:
        check_overlap(self)

    @property
    def size_limit(self) -> int | None:
        return self.chunk_size

    @property
    def covers_text(self) -> bool:
        # Without keep_separator LangChain drops the separator: text, unless it is whitespace.
        return self.keep_separator or (not self.is_separator_regex and not self.separator.strip())

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "separator": self.separator,
            "is_separator_regex": self.is_separator_regex,
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "keep_separator": self.keep_separator,
            "strip_whitespace": self.strip_whitespace,
            **length_kwargs(self),
        }


@SPLITTERS.register
@dataclass(frozen=True)
class LangChainTokenSplitter(LangChainEngine):
    """LangChain's TokenTextSplitter: windows of chunk_size tiktoken tokens, decoded back to text."""

    name = "langchain.token"
    framework_class = "TokenTextSplitter"
    summary = engine_summary(LANGCHAIN, DISTRIBUTION, "TokenTextSplitter: windows of tiktoken tokens, decoded.")
    defaults_from = "langchain_text_splitters:TokenTextSplitter.__init__"
    own_params = {
        "encoding_name": "LangChain defaults to gpt2, whose files no installed package ships (nothing is downloaded); "
        "cl100k_base and o200k_base are bundled.",
        **OWN_LINKS,
    }

    chunk_size: int = chunk_size_param(4000, "Tokens per window.")
    chunk_overlap: int = chunk_overlap_param(200, "Tokens consecutive windows share; below chunk_size.")
    encoding_name: str = param(
        "cl100k_base", "The tiktoken encoding (LangChain's default, gpt2, is not bundled).", choices=TIKTOKEN_ENCODINGS
    )
    strip_whitespace: bool = param(True, "Strip whitespace from the ends of each chunk.", advanced=True)

    def validate(self) -> None:
        check_overlap(self)

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "encoding_name": EncodingNameArg(self.encoding_name),
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "strip_whitespace": self.strip_whitespace,
        }


@dataclass(frozen=True)
class LangChainHeaderEngine(LangChainEngine):
    """A LangChain header splitter: ``split_text`` gives Documents, each a section's text and its headers.

    Not a TextSplitter: it has no ``split_documents``, so the exported code runs
    it per document and merges the document's metadata into each chunk's.
    """

    splits_to_documents: ClassVar[bool] = True

    def langchain(self, code: CodeSnippet) -> str:
        return (
            f"text_splitter = {self.framework_call(code)}\n\n"
            "chunks = []\n"
            "for document in documents:\n"
            "    for chunk in text_splitter.split_text(document.page_content):\n"
            "        chunk.metadata = {**document.metadata, **chunk.metadata}\n"
            "        chunks.append(chunk)"
        )

    def chunks(self, document: Document) -> list[FrameworkChunk]:
        splitter = self.text_splitter()
        try:
            documents = splitter.split_text(self.source_text(document))
        except Exception as exc:  # the framework's own failure, said as a sentence
            raise self.failed(exc) from exc
        return [FrameworkChunk(piece.page_content, dict(piece.metadata)) for piece in documents]


@SPLITTERS.register
@dataclass(frozen=True)
class LangChainMarkdownHeaderSplitter(LangChainHeaderEngine):
    """LangChain's MarkdownHeaderTextSplitter: one chunk per section, its headers in metadata.

    LangChain rewrites the text (strips each line, joins lines with two spaces and
    a newline, drops the header lines unless ``strip_headers`` is off), so most
    chunks are ``rewritten``: their spans are aligned with the source.
    """

    name = "langchain.markdown_header"
    framework_class = "MarkdownHeaderTextSplitter"
    summary = engine_summary(
        LANGCHAIN, DISTRIBUTION, "MarkdownHeaderTextSplitter: one chunk per section, its headers in metadata."
    )
    defaults_from = "langchain_text_splitters:MarkdownHeaderTextSplitter.__init__"
    own_params = {
        "headers_to_split_on": "required by LangChain (no default); these are its documentation's example.",
        **OWN_LINKS,
    }

    headers_to_split_on: tuple[str, ...] = param(
        ("# Header 1", "## Header 2", "### Header 3"),
        "The headings to split at, each as its marker, a space, and its metadata key.",
    )
    return_each_line: bool = param(False, "One chunk per line instead of per section.", advanced=True)
    strip_headers: bool = param(True, "Leave the header lines out of the chunks' text.", advanced=True)

    def validate(self) -> None:
        for item in self.headers_to_split_on:
            marker, _, key = item.partition(" ")
            if not marker or not key.strip():
                raise ConfigError(
                    f"{self.name}: each of headers_to_split_on is a marker, a space and a key (e.g. '## Header 2'), "
                    f"got {item!r}"
                )

    @property
    def covers_text(self) -> bool:
        # It leaves out the header lines (strip_headers) and lines it reads as blank, some of which are not
        # ("\U00018cd6" alone gives no chunk at all).
        return False

    def unsuited_reason(self, document: Document) -> str | None:
        # MarkdownHeaderTextSplitter's own test: a stripped line that is the marker, or starts with it and a space.
        markers = [marker for marker, _ in self._pairs()]
        for line in document.text.splitlines():
            line = line.strip()
            if any(line == marker or line.startswith(marker + " ") for marker in markers):
                return None
        return no_headings_reason(self, document)

    def llamaindex_stand_in(self, code: CodeSnippet) -> str:
        """LlamaIndex's MarkdownNodeParser: also a node per Markdown section, its header path in metadata."""
        self.stand_in_note(code, "LlamaIndex", "MarkdownNodeParser (a node at every heading, header lines kept)")
        code.use("from llama_index.core.node_parser import MarkdownNodeParser")
        return call("MarkdownNodeParser")

    def framework_kwargs(self) -> dict[str, Any]:
        return {
            "headers_to_split_on": self._pairs(),
            "return_each_line": self.return_each_line,
            "strip_headers": self.strip_headers,
        }

    def _pairs(self) -> list[tuple[str, str]]:
        return [(marker, key.strip()) for marker, _, key in (item.partition(" ") for item in self.headers_to_split_on)]
