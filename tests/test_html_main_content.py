"""A web page's main content: where the page marks it, the navigation, header, footer and sidebars are not the document."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.loaders import load_bytes
from core.loaders.html import html_to_text, main_region, page_text

CHROME = (
    "<header><nav><a href='/'>Home</a> <a href='/docs'>Docs</a></nav></header>"
    "<aside><h3>On this page</h3><ul><li>Intro</li><li>Usage</li></ul></aside>"
)
FOOTER = "<footer>Copyright 2026. All rights reserved.</footer>"
CONTENT = "<h1>Usage</h1><p>Install the package and run it.</p><table><tr><th>a</th></tr><tr><td>1</td></tr></table>"


def page(body: str, title: str = "Docs page") -> bytes:
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>".encode()


def test_a_page_with_main_is_read_from_its_main_only_and_keeps_its_title():
    (document,) = load_bytes(page(f"{CHROME}<main>{CONTENT}</main>{FOOTER}"), "docs.html")
    assert document.text == html_to_text(CONTENT)[0]
    assert "Home" not in document.text and "Copyright" not in document.text
    assert document.metadata["title"] == "Docs page"
    # The engines that read markup read the same region.
    assert document.markup == f"<main>{CONTENT}</main>"


def test_role_main_counts_as_main_and_a_single_article_is_the_content_where_there_is_no_main():
    (by_role,) = load_bytes(page(f"{CHROME}<div role='main'>{CONTENT}</div>{FOOTER}"), "a.html")
    (by_article,) = load_bytes(page(f"{CHROME}<article>{CONTENT}</article>{FOOTER}"), "b.html")
    assert by_role.text == by_article.text == html_to_text(CONTENT)[0]


def test_a_page_that_marks_nothing_or_two_articles_is_read_whole():
    whole = page(f"{CHROME}<div>{CONTENT}</div>{FOOTER}")
    two = page(f"{CHROME}<article>{CONTENT}</article><article><p>Another post.</p></article>{FOOTER}")
    for data in (whole, two):
        (on,) = load_bytes(data, "p.html")
        (off,) = load_bytes(data, "p.html", main_content=False)
        assert on.text == off.text and "Home" in on.text


def test_a_main_with_no_text_or_one_only_in_a_comment_leaves_the_page_whole():
    for body in (f"{CHROME}<main> </main><div>{CONTENT}</div>", f"<!-- <main> -->{CHROME}<div>{CONTENT}</div>"):
        (document,) = load_bytes(page(body), "p.html")
        assert "Usage" in document.text and "Home" in document.text


def test_switched_off_the_whole_body_is_read():
    (document,) = load_bytes(page(f"{CHROME}<main>{CONTENT}</main>{FOOTER}"), "docs.html", main_content=False)
    assert "Home" in document.text and "Copyright" in document.text and "Install the package" in document.text


WORDS = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(str.strip)
BLOCK = st.builds(lambda tag, words: f"<{tag}>{words}</{tag}>", st.sampled_from(["p", "li", "h2", "div", "span"]), WORDS)


@given(st.lists(BLOCK, max_size=5), st.lists(BLOCK, min_size=1, max_size=5), st.lists(BLOCK, max_size=5))
def test_main_content_is_what_its_markup_reads_alone_and_a_page_without_one_reads_as_before(before, inside, after):
    inner = "".join(inside)
    html = f"<html><body><nav>{''.join(before)}</nav><main>{inner}</main>{''.join(after)}</body></html>"
    text, _, _, markup = page_text(html, main_content=True)
    alone = html_to_text(inner)[0]
    assert text == (alone if alone.strip() else html_to_text(html)[0])
    plain = html.replace("<main>", "<div>").replace("</main>", "</div>")
    assert main_region(plain) is None
    assert page_text(plain, main_content=True)[:3] == page_text(plain, main_content=False)[:3]
    if alone.strip():
        assert markup == f"<main>{inner}</main>"
