"""Metadata: what each node carries, and what the LLM and the embedding model each read of it.

The settings made here (extra keys, extractors, excluded keys, templates) are
stored in the session's PipelineConfig, so the Chunks page, Compare and every
export use them too. The boxes and the logic under them live in ``ui.metadata``.
"""

from __future__ import annotations

import streamlit as st

from ui import state
from ui.documents import select_document
from ui.llm import llm_run, llm_section, split_with_llm
from ui.metadata import (
    applied_config,
    build_settings,
    draft_metadata,
    exclusion_section,
    extra_section,
    extractor_section,
    keys_table,
    node_or_stop,
    preview_header,
    reset_button,
    split_or_stop,
    template_section,
)
from ui.nodes import reader_views
from ui.page import documents_or_stop, heading, setup_page

setup_page()

heading(
    "Metadata",
    "Every node inherits its document's metadata. Decide which keys exist, which of them the **LLM** and the "
    "**embedding model** each get to read, and how they are written, and watch both views of a node change.",
)

documents = documents_or_stop()

config = state.config()
settings_col, preview_col = st.columns([4, 7], gap="large")

with settings_col:
    document = select_document(documents, "meta.doc")
    extra, extra_error = extra_section(config)
    extractors, extractor_errors = extractor_section(config)
    llm = llm_section(config)
    # Drawn once the draft below tells which keys the nodes carry; kept here so it sits between the boxes.
    exclusions_box = st.container(border=True)
    template_values, template_error_slot = template_section(config)
    reset_button()

# A draft with the new keys and extractors tells which keys the nodes will carry. The LLM extractors join it
# once run (ui.llm: their cost is counted on the nodes without them first, and nothing is sent before Run).
metadata, extra_error = draft_metadata(config.metadata, extra, extra_error)
offline_draft = config.replace(metadata=metadata, extractors=tuple(extractors), llm=llm.connection)
offline_nodes = split_or_stop(document, offline_draft)
draft = llm_run(llm, offline_draft, offline_nodes, state.selected_node_id())
# With a progress bar and Cancel under the cost while the LLM is asked.
draft_nodes = offline_nodes if draft == offline_draft else split_with_llm(llm, document, draft)

with exclusions_box:
    exclusions = exclusion_section(config, document, draft_nodes)

settings, settings_error = build_settings(template_values, exclusions, metadata.extra)
if settings_error:
    template_error_slot.error(settings_error, icon=":material/error:")

applied = applied_config(
    config, settings, draft.extractors, llm=draft.llm, valid=not extra_error and not extractor_errors and not llm.errors
)
if applied != config:
    state.set_config(applied)

with preview_col:
    nodes = split_or_stop(document, applied)
    preview_header(nodes, applied, stale=bool(settings_error or extra_error or extractor_errors))
    node = node_or_stop(nodes)
    reader_views(node, retrieval=applied.retrieval)
    keys_table(node, document, applied)
