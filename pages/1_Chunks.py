"""Chunks: one document, one splitter, every chunk's span, size and reader views.

The page reads the session's documents and config, draws the loader's and the
splitter's widgets from their declared parameters, calls the cached split and
metrics, and renders. Everything it computes comes from ``core``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import ChunkScopeError
from core.loaders import loader_for
from core.schema import Document, Node
from core.splitters import SPLITTERS
from ui import cache, charts, documents, state, widgets
from ui import nodes as node_ui
from ui.page import documents_or_stop, setup_page
from ui.spans import Mark, show_source

PAGE_KEY = "chunks"


def document_label(document: Document, position: int, all_docs: list[Document]) -> str:
    name = str(document.metadata.get("file_name", document.id))
    same_file = [d for d in all_docs if d.metadata.get("file_name") == document.metadata.get("file_name")]
    return name if len(same_file) == 1 else f"{name} · part {same_file.index(document) + 1}"


def pick_node(node_id: str) -> None:
    """Callback shared by every way of choosing a node (buttons, table, picker)."""
    state.select_node(node_id)
    st.session_state[f"{PAGE_KEY}.node"] = node_id


# -- settings (sidebar) ------------------------------------------------------------

setup_page()
config = state.config()
all_docs = documents_or_stop(config)

st.title("Chunks", anchor=False)

labels = [document_label(d, i, all_docs) for i, d in enumerate(all_docs)]
by_label = dict(zip(labels, all_docs, strict=False))

with st.sidebar:
    st.header("Document", anchor=False)
    doc_key = f"{PAGE_KEY}.doc"
    if st.session_state.get(doc_key) not in by_label:
        wanted = state.selected_doc_id()
        st.session_state[doc_key] = next((lab for lab, d in by_label.items() if d.id == wanted), labels[0])
    document = by_label[st.selectbox("Document", labels, key=doc_key, label_visibility="collapsed")]
    state.select_doc(document.id)

    loader_cls = loader_for(str(document.metadata.get("file_name", "")))
    loader_values = config.loader_options(loader_cls.name)
    loader_error = None
    loaders = tuple(config.loaders)
    if loader_cls.params():
        with st.expander(f"Loader options · {widgets.label_for(loader_cls.name)}", icon=":material/tune:"):
            raw = widgets.param_widgets(loader_cls, f"loader.{loader_cls.name}", loader_values)
            loader, loader_error = widgets.try_build(loader_cls, raw)
            if loader is not None:
                loaders = tuple(x for x in config.loaders if x.name != loader_cls.name) + (loader,)

    st.header("Splitter", anchor=False)
    splitter_cls = widgets.component_picker(SPLITTERS, "Splitter", f"{PAGE_KEY}.splitter", config.splitter.name)
    seed = config.splitter.to_params() if config.splitter.name == splitter_cls.name else {}
    raw = widgets.param_widgets(splitter_cls, f"splitter.{splitter_cls.name}", seed)
    splitter, splitter_error = widgets.try_build(splitter_cls, raw)

for problem in (loader_error, splitter_error):
    if problem:
        st.error(f"These settings cannot be used: {problem}", icon=":material/error:")
if splitter is None or loader_error:
    st.stop()

new_config = config.replace(splitter=splitter, loaders=loaders)
if new_config != config:
    state.set_config(new_config)
    config = new_config
    # The document may read differently with new loader options.
    document = next((d for d in documents.all_documents(config) if d.metadata.get("file_name") == document.metadata.get("file_name")), document)
    state.select_doc(document.id)
st.query_params.from_dict({**config.to_query_params(), "doc": str(document.metadata.get("file_name", ""))})

# -- split and measure -------------------------------------------------------------

slow = splitter.name == "semantic"
try:
    with st.spinner("Embedding sentences and finding breakpoints…" if slow else "Splitting…", show_time=slow):
        nodes: list[Node] = cache.run_split_cached((document,), config)
        measure = cache.params_json(
            {"size_limit": splitter.size_limit, "tokenizer": splitter.size_unit}
        )
        metrics = cache.metrics_cached((document,), nodes, measure)
        # What is drawn from the nodes alone is built once per split and measure, not on every rerun.
        view_key = f"{cache.nodes_key(nodes)}:{measure}"
        table = cache.derived(f"table:{view_key}", lambda: pd.DataFrame(cache.node_table_cached((document,), nodes, measure)))
except ChunkScopeError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()

name = labels[[d.metadata.get("file_name") for d in all_docs].index(document.metadata.get("file_name"))]
st.caption(
    f"**{widgets.md_escape(name)}** · {len(document.text):,} characters"
    + (f" · {len(document.pages)} pages" if document.pages else "")
    + f" · split by **{widgets.label_for(splitter.name)}**"
)
if not nodes:
    st.warning("This splitter made no nodes from this document.", icon=":material/warning:")
    st.stop()

unit = splitter.size_unit
cards = st.columns(6)
cards[0].metric("Nodes", f"{metrics.count:,}", border=True, height="stretch", help="How many nodes the splitter made")
cards[1].metric(
    "Mean size",
    f"{metrics.tokens.mean:,.0f}",
    f"p95 {metrics.tokens.p95:,.0f}",
    delta_color="off",
    delta_arrow="off",
    border=True, height="stretch",
    help=f"Mean node size, and its 95th percentile, in {unit}"
    + (f"; the limit is {splitter.size_limit:,}" if splitter.size_limit else ""),
)
cards[2].metric("Coverage", f"{metrics.coverage:.1%}", border=True, height="stretch", help="Share of the document's non-blank text inside some node")
cards[3].metric("Overlap", f"{metrics.overlap:.1%}", border=True, height="stretch", help="Share of node text that another node also holds")
cards[4].metric("Mid-sentence", f"{metrics.mid_sentence:.0%}", border=True, height="stretch", help="Share of nodes that end inside a sentence")
cards[5].metric(
    "Over window",
    f"{metrics.over_window:.0%}",
    border=True, height="stretch",
    help=f"Share of nodes whose EMBED view exceeds the embedding model's {metrics.window_tokens} tokens",
)

# -- which node ---------------------------------------------------------------------

index_of = {node.id: i for i, node in enumerate(nodes)}
nodes_by_id = {node.id: node for node in nodes}
node_key = f"{PAGE_KEY}.node"
selected_id = state.selected_node_id()
if selected_id not in nodes_by_id:
    selected_id = nodes[0].id
    state.select_node(selected_id)
st.session_state[node_key] = selected_id
selected = nodes_by_id[selected_id]

# Hierarchical nodes nest; the source shows the leaves (the finest cut), the tree tab the rest.
levels = [int(n.metadata.get("level", 0) or 0) for n in nodes] if splitter.name == "hierarchical" else []
drawn = [n for n, level in zip(nodes, levels, strict=False) if level == max(levels)] if levels else nodes

marks: list[Mark] = []
if splitter.name == "sentence_window":
    window_size = int(getattr(splitter, "window_size", 0))
    i = index_of[selected.id]
    start = nodes[max(i - window_size, 0)].start_char
    end = nodes[min(i + window_size, len(nodes) - 1)].end_char
    if document.text[start:end] == selected.metadata.get(getattr(splitter, "window_metadata_key", "window")):
        marks = [Mark(start, end, "window"), Mark(selected.start_char, selected.end_char, "focus")]

tab_names = ["Source", "Node table", "Sizes"]
if splitter.name == "semantic":
    tab_names.append("Semantic distances")
if splitter.name == "hierarchical":
    tab_names.append("Parent / child tree")
tabs = dict(zip(tab_names, st.tabs(tab_names), strict=False))

with tabs["Source"]:
    if marks:
        st.caption("The selected sentence is in orange, its window (what the LLM will read after replacement) in yellow.")
    if levels:
        st.caption(f"Showing the {len(drawn)} leaf nodes (level {max(levels)}); the tree tab shows every level.")
    show_source(document, drawn, selected_id=selected.id, marks=marks, key=f"{PAGE_KEY}.source", index_of=index_of)

with tabs["Node table"]:
    st.caption("Select a row to open that node below.")

    def node_frame() -> pd.DataFrame:
        shown = table.assign(node=[f"#{i}" for i in range(len(table))])[
            ["node", "span", "characters", "tokens", "pages", "header_path", "first_words", "flags"]
        ]
        shown["flags"] = shown["flags"].map(lambda f: ", ".join(f) if isinstance(f, list | tuple) else str(f or ""))
        # Columns with nothing to say (no pages, no headers, sizes already in characters) are left out.
        blank = [c for c in ("pages", "header_path", "flags") if not shown[c].astype(str).str.strip().any()]
        if unit == "characters":
            blank.append("tokens")
        return shown.drop(columns=blank)

    event = st.dataframe(
        cache.derived(f"frame:{view_key}:{unit}", node_frame),
        hide_index=True,
        width="stretch",
        height=420,
        on_select="rerun",
        selection_mode="single-row",
        key=f"{PAGE_KEY}.table",
        column_config={
            "node": st.column_config.TextColumn("Node", width="small"),
            "span": st.column_config.TextColumn("Span", width="small", help="start_char–end_char in the document's text"),
            "characters": st.column_config.NumberColumn("Characters", width="small"),
            "tokens": st.column_config.NumberColumn(f"Size ({unit})"),
            "pages": st.column_config.TextColumn("Pages"),
            "header_path": st.column_config.TextColumn("Header path"),
            "first_words": st.column_config.TextColumn("First words", width="large"),
            "flags": st.column_config.TextColumn("Lint flags"),
        },
    )
    rows = event.selection.rows if event is not None else []
    picked_row = rows[0] if rows else None
    last_row_key = f"{PAGE_KEY}.table.last"
    if picked_row is not None and picked_row != st.session_state.get(last_row_key) and picked_row < len(nodes):
        st.session_state[last_row_key] = picked_row
        pick_node(nodes[picked_row].id)
        st.rerun()
    st.session_state[last_row_key] = picked_row

with tabs["Sizes"]:
    st.plotly_chart(
        cache.derived(
            f"hist:{view_key}:{splitter.size_limit}:{unit}",
            lambda: charts.size_histogram(list(table["tokens"]), limit=splitter.size_limit, unit=unit),
        ),
        width="stretch",
        key=f"{PAGE_KEY}.hist",
    )

if "Semantic distances" in tabs:
    with tabs["Semantic distances"]:
        analysis = cache.semantic_analysis_cached(document, splitter.name, cache.params_json(splitter.to_params()))
        if analysis.threshold is None:
            st.info("Too few sentences to compare.")
        else:
            st.plotly_chart(
                charts.distance_chart(analysis.scores, analysis.threshold, analysis.breakpoints),
                width="stretch",
                key=f"{PAGE_KEY}.distances",
            )
            st.caption(
                f"{len(analysis.sentence_spans)} sentences, {len(analysis.breakpoints)} breakpoints: a chunk ends "
                "wherever the score rises above the dashed threshold."
            )

if "Parent / child tree" in tabs:
    with tabs["Parent / child tree"]:
        tree_labels = {n.id: f"#{index_of[n.id]} (L{level})" for n, level in zip(nodes, levels, strict=False)}
        st.plotly_chart(
            charts.hierarchy_chart(nodes, tree_labels, root_label=name), width="stretch", key=f"{PAGE_KEY}.tree"
        )
        chain = []
        current: Node | None = selected
        while current is not None:
            chain.append(current)
            current = nodes_by_id.get(current.parent_id) if current.parent_id else None
        st.markdown(
            "Selected node's ancestry: "
            + " → ".join(f"`#{index_of[n.id]}` (level {n.metadata.get('level', 0)})" for n in reversed(chain))
        )

# -- node detail --------------------------------------------------------------------

st.divider()
head, picker = st.columns([2, 3], vertical_alignment="bottom")
head.subheader(f"Node #{index_of[selected.id]}", anchor=False)
picker.selectbox(
    "Open node",
    list(nodes_by_id),
    key=node_key,
    format_func=cache.derived(
        f"labels:{view_key}", lambda: {node.id: node_ui.node_label(i, node, 70) for i, node in enumerate(nodes)}
    ).__getitem__,
    on_change=lambda: state.select_node(st.session_state[node_key]),
)
pages = document.pages_for_span(selected.start_char, selected.end_char)
st.caption(
    f"id `{selected.id}` · characters {selected.start_char:,}–{selected.end_char:,} ({len(selected.text):,})"
    + (f" · page {pages[0].label}" if len(pages) == 1 else f" · pages {pages[0].label}–{pages[-1].label}" if pages else "")
)
node_ui.relationship_buttons(selected, index_of, nodes_by_id, pick_node, key=f"{PAGE_KEY}.rel")
node_ui.reader_views(selected, embed_window=metrics.window_tokens)
with st.expander(f"Metadata · {len(selected.metadata)} keys", expanded=True, icon=":material/sell:"):
    node_ui.show_metadata(selected)
