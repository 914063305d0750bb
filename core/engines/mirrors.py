"""The framework engine a native splitter's compatible mode mirrors, with the same settings.

A native splitter with ``compat="llamaindex"`` or ``"langchain"`` cuts as one
framework splitter does (:mod:`core.splitters.compat`). :func:`mirrored_engine`
names that splitter as the engine that runs it, so what is said about the
framework call (the code Export writes, tested to be the call that ran) is said
once, by the engine. Every compat setting the app, a config or the CLI can
choose has a mirror: the ones a framework call cannot express (the embedding
model's tokens, LlamaIndex without the metadata budget, a heading level below 6,
LangChain's separator kept at the end, ...) are refused when the splitter is built
(:func:`core.splitters.compat.refuse_unmirrored`). Only a size function passed
from Python has none: None, and the native splitter's own translation stands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.engines.base import FrameworkSplitter
from core.engines.langchain import LENGTHS
from core.errors import ConfigError
from core.splitters.recursive import LANGCHAIN_LANGUAGE, _unescape
from core.splitters.registry import SPLITTERS

# ChunkScope's tokenizer names -> LlamaIndex's (the engines' ``tokenizer`` choices).
_LLAMAINDEX_TOKENIZERS = {"cl100k": "cl100k_base", "o200k": "o200k_base", "characters": "characters", "words": "words"}


def mirrored_engine(splitter: Any) -> FrameworkSplitter | None:
    """The engine whose framework call ``splitter``'s compat mode reproduces, or None (no compat, or no exact call)."""
    compat = getattr(splitter, "compat", "none")
    settings = _MIRRORS.get((splitter.name, compat))
    if settings is None:
        return None
    mirrored = settings(splitter)
    if mirrored is None:
        return None
    name, params = mirrored
    links = {"include_metadata": splitter.include_metadata, "include_prev_next_rel": splitter.include_prev_next_rel}
    try:
        return SPLITTERS.create(name, **params, **links)
    except ConfigError:  # a setting inside the native splitter's bounds and outside the engine's
        return None


def _llamaindex_tokenizer(splitter: Any) -> str | None:
    tokenizer = splitter.tokenizer
    return _LLAMAINDEX_TOKENIZERS.get(tokenizer) if isinstance(tokenizer, str) else None


def _sentence(splitter: Any) -> tuple[str, dict[str, Any]] | None:
    tokenizer = _llamaindex_tokenizer(splitter)
    if tokenizer is None:
        return None
    return "llamaindex.sentence", {
        "chunk_size": splitter.chunk_size,
        "chunk_overlap": splitter.chunk_overlap,
        "tokenizer": tokenizer,
        "separator": splitter.separator,
        "paragraph_separator": splitter.paragraph_separator,
    }


def _token(splitter: Any) -> tuple[str, dict[str, Any]] | None:
    tokenizer = _llamaindex_tokenizer(splitter)
    if tokenizer is None:
        return None
    return "llamaindex.token", {
        "chunk_size": splitter.chunk_size,
        "chunk_overlap": splitter.chunk_overlap,
        "tokenizer": tokenizer,
    }


def _hierarchical(splitter: Any) -> tuple[str, dict[str, Any]] | None:
    tokenizer = _llamaindex_tokenizer(splitter)
    if tokenizer is None:
        return None
    return "llamaindex.hierarchical", {
        "chunk_sizes": tuple(splitter.chunk_sizes),
        "chunk_overlap": splitter.chunk_overlap,
        "tokenizer": tokenizer,
    }


def _sentence_window(splitter: Any) -> tuple[str, dict[str, Any]] | None:
    return "llamaindex.sentence_window", {
        "window_size": splitter.window_size,
        "window_metadata_key": splitter.window_metadata_key,
        "original_text_metadata_key": splitter.original_text_metadata_key,
    }


def _markdown(splitter: Any) -> tuple[str, dict[str, Any]] | None:
    # The compat mode refuses what MarkdownNodeParser has no setting for (a heading level, a size).
    return "llamaindex.markdown", {}


def _langchain_length(splitter: Any) -> str | None:
    """The LangChain engine's ``length_function`` for the splitter's tokenizer (None: a size function)."""
    tokenizer = splitter.tokenizer
    return tokenizer if isinstance(tokenizer, str) and tokenizer in LENGTHS else None


def _recursive(splitter: Any) -> tuple[str, dict[str, Any]] | None:
    # keep_separator "start" (the only one the compat mode takes) is LangChain's True.
    length = _langchain_length(splitter)
    if length is None:
        return None
    params: dict[str, Any] = {
        "chunk_size": splitter.chunk_size,
        "chunk_overlap": splitter.chunk_overlap,
        "length_function": length,
    }
    if splitter.separators:
        # A literal separator is typed with \\n for a newline (the native splitter reads it so); a regex is as is.
        typed = splitter.separators if splitter.is_separator_regex else [_unescape(s) for s in splitter.separators]
        params.update(separators=tuple(typed), is_separator_regex=splitter.is_separator_regex)
    elif splitter.language != "none":
        params["language"] = LANGCHAIN_LANGUAGE.get(splitter.language, splitter.language)
    return "langchain.recursive", params


def _character(splitter: Any) -> tuple[str, dict[str, Any]] | None:
    # The compat mode is CharacterTextSplitter at its defaults: a literal separator, not kept.
    length = _langchain_length(splitter)
    if length is None:
        return None
    return "langchain.character", {
        "separator": splitter.separator,
        "chunk_size": splitter.chunk_size,
        "chunk_overlap": splitter.chunk_overlap,
        "length_function": length,
    }


_MIRRORS: dict[tuple[str, str], Callable[[Any], tuple[str, dict[str, Any]] | None]] = {
    ("sentence", "llamaindex"): _sentence,
    ("token", "llamaindex"): _token,
    ("hierarchical", "llamaindex"): _hierarchical,
    ("sentence_window", "llamaindex"): _sentence_window,
    ("markdown", "llamaindex"): _markdown,
    ("recursive", "langchain"): _recursive,
    ("character", "langchain"): _character,
}
