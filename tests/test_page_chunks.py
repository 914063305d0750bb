"""The Chunks page through AppTest: metric cards, reader views, node navigation, bad settings."""

from __future__ import annotations

import dataclasses

import apptest_support
import pytest
from apptest_support import shown
from streamlit.testing.v1 import AppTest

from core import MetadataMode, load
from core.config import PipelineConfig
from core.documents import run_split
from core.splitters import SPLITTERS, get_splitter
from core.splitters.hierarchical import leaf_nodes
from ui.documents import SAMPLE_DIR as SAMPLE_DOCS
from ui.documents import sample_files

TIMEOUT = 240
GUIDE = "chunking_guide.md"


def open_chunks(**query: str) -> AppTest:
    return apptest_support.open_page("pages/1_Chunks.py", query, timeout=TIMEOUT)


def show_tab(at: AppTest, name: str) -> AppTest:
    """Open one of the page's tabs (as a click on it does: the page reruns with it open)."""
    at.session_state["chunks.tab"] = name
    at.run()
    assert not at.exception
    return at


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def use_character_splitter(at: AppTest, chunk_size: int, chunk_overlap: int = 50) -> AppTest:
    at.sidebar.selectbox(key="chunks.splitter").set_value("character").run()
    at.sidebar.number_input(key="splitter.character.chunk_overlap").set_value(chunk_overlap).run()
    at.sidebar.number_input(key="splitter.character.chunk_size").set_value(chunk_size).run()
    assert not at.exception
    return at


def expected_nodes(splitter_name: str, doc: str = GUIDE, **params):
    document = load(SAMPLE_DOCS / doc)
    return run_split(document, PipelineConfig(splitter=get_splitter(splitter_name, **params)))


def test_the_chunk_count_card_follows_chunk_size() -> None:
    at = use_character_splitter(open_chunks(), chunk_size=400)
    small = int(metric(at, "Nodes").replace(",", ""))
    assert small == len(expected_nodes("character", chunk_size=400, chunk_overlap=50))
    at.sidebar.number_input(key="splitter.character.chunk_size").set_value(1600).run()
    large = int(metric(at, "Nodes").replace(",", ""))
    assert large == len(expected_nodes("character", chunk_size=1600, chunk_overlap=50))
    assert large < small


def test_only_the_open_tab_is_drawn() -> None:
    at = open_chunks(splitter="sentence")
    nodes = expected_nodes("sentence")
    # The Source tab is open first: the table and the histogram are neither built nor sent.
    assert any("cs-source" in h.proto.body for h in at.get("html"))
    assert not at.get("plotly_chart") and not [d for d in at.dataframe if "first_words" in d.value.columns]

    table = next(d.value for d in show_tab(at, "Node table").dataframe if "first_words" in d.value.columns)
    assert len(table) == len(nodes)
    assert list(table["span"][:2]) == [f"{n.start_char}–{n.end_char}" for n in nodes[:2]]
    assert not any("cs-source" in h.proto.body for h in at.get("html"))

    (histogram,) = show_tab(at, "Sizes").get("plotly_chart")
    assert '"type":"histogram"' in histogram.proto.spec.replace(" ", "")
    assert "chunk size limit: 250" in histogram.proto.spec
    assert "size in model tokens" in histogram.proto.spec  # the unit as a reader says it, not "model"


def test_the_two_views_show_exactly_what_each_reader_gets() -> None:
    at = use_character_splitter(open_chunks(), chunk_size=400)
    nodes = expected_nodes("character", chunk_size=400, chunk_overlap=50)
    at.button(key="chunks.rel.next").click().run()
    selected = next(n for n in nodes if n.id == at.session_state["cs_node_id"])
    assert selected is nodes[1] or selected.id == nodes[1].id
    llm, embed = at.code[0].value, at.code[1].value
    assert llm == selected.get_content(MetadataMode.LLM)
    assert embed == selected.get_content(MetadataMode.EMBED)
    # The loader hides its `encoding` key from both readers; the views show the rest.
    assert "encoding:" not in llm and "file_name: chunking_guide.md" in llm
    assert selected.text in llm
    assert any("Node #1" == h.value for h in at.subheader)


def test_following_links_walks_the_chain() -> None:
    at = use_character_splitter(open_chunks(), chunk_size=400)
    nodes = expected_nodes("character", chunk_size=400, chunk_overlap=50)
    at.button(key="chunks.rel.next").click().run()
    at.button(key="chunks.rel.next").click().run()
    assert at.session_state["cs_node_id"] == nodes[2].id
    at.button(key="chunks.rel.prev").click().run()
    assert at.session_state["cs_node_id"] == nodes[1].id
    assert at.button(key="chunks.rel.parent").disabled  # a flat chain has no parents


def test_overlap_not_below_size_shows_the_sentence_not_a_traceback() -> None:
    at = open_chunks()
    at.sidebar.selectbox(key="chunks.splitter").set_value("character").run()
    at.sidebar.number_input(key="splitter.character.chunk_size").set_value(100).run()
    at.sidebar.number_input(key="splitter.character.chunk_overlap").set_value(100).run()
    assert not at.exception
    errors = " ".join(shown(e.value) for e in at.error)
    assert "chunk_overlap (100) must be smaller than chunk_size (100)" in errors
    assert not at.metric  # nothing is drawn from invalid settings


def test_a_long_embed_view_warns_that_its_tail_is_invisible() -> None:
    at = use_character_splitter(open_chunks(), chunk_size=3000, chunk_overlap=0)
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert "invisible to retrieval" in warnings


def test_a_shared_link_opens_the_page_with_its_settings() -> None:
    at = open_chunks(splitter="character", chunk_size="500", chunk_overlap="0")
    assert at.sidebar.selectbox(key="chunks.splitter").value == "character"
    assert at.sidebar.number_input(key="splitter.character.chunk_size").value == 500
    assert int(metric(at, "Nodes")) == len(expected_nodes("character", chunk_size=500, chunk_overlap=0))


def test_hierarchical_nodes_show_their_tree_and_follow_parent_links() -> None:
    at = open_chunks(splitter="hierarchical", chunk_sizes="512,128", chunk_overlap="10")
    assert "Parent / child tree" in [t.label for t in at.tabs]
    nodes = expected_nodes("hierarchical", chunk_sizes=(512, 128), chunk_overlap=10)
    # The cards describe the leaves, what is embedded and searched; the parents are counted beside.
    (card,) = [m for m in at.metric if m.label == "Nodes"]
    assert int(card.value.replace(",", "")) == len(leaf_nodes(nodes))
    assert card.delta == f"+ {len(nodes) - len(leaf_nodes(nodes))} parents"
    (size,) = [m for m in at.metric if m.label == "Mean size"]
    assert "a leaf's limit is 128 (a parent's 512)" in size.help
    # It opens on the first leaf, what gets embedded, not on the root the model would read cut.
    leaf = leaf_nodes(nodes)[0]
    assert at.session_state["cs_node_id"] == leaf.id != nodes[0].id
    assert not [w for w in at.warning if "invisible" in shown(w.value) or "truncat" in shown(w.value)]
    at.button(key="chunks.rel.parent").click().run()
    assert at.session_state["cs_node_id"] == leaf.parent_id
    at.button(key=f"chunks.rel.child.{leaf.id}").click().run()
    assert at.session_state["cs_node_id"] == leaf.id


def test_sentence_window_marks_the_window_in_the_source() -> None:
    at = open_chunks(splitter="sentence_window", window_size="2")
    at.button(key="chunks.rel.next").click().run()
    source = next(h.proto.body for h in at.get("html") if 'class="cs-source"' in h.proto.body)
    assert "mk-window" in source and "mk-focus" in source


# The splitters that embed every sentence group are drawn by the test after this one.
@pytest.mark.parametrize("name", [cls.name for cls in SPLITTERS if not cls.embeds_text])
def test_every_splitter_draws_with_its_defaults(name: str) -> None:
    # The engines that read HTML markup are shown on the HTML sample (on Markdown they find no tags), the code
    # engine on the Python sample (it refuses a file with no tree-sitter grammar).
    doc = "vector_search_faq.html" if getattr(SPLITTERS.get_class(name), "reads_markup", False) else GUIDE
    doc = "chunk_stats.py" if name == "llamaindex.code" else doc
    at = open_chunks(splitter=name, doc=doc)
    assert at.sidebar.selectbox(key="chunks.splitter").value == name
    nodes = expected_nodes(name, doc)
    assert int(metric(at, "Nodes").replace(",", "")) == len(leaf_nodes(nodes))  # a hierarchy's cards: its leaves
    # The page opens on the first node that gets embedded (a hierarchy's first leaf).
    assert at.code[0].value == leaf_nodes(nodes)[0].get_content(MetadataMode.LLM)


@pytest.mark.model
@pytest.mark.parametrize("name", ["semantic", "llamaindex.semantic", "langchain.semantic"])
def test_semantic_splits_plot_the_distances_with_the_threshold(name: str) -> None:
    at = open_chunks(splitter=name)
    assert int(metric(at, "Nodes").replace(",", "")) == len(expected_nodes(name, GUIDE))
    assert "Semantic distances" in [t.label for t in at.tabs]
    charts = show_tab(at, "Semantic distances").get("plotly_chart")
    assert any("threshold" in chart.proto.spec for chart in charts)


@pytest.mark.model
def test_chonkies_semantic_chunker_plots_its_similarity_and_says_its_own_rule() -> None:
    # chonkie cuts at low points of a smoothed similarity at or below a threshold, not where a distance is high:
    # the tab draws that curve and its caption says that rule.
    at = open_chunks(splitter="chonkie.semantic")
    assert not at.exception, at.exception
    nodes = expected_nodes("chonkie.semantic", GUIDE)
    assert int(metric(at, "Nodes").replace(",", "")) == len(nodes) > 1
    assert "Semantic distances" in [t.label for t in at.tabs]
    at = show_tab(at, "Semantic distances")
    spec = next(chart.proto.spec for chart in at.get("plotly_chart") if "threshold" in chart.proto.spec)
    assert "smoothed similarity" in spec and "cosine similarity" in spec
    caption = next(c.value for c in at.caption if "breakpoints" in c.value)
    assert "low point of the smoothed similarity" in caption and "rises above" not in caption
    assert f"{len(nodes) - 1} breakpoints" in caption  # the guide at the defaults: no chunk is cut for size


def test_the_first_screen_is_healthy_with_the_shipped_model() -> None:
    # Defaults fit all-MiniLM-L6-v2's window: no chunk is cut off by the embedder, no truncation warning.
    at = open_chunks()
    assert at.sidebar.selectbox(key="chunks.splitter").value == "hierarchical"  # the recommended configuration
    assert metric(at, "Over window") == "0%"
    assert not [w for w in at.warning if "invisible to retrieval" in w.value]


def test_a_frameworks_defaults_are_one_click_away_and_named() -> None:
    at = open_chunks(splitter="sentence")
    llamaindex = next(b for b in at.sidebar.button if b.label == "LlamaIndex SentenceSplitter's defaults")
    llamaindex.click().run()
    assert at.sidebar.number_input(key="splitter.sentence.chunk_size").value == 1024
    assert at.sidebar.number_input(key="splitter.sentence.chunk_overlap").value == 200
    assert at.session_state["cs_config"].splitter.chunk_size == 1024
    assert metric(at, "Over window") != "0%"  # what LlamaIndex's default costs with this model, in plain sight
    next(b for b in at.sidebar.button if b.label == "ChunkScope's defaults").click().run()
    assert at.sidebar.number_input(key="splitter.sentence.chunk_size").value == 250


def test_an_overlap_that_is_most_of_the_chunk_is_warned_about() -> None:
    at = use_character_splitter(open_chunks(), chunk_size=256, chunk_overlap=200)
    warnings = [shown(w.value) for w in at.warning]
    assert any(w.startswith("chunk_overlap (200) is 78% of chunk_size (256)") for w in warnings), warnings
    at.sidebar.number_input(key="splitter.character.chunk_overlap").set_value(50).run()
    assert not [w for w in at.warning if "chunk_overlap" in shown(w.value)]


def test_a_link_opens_on_the_document_it_names() -> None:
    at = open_chunks(doc="release_notes.txt")
    assert at.sidebar.selectbox(key="chunks.doc").value.startswith("release_notes.txt")


def test_a_link_naming_a_document_not_in_this_session_says_so_and_offers_the_upload() -> None:
    at = apptest_support.AppTest.from_file(str(apptest_support.ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["doc"] = "quarterly_report.pdf"
    at.run()
    assert not at.exception
    (warning,) = [shown(w.value) for w in at.warning if "quarterly_report.pdf" in shown(w.value)]
    assert "not loaded in this session" in warning
    assert any(link.label == "Upload it on the Documents page" for link in at.get("page_link"))


def test_a_heading_splitter_on_a_document_without_headings_says_so_and_the_scope_is_named() -> None:
    at = open_chunks(doc="release_notes.txt")
    at.sidebar.selectbox(key="chunks.splitter").set_value("html").run()
    assert not at.exception
    (warning,) = [shown(w.value) for w in at.warning if "cuts at headings" in shown(w.value)]
    assert "release_notes.txt (text) has none" in warning and "one node" in warning
    (scope,) = [shown(c.value) for c in at.caption if "the session's" in shown(c.value)]
    assert f"all {len(sample_files())} loaded documents" in scope and "rag_handbook.pdf" in scope
    assert "chunking_guide.md" not in scope  # it has headings: the html splitter suits it


def test_a_size_splitter_suits_every_document() -> None:
    at = open_chunks()
    assert not [w for w in at.warning if "cuts at headings" in shown(w.value)]
    (scope,) = [shown(c.value) for c in at.caption if "the session's" in shown(c.value)]
    assert "does not suit" not in scope


def test_a_framework_split_counts_its_rewritten_chunks_and_shows_what_changed() -> None:
    at = open_chunks(splitter="langchain.markdown_header")
    nodes = expected_nodes("langchain.markdown_header")
    rewritten = [node for node in nodes if node.metadata["span_status"] == "rewritten"]
    assert rewritten  # LangChain moves each header line into metadata
    assert f"{len(rewritten)} rewritten" in " ".join(shown(c.value) for c in at.caption)
    at.selectbox(key="chunks.node").set_value(rewritten[0].id).run()
    assert not at.exception
    titles = [e.label for e in at.expander]
    assert any(t.startswith("Rewritten by the framework") for t in titles)
    assert "<del>" in " ".join(h.proto.body for h in at.get("html"))


def test_too_many_nodes_to_list_are_opened_by_number(monkeypatch: pytest.MonkeyPatch) -> None:
    from ui import chunks_view

    # A list of every node is ~80 bytes per node sent on every rerun: past the limit, a number box.
    monkeypatch.setattr(chunks_view, "PICKER_LIST_MAX", 3)
    at = use_character_splitter(open_chunks(), chunk_size=400)
    nodes = expected_nodes("character", chunk_size=400, chunk_overlap=50)
    assert len(nodes) > 3
    assert not [s for s in at.selectbox if s.key == "chunks.node"]
    box = at.number_input(key="chunks.node_number")
    assert (box.value, box.max) == (0, len(nodes) - 1)
    box.set_value(3).run()
    assert at.session_state["cs_node_id"] == nodes[3].id
    assert any(h.value == "Node #3" for h in at.subheader)
    at.button(key="chunks.rel.next").click().run()  # the box follows a node opened another way
    assert at.number_input(key="chunks.node_number").value == 4


def test_few_nodes_are_listed_by_their_first_words() -> None:
    at = use_character_splitter(open_chunks(), chunk_size=400)
    nodes = expected_nodes("character", chunk_size=400, chunk_overlap=50)
    picker = at.selectbox(key="chunks.node")
    assert picker.options[0].startswith("#0 · ") and len(picker.options) == len(nodes)


def test_the_metric_cards_sit_three_to_a_row_so_no_value_is_cut_at_1280_px() -> None:
    # Six to a row left each card ~90 px wide at 1280: "100.0%" showed as "100…".
    at = open_chunks()
    cards = {metric.label: column.weight for column in at.columns for metric in column.metric}
    assert list(cards) == ["Nodes", "Mean size", "Coverage", "Overlap", "Mid-sentence", "Over window"]
    assert list(cards.values()) == pytest.approx([1 / 3] * 6)


# -- what a reader is told in words (issue 45's small things) ----------------------------


def test_a_one_page_document_has_1_page() -> None:
    at = open_chunks(doc="scanned_handbook_page.pdf")
    (caption,) = [shown(c.value) for c in at.caption if "characters ·" in shown(c.value)]
    assert "· 1 page ·" in caption and "1 pages" not in caption


def test_loader_options_name_the_format_as_people_write_it() -> None:
    at = open_chunks(doc="rag_handbook.pdf")
    labels = [e.label for e in at.sidebar.expander]
    assert "Loader options · PDF" in labels, labels
    assert "OCR" in [n.label for n in at.sidebar.selectbox] + [n.label for n in at.sidebar.number_input], labels


def test_a_field_left_unset_says_what_unset_means() -> None:
    at = open_chunks(splitter="semantic")
    notes = [shown(c.value) for c in at.sidebar.caption]
    assert "Empty: the type's default (percentile 95, standard deviation 3, interquartile 1.5, gradient 95)." in notes
    assert "0: no limit." in notes


def test_the_code_splitter_on_prose_says_why_its_overlap_is_high() -> None:
    at = open_chunks(splitter="code")
    assert float(metric(at, "Overlap").rstrip("%")) > 50
    (warning,) = [shown(w.value) for w in at.warning if "chunk_lines_overlap" in shown(w.value)]
    assert warning.startswith("The lines of chunking_guide.md are long for code")


def test_over_window_counts_only_what_is_embedded() -> None:
    at = open_chunks(splitter="hierarchical", chunk_sizes="2048,512,128")
    nodes = expected_nodes("hierarchical", chunk_sizes=(2048, 512, 128))
    document = load(SAMPLE_DOCS / GUIDE)
    from core.measure.metrics import chunk_metrics

    # The parents are longer than the model reads (11 of the 60 nodes), the leaves are not: 0%, not 18%.
    as_if_embedded = [dataclasses.replace(node, relationships={}) for node in nodes]
    assert chunk_metrics(document, as_if_embedded, tokenizer="model").over_window > 0.1
    assert chunk_metrics(document, leaf_nodes(nodes), tokenizer="model").over_window == 0
    assert metric(at, "Over window") == "0%"
