"""md_escape: untrusted text inside Streamlit's Markdown reads as itself and never becomes a link or an image."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from ui.widgets import md_escape

MARKDOWN = MarkdownIt("commonmark")
# Pieces that make Markdown do something, mixed into any text.
SYNTAX = st.sampled_from(
    ["[", "]", "(", ")", "!", "<", ">", "*", "_", "`", "#", "http://", "https://", "www.", "@", ":material/home:", "\n", " "]
)
# What GFM autolinks (Streamlit's renderer): a scheme URL, a www. name, an e-mail address.
AUTOLINK = re.compile(r"(?i)(https?|ftp)://[\w.-]+|\bwww\.[\w-]+\.|[\w.+-]+@[\w-]+\.\w")


@pytest.mark.parametrize(
    "payload",
    [
        "[Your session expired - click to sign in again](http://attacker.example/phish)",
        "![beacon](http://attacker.example/b.png)",
        "<img src=x onerror=alert(1)>",
        "visit www.attacker.example today",
        "mail admin@attacker.example",
        ":material/smart_toy: **bold** `code`",
    ],
)
def test_payloads_render_as_text(payload: str) -> None:
    html = MARKDOWN.render(md_escape(payload))
    assert "<a " not in html and "<img" not in html and "<strong>" not in html and "<code>" not in html
    assert AUTOLINK.search(html) is None


@given(st.lists(st.one_of(SYNTAX, st.text(max_size=6)), max_size=25).map("".join))
def test_any_text_renders_without_links_images_or_autolinks(text: str) -> None:
    html = MARKDOWN.render(md_escape(text))
    assert "<a " not in html and "<img" not in html
    assert AUTOLINK.search(html) is None


@given(st.text(max_size=80))
def test_the_reader_sees_the_same_characters(text: str) -> None:
    # Backslashes go, the invisible word joiners stay invisible: the visible text is the input.
    seen = re.sub(r"\\(.)", r"\1", md_escape(text), flags=re.DOTALL).replace("\u2060", "")
    assert seen == text
