"""The Chunks page's pieces: its sidebar, its split, its tabs and its node detail.

``pages/1_Chunks.py`` reads as a short script of these calls. The first section
is plain data (no Streamlit) and could move to ``core``; the rest draws. Every
widget key starts with :data:`PAGE_KEY`, so tests and links find the same keys
as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from core import split_summary
from core.config import PipelineConfig
from core.errors import ChunkScopeError
from core.highlight import Mark
from core.loaders import loader_for
from core.metrics import ChunkMetrics
from core.schema import Document, Node
from core.splitters import SPLITTERS
from ui import cache, charts, documents, state, widgets
from ui import nodes as node_ui
from ui.spans import show_source

PAGE_KEY = "chunks"
NODE_KEY = f"{PAGE_KEY}.node"
TAB_KEY = f"{PAGE_KEY}.tab"
TABLE_COLUMNS = ["node", "span", "characters", "tokens", "pages", "header_path", "first_words", "flags"]


@dataclass(frozen=True)
class Split:
    """One document split and measured, with what every tab reads from it."""

    nodes: list[Node]
    metrics: ChunkMetrics
    # The node table's rows (core.metrics.node_table), shared with the cache: read only.
    rows: tuple[dict[str, Any], ...]
    # Names the split and the measure: the key of everything derived from the nodes alone.
    view_key: str
    index_of: dict[str, int]
    nodes_by_id: dict[str, Node]
    # Each node's level for a hierarchical split, else empty.
    levels: list[int]

    def table(self) -> pd.DataFrame:
        """The rows as a frame, built once per split, and only by the tabs that show it."""
        return cache.derived(f"table:{self.view_key}", lambda: pd.DataFrame(list(self.rows)))


# -- plain data (no Streamlit) ------------------------------------------------------


def file_name(document: Document) -> str:
    return str(document.metadata.get("file_name", ""))


def document_label(document: Document, all_docs: Sequence[Document]) -> str:
    """The file name, with ``· part N`` when the file loaded as several documents."""
    name = str(document.metadata.get("file_name", document.id))
    same_file = [d for d in all_docs if d.metadata.get("file_name") == document.metadata.get("file_name")]
    return name if len(same_file) == 1 else f"{name} · part {same_file.index(document) + 1}"


def label_of(document: Document, all_docs: Sequence[Document], labels: Sequence[str]) -> str:
    """The label of the first loaded document from the same file (the document may have been reloaded)."""
    names = [d.metadata.get("file_name") for d in all_docs]
    return labels[names.index(document.metadata.get("file_name"))]


def node_levels(nodes: Sequence[Node], splitter: Any) -> list[int]:
    """Each node's level for a split with levels (hierarchical); empty for any other splitter."""
    return [int(n.metadata.get("level", 0) or 0) for n in nodes] if splitter.has_levels else []


def leaf_nodes(split: Split) -> list[Node]:
    """The finest cut of a hierarchical split (the nodes at the deepest level); every node otherwise."""
    if not split.levels:
        return split.nodes
    deepest = max(split.levels)
    return [n for n, level in zip(split.nodes, split.levels, strict=False) if level == deepest]


def window_marks(document: Document, split: Split, selected: Node, splitter: Any) -> list[Mark]:
    """For a sentence-window split: the selected sentence and the window the LLM reads after replacement.

    Nothing is marked unless the window recomputed from the neighbours' spans is
    exactly the text stored under the splitter's window key.
    """
    if not splitter.has_windows:
        return []
    nodes = split.nodes
    window_size = splitter.window_size
    i = split.index_of[selected.id]
    start = nodes[max(i - window_size, 0)].start_char
    end = nodes[min(i + window_size, len(nodes) - 1)].end_char
    if document.text[start:end] != selected.metadata.get(splitter.window_metadata_key):
        return []
    return [Mark(start, end, "window"), Mark(selected.start_char, selected.end_char, "focus")]


def tab_names(splitter: Any) -> list[str]:
    names = ["Source", "Node table", "Sizes"]
    if splitter.has_breakpoint_curve:
        names.append("Semantic distances")
    if splitter.has_levels:
        names.append("Parent / child tree")
    return names


def open_tab(splitter: Any) -> tuple[str, Any]:
    """Draw the tabs; return the open one's name and container.

    Only the open tab is drawn: switching tabs reruns the page. A 1 MB document's
    node table (~190 KB of Arrow) and histogram were otherwise re-sent and redrawn,
    hidden, on every parameter change.
    """
    names = tab_names(splitter)
    containers = st.tabs(names, key=TAB_KEY, on_change="rerun")
    for name, container in zip(names, containers, strict=True):
        if container.open:
            return name, container
    return names[0], containers[0]


def node_frame(table: pd.DataFrame, unit: str) -> pd.DataFrame:
    """The node table as shown: a ``#i`` column first, and columns with nothing to say left out."""
    shown = table.assign(node=[f"#{i}" for i in range(len(table))])[TABLE_COLUMNS]
    shown["flags"] = shown["flags"].map(lambda f: ", ".join(f) if isinstance(f, list | tuple) else str(f or ""))
    # Columns with nothing to say (no pages, no headers, sizes already in characters) are left out.
    blank = [c for c in ("pages", "header_path", "flags") if not shown[c].astype(str).str.strip().any()]
    if unit == "characters":
        blank.append("tokens")
    return shown.drop(columns=blank)


def ancestry(node: Node, nodes_by_id: dict[str, Node]) -> list[Node]:
    """``node`` and its parents, root first."""
    chain = []
    current: Node | None = node
    while current is not None:
        chain.append(current)
        current = nodes_by_id.get(current.parent_id) if current.parent_id else None
    return chain[::-1]


def span_caption(document: Document, node: Node) -> str:
    """``id `…` · characters 10–250 (240) · page 3``."""
    pages = document.pages_for_span(node.start_char, node.end_char)
    caption = f"id `{node.id}` · characters {node.start_char:,}–{node.end_char:,} ({len(node.text):,})"
    if len(pages) == 1:
        return f"{caption} · page {widgets.md_escape(pages[0].label)}"
    if pages:
        return f"{caption} · pages {widgets.md_escape(pages[0].label)}–{widgets.md_escape(pages[-1].label)}"
    return caption


# -- sidebar ------------------------------------------------------------------------


def pick_node(node_id: str) -> None:
    """Callback shared by every way of choosing a node (buttons, table, picker)."""
    state.select_node(node_id)
    st.session_state[NODE_KEY] = node_id


def document_picker(all_docs: Sequence[Document], labels: Sequence[str]) -> Document:
    """The Document select box, opened on the session's selected document; selects the one picked."""
    by_label = dict(zip(labels, all_docs, strict=False))
    st.header("Document", anchor=False)
    doc_key = f"{PAGE_KEY}.doc"
    if st.session_state.get(doc_key) not in by_label:
        wanted = state.selected_doc_id()
        st.session_state[doc_key] = next((lab for lab, d in by_label.items() if d.id == wanted), labels[0])
    document = by_label[st.selectbox("Document", labels, key=doc_key, label_visibility="collapsed")]
    state.select_doc(document.id)
    return document


def loader_settings(document: Document, config: PipelineConfig) -> tuple[tuple[Any, ...], str | None]:
    """The document's loader options (when its loader has any): the config's loaders with them, and any error."""
    loader_cls = loader_for(file_name(document))
    loaders = tuple(config.loaders)
    if not loader_cls.params():
        return loaders, None
    with st.expander(f"Loader options · {widgets.label_for(loader_cls.name)}", icon=":material/tune:"):
        raw = widgets.param_widgets(loader_cls, f"loader.{loader_cls.name}", config.loader_options(loader_cls.name))
        loader, error = widgets.try_build(loader_cls, raw)
    if loader is not None:
        loaders = tuple(x for x in config.loaders if x.name != loader_cls.name) + (loader,)
    return loaders, error


def splitter_settings(config: PipelineConfig) -> tuple[Any | None, str | None]:
    """The Splitter picker and its parameters, seeded from the config: ``(splitter, None)`` or ``(None, error)``."""
    st.header("Splitter", anchor=False)
    splitter_cls = widgets.component_picker(SPLITTERS, "Splitter", f"{PAGE_KEY}.splitter", config.splitter.name)
    seed = config.splitter.to_params() if config.splitter.name == splitter_cls.name else {}
    key = f"splitter.{splitter_cls.name}"
    widgets.preset_buttons(splitter_cls, key)
    raw = widgets.param_widgets(splitter_cls, key, seed)
    return widgets.try_build(splitter_cls, raw)


def stop_unless_usable(splitter: Any | None, loader_error: str | None, splitter_error: str | None) -> None:
    """Show each settings error; end the run when there is no splitter or the loader options are wrong."""
    for problem in (loader_error, splitter_error):
        if problem:
            st.error(f"These settings cannot be used: {widgets.md_escape(problem)}", icon=":material/error:")
    if splitter is None or loader_error:
        st.stop()


def apply_settings(
    config: PipelineConfig, document: Document, splitter: Any, loaders: tuple[Any, ...]
) -> tuple[PipelineConfig, Document]:
    """Store the config the sidebar describes, reload the document if it changed, and mirror both in the URL."""
    new_config = config.replace(splitter=splitter, loaders=loaders)
    if new_config != config:
        state.set_config(new_config)
        config = new_config
        # The document may read differently with new loader options.
        name = document.metadata.get("file_name")
        document = next((d for d in documents.all_documents(config) if d.metadata.get("file_name") == name), document)
        state.select_doc(document.id)
    st.query_params.from_dict({**config.to_query_params(), "doc": file_name(document)})
    return config, document


# -- split and measure --------------------------------------------------------------


def split_and_measure(document: Document, config: PipelineConfig, splitter: Any) -> Split:
    """The cached split, metrics and node table of one document; a ChunkScopeError is shown and ends the run."""
    slow = splitter.embeds_text
    try:
        with st.spinner("Embedding sentences and finding breakpoints…" if slow else "Splitting…", show_time=slow):
            nodes: list[Node] = cache.run_split_cached((document,), config)
            measure = cache.params_json({"size_limit": splitter.size_limit, "tokenizer": splitter.size_unit})
            metrics, rows = cache.report_cached((document,), nodes, measure)
            # What is drawn from the nodes alone is built once per split and measure, not on every rerun.
            view_key = f"{cache.nodes_key(nodes)}:{measure}"
    except ChunkScopeError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()
    return Split(
        nodes=nodes,
        metrics=metrics,
        rows=rows,
        view_key=view_key,
        index_of={node.id: i for i, node in enumerate(nodes)},
        nodes_by_id={node.id: node for node in nodes},
        levels=node_levels(nodes, splitter),
    )


def scope_and_fit(splitter: Any, document: Document, all_docs: Sequence[Document]) -> None:
    """Say that the splitter is every document's, and warn where it cannot do its job (e.g. no headings)."""
    reason = splitter.unsuited_reason(document)
    if reason:
        st.warning(widgets.md_escape(reason[:1].upper() + reason[1:]) + ".", icon=":material/warning:")
    others = [d for d in all_docs if d.id != document.id]
    unsuited = [file_name(d) for d in others if splitter.unsuited_reason(d)]
    note = (
        f"This splitter is the session's: all {len(all_docs)} loaded documents are split with it on Compare (A), "
        "Query, Evaluate and Export."
    )
    if unsuited:
        shown = ", ".join(unsuited[:4]) + (f" and {len(unsuited) - 4} more" if len(unsuited) > 4 else "")
        note += f" It does not suit {len(unsuited)} of the others ({shown}): each would be one node."
    st.caption(":material/info: " + widgets.md_escape(note))


def document_caption(name: str, document: Document, splitter: Any) -> None:
    st.caption(
        f"**{widgets.md_escape(name)}** · {len(document.text):,} characters"
        + (f" · {len(document.pages)} pages" if document.pages else "")
        + f" · split by **{widgets.label_for(splitter.name)}**"
    )


def stop_if_empty(split: Split) -> None:
    if not split.nodes:
        st.warning("This splitter made no nodes from this document.", icon=":material/warning:")
        st.stop()


def metric_cards(metrics: ChunkMetrics, splitter: Any) -> None:
    """Six cards: node count, mean size, coverage, overlap, mid-sentence ends, over the embedding window."""
    cards = split_summary.metric_cards(metrics, splitter.size_unit, splitter.size_limit)
    for column, card in zip(st.columns(len(cards)), cards, strict=True):
        # The detail (p95 beside the mean) is a second number, not a change: no colour, no arrow.
        column.metric(
            card.label,
            card.value,
            card.detail or None,
            delta_color="off",
            delta_arrow="off",
            border=True,
            height="stretch",
            help=card.help,
        )


def selected_node(split: Split) -> Node:
    """The session's selected node, or the first one when it is not in this split; the picker follows it."""
    selected_id = state.selected_node_id()
    if selected_id not in split.nodes_by_id:
        selected_id = split.nodes[0].id
        state.select_node(selected_id)
    st.session_state[NODE_KEY] = selected_id
    return split.nodes_by_id[selected_id]


# -- tabs ---------------------------------------------------------------------------


def source_tab(document: Document, split: Split, selected: Node, splitter: Any) -> None:
    """The document with coloured spans; a hierarchical split shows its leaves, a sentence window its window."""
    marks = window_marks(document, split, selected, splitter)
    drawn = leaf_nodes(split)
    if marks:
        st.caption(
            "The selected sentence is in orange, its window (what the LLM will read after replacement) in yellow."
        )
    if split.levels:
        st.caption(f"Showing the {len(drawn)} leaf nodes (level {max(split.levels)}); the tree tab shows every level.")
    show_source(
        document, drawn, selected_id=selected.id, marks=marks, key=f"{PAGE_KEY}.source", index_of=split.index_of
    )


def node_table_tab(split: Split, unit: str) -> None:
    """The node table; selecting a row opens that node (once per new selection, then reruns)."""
    st.caption("Select a row to open that node below.")
    event = st.dataframe(
        cache.derived(f"frame:{split.view_key}:{unit}", lambda: node_frame(split.table(), unit)),
        hide_index=True,
        width="stretch",
        height=420,
        on_select="rerun",
        selection_mode="single-row",
        key=f"{PAGE_KEY}.table",
        column_config={
            "node": st.column_config.TextColumn("Node", width="small"),
            "span": st.column_config.TextColumn(
                "Span", width="small", help="start_char–end_char in the document's text"
            ),
            "characters": st.column_config.NumberColumn("Characters", width="small"),
            "tokens": st.column_config.NumberColumn(f"Size ({split_summary.unit_name(unit)})"),
            "pages": st.column_config.TextColumn("Pages"),
            "header_path": st.column_config.TextColumn("Header path"),
            "first_words": st.column_config.TextColumn("First words", width="large"),
            "flags": st.column_config.TextColumn("Lint flags"),
        },
    )
    rows = event.selection.rows if event is not None else []
    picked_row = rows[0] if rows else None
    table_key = f"{PAGE_KEY}.table"
    # A selection stays in the widget across reruns: only a row not seen last run opens its node.
    if picked_row is not None and picked_row != state.picked_row(table_key) and picked_row < len(split.nodes):
        state.set_picked_row(table_key, picked_row)
        pick_node(split.nodes[picked_row].id)
        st.rerun()
    state.set_picked_row(table_key, picked_row)


def sizes_tab(split: Split, splitter: Any) -> None:
    unit, limit = splitter.size_unit, splitter.size_limit
    st.plotly_chart(
        cache.derived(
            f"hist:{split.view_key}:{limit}:{unit}",
            lambda: charts.size_histogram(list(split.table()["tokens"]), limit=limit, unit=split_summary.unit_name(unit)),
        ),
        width="stretch",
        key=f"{PAGE_KEY}.hist",
    )


def semantic_tab(document: Document, splitter: Any) -> None:
    """Each sentence's distance to the next, the threshold and the breakpoints it makes."""
    analysis = cache.semantic_analysis_cached(document, splitter.name, cache.params_json(splitter.to_params()))
    if analysis.threshold is None:
        st.info("Too few sentences to compare.")
        return
    st.plotly_chart(
        charts.distance_chart(analysis.scores, analysis.threshold, analysis.breakpoints),
        width="stretch",
        key=f"{PAGE_KEY}.distances",
    )
    st.caption(
        f"{len(analysis.sentence_spans)} sentences, {len(analysis.breakpoints)} breakpoints: a chunk ends "
        "wherever the score rises above the dashed threshold."
    )


def tree_tab(split: Split, selected: Node, root_label: str) -> None:
    """The hierarchy as a chart, and the selected node's chain of parents."""
    index_of = split.index_of
    tree_labels = {n.id: f"#{index_of[n.id]} (L{level})" for n, level in zip(split.nodes, split.levels, strict=False)}
    st.plotly_chart(
        charts.hierarchy_chart(split.nodes, tree_labels, root_label=root_label), width="stretch", key=f"{PAGE_KEY}.tree"
    )
    st.markdown(
        "Selected node's ancestry: "
        + " → ".join(
            f"`#{index_of[n.id]}` (level {n.metadata.get('level', 0)})" for n in ancestry(selected, split.nodes_by_id)
        )
    )


# -- node detail --------------------------------------------------------------------


def node_detail(document: Document, split: Split, selected: Node) -> None:
    """The selected node: a picker, its span, its links, what each model reads, and its metadata."""
    st.divider()
    head, picker = st.columns([2, 3], vertical_alignment="bottom")
    head.subheader(f"Node #{split.index_of[selected.id]}", anchor=False)
    labels = cache.derived(
        f"labels:{split.view_key}",
        lambda: {node.id: node_ui.node_label(i, node, 70) for i, node in enumerate(split.nodes)},
    )
    picker.selectbox(
        "Open node",
        list(split.nodes_by_id),
        key=NODE_KEY,
        format_func=labels.__getitem__,
        on_change=_picker_changed,
    )
    st.caption(span_caption(document, selected))
    node_ui.relationship_buttons(selected, split.index_of, split.nodes_by_id, pick_node, key=f"{PAGE_KEY}.rel")
    node_ui.reader_views(selected, embed_window=split.metrics.window_tokens)
    with st.expander(f"Metadata · {len(selected.metadata)} keys", expanded=True, icon=":material/sell:"):
        node_ui.show_metadata(selected)


def _picker_changed() -> None:
    state.select_node(st.session_state[NODE_KEY])
