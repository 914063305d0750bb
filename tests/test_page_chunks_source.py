"""The Chunks page's source view through AppTest: one part of a large text at a time, the part holding the
selected node, paging to the end, and document text drawn only as escaped text."""

from __future__ import annotations

import html
import json
import re

import apptest_support
from apptest_support import shown
from streamlit.testing.v1 import AppTest

from core import load_bytes
from core.config import PipelineConfig
from core.documents import run_split
from core.output.highlight import Window, source_windows, window_chars_for
from core.splitters import get_splitter
from ui.spans import PART_LIST_MAX, TOP_CHARS, part_caption

TIMEOUT = 240
NAME = "long_notes.txt"
HOSTILE = '<script>alert(1)</script> <img src=x onerror=alert(2)> "q" & </div></span>'
# About 400 KB of numbered paragraphs, untrusted markup in the middle and at the very end.
LINES = [f"line {i:05d}: the quick brown fox jumps over the lazy dog, twice or thrice.\n\n" for i in range(5_000)]
TEXT = "".join(LINES[:2_500]) + HOSTILE + "\n" + "".join(LINES[2_500:]) + "THE END " + HOSTILE + "\n"
CHUNK_SIZE = 400


def open_long_text() -> AppTest:
    at = apptest_support.open_page("pages/1_Chunks.py", timeout=TIMEOUT, uploads=[(NAME, TEXT.encode(), "text/plain")])
    at.sidebar.selectbox(key="chunks.splitter").set_value("character").run()
    at.sidebar.number_input(key="splitter.character.chunk_overlap").set_value(50).run()
    at.sidebar.number_input(key="splitter.character.chunk_size").set_value(CHUNK_SIZE).run()
    assert not at.exception, at.exception
    return at


def expected():
    (document,) = load_bytes(TEXT.encode(), NAME)
    nodes = run_split(
        [document], PipelineConfig(splitter=get_splitter("character", chunk_size=CHUNK_SIZE, chunk_overlap=50))
    )
    return document, nodes, source_windows(document, window_chars_for(len(document.text), len(nodes)))


def drawn_source(at: AppTest) -> str:
    """The body of the element that draws the source (the style sheet and legend are another element)."""
    (body,) = [h.proto.body for h in at.get("html") if 'class="cs-source"' in h.proto.body]
    return body


def scripts(at: AppTest) -> list[str]:
    """The bodies of the script elements the page drew (the one that scrolls the source pane)."""
    return [h.proto.body for h in at.get("html") if "<script>" in h.proto.body]


def visible_text(markup: str) -> str:
    """What a browser shows of the drawn source: tags and their labels removed, entities decoded."""
    body = re.sub(r'<span class="(tag[^"]*|page[^"]*|more)"[^>]*>.*?</span>', "", markup)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def test_a_long_text_is_drawn_one_bounded_part_at_a_time_with_a_part_number() -> None:
    document, nodes, windows = expected()
    assert len(windows) > PART_LIST_MAX  # the number box, not the list
    at = open_long_text()
    part = at.number_input(key="chunks.source.part")
    assert (part.value, part.min, part.max) == (1, 1, len(windows))
    assert not [s for s in at.selectbox if s.key == "chunks.source.window"]
    assert visible_text(drawn_source(at)) == document.text[windows[0].start : windows[0].end]
    assert windows[0].label == f"characters 0–{windows[0].end:,}"
    total = f"{len(document.text):,}"
    assert any(shown(c.value) == f"Part 1 of {len(windows)}: {windows[0].label} of {total}" for c in at.caption)
    # The first node opens the part, at the pane's top: no script runs to scroll to it.
    assert not scripts(at)
    # The style sheet is an element of its own, with no document text: the same on every rerun.
    (style,) = [h.proto.body for h in at.get("html") if "<style>" in h.proto.body and "cs-legend" in h.proto.body]
    assert "line 00000" not in style


def test_the_part_holding_the_selected_node_is_shown_with_its_span_outlined() -> None:
    document, nodes, windows = expected()
    at = open_long_text()
    far = len(nodes) * 2 // 3
    at.number_input(key="chunks.node_number").set_value(far).run()
    assert not at.exception, at.exception
    node = nodes[far]
    holding = next(i for i, w in enumerate(windows) if w.start <= node.start_char < w.end)
    assert at.number_input(key="chunks.source.part").value == holding + 1
    body = drawn_source(at)
    assert f'<span class="tag sel-tag" title="{html.escape(node.id, quote=True)}">#{far}</span>' in body
    # Its tag is below the lines the pane opens on: a script scrolls the pane to it.
    assert node.start_char - windows[holding].start >= TOP_CHARS
    (script,) = scripts(at)
    assert json.dumps(node.id) in script
    outlined = "".join(re.findall(r'<span class="c[^"]*\bsel\b[^"]*"[^>]*>([^<]*)</span>', body))
    # The outlined text is the node's span, as far as this part holds it.
    shown_end = min(node.end_char, windows[holding].end)
    assert html.unescape(outlined).replace("\n", "") == document.text[node.start_char : shown_end].replace("\n", "")


def test_paging_reaches_the_end_of_the_text_and_its_markup_stays_text() -> None:
    document, _, windows = expected()
    at = open_long_text()
    at.number_input(key="chunks.source.part").set_value(len(windows)).run()
    assert not at.exception, at.exception
    body = drawn_source(at)
    assert windows[-1].end == len(document.text)
    assert visible_text(body) == document.text[windows[-1].start :]
    assert visible_text(body).endswith("THE END " + HOSTILE + "\n")
    # Escaped by construction: the text's markup is never an element of the drawn HTML.
    assert "<script" not in body and "<img" not in body
    assert html.escape(HOSTILE, quote=True) in body
    # Paging back by one shows the part before, still the user's choice on the next rerun.
    at.number_input(key="chunks.source.part").decrement().run()
    assert visible_text(drawn_source(at)) == document.text[windows[-2].start : windows[-2].end]
    at.run()
    assert at.number_input(key="chunks.source.part").value == len(windows) - 1


def test_a_sample_keeps_its_list_of_parts() -> None:
    at = apptest_support.open_page("pages/1_Chunks.py", timeout=TIMEOUT)
    parts = [s for s in at.selectbox if s.key == "chunks.source.window"]
    assert not [n for n in at.number_input if n.key == "chunks.source.part"]
    if parts:  # the guide's default split is in two parts
        assert parts[0].options[0].startswith("Part 1: ")
    assert "cs-source" in drawn_source(at)


def test_a_part_caption_shows_a_page_label_from_the_file_as_text() -> None:
    label = "page **iv** [x](javascript:alert(1)) <b>"
    caption = part_caption([Window(0, 10, "characters 0–10"), Window(10, 20, label)], 1)
    assert caption.startswith("Part 2 of 2: ") and caption.endswith(" (characters 10–20 of 20)")
    assert "**iv**" not in caption and "](" not in caption and "<b>" not in caption
