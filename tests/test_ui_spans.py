"""The span renderer: escaping, overlaps, selection, pages and windows, as a spec."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from core import Document, Node, Page
from core.output.highlight import (
    MAX_SEGMENTS,
    MIN_WINDOW_CHARS,
    WINDOW_CHARS,
    Mark,
    legend_html,
    ocr_confidence_by_page,
    source_html,
    source_windows,
    window_chars_for,
)


@dataclass
class FakeNode:
    id: str
    start_char: int
    end_char: int


def visible_text(markup: str) -> str:
    """What a browser shows: tags (and their labels) removed, entities decoded."""
    body = re.sub(r'<span class="(tag[^"]*|page[^"]*|more)"[^>]*>.*?</span>', "", markup)
    body = re.sub(r"<style>.*?</style>", "", body, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def test_document_text_is_escaped_never_markup() -> None:
    text = 'a <script>alert(1)</script> b <img src=x onerror=alert(2)> "q" & c'
    markup = source_html(text, [FakeNode('n"1<', 0, len(text))], include_css=False)
    assert "<script>" not in markup and "<img" not in markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markup
    assert 'title="n&quot;1&lt;"' in markup  # ids in attributes are escaped too
    assert visible_text(markup) == text


def test_overlap_is_hatched_and_only_the_shared_text() -> None:
    text = "aaaa bbbb cccc"
    nodes = [FakeNode("n0", 0, 9), FakeNode("n1", 5, 14)]
    markup = source_html(text, nodes, include_css=False)
    hatched = re.findall(r'<span class="c ov"[^>]*>([^<]*)</span>', markup)
    assert hatched == ["bbbb"]
    assert '<span class="tag" title="n0">#0</span>' in markup
    assert '<span class="tag" title="n1">#1</span>' in markup


def test_the_selected_node_is_outlined_and_others_are_not() -> None:
    text = "one two three"
    nodes = [FakeNode("a", 0, 3), FakeNode("b", 4, 13)]
    markup = source_html(text, nodes, selected_id="b", include_css=False)
    outlined = re.findall(r'<span class="c sel"[^>]*>([^<]*)</span>', markup)
    assert outlined == ["two three"]


def test_text_no_chunk_holds_is_marked_but_blank_gaps_are_not() -> None:
    text = "kept lost\n\nkept"
    nodes = [FakeNode("a", 0, 4), FakeNode("b", 11, 15)]
    markup = source_html(text, nodes, include_css=False)
    assert re.findall(r'<span class="hole"[^>]*>([^<]*)</span>', markup) == [" lost"]


def test_page_boundaries_are_labelled() -> None:
    text = "first page text second page text"
    pages = [Page(1, "i", 0, 16), Page(2, "ii", 16, len(text))]
    markup = source_html(text, [FakeNode("a", 0, len(text))], pages=pages, include_css=False)
    assert re.findall(r'<span class="page">([^<]*)</span>', markup) == ["page i", "page ii"]


def test_a_page_read_by_ocr_says_so_with_its_confidence() -> None:
    text = "typed page text scanned page text"
    pages = [Page(1, "1", 0, 16), Page(2, "2", 16, len(text))]
    confidence = ocr_confidence_by_page({"ocr_pages": [2], "ocr_confidence": {"2": 91.6}})
    assert confidence == {2: 91.6}
    markup = source_html(text, [FakeNode("a", 0, len(text))], pages=pages, include_css=False, ocr_confidence=confidence)
    assert re.findall(r'<span class="page">([^<]*)</span>', markup) == ["page 1"]
    assert re.findall(r'<span class="page ocr">(.*?)</span>', markup) == [
        "page 2<b>read by OCR · 92% mean word confidence</b>"
    ]
    assert "page read by OCR" in legend_html(ocr=True) and "OCR" not in legend_html()


def test_marks_highlight_a_sentence_window() -> None:
    text = "One. Two. Three."
    nodes = [FakeNode("a", 0, 4), FakeNode("b", 5, 9), FakeNode("c", 10, 16)]
    markup = source_html(text, nodes, marks=[Mark(0, 16, "window"), Mark(5, 9, "focus")], include_css=False)
    assert re.findall(r'<span class="c[^"]*mk-focus"[^>]*>([^<]*)</span>', markup) == ["Two."]
    assert "mk-window" in markup


def test_large_documents_are_cut_into_windows_on_pages() -> None:
    pages = [Page(n + 1, str(n + 1), n * 5000, (n + 1) * 5000) for n in range(10)]
    document = Document(text="x" * 50_000, pages=pages)
    windows = source_windows(document, window_chars=12_000)
    assert [(w.start, w.end, w.label) for w in windows[:2]] == [(0, 10_000, "pages 1–2"), (10_000, 20_000, "pages 3–4")]
    assert windows[-1].end == 50_000
    assert all(w.end - w.start <= 12_000 for w in windows)


def test_dense_splits_draw_smaller_windows() -> None:
    # 1 MB in 1,400 chunks keeps the full window; denser splits hold about 40 chunks a window.
    assert window_chars_for(1_000_000, 1_400) == WINDOW_CHARS
    assert window_chars_for(16_434, 53) == WINDOW_CHARS  # the guide at 128/32 tokens keeps whole parts
    assert window_chars_for(1_000_000, 3_431) == 11_658
    assert window_chars_for(1_000_000, 6_918) == 5_782
    assert window_chars_for(1_000_000, 20_000) == MIN_WINDOW_CHARS
    assert window_chars_for(1_000_000, 0) == WINDOW_CHARS
    assert window_chars_for(1_000, 500, window_chars=2_000) == 2_000  # never above the window asked for


@given(length=st.integers(0, 10_000_000), count=st.integers(0, 100_000), asked=st.integers(1, 50_000))
def test_a_window_size_stays_within_its_bounds(length: int, count: int, asked: int) -> None:
    chars = window_chars_for(length, count, window_chars=asked)
    assert min(MIN_WINDOW_CHARS, asked) <= chars <= asked


def test_a_window_of_countless_tiny_chunks_is_capped() -> None:
    text = "ab" * 10_000
    nodes = [FakeNode(str(i), i, i + 1) for i in range(len(text))]
    markup = source_html(text, nodes, include_css=False)
    assert markup.count('class="c"') <= MAX_SEGMENTS
    assert "more characters in this window are not drawn" in markup


spans = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=8)


@given(text=st.text(alphabet="ab <>&\"'\n", max_size=60), cuts=spans, selected=st.integers(0, 8))
def test_the_visible_text_is_always_exactly_the_source(text: str, cuts: list[tuple[int, int]], selected: int) -> None:
    nodes = [FakeNode(f"n{i}", min(a, b, len(text)), min(max(a, b), len(text))) for i, (a, b) in enumerate(cuts)]
    markup = source_html(text, nodes, selected_id=f"n{selected}", include_css=False)
    assert visible_text(markup) == text
    assert "<script" not in markup and "<img" not in markup


@settings(max_examples=300)
@given(st.text(alphabet=" \n\tab·é😀", max_size=400), st.integers(min_value=2, max_value=80))
def test_node_label_reads_only_the_start_yet_equals_folding_the_whole_node(text: str, width: int) -> None:
    from ui.nodes import node_label

    words = " ".join(text.split())
    expected = words if len(words) <= width else words[: width - 1].rstrip() + "…"
    assert node_label(3, Node(text=text), width) == f"#3 · {expected}"


def test_the_pane_is_scrolled_only_to_a_tag_drawn_below_its_first_lines() -> None:
    from core.output.highlight import Window
    from ui.spans import TOP_CHARS, TOP_LINES, scroll_needed

    text = "".join(f"line {i:03d}\n" for i in range(400))  # nine characters a line
    window = Window(90, 2_700, "characters 90–2,700")  # lines 10 to 299

    def starting_on(line: int) -> FakeNode:
        return FakeNode(f"n{line}", line * 9, line * 9 + 50)

    assert not scroll_needed(text, window, starting_on(10 + TOP_LINES - 1))  # in the lines the pane opens on
    assert scroll_needed(text, window, starting_on(10 + TOP_LINES))
    assert not scroll_needed(text, window, FakeNode("begun", 0, 200))  # begun above: its tag opens the part
    assert not scroll_needed(text, window, FakeNode("before", 0, 90))  # other parts hold these
    assert not scroll_needed(text, window, starting_on(300))
    assert not scroll_needed(text, window, None)
    # One long line: its characters count.
    prose = "word " * 1_000
    whole = Window(0, len(prose), "whole document")
    assert not scroll_needed(prose, whole, FakeNode("a", TOP_CHARS - 1, TOP_CHARS + 10))
    assert scroll_needed(prose, whole, FakeNode("b", TOP_CHARS, TOP_CHARS + 10))

def test_the_follow_script_runs_again_when_the_pane_is_redrawn_and_holds_no_document_text() -> None:
    from ui.spans import follow_selection_script

    script = follow_selection_script('n"</script><b>', pane="<div>one</div>")
    assert script == follow_selection_script('n"</script><b>', pane="<div>one</div>")
    assert script != follow_selection_script('n"</script><b>', pane="<div>two</div>")  # a new body: st.html runs it
    assert script.count("<script>") == 1 and script.count("</script>") == 1 and "<b>" not in script
    assert "one" not in script
