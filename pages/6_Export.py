"""Export: the nodes, the configuration, code that rebuilds it, and a link that reopens it."""

from __future__ import annotations

import streamlit as st

from core.errors import ChunkScopeError
from core.export import config_to_json, langchain_snippet, llamaindex_snippet
from ui import cache, state, widgets
from ui.compare import settings_summary
from ui.documents import all_documents
from ui.export import differences, file_stem, node_files, share_link
from ui.page import setup_page

THIS_PAGE = "Export"
FORMATS = {
    "JSONL": (":material/data_object:", "One JSON object per node and line; reads back with Node.from_dict."),
    "CSV": (":material/table_view:", "One row per node; metadata and relationships as JSON text."),
    "Parquet": (":material/view_column:", "Columnar, typed; for pandas, DuckDB or Spark."),
}

setup_page()

st.title("Export", anchor=False)
st.markdown(
    "Take the current configuration with you: the nodes it makes, the configuration itself, "
    "Python that rebuilds it in **LlamaIndex** or **LangChain**, and a link that reopens this exact view."
)

documents = all_documents()
config = state.config()
splitter = config.splitter

params = config.to_query_params()
selected = next((d for d in documents if d.id == state.selected_doc_id()), None)
if selected is not None:
    params["doc"] = str(selected.metadata.get("file_name", ""))
# The address bar holds the configuration too, so this page's own URL can be shared as well.
st.query_params.from_dict(params)
link = share_link(st.context.url, params, this_page=THIS_PAGE)

with st.container(border=True):
    summary, extras = st.columns([3, 2], vertical_alignment="center")
    summary.markdown(
        f"**:material/tune: Current configuration** · {widgets.label_for(splitter.name)} splitter · "
        f"{settings_summary(splitter)}"
    )
    extras.caption(
        f"Extractors: {', '.join(e.name for e in config.extractors) or 'none'} · "
        f"Extra metadata keys: {len(config.metadata.extra)} · "
        f"Postprocessors: {len(config.postprocessors)}"
    )
    st.markdown("**:material/link: Shareable link**")
    link_col, open_col = st.columns([5, 1], vertical_alignment="center")
    with link_col:
        st.code(link, language=None, wrap_lines=True)
    open_col.link_button("Open", link, icon=":material/open_in_new:", width="stretch")
    st.caption(
        "The configuration lives in the link's query parameters (only what differs from the defaults). "
        "Opening it loads the sample documents and restores this configuration on the Chunks page."
    )

# -- nodes ---------------------------------------------------------------------------

st.subheader(":material/download: Nodes", anchor=False)
if not documents:
    st.info("No documents loaded: add some on the Documents page to export their nodes.", icon=":material/inbox:")
else:
    names = {d.id: str(d.metadata.get("file_name", d.id)) for d in documents}
    ids = list(names)
    if "export.docs" not in st.session_state or not set(st.session_state["export.docs"]) <= set(ids):
        st.session_state["export.docs"] = ids
    chosen = st.multiselect(
        "Documents to export", ids, key="export.docs", format_func=lambda i: names[i], placeholder="Choose documents"
    )
    picked = [d for d in documents if d.id in chosen]
    nodes = None
    if not picked:
        st.warning("Choose at least one document to export its nodes.", icon=":material/info:")
    else:
        try:
            with st.spinner("Splitting…"):
                nodes = cache.run_split_cached(picked, config)
        except ChunkScopeError as exc:
            st.error(str(exc), icon=":material/error:")
    if nodes is not None:
        files = node_files(nodes, file_stem(picked, splitter.name))
        st.caption(f"{len(nodes):,} nodes from {len(picked)} document{'s' if len(picked) != 1 else ''}.")
        for (fmt, export), column in zip(files.items(), st.columns(len(files)), strict=True):
            icon, about = FORMATS[fmt]
            with column.container(border=True):
                st.markdown(f"**{fmt}**", help=about)
                st.caption(f"`{export.file_name}` · {export.size_label}")
                st.download_button(
                    f"Download {fmt}",
                    export.data,
                    file_name=export.file_name,
                    mime=export.mime,
                    icon=icon,
                    key=f"export.download.{fmt}",
                    width="stretch",
                    on_click="ignore",
                )
        with st.expander("Preview the first lines of the JSONL", icon=":material/visibility:"):
            head = b"\n".join(files["JSONL"].data.splitlines()[:3]).decode("utf-8")
            st.code(head, language="json", wrap_lines=True, height=220)

# -- configuration -------------------------------------------------------------------

st.subheader(":material/settings: Configuration", anchor=False)
config_json = config_to_json(config)
left, right = st.columns([3, 1], vertical_alignment="top")
with left:
    st.code(config_json, language="json", height=260)
with right:
    st.caption(
        "Every setting of this run as JSON: load it with `PipelineConfig.from_json`, or pass it to the "
        "command line with `chunkscope split --config`."
    )
    st.download_button(
        "Download config.json",
        config_json.encode("utf-8"),
        file_name="chunkscope-config.json",
        mime="application/json",
        icon=":material/settings:",
        key="export.download.config",
        width="stretch",
        on_click="ignore",
    )

# -- code ----------------------------------------------------------------------------

st.subheader(":material/code: Reproduce in code", anchor=False)
st.caption("Runnable scripts that rebuild this configuration with each library's own classes.")
snippets = {
    "LlamaIndex": llamaindex_snippet(config),
    "LangChain": langchain_snippet(config),
}
for (library, code), tab in zip(snippets.items(), st.tabs(list(snippets)), strict=True):
    with tab:
        notes = differences(code)
        if notes:
            st.info(
                f"**Where {library} differs from ChunkScope here**\n\n" + "\n".join(f"- {note}" for note in notes),
                icon=":material/compare_arrows:",
            )
        else:
            st.success(f"{library} has an exact equivalent for every setting of this configuration.", icon=":material/check:")
        st.code(code, language="python", line_numbers=True, height=480)
        st.download_button(
            f"Download {library.lower()}_pipeline.py",
            code.encode("utf-8"),
            file_name=f"{library.lower()}_pipeline.py",
            mime="text/x-python",
            icon=":material/download:",
            key=f"export.download.{library}",
            on_click="ignore",
        )
