"""PipelineConfig: hashable, and the same after a trip through a dict, JSON or a URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core import Document, MetadataMode, config_parts, get_splitter
from core.config import PipelineConfig
from core.config_parts import MetadataSettings, RetrievalSettings, default_splitter_name
from core.documents import apply_metadata_settings, run_split
from core.errors import ConfigError
from core.extractors import get_extractor
from core.loaders import LOADERS
from core.splitters import SPLITTERS


def _config(**changes) -> PipelineConfig:
    base = {"splitter": get_splitter("character", chunk_size=300, chunk_overlap=20)}
    return PipelineConfig(**{**base, **changes})


def _rich_config() -> PipelineConfig:
    return _config(
        loaders=(LOADERS.create("pdf", extraction_mode="layout"),),
        metadata=MetadataSettings(
            metadata_template="{key}=>{value}",
            metadata_separator="::",
            excluded_llm_metadata_keys=("file_name",),
            extra=(("author", "Ada"), ("team", "search")),
        ),
        extractors=(get_extractor("title"), get_extractor("keywords", keywords=8)),
        retrieval=RetrievalSettings(top_k=8, mode="dense", returns="merged"),
    )


def test_configs_are_hashable_and_equal_configs_share_a_key():
    a, b = _rich_config(), _rich_config()
    assert a == b and hash(a) == hash(b) and a.key() == b.key()
    assert {a: 1}[b] == 1
    assert a.key() != _config().key()


def test_to_dict_round_trips():
    config = _rich_config()
    assert PipelineConfig.from_dict(config.to_dict()) == config
    assert PipelineConfig.from_json(config.to_json()) == config


def test_url_form_is_compact_and_readable():
    params = _config().to_query_params()
    assert params == {"splitter": "character", "chunk_size": "300", "chunk_overlap": "20"}


def test_url_form_names_every_section():
    params = _rich_config().to_query_params()
    assert params["loader.pdf.extraction_mode"] == "layout"
    assert params["meta.author"] == "Ada"
    assert params["view.metadata_template"] == "{key}=>{value}"
    assert params["view.excluded_llm_metadata_keys"] == "file_name"
    assert params["extractors"] == "title,keywords"
    assert params["extractor.keywords.keywords"] == "8"
    assert params["retrieval.mode"] == "dense" and params["retrieval.returns"] == "merged"


def test_url_round_trips_through_a_real_query_string():
    config = _rich_config()
    query = urlencode(config.to_query_params())
    assert PipelineConfig.from_query_params(parse_qs(query, keep_blank_values=True)) == config


@pytest.mark.parametrize(
    "params, message",
    [
        ({"splitter": "character", "chunk_size": "-5"}, "chunk_size must be at least 1"),
        ({"splitter": "character", "chunk_size": "big"}, "chunk_size must be a whole number"),
        ({"splitter": "character", "chunk_size": "100", "chunk_overlap": "100"}, "must be smaller than chunk_size"),
        ({"splitter": "nope"}, "unknown splitter 'nope'"),
        ({"splitter": "character", "warp": "9"}, "unknown parameter 'warp'"),
        ({"splitter": "character", "retrieval.top_k": "0"}, "top_k must be at least 1"),
        ({"splitter": "character", "view.text_template": "{metadata_str}"}, "must contain {content}"),
        ({"splitter": "character", "view.metadata_template": "{key} {oops}"}, "metadata_template may only use"),
        ({"splitter": "character", "strange.key": "1"}, "not a ChunkScope setting"),
        ({"splitter": "character", "extractor.title.max_chars": "50"}, "not in extractors="),
    ],
)
def test_strict_links_raise_naming_the_parameter(params, message):
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("}", r"\}").replace("(", r"\(")):
        PipelineConfig.from_query_params(params)


def test_lenient_links_drop_bad_values_with_one_warning_each():
    config, warnings = PipelineConfig.from_query_params(
        {"splitter": "character", "chunk_size": "400", "chunk_overlap": "-1", "retrieval.top_k": "x", "doc": "a.md"},
        lenient=True,
        ignore=("doc",),
    )
    assert config.splitter.chunk_size == 400 and config.splitter.chunk_overlap == 200
    assert config.retrieval.top_k == 5
    assert len(warnings) == 2
    assert any("chunk_overlap must be at least 0" in w for w in warnings)
    assert any("top_k must be a whole number" in w for w in warnings)


def test_lenient_links_keep_values_that_only_fit_together():
    # chunk_size=100 fails next to the default overlap (200) but fits with the link's overlap.
    config, warnings = PipelineConfig.from_query_params(
        {"splitter": "character", "chunk_size": "100", "chunk_overlap": "10"}, lenient=True
    )
    assert (config.splitter.chunk_size, config.splitter.chunk_overlap, warnings) == (100, 10, [])


def test_lenient_unknown_splitter_falls_back_to_a_known_one():
    config, warnings = PipelineConfig.from_query_params({"splitter": "nope", "chunk_size": "10"}, lenient=True)
    assert config.splitter.name == default_splitter_name() == "hierarchical"
    assert any("unknown splitter 'nope'" in w for w in warnings)


def test_loaders_at_their_defaults_are_not_kept():
    assert _config(loaders=(LOADERS.create("pdf"),)) == _config()


def test_metadata_settings_reach_every_view():
    """The issue's spec example, applied through a config instead of by hand."""
    document = Document(
        text="This is a super-customized document",
        metadata={"file_name": "super_secret_document.txt", "category": "finance"},
    )
    config = _config(
        metadata=MetadataSettings(
            excluded_llm_metadata_keys=("file_name",),
            metadata_separator="::",
            metadata_template="{key}=>{value}",
            text_template="Metadata: {metadata_str}\n-----\nContent: {content}",
            extra=(("author", "LlamaIndex"),),
        )
    )
    [prepared] = apply_metadata_settings([document], config)
    assert document.metadata == {"file_name": "super_secret_document.txt", "category": "finance"}  # not mutated
    expected = "Metadata: category=>finance::author=>LlamaIndex\n-----\nContent: This is a super-customized document"
    assert prepared.get_content(MetadataMode.LLM) == expected
    [node] = run_split([document], config)
    assert node.get_content(MetadataMode.LLM) == expected
    assert node.get_content(MetadataMode.EMBED).startswith("Metadata: file_name=>super_secret_document.txt::")


def test_unset_excluded_keys_keep_what_the_loader_chose():
    document = Document(text="Some text here.", metadata={"encoding": "utf-8", "topic": "x"})
    document.excluded_llm_metadata_keys = ["encoding"]
    [prepared] = apply_metadata_settings([document], _config())
    assert prepared.excluded_llm_metadata_keys == ["encoding"]
    [cleared] = apply_metadata_settings([document], _config(metadata=MetadataSettings(excluded_llm_metadata_keys=())))
    assert cleared.excluded_llm_metadata_keys == []


def test_run_split_adds_extractor_keys_to_every_node():
    document = Document(text="# Release notes\n\nThe retriever got faster. The retriever got smaller too.")
    nodes = run_split([document], _config(extractors=(get_extractor("title"),)))
    assert nodes and all(node.metadata["document_title"] == "Release notes" for node in nodes)


_values = st.integers(min_value=-5, max_value=3000).map(str) | st.text(max_size=5)


@given(size=_values, overlap=_values, top_k=_values)
def test_lenient_reading_never_raises_and_strict_agrees_when_clean(size, overlap, top_k):
    params = {"splitter": "character", "chunk_size": size, "chunk_overlap": overlap, "retrieval.top_k": top_k}
    config, warnings = PipelineConfig.from_query_params(params, lenient=True)
    if not warnings:
        assert PipelineConfig.from_query_params(params) == config
    # Whatever was kept re-encodes to a link that reads back strictly.
    assert PipelineConfig.from_query_params(config.to_query_params()) == config


@given(
    extra=st.dictionaries(
        st.text(min_size=1, max_size=8).filter(lambda s: s.strip()), st.text(max_size=12), max_size=4
    ),
    separator=st.text(max_size=3),
)
def test_metadata_round_trips_through_the_url(extra, separator):
    config = _config(metadata=MetadataSettings(metadata_separator=separator, extra=tuple(extra.items())))
    assert (
        PipelineConfig.from_query_params(parse_qs(urlencode(config.to_query_params()), keep_blank_values=True))
        == config
    )


def test_the_default_config_is_the_recommended_one_leaves_searched_and_parents_read():
    config = PipelineConfig()
    assert config.splitter == SPLITTERS.create("hierarchical", chunk_sizes=(2048, 250), chunk_overlap=20)
    assert (config.retrieval.mode, config.retrieval.returns, config.retrieval.top_k) == ("hybrid", "parents", 5)
    assert config.to_query_params() == {"splitter": "hierarchical"}


def test_without_the_default_splitter_a_run_falls_back_to_the_first_registered(monkeypatch):
    assert default_splitter_name() == "hierarchical"
    monkeypatch.setattr(config_parts, "DEFAULT_SPLITTER", "not-installed")
    assert default_splitter_name() == SPLITTERS.names()[0] == "character"
    assert PipelineConfig().splitter.name == "character"


# ---------------------------------------------------------------- templates

_TEXT_FIELDS = r"may only use \{metadata_str\} and \{content\}"
_PAIR_FIELDS = r"may only use \{key\} and \{value\}"


@pytest.mark.parametrize(
    "view",
    [
        {"text_template": "{metadata_str}\n\n{content}"},
        {"text_template": "{content}"},
        {"text_template": "Metadata: {metadata_str}\n-----\nContent: {content}"},
        {"text_template": "{{literal}} {content} }}{{"},
        {"text_template": "x" * 991 + "{content}"},
        {"metadata_template": "{key}={value}"},
        {"metadata_template": ""},
        {"metadata_template": "{{{key}}}: {value}"},
        {"metadata_separator": " | "},
        {"metadata_separator": "{0:>99}"},
        {"metadata_separator": "-" * 1000},
    ],
)
def test_plain_templates_are_accepted(view):
    settings = MetadataSettings.from_params(view)
    assert {key: getattr(settings, key) for key in view} == view


@pytest.mark.parametrize(
    "view, message",
    [
        (
            {"text_template": "{content:>99999999999}{content}"},
            _TEXT_FIELDS + r".*'\{content:>99999999999\}' has a format spec",
        ),
        ({"text_template": "{content:>9}"}, r"'\{content:>9\}' has a format spec"),
        ({"text_template": "{content:{metadata_str}}"}, r"'\{content:\{metadata_str\}\}' has a format spec"),
        ({"text_template": "{content!r}"}, r"'\{content!r\}' has a conversion"),
        ({"text_template": "{content.x}"}, r"'\{content.x\}' reads an attribute or index"),
        ({"text_template": "{content[0]}"}, r"'\{content\[0\]\}' reads an attribute or index"),
        ({"text_template": "{} {content}"}, r"'\{\}' is positional"),
        ({"text_template": "{0} {content}"}, r"'\{0\}' is positional"),
        ({"text_template": "{content}{content}"}, r"'\{content\}' appears more than once"),
        ({"text_template": "{{content}}"}, r"must contain \{content\}"),
        ({"text_template": "{content"}, r"is not a valid template \(expected '}' before end of string;"),
        ({"text_template": "} {content}"}, r"is not a valid template \(Single '}' encountered"),
        ({"text_template": "x" * 992 + "{content}"}, r"is 1,001 characters long, more than the limit of 1,000"),
        ({"metadata_template": "{key} {oops}"}, _PAIR_FIELDS + r".*unknown field 'oops'"),
        ({"metadata_template": "{value:99999999}"}, _PAIR_FIELDS + r".*'\{value:99999999\}' has a format spec"),
        ({"metadata_template": "{key!s}: {value}"}, r"'\{key!s\}' has a conversion"),
        ({"metadata_separator": "-" * 1001}, r"is 1,001 characters long, more than the limit of 1,000"),
    ],
)
def test_templates_beyond_plain_fields_are_refused_in_one_line(view, message):
    [name] = view
    with pytest.raises(ConfigError, match=f"^metadata: {name} .*{message}") as caught:
        MetadataSettings.from_params(view)
    assert "\n" not in str(caught.value)


def test_a_refused_field_is_quoted_on_one_short_line():
    with pytest.raises(ConfigError) as caught:
        MetadataSettings.from_params({"text_template": "{content:\n" + "9" * 500 + "}"})
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200


def test_a_huge_width_in_a_share_link_is_a_warning_and_changes_nothing():
    params = {
        "splitter": "character",
        "view.text_template": "{content:>99999999999}{content}",
        "view.metadata_separator": " | ",
    }
    config, warnings = PipelineConfig.from_query_params(params, lenient=True)
    assert config.metadata == MetadataSettings(metadata_separator=" | ")
    assert warnings == [
        "metadata: text_template may only use {metadata_str} and {content} (write {{ for a brace): "
        "'{content:>99999999999}' has a format spec"
    ]
    with pytest.raises(ConfigError, match="has a format spec"):
        PipelineConfig.from_query_params(params)


def test_the_same_refusal_from_a_json_config():
    with pytest.raises(ConfigError, match=r"'\{content!r\}' has a conversion"):
        PipelineConfig.from_dict({"metadata": {"text_template": "{content!r}"}})


def test_literal_braces_render_as_single_braces():
    document = Document(text="Body.", metadata={"k": "v"})
    settings = MetadataSettings(metadata_template="{{{key}}}={value}", text_template="{{ {metadata_str} }} {content}")
    [prepared] = apply_metadata_settings([document], _config(metadata=settings))
    assert prepared.get_content(MetadataMode.ALL) == "{ {k}=v } Body."


def _templates(fields: tuple[str, str]) -> st.SearchStrategy[str]:
    # Mostly plain fields and literal text, so that many drawn templates are accepted.
    plain = ["{" + name + "}" for name in fields]
    hostile = ["{" + fields[0] + ":>60}", "{" + fields[1] + "!r}", "{}", "{0}", "{" + fields[0] + ".x}", "{", "}"]
    literal = st.text(st.characters(exclude_characters="{}"), max_size=6)
    pieces = st.sampled_from(plain * 4 + ["{{", "}}"] + hostile) | literal
    return st.lists(pieces, max_size=5).map("".join) | st.text(max_size=12)


@given(
    text_template=_templates(("content", "metadata_str")),
    metadata_template=_templates(("value", "key")),
    separator=st.text(max_size=3),
    metadata=st.dictionaries(st.text(min_size=1, max_size=6), st.text(max_size=20), max_size=4),
    body=st.text(max_size=40),
)
@example(text_template="{content:>60}{content}", metadata_template="{key}", separator="", metadata={"a": "b"}, body="x")
@example(text_template="{content}", metadata_template="{value:>60}", separator="", metadata={"a": "b"}, body="x")
def test_accepted_templates_render_within_the_template_plus_each_value_once(
    text_template, metadata_template, separator, metadata, body
):
    view = {"text_template": text_template, "metadata_template": metadata_template, "metadata_separator": separator}
    try:
        settings = MetadataSettings.from_params(view)
    except ConfigError:
        return
    [document] = apply_metadata_settings([Document(text=body, metadata=metadata)], _config(metadata=settings))
    metadata_str = document.get_metadata_str(MetadataMode.ALL)
    pairs = sum(len(metadata_template) + len(key) + len(value) for key, value in metadata.items())
    assert len(metadata_str) <= pairs + len(separator) * len(metadata)
    rendered = document.get_content(MetadataMode.ALL)
    assert len(rendered) <= len(text_template) + len(metadata_str) + len(body)
