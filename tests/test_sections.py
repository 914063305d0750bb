"""Section paths and the embedding model's allow list: what every node's EMBED view can carry beside its text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.config import PipelineConfig
from core.config_parts import MetadataSettings
from core.documents import prepare_documents, run_split
from core.extractors.sections import SECTION_KEY, add_sections, section_at, section_paths
from core.loaders import load_bytes
from core.schema import MetadataMode
from core.splitters import get_splitter

GUIDE = b"""# Chunking guide

Intro words before any section.

## Overlap

Overlap repeats the end of one chunk at the start of the next.

### Choosing an overlap

Ten to twenty percent of the chunk size is a common start.

## Sizes

Small chunks match questions precisely.
"""


def test_a_section_is_the_titles_of_the_headings_above_joined_outermost_first() -> None:
    headings = [(0, 1, "Guide"), (10, 2, "Overlap"), (20, 3, "Choosing"), (30, 2, "Sizes")]
    paths = section_paths(headings)
    assert paths == ["Guide", "Guide > Overlap", "Guide > Overlap > Choosing", "Guide > Sizes"]
    starts = [start for start, _, _ in headings]
    assert section_at(starts, paths, 25) == "Guide > Overlap > Choosing"
    assert section_at(starts, paths, 30) == "Guide > Sizes"  # a node that opens with its heading is under it
    assert section_at([5], ["Guide"], 0) == ""  # above the first heading: no section


def test_a_heading_of_a_higher_level_closes_every_deeper_one() -> None:
    assert section_paths([(0, 2, "A"), (5, 3, "B"), (9, 1, "C"), (12, 3, "D")]) == ["A", "A > B", "C", "C > D"]


def _naive(headings: list[tuple[int, int, str]], index: int) -> str:
    """The enclosing headings of heading ``index``, found by looking back for each shallower level in turn."""
    chain = [headings[index]]
    for earlier in reversed(headings[:index]):
        if earlier[1] < chain[0][1]:
            chain.insert(0, earlier)
    return " > ".join(title for _, _, title in chain if title)


@given(st.lists(st.tuples(st.integers(1, 6), st.sampled_from(["", "A", "B c", "Ü"])), max_size=30))
def test_the_one_pass_path_equals_looking_back_for_each_enclosing_heading(levels_titles) -> None:
    headings = [(i * 3, level, title) for i, (level, title) in enumerate(levels_titles)]
    assert section_paths(headings) == [_naive(headings, i) for i in range(len(headings))]


def _guide(metadata: MetadataSettings, splitter: str = "sentence", **params):
    config = PipelineConfig(splitter=get_splitter(splitter, **params), metadata=metadata)
    documents = load_bytes(GUIDE, "guide.md")
    return run_split(documents, config)


def test_every_splitter_s_nodes_get_the_section_they_start_in() -> None:
    nodes = _guide(MetadataSettings(section_metadata="llm_and_embed"), "character", chunk_size=70, chunk_overlap=0)
    by_text = {node.text[:20]: node.metadata.get(SECTION_KEY) for node in nodes}
    assert by_text["# Chunking guide\n\nIn"] == "Chunking guide"
    choosing = next(node for node in nodes if node.text.startswith("Ten to twenty"))
    assert choosing.metadata[SECTION_KEY] == "Chunking guide > Overlap > Choosing an overlap"
    assert "section: Chunking guide > Overlap > Choosing an overlap" in choosing.get_content(MetadataMode.LLM)


def test_a_section_for_the_embedding_model_only_leaves_the_llm_view_as_it_was() -> None:
    plain = _guide(MetadataSettings(), chunk_size=40, chunk_overlap=0)
    embed_only = _guide(MetadataSettings(section_metadata="embed"), chunk_size=40, chunk_overlap=0)
    assert [n.text for n in plain] == [n.text for n in embed_only]  # added after the split: the cuts stay
    assert [n.get_content(MetadataMode.LLM) for n in plain] == [n.get_content(MetadataMode.LLM) for n in embed_only]
    sized = [n for n in embed_only if SECTION_KEY in n.metadata]
    assert sized and all(f"section: {n.metadata[SECTION_KEY]}" in n.get_content(MetadataMode.EMBED) for n in sized)


def test_the_allow_list_keeps_only_its_keys_in_the_embed_view_the_splitter_s_too() -> None:
    metadata = MetadataSettings(embed_metadata_keys=("title", "section"), section_metadata="embed")
    nodes = _guide(metadata, "markdown")  # the markdown splitter adds header_path and header_N keys
    node = next(n for n in nodes if n.text.startswith("### Choosing"))
    assert "header_path" in node.metadata
    embed = node.get_content(MetadataMode.EMBED)
    assert embed.split("\n\n")[0] == "title: Chunking guide\nsection: Chunking guide > Overlap > Choosing an overlap"
    assert "file_name" in node.get_content(MetadataMode.LLM)  # the LLM reads what it read


def test_no_keys_allowed_makes_the_embed_view_the_text_alone() -> None:
    nodes = _guide(MetadataSettings(embed_metadata_keys=()), chunk_size=60, chunk_overlap=0)
    assert all(node.get_content(MetadataMode.EMBED) == node.text for node in nodes)


def test_the_defaults_change_no_node() -> None:
    documents = load_bytes(GUIDE, "guide.md")
    before = [node.to_dict() for node in PipelineConfig().splitter.split(prepare_documents(documents, PipelineConfig()))]
    assert [node.to_dict() for node in run_split(documents, PipelineConfig())] == before


def test_a_document_without_headings_gets_no_section_key() -> None:
    documents = load_bytes(b"Plain words. More plain words.", "notes.txt")
    nodes = get_splitter("sentence").split(documents)
    add_sections(nodes, documents)
    assert all(SECTION_KEY not in node.metadata for node in nodes)


def test_the_settings_round_trip_through_json_and_link() -> None:
    config = PipelineConfig(metadata=MetadataSettings(embed_metadata_keys=("title",), section_metadata="embed"))
    assert PipelineConfig.from_json(config.to_json()) == config
    assert PipelineConfig.from_query_params(config.to_query_params()) == config
