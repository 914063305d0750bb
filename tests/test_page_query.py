"""AppTest: the Query page retrieves, runs the postprocessor chain and shows every stage's trace.

The page runs with the real packaged model. The expected numbers come from
``core`` on the same sample documents with the same (shared, cached) embedder,
so the model is loaded once and each node text is embedded once per test run.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import apptest_support
import pytest
from apptest_support import shown
from streamlit.testing.v1 import AppTest

from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.documents import run_split
from core.embed.embedder import get_embedder
from core.loaders import load
from core.postprocessors import get_postprocessor
from core.postprocessors.rerank import NO_MODEL
from core.query.chain import QueryResult, final_context, run_query
from core.query.retrieval import retrieve
from core.query.trace_view import node_labels
from core.splitters import get_splitter
from core.splitters.hierarchical import leaf_nodes
from ui.documents import sample_files
from ui.query import sample_queries

# The configuration the page opens on (apptest_support.SENTENCE): the sentence splitter at its defaults.
SENTENCE_CONFIG = PipelineConfig(splitter=get_splitter("sentence"))

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/4_Query.py"
TIMEOUT = 600


def open_page(config: PipelineConfig | None = None) -> AppTest:
    """The app opened on a link carrying ``config`` (as a shared link would), then the Query page."""
    query = config.to_query_params() if config else apptest_support.SENTENCE
    at = apptest_support.open_page(PAGE, query, timeout=TIMEOUT)
    assert not at.error, [e.value for e in at.error]
    return at


def sample_nodes(config: PipelineConfig):
    documents = [doc for path in sample_files() for doc in load(path)]
    return leaf_nodes(run_split(documents, config))


def first_query() -> str:
    return sample_queries()[0].query


def stage_tables(at: AppTest):
    """The retrieval table, then one table per stage, in page order."""
    return [frame.value for frame in at.dataframe]


def funnel_counts(at: AppTest) -> list[int]:
    figures = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    funnels = [figure for figure in figures if figure["data"][0]["type"] == "funnel"]
    assert len(funnels) == 1
    return funnels[0]["data"][0]["x"]


# -- similarity cutoff + long-context reorder ------------------------------------------


@pytest.fixture(scope="module")
def cutoff_run() -> tuple[AppTest, QueryResult, dict[str, str]]:
    """The page with a cutoff between the 3rd and 4th retrieved scores, then a reorder."""
    base = SENTENCE_CONFIG
    nodes = sample_nodes(base)
    embedder = get_embedder()
    scores = [item.score for item in retrieve(nodes, first_query(), embedder=embedder, retrieval=RetrievalSettings(top_k=5))]
    assert scores[2] > scores[3], "the sample query needs distinct 3rd and 4th scores"
    cutoff = round((scores[2] + scores[3]) / 2, 6)
    chain = (get_postprocessor("similarity_cutoff", similarity_cutoff=cutoff), get_postprocessor("long_context_reorder"))
    config = base.replace(postprocessors=chain)
    expected = run_query(nodes, first_query(), embedder=embedder, postprocessors=chain, retrieval=RetrievalSettings(top_k=5))
    return open_page(config), expected, node_labels(nodes)


def test_the_funnel_counts_nodes_after_each_stage(cutoff_run):
    at, expected, _ = cutoff_run
    assert expected.counts() == [("retrieval", 5), ("similarity_cutoff", 3), ("long_context_reorder", 3)]
    assert funnel_counts(at) == [5, 3, 3]
    shown = {metric.label: metric.value for metric in at.metric}
    assert shown["Retrieved"] == "5" and shown["Stages"] == "2" and shown["Final nodes"] == "3"
    assert [tab.label for tab in at.tabs] == ["Retrieval", "1 · similarity_cutoff", "2 · long_context_reorder"]


def test_the_caption_names_the_embedding_model(cutoff_run):
    at, _, _ = cutoff_run
    (caption,) = [shown(c.value) for c in at.caption if c.value.startswith("Searched")]
    assert caption.endswith("· embeddings all-MiniLM-L6-v2")


def test_the_retrieval_table_lists_the_top_k_best_first(cutoff_run):
    at, expected, labels = cutoff_run
    table = stage_tables(at)[0]
    assert table["node"].tolist() == [labels[item.id] for item in expected.retrieved]
    assert table["rank"].tolist() == [1, 2, 3, 4, 5]
    assert table["score"].tolist() == pytest.approx([item.score for item in expected.retrieved])


def test_the_cutoff_stage_shows_each_dropped_node_with_its_reason(cutoff_run):
    at, expected, labels = cutoff_run
    table = stage_tables(at)[1]
    stage = expected.stages[0]
    assert len(table) == 5
    dropped = table[table["status"] == "dropped"]
    assert dropped["node"].tolist() == [labels[item.id] for item in stage.nodes_in[3:]]
    for _, row in dropped.iterrows():
        assert "is below the cutoff" in row["fate"]
    assert table["fate"].tolist() == [stage.fate(item.id) for item in stage.nodes_in]
    assert table["rank_out"].tolist()[:3] == [1, 2, 3]
    assert table["rank_out"].isna().tolist() == [False, False, False, True, True]


def test_a_dropped_node_shows_a_dash_not_none_for_its_rank_and_score_out(cutoff_run):
    at, _, _ = cutoff_run
    cutoff_table = at.dataframe[1]
    dropped = cutoff_table.value[cutoff_table.value["status"] == "dropped"]
    assert len(dropped) == 2 and dropped[["rank_out", "score_out"]].isna().all().all()
    # What the table draws for a missing value (Streamlit's own default is the word "None").
    assert [frame.proto.placeholder for frame in at.dataframe[1:]] == ["—", "—"]


def test_the_tables_number_nodes_within_their_document_as_the_chunks_page_does():
    # A question about release_notes.txt, the fourth sample document.
    query = next(q.query for q in sample_queries() if q.doc == "release_notes.txt")
    at = open_page()
    at.selectbox(key="query.sample").set_value(query).run()
    chunks_page = {}  # node id -> the label the Chunks page gives it (it splits one document at a time)
    for path in sample_files():
        for document in load(path):
            for index, node in enumerate(run_split([document], SENTENCE_CONFIG)):
                chunks_page[node.id] = f"{document.metadata['file_name']} #{index}"
    retrieved = retrieve(sample_nodes(SENTENCE_CONFIG), query, embedder=get_embedder(), retrieval=RetrievalSettings(top_k=5))
    assert any(chunks_page[item.id].startswith("release_notes.txt #") for item in retrieved)
    assert stage_tables(at)[0]["node"].tolist() == [chunks_page[item.id] for item in retrieved]


def test_the_reorder_stage_shows_moves_and_its_picture(cutoff_run):
    at, expected, labels = cutoff_run
    stage = expected.stages[1]
    table = stage_tables(at)[2]
    # LongContextReorder on three best-first nodes: best first, third in the middle, second last.
    assert table["rank_out"].tolist() == [1, 3, 2]
    assert table["fate"].tolist() == ["kept", "moved 2 → 3", "moved 3 → 2"]
    assert [stage.fate(item.id) for item in stage.nodes_in] == table["fate"].tolist()
    pictures = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Score by position" in c.proto.spec]
    assert len(pictures) == 1
    after = next(trace for trace in pictures[0]["data"] if trace["name"].startswith("after"))
    assert after["y"] == pytest.approx([item.score for item in stage.nodes_out])
    assert after["text"] == ["was #1", "was #3", "was #2"]


def test_the_final_context_is_exactly_what_the_llm_reads(cutoff_run):
    at, expected, _ = cutoff_run
    assert len(at.code) == 1
    assert at.code[0].value == final_context(expected.final)
    assert at.code[0].value.startswith("file_name: ")  # the LLM view carries metadata


# -- building the chain ----------------------------------------------------------------


def step_titles(at: AppTest) -> list[str]:
    return [m.value for m in at.sidebar.markdown if m.value.startswith("**") and ". " in m.value]


def test_the_chain_is_built_with_add_move_and_remove_and_the_budget_warns():
    at = open_page()
    assert step_titles(at) == []
    for name in ("similarity_cutoff", "top_n"):
        at.selectbox(key="query.add").set_value(name).run()
        at.button(key="query.add.button").click().run()
    assert step_titles(at) == ["**1. Similarity cutoff**", "**2. Top n**"]
    assert [tab.label for tab in at.tabs] == ["Retrieval", "1 · similarity_cutoff", "2 · top_n"]

    # Move top_n up: its button is keyed by the step's id, which is the second one added.
    up = [b for b in at.sidebar.button if str(b.key).startswith("query.up.")]
    up[1].click().run()
    assert step_titles(at) == ["**1. Top n**", "**2. Similarity cutoff**"]
    top_n_key = next(n.key for n in at.sidebar.number_input if str(n.key).endswith(".top_n.top_n"))
    at.number_input(key=top_n_key).set_value(2).run()
    assert [metric.value for metric in at.metric if metric.label == "Final nodes"] == ["2"]
    top_n_table = stage_tables(at)[1]
    assert top_n_table["status"].tolist() == ["kept", "kept", "dropped", "dropped", "dropped"]
    assert top_n_table["fate"].tolist()[2] == "dropped: it came at position 3, after the first 2"

    remove = [b for b in at.sidebar.button if str(b.key).startswith("query.remove.")]
    remove[0].click().run()
    assert step_titles(at) == ["**1. Similarity cutoff**"]

    at.number_input(key="query.budget").set_value(100).run()
    assert any("over your budget of 100" in w.value for w in at.warning)
    assert not at.exception


def test_rerank_is_listed_but_unavailable_with_the_plain_reason():
    at = open_page()
    at.selectbox(key="query.add").set_value("rerank").run()
    assert any(NO_MODEL in shown(w.value) for w in at.sidebar.warning)
    assert at.button(key="query.add.button").disabled


# -- sentence window: the window replaces the sentence; the optimizer trims -----------


def test_window_replacement_and_optimizer_sentences_are_drawn_escaped():
    splitter = get_splitter("sentence_window", window_size=2)
    chain = (
        get_postprocessor("metadata_replacement"),
        get_postprocessor("sentence_embedding_optimizer", percentile_cutoff=0.3, context_before=0, context_after=0),
    )
    config = PipelineConfig(splitter=splitter, postprocessors=chain)
    at = open_page(config)
    nodes = sample_nodes(PipelineConfig(splitter=splitter))
    expected = run_query(nodes, first_query(), embedder=get_embedder(), postprocessors=chain, retrieval=RetrievalSettings(top_k=5))
    window_stage, optimizer_stage = expected.stages
    assert len(window_stage.text_changes) == 5

    views = [element.value for element in at.html if 'class="cs-trace"' in element.value]
    windows = [view for view in views if 'class="focus"' in view]
    sentences = [view for view in views if 'class="removed"' in view or 'class="kept"' in view]
    assert len(windows) == 5
    for change, view in zip(window_stage.text_changes, windows, strict=True):
        # The retrieved sentence is marked inside the window that replaced it.
        assert f'title="the retrieved sentence">{html.escape(change.before)}</span>' in view
    assert len(sentences) == len(optimizer_stage.sentences)
    assert any('class="removed"' in view for view in sentences)
    assert at.code[0].value == final_context(expected.final)


# -- the trace pictures, by example (no model) -----------------------------------------


def test_the_window_marks_the_retrieved_sentence_where_it_is_even_when_its_text_repeats():
    from core.query.chain import TextChange
    from core.query.trace_view import window_html, window_offset
    from core.schema import Document, Node

    text = "Yes. No. Yes. Maybe."
    document = Document(text=text, id="d")
    # The second "Yes." (characters 9-13); its window runs from "No." to "Maybe.".
    node = Node(text="Yes.", id="n", doc_id="d", start_char=9, end_char=13)
    change = TextChange(id="n", before="Yes.", after="No. Yes. Maybe.", reason="window")
    assert window_offset(change, node, document) == 4
    assert window_html(change, 4, "n").count('class="focus"') == 1
    assert '<span class="window">No. </span><span class="focus" title="the retrieved sentence">Yes.</span>' in (
        window_html(change, 4, "n")
    )
    # Without the document, a sentence that occurs twice in its window is not guessed at.
    repeated = TextChange(id="n", before="Yes.", after="Yes. No. Yes.", reason="window")
    assert window_offset(repeated, node, None) is None


def test_optimizer_sentences_are_escaped_kept_and_struck_with_their_similarity():
    from core.postprocessors import SentenceSelection
    from core.query.trace_view import sentences_html

    text = "Keep <b>this</b>. Drop that."
    selection = SentenceSelection(kept=((0, 17),), removed=((18, 28),), scores=(0.71, 0.12))
    shown = sentences_html(text, selection, "node #1 <i>")
    assert '<span class="kept" title="kept · similarity to the query 0.71">Keep &lt;b&gt;this&lt;/b&gt;.</span>' in shown
    assert '<span class="removed" title="removed · similarity to the query 0.12">Drop that.</span>' in shown
    assert "node #1 &lt;i&gt;" in shown and "<b>" not in shown and "<i>" not in shown


def test_labels_count_the_nodes_of_each_document_from_zero():
    from core.schema import Document

    config = PipelineConfig(splitter=get_splitter("character", chunk_size=40, chunk_overlap=0, separator=" "))
    first = Document(text="Alpha one is here. " * 6, metadata={"file_name": "a.md"})
    second = Document(text="Beta two is there. " * 6, metadata={"file_name": "b.md"})
    nodes = run_split([first, second], config)
    on_chunks_page = len(run_split([second], config))
    labels = node_labels(nodes)
    assert [labels[node.id] for node in nodes if node.doc_id == second.id] == [
        f"b.md #{index}" for index in range(on_chunks_page)
    ]
    assert labels[nodes[0].id] == "a.md #0"


def test_a_keyword_filter_is_added_working_and_an_emptied_one_says_it_does_nothing():
    at = open_page()
    at.selectbox(key="query.add").set_value("keyword").run()
    at.button(key="query.add.button").click().run()
    assert not at.exception
    required = next(t for t in at.sidebar.text_input if str(t.key).endswith(".keyword.required_keywords"))
    word = max((w for w in re.findall(r"\w+", first_query()) if len(w) >= 4), key=len)
    assert required.value == word
    assert not [i for i in at.sidebar.info if "changes nothing" in i.value]

    required.set_value("").run()
    (info,) = [i.value for i in at.sidebar.info if "changes nothing" in i.value]
    assert "no required or excluded keyword is set" in info
    assert any("changed nothing: no required or excluded keyword is set" in shown(c.value) for c in at.caption)


def test_the_query_page_warns_when_the_splitter_leaves_documents_whole():
    at = open_page(PipelineConfig(splitter=get_splitter("markdown")))
    (warning,) = [shown(w.value) for w in at.warning if "does not suit" in shown(w.value)]
    assert "rag_handbook.pdf" in warning and "chunking_guide.md" not in warning


def test_a_keyword_filter_shows_an_empty_box_for_no_excluded_keyword():
    at = open_page()
    at.selectbox(key="query.add").set_value("keyword").run()
    at.button(key="query.add.button").click().run()
    excluded = next(t for t in at.sidebar.text_input if str(t.key).endswith(".keyword.exclude_keywords"))
    assert excluded.value == ""
    required = next(t for t in at.sidebar.text_input if str(t.key).endswith(".keyword.required_keywords"))
    required.set_value("chunk").run()
    assert not at.exception
    assert excluded.value == "" and not [e for e in at.error]


def test_window_replacement_on_a_split_without_windows_says_why_in_the_editor_and_the_trace():
    at = open_page()
    at.selectbox(key="query.add").set_value("metadata_replacement").run()
    at.button(key="query.add.button").click().run()
    assert not at.exception
    reason = "no node carries the 'window' metadata key, so every text stays as it was (split with sentence_window"
    (info,) = [shown(i.value) for i in at.sidebar.info if "changes nothing" in i.value]
    assert reason in info
    assert any(f"changed nothing: {reason}" in shown(c.value) for c in at.caption)


def test_window_replacement_after_a_sentence_window_split_gives_no_such_hint():
    at = open_page(PipelineConfig(splitter=get_splitter("sentence_window")))
    at.selectbox(key="query.add").set_value("metadata_replacement").run()
    at.button(key="query.add.button").click().run()
    assert not at.exception
    assert not [i for i in at.sidebar.info if "changes nothing" in i.value]
    assert not any("changed nothing" in shown(c.value) for c in at.caption)


def test_a_stage_table_shows_the_columns_that_say_something_and_fits_at_1280_px(cutoff_run):
    at, expected, _ = cutoff_run
    cutoff, reorder = at.dataframe[1].proto, at.dataframe[2].proto
    # The cutoff dropped nodes and the reorder moved them: ranks and scores in and out; no text rewritten.
    for frame in (cutoff, reorder):
        assert list(frame.column_order) == ["status", "node", "rank_in", "rank_out", "score_in", "score_out", "fate"]
    assert any("changed no node's text: the texts are on the Retrieval tab" in c.value for c in at.caption)
    columns = json.loads(cutoff.columns)
    assert sum(columns[name]["width"] for name in cutoff.column_order) <= 820  # the content width at 1280 px


def test_a_stage_that_rewrites_text_shows_it_beside_only_the_ranks_and_scores_out():
    at = open_page(PipelineConfig(splitter=get_splitter("sentence_window")))
    at.selectbox(key="query.add").set_value("metadata_replacement").run()
    at.button(key="query.add.button").click().run()
    assert not at.exception
    frame = at.dataframe[1].proto
    assert list(frame.column_order) == ["status", "node", "rank_out", "score_out", "fate", "text"]
    assert "window" in at.dataframe[1].value["fate"].iloc[0]


def test_the_context_card_says_the_budget_in_words_short_enough_for_its_card(cutoff_run):
    at, _, _ = cutoff_run
    card = next(m for m in at.metric if m.label == "Context tokens")
    # "3,038 under the 4,096 budget" was cut at 1280 px; the budget itself is in the box beside the query.
    assert re.fullmatch(r"[\d,]+ (under|over) budget", card.proto.delta), card.proto.delta


def test_a_metadata_key_named_in_a_stage_summary_shows_literally():
    at = open_page()
    at.selectbox(key="query.add").set_value("metadata_replacement").run()
    at.button(key="query.add.button").click().run()
    key = next(t for t in at.sidebar.text_input if str(t.key).endswith(".target_metadata_key"))
    key.set_value("**[w](https://example.com)**").run()
    assert not at.exception
    summaries = [m.value for m in at.markdown if "metadata key" in m.value]
    assert summaries and all("](https" not in m and "**[" not in m for m in summaries), summaries
    # Read as a person does: escapes dropped, and the word joiner that keeps a URL from becoming a link.
    read = [shown(m).replace("\u2060", "") for m in summaries]
    assert any("no node carries the '**[w](https://example.com)**' metadata key" in r for r in read), read


def test_a_hierarchy_searches_its_leaves_and_returns_their_top_level_parents_as_core_does():
    from core.schema import NodeRelationship

    config = PipelineConfig(splitter=get_splitter("hierarchical", chunk_sizes=(1024, 128)))
    at = open_page(config)
    assert not at.exception, at.exception
    documents = [doc for path in sample_files() for doc in load(path)]
    every = run_split(documents, config)
    expected = run_query(every, first_query(), embedder=get_embedder(), retrieval=config.retrieval)
    (result, _) = at.session_state["cs_last_query"]
    assert [item.id for item in result.retrieved] == [item.id for item in expected.retrieved]
    assert result.retrieved and all(NodeRelationship.PARENT not in item.node.relationships for item in result.retrieved)
    assert result.candidates == len(sample_nodes(config))  # the leaves were searched


def test_a_hierarchys_parents_are_labelled_as_the_chunks_page_numbers_them():
    from core.schema import NodeRelationship

    # The default configuration returns parents: each is named by its file and number, never by a raw id.
    at = open_page(PipelineConfig())
    chunks_page = {}
    for path in sample_files():
        for document in load(path):
            for index, node in enumerate(run_split([document], PipelineConfig())):
                chunks_page[node.id] = f"{document.metadata['file_name']} #{index}"
    labels = stage_tables(at)[0]["node"].tolist()
    assert labels and set(labels) <= set(chunks_page.values())
    split = run_split([document for path in sample_files() for document in load(path)], PipelineConfig())
    parents = {node.id for node in split if node.relationships.get(NodeRelationship.CHILD)}
    assert {label for node_id, label in chunks_page.items() if node_id in parents} & set(labels)


def test_a_hierarchy_returns_parents_within_the_context_budget_shown_in_the_sidebar():
    at = open_page(PipelineConfig())  # the default configuration: hierarchical, parents returned
    assert at.number_input(key="query.retrieval.context_budget").value == RetrievalSettings().context_budget == 5500
    assert any("the leaves' parents while they fit 5,500 tokens (else the leaf)" in c.value for c in at.caption)
    at.selectbox(key="query.retrieval.returns").set_value("merged").run()
    assert not at.exception, at.exception
    assert "query.retrieval.context_budget" not in [widget.key for widget in at.number_input]  # parents only
