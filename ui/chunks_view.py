"""The Chunks page's pieces: its sidebar, its split and header, and its node detail (the tabs: :mod:`ui.chunks_tabs`).

``pages/1_Chunks.py`` reads as a short script of these calls. Every widget key
starts with :data:`PAGE_KEY`, so tests and links find the same keys as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from core.config import PipelineConfig
from core.errors import ChunkScopeError
from core.loaders import loader_for
from core.measure import split_summary
from core.measure.metrics import ChunkMetrics
from core.schema import Document, Node
from core.spans import rewrites
from core.splitters import SPLITTERS
from core.splitters.hierarchical import leaf_nodes
from core.words import page_count
from ui import cache, documents, state, widgets
from ui import nodes as node_ui

PAGE_KEY = "chunks"
NODE_KEY = f"{PAGE_KEY}.node"
# Above this many nodes the picker is a node number, not a list: each option is ~80 bytes
# sent on every rerun (3,431 sentence nodes of a 1 MB text made 285 KB of the page's 337).
PICKER_LIST_MAX = 500
NODE_NUMBER_KEY = f"{PAGE_KEY}.node_number"


@dataclass(frozen=True)
class Split:
    """One document split and measured, with what every tab reads from it."""

    nodes: list[Node]
    metrics: ChunkMetrics
    # The node table's rows (core.measure.metrics.chunk_report_deferred), built on first call; shared with the cache: read only.
    rows: Callable[[], list[dict[str, Any]]]
    # Names the split and the measure: the key of everything derived from the nodes alone.
    view_key: str
    index_of: dict[str, int]
    nodes_by_id: dict[str, Node]
    # Each node's level for a hierarchical split, else empty.
    levels: list[int]

    def table(self) -> pd.DataFrame:
        """The rows as a frame, built once per split, and only by the tabs that show it."""
        return cache.derived(f"table:{self.view_key}", lambda: pd.DataFrame(self.rows()))


# -- plain data -------------------------------------------------------------------


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
    state.set_widget_value(NODE_KEY, node_id)


def document_picker(all_docs: Sequence[Document], labels: Sequence[str]) -> Document:
    """The Document select box, opened on the session's selected document; selects the one picked."""
    by_label = dict(zip(labels, all_docs, strict=False))
    st.header("Document", anchor=False)
    doc_key = f"{PAGE_KEY}.doc"
    wanted = state.selected_doc_id()
    state.keep_valid(doc_key, labels, next((lab for lab, d in by_label.items() if d.id == wanted), None))
    document = by_label[st.selectbox("Document", labels, key=doc_key, label_visibility="collapsed")]
    state.select_doc(document.id)
    return document


def loader_settings(document: Document, config: PipelineConfig) -> tuple[tuple[Any, ...], str | None]:
    """The document's loader options (when its loader has any): the config's loaders with them, and any error."""
    loader_cls = loader_for(file_name(document))
    loaders = tuple(config.loaders)
    if not loader_cls.params():
        return loaders, None
    with st.expander(f"Loader options · {loader_cls.title()}", icon=":material/tune:"):
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
        note += f" It does not suit {len(unsuited)} of the others ({shown}): pick one to see why."
    st.caption(":material/info: " + widgets.md_escape(note))


def document_caption(name: str, document: Document, splitter: Any) -> None:
    st.caption(
        f"**{widgets.md_escape(name)}** · {len(document.text):,} characters"
        + (f" · {page_count(document)}" if document.pages else "")
        + f" · split by **{splitter.title()}**"
    )


def span_status_caption(split: Split) -> None:
    """A framework engine's (or a compat mode's) split says how many chunks are cuts of the source and how many
    were rewritten to match the framework."""
    if rewrites.has_span_status(split.nodes):
        st.caption(
            ":material/fact_check: Span recovery · "
            + rewrites.status_summary(split.nodes)
            + " (rewritten: the framework changed the text; the node detail shows how)"
        )


def stop_if_empty(split: Split) -> None:
    if not split.nodes:
        st.warning("This splitter made no nodes from this document.", icon=":material/warning:")
        st.stop()


CARDS_PER_ROW = 3


def metric_cards(metrics: ChunkMetrics, splitter: Any) -> None:
    """Six cards: node count, mean size, coverage, overlap, mid-sentence ends, over the embedding window."""
    cards = split_summary.metric_cards(metrics, splitter.size_unit, splitter.size_limit, splitter.level_sizes)
    # Three to a row: six in one row cut "100.0%" to "100…" at 1280 px.
    columns = [column for _ in range(0, len(cards), CARDS_PER_ROW) for column in st.columns(CARDS_PER_ROW)]
    for column, card in zip(columns, cards, strict=False):
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
    """The session's selected node, or the first embedded one when it is not in this split (a hierarchy's first
    leaf, not its root, which is larger than the model reads); the picker follows it."""
    selected_id = state.selected_node_id()
    if selected_id not in split.nodes_by_id:
        selected_id = (leaf_nodes(split.nodes) or split.nodes)[0].id
        state.select_node(selected_id)
    state.set_widget_value(NODE_KEY, selected_id)
    state.set_widget_value(NODE_NUMBER_KEY, split.index_of[selected_id])
    return split.nodes_by_id[selected_id]


# -- node detail --------------------------------------------------------------------


def node_detail(document: Document, split: Split, selected: Node) -> None:
    """The selected node: a picker, its span, its links, what each model reads, and its metadata."""
    st.divider()
    head, picker = st.columns([2, 3], vertical_alignment="bottom")
    head.subheader(f"Node #{split.index_of[selected.id]}", anchor=False)
    with picker:
        node_picker(split)
    st.caption(span_caption(document, selected))
    node_ui.rewrite_detail(document.text, selected)
    node_ui.relationship_buttons(selected, split.index_of, split.nodes_by_id, pick_node, key=f"{PAGE_KEY}.rel")
    node_ui.reader_views(selected, embed_window=split.metrics.window_tokens, retrieval=state.config().retrieval)
    with st.expander(f"Metadata · {len(selected.metadata)} keys", expanded=True, icon=":material/sell:"):
        node_ui.show_metadata(selected)


def node_picker(split: Split) -> None:
    """Open a node: from a list of every node's first words, or by its number when the nodes are too many to list."""
    count = len(split.nodes)
    if count <= PICKER_LIST_MAX:
        labels = cache.derived(
            f"labels:{split.view_key}",
            lambda: {node.id: node_ui.node_label(i, node, 70) for i, node in enumerate(split.nodes)},
        )
        st.selectbox(
            "Open node",
            list(split.nodes_by_id),
            key=NODE_KEY,
            format_func=labels.__getitem__,
            on_change=_picker_changed,
        )
        return
    st.number_input(
        "Open node #",
        min_value=0,
        max_value=count - 1,
        step=1,
        key=NODE_NUMBER_KEY,
        on_change=_number_changed,
        args=([node.id for node in split.nodes],),
        help=f"{count:,} nodes are too many to list: type a node's number, or find a node by its words "
        "with the search of the Node table tab and select its row.",
    )


def _picker_changed() -> None:
    state.select_node(state.widget_value(NODE_KEY))


def _number_changed(node_ids: Sequence[str]) -> None:
    state.select_node(node_ids[int(state.widget_value(NODE_NUMBER_KEY))])
