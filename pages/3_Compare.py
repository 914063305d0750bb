"""Compare: two to four splitter configurations on one document, side by side.

Each configuration keeps the session's loader options and metadata settings and
changes only the splitter, so the differences shown are the splitter's.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.compare import boundary_diff
from core.errors import ChunkScopeError
from core.schema import Document
from core.splitters import SPLITTERS
from core.splitters.hierarchical import leaf_nodes
from ui import cache, charts, state, widgets
from ui.compare import (
    LABELS,
    MAX_CONFIGS,
    badge_html,
    change_rows,
    diff_figure,
    metrics_row,
    settings_summary,
    starting_slots,
)
from ui.page import documents_or_stop, setup_page
from ui.spans import CSS, legend_html, source_html, source_windows

SPAN_HEIGHT_PX = 480


def pick_document(documents: list[Document]) -> Document:
    ids = [d.id for d in documents]
    names = {d.id: str(d.metadata.get("file_name", d.id)) for d in documents}
    if st.session_state.get("cmp.doc") not in ids:
        chosen = state.selected_doc_id()
        st.session_state["cmp.doc"] = chosen if chosen in ids else ids[0]
    doc_id = st.selectbox("Document", ids, key="cmp.doc", format_func=lambda i: names[i])
    state.select_doc(doc_id)
    return next(d for d in documents if d.id == doc_id)


def configuration(slot: int, start: tuple[str, dict], columns: int) -> object | None:
    """One slot's splitter: a picker over the registry and its declared parameters."""
    default_name, default_params = start
    picker_key = f"cmp.{slot}.splitter"
    cls = widgets.component_picker(SPLITTERS, "Splitter", picker_key, default=default_name)
    seed = default_params if cls.name == default_name else None
    values = widgets.param_widgets(cls, f"cmp.{slot}.{cls.name}", seed, columns=columns)
    splitter, error = widgets.try_build(cls, values)
    if error:
        st.error(error, icon=":material/error:")
    return splitter


# -- the page -----------------------------------------------------------------

setup_page()

st.title("Compare", anchor=False)
st.markdown(
    "Cut the same document with up to four splitter configurations and see where their chunks differ: "
    "the spans, which cut points moved, appeared or vanished, the metrics, and the size distributions."
)

documents = documents_or_stop()

config = state.config()
doc_col, count_col = st.columns([3, 2], vertical_alignment="bottom")
with doc_col:
    document = pick_document(documents)
with count_col:
    if st.session_state.get("cmp.count") not in range(2, MAX_CONFIGS + 1):
        st.session_state["cmp.count"] = 2
    count = st.segmented_control(
        "Configurations", list(range(2, MAX_CONFIGS + 1)), key="cmp.count", format_func=lambda n: f"{n} side by side"
    ) or 2

starts = starting_slots(SPLITTERS, (config.splitter.name, config.splitter.to_params()))
splitters = []
for slot, column in enumerate(st.columns(count, gap="small")):
    with column.container(border=True):
        st.html(badge_html(slot, f"Configuration {LABELS[slot]}", "the session's splitter" if slot == 0 else ""))
        splitters.append(configuration(slot, starts[slot], columns=2 if count == 2 else 1))

ready = [(slot, s) for slot, s in enumerate(splitters) if s is not None]
if len(ready) < 2:
    st.warning("Fix the settings above: at least two valid configurations are needed to compare.", icon=":material/info:")
    st.stop()

runs = {}
with st.spinner("Splitting with every configuration…"):
    for slot, splitter in ready:
        try:
            nodes = cache.run_split_cached([document], config.replace(splitter=splitter))
        except ChunkScopeError as exc:
            st.error(f"Configuration {LABELS[slot]}: {exc}", icon=":material/error:")
            continue
        # Nested levels (hierarchical) overlap by design: compare the leaves, the chunks that get embedded.
        runs[slot] = leaf_nodes(nodes)
ready = [(slot, s) for slot, s in ready if slot in runs]
if len(ready) < 2:
    st.warning("At least two configurations must split this document to compare them.", icon=":material/info:")
    st.stop()

# -- metrics ---------------------------------------------------------------------

st.subheader(":material/table_chart: Metrics", anchor=False)
rows = []
for slot, splitter in ready:
    options = {"tokenizer": "model"}
    if getattr(splitter, "size_unit", None) == "model" and splitter.size_limit:
        options["size_limit"] = splitter.size_limit
    metrics = cache.metrics_cached([document], runs[slot], json.dumps(options, sort_keys=True))
    rows.append(metrics_row(LABELS[slot], splitter, metrics))
st.dataframe(
    pd.DataFrame(rows),
    hide_index=True,
    width="stretch",
    column_config={
        "config": st.column_config.TextColumn("Config", width="small"),
        "splitter": st.column_config.TextColumn("Splitter"),
        "settings": st.column_config.TextColumn(
            "Settings", width="medium", help="Parameters changed from the splitter's defaults"
        ),
        "nodes": st.column_config.NumberColumn("Nodes"),
        "mean tokens": st.column_config.NumberColumn("Mean tokens", format="%.1f", help="Embedding-model tokens"),
        "p95 tokens": st.column_config.NumberColumn("p95 tokens", format="%.1f"),
        "max tokens": st.column_config.NumberColumn("Max tokens"),
        "coverage": st.column_config.NumberColumn(
            "Coverage", format="%.1f%%", help="Non-blank text inside at least one chunk"
        ),
        "overlap": st.column_config.NumberColumn("Overlap", format="%.1f%%", help="Text held by two or more chunks"),
        "mid-sentence": st.column_config.NumberColumn("Mid-sentence", format="%.0f%%", help="Chunks ending inside a sentence"),
        "over window": st.column_config.NumberColumn(
            "Over window", format="%.0f%%", help="Chunks whose EMBED view is longer than the embedding model reads"
        ),
    },
)

spans_tab, diff_tab, sizes_tab = st.tabs(
    [":material/view_column: Spans side by side", ":material/difference: Boundary diff", ":material/bar_chart: Chunk sizes"]
)

# -- spans -------------------------------------------------------------------------

with spans_tab:
    windows = source_windows(document)
    window = windows[0]
    if len(windows) > 1:
        if st.session_state.get("cmp.window", 0) >= len(windows):
            st.session_state["cmp.window"] = 0
        index = st.selectbox(
            f"Part of the document ({len(windows)} parts, the same part for every configuration)",
            range(len(windows)),
            key="cmp.window",
            format_func=lambda i: f"Part {i + 1}: {windows[i].label}",
        )
        window = windows[index]
    st.html(CSS + legend_html())
    for (slot, splitter), column in zip(ready, st.columns(len(ready), gap="small"), strict=True):
        with column:
            st.html(badge_html(slot, widgets.label_for(splitter.name), f"{len(runs[slot]):,} chunks"))
            st.caption(settings_summary(splitter))
            st.html(
                source_html(
                    document.text,
                    runs[slot],
                    start=window.start,
                    end=window.end,
                    pages=document.pages,
                    height_px=SPAN_HEIGHT_PX,
                    include_css=False,
                )
            )

# -- boundary diff -----------------------------------------------------------------

with diff_tab:
    base_slot, _ = ready[0]
    diffs = [(LABELS[slot], boundary_diff(runs[base_slot], runs[slot])) for slot, _ in ready[1:]]
    st.caption(
        "A cut point is where a chunk starts or ends. Against configuration A, each other configuration's cut points "
        "are the same, moved (paired with the nearest of A's, in order), new, or gone."
    )
    for label, diff in diffs:
        counts = diff.counts()
        head, same, moved, added, removed = st.columns([2, 1, 1, 1, 1], vertical_alignment="center")
        head.html(badge_html(LABELS.index(label), f"{label} against A", "identical cuts" if diff.is_identical else ""))
        same.metric("Same", f"{counts['unchanged']:,}", border=True)
        moved.metric("Moved", f"{counts['moved']:,}", border=True)
        added.metric("New", f"{counts['added']:,}", border=True)
        removed.metric("Gone", f"{counts['removed']:,}", border=True)
    st.plotly_chart(diff_figure(diffs, len(document.text)), width="stretch", config={"displayModeBar": False})
    changes = [row for label, diff in diffs for row in change_rows(label, diff, document.text)]
    with st.expander(f"Every changed cut point ({len(changes):,})", expanded=False):
        if changes:
            st.dataframe(pd.DataFrame(changes), hide_index=True, width="stretch")
        else:
            st.caption("No cut point differs.")

# -- sizes -------------------------------------------------------------------------

with sizes_tab:
    unit = st.segmented_control(
        "Measure in", ["model tokens", "characters"], key="cmp.unit", default="model tokens"
    ) or "model tokens"
    series = {}
    for slot, splitter in ready:
        texts = tuple(node.text for node in runs[slot])
        sizes = cache.count_tokens(texts, "model") if unit == "model tokens" else [len(text) for text in texts]
        series[f"{LABELS[slot]} · {widgets.label_for(splitter.name)}"] = sizes
    st.plotly_chart(
        charts.size_histogram(series, unit=unit, title=f"Chunk sizes, overlaid ({unit})"),
        width="stretch",
        config={"displayModeBar": False},
    )
