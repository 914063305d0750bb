"""LlamaIndex's CodeSplitter as an engine: chunks along a tree-sitter syntax tree, the grammar from the file's extension.

CodeSplitter is handed its parser (``parser=Parser(Language(tree_sitter_python.language()))``), built from one
grammar package per language: the tree-sitter project's own PyPI packages, each a small abi3 wheel with its
grammar compiled in (nothing fetched), all run by the one ``tree-sitter`` pinned in constraints.txt. No
language pack is needed, and no grammar that is not listed in
:data:`core.splitters.code_llamaindex.LANGUAGE_GRAMMARS` is ever loaded (the pack's Markdown grammar once
crashed a test worker). The table lives beside the native ``code`` splitter's ``compat="llamaindex"`` rule,
which parses with the same grammars and reproduces this engine's chunks.

CodeSplitter takes one ``language``. With ``language="auto"`` each document is split with the grammar its
file's extension names; a document whose extension names none (text, a PDF, a page's text) is refused, with
the extensions that have one: nothing is read with a grammar not made for it. The script the Export page
writes makes the same choice (:data:`BY_EXTENSION_CODE`), so it rebuilds the app's chunks.

Its chunks are stripped slices of the source, so span recovery places them ``exact``.

A grammar's C can crash its process: tree-sitter-bash 0.25.1 segfaulted on a few of the garbage texts
``benchmarks/code_engine_stress.py`` draws, and the tsx grammar loops on some. So the parse always runs in a
bounded child (:func:`core.runtime.bounded.map_bounded`, under ``split_seconds`` and ``work_memory_mb``), in
the app's own split child without a second fork, and a fresh one wherever else the engine is called (a test,
the CLI, a notebook): a crash or a loop becomes an error naming the file, never a dead server, worker or shell.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from core.engines.base import FrameworkArg, code_values, engine_summary, run_values
from core.engines.chunk_nodes import FrameworkChunk
from core.engines.llamaindex import DISTRIBUTION, LLAMAINDEX, LlamaIndexEngine, link_kwargs
from core.errors import ConfigError
from core.limits import DEFAULT_LIMITS
from core.params import param
from core.schema import Document
from core.splitters.code_llamaindex import (
    EXTENSIONS,
    LANGUAGE_GRAMMARS,
    language_for,
    no_grammar_reason,
    tree_sitter_parser,
)
from core.splitters.registry import SPLITTERS
from core.translate.framework_code import LANGCHAIN_LANGUAGES, langchain_recursive
from core.translate.snippet import Code, CodeSnippet, call, literal, split_with

# The bindings' versions that load these grammars (ABI 14 and 15), as pyproject.toml asks for them.
TREE_SITTER = "'tree-sitter>=0.26.1,<0.27'"
# What the script's Install line names: the bindings and every grammar package.
PACKAGES = (TREE_SITTER, *dict.fromkeys(grammar.package for grammar in LANGUAGE_GRAMMARS.values()))


@dataclass(frozen=True)
class ParserArg(FrameworkArg):
    """CodeSplitter's ``parser=``: a tree-sitter Parser of one grammar package."""

    language: str

    def value(self) -> Any:
        return tree_sitter_parser(self.language)

    def code(self, code: CodeSnippet) -> Code:
        grammar = LANGUAGE_GRAMMARS[self.language]
        code.use("from tree_sitter import Language, Parser", f"import {grammar.module}")
        return Code(f"Parser(Language({grammar.module}.{grammar.function}()))")


@lru_cache(maxsize=64)
def _code_splitter(language: str, settings: tuple[tuple[str, Any], ...]) -> Any:
    """A CodeSplitter of ``language`` (its parser built from the grammar package), kept per settings."""
    from llama_index.core.node_parser import CodeSplitter

    return CodeSplitter(language=language, parser=tree_sitter_parser(language), **dict(settings))


class CodeSplitterByExtension:
    """``get_nodes_from_documents`` of a CodeSplitter per document, with the grammar of its file's extension.

    What ``language="auto"`` runs; the script's class of the same name (:data:`BY_EXTENSION_CODE`) does the same.
    """

    def __init__(self, **settings: Any) -> None:
        self.settings = settings

    def splitter(self, language: str) -> Any:
        return _code_splitter(language, tuple(sorted(self.settings.items())))

    def get_nodes_from_documents(self, documents: list[Any]) -> list[Any]:
        nodes = []
        for document in documents:
            file_name = document.metadata.get("file_name", "")
            language = language_for(file_name)
            if language is None:
                raise ValueError(no_grammar_reason(file_name))
            nodes += self.splitter(language).get_nodes_from_documents([document])
        return nodes


BY_EXTENSION_CODE = '''\
# CodeSplitter takes one language; ChunkScope took each file's from its extension, with the grammar packages
# below (a file whose extension has none is refused, as ChunkScope refused it).
GRAMMARS = {
@grammars@
}


class CodeSplitterByExtension:
    """A CodeSplitter per document, with the tree-sitter grammar of its file's extension."""

    def __init__(self, **settings):
        self.settings = settings

    def get_nodes_from_documents(self, documents):
        nodes = []
        for document in documents:
            suffix = Path(document.metadata.get("file_name", "")).suffix.lower()
            if suffix not in GRAMMARS:
                raise ValueError(f"no tree-sitter grammar for {suffix!r} files; these have one: {', '.join(GRAMMARS)}")
            language, module, function = GRAMMARS[suffix]
            parser = Parser(Language(getattr(import_module(module), function)()))
            splitter = CodeSplitter(language=language, parser=parser, **self.settings)
            nodes += splitter.get_nodes_from_documents([document])
        return nodes
'''


def grammars_literal() -> str:
    """The script's GRAMMARS entries: extension -> (language, module, function), one a line."""
    entries = []
    for suffix, language in EXTENSIONS.items():
        grammar = LANGUAGE_GRAMMARS[language]
        entries.append(f"    {literal(suffix)}: {literal((language, grammar.module, grammar.function))},")
    return "\n".join(entries)


def _parsed_chunks(engine: LlamaIndexEngine, document: Document) -> list[FrameworkChunk]:
    """In the child: CodeSplitter's chunks of ``document`` (LlamaIndexEngine's one call to the framework)."""
    return LlamaIndexEngine.chunks(engine, document)


@SPLITTERS.register
@dataclass(frozen=True)
class LlamaIndexCodeSplitter(LlamaIndexEngine):
    """LlamaIndex's CodeSplitter: the syntax tree's nodes packed in order up to max_chars (or max_tokens), a node
    too large split into its children."""

    name = "llamaindex.code"
    framework_class = "CodeSplitter"
    summary = engine_summary(
        LLAMAINDEX, DISTRIBUTION, "CodeSplitter: chunks along a tree-sitter syntax tree, up to max_chars."
    )
    defaults_from = "llama_index.core.node_parser:CodeSplitter.__init__"
    own_params = {
        "language": "CodeSplitter requires one (no default); auto takes each file's from its extension.",
    }

    language: str = param(
        "auto",
        "The tree-sitter grammar; auto: each file's extension's (.py python, .ts typescript, .tsx tsx, ...), "
        "and a file whose extension has none is refused.",
        choices=("auto", *LANGUAGE_GRAMMARS),
    )
    max_chars: int = param(1500, "Largest chunk, in characters (count_mode char).", ge=1, le=1_000_000)
    count_mode: str = param(
        "char", "What a chunk's size counts: characters (max_chars) or tokens (max_tokens).", choices=("char", "token")
    )
    max_tokens: int = param(
        512, "Largest chunk, in tokens of LlamaIndex's tokenizer, cl100k_base (count_mode token).", ge=1, le=1_000_000
    )
    chunk_lines: int = param(
        40, "CodeSplitter's line budget: declared, but its tree-sitter split (0.14) never reads it.",
        ge=1, le=100_000, advanced=True,
    )  # fmt: skip
    chunk_lines_overlap: int = param(
        15, "CodeSplitter's line overlap: declared, but its tree-sitter split (0.14) never reads it.",
        ge=1, le=100_000, advanced=True,
    )  # fmt: skip

    @property
    def covers_text(self) -> bool:
        # CodeSplitter keeps the text between the syntax tree's children, not what follows the last child of a
        # node it descends into: on text a grammar reads as an error it drops characters (kotlin, "SELECT 1"
        # at max_chars 5: ["SELEC", "T"]). What the engine shows is what CodeSplitter returns.
        return False

    def prepare(self) -> None:
        super().prepare()
        import tree_sitter  # noqa: F401  the bindings, imported once before the child forks

    def language_of(self, document: Document) -> str | None:
        """The grammar this document is split with (None: refused)."""
        if self.language != "auto":
            return self.language
        return language_for(document.metadata.get("file_name", ""))

    def unsuited_reason(self, document: Document) -> str | None:
        """Why a file whose extension has no grammar here (text, PDF, a page's text) is refused."""
        if self.language_of(document) is not None:
            return None
        return no_grammar_reason(str(document.metadata.get("file_name", "")))

    def chunks(self, document: Document) -> list[FrameworkChunk]:
        """CodeSplitter's chunks, computed in a bounded child (this one, inside the app's split child)."""
        from core.runtime.bounded import map_bounded

        file_name = str(document.metadata.get("file_name", ""))
        language = self.language_of(document)
        if language is None:  # refused before the framework runs, naming the file
            raise ConfigError(f"{self.name}: {no_grammar_reason(file_name)}")
        # Built here, so a fresh child inherits it (LlamaIndex imported, the grammar loaded): no grammar parses yet.
        parser = self.node_parser()
        if isinstance(parser, CodeSplitterByExtension):
            parser.splitter(language)
        [chunks] = map_bounded(
            partial(_parsed_chunks, self),
            [document],
            file_names=[file_name or "this document"],
            what=f"splitting with {self.name}",
            seconds=DEFAULT_LIMITS.split_seconds,
            memory_mb=DEFAULT_LIMITS.work_memory_mb,
            seconds_name="split_seconds",
        )
        return chunks

    def _settings(self) -> dict[str, Any]:
        return {
            "chunk_lines": self.chunk_lines,
            "chunk_lines_overlap": self.chunk_lines_overlap,
            "max_chars": self.max_chars,
            "count_mode": self.count_mode,
            "max_tokens": self.max_tokens,
            **link_kwargs(self),
        }

    def framework_kwargs(self) -> dict[str, Any]:
        return {"language": self.language, "parser": ParserArg(self.language), **self._settings()}

    def build_framework(self) -> Any:
        if self.language == "auto":
            return CodeSplitterByExtension(**run_values(self._settings()))
        return super().build_framework()

    def framework_call(self, code: CodeSnippet) -> str:
        if self.language != "auto":
            grammar = LANGUAGE_GRAMMARS[self.language]
            for package in (TREE_SITTER, grammar.package):  # CodeSplitter's parser: the script stops without it
                code.requires(package)
            return super().framework_call(code)
        for package in PACKAGES:
            code.requires(package)
        code.use(
            "from llama_index.core.node_parser import CodeSplitter",
            "from tree_sitter import Language, Parser",
            "from importlib import import_module",
            "from pathlib import Path",
        )
        code.set_up(BY_EXTENSION_CODE.replace("@grammars@", grammars_literal()))
        return call("CodeSplitterByExtension", **code_values(self._settings(), code))

    def langchain_stand_in(self, code: CodeSnippet) -> str:
        """RecursiveCharacterTextSplitter at max_chars characters, no overlap (from_language for a language
        LangChain knows, when one is set)."""
        carries = ("max_chars", "language") if self.language in LANGCHAIN_LANGUAGES else ("max_chars",)
        self.stand_in_note(code, "LangChain", "RecursiveCharacterTextSplitter", carries=carries)
        return split_with(langchain_recursive(code, self.max_chars, 0, "characters", language=self.language))
