"""Export: the nodes, the configuration, code that rebuilds it, and a link that reopens it."""

from __future__ import annotations

import streamlit as st

from core.output.export import langchain_snippet, llamaindex_snippet
from ui import state
from ui.documents import all_documents
from ui.export import (
    config_download,
    configuration_card,
    document_picker,
    link_params,
    node_downloads,
    share_link,
    snapshot_download,
    snippet_tabs,
    split_for_export,
)
from ui.page import heading, setup_page

THIS_PAGE = "Export"

setup_page()

heading(
    "Export",
    "Take the current configuration with you: the nodes it makes, a snapshot page to share, the configuration "
    "itself, Python that rebuilds it in **LlamaIndex** or **LangChain**, and a link that reopens this exact view.",
)

documents = all_documents()
config = state.config()
params = link_params(config, documents, state.selected_doc_id())
# The address bar holds the configuration too, so this page's own URL can be shared as well.
st.query_params.from_dict(params)
configuration_card(config, share_link(st.context.url, params, this_page=THIS_PAGE))

# -- nodes ---------------------------------------------------------------------------

st.subheader(":material/download: Nodes", anchor=False)
if not documents:
    st.info("No documents loaded: add some on the Documents page to export their nodes.", icon=":material/inbox:")
else:
    picked = document_picker(documents)
    nodes = split_for_export(picked, config)
    if nodes is not None:
        node_downloads(nodes, picked, config.splitter.name)
        snapshot_download(picked, nodes, config)

# -- configuration -------------------------------------------------------------------

st.subheader(":material/settings: Configuration", anchor=False)
config_download(config.to_json())

# -- code ----------------------------------------------------------------------------

st.subheader(":material/code: Reproduce in code", anchor=False)
st.caption(
    "Runnable scripts that rebuild this configuration with each library's own classes, from the files picked "
    "above (put them beside the script, or edit `PATHS`)."
)
# The script reads the user's own files by name, in the order they are picked.
paths = list(dict.fromkeys(str(d.metadata.get("file_name") or d.id) for d in picked)) if documents else "sample_docs"
snippet_tabs(
    {"LlamaIndex": llamaindex_snippet(config, paths), "LangChain": langchain_snippet(config, paths)},
    config,
    picked if documents else [],
)
