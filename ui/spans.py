"""Draw the source with chunk spans in Streamlit; the HTML itself comes from :mod:`core.output.highlight`.

:func:`show_source` draws :func:`core.output.highlight.source_html` one window at a
time, so a large document never sends megabytes of HTML to the browser.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from core.output.highlight import (
    CSS,
    HasSpan,
    Mark,
    Window,
    legend_html,
    ocr_confidence_by_page,
    source_html,
    source_windows,
    window_chars_for,
    window_index_for,
)
from ui import state
from ui.widgets import md_escape

# Up to this many parts the picker lists them (a sample's few parts read as today); above, it is a part number:
# a list of every part is rebuilt by the browser on each rerun, and a 1 MB text has 80-250 of them.
PART_LIST_MAX = 30
# A tag this near the start of the drawn part is in view when the pane opens (560 px: about 20 lines of 90 characters).
TOP_LINES = 8
TOP_CHARS = 600


def show_source(
    document: Any,
    nodes: Sequence[HasSpan],
    *,
    selected_id: str | None = None,
    marks: Sequence[Mark] = (),
    key: str = "source",
    window_chars: int | None = None,
    height_px: int = 560,
    index_of: Mapping[str, int] | None = None,
) -> None:
    """Draw the document's source with chunk spans, one window at a time.

    When the selected node changes, the view jumps to the window holding its start. A window is
    ``window_chars`` long, or by default as long as :func:`core.output.highlight.window_chars_for` says for this many nodes.
    """
    windows = source_windows(document, window_chars or window_chars_for(len(document.text), len(nodes)))
    index = part_picker(windows, nodes, selected_id, key) if len(windows) > 1 else 0
    window = windows[index]
    ocr_confidence = ocr_confidence_by_page(getattr(document, "metadata", {}) or {})
    # The style and the legend are their own element: the same on every rerun, so the browser skips them
    # (st.html redraws only when its body changes) and re-parses no style sheet when the spans change.
    st.html(CSS + legend_html(ocr=bool(ocr_confidence)))
    body = source_html(
        document.text,
        nodes,
        start=window.start,
        end=window.end,
        pages=getattr(document, "pages", ()) or (),
        selected_id=selected_id,
        marks=marks,
        height_px=height_px,
        include_css=False,
        index_of=index_of,
        ocr_confidence=ocr_confidence,
    )
    st.html(body)
    if scroll_needed(document.text, window, next((n for n in nodes if n.id == selected_id), None)):
        # Our own script, with no document text in it: it scrolls the pane to the selected node.
        st.html(follow_selection_script(selected_id, pane=body), unsafe_allow_javascript=True)


def part_picker(windows: Sequence[Window], nodes: Sequence[HasSpan], selected_id: str | None, key: str) -> int:
    """Which window to draw: the one holding the selected node's start when the selection changed, else the
    user's pick (a list of the parts, or a part number when they are more than :data:`PART_LIST_MAX`)."""
    listed = len(windows) <= PART_LIST_MAX
    # The list holds a window's index, the number box its number (from 1): each keeps its own key.
    widget_key, first = (f"{key}.window", 0) if listed else (f"{key}.part", 1)
    if selected_id is not None and state.followed_selection(key) != selected_id:
        target = next((n for n in nodes if n.id == selected_id), None)
        if target is not None:
            state.set_widget_value(widget_key, window_index_for(windows, target.start_char) + first)
    state.follow_selection(key, selected_id)
    state.keep_valid(widget_key, range(first, len(windows) + first))
    if listed:
        return st.selectbox(
            f"Showing part of the document ({len(windows)} parts, drawn one at a time to stay fast)",
            range(len(windows)),
            key=widget_key,
            format_func=lambda i: f"Part {i + 1}: {windows[i].label}",
        )
    number = st.number_input(
        f"Showing part of the document: part number (1–{len(windows):,}), drawn one part at a time to stay fast",
        min_value=1,
        max_value=len(windows),
        step=1,
        key=widget_key,
        help="Each part is a few thousand characters; − and + page through the text, or type a part's number. "
        "Opening a node (below, or from the Node table) shows the part that holds it.",
    )
    index = int(number) - 1
    st.caption(part_caption(windows, index))
    return index


def part_caption(windows: Sequence[Window], index: int) -> str:
    """``Part 3 of 83: characters 24,000–36,000 of 1,000,130`` (the windows cover the text: the last ends with it);
    a part of pages adds its characters in brackets. Markdown; a page label comes from the file, so it is escaped."""
    window, total = windows[index], windows[-1].end
    characters = f"characters {window.start:,}–{window.end:,}"
    if window.label == characters:
        where = f"{characters} of {total:,}"
    else:
        where = f"{md_escape(window.label)} ({characters} of {total:,})"
    return f"Part {index + 1:,} of {len(windows):,}: {where}"


# The source pane scrolls on its own (max-height); without this, opening node #30 left it showing #0-#2.
# It waits for the pane to be drawn (elements arrive one by one), then brings the selected tag near its top.
_FOLLOW_SCRIPT = """<script>(() => {
  const id = %s;
  let tries = 0;
  const follow = () => {
    const tag = [...document.querySelectorAll('.cs-source .sel-tag')].find((t) => t.title === id);
    if (!tag) { if (tries++ < 60) setTimeout(follow, 50); return; }
    const pane = tag.closest('.cs-source');
    pane.scrollTop += tag.getBoundingClientRect().top - pane.getBoundingClientRect().top - 24;
  };
  follow();
})();</script>"""


def follow_selection_script(selected_id: str, pane: str = "") -> str:
    """The script that scrolls the source pane to ``selected_id``'s tag (the id is JSON-encoded, tags escaped).

    ``pane`` is the drawn source: its checksum is in the script, so the script runs again whenever the pane is
    redrawn (a new pane opens at its top), not only when the selection changes (st.html runs a script once per body).
    """
    encoded = json.dumps(str(selected_id)).replace("<", "\\u003c").replace(">", "\\u003e")
    return _FOLLOW_SCRIPT.replace("<script>", f"<script>/* pane {zlib.crc32(pane.encode()):08x} */", 1) % encoded


def scroll_needed(text: str, window: Window, selected: HasSpan | None) -> bool:
    """Whether the pane must be scrolled to show ``selected``: only when its tag is drawn in this window below the
    pane's first lines (a redrawn pane opens at its top).

    After a new chunk size the selection is the first node, at the top: no script runs, and the browser does
    not lay the page out once more to scroll it. A node whose tag this window does not draw (another part, a
    hierarchy's parent) has nothing to scroll to.
    """
    if selected is None or selected.end_char <= window.start or selected.start_char >= window.end:
        return False
    above = text[window.start : max(selected.start_char, window.start)]
    return above.count("\n") >= TOP_LINES or len(above) >= TOP_CHARS
