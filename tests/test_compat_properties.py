"""Every compatible mode equals the framework engine it mirrors, on generated documents and settings.

For each native splitter with a ``compat`` switch, hypothesis draws a document
(prose, Markdown with headings, code, Unicode with CJK and emoji, CRLF line
ends, repeated passages, very short and whitespace-only texts, with or without
metadata) and the splitter's settings (sizes, overlaps below them, separators,
tokenizers, languages). Then either the settings are refused at validation with
one sentence, or :func:`core.engines.mirrors.mirrored_engine` names an engine,
and the compat mode and that engine (the real framework) give equal sequences of
``(start_char, end_char, text)`` and of the metadata the framework adds; or both
refuse the document with a ConfigError (LlamaIndex's metadata longer than the chunk).

One thing the engine cannot know: where a chunk whose source occurs more than once
in the document came from. The framework returns text only, and span recovery
picks a copy; the compat mode knows the cut. There (and only there) the spans may
differ, and the compat mode's span must still hold its chunk (``check_spans``).

Sizes counted in the embedding model's tokens (``tokenizer=model``, ChunkScope's
default) have a run of their own, with fewer examples: the engine counts them with
transformers' ``tokenize``, as an exported script does.

The default run takes a few dozen examples per splitter (30 with model tokens);
``make fuzz`` (``HYPOTHESIS_PROFILE=fuzz pytest -m fuzz``) takes 2,000 each (500).
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import markdownish, prose, sentences, unicode_text, whitespace_runs, with_long_words
from test_compat import check_spans

from core.engines.mirrors import mirrored_engine
from core.errors import ConfigError
from core.schema import Document, Node
from core.splitters import get_splitter
from core.tokens.bundled_data import use_bundled_nltk_data
from core.tokens.tokenizers import TOKENIZER_NAMES

pytestmark = pytest.mark.fuzz

FUZZ_RUN = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
# Every example runs the real framework once: 40 per splitter keeps the default run to seconds.
EXAMPLES = settings(
    max_examples=2_000 if FUZZ_RUN else 40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)

# Model tokens are slower to count (and the engine loads transformers' tokenizer): fewer examples.
MODEL_EXAMPLES = settings(EXAMPLES, max_examples=500 if FUZZ_RUN else 30)

# ---------------------------------------------------------------------------------------------- documents

_CODE_LINES = [
    "def f(x):",
    "    return x + 1",
    "class A:",
    "    def method(self):",
    "        pass",
    "",
    "import os",
    "x = [1, 2, 3]  # a comment",
    "function g(a) {",
    "  return a;",
    "}",
    "if __name__ == '__main__':",
    "    f(2)",
]
_CJK = [
    "日本語",
    "の",
    "文書",
    "を",
    "分割",
    "する",
    "。",
    "中文",
    "句子",
    "！",
    "？",
    "😀",
    "👨\u200d👩\u200d👧",
    "🇫🇷",
]


@st.composite
def code(draw: st.DrawFn) -> str:
    return "\n".join(draw(st.lists(st.sampled_from(_CODE_LINES), min_size=1, max_size=25)))


@st.composite
def cjk(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(st.sampled_from([*_CJK, " ", "\n", "\n\n"]), min_size=1, max_size=60)))


@st.composite
def repeated(draw: st.DrawFn) -> str:
    """The same passage several times: span recovery must not place a chunk on the wrong copy."""
    passage = draw(st.one_of(sentences(), prose()))
    joint = draw(st.sampled_from(["\n\n", "\n", " ", "\n\n\n"]))
    return joint.join([passage] * draw(st.integers(2, 4)))


short = st.text(alphabet=" \t\n\r.a😀日\u00a0", max_size=6)


@st.composite
def texts(draw: st.DrawFn) -> str:
    text = draw(
        st.one_of(prose(), markdownish(), code(), unicode_text(), cjk(), repeated(), with_long_words(), whitespace_runs,
                  short)
    )  # fmt: skip
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


METADATA = st.sampled_from([{}, {"file_name": "doc.md"}, {"file_name": "notes.txt", "title": "Release notes"}])
documents = st.builds(lambda text, metadata: Document(text=text, metadata=metadata), texts(), METADATA)

# ---------------------------------------------------------------------------------------------- settings


@st.composite
def sized(draw: st.DrawFn, tokenizers: st.SearchStrategy[str] | None = None) -> dict:
    """A tokenizer, a chunk_size in its units (small, so short texts make several chunks) and an overlap below it."""
    tokenizer = draw(TOKENIZERS if tokenizers is None else tokenizers)
    characters, tokens = (10, 300), (6, 80)
    low, high = characters if tokenizer == "characters" else tokens
    size = draw(st.integers(low, high))
    overlap = draw(st.one_of(st.integers(0, min(size - 1, 10)), st.integers(0, size - 1)))
    return {"tokenizer": tokenizer, "chunk_size": size, "chunk_overlap": overlap}


# Mostly the tokenizers quick to count; now and then any named one (a new name without a framework call is
# refused). The embedding model's, slower, has its own run below (MODEL_CASES).
TOKENIZERS = st.one_of(st.sampled_from(["characters", "words", "cl100k", "o200k"]), st.sampled_from(TOKENIZER_NAMES))
MODEL = st.just("model")
_LINKS = {"include_metadata": st.booleans(), "include_prev_next_rel": st.booleans()}


@st.composite
def sentence_params(draw: st.DrawFn, tokenizers: st.SearchStrategy[str] | None = None) -> dict:
    return {
        **draw(sized(tokenizers)),
        "paragraph_separator": draw(st.sampled_from(["\n\n\n", "\n\n", "\n"])),
        "separator": draw(st.sampled_from([" ", "\n", ", "])),
        "metadata_aware": draw(st.sampled_from([True, True, True, False])),
        **draw(st.fixed_dictionaries(_LINKS)),
    }


@st.composite
def token_params(draw: st.DrawFn, tokenizers: st.SearchStrategy[str] | None = None) -> dict:
    return {**draw(sized(tokenizers)), **draw(st.fixed_dictionaries(_LINKS))}


@st.composite
def hierarchical_params(draw: st.DrawFn, tokenizers: st.SearchStrategy[str] | None = None) -> dict:
    first = draw(sized(tokenizers))
    sizes = draw(st.lists(st.integers(first["chunk_overlap"] + 1, first["chunk_size"]), min_size=0, max_size=2))
    return {
        "tokenizer": first["tokenizer"],
        "chunk_sizes": tuple(sorted({first["chunk_size"], *sizes}, reverse=True)),
        "chunk_overlap": first["chunk_overlap"],
        "metadata_aware": draw(st.sampled_from([True, True, True, False])),
        **draw(st.fixed_dictionaries(_LINKS)),
    }


@st.composite
def sentence_window_params(draw: st.DrawFn) -> dict:
    return {"window_size": draw(st.integers(0, 5)), **draw(st.fixed_dictionaries(_LINKS))}


@st.composite
def markdown_params(draw: st.DrawFn) -> dict:
    return {
        "heading_level": draw(st.sampled_from([6, 6, 6, 1, 2, 3, 4, 5])),
        "chunk_size": draw(st.sampled_from([0, 0, 0, 0, 50, 200])),
        "tokenizer": draw(st.sampled_from(TOKENIZER_NAMES)),
        **draw(st.fixed_dictionaries(_LINKS)),
    }


# Separators as a person types them (\n for a newline), and regexes.
_LITERALS = ["\\n\\n", "\\n", " ", ".", ", ", "", "\\r\\n", "the"]
_REGEXES = [r"\n\n+", r"\n", r"(?<=\.) ", r"\s+", r"(?=#)", ""]


@st.composite
def recursive_params(draw: st.DrawFn, tokenizers: st.SearchStrategy[str] | None = None) -> dict:
    params: dict[str, Any] = {
        **draw(sized(tokenizers)),
        "keep_separator": draw(st.sampled_from(["start", "start", "start", "end"])),
    }
    kind = draw(st.sampled_from(["preset", "language", "literal", "regex"]))
    if kind == "language":
        params["language"] = draw(st.sampled_from(["python", "markdown", "javascript", "html", "latex", "go"]))
    elif kind == "literal":
        params["separators"] = tuple(draw(st.lists(st.sampled_from(_LITERALS), min_size=1, max_size=4, unique=True)))
    elif kind == "regex":
        params["separators"] = tuple(draw(st.lists(st.sampled_from(_REGEXES), min_size=1, max_size=3, unique=True)))
        params["is_separator_regex"] = True
    return {**params, **draw(st.fixed_dictionaries(_LINKS))}


@st.composite
def character_params(draw: st.DrawFn, tokenizers: st.SearchStrategy[str] | None = None) -> dict:
    separator = draw(st.sampled_from(["\n\n", "\n", " ", ".", ", ", "", "\r\n", "the", "😀"]))
    return {**draw(sized(tokenizers)), "separator": separator, **draw(st.fixed_dictionaries(_LINKS))}


# name -> (its compat value, its settings, the metadata keys the framework adds to a node)
CASES: dict[str, tuple[str, st.SearchStrategy[dict], tuple[str, ...]]] = {
    "sentence": ("llamaindex", sentence_params(), ()),
    "token": ("llamaindex", token_params(), ()),
    "hierarchical": ("llamaindex", hierarchical_params(), ("level",)),
    "sentence_window": ("llamaindex", sentence_window_params(), ("window", "original_text")),
    "markdown": ("llamaindex", markdown_params(), ("header_path",)),
    "recursive": ("langchain", recursive_params(), ()),
    "character": ("langchain", character_params(), ()),
}
# The splitters that count sizes, with the embedding model's tokens (ChunkScope's default for the first three).
MODEL_CASES = {
    "sentence": ("llamaindex", sentence_params(MODEL), ()),
    "token": ("llamaindex", token_params(MODEL), ()),
    "hierarchical": ("llamaindex", hierarchical_params(MODEL), ("level",)),
    "recursive": ("langchain", recursive_params(MODEL), ()),
    "character": ("langchain", character_params(MODEL), ()),
}


def outcome(splitter: Any, document: Document) -> list[Node] | str:
    """The split's nodes, or "refused" when the splitter refuses the document with a ConfigError."""
    try:
        return splitter.split([document])
    except ConfigError:
        return "refused"


def assert_same_split(document: Document, ours: list[Node], theirs: list[Node], keys: tuple[str, ...]) -> None:
    """Equal (start_char, end_char, text, framework metadata) in order; a span may differ only for a repeated text."""
    text = document.text

    def row(node: Node, *, span: bool) -> tuple[Any, ...]:
        where = (node.start_char, node.end_char) if span else ()
        return (*where, node.text, *(node.metadata.get(key) for key in keys))

    def repeated(chunk: str) -> bool:
        first = text.find(chunk)
        return first >= 0 and text.find(chunk, first + 1) >= 0

    assert [n.text for n in ours] == [n.text for n in theirs]
    # The source a chunk came from (its slice; for a rewritten chunk, what its span covers) decides.
    placed = [not repeated(text[n.start_char : n.end_char]) for n in ours]
    assert [row(n, span=p) for n, p in zip(ours, placed, strict=True)] == [
        row(n, span=p) for n, p in zip(theirs, placed, strict=True)
    ]
    check_spans(document, ours)


@pytest.fixture(autouse=True, scope="module")
def _quiet_frameworks():
    use_bundled_nltk_data()
    # LlamaIndex and LangChain log a warning for every oversized split or small budget.
    loggers = [logging.getLogger(name) for name in ("llama_index", "langchain_text_splitters")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


def check_compat_equals_mirror(name: str, compat: str, params: dict, document: Document, keys: tuple[str, ...]):
    """Refused at validation in one sentence, or the compat mode and its mirror engine split ``document`` alike."""
    try:
        native = get_splitter(name, **params, compat=compat)
    except ConfigError as exc:
        # Refused at validation: one sentence naming the splitter (a setting it has no mirror for, or an
        # ordinary cross-field rule).
        assert str(exc).startswith(f"{name}: ") and "\n" not in str(exc)
        assume(False)
    engine = mirrored_engine(native)
    assert engine is not None, f"{name} {params}: a compat choice without a mirror is offered"
    ours, theirs = outcome(native, document), outcome(engine, document)
    if isinstance(ours, str) or isinstance(theirs, str):
        assert ours == theirs, "one of the two refused the document"
    else:
        assert_same_split(document, ours, theirs, keys)


@pytest.mark.parametrize("name", list(CASES))
def test_a_compat_mode_equals_the_engine_it_mirrors(name: str) -> None:
    compat, params_strategy, keys = CASES[name]

    @EXAMPLES
    @given(document=documents, params=params_strategy)
    def run(document: Document, params: dict) -> None:
        check_compat_equals_mirror(name, compat, params, document, keys)

    run()


@pytest.mark.parametrize("name", list(MODEL_CASES))
def test_a_compat_mode_counting_model_tokens_equals_the_engine_it_mirrors(name: str) -> None:
    # The engine counts with transformers' tokenize (the exported script's line), the compat mode with
    # ChunkScope's own model tokenizer: equal chunks only if every count on the way is equal.
    compat, params_strategy, keys = MODEL_CASES[name]

    @MODEL_EXAMPLES
    @given(document=documents, params=params_strategy)
    def run(document: Document, params: dict) -> None:
        assert params["tokenizer"] == "model"
        check_compat_equals_mirror(name, compat, params, document, keys)

    run()


def test_the_fuzz_run_is_long() -> None:
    assert EXAMPLES.max_examples == (2_000 if FUZZ_RUN else 40)
    assert MODEL_EXAMPLES.max_examples == (500 if FUZZ_RUN else 30)
