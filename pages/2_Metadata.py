"""Metadata: what each node carries, and what the LLM and the embedding model each read of it.

The settings made here (extra keys, extractors, excluded keys, templates) are
stored in the session's PipelineConfig, so the Chunks page, Compare and every
export use them too.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from core.config import MetadataSettings
from core.errors import ChunkScopeError, ConfigError
from core.extractors import EXTRACTORS
from core.schema import Document
from ui import cache, state, widgets
from ui.metadata import (
    chosen_exclusions,
    extra_frame,
    extra_from_rows,
    key_choices,
    key_origins,
    metadata_rows,
)
from ui.nodes import node_label, reader_views
from ui.page import documents_or_stop, setup_page

EXCLUDED = ("excluded_llm_metadata_keys", "excluded_embed_metadata_keys")
EDITOR_KEY = "meta.extra.editor"
EDITOR_BASE = "meta.extra.base"


def pick_document(documents: list[Document]) -> Document:
    ids = [d.id for d in documents]
    names = {d.id: str(d.metadata.get("file_name", d.id)) for d in documents}
    if st.session_state.get("meta.doc") not in ids:
        chosen = state.selected_doc_id()
        st.session_state["meta.doc"] = chosen if chosen in ids else ids[0]
    doc_id = st.selectbox("Document", ids, key="meta.doc", format_func=lambda i: names[i])
    state.select_doc(doc_id)
    return next(d for d in documents if d.id == doc_id)


def extra_editor(config) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The key/value editor for metadata added to every document."""
    # The editor keeps its edits against a base table; rebuild the base from the
    # config only when the editor is drawn afresh (first visit, or back from another page).
    if EDITOR_KEY not in st.session_state or EDITOR_BASE not in st.session_state:
        st.session_state[EDITOR_BASE] = [{"key": k, "value": str(v)} for k, v in config.metadata.extra]
    edited = st.data_editor(
        extra_frame((row["key"], row["value"]) for row in st.session_state[EDITOR_BASE]),
        key=EDITOR_KEY,
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        column_config={
            "key": st.column_config.TextColumn("Key", help="A metadata key, e.g. department"),
            "value": st.column_config.TextColumn("Value", help="Its value (text)"),
        },
        placeholder="",
    )
    return extra_from_rows(edited.to_dict("records"))


def extractor_settings(config) -> tuple[list, list[str]]:
    """A toggle per offline extractor, with its declared parameters when on."""
    current = {extractor.name: extractor for extractor in config.extractors}
    chosen, errors = [], []
    for cls in EXTRACTORS:
        toggle_key = f"meta.extractor.{cls.name}.on"
        if toggle_key not in st.session_state:
            st.session_state[toggle_key] = cls.name in current
        keys = ", ".join(f"`{key}`" for key in cls.keys)
        on = st.toggle(f"**{widgets.label_for(cls.name)}** → {keys}", key=toggle_key, help=cls.summary)
        if not on:
            continue
        with st.container(border=True):
            st.caption(cls.summary)
            existing = current.get(cls.name)
            values = widgets.param_widgets(
                cls, f"meta.extractor.{cls.name}", existing.to_params() if existing else None, columns=2
            )
            extractor, error = widgets.try_build(cls, values)
        if error:
            errors.append(error)
        elif extractor is not None:
            chosen.append(extractor)
    return chosen, errors


def exclusion_pickers(config, document: Document, nodes) -> dict[str, tuple[str, ...] | None]:
    """Multiselects over the keys the nodes carry: which keys each reader does not see."""
    out = {}
    labels = {
        "excluded_llm_metadata_keys": ("Hidden from the LLM", ":material/smart_toy:"),
        "excluded_embed_metadata_keys": ("Hidden from the embedding model", ":material/hub:"),
    }
    for name in EXCLUDED:
        configured = getattr(config.metadata, name)
        loader_default = list(getattr(document, name))
        selected_now = list(configured) if configured is not None else loader_default
        wkey = f"meta.exclude.{name}"
        if wkey not in st.session_state:
            st.session_state[wkey] = selected_now
        options = key_choices(nodes, st.session_state[wkey])
        label, icon = labels[name]
        with st.container():
            selected = st.multiselect(
                f"{icon} {label}",
                options,
                key=wkey,
                placeholder="Every key is shown",
                help=MetadataSettings.params()[EXCLUDED.index(name)].help,
            )
        out[name] = chosen_exclusions(selected, configured, loader_default)
    return out


def build_settings(template_values: dict, exclusions: dict, extra) -> tuple[MetadataSettings | None, str | None]:
    raw = {**template_values}
    settings, error = widgets.try_build(MetadataSettings, raw)
    if settings is None:
        return None, error
    try:
        return dataclasses.replace(settings, extra=tuple(extra), **exclusions), None
    except ConfigError as exc:
        return None, str(exc)


def reset() -> None:
    config = state.config()
    state.set_config(config.replace(metadata=MetadataSettings(), extractors=()))
    for key in list(st.session_state):
        if str(key).startswith("meta.") and key != "meta.doc":
            del st.session_state[key]


# -- the page -----------------------------------------------------------------

setup_page()

st.title("Metadata", anchor=False)
st.markdown(
    "Every node inherits its document's metadata. Decide which keys exist, which of them the **LLM** and the "
    "**embedding model** each get to read, and how they are written, and watch both views of a node change."
)

documents = documents_or_stop()

config = state.config()
settings_col, preview_col = st.columns([4, 7], gap="large")

with settings_col:
    document = pick_document(documents)

    with st.container(border=True):
        st.markdown("#### :material/edit_note: Your metadata")
        st.caption(
            "Keys added to every document; they win over a loader's key of the same name. "
            "Type in the last row to add one; select a row and press Delete to remove it."
        )
        extra, extra_error = extra_editor(config)
        if extra_error:
            st.error(extra_error, icon=":material/error:")

    with st.container(border=True):
        st.markdown("#### :material/auto_awesome: Extractors")
        st.caption("Offline: computed from the text, no model and no network. Their keys appear in the preview.")
        extractors, extractor_errors = extractor_settings(config)
        for error in extractor_errors:
            st.error(error, icon=":material/error:")

    exclusions_box = st.container(border=True)

    with st.container(border=True):
        st.markdown("#### :material/format_shapes: Templates")
        st.caption(
            "`{key}` and `{value}` make one line of metadata; `{metadata_str}` and `{content}` join metadata "
            "and text. Write `\\n` for a line break."
        )
        template_values = widgets.param_widgets(
            MetadataSettings, "meta.view", config.metadata.to_params(), exclude=EXCLUDED
        )
        template_error_box = st.empty()

    st.button("Reset metadata settings", icon=":material/restart_alt:", on_click=reset, type="tertiary")

# A draft with the new keys and extractors tells which keys the nodes will carry.
draft_metadata = config.metadata
if extra_error is None:
    try:
        draft_metadata = dataclasses.replace(config.metadata, extra=extra)
    except ConfigError as exc:
        extra_error = str(exc)
draft = config.replace(metadata=draft_metadata, extractors=tuple(extractors))
try:
    with st.spinner("Splitting…"):
        draft_nodes = cache.run_split_cached([document], draft)
except ChunkScopeError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()

with exclusions_box:
    st.markdown("#### :material/visibility: Who reads which key")
    exclusions = exclusion_pickers(config, document, draft_nodes)

settings, settings_error = build_settings(template_values, exclusions, draft_metadata.extra)
if settings_error:
    template_error_box.error(settings_error, icon=":material/error:")

applied = config
if settings is not None and not extra_error and not extractor_errors:
    applied = config.replace(metadata=settings, extractors=tuple(extractors))
    if applied != config:
        state.set_config(applied)

with preview_col:
    try:
        with st.spinner("Splitting…"):
            nodes = cache.run_split_cached([document], applied)
    except ChunkScopeError as exc:
        st.error(str(exc), icon=":material/error:")
        st.stop()
    st.markdown("#### :material/preview: Live preview")
    st.caption(
        f"{len(nodes):,} nodes from this document with the {widgets.label_for(applied.splitter.name).lower()} "
        "splitter of the current configuration (change it on the Chunks page)."
    )
    if settings_error or extra_error or extractor_errors:
        st.warning("The preview shows the last valid settings until the problem on the left is fixed.", icon=":material/info:")
    if not nodes:
        st.info("This document gives no nodes with the current splitter.", icon=":material/info:")
        st.stop()
    ids = [n.id for n in nodes]
    if st.session_state.get("meta.node") not in ids:
        chosen = state.selected_node_id()
        st.session_state["meta.node"] = chosen if chosen in ids else ids[0]
    labels = {n.id: node_label(i, n, width=70) for i, n in enumerate(nodes)}
    node_id = st.selectbox("Node", ids, key="meta.node", format_func=lambda i: labels[i])
    state.select_node(node_id)
    node = nodes[ids.index(node_id)]

    reader_views(node)

    st.markdown("**Keys on this node**")
    origins = key_origins(
        node,
        loader_keys=document.metadata,
        extra_keys=[key for key, _ in applied.metadata.extra],
        extractor_keys=[key for extractor in applied.extractors for key in type(extractor).keys],
    )
    st.dataframe(
        metadata_rows(node, origins),
        hide_index=True,
        width="stretch",
        column_config={
            "key": st.column_config.TextColumn("Key"),
            "value": st.column_config.TextColumn("Value", width="medium"),
            "from": st.column_config.TextColumn("From", help="Where the key comes from"),
            "LLM sees": st.column_config.CheckboxColumn("LLM sees", width="small"),
            "EMBED sees": st.column_config.CheckboxColumn("EMBED sees", width="small"),
        },
    )
