"""Declared parameters: coercion from strings, bounds and cross-field rules in one place."""

from urllib.parse import parse_qs, urlencode

import pytest
from hypothesis import given, reject
from hypothesis import strategies as st

from core import ConfigError, get_splitter
from core.config import PipelineConfig
from core.config_parts import MetadataSettings
from core.extractors import EXTRACTORS
from core.llm import LLMConnection
from core.loaders import LOADERS
from core.params import ParamSpec
from core.params.typed_text import format_list
from core.postprocessors import POSTPROCESSORS
from core.splitters import SPLITTERS
from ui.widgets import _to_widget_value


def test_strings_are_coerced_like_cli_and_url_values():
    splitter = get_splitter("character", chunk_size="300", chunk_overlap="0", include_metadata="false")
    assert (splitter.chunk_size, splitter.chunk_overlap, splitter.include_metadata) == (300, 0, False)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"chunk_size": "abc"}, "chunk_size must be a whole number"),
        ({"chunk_size": 0}, "chunk_size must be at least 1"),
        ({"chunk_size": -5}, "chunk_size must be at least 1"),
        ({"chunk_size": 10, "chunk_overlap": 10}, "chunk_overlap (10) must be smaller than chunk_size (10)"),
        ({"tokenizer": "bpe"}, "tokenizer must be one of characters, words, model"),
        ({"chunk_size": "nan"}, "chunk_size must be a whole number"),
        ({"no_such": 1}, "unknown parameter 'no_such'"),
    ],
)
def test_bad_values_raise_config_error_naming_the_parameter(params, message):
    with pytest.raises(ConfigError) as excinfo:
        get_splitter("character", **params)
    assert message in str(excinfo.value)


def test_unknown_splitter_lists_known_ones():
    with pytest.raises(ConfigError, match="unknown splitter 'nope'.*character"):
        get_splitter("nope")


def test_every_parameter_is_described_with_help():
    for entry in SPLITTERS.describe():
        assert entry["summary"], entry["name"]
        for spec in entry["params"]:
            assert spec["help"].strip(), (entry["name"], spec["name"])
            assert spec["kind"] in {"int", "float", "bool", "str", "choice", "int_list", "str_list"}


def test_typed_lists_are_stripped_and_json_lists_keep_everything():
    spec = ParamSpec(name="separators", kind="str_list", default=(), help="h")
    assert spec.coerce("h1, h2,  h3") == ("h1", "h2", "h3")
    assert spec.coerce(" a b ,, c ,") == ("a b", "c")  # spaces inside an item stay
    assert spec.coerce(" ,\n") == ()
    # Whitespace items (a separator " ") are written as a JSON list, which is taken as it is.
    assert spec.coerce('["\\n\\n", " ", ""]') == ("\n\n", " ", "")
    assert spec.coerce(["a", ""]) == ("a", "")
    assert ParamSpec(name="sizes", kind="int_list", default=(), help="h").coerce(" 512 ,, 128, ") == (512, 128)


@pytest.mark.parametrize(
    "registry, name, param, typed, expected",
    [
        (SPLITTERS, "html", "headings_to_split_on", "h1, h2, h3", ("h1", "h2", "h3")),
        (POSTPROCESSORS, "keyword", "exclude_keywords", "dotenv_values, environment", ("dotenv_values", "environment")),
        (SPLITTERS, "hierarchical", "chunk_sizes", "1024, 256", (1024, 256)),
    ],
)
def test_a_list_typed_with_spaces_after_the_commas_has_no_spaces(registry, name, param, typed, expected):
    assert getattr(registry.create(name, **{param: typed}), param) == expected


@pytest.mark.parametrize(
    "items, text",
    [
        (("h1", "h2"), "h1, h2"),
        ((2048, 512), "2048, 512"),
        ((), "[]"),
        (("\n\n", " "), '["\\n\\n", " "]'),
        (("a,b",), '["a,b"]'),
        (("[x]",), '["[x]"]'),
        (("none",), '["none"]'),
    ],
)
def test_lists_are_written_as_comma_text_unless_only_json_reads_back_the_same(items, text):
    assert format_list(items) == text


# -- every list parameter: typed text -> value -> every export -> the same value ------------

# Where each kind of component sits in a PipelineConfig, and its URL key (see PipelineConfig.to_query_params).
_LLM = LLMConnection(base_url="http://127.0.0.1:9/v1", model="m")
_PLACES = {
    "splitter": (lambda c: {"splitter": c}, lambda c: c.splitter, lambda cls, p: ({"splitter": cls.name}, p)),
    "loader": (lambda c: {"loaders": (c,)}, lambda c: c.loaders[0], lambda cls, p: ({}, f"loader.{cls.name}.{p}")),
    # An LLM extractor travels with the connection it asks (core.llm): a local endpoint, never contacted here.
    "extractor": (
        lambda c: {"extractors": (c,), **({"llm": _LLM} if c.node_level else {})},
        lambda c: c.extractors[0],
        lambda cls, p: (
            {"extractors": cls.name, **({"llm.base_url": _LLM.base_url, "llm.model": _LLM.model} if cls.node_level else {})},
            f"extractor.{cls.name}.{p}",
        ),
    ),
    "postprocessor": (
        lambda c: {"postprocessors": (c,)},
        lambda c: c.postprocessors[0],
        lambda cls, p: ({"postprocessors": cls.name}, f"postprocessor.{cls.name}.{p}"),
    ),
    "metadata": (lambda c: {"metadata": c}, lambda c: c.metadata, lambda cls, p: ({}, f"view.{p}")),
}
_REGISTRIES = [SPLITTERS, LOADERS, EXTRACTORS, POSTPROCESSORS]
LIST_PARAMS = [
    (registry.kind, cls, spec)
    for registry in _REGISTRIES
    for cls in registry
    for spec in cls.params()
    if spec.kind in ("str_list", "int_list")
] + [("metadata", MetadataSettings, spec) for spec in MetadataSettings.params() if spec.kind == "str_list"]


def test_the_list_parameters_are_all_found():
    names = {(cls.name, spec.name) for _, cls, spec in LIST_PARAMS}
    assert {("html", "headings_to_split_on"), ("keyword", "exclude_keywords"), ("hierarchical", "chunk_sizes")} <= names


# An item as a person types it: no comma (it would end the item), no "[" (a JSON list starts so).
_typed_items = st.text(st.characters(exclude_characters=",[", exclude_categories=("Cs",)), min_size=1, max_size=10)
_padding = st.sampled_from(["", "", " ", "  ", "\t", " \u00a0", "\u3000"])


@st.composite
def _valid_value(draw, cls, spec):
    """A value the component accepts: part of the default, plus perhaps a few items of its own."""
    # Default items a person can type as comma text (a framework's "\n" separator is written as a JSON list).
    default = tuple(item for item in spec.default or () if str(item) == str(item).strip() and "," not in str(item))
    keep = draw(st.lists(st.booleans(), min_size=len(default), max_size=len(default)))
    base = tuple(item for item, kept in zip(default, keep, strict=True) if kept)
    if spec.choices:
        extra_items = st.sampled_from(spec.choices)
    elif spec.kind == "int_list":
        low, high = spec.ge if spec.ge is not None else -1000, spec.le if spec.le is not None else 1000
        extra_items = st.integers(int(low), int(high))
    else:
        extra_items = _typed_items.map(str.strip).filter(lambda s: s and s.lower() not in ("none", "null"))
    extra = tuple(draw(st.lists(extra_items, max_size=3)))
    for candidate in (base + extra, base):
        try:
            cls.from_params({spec.name: list(candidate)})
        except ConfigError:
            continue
        return candidate
    reject()


@st.composite
def _typed(draw, items):
    """``items`` as a person types them: padded with whitespace, maybe with empty items and a trailing comma."""
    pieces = [draw(_padding) + str(item) + draw(_padding) for item in items]
    for _ in range(draw(st.integers(0, 2))):
        pieces.insert(draw(st.integers(0, len(pieces))), draw(_padding))
    return ",".join(pieces) + draw(st.sampled_from(["", ",", ", "]))


@pytest.mark.parametrize("kind, cls, spec", LIST_PARAMS, ids=[f"{cls.name}.{s.name}" for _, cls, s in LIST_PARAMS])
@given(data=st.data())
def test_a_typed_list_survives_every_export_unchanged_and_unpadded(kind, cls, spec, data):
    items = data.draw(_valid_value(cls, spec))
    typed = data.draw(_typed(items))
    expected = None if spec.optional and not items else items
    place, take, url = _PLACES[kind]
    companions, key = url(cls, spec.name)

    # The same text typed into the widget or a CLI --set, and edited into a link.
    component = cls.from_params({spec.name: typed})
    linked = take(PipelineConfig.from_query_params({**companions, key: typed}))
    assert getattr(component, spec.name) == getattr(linked, spec.name) == expected
    assert all(str(item) == str(item).strip() for item in getattr(component, spec.name) or ())

    # Each export reads back as the same component.
    config = PipelineConfig(**place(component))
    assert take(PipelineConfig.from_json(config.to_json())) == component
    link = parse_qs(urlencode(config.to_query_params()), keep_blank_values=True)
    assert take(PipelineConfig.from_query_params(link)) == component
    shown_in_widget = _to_widget_value(spec, getattr(component, spec.name))
    assert cls.from_params({spec.name: shown_in_widget}) == component


@pytest.mark.parametrize("kind", ["str_list", "int_list"])
@given(data=st.data())
def test_any_list_written_as_text_reads_back_exactly(kind, data):
    # Items a person could not type as comma text (whitespace, commas, "[", "none") come back too.
    items = data.draw(st.lists(st.text(max_size=6) if kind == "str_list" else st.integers(), max_size=4))
    for optional in (False, True):
        spec = ParamSpec(name="items", kind=kind, default=(), help="h", optional=optional)
        assert spec.coerce(format_list(items)) == tuple(items)
        assert spec.coerce(format_list(items, separator=",")) == tuple(items)
