"""A node up close: what the LLM and the embedding model each read, its metadata and its links.

Used by the Chunks page's node detail and by any page that previews a node's views.
Node text is shown with ``st.code`` (never as HTML), so it appears literally.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.config_parts import RetrievalSettings
from core.schema import MetadataMode, Node, NodeRelationship
from core.spans.recovery import SpanStatus
from core.spans.rewrites import Segment, changed_characters, rewrite_segments, status_of
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


def reader_views(
    node: Node,
    *,
    embed_window: int | None = None,
    height_px: int = VIEW_HEIGHT_PX,
    retrieval: RetrievalSettings | None = None,
) -> None:
    """The LLM view and the EMBED view side by side, each with its token count.

    Counts use the embedding model's tokenizer. Warns when the EMBED view is
    longer than the embedding model's window (its tail is invisible to retrieval),
    and says how many tokens the metadata adds to each view. A hierarchy's parent that ``retrieval`` only
    returns for its leaves (returns parents or merges) is never embedded: said instead of the warning.
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
        if retrieval is not None and retrieval.returns != "chunks" and node.relationships.get(NodeRelationship.CHILD):
            st.info(
                f"A parent: retrieval searches its leaves (returns={retrieval.returns}) and returns or merges "
                "this chunk for them, so it is never embedded; the EMBED view is what it would be.",
                icon=":material/account_tree:",
            )
        elif embed_tokens > embed_window:
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


REWRITE_CSS = """<style>
.cs-rewrite{white-space:pre-wrap;font-family:var(--font-mono, monospace);font-size:.82rem;line-height:1.5;
  max-height:320px;overflow:auto;padding:.5rem .75rem;border:1px solid rgba(128,128,128,.3);border-radius:.5rem}
.cs-rewrite del{background:rgba(230,80,80,.22);text-decoration:line-through}
.cs-rewrite ins{background:rgba(60,170,90,.25);text-decoration:none}
.cs-rewrite .ws{opacity:.6}
</style>"""


def rewrite_html(segments: Sequence[Segment]) -> str:
    """The chunk against its source slice: dropped source struck through in red, added text in green.

    Whitespace the framework dropped or added is made visible (``↵`` for a newline,
    ``·`` for a space), since that is most of what frameworks rewrite.
    """
    out = []
    for segment in segments:
        text = html.escape(segment.text)
        if segment.kind == "same":
            out.append(text)
            continue
        shown = text.replace(" ", '<span class="ws">·</span>').replace("\n", '<span class="ws">↵</span>\n')
        tag = "del" if segment.kind == "source_only" else "ins"
        out.append(f"<{tag}>{shown}</{tag}>")
    return REWRITE_CSS + '<div class="cs-rewrite">' + "".join(out) + "</div>"


def rewrite_detail(source: str, node: Node) -> None:
    """For a framework chunk whose text is not its source slice: which characters the framework changed."""
    if status_of(node) is not SpanStatus.REWRITTEN:
        return
    segments = rewrite_segments(source[node.start_char : node.end_char], node.text)
    dropped, added = changed_characters(segments)
    with st.expander(
        f"Rewritten by the framework · {dropped:,} source characters dropped, {added:,} added",
        expanded=True,
        icon=":material/difference:",
    ):
        st.caption(
            "This chunk's text is not a cut of the source: the span covers the source it was aligned with. "
            "Struck through: in the source, not in the chunk. Highlighted: in the chunk, not in the source."
        )
        st.html(rewrite_html(segments))
