"""Compat modes counting the embedding model's tokens (``tokenizer=model``, ChunkScope's default) have a mirror.

The engines count with ``tokenize`` of transformers' AutoTokenizer for the packaged
all-MiniLM-L6-v2, the line an exported script holds. That is only a mirror if it
counts exactly as ChunkScope's ``model`` tokenizer does: here on texts that
trip tokenizers (accents, CJK, emoji, ``[CLS]`` written in the text, words too long
for WordPiece), then through the real LlamaIndex and LangChain splitters on the
sample documents. The generated-document comparison is in test_compat_properties.py.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hard_words, unicode_text
from test_compat import agreement, llama_texts

from core.engines.langchain_args import LengthArg
from core.engines.llamaindex import TokenizerArg, model_tokens
from core.engines.mirrors import mirrored_engine
from core.splitters import get_splitter
from core.tokens.tokenizers import get_tokenizer
from core.translate.framework_code import langchain_length, llamaindex_tokenizer
from core.translate.snippet import MODEL_SETUP, CodeSnippet

# Each with the count ChunkScope's model tokenizer gives it.
TRICKY = [
    ("Café naïve résumé Ångström", 5),  # lower-cased and stripped of accents: cafe naive resume ang ##strom
    ("東京は日本の首都です。", 11),  # a CJK ideograph is a word of its own (首 is [UNK]); kana are not
    ("emoji 😀👍🏽 family 👨\u200d👩\u200d👧", 6),  # em ##oj ##i [UNK] family [UNK]
    ("[CLS] hello [SEP] [MASK]", 4),  # special tokens written in the text count once each
    ("[cls] lower", 5),  # lower case is not a special token: "[", "cl", "##s", "]", "lower"
    ("pneumonoultramicroscopicsilicovolcanoconiosis", 17),  # word pieces
    ("x" * 101, 1),  # longer than WordPiece's 100 characters: one [UNK]
    ("zero\u200bwidth \ufeff\x00 ﬁ ＦＵＬＬ", 6),  # zero-width and control characters dropped: zero ##wi ##dt ##h
    ("", 0),
]


def _exported(library: str) -> Any:
    """The size function the ``library`` script counts model tokens with, built by running its code."""
    code = CodeSnippet(library, "")
    if library == "LlamaIndex":
        expression = llamaindex_tokenizer(code, "model")
    else:
        expression = langchain_length(code, "model")["length_function"]
    assert code.needs_model
    namespace: dict[str, Any] = {}
    exec("\n".join([*code.imports, MODEL_SETUP, *code.setup]), namespace)  # noqa: S102 - built by core.translate.snippet
    counter = eval(expression, namespace)  # noqa: S307 - a name core.translate.snippet wrote
    return (lambda text: len(counter(text))) if library == "LlamaIndex" else counter


@pytest.fixture(scope="module")
def counters() -> dict[str, Any]:
    """Every way a model-token count is made: ChunkScope's, the engines' (run), the scripts' (exported)."""
    return {
        "chunkscope": get_tokenizer("model").count,
        "llamaindex engine": lambda text: len(TokenizerArg("model").value()(text)),
        "langchain engine": LengthArg("model").value(),
        "llamaindex script": _exported("LlamaIndex"),
        "langchain script": _exported("LangChain"),
    }


@pytest.mark.parametrize(("text", "count"), TRICKY, ids=[repr(text[:12]) for text, _ in TRICKY])
def test_every_model_count_agrees_on_text_that_trips_tokenizers(counters: dict[str, Any], text: str, count: int):
    assert {name: counter(text) for name, counter in counters.items()} == dict.fromkeys(counters, count)


_PIECES = st.one_of(
    hard_words,
    st.sampled_from(["[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]", "x" * 100, "é" * 101, "\r\n", "\t", " ", "\u2028"]),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=8),
)


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(unicode_text(), st.lists(_PIECES, max_size=30).map("".join)))
def test_the_engines_and_scripts_count_model_tokens_as_chunkscope(counters: dict[str, Any], text: str) -> None:
    counts = {name: counter(text) for name, counter in counters.items()}
    assert len(set(counts.values())) == 1, counts


def test_the_engines_share_one_tokenizer_with_truncation_off() -> None:
    # tokenizer.json truncates at 128 tokens; tokenize turns that off on its first call, made before any sharing.
    tokenize = model_tokens()
    assert tokenize is model_tokens()
    assert tokenize.__self__.backend_tokenizer.truncation is None
    assert len(tokenize("word " * 600)) == 600


# --------------------------------------------------------------------- the real frameworks, on the samples


@pytest.fixture(autouse=True, scope="module")
def _quiet_frameworks():
    loggers = [logging.getLogger(name) for name in ("langchain_text_splitters", "transformers")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


def test_sentence_with_the_defaults_reproduces_llamaindex_counting_model_tokens() -> None:
    # The regression this fixes: the defaults (tokenizer=model) with compat=llamaindex were refused.
    from llama_index.core.node_parser import SentenceSplitter

    splitter = get_splitter("sentence", compat="llamaindex")
    assert splitter.tokenizer == "model"
    parser = SentenceSplitter(chunk_size=splitter.chunk_size, chunk_overlap=splitter.chunk_overlap,
                              tokenizer=model_tokens())  # fmt: skip
    assert agreement(lambda d: llama_texts(parser, d), {"compat": "llamaindex"}, "sentence") > 20


def test_token_and_hierarchical_reproduce_llamaindex_counting_model_tokens() -> None:
    from llama_index.core.node_parser import HierarchicalNodeParser, SentenceSplitter, TokenTextSplitter

    parser = TokenTextSplitter(chunk_size=120, chunk_overlap=20, tokenizer=model_tokens())
    native = {"chunk_size": 120, "chunk_overlap": 20, "tokenizer": "model", "compat": "llamaindex"}
    assert agreement(lambda d: llama_texts(parser, d), native, "token") > 20
    sizes = (512, 128)
    hierarchy = HierarchicalNodeParser.from_defaults(
        node_parser_ids=[f"chunk_size_{size}" for size in sizes],
        node_parser_map={
            f"chunk_size_{size}": SentenceSplitter(chunk_size=size, chunk_overlap=20, tokenizer=model_tokens())
            for size in sizes
        },
    )
    native = {"chunk_sizes": sizes, "chunk_overlap": 20, "tokenizer": "model", "compat": "llamaindex"}
    assert agreement(lambda d: llama_texts(hierarchy, d), native, "hierarchical") > 40


def test_character_and_recursive_reproduce_langchain_counting_model_tokens() -> None:
    from langchain_text_splitters import CharacterTextSplitter, RecursiveCharacterTextSplitter

    count = LengthArg("model").value()
    native = {"chunk_size": 90, "chunk_overlap": 15, "tokenizer": "model", "compat": "langchain"}
    theirs = CharacterTextSplitter(separator="\n", chunk_size=90, chunk_overlap=15, length_function=count)
    assert agreement(lambda d: theirs.split_text(d.text), {**native, "separator": "\n"}, "character") > 40
    recursive = RecursiveCharacterTextSplitter(chunk_size=90, chunk_overlap=15, length_function=count)
    assert agreement(lambda d: recursive.split_text(d.text), native, "recursive") > 40


@pytest.mark.parametrize(
    ("name", "compat", "engine"),
    [
        ("sentence", "llamaindex", "llamaindex.sentence"),
        ("token", "llamaindex", "llamaindex.token"),
        ("hierarchical", "llamaindex", "llamaindex.hierarchical"),
        ("character", "langchain", "langchain.character"),
        ("recursive", "langchain", "langchain.recursive"),
    ],
)
def test_a_compat_mode_counting_model_tokens_names_an_engine_counting_them(name: str, compat: str, engine: str):
    mirror = mirrored_engine(get_splitter(name, tokenizer="model", compat=compat))
    assert (mirror.name, mirror.size_unit) == (engine, "model")
