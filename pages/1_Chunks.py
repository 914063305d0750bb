"""Chunks: one document, one splitter, every chunk's span, size and reader views.

The page reads the session's documents and config, draws the loader's and the
splitter's widgets from their declared parameters, calls the cached split and
metrics, and renders. Everything it computes comes from ``core``; the pieces
it draws live in ``ui.chunks_view`` and ``ui.chunks_tabs``.
"""

from __future__ import annotations

import streamlit as st

from ui import chunks_tabs as tabs
from ui import chunks_view as view
from ui import state, widgets
from ui.page import documents_or_stop, heading, setup_page

# -- settings (sidebar) ------------------------------------------------------------

setup_page()
config = state.config()
all_docs = documents_or_stop(config)

heading("Chunks")

labels = [view.document_label(d, all_docs) for d in all_docs]
with st.sidebar:
    document = view.document_picker(all_docs, labels)
    loaders, loader_error = view.loader_settings(document, config)
    splitter, splitter_error = view.splitter_settings(config)

view.stop_unless_usable(splitter, loader_error, splitter_error)
widgets.splitter_warnings(splitter)
config, document = view.apply_settings(config, document, splitter, loaders)

# -- split and measure -------------------------------------------------------------

split = view.split_and_measure(document, config, splitter)
name = view.label_of(document, all_docs, labels)
view.document_caption(name, document, splitter)
view.scope_and_fit(splitter, document, all_docs)
view.stop_if_empty(split)
view.span_status_caption(split)
view.metric_cards(split.metrics, splitter)

# -- which node, and the tabs -------------------------------------------------------

selected = view.selected_node(split)
tab, container = tabs.open_tab(splitter)

with container:
    if tab == "Source":
        tabs.source_tab(document, split, selected, splitter)
    elif tab == "Node table":
        tabs.node_table_tab(split, splitter.size_unit)
    elif tab == "Sizes":
        tabs.sizes_tab(split, splitter)
    elif tab == "Semantic distances":
        tabs.semantic_tab(document, splitter)
    elif tab == "Parent / child tree":
        tabs.tree_tab(split, selected, root_label=name)

# -- node detail --------------------------------------------------------------------

view.node_detail(document, split, selected)
