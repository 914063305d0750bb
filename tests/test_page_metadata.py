"""AppTest: the Metadata page's live preview shows exactly what each reader gets."""

from __future__ import annotations

from pathlib import Path

import apptest_support
import pytest
from apptest_support import shown
from streamlit.testing.v1 import AppTest

from core.config import PipelineConfig
from core.config_parts import MetadataSettings
from core.documents import run_split
from core.loaders import load
from core.schema import MetadataMode
from core.splitters import get_splitter
from ui.metadata import applied_config, build_settings, chosen_exclusions, draft_metadata, extra_from_rows

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "sample_docs" / "chunking_guide.md"
PAGE = "pages/2_Metadata.py"


def open_page(query: dict[str, str] | None = None) -> AppTest:
    return apptest_support.open_page(PAGE, apptest_support.SENTENCE if query is None else query)


def expected_first_node(config: PipelineConfig):
    document = load(GUIDE)[0]
    return run_split([document], config)[0]


def views(at: AppTest) -> tuple[str, str]:
    """The LLM view and the EMBED view, in the order the page shows them."""
    return at.code[0].value, at.code[1].value


def current_config(at: AppTest) -> PipelineConfig:
    # The session keeps the config itself under ui.state's key (absent: the defaults).
    if "cs_config" not in at.session_state:
        return PipelineConfig()
    return at.session_state["cs_config"]


@pytest.fixture(scope="module")
def page() -> AppTest:
    return open_page()


def test_preview_shows_both_views_of_the_first_node(page):
    node = expected_first_node(PipelineConfig(splitter=get_splitter("sentence")))  # the page opens on it
    llm, embed = views(page)
    assert llm == node.get_content(MetadataMode.LLM)
    assert embed == node.get_content(MetadataMode.EMBED)
    assert "file_name: chunking_guide.md" in llm
    # Token counts are shown above each view.
    assert any("tokens · metadata adds" in caption.value for caption in page.caption)


def test_excluding_a_key_from_the_llm_removes_it_from_the_llm_view_only():
    at = open_page()
    at.multiselect(key="meta.exclude.excluded_llm_metadata_keys").set_value(["encoding", "file_type"]).run()
    llm, embed = views(at)
    assert "file_type: markdown" not in llm
    assert "file_type: markdown" in embed
    config = current_config(at)
    assert config.metadata.excluded_llm_metadata_keys == ("encoding", "file_type")
    assert llm == expected_first_node(config).get_content(MetadataMode.LLM)
    table = at.dataframe[-1].value
    row = table[table["key"] == "file_type"].iloc[0]
    assert (bool(row["LLM sees"]), bool(row["EMBED sees"])) == (False, True)


def test_templates_change_how_metadata_is_written():
    at = open_page()
    at.text_input(key="meta.view.metadata_template").set_value("{key}={value}")
    at.text_input(key="meta.view.metadata_separator").set_value(" | ").run()
    llm, _ = views(at)
    assert (
        llm.splitlines()[0]
        == "file_name=chunking_guide.md | file_type=markdown | title=A Practical Guide to Chunking for RAG"
    )
    assert current_config(at).metadata.metadata_separator == " | "


def test_an_unknown_placeholder_is_refused_with_a_clear_message():
    at = open_page()
    before = views(at)
    at.text_input(key="meta.view.metadata_template").set_value("{key} -> {val}").run()
    messages = [shown(error.value) for error in at.error]
    assert any("metadata_template" in message and "'val'" in message for message in messages), messages
    # The config and the preview keep the last valid settings.
    assert current_config(at).metadata.metadata_template == "{key}: {value}"
    assert views(at) == before


def test_an_extractor_adds_its_key_to_the_preview():
    at = open_page()
    at.toggle(key="meta.extractor.title.on").set_value(True).run()
    llm, _ = views(at)
    assert "document_title: A Practical Guide to Chunking for RAG" in llm
    assert [e.name for e in current_config(at).extractors] == ["title"]
    keys = at.dataframe[-1].value
    assert keys[keys["key"] == "document_title"]["from"].tolist() == ["extractor"]


def test_metadata_from_a_link_shows_in_the_editor_and_both_views():
    at = open_page({"meta.team": "search"})
    editor = at.data_editor[0].value
    assert editor.to_dict("records") == [{"key": "team", "value": "search"}]
    llm, embed = views(at)
    assert "team: search" in llm and "team: search" in embed
    keys = at.dataframe[-1].value
    assert keys[keys["key"] == "team"]["from"].tolist() == ["added here"]


# -- the editor's rows, read literally ------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "pairs", "problem"),
    [
        ([{"key": "team", "value": "search"}], (("team", "search"),), None),
        ([{"key": " team ", "value": None}, {"key": None, "value": None}], (("team", ""),), None),
        ([{"key": "", "value": "orphan"}], (), "Row 1 has a value but no key"),
        ([{"key": "a", "value": "1"}, {"key": "a", "value": "2"}], (("a", "1"),), "The key 'a' is given twice"),
    ],
)
def test_editor_rows_become_pairs_or_one_clear_problem(rows, pairs, problem):
    got_pairs, got_problem = extra_from_rows(rows)
    assert got_pairs == pairs
    assert (got_problem or "").startswith(problem or "")
    assert (got_problem is None) == (problem is None)


def test_exclusions_stay_unset_until_they_differ_from_the_loaders_choice():
    assert chosen_exclusions(["encoding"], None, ["encoding"]) is None
    assert chosen_exclusions(["encoding", "title"], None, ["encoding"]) == ("encoding", "title")
    assert chosen_exclusions(["encoding"], ("encoding", "title"), ["encoding"]) == ("encoding",)


# -- from the page's values to the config ------------------------------------------------


def test_a_draft_takes_the_editors_pairs_or_keeps_the_settings_and_says_why():
    settings = MetadataSettings()
    assert draft_metadata(settings, (("team", "search"),), None) == (
        MetadataSettings(extra=(("team", "search"),)),
        None,
    )
    assert draft_metadata(settings, (("team", "search"),), "Row 2 has a value but no key") == (
        settings,
        "Row 2 has a value but no key",
    )
    kept, problem = draft_metadata(settings, ((" ", "x"),), None)
    assert kept is settings
    assert "non-empty text" in problem


def test_settings_join_templates_exclusions_and_pairs_or_name_the_bad_template():
    exclusions = {"excluded_llm_metadata_keys": ("encoding",), "excluded_embed_metadata_keys": None}
    settings, problem = build_settings({"metadata_template": "{key}={value}"}, exclusions, (("team", "search"),))
    assert problem is None
    assert settings == MetadataSettings(
        metadata_template="{key}={value}", excluded_llm_metadata_keys=("encoding",), extra=(("team", "search"),)
    )
    settings, problem = build_settings({"metadata_template": "{key} -> {val}"}, exclusions, ())
    assert settings is None
    assert "metadata_template" in problem and "'val'" in problem


def test_the_config_changes_only_when_every_setting_is_valid():
    config = PipelineConfig()
    settings = MetadataSettings(metadata_separator=" | ")
    assert applied_config(config, settings, (), valid=True).metadata == settings
    assert applied_config(config, settings, (), valid=False) is config
    assert applied_config(config, None, (), valid=True) is config


def test_key_selectors_have_plain_labels_for_screen_readers(page):
    labels = [box.label for box in page.multiselect if box.key.startswith("meta.exclude.")]
    assert labels == ["Hidden from the LLM", "Hidden from the embedding model"]


def test_the_keys_table_fits_the_right_half_of_the_page_at_1280_px():
    import json

    at = open_page()
    columns = json.loads(at.dataframe[-1].proto.columns)
    fixed = [columns[name]["width"] for name in ("key", "from", "LLM sees", "EMBED sees")]
    # The right half is 488 px wide at 1280 (measured in chromium, see test_browser_layout.py): the other
    # columns leave the value at least 150 px.
    assert sum(fixed) + columns["value"]["width"] <= 488
    assert columns["value"]["width"] >= 150
    assert [columns[name]["label"] for name in ("LLM sees", "EMBED sees")] == ["LLM", "EMBED"]


def test_viewing_another_document_changes_nothing_in_the_configuration():
    """Each document shows its own loader's hidden keys until the person changes them (the PDF's, not the guide's)."""
    at = open_page()
    assert at.selectbox(key="meta.doc").value == load(GUIDE)[0].id  # the page opens on the guide
    document = load(ROOT / "sample_docs" / "rag_handbook.pdf")
    at.selectbox(key="meta.doc").set_value(document[0].id).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="meta.doc").value == document[0].id
    assert current_config(at).metadata == PipelineConfig().metadata  # nothing written for every file
    shown_keys = at.multiselect(key="meta.exclude.excluded_llm_metadata_keys").value
    assert sorted(shown_keys) == sorted(document[0].excluded_llm_metadata_keys)
    first = run_split(document, PipelineConfig(splitter=get_splitter("sentence")))[0]
    assert views(at) == (first.get_content(MetadataMode.LLM), first.get_content(MetadataMode.EMBED))


def test_a_section_path_for_the_embedding_model_and_an_allow_list_change_the_embed_view_only():
    at = open_page()
    llm_before, _ = views(at)
    at.selectbox(key="meta.section").set_value("embed").run()
    at.toggle(key="meta.embed_only.on").set_value(True).run()
    at.multiselect(key="meta.embed_only.keys").set_value(["title", "section"]).run()
    config = current_config(at)
    assert config.metadata.section_metadata == "embed"
    assert config.metadata.embed_metadata_keys == ("title", "section")
    node = expected_first_node(config)
    llm, embed = views(at)
    assert (llm, embed) == (node.get_content(MetadataMode.LLM), node.get_content(MetadataMode.EMBED))
    assert llm == llm_before
    assert embed.startswith("title: A Practical Guide to Chunking for RAG\nsection: A Practical Guide to Chunking for RAG\n\n")
    table = at.dataframe[-1].value
    assert table[table["key"] == "section"].iloc[0]["from"] == "section path"
    # With no key chosen, the embedding model reads the text alone.
    at.multiselect(key="meta.embed_only.keys").set_value([]).run()
    assert views(at)[1] == expected_first_node(current_config(at)).text


def test_a_hierarchys_parent_is_said_to_be_never_embedded_rather_than_truncated():
    at = open_page(PipelineConfig().to_query_params())  # the default: hierarchical, parents returned
    assert not at.exception, at.exception
    # The page opens on the first node, the 2,000-token root: retrieval searches its leaves, never it.
    assert any("A parent: retrieval searches its leaves (returns=parents)" in info.value for info in at.info)
    assert not any("invisible to retrieval" in warning.value for warning in at.warning)
