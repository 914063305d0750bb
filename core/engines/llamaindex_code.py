"""LlamaIndex's CodeSplitter as an engine: chunks along a tree-sitter syntax tree, the grammar from the file's extension.

CodeSplitter parses with a tree-sitter parser from ``tree_sitter_language_pack`` (a PyPI package that ships
its grammars compiled: nothing is fetched); llama-index-core 0.14 asks for a version below 1.0, whose
``get_parser`` returns a parser with ``parse``. Its chunks are stripped slices of the source, so span
recovery places them ``exact``.

CodeSplitter takes one ``language``. With ``language="auto"`` each document is split with the grammar its
file's extension names (:data:`GRAMMARS`), and a document whose extension names none (text, a PDF, a web
page's extracted text) with the Markdown grammar, whose blocks are its paragraphs: the script the Export page
writes defines the same choice, :data:`BY_EXTENSION_CODE`, so it rebuilds the app's chunks.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePath
from typing import Any

from core.engines.base import code_values, engine_summary, run_values
from core.engines.llamaindex import DISTRIBUTION, LLAMAINDEX, LlamaIndexEngine, link_kwargs
from core.loaders.code import LANGUAGES
from core.params import param
from core.splitters.registry import SPLITTERS
from core.translate.framework_code import LANGCHAIN_LANGUAGES, langchain_recursive
from core.translate.snippet import CodeSnippet, call, literal_block, split_with

# The version range CodeSplitter works with (0.14: "pip install 'tree-sitter-language-pack<1.0'").
PACKAGE = "'tree-sitter-language-pack>=0.13,<1'"
# tree_sitter_language_pack 0.13's SupportedLanguage (tests/test_engines_code.py holds them equal).
TREE_SITTER_LANGUAGES = (
    "actionscript", "ada", "agda", "apex", "arduino", "asm", "astro", "bash", "beancount", "bibtex", "bicep",
    "bitbake", "bsl", "c", "cairo", "capnp", "chatito", "clarity", "clojure", "cmake", "cobol", "comment",
    "commonlisp", "cpon", "cpp", "csharp", "css", "csv", "cuda", "d", "dart", "dockerfile", "doxygen", "dtd", "elisp",
    "elixir", "elm", "embeddedtemplate", "erlang", "fennel", "firrtl", "fish", "fortran", "fsharp",
    "fsharp_signature", "func", "gdscript", "gitattributes", "gitcommit", "gitignore", "gleam", "glsl", "gn", "go",
    "gomod", "gosum", "graphql", "groovy", "gstlaunch", "hack", "hare", "haskell", "haxe", "hcl", "heex", "hlsl",
    "html", "hyprlang", "ini", "ispc", "janet", "java", "javascript", "jsdoc", "json", "jsonnet", "julia", "kconfig",
    "kdl", "kotlin", "latex", "linkerscript", "llvm", "lua", "luadoc", "luap", "luau", "make", "markdown",
    "markdown_inline", "matlab", "mermaid", "meson", "netlinx", "nim", "ninja", "nix", "nqc", "objc", "ocaml",
    "ocaml_interface", "odin", "org", "pascal", "pem", "perl", "pgn", "php", "po", "pony", "powershell", "printf",
    "prisma", "properties", "proto", "psv", "puppet", "purescript", "pymanifest", "python", "qmldir", "qmljs",
    "query", "r", "racket", "re2c", "readline", "rego", "requirements", "ron", "rst", "ruby", "rust", "scala",
    "scheme", "scss", "smali", "smithy", "solidity", "sparql", "swift", "sql", "squirrel", "starlark", "svelte",
    "tablegen", "tcl", "terraform", "test", "thrift", "toml", "tsv", "tsx", "twig", "typescript", "typst", "udev",
    "ungrammar", "uxntal", "v", "verilog", "vhdl", "vim", "vue", "wast", "wat", "wgsl", "xcompose", "xml", "yaml",
    "yuck", "zig", "magik",
)  # fmt: skip
# Extension -> grammar: the code loader's languages (whose names are the pack's), .tsx with JSX, and Markdown.
GRAMMARS: dict[str, str] = {**LANGUAGES, ".tsx": "tsx", ".md": "markdown", ".markdown": "markdown"}
FALLBACK = "markdown"


def grammar_for(file_name: str) -> str:
    """The tree-sitter grammar ``language="auto"`` splits a file with: its extension's, else Markdown's."""
    return GRAMMARS.get(PurePath(file_name).suffix.lower(), FALLBACK)


@lru_cache(maxsize=64)
def _code_splitter(language: str, settings: tuple[tuple[str, Any], ...]) -> Any:
    from llama_index.core.node_parser import CodeSplitter

    return CodeSplitter(language=language, **dict(settings))


class CodeSplitterByExtension:
    """``get_nodes_from_documents`` of a CodeSplitter per document, with the grammar of its file's extension.

    What ``language="auto"`` runs; the script's class of the same name (:data:`BY_EXTENSION_CODE`) does the same.
    """

    def __init__(self, **settings: Any) -> None:
        self.settings = settings

    def get_nodes_from_documents(self, documents: list[Any]) -> list[Any]:
        nodes = []
        for document in documents:
            language = grammar_for(document.metadata.get("file_name", ""))
            splitter = _code_splitter(language, tuple(sorted(self.settings.items())))
            nodes += splitter.get_nodes_from_documents([document])
        return nodes


BY_EXTENSION_CODE = '''\
# CodeSplitter takes one language; ChunkScope took each file's from its extension (else Markdown's grammar).
GRAMMARS = {grammars}


class CodeSplitterByExtension:
    """A CodeSplitter per document, with the tree-sitter grammar of its file's extension."""

    def __init__(self, **settings):
        self.settings = settings

    def get_nodes_from_documents(self, documents):
        nodes = []
        for document in documents:
            suffix = Path(document.metadata.get("file_name", "")).suffix.lower()
            splitter = CodeSplitter(language=GRAMMARS.get(suffix, {fallback!r}), **self.settings)
            nodes += splitter.get_nodes_from_documents([document])
        return nodes
'''


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
        "The tree-sitter grammar; auto: each file's extension's (.py python, .ts typescript, .md markdown, ...), "
        "Markdown's for a file with none (text, PDF, a page's text).",
        choices=("auto", *TREE_SITTER_LANGUAGES),
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

    def prepare(self) -> None:
        super().prepare()
        import tree_sitter_language_pack  # noqa: F401  the grammars' loader, imported once before the child forks

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
        return {"language": self.language, **self._settings()}

    def build_framework(self) -> Any:
        if self.language == "auto":
            return CodeSplitterByExtension(**run_values(self._settings()))
        return super().build_framework()

    def framework_call(self, code: CodeSnippet) -> str:
        code.requires(PACKAGE)  # CodeSplitter's parsers: without it the script stops at the call
        if self.language != "auto":
            return super().framework_call(code)
        code.use("from llama_index.core.node_parser import CodeSplitter", "from pathlib import Path")
        code.set_up(BY_EXTENSION_CODE.format(grammars=literal_block(GRAMMARS), fallback=FALLBACK))
        return call("CodeSplitterByExtension", **code_values(self._settings(), code))

    def langchain_stand_in(self, code: CodeSnippet) -> str:
        """RecursiveCharacterTextSplitter at max_chars characters, no overlap (from_language for a language
        LangChain knows, when one is set)."""
        carries = ("max_chars", "language") if self.language in LANGCHAIN_LANGUAGES else ("max_chars",)
        self.stand_in_note(code, "LangChain", "RecursiveCharacterTextSplitter", carries=carries)
        return split_with(langchain_recursive(code, self.max_chars, 0, "characters", language=self.language))
