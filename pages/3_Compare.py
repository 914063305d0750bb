"""Compare: two to four splitter configurations on one document, side by side.

Each configuration keeps the session's loader options and metadata settings and
changes only the splitter, so the differences shown are the splitter's.
"""

from __future__ import annotations

import streamlit as st

from ui import state
from ui.compare import (
    boundary_diff_section,
    configuration_columns,
    count_picker,
    metrics_table,
    size_histograms,
    spans_side_by_side,
    split_each,
)
from ui.documents import select_document
from ui.page import documents_or_stop, heading, setup_page

setup_page()

heading(
    "Compare",
    "Cut the same document with up to four splitter configurations and see where their chunks differ: "
    "the spans, which cut points moved, appeared or vanished, the metrics, and the size distributions.",
)

documents = documents_or_stop()

config = state.config()
doc_col, count_col = st.columns([3, 2], vertical_alignment="bottom")
with doc_col:
    document = select_document(documents, "cmp.doc")
with count_col:
    count = count_picker()

configured = configuration_columns(count, config)
if len(configured) < 2:
    st.warning("Fix the settings above: at least two valid configurations are needed to compare.", icon=":material/info:")
    st.stop()

runs = split_each(document, config, configured)
if len(runs) < 2:
    st.warning("At least two configurations must split this document to compare them.", icon=":material/info:")
    st.stop()

st.subheader(":material/table_chart: Metrics", anchor=False)
metrics_table(document, runs)

spans_tab, diff_tab, sizes_tab = st.tabs(
    [":material/view_column: Spans side by side", ":material/difference: Boundary diff", ":material/bar_chart: Chunk sizes"]
)
with spans_tab:
    spans_side_by_side(document, runs)
with diff_tab:
    boundary_diff_section(document, runs)
with sizes_tab:
    size_histograms(runs)
