"""One escape rule for text a person types: the app's boxes, ``--set`` and a share link read it alike.

``\\n`` is a newline, ``\\t`` a tab, ``\\\\`` one backslash (so ``\\\\n`` is a backslash and an n), any other
backslash stays as typed (a regex's ``\\s``); a config file holds the text itself (JSON's own escapes).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import get_splitter, load
from core.cli.main import main
from core.config import PipelineConfig
from core.config_parts import MetadataSettings
from core.params.typed_text import TYPED_TEXT_RULE, read_typed, write_typed
from core.splitters import SPLITTERS


def config_from_cli(capsys, *argv: str) -> PipelineConfig:
    assert main(["config", *argv]) == 0
    return PipelineConfig.from_json(capsys.readouterr().out)


# -- the rule, as literal examples ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed, meant",
    [
        (r"\n", "\n"),
        (r"\n\n", "\n\n"),
        (r"\t", "\t"),
        (r"\r\n", "\r\n"),
        (r"\\", "\\"),
        (r"\\n", "\\n"),  # a backslash and an n
        (r"\\\n", "\\\n"),  # a backslash, then a newline
        (r"\s+", "\\s+"),  # not an escape: stays, as a regex means it
        (r"\n#{1,3} ", "\n#{1,3} "),
        ("C:\\data", "C:\\data"),
        ("a\\", "a\\"),  # a lone backslash at the end stays
        ("plain", "plain"),
    ],
)
def test_typed_text_reads_as_a_python_string_literal_reads_these_escapes(typed, meant):
    assert read_typed(typed) == meant
    assert read_typed(write_typed(meant)) == meant


def test_a_typed_newline_in_set_is_a_newline_for_every_text_parameter(capsys):
    character = config_from_cli(capsys, "--splitter", "character", "--set", r"separator=\n")
    assert character.splitter.separator == "\n"
    literal = config_from_cli(capsys, "--splitter", "character", "--set", r"separator=\\n")
    assert literal.splitter.separator == "\\n"
    for name in ("recursive", "langchain.recursive"):
        config = config_from_cli(capsys, "--splitter", name, "--set", r"separators=\n\n, \n, \s")
        assert config.splitter.separators == ("\n\n", "\n", "\\s"), name
    view = config_from_cli(capsys, "--view-set", r"metadata_separator=\n---\n")
    assert view.metadata.metadata_separator == "\n---\n"


def test_native_and_langchain_recursive_cut_the_same_chunks_from_the_same_typed_separators(capsys, sample_docs):
    # The trap: langchain.recursive read "\n" typed in --set as a backslash and an n (29 chunks, not 35).
    documents = load(sample_docs / "release_notes.txt")
    chunks = {}
    for name, mode in (("recursive", ["--set", "compat=langchain"]), ("langchain.recursive", [])):
        config = config_from_cli(
            capsys, "--splitter", name, *mode, "--set", "chunk_size=400", "--set", "chunk_overlap=0",
            "--set", r"separators=\n\n, \n",
        )  # fmt: skip
        chunks[name] = [node.text for node in config.splitter.split(documents)]
    assert chunks["recursive"] == chunks["langchain.recursive"]


def test_a_link_writes_text_as_typed_and_reads_it_back(capsys):
    config = PipelineConfig(splitter=get_splitter("recursive", separators=("\n\n", "\n", "\\d")))
    params = config.to_query_params()
    assert params["separators"] == r"\n\n,\n,\d"  # readable in the address bar, the rule's own spelling
    assert PipelineConfig.from_query_params(params) == config


def test_a_version_1_config_reads_the_recursive_splitters_typed_separators_as_it_split_them():
    old = {"version": 1, "splitter": {"name": "recursive", "params": {"separators": ["\\n\\n", "\\n", ". "]}}}
    assert PipelineConfig.from_dict(old).splitter.separators == ("\n\n", "\n", ". ")
    regex = {
        "version": 1,
        "splitter": {"name": "recursive", "params": {"separators": ["\\n#+ "], "is_separator_regex": True}},
    }
    assert PipelineConfig.from_dict(regex).splitter.separators == ("\\n#+ ",)  # a regex means the same either way
    assert json.loads(PipelineConfig.from_dict(old).to_json())["version"] == 2


def test_every_typed_text_parameter_states_the_rule_in_its_help():
    from core.config_parts import RetrievalSettings
    from core.extractors import EXTRACTORS
    from core.loaders import LOADERS
    from core.postprocessors import POSTPROCESSORS

    for registry in (SPLITTERS, LOADERS, EXTRACTORS, POSTPROCESSORS, (MetadataSettings, RetrievalSettings)):
        for cls in registry:
            for spec in cls.params():
                typed = spec.kind in ("str", "str_list") and not spec.choices
                assert (TYPED_TEXT_RULE in spec.help) == typed, (cls.name, spec.name)


# -- the round trip: config JSON, share link and --set keep any text ------------------------------------------------

TEXT = st.text(alphabet=st.sampled_from(["\\", "\n", "\t", "\r", "n", "t", "r", "x", " ", ",", "[", '"']), max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    separator=TEXT.filter(lambda text: text.strip() != "" or text == "\n"),
    items=st.lists(TEXT.filter(str.strip), min_size=1, max_size=4),
)
def test_text_with_backslashes_and_newlines_survives_config_json_link_and_set(separator, items):
    import io
    from contextlib import redirect_stdout

    from core.params.typed_text import format_list

    splitter = SPLITTERS.create("langchain.recursive", separators=tuple(items))
    config = PipelineConfig(splitter=splitter, metadata=MetadataSettings(metadata_separator=separator))
    assert PipelineConfig.from_json(config.to_json()) == config
    assert PipelineConfig.from_query_params(config.to_query_params()) == config
    out = io.StringIO()
    argv = ["config", "--splitter", "langchain.recursive", "--set", f"separators={format_list(items)}",
            "--view-set", f"metadata_separator={write_typed(separator)}"]  # fmt: skip
    with redirect_stdout(out):
        assert main(argv) == 0
    assert PipelineConfig.from_json(out.getvalue()) == config
    url = "?" + urlencode(config.to_query_params())
    with redirect_stdout(io.StringIO()) as again:
        assert main(["config", "--from-url", url]) == 0
    assert PipelineConfig.from_json(again.getvalue()) == config
