"""Compare: two to four splitter configurations on one document, or two parsers on one file, side by side.

Splitters: each configuration keeps the session's loader options and metadata
settings and changes only the splitter, so the differences shown are the
splitter's. Parsers: the same file read two to four ways (pypdf against pdfplumber,
OCR on or off, or a framework's reader: LlamaIndex, LangChain, markitdown), its texts
compared word by word, and each cut by the session's splitter.
"""

from __future__ import annotations

import streamlit as st

from ui import state
from ui.compare import (
    boundary_diff_section,
    configuration_columns,
    count_picker,
    metrics_table,
    mode_picker,
    size_histograms,
    spans_side_by_side,
    split_each,
)
from ui.compare_parsers import (
    parse_each,
    parser_chunks,
    parser_columns,
    parser_file_picker,
    parser_files,
    parser_table,
    parser_text_diff,
    splitter_notes,
)
from ui.documents import select_document
from ui.page import documents_or_stop, heading, setup_page

setup_page()

heading(
    "Compare",
    "Cut the same document with up to four splitter configurations and see where their chunks differ: "
    "the spans, which cut points moved, appeared or vanished, the metrics, and the size distributions. "
    "Or read one file with two to four readers (ChunkScope's parsers, LlamaIndex, LangChain, markitdown) and see "
    "what each finds and how the chunks change.",
)

documents = documents_or_stop()

config = state.config()
if mode_picker() == "Parsers":
    sources = parser_files()
    if not sources:
        st.info("Load a file to compare its readers: ChunkScope's parsers, LlamaIndex, LangChain and markitdown.")
        st.stop()
    source = parser_file_picker(sources)
    parsers = parser_columns(source, config)
    parser_runs = parse_each(source, config, parsers) if len(parsers) >= 2 else []
    if len(parser_runs) < 2:
        st.warning("At least two readers must read the file to compare them.", icon=":material/info:")
        st.stop()
    st.subheader(":material/table_chart: What each parser found", anchor=False)
    splitter_notes(config, parser_runs)
    parser_table(parser_runs)
    diff_tab, chunks_tab = st.tabs(
        [":material/difference: Text difference", ":material/view_column: Chunks side by side"]
    )
    with diff_tab:
        parser_text_diff(parser_runs)
    with chunks_tab:
        parser_chunks(parser_runs)
    st.stop()

doc_col, count_col = st.columns([3, 2], vertical_alignment="bottom")
with doc_col:
    document = select_document(documents, "cmp.doc")
with count_col:
    count = count_picker()

configured = configuration_columns(count, config)
if len(configured) < 2:
    st.warning(
        "Fix the settings above: at least two valid configurations are needed to compare.", icon=":material/info:"
    )
    st.stop()

runs = split_each(document, config, configured)
if len(runs) < 2:
    st.warning("At least two configurations must split this document to compare them.", icon=":material/info:")
    st.stop()

st.subheader(":material/table_chart: Metrics", anchor=False)
metrics_table(document, runs)

spans_tab, diff_tab, sizes_tab = st.tabs(
    [
        ":material/view_column: Spans side by side",
        ":material/difference: Boundary diff",
        ":material/bar_chart: Chunk sizes",
    ]
)
with spans_tab:
    spans_side_by_side(document, runs)
with diff_tab:
    boundary_diff_section(document, runs)
with sizes_tab:
    size_histograms(runs)
