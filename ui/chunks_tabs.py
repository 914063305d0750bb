"""The Chunks page's tabs: the source with coloured spans, the node table, sizes, semantic distances, the tree.

Only the open tab is drawn (:func:`open_tab`); which tabs there are comes from
what the splitter says of itself (``has_breakpoint_curve``, ``has_levels``).
Everything here reads one :class:`ui.chunks_view.Split`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from core.measure import split_summary
from core.output.highlight import Mark
from core.schema import Document, Node
from ui import cache, charts, state
from ui.chunks_view import PAGE_KEY, Split, pick_node
from ui.spans import show_source

TAB_KEY = f"{PAGE_KEY}.tab"
LINT_HELP = (
    "mid-sentence: ends inside a sentence · over-window: longer than the embedding model reads · "
    "over-limit: larger than the chunk size · tiny: a few words · duplicate: the same text as another node"
)
TABLE_COLUMNS = ["node", "span", "characters", "tokens", "pages", "header_path", "first_words", "flags"]


# -- what the tabs show (plain data) ------------------------------------------------


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


# -- the tabs ---------------------------------------------------------------------------


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


# The room the node table has at 1280 px (818 px less the selection column), and the widths of its columns but
# the first words, which take what the shown ones leave (the grid then grows every column in proportion).
NODE_TABLE_ROOM = 780
NODE_WIDTHS = {"node": 55, "span": 100, "characters": 60, "tokens": 50, "pages": 60, "header_path": 140, "flags": 200}
MIN_FIRST_WORDS = 120


def node_columns(shown: list[str], unit: str) -> dict[str, Any]:
    """How the node table shows its columns ``shown``: pixel widths that fit the page at 1280 px, short headers
    with the meaning in their help."""
    first_words = max(MIN_FIRST_WORDS, NODE_TABLE_ROOM - sum(NODE_WIDTHS.get(name, 0) for name in shown))
    text, number = st.column_config.TextColumn, st.column_config.NumberColumn
    return {
        "node": text("Node", width=NODE_WIDTHS["node"]),
        "span": text("Span", width=NODE_WIDTHS["span"], help="start_char–end_char in the document's text"),
        "characters": number("Chars", width=NODE_WIDTHS["characters"], help="Characters in the node's text"),
        "tokens": number(
            "Size", width=NODE_WIDTHS["tokens"], help=f"The node's size in {split_summary.unit_name(unit)}, the splitter's unit"
        ),
        "pages": text("Pages", width=NODE_WIDTHS["pages"]),
        "header_path": text("Header path", width=NODE_WIDTHS["header_path"]),
        "first_words": text("First words", width=first_words),
        "flags": text("Lint flags", width=NODE_WIDTHS["flags"], help=LINT_HELP),
    }


def node_table_tab(split: Split, unit: str) -> None:
    """The node table; selecting a row opens that node (once per new selection, then reruns)."""
    st.caption("Select a row to open that node below.")
    frame = cache.derived(f"frame:{split.view_key}:{unit}", lambda: node_frame(split.table(), unit))
    event = st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        height=420,
        on_select="rerun",
        selection_mode="single-row",
        key=f"{PAGE_KEY}.table",
        column_config=node_columns(list(frame.columns), unit),
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
    """The curve the splitter cut on, the threshold and the breakpoints, with the rule the splitter states."""
    analysis = cache.semantic_analysis_cached(document, splitter.name, cache.params_json(splitter.to_params()))
    # A curve too short to find a threshold on (chonkie's, shorter than its filter) is still drawn.
    if analysis.threshold is None and not analysis.scores:
        st.info("Too few sentences to compare.")
        return
    view = splitter.curve_view
    st.plotly_chart(charts.distance_chart(analysis, view), width="stretch", key=f"{PAGE_KEY}.distances")
    size_cuts = f", {len(analysis.size_cuts)} size cuts" if analysis.size_cuts else ""
    st.caption(
        f"{len(analysis.sentence_spans)} sentences, {len(analysis.breakpoints)} breakpoints{size_cuts}: {view.rule}"
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
