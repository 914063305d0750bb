"""A node up close: what the LLM and the embedding model each read, its metadata and its links.

Used by the Chunks page's node detail and by any page that previews a node's views.
Node text is shown with ``st.code`` (never as HTML), so it appears literally.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import streamlit as st

from core.schema import MetadataMode, Node
from ui import cache

VIEW_HEIGHT_PX = 320


def node_label(index: int, node: Node, width: int = 48) -> str:
    """``#3 · The first words of the node…`` for pickers and buttons."""
    # Whitespace-folding a prefix of the text gives a prefix of the folded text, so a few
    # times the width is enough unless the node opens with a long run of whitespace
    # (folding whole nodes took 8 ms of a 1 MB Chunks rerun, for 70 characters each).
    head = node.text[: 4 * width + 8]
    words = " ".join(head.split())
    if len(words) <= width and len(head) < len(node.text):
        words = " ".join(node.text.split())
    if len(words) > width:
        words = words[: width - 1].rstrip() + "…"
    return f"#{index} · {words}"


def reader_views(node: Node, *, embed_window: int | None = None, height_px: int = VIEW_HEIGHT_PX) -> None:
    """The LLM view and the EMBED view side by side, each with its token count.

    Counts use the embedding model's tokenizer. Warns when the EMBED view is
    longer than the embedding model's window (its tail is invisible to retrieval),
    and says how many tokens the metadata adds to each view.
    """
    embed_window = embed_window or cache.embedding_window()
    llm = node.get_content(MetadataMode.LLM)
    embed = node.get_content(MetadataMode.EMBED)
    llm_tokens, embed_tokens, text_tokens = cache.count_tokens((llm, embed, node.text), "model")
    # Short views take the room they need; long ones scroll inside a fixed box. Both match.
    longest = max(llm, embed, key=len)
    height: int | str = "content" if longest.count("\n") < 14 and len(longest) < 700 else height_px
    left, right = st.columns(2, gap="medium")
    with left.container(border=True):
        st.markdown("**:material/smart_toy: LLM view** — what the language model reads")
        st.caption(f"{llm_tokens:,} tokens · metadata adds {llm_tokens - text_tokens:,}")
        st.code(llm, language=None, wrap_lines=True, height=height)
    with right.container(border=True):
        st.markdown("**:material/hub: EMBED view** — what the embedding model reads")
        st.caption(
            f"{embed_tokens:,} tokens · metadata adds {embed_tokens - text_tokens:,} · model window {embed_window}"
        )
        st.code(embed, language=None, wrap_lines=True, height=height)
        if embed_tokens > embed_window:
            st.warning(
                f"The EMBED view is {embed_tokens:,} tokens but the embedding model reads only the first "
                f"{embed_window}: the last {embed_tokens - embed_window:,} tokens are invisible to retrieval.",
                icon=":material/visibility_off:",
            )


def metadata_table(node: Node) -> pd.DataFrame:
    """One row per metadata key: its value and whether the LLM and the embedding model see it."""
    llm_hidden = set(node.excluded_llm_metadata_keys)
    embed_hidden = set(node.excluded_embed_metadata_keys)
    return pd.DataFrame(
        [
            {"key": key, "value": str(value), "LLM sees": key not in llm_hidden, "EMBED sees": key not in embed_hidden}
            for key, value in node.metadata.items()
        ],
        columns=["key", "value", "LLM sees", "EMBED sees"],
    )


def show_metadata(node: Node) -> None:
    if not node.metadata:
        st.caption("This node carries no metadata.")
        return
    st.dataframe(
        metadata_table(node),
        hide_index=True,
        width="stretch",
        column_config={
            "key": st.column_config.TextColumn("Key", width="small"),
            "value": st.column_config.TextColumn("Value", width="large"),
            "LLM sees": st.column_config.CheckboxColumn("LLM sees"),
            "EMBED sees": st.column_config.CheckboxColumn("EMBED sees"),
        },
    )


def relationship_buttons(
    node: Node,
    index_of: Mapping[str, int],
    nodes_by_id: Mapping[str, Node],
    on_pick: Callable[[str], Any],
    *,
    key: str = "rel",
    max_children: int = 8,
) -> None:
    """Buttons to follow PREVIOUS, NEXT, PARENT and CHILD links; ``on_pick(node_id)`` is their callback."""

    def button(column: Any, label: str, target: str | None, icon: str, name: str) -> None:
        usable = target is not None and target in nodes_by_id
        column.button(
            label,
            key=f"{key}.{name}",
            icon=icon,
            disabled=not usable,
            on_click=on_pick if usable else None,
            args=(target,) if usable else None,
            width="stretch",
        )

    prev_col, next_col, parent_col = st.columns(3)
    prev_id, next_id, parent_id = node.prev_id, node.next_id, node.parent_id
    button(prev_col, _rel_label("Previous", prev_id, index_of), prev_id, ":material/arrow_back:", "prev")
    button(next_col, _rel_label("Next", next_id, index_of), next_id, ":material/arrow_forward:", "next")
    button(parent_col, _rel_label("Parent", parent_id, index_of), parent_id, ":material/arrow_upward:", "parent")
    children = [child for child in node.child_ids if child in nodes_by_id]
    if children:
        st.caption(f"Children ({len(children)})")
        shown = children[:max_children]
        for column, child in zip(st.columns(len(shown)), shown, strict=False):
            button(
                column, f"#{index_of.get(child, '?')}", child, ":material/subdirectory_arrow_right:", f"child.{child}"
            )
        if len(children) > max_children:
            st.caption(f"… and {len(children) - max_children} more (pick them in the node list).")


def _rel_label(word: str, target: str | None, index_of: Mapping[str, int]) -> str:
    if target is None or target not in index_of:
        return word
    return f"{word} #{index_of[target]}"
