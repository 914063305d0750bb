"""The arguments LangChain's splitters take that are not plain values: a ``Language``, a ``length_function``,
a tiktoken ``encoding_name``. Each gives the object the engine passes and the code Export writes for it, so
what runs is what the script says (:class:`core.engines.base.FrameworkArg`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.engines.base import FrameworkArg
from core.engines.llamaindex import model_tokens
from core.params import param
from core.tokens.bundled_data import tiktoken_encoding
from core.tokens.tokenizers import TIKTOKEN_TOKENIZERS
from core.translate.framework_code import bundled_tiktoken, langchain_length
from core.translate.snippet import Code, CodeSnippet, literal


@dataclass(frozen=True)
class LanguageArg(FrameworkArg):
    """``from_language``'s ``language``: the ``Language`` member whose value is ``name``."""

    name: str

    def value(self) -> Any:
        from langchain_text_splitters import Language

        return Language(self.name)

    def code(self, code: CodeSnippet) -> Code:
        code.use("from langchain_text_splitters import Language")
        return Code(f"Language.{self.value().name}")


# What LangChain's sizes can count, by ChunkScope's tokenizer names: characters (its default ``len``), or a
# ``length_function`` counting whitespace-separated words, tiktoken tokens or the embedding model's tokens
# (what a compat mode counts).
LENGTHS = ("characters", "words", "cl100k", "o200k", "model")


def _word_count(text: str) -> int:
    return len(text.split())


def _model_length(text: str) -> int:
    """The embedding model's tokens in ``text``, as the exported ``model_length`` counts them (its ``tokenize``)."""
    return len(model_tokens()(text))


@dataclass(frozen=True)
class LengthArg(FrameworkArg):
    """``length_function=``: what LangChain measures a piece with, written as the export writes it."""

    name: str

    def value(self) -> Any:
        if self.name == "words":
            return _word_count
        if self.name == "model":
            model_tokens()  # loaded now, as the script loads it before the splitter is built
            return _model_length
        encoding = tiktoken_encoding(TIKTOKEN_TOKENIZERS[self.name])
        return lambda text: len(encoding.encode(text, allowed_special="all"))

    def code(self, code: CodeSnippet) -> Code:
        return langchain_length(code, self.name)["length_function"]


def length_param() -> Any:
    return param(
        "characters",
        "What sizes count: characters (LangChain's len), whitespace-separated words, tiktoken's cl100k or "
        "o200k tokens, or the embedding model's own tokens (model; as a length_function).",
        choices=LENGTHS,
        advanced=True,
    )


def length_kwargs(engine: Any) -> dict[str, Any]:
    """``length_function=`` when sizes are not LangChain's default characters (so a default call stays as it was)."""
    return {} if engine.length_function == "characters" else {"length_function": LengthArg(engine.length_function)}


@dataclass(frozen=True)
class EncodingNameArg(FrameworkArg):
    """TokenTextSplitter's ``encoding_name``: LangChain loads the encoding by name, so it is loaded from the
    bundled file first (in ChunkScope and in the script), and found loaded."""

    name: str

    def value(self) -> str:
        tiktoken_encoding(self.name)
        return self.name

    def code(self, code: CodeSnippet) -> Code:
        bundled_tiktoken(code, self.name)
        return Code(literal(self.name))
