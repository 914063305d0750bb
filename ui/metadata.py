"""The Metadata page's pieces: its settings boxes, its live preview, and the pure logic under them.

The first half is pure (no Streamlit calls) and tested without a running app: the
key/value editor's rows, key origins, excluded-key choices, and how the page's
values become a MetadataSettings and a config. The second half draws the page's
boxes; AppTest covers it through ``pages/2_Metadata.py``. Every widget key starts
with ``meta.``, which is how :func:`reset` finds them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.config import PipelineConfig
from core.config_parts import MetadataSettings
from core.errors import ChunkScopeError, ConfigError
from core.extractors import EXTRACTORS
from core.extractors.sections import SECTION_KEY
from core.schema import Document, Node
from ui import cache, state, widgets
from ui.nodes import metadata_table, node_label

# The two readers' excluded-key settings, in the order the page shows their pickers.
EXCLUDED = ("excluded_llm_metadata_keys", "excluded_embed_metadata_keys")
EXCLUDED_LABELS = {
    "excluded_llm_metadata_keys": ("Hidden from the LLM", ":material/smart_toy:"),
    "excluded_embed_metadata_keys": ("Hidden from the embedding model", ":material/hub:"),
}
EDITOR_KEY = "meta.extra.editor"
# Who reads a node's section path: the choices of MetadataSettings.section_metadata, in words.
SECTION_CHOICES = {"off": "Off", "embed": "Embedding model only", "llm_and_embed": "LLM and embedding model"}
# Drawn in the "Who reads which key" box, not among the templates.
READING = (*EXCLUDED, "embed_metadata_keys", "section_metadata")

EDITOR_COLUMNS = ("key", "value")

ORIGIN_YOURS = "added here"
ORIGIN_EXTRACTOR = "extractor"
ORIGIN_LOADER = "loader"
ORIGIN_SPLITTER = "splitter"
ORIGIN_SECTION = "section path"


def extra_frame(extra: Iterable[tuple[str, Any]]) -> pd.DataFrame:
    """The user's metadata pairs as the editor's table (values shown as text)."""
    return pd.DataFrame([{"key": key, "value": str(value)} for key, value in extra], columns=list(EDITOR_COLUMNS))


def extra_from_rows(rows: Sequence[Mapping[str, Any]]) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The pairs from the editor's rows, and a sentence about the first problem (or None).

    Blank rows are skipped; a value without a key and a key given twice are problems.
    """
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        key = _cell(row.get("key"))
        value = _cell(row.get("value"))
        if not key:
            if value:
                return tuple(pairs), f"Row {number} has a value but no key: give it a key or clear the row."
            continue
        if key in seen:
            return tuple(pairs), f"The key {key!r} is given twice: each key can hold one value."
        seen.add(key)
        pairs.append((key, value))
    return tuple(pairs), None


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):  # empty cells arrive as None or NaN
        return ""
    return str(value).strip()


def key_origins(
    node: Node,
    *,
    loader_keys: Iterable[str],
    extra_keys: Iterable[str],
    extractor_keys: Iterable[str],
) -> dict[str, str]:
    """Where each of ``node``'s metadata keys comes from; the user's keys win, as they do in the config."""
    yours, extracted, loaded = set(extra_keys), set(extractor_keys), set(loader_keys)
    origins = {}
    for key in node.metadata:
        if key in yours:
            origins[key] = ORIGIN_YOURS
        elif key in extracted:
            origins[key] = ORIGIN_EXTRACTOR
        elif key in loaded:
            origins[key] = ORIGIN_LOADER
        elif key == SECTION_KEY:
            origins[key] = ORIGIN_SECTION
        else:
            origins[key] = ORIGIN_SPLITTER
    return origins


def metadata_rows(node: Node, origins: Mapping[str, str]) -> pd.DataFrame:
    """One row per key of ``node``: value, origin, and whether the LLM and the embedding model see it."""
    table = metadata_table(node)
    table.insert(2, "from", [origins.get(key, ORIGIN_SPLITTER) for key in table["key"]])
    return table


def key_choices(nodes: Sequence[Node], *also: Iterable[str]) -> list[str]:
    """Every metadata key the nodes carry (in first-seen order), plus ``also`` (e.g. keys already excluded)."""
    keys: dict[str, None] = {}
    for node in nodes:
        keys.update(dict.fromkeys(node.metadata))
    for extra in also:
        keys.update(dict.fromkeys(extra))
    return list(keys)


def chosen_exclusions(
    selected: Sequence[str], configured: Sequence[str] | None, loader_default: Sequence[str]
) -> tuple[str, ...] | None:
    """What the config should hold for one reader's excluded keys.

    Unset (None) means "what the loader chose"; it stays unset while the selection
    still equals the loader's choice, so configs and links only carry real changes.
    """
    if configured is None and sorted(selected) == sorted(loader_default):
        return None
    return tuple(selected)


def draft_metadata(
    metadata: MetadataSettings, extra: tuple[tuple[str, str], ...], extra_error: str | None
) -> tuple[MetadataSettings, str | None]:
    """``metadata`` with the editor's pairs, and the editor's problem (or None).

    With a problem already found in the editor's rows, or pairs the settings
    refuse, the settings keep their current pairs and the problem is returned.
    """
    if extra_error is not None:
        return metadata, extra_error
    try:
        return dataclasses.replace(metadata, extra=extra), None
    except ConfigError as exc:
        return metadata, str(exc)


def build_settings(
    template_values: Mapping[str, Any],
    exclusions: Mapping[str, Any],
    extra: tuple[tuple[str, str], ...],
) -> tuple[MetadataSettings | None, str | None]:
    """The templates, exclusions and pairs as one MetadataSettings: ``(settings, None)`` or ``(None, the problem)``."""
    settings, error = widgets.try_build(MetadataSettings, template_values)
    if settings is None:
        return None, error
    try:
        return dataclasses.replace(settings, extra=tuple(extra), **exclusions), None
    except ConfigError as exc:
        return None, str(exc)


def applied_config(
    config: PipelineConfig,
    settings: MetadataSettings | None,
    extractors: Sequence[Any],
    *,
    valid: bool,
    llm: Any = None,
) -> PipelineConfig:
    """The config the preview shows: ``config`` with the new settings, extractors (and LLM connection, if given),
    or unchanged while any is invalid."""
    if settings is None or not valid:
        return config
    return config.replace(metadata=settings, extractors=tuple(extractors), **({"llm": llm} if llm is not None else {}))


# -- Streamlit: the settings column ----------------------------------------------------


def extra_section(config: PipelineConfig) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The "Your metadata" box: the key/value editor for metadata added to every document, and its problem."""
    with st.container(border=True):
        st.markdown("#### :material/edit_note: Your metadata")
        st.caption(
            "Keys added to every document; they win over a loader's key of the same name. "
            "Type in the last row to add one; select a row and press Delete to remove it."
        )
        extra, error = _extra_editor(config)
        if error:
            st.error(widgets.md_escape(error), icon=":material/error:")
    return extra, error


def _extra_editor(config: PipelineConfig) -> tuple[tuple[tuple[str, str], ...], str | None]:
    # The editor keeps its edits against a base table; rebuild the base from the
    # config only when the editor is drawn afresh (first visit, or back from another page).
    base = state.metadata_editor_base()
    if not state.has_widget_value(EDITOR_KEY) or base is None:
        base = [{"key": k, "value": str(v)} for k, v in config.metadata.extra]
        state.set_metadata_editor_base(base)
    edited = st.data_editor(
        extra_frame((row["key"], row["value"]) for row in base),
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


def extractor_section(config: PipelineConfig) -> tuple[list[Any], list[str]]:
    """The "Extractors" box: a toggle per offline extractor, with its declared parameters when on.

    Returns the valid extractors switched on, and a sentence per invalid one (also shown in the box).
    The LLM extractors have their own box (:mod:`ui.llm`).
    """
    current = {extractor.name: extractor for extractor in config.extractors}
    chosen, errors = [], []
    with st.container(border=True):
        st.markdown("#### :material/auto_awesome: Extractors")
        st.caption("Offline: computed from the text, no model and no network. Their keys appear in the preview.")
        for cls in EXTRACTORS:
            if cls.node_level:
                continue
            toggle_key = f"meta.extractor.{cls.name}.on"
            state.seed_widget(toggle_key, cls.name in current)
            keys = ", ".join(f"`{key}`" for key in cls.keys)
            on = st.toggle(f"**{cls.title()}** → {keys}", key=toggle_key, help=cls.summary)
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
        for error in errors:
            st.error(widgets.md_escape(error), icon=":material/error:")
    return chosen, errors


def exclusion_section(
    config: PipelineConfig, document: Document, nodes: Sequence[Node]
) -> dict[str, tuple[str, ...] | None]:
    """The "Who reads which key" pickers over the keys the nodes carry: which keys each reader does not see.

    Draw it inside the box kept for it: the choices depend on a split made after the boxes above and below.
    """
    st.markdown("#### :material/visibility: Who reads which key")
    out = {}
    for name in EXCLUDED:
        configured = getattr(config.metadata, name)
        loader_default = list(getattr(document, name))
        wkey = f"meta.exclude.{name}"
        if configured is None and state.seeded_for(wkey) not in (None, document.id):
            # Nothing set yet: each document shows its own loader's choice, so viewing another one changes
            # nothing in the configuration (the last document's choice would have been written for every file).
            state.set_widget_value(wkey, loader_default)
        state.set_seeded_for(wkey, document.id)
        seeded = state.seed_widget(wkey, list(configured) if configured is not None else loader_default)
        label, icon = EXCLUDED_LABELS[name]
        with st.container():
            # The icon stands beside the box, not in its label: a screen reader would read the raw shortcode.
            st.markdown(f"{icon} **{label}**")
            selected = st.multiselect(
                label,
                key_choices(nodes, seeded),
                key=wkey,
                placeholder="Every key is shown",
                label_visibility="collapsed",
                help=MetadataSettings.params()[EXCLUDED.index(name)].help,
            )
        out[name] = chosen_exclusions(selected, configured, loader_default)
        if out[name] is not None:
            st.caption("Set for every document: it replaces each file's own choice.")
    out.update(embed_reading_section(config, nodes))
    return out


def embed_reading_section(config: PipelineConfig, nodes: Sequence[Node]) -> dict[str, Any]:
    """The two levers of what the embedding model reads: a section path per node, and an allow list of keys."""
    metadata = config.metadata
    specs = {spec.name: spec for spec in MetadataSettings.params()}
    state.seed_widget("meta.section", metadata.section_metadata)
    section = st.selectbox(
        ":material/account_tree: **Section path** (`section`)",
        list(SECTION_CHOICES),
        key="meta.section",
        format_func=SECTION_CHOICES.__getitem__,
        help=specs["section_metadata"].help,
    )
    state.seed_widget("meta.embed_only.on", metadata.embed_metadata_keys is not None)
    only = st.toggle(
        ":material/hub: The embedding model reads only chosen keys",
        key="meta.embed_only.on",
        help=specs["embed_metadata_keys"].help,
    )
    allowed = None
    if only:
        seeded = state.seed_widget("meta.embed_only.keys", list(metadata.embed_metadata_keys or ()))
        allowed = tuple(
            st.multiselect(
                "Keys the embedding model reads",
                key_choices(nodes, [SECTION_KEY], seeded),
                key="meta.embed_only.keys",
                placeholder="None: it reads the text alone",
            )
        )
    return {"section_metadata": section, "embed_metadata_keys": allowed}


def template_section(config: PipelineConfig) -> tuple[dict[str, Any], Any]:
    """The "Templates" box: the template widgets' values, and an empty slot in the box for their problem."""
    with st.container(border=True):
        st.markdown("#### :material/format_shapes: Templates")
        st.caption(
            "`{key}` and `{value}` make one line of metadata; `{metadata_str}` and `{content}` join metadata "
            "and text. Write `\\n` for a line break."
        )
        values = widgets.param_widgets(MetadataSettings, "meta.view", config.metadata.to_params(), exclude=READING)
        error_slot = st.empty()
    return values, error_slot


def reset() -> None:
    """Back to default metadata settings and no extractors; forget the page's widgets (but keep the document)."""
    config = state.config()
    state.set_config(config.replace(metadata=MetadataSettings(), extractors=()))
    state.forget_widgets("meta.", keep=("meta.doc",))


def reset_button() -> None:
    st.button("Reset metadata settings", icon=":material/restart_alt:", on_click=reset, type="tertiary")


# -- Streamlit: the preview column -----------------------------------------------------


def split_or_stop(document: Document, config: PipelineConfig, message: str = "Splitting…") -> cache.Nodes:
    """``document``'s nodes under ``config`` (cached); on a ChunkScopeError show its sentence and end this run."""
    try:
        with st.spinner(message):
            return cache.run_split_cached([document], config)
    except ChunkScopeError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()


def preview_header(nodes: Sequence[Node], config: PipelineConfig, *, stale: bool) -> None:
    """The preview's title and how many nodes it covers; with ``stale``, say it shows the last valid settings."""
    st.markdown("#### :material/preview: Live preview")
    st.caption(
        f"{len(nodes):,} nodes from this document with the {config.splitter.title()} "
        "splitter of the current configuration (change it on the Chunks page)."
    )
    if stale:
        st.warning(
            "The preview shows the last valid settings until the problem on the left is fixed.", icon=":material/info:"
        )


def node_or_stop(nodes: Sequence[Node]) -> Node:
    """A select box over the nodes, starting at (and updating) the session's selected node; with none, say so and end this run."""
    if not nodes:
        st.info("This document gives no nodes with the current splitter.", icon=":material/info:")
        st.stop()
    ids = [n.id for n in nodes]
    state.keep_valid("meta.node", ids, state.selected_node_id())
    labels = {n.id: node_label(i, n, width=70) for i, n in enumerate(nodes)}
    node_id = st.selectbox("Node", ids, key="meta.node", format_func=labels.__getitem__)
    state.select_node(node_id)
    return nodes[ids.index(node_id)]


def keys_table(node: Node, document: Document, config: PipelineConfig) -> None:
    """The node's keys: value, where each comes from, and which reader sees it."""
    st.markdown("**Keys on this node**")
    origins = key_origins(
        node,
        loader_keys=document.metadata,
        extra_keys=[key for key, _ in config.metadata.extra],
        extractor_keys=[key for extractor in config.extractors for key in type(extractor).keys],
    )
    st.dataframe(
        metadata_rows(node, origins),
        hide_index=True,
        width="stretch",
        # Pixel widths that add up to less than the page's right half at 1280 (~488 px): the grid grows each
        # column to fill the rest. An unset Value width was sized to its longest value and pushed From off.
        column_config={
            "key": st.column_config.TextColumn("Key", width=120),
            "value": st.column_config.TextColumn("Value", width=150, help="The key's value (hover a cell for all of it)"),
            "from": st.column_config.TextColumn("From", width=82, help="Where the key comes from"),
            "LLM sees": st.column_config.CheckboxColumn("LLM", width=45, help="The LLM view shows this key"),
            "EMBED sees": st.column_config.CheckboxColumn(
                "EMBED", width=62, help="The EMBED view (what the embedding model reads) shows this key"
            ),
        },
    )
