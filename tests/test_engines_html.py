"""The HTML engines: LlamaIndex's HTMLNodeParser and LangChain's HTMLHeaderTextSplitter read a page's markup.

What must hold: the HTML loader keeps the page's source beside its text (not in
metadata, so no reader sees it); the engines give the framework that source and
place each chunk in the document's text by span recovery: ``exact`` where the
chunk is a slice, ``rewritten`` with the span of the text it came from, or
``unplaced`` (an empty span) where the page's text does not hold it (a script).
A document not loaded from HTML is read as markup, and the pages are told so.
The fidelity on the samples and the exported code are checked with every
engine in tests/test_engines.py.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core import MetadataMode, load
from core.loaders import LOADERS
from core.schema import Document
from core.spans.recovery import SPAN_STATUS_KEY
from core.spans.rewrites import span_counts
from core.splitters import SPLITTERS

SAMPLES = Path(__file__).resolve().parents[1] / "sample_docs"
HTML_ENGINES = ("llamaindex.html", "langchain.html_header")

PAGE = (
    "<html><head><title>T</title></head><body><h1>Intro</h1><p>Hello <b>world</b>.</p>"
    "<script>var x = 1;</script><h2>Lists</h2><ul><li>one</li><li>two</li></ul><p>Hello <b>world</b>.</p>"
    "</body></html>"
)


def load_page(html: str, file_name: str = "page.html") -> Document:
    return LOADERS.create("html").load_bytes(html.encode(), file_name)[0]


def placed(nodes: list) -> list[tuple[str, int, int, str]]:
    return [(node.text, node.start_char, node.end_char, node.metadata[SPAN_STATUS_KEY]) for node in nodes]


def test_the_loader_keeps_the_source_out_of_every_view() -> None:
    document = load(SAMPLES / "vector_search_faq.html")[0]
    assert document.markup == (SAMPLES / "vector_search_faq.html").read_text(encoding="utf-8")
    assert "<h2>" not in document.text and "<h2>" not in repr(document)
    for engine in HTML_ENGINES:
        for node in SPLITTERS.create(engine).split([document]):
            for mode in MetadataMode:
                assert "<p>" not in node.get_content(mode), (engine, mode)


def test_llamaindex_makes_a_node_per_run_of_tags_placed_in_the_text() -> None:
    document = load_page(PAGE)
    assert document.text == "Intro\n\nHello world.\n\nLists\n\none\ntwo\n\nHello world."
    nodes = SPLITTERS.create("llamaindex.html").split([document])
    # A <p>'s text leaves out its <b> (a listed tag, its own node): "Hello\n." is the paragraph, rewritten.
    assert placed(nodes) == [
        ("Intro", 0, 5, "exact"),
        ("Hello\n.", 7, 19, "rewritten"),
        ("world", 13, 18, "exact"),
        ("Lists", 21, 26, "exact"),
        ("one\ntwo", 28, 35, "exact"),
        ("Hello\n.", 37, 49, "rewritten"),  # the second copy gets its own span
        ("world", 43, 48, "exact"),
    ]
    assert [node.metadata["tag"] for node in nodes] == ["h1", "p", "b", "h2", "li", "p", "b"]
    assert span_counts(nodes) == {"exact": 5, "rewritten": 2, "unplaced": 0}


def test_langchain_makes_a_chunk_per_header_and_section_and_cannot_place_a_script() -> None:
    document = load_page(PAGE)
    nodes = SPLITTERS.create("langchain.html_header").split([document])
    assert placed(nodes) == [
        ("Intro", 0, 5, "exact"),
        # LangChain reads the <script> too: the page's text has no such passage, so the chunk is not placed.
        ("Hello .  \nworld  \nvar x = 1;", 5, 5, "unplaced"),
        ("Lists", 21, 26, "exact"),
        ("one  \ntwo  \nHello .  \nworld", 28, 48, "rewritten"),
    ]
    assert nodes[3].metadata["Header 1"] == "Intro" and nodes[3].metadata["Header 2"] == "Lists"
    assert "Header 2" not in nodes[3].excluded_llm_metadata_keys
    assert span_counts(nodes) == {"exact": 2, "rewritten": 1, "unplaced": 1}


def test_rewritten_chunks_of_the_sample_cover_their_own_source() -> None:
    document = load(SAMPLES / "vector_search_faq.html")[0]
    for engine in HTML_ENGINES:
        nodes = SPLITTERS.create(engine).split([document])
        counts = span_counts(nodes)
        assert counts["unplaced"] == 0 and sum(counts.values()) == len(nodes), engine
        for node in nodes:
            source = document.text[node.start_char : node.end_char]
            # Both frameworks only strip and re-join the page's strings: the same words, in the same order
            # (the loader's text has " | " between table cells, the frameworks do not).
            assert [word for word in source.split() if word != "|"] == node.text.split(), (engine, node.text[:60])
        starts = [node.start_char for node in nodes]
        assert starts == sorted(starts), engine
    lists = SPLITTERS.create("langchain.html_header").split([document])
    assert any(node.metadata[SPAN_STATUS_KEY] == "rewritten" for node in lists), "list items joined with '  \\n'"


def test_a_document_not_loaded_from_html_is_read_as_markup_and_the_pages_are_told() -> None:
    page = load(SAMPLES / "vector_search_faq.html")[0]
    guide = load(SAMPLES / "chunking_guide.md")[0]
    markup_in_text = Document(text="<h1>Notes</h1><p>Kept as written.</p>", metadata={"file_name": "notes.txt"})
    for name in HTML_ENGINES:
        engine = SPLITTERS.create(name)
        assert engine.unsuited_reason(page) is None
        reason = engine.unsuited_reason(guide)
        assert reason is not None and "chunking_guide.md (markdown) is not an HTML page" in reason
        assert [node.text for node in engine.split([markup_in_text])] == ["Notes", "Kept as written."]
    for name in ("llamaindex.sentence", "langchain.recursive"):
        assert SPLITTERS.create(name).unsuited_reason(guide) is None


def test_a_page_without_the_parsers_tags_makes_no_nodes_and_says_why() -> None:
    page = load_page("<html><body><div>Only <span>divs</span> here.</div></body></html>", "divs.html")
    engine = SPLITTERS.create("llamaindex.html")
    assert engine.split([page]) == []
    reason = engine.unsuited_reason(page)
    assert reason is not None and "divs.html has none of them, so it makes no nodes" in reason
    assert SPLITTERS.create("llamaindex.html", tags=("div",)).unsuited_reason(page) is None
    assert [node.text for node in SPLITTERS.create("langchain.html_header").split([page])] == ["Only here.  \ndivs"]


def test_headers_to_split_on_must_be_heading_tags() -> None:
    import pytest

    from core.errors import ConfigError

    with pytest.raises(ConfigError, match="a tag h1 to h6"):
        SPLITTERS.create("langchain.html_header", headers_to_split_on=("div Section",))
    with pytest.raises(ConfigError, match="is not a tag name"):
        SPLITTERS.create("llamaindex.html", tags=("p", "<li>"))


_BLOCK = st.tuples(
    st.sampled_from(["h1", "h2", "p", "li"]),
    st.lists(st.sampled_from(["alpha", "beta", "gamma", "Alpha.", "beta,"]), min_size=1, max_size=4).map(" ".join),
)


@settings(max_examples=40, deadline=None)
@given(blocks=st.lists(_BLOCK, min_size=1, max_size=12))
def test_every_chunk_of_a_page_is_placed_in_order_with_a_valid_span(blocks: list[tuple[str, str]]) -> None:
    body = "".join(f"<ul><li>{text}</li></ul>" if tag == "li" else f"<{tag}>{text}</{tag}>" for tag, text in blocks)
    document = load_page(f"<html><body>{body}</body></html>")
    for name in HTML_ENGINES:
        nodes = SPLITTERS.create(name).split([document])
        assert nodes, name
        previous_start = 0
        for node in nodes:
            status = node.metadata[SPAN_STATUS_KEY]
            assert previous_start <= node.start_char <= node.end_char <= len(document.text), name
            previous_start = node.start_char
            if status == "exact":
                assert document.text[node.start_char : node.end_char] == node.text
            else:
                # Pages of headings, paragraphs and list items hold every chunk's words: nothing is unplaced.
                assert status == "rewritten", (name, node.text)
                assert document.text[node.start_char : node.end_char].split() == node.text.split()


def test_a_document_made_in_code_is_keyed_by_its_markup_too() -> None:
    # The app caches splits by document key: two pages with the same text but other tags split differently.
    from ui.cache import document_key

    text = "Title\n\nBody"
    one = Document(text=text, markup="<h1>Title</h1><p>Body</p>")
    other = Document(text=text, markup="<p>Title</p><p>Body</p>")
    assert document_key(one) != document_key(other) and document_key(Document(text=text)) != document_key(one)
