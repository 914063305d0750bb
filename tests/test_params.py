"""Declared parameters: coercion from strings, bounds and cross-field rules in one place."""

import pytest

from core import ConfigError, get_splitter
from core.splitters import SPLITTERS


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


def test_str_lists_keep_spaces_and_json_keeps_everything():
    from core.params import ParamSpec

    spec = ParamSpec(name="separators", kind="str_list", default=(), help="h")
    assert spec.coerce(" ,\n") == (" ", "\n")
    assert spec.coerce('["\\n\\n", " ", ""]') == ("\n\n", " ", "")
    assert spec.coerce(["a", ""]) == ("a", "")
