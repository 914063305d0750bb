"""Every parameter round-trips: config JSON, share link and CLI ``--set`` give the same splitter, and the framework
object an exported script builds holds the parameters the app cut with.

The scripts' splitter part is executed here (both frameworks are installed) and
the framework object's own attributes are compared: LangChain's ``_separators``,
``_chunk_size``, ``_chunk_overlap``, ``_is_separator_regex``, ``_keep_separator``
and its length function; LlamaIndex's fields and its tokenizer.
"""

from __future__ import annotations

import operator
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import load
from core.cli.config import config_from_args
from core.cli.main import build_parser
from core.config import PipelineConfig
from core.errors import ChunkScopeError
from core.output.export_check import check_export
from core.output.splitter_code import splitter_code
from core.params.typed_text import format_list, write_typed
from core.splitters import SPLITTERS
from core.translate.snippet import MODEL_SETUP, CodeSnippet

SAMPLE = "Größe 日本 — a test.\n\nSecond  paragraph\twith tabs; and a URL https://x.y/z?q=1."

# What a person types in a text box: escapes as the help says, punctuation, unicode, regex syntax.
typed_text = st.lists(
    st.one_of(
        st.sampled_from(
            ["\\n", "\\n\\n", "\\t", "\\r", "\\\\", ".", ". ", "?", "|", "(", ")", "[", "]", "\\s+", "é", "日"]
        ),
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=3),
    ),
    min_size=1,
    max_size=4,
).map("".join)


def _built(splitter: Any, library: str, variable: str | None = "text_splitter") -> Any:
    """The framework object the ``library`` script builds for ``splitter``, built here by running that code."""
    code = CodeSnippet(library, "")
    body = splitter_code(splitter, code)
    namespace: dict[str, Any] = {}
    exec("\n".join([*code.imports, *([MODEL_SETUP] if code.needs_model else []), *code.setup]), namespace)
    if library == "LlamaIndex":
        return eval(body, namespace)
    namespace["documents"] = []  # the script's lines run, on no documents: the splitter is what is looked at
    exec(body, namespace)
    return namespace[variable] if variable else namespace


def _count(splitter: Any, text: str) -> int:
    return splitter.get_tokenizer().count(text)


# -- the native recursive splitter: the separators LangChain gets are those the app compiled -------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    separators=st.lists(typed_text, min_size=1, max_size=4),
    regex=st.booleans(),
    keep=st.sampled_from(["start", "end"]),
    tokenizer=st.sampled_from(["characters", "words", "cl100k", "o200k"]),
    size=st.integers(2, 5000),
    data=st.data(),
)
def test_recursive_separators_reach_langchain_as_the_app_cut_with_them(separators, regex, keep, tokenizer, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    try:
        splitter = SPLITTERS.create(
            "recursive",
            separators=format_list(separators),  # as the widget hands the comma text over
            is_separator_regex=regex,
            keep_separator=keep,
            tokenizer=tokenizer,
            chunk_size=size,
            chunk_overlap=overlap,
        )
    except ChunkScopeError:
        return  # refused (a regex the checker does not allow): nothing to export
    for library in ("LangChain", "LlamaIndex"):
        built = _built(splitter, library)
        if library == "LlamaIndex":
            built = built._lc_splitter  # LlamaIndex's LangchainNodeParser holds LangChain's splitter
        compiled = [pattern.pattern for pattern in splitter.separator_patterns()]
        exported = [sep for sep in built._separators if sep]
        # LangChain escapes a literal itself; a regex it takes as is: either way, the app's compiled patterns.
        assert [sep if regex else re.escape(sep) for sep in exported] == compiled
        assert ("" in built._separators) == splitter._characters_last
        assert (built._chunk_size, built._chunk_overlap) == (size, overlap)
        assert built._is_separator_regex == regex and built._keep_separator == keep
        assert built._length_function(SAMPLE) == _count(splitter, SAMPLE)


def test_separators_typed_as_the_help_says_export_to_the_apps_61_chunks(sample_docs):
    # The case: recursive 400/50 with "\n\n, \n, ." typed in the widget used to give 52 chunks, none identical.
    splitter = SPLITTERS.create("recursive", chunk_size=400, chunk_overlap=50, separators="\\n\\n, \\n, .")
    config = PipelineConfig(splitter=splitter)
    documents = load(sample_docs / "chunking_guide.md")
    for library in ("LangChain", "LlamaIndex"):
        check = check_export(config, documents, library)
        assert check.exact and check.app_chunks == 61, check


# -- every splitter and engine: parameters through JSON, a link and --set, and into the framework object -------


def _param_values(cls: type) -> st.SearchStrategy[dict[str, Any]]:
    """Values for every declared parameter that can be written as text (a size function cannot)."""
    strategies = {}
    for spec in cls.params():
        if spec.kind == "bool":
            strategies[spec.name] = st.booleans()
        elif spec.kind == "choice" and spec.choices:
            strategies[spec.name] = st.sampled_from(list(spec.choices))
        elif spec.kind == "int":
            low, high = (
                int(spec.ge if spec.ge is not None else 0),
                int(min(spec.le if spec.le is not None else 4000, 4000)),
            )
            strategies[spec.name] = st.integers(low, high)
        elif spec.kind == "str" and not spec.choices:
            strategies[spec.name] = typed_text
        elif spec.kind == "str_list" and not spec.choices:
            strategies[spec.name] = st.lists(typed_text, min_size=1, max_size=3).map(tuple)
    return st.fixed_dictionaries({}, optional=strategies)


@pytest.mark.parametrize("name", SPLITTERS.names())
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_parameters_round_trip_through_json_a_link_and_set(name, data):
    cls = SPLITTERS.get_class(name)
    params = data.draw(_param_values(cls))
    try:
        splitter = SPLITTERS.create(name, **params)
    except ChunkScopeError:
        return
    config = PipelineConfig(splitter=splitter)
    assert PipelineConfig.from_json(config.to_json()) == config
    assert PipelineConfig.from_query_params(config.to_query_params()) == config
    changed = splitter.to_params(only_changed=True)
    argv = ["split", "--splitter", name, "x.txt"]
    for key, value in changed.items():
        text = (
            format_list(value)
            if isinstance(value, (list, tuple))
            else str(value).lower()
            if isinstance(value, bool)
            else write_typed(value)  # text is typed by the one rule (core.params.typed_text.read_typed reads it)
            if isinstance(value, str)
            else str(value)
        )
        argv += ["--set", f"{key}={text}"]
    assert config_from_args(build_parser().parse_args(argv)).splitter == splitter


# What the framework object holds, by splitter: (library, what, how to read it off the object, the app's value).
def _expected(splitter: Any) -> list[tuple[str, str, Any, Any]]:
    name, get = splitter.name, operator.attrgetter
    if name == "character":
        return [
            *(("LangChain", a, get(a), v) for a, v in (("_separator", splitter.separator),
                                                       ("_chunk_size", splitter.chunk_size),
                                                       ("_chunk_overlap", splitter.chunk_overlap))),
            *(("LlamaIndex", a, get(a), v) for a, v in (("separator", splitter.separator),
                                                        ("chunk_size", splitter.chunk_size),
                                                        ("chunk_overlap", splitter.chunk_overlap))),
        ]  # fmt: skip
    if name == "sentence":
        fields = ("chunk_size", "chunk_overlap", "separator", "paragraph_separator")
        return [
            *(("LlamaIndex", a, get(a), getattr(splitter, a)) for a in fields),
            ("LangChain", "_chunk_size", get("_chunk_size"), splitter.chunk_size),
            ("LangChain", "_chunk_overlap", get("_chunk_overlap"), splitter.chunk_overlap),
        ]
    if name == "token" and splitter.tokenizer in ("cl100k", "o200k"):  # LangChain's TokenTextSplitter, in both
        encoding = {"cl100k": "cl100k_base", "o200k": "o200k_base"}[splitter.tokenizer]
        values = (("_chunk_size", splitter.chunk_size), ("_chunk_overlap", splitter.chunk_overlap))
        return [
            (library, a, get(a), v)
            for library in ("LlamaIndex", "LangChain")
            for a, v in (*values, ("_tokenizer.name", encoding))
        ]
    if name == "token":
        return [("LlamaIndex", a, get(a), getattr(splitter, a)) for a in ("chunk_size", "chunk_overlap")]
    if name == "sentence_window":
        fields = ("window_size", "window_metadata_key", "original_text_metadata_key")
        return [("LlamaIndex", a, get(a), getattr(splitter, a)) for a in fields]
    if name == "hierarchical":
        sizes = list(splitter.chunk_sizes)
        parsers = lambda built: list(built.node_parser_map.values())  # noqa: E731
        return [
            ("LlamaIndex", "node_parser_ids", get("node_parser_ids"), [f"chunk_size_{size}" for size in sizes]),
            ("LlamaIndex", "level sizes", lambda built: [p.chunk_size for p in parsers(built)], sizes),
            (
                "LlamaIndex",
                "overlaps",
                lambda built: {p.chunk_overlap for p in parsers(built)},
                {splitter.chunk_overlap},
            ),
        ]
    if name == "markdown":
        levels = [("#" * n, f"Header {n}") for n in range(1, splitter.heading_level + 1)]
        # LangChain keeps them longest marker first.
        return [("LangChain", "headers_to_split_on", lambda built: sorted(built.headers_to_split_on), sorted(levels))]
    if name == "html":
        tags = list(splitter.headings_to_split_on)
        return [
            ("LlamaIndex", "tags", get("tags"), [*tags, "p", "li", "section"]),
            ("LangChain", "headers", lambda built: [tag for tag, _ in built.headers_to_split_on], tags),
        ]
    return []


NATIVE = ["character", "sentence", "token", "sentence_window", "hierarchical", "markdown", "html"]
_OBJECT = {"hierarchical": None, "markdown": "header_splitter", "html": "html_splitter"}


@pytest.mark.parametrize("name", NATIVE)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_native_splitters_exported_framework_object_holds_its_parameters(name, data):
    cls = SPLITTERS.get_class(name)
    params = data.draw(_param_values(cls))
    if any(spec.name == "tokenizer" for spec in cls.params()):
        params["tokenizer"] = data.draw(st.sampled_from(["characters", "words", "cl100k"]))
    if name in ("markdown", "html", "hierarchical"):
        params.pop("chunk_size", None)  # a size limit adds a second splitter: the section splitter is what is read
    try:
        splitter = SPLITTERS.create(name, **params)
    except ChunkScopeError:
        return
    from core.engines.mirrors import mirrored_engine

    if mirrored_engine(splitter) is not None:
        return  # a compatible mode exports its engine's call: the engines' test below covers it
    objects = {}
    for library, what, read, value in _expected(splitter):
        if library not in objects:
            built = _built(splitter, library, _OBJECT.get(name, "text_splitter"))
            objects[library] = getattr(built, "_lc_splitter", built)  # a LangChain splitter in LangchainNodeParser
        assert read(objects[library]) == value, (library, what)
    for library, built in objects.items():
        if name in ("character", "sentence", "token"):
            assert _size(built, SAMPLE) == _count(splitter, SAMPLE), library


def test_each_native_splitter_has_framework_values_to_compare():
    # The property above is not vacuous: every splitter it names builds with its defaults and reads values off.
    for name in NATIVE:
        assert _expected(SPLITTERS.create(name)), name


def _size(built: Any, text: str) -> int:
    """``text``'s size as the framework object counts it."""
    tokenizer = getattr(built, "_tokenizer", None)
    if hasattr(tokenizer, "n_vocab"):  # LangChain's TokenTextSplitter: a tiktoken encoding
        return len(tokenizer.encode(text, allowed_special="all"))
    if hasattr(built, "_length_function"):
        return built._length_function(text)
    return len(tokenizer(text))


ENGINES = [name for name in SPLITTERS.names() if name.startswith(("llamaindex.", "langchain."))]


def _state(value: Any, depth: int = 0) -> Any:
    """A framework object as comparable data: its fields; a tokenizer or length function by what it gives on a sample."""
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if depth > 4:
        return type(value).__name__
    if isinstance(value, (set, frozenset)):
        return sorted(repr(item) for item in value)
    if isinstance(value, (list, tuple)):
        return [_state(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {key: _state(item, depth + 1) for key, item in value.items()}
    if hasattr(value, "encode") and hasattr(value, "name") and hasattr(value, "n_vocab"):  # a tiktoken Encoding
        return ("encoding", value.name)
    if hasattr(value, "get_text_embedding"):  # an embedding model (the app's cached one, the script's HuggingFace one)
        return ("embedding", [round(x, 3) for x in value.get_text_embedding(SAMPLE)])
    if hasattr(value, "embed_query"):  # LangChain's Embeddings (the app's cached one, the script's HuggingFace one)
        return ("embedding", [round(x, 3) for x in value.embed_query(SAMPLE)])
    if callable(value) and getattr(type(value), "model_fields", None) is None and not isinstance(value, type):
        try:
            result = value(SAMPLE)
        except Exception:
            return "<callable>"
        return _state(result if isinstance(result, (str, int)) else list(result), depth + 1)
    fields = getattr(type(value), "model_fields", None)
    if fields is not None:  # a pydantic model (LlamaIndex): its fields and its private attributes (the tokenizer)
        names = [*fields, *(getattr(value, "__pydantic_private__", None) or {})]
    else:
        names = list(getattr(value, "__dict__", {}))
    skipped = {"callback_manager", "id_func"}
    return {key: _state(getattr(value, key), depth + 1) for key in names if key not in skipped}


@pytest.mark.parametrize("name", ENGINES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_an_engines_exported_object_is_the_one_that_ran(name, data):
    engine_params = data.draw(_param_values(SPLITTERS.get_class(name)))
    try:
        engine = SPLITTERS.create(name, **engine_params)
        ran = engine.build_framework()
    except (ChunkScopeError, ValueError):
        return
    library = engine.framework
    exported = _built(engine, library)
    assert _state(exported) == _state(ran)
