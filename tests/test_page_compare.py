"""AppTest: the Compare page shows N configurations, their metrics and their boundary diff."""

from __future__ import annotations

from pathlib import Path

import apptest_support
import pandas as pd
import pytest
from apptest_support import shown
from streamlit.testing.v1 import AppTest

from core.config import PipelineConfig
from core.documents import run_split
from core.loaders import load
from core.measure.compare import boundary_diff, identical_chunks
from core.splitters import get_splitter

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "sample_docs" / "chunking_guide.md"
PAGE = "pages/3_Compare.py"


def open_page() -> AppTest:
    return apptest_support.open_page(PAGE, apptest_support.SENTENCE)


def nodes_for(splitter_name: str, **params):
    document = load(GUIDE)[0]
    return run_split([document], PipelineConfig(splitter=get_splitter(splitter_name, **params)))


def metrics_table(at: AppTest):
    return at.dataframe[0].value


def span_views(at: AppTest) -> list[str]:
    return [element.value for element in at.html if 'class="cs-source"' in element.value]


@pytest.fixture(scope="module")
def page() -> AppTest:
    return open_page()


def test_two_configurations_by_default_each_with_its_spans_and_a_metrics_row(page):
    table = metrics_table(page)
    assert table["config"].tolist() == ["A", "B"]
    # A is the session's splitter; B the same at half the chunk size.
    assert table["splitter"].tolist() == ["sentence", "sentence"]
    assert table["nodes"].tolist() == [
        len(nodes_for("sentence")),
        len(nodes_for("sentence", chunk_size=125, chunk_overlap=31)),
    ]
    assert len(span_views(page)) == 2


def test_the_boundary_diff_counts_match_core():
    at = open_page()
    expected = boundary_diff(nodes_for("sentence"), nodes_for("sentence", chunk_size=125, chunk_overlap=31)).counts()
    shown = {metric.label: metric.value for metric in at.metric}
    identical = identical_chunks(nodes_for("sentence"), nodes_for("sentence", chunk_size=125, chunk_overlap=31))
    b_count = len(nodes_for("sentence", chunk_size=125, chunk_overlap=31))
    assert shown.pop("Identical chunks") == f"{identical / b_count:.0%}"
    assert {label: int(value.replace(",", "")) for label, value in shown.items()} == {
        "Same": expected["unchanged"],
        "Moved": expected["moved"],
        "New": expected["added"],
        "Gone": expected["removed"],
    }
    assert expected["moved"] + expected["added"] > 0


@pytest.mark.parametrize("count", [3, 4])
def test_more_configurations_add_columns_and_rows(count):
    at = open_page()
    at.segmented_control(key="cmp.count").set_value(count).run()
    table = metrics_table(at)
    assert table["config"].tolist() == ["A", "B", "C", "D"][:count]
    assert len(span_views(at)) == count
    assert len([box for box in at.selectbox if str(box.key).endswith(".splitter")]) == count
    # One diff row of metrics per configuration after A: identical chunks, same, moved, new, gone.
    assert len(at.metric) == 5 * (count - 1)


def test_changing_a_configuration_changes_its_row():
    at = open_page()
    at.selectbox(key="cmp.1.splitter").set_value("character").run()
    at.number_input(key="cmp.1.character.chunk_size").set_value(400)
    at.number_input(key="cmp.1.character.chunk_overlap").set_value(0).run()
    row = metrics_table(at).iloc[1]
    assert row["splitter"] == "character"
    assert row["nodes"] == len(nodes_for("character", chunk_size=400, chunk_overlap=0))
    assert "size 400" in row["settings"]


def test_an_invalid_configuration_is_explained_and_not_compared():
    at = open_page()
    at.number_input(key="cmp.1.sentence.chunk_overlap").set_value(600).run()
    assert any("chunk_overlap" in shown(error.value) and "chunk_size" in shown(error.value) for error in at.error)
    assert any("at least two valid configurations" in warning.value for warning in at.warning)
    assert not at.dataframe


def test_a_configuration_over_the_node_limit_is_refused_and_named():
    big = ("big.txt", b"word " * 24_000, "text/plain")  # 120,000 characters
    at = apptest_support.open_page(PAGE, uploads=[big])
    at.selectbox(key="cmp.1.splitter").set_value("character").run()
    at.number_input(key="cmp.1.character.chunk_overlap").set_value(0)
    at.number_input(key="cmp.1.character.chunk_size").set_value(1).run()
    assert not at.exception
    errors = [shown(error.value) for error in at.error]
    assert any(
        error.startswith("Configuration B: big.txt: character with chunk_size 1") and "limit of 100,000" in error
        for error in errors
    ), errors


def test_a_native_splitter_beside_its_framework_engine_shows_the_share_of_identical_chunks():
    at = open_page()
    at.selectbox(key="cmp.0.splitter").set_value("recursive").run()
    at.number_input(key="cmp.0.recursive.chunk_overlap").set_value(0).run()
    at.number_input(key="cmp.0.recursive.chunk_size").set_value(400).run()
    at.selectbox(key="cmp.1.splitter").set_value("langchain.recursive").run()
    at.number_input(key="cmp.1.langchain.recursive.chunk_overlap").set_value(0).run()
    at.number_input(key="cmp.1.langchain.recursive.chunk_size").set_value(400).run()
    assert not at.exception
    engine = nodes_for("langchain.recursive", chunk_size=400, chunk_overlap=0)
    card = next(m for m in at.metric if m.label == "Identical chunks")
    assert card.value == "100%"
    assert f"{len(engine)} of {len(engine)}" in str(card.proto.delta)


# -- parsers side by side ---------------------------------------------------------------

TABLE_PDF = ROOT / "tests" / "fixtures" / "table_report.pdf"


def test_parser_mode_reads_the_handbook_two_ways_and_diffs_the_words():
    at = open_page()
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    assert not at.exception
    assert at.selectbox(key="cmp.parser_file").value == "rag_handbook.pdf"
    table = at.dataframe[0].value
    assert table["parser"].tolist() == ["pypdf", "pdfplumber"]
    assert table["headings"].tolist() == [0, 33]
    assert table["pages"].tolist() == [7, 7]
    metrics = {metric.label: metric.value for metric in at.metric}
    # The two parsers read the same words; what pdfplumber adds is markup (headings), shown in the diff, not counted.
    assert metrics["Same words"] == "100%"
    diff = at.code[0].value
    assert diff.splitlines()[0] == "+ #"  # the handbook's title, a level-1 heading only pdfplumber marks
    assert len(span_views(at)) == 2


def test_parser_mode_shows_the_table_only_pdfplumber_finds():
    at = apptest_support.open_page(PAGE, uploads=[("table_report.pdf", TABLE_PDF.read_bytes(), "application/pdf")])
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    at.selectbox(key="cmp.parser_file").set_value("table_report.pdf").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert table["tables"].tolist() == [0, 1]
    # B's chunks show the Markdown rows; A's the loose words.
    a_view, b_view = span_views(at)
    assert "| character | 128 | 0 | 1822 | 0.528 | 0.391 |" in b_view
    assert "| character |" not in a_view and "character 128 0 1822" in a_view


def test_parser_chunks_open_on_the_handbook_page_whose_table_pdfplumber_finds():
    at = open_page()
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    page = at.selectbox(key="cmp.parser_page")
    assert page.value == 7 and page.format_func(7) == "page 7 · a table (B)"
    a_view, b_view = span_views(at)
    assert "| Document type | Splitter | Chunk size | Overlap |" in b_view and "| Document type |" not in a_view
    assert '<span class="page">page 7</span>' in a_view and '<span class="page">page 6</span>' not in a_view
    page.set_value(2).run()
    a_view, b_view = span_views(at)
    assert '<span class="page">page 2</span>' in a_view and '<span class="page">page 2</span>' in b_view
    assert "| Document type |" not in b_view


def test_parser_mode_with_both_parsers_alike_reports_no_difference():
    at = open_page()
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    at.selectbox(key="cmp.parser.pdf.1.parser").set_value("pypdf").run()
    assert not at.exception
    assert {metric.label: metric.value for metric in at.metric}["Same words"] == "100%"
    assert at.code[0].value == "The two parsers read the same words."


# -- state across pages ------------------------------------------------------------------


def test_configurations_keep_their_settings_after_a_visit_to_another_page():
    at = open_page()
    at.number_input(key="cmp.0.sentence.chunk_size").set_value(200).run()
    at.selectbox(key="cmp.1.splitter").set_value("character").run()
    at.number_input(key="cmp.1.character.chunk_overlap").set_value(0)
    at.number_input(key="cmp.1.character.chunk_size").set_value(400).run()
    at.switch_page("pages/1_Chunks.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="cmp.1.splitter").value == "character"
    assert at.number_input(key="cmp.1.character.chunk_size").value == 400
    assert at.number_input(key="cmp.0.sentence.chunk_size").value == 200
    table = metrics_table(at)
    assert table["nodes"].tolist() == [
        len(nodes_for("sentence", chunk_size=200)),
        len(nodes_for("character", chunk_size=400, chunk_overlap=0)),
    ]


def test_the_count_the_mode_and_each_readers_choice_stay_after_a_visit_to_another_page():
    at = open_page()
    at.segmented_control(key="cmp.count").set_value(4).run()
    at.switch_page("pages/1_Chunks.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="cmp.count").value == 4
    assert len(metrics_table(at)) == 4
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    at.segmented_control(key="cmp.parser_count").set_value(3).run()
    at.selectbox(key="cmp.parser.pdf.1.reader").set_value("markitdown").run()
    at.switch_page("pages/1_Chunks.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="cmp.mode").value == "Parsers"
    assert at.segmented_control(key="cmp.parser_count").value == 3
    assert at.selectbox(key="cmp.parser.pdf.1.reader").value == "markitdown"


def test_each_configuration_names_its_splitter_and_a_says_when_it_left_the_sessions():
    at = open_page()
    badges = [element.value for element in at.html if ">Configuration " in element.value]
    assert "Sentence" in badges[0] and "the session&#x27;s splitter" in badges[0]
    assert "Sentence" in badges[1] and "session" not in badges[1]
    at.number_input(key="cmp.0.sentence.chunk_size").set_value(200).run()
    badges = [element.value for element in at.html if ">Configuration " in element.value]
    assert "the session&#x27;s splitter" not in badges[0] and "changed here" in badges[0]


def test_untouched_configurations_follow_a_new_session_splitter():
    at = open_page()
    at.switch_page("pages/1_Chunks.py").run()
    at.sidebar.number_input(key="splitter.sentence.chunk_size").set_value(300).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.number_input(key="cmp.0.sentence.chunk_size").value == 300
    assert at.number_input(key="cmp.1.sentence.chunk_size").value == 150


def test_parser_mode_names_the_sessions_splitter_and_warns_where_it_cannot_cut():
    at = open_page()
    at.switch_page("pages/1_Chunks.py").run()
    at.sidebar.selectbox(key="chunks.splitter").set_value("langchain.markdown_header").run()
    at.switch_page(PAGE).run()
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    assert not at.exception, at.exception
    assert any(
        "session's splitter, **LangChain MarkdownHeaderTextSplitter**" in shown(caption.value) for caption in at.caption
    )
    warnings = [shown(warning.value) for warning in at.warning]
    # pypdf reads no Markdown headings: the whole text is one chunk, and the warning says why (once).
    prefix = "Parser A (pypdf), split with LangChain MarkdownHeaderTextSplitter: "
    assert [w for w in warnings if w.startswith(prefix)] == [
        prefix + "LangChain's MarkdownHeaderTextSplitter cuts at Markdown headings, and rag_handbook.pdf (pdf) has "
        "none it recognises, so the whole document is one chunk; pick a splitter that cuts by size."
    ]
    # pdfplumber marks headings: its reading is cut, and gets no warning.
    assert not any(w.startswith("Parser B") for w in warnings), warnings


def test_parser_mode_with_the_default_splitter_names_it_and_warns_of_nothing():
    at = open_page()
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    assert any("session's splitter, **Sentence** (defaults)" in caption.value for caption in at.caption)
    assert not at.warning


def test_parser_mode_warns_when_a_chunk_is_far_over_the_splitters_size():
    at = open_page()
    at.switch_page("pages/1_Chunks.py").run()
    at.sidebar.selectbox(key="chunks.splitter").set_value("character").run()
    at.sidebar.text_input(key="splitter.character.separator").set_value("@@@").run()  # nowhere in the handbook
    at.switch_page(PAGE).run()
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    assert not at.exception, at.exception
    warnings = [shown(warning.value) for warning in at.warning]
    assert any(
        w.startswith(
            "Parser A (pypdf), split with Character: its largest chunk is 16,914 characters, 17 times its "
            "size limit (1,000)"
        )
        for w in warnings
    ), warnings


def test_every_changed_cut_point_shows_a_dash_where_a_cut_has_no_place_or_shift(page):
    frame = page.dataframe[1]  # the metrics table is the first
    assert frame.proto.placeholder == "—"  # what an empty cell shows, not "None"
    table = frame.value
    assert list(table.columns) == ["compared", "change", "in A", "in B", "shift", "text around the cut"]
    added = table[table["change"] == "added"].iloc[0]
    assert pd.isna(added["in A"]) and pd.isna(added["shift"]) and not pd.isna(added["in B"])
    moved = table[table["change"] == "moved"].iloc[0]
    assert moved["shift"] == moved["in B"] - moved["in A"] != 0


# The page's content width at a 1280 px window (measured in chromium): every column must fit in it.
CONTENT_WIDTH_AT_1280 = 820


def test_the_metrics_table_fits_the_page_at_1280_px_every_column_sized(page):
    import json

    columns = json.loads(page.dataframe[0].proto.columns)
    shown_columns = list(page.dataframe[0].proto.column_order)
    # Letter, splitter and settings are one wrapping column; the table's data keeps them apart.
    assert shown_columns[0] == "configuration" and set(shown_columns) <= set(columns)
    assert metrics_table(page)["configuration"].tolist() == ["A · sentence · defaults", "B · sentence · size 125 · overlap 31"]
    widths = [columns[name].get("width") for name in shown_columns]
    assert all(isinstance(width, int) for width in widths), widths
    assert sum(widths) <= CONTENT_WIDTH_AT_1280
    # Each header fits its column: at most 7 px a character at the grid's font, plus 8 px of padding
    # ("Mid-sentence" is drawn whole in 92 px at 1280 and 1440 px).
    for name in shown_columns:
        assert 7 * len(columns[name]["label"]) + 8 <= columns[name]["width"], name


def test_parser_mode_puts_simpledirectoryreader_a_langchain_loader_and_markitdown_beside_chunkscopes_reader():
    at = open_page()
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    at.segmented_control(key="cmp.parser_count").set_value(4).run()
    # A: ChunkScope's pypdf (the session's); B opens on pdfplumber: make it markitdown; C, D open on the frameworks.
    at.selectbox(key="cmp.parser.pdf.1.reader").set_value("markitdown").run()
    assert not at.exception
    parsers = at.dataframe[0].value["parser"].tolist()
    assert parsers[0] == "pypdf"
    assert parsers[1].startswith("markitdown MarkItDown · markitdown 0.")
    assert parsers[2].startswith("LlamaIndex SimpleDirectoryReader (PDFReader) · llama-index-core 0.")
    assert parsers[3].startswith("LangChain PyPDFLoader · langchain-community 0.")
    assert len(span_views(at)) == 4
    # The word diff compares A with the reader picked; pypdf and PyPDFLoader read the same text layer.
    at.segmented_control(key="cmp.parser_diff").set_value("D").run()
    assert {metric.label: metric.value for metric in at.metric}["Same words"] == "100%"
    notes = " ".join(caption.value for caption in at.caption)
    assert "Not available here: **docling**" in notes and "AGPL" in notes


def test_a_framework_reader_column_shows_no_chunkscope_parser_option_and_its_row_names_only_the_reader():
    at = open_page()
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    at.selectbox(key="cmp.parser.pdf.1.reader").set_value("langchain").run()
    assert not at.exception
    # ChunkScope's own options are drawn under its reader (column A), not under LangChain's (column B).
    keys = {widget.key for widget in at.selectbox} | {widget.key for widget in at.number_input}
    assert "cmp.parser.pdf.0.parser" in keys
    assert not any(key.startswith("cmp.parser.pdf.1.") and not key.endswith(".reader") for key in keys if key)
    assert any("PyPDFLoader reads the file with its own defaults" in caption.value for caption in at.caption)
    table = at.dataframe[0].value
    assert table["settings"].tolist()[1] == "reader 'langchain'"
    # The same characters cut into more chunks, and the page says why: PyPDFLoader's longer metadata.
    assert table["characters"].tolist()[0] == table["characters"].tolist()[1]
    assert table["nodes"].tolist()[1] > table["nodes"].tolist()[0]
    why = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("Reader B: its document's metadata is")]
    assert why and "keys only it writes: producer, creator" in why[0] and "its chunks hold less text" in why[0]


def test_parser_mode_reads_a_docx_with_chunkscope_and_b_opens_on_simpledirectoryreader():
    at = open_page()
    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    files = at.selectbox(key="cmp.parser_file").options
    assert files[0] == "rag_handbook.pdf" and "parsing_office_files.docx" in files  # PDFs first, then every file
    at.selectbox(key="cmp.parser_file").set_value("parsing_office_files.docx").run()
    assert not at.exception
    parsers = at.dataframe[0].value["parser"].tolist()
    assert parsers[0] == "docx" and parsers[1].startswith("LlamaIndex SimpleDirectoryReader (DocxReader) · ")


def test_with_three_configurations_every_position_comes_before_the_text():
    at = open_page()
    at.segmented_control(key="cmp.count").set_value(3).run()
    assert not at.exception, at.exception
    (changes,) = [frame.value for frame in at.dataframe if "text around the cut" in frame.value.columns]
    assert list(changes.columns) == ["compared", "change", "in A", "in B", "in C", "shift", "text around the cut"]
    assert set(changes["compared"]) == {"B vs A", "C vs A"}
