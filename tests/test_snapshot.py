"""The HTML snapshot: one self-contained page with the source's spans, the metrics, the node table, node views and a trace.

The page is parsed as a browser would parse it: every node's span is in the
coloured source, hostile document text, file names, metadata and queries come
out as text (never as elements or attributes), and nothing refers to anything
outside the file.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hostile.make_hostile import XSS_IMG

from core.config import PipelineConfig
from core.config_parts import MetadataSettings, RetrievalSettings
from core.documents import run_split
from core.loaders import load
from core.measure.metrics import chunk_metrics
from core.output.snapshot import DEFAULT_VIEWS, snapshot_html
from core.query.chain import final_context, run_query
from core.schema import MetadataMode
from core.splitters import get_splitter

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "hostile"
GUIDE = ROOT / "sample_docs" / "chunking_guide.md"
MARKUP_NAME = "<img src=x onerror=alert(3)>.md"
# Elements a snapshot never holds: anything that runs, loads or embeds.
FORBIDDEN = {"script", "img", "iframe", "object", "embed", "link", "svg", "video", "audio", "source", "form", "base"}


class Page(HTMLParser):
    """What a browser builds from the snapshot: tags, attributes, and the text of the source pane without its #n tags."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.source_parts: list[str] = []
        self.text_parts: list[str] = []
        self._stack: list[set[str]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        classes = set((attributes.get("class") or "").split())
        if tag not in {"meta", "br", "hr", "col", "wbr"}:
            self._stack.append(classes)

    def handle_endtag(self, tag: str) -> None:
        if tag not in {"meta", "br", "hr", "col", "wbr"} and self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        self.text_parts.append(data)
        inside = set().union(*self._stack) if self._stack else set()
        # The source pane's text, minus its #n tags, page rules and notes: exactly the document's text.
        if "cs-source" in inside and not inside & {"tag", "page", "more"}:
            self.source_parts.append(data)

    @property
    def source_text(self) -> str:
        return "".join(self.source_parts)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def tag_titles(self) -> list[str]:
        return [attrs.get("title") or "" for tag, attrs in self.tags if "tag" in (attrs.get("class") or "").split()]


def assert_self_contained(page_html: str) -> Page:
    """No script, no handler, no element that loads anything, and every reference stays inside the file."""
    assert "<script" not in page_html.lower()
    page = Page(page_html)
    for tag, attrs in page.tags:
        assert tag not in FORBIDDEN, tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name, value)
            if name in {"src", "href", "srcset", "action", "poster", "data", "xlink:href"}:
                assert (value or "").startswith(("#", "data:")), (tag, name, value)
    # Styles are inline and load nothing: no url(...) but data:, no @import.
    lowered = page_html.lower()
    assert "@import" not in lowered and "url(http" not in lowered and "url(//" not in lowered
    return page


@pytest.fixture(scope="module")
def guide():
    config = PipelineConfig(splitter=get_splitter("character", chunk_size=400, chunk_overlap=60))
    (document,) = load(GUIDE)
    nodes = run_split([document], config)
    return document, nodes, config


def test_the_source_pane_holds_the_whole_document_and_a_tag_for_every_node(guide):
    document, nodes, config = guide
    page = assert_self_contained(snapshot_html(document, nodes, config))
    assert page.source_text == document.text
    assert page.tag_titles() == [node.id for node in nodes]
    # Overlap is drawn: text held by two chunks is hatched.
    assert any("ov" in (attrs.get("class") or "").split() for _, attrs in page.tags)


def test_every_node_has_a_table_row_with_its_span(guide):
    document, nodes, config = guide
    page = assert_self_contained(snapshot_html(document, nodes, config))
    rows = [attrs for tag, attrs in page.tags if tag == "tr" and (attrs.get("id") or "").startswith("node-")]
    assert [row["id"] for row in rows] == [f"node-{i}" for i in range(len(nodes))]
    for node in nodes:
        assert f"{node.start_char}–{node.end_char}" in page.text


def test_the_metric_cards_show_chunk_metrics(guide):
    document, nodes, config = guide
    metrics = chunk_metrics([document], nodes, size_limit=400, tokenizer="characters")
    page = assert_self_contained(snapshot_html(document, nodes, config))
    for label, value in [
        ("Nodes", f"{metrics.count:,}"),
        ("Mean size", f"{metrics.tokens.mean:,.0f}"),
        ("Coverage", f"{metrics.coverage:.1%}"),
        ("Overlap", f"{metrics.overlap:.1%}"),
        ("Mid-sentence", f"{metrics.mid_sentence:.0%}"),
        ("Over window", f"{metrics.over_window:.0%}"),
    ]:
        assert f"{label}{value}" in page.text.replace("\n", ""), label


def test_the_views_show_what_the_llm_and_the_embedding_model_read():
    # The embedding model is kept from the file name, so the two views differ.
    config = PipelineConfig(
        splitter=get_splitter("character", chunk_size=300, chunk_overlap=0),
        metadata=MetadataSettings(excluded_embed_metadata_keys=("file_name",), extra=(("team", "search"),)),
    )
    (document,) = load(GUIDE)
    nodes = run_split([document], config)
    chosen = nodes[4]
    page = assert_self_contained(snapshot_html(document, nodes, config, selected_ids=(chosen.id,)))
    llm, embed = chosen.get_content(MetadataMode.LLM), chosen.get_content(MetadataMode.EMBED)
    assert llm != embed
    assert llm in page.text and embed in page.text
    # Only the chosen node is shown up close, and it is outlined in the source.
    assert nodes[0].get_content(MetadataMode.LLM) not in page.text
    assert [attrs.get("title") for _, attrs in page.tags if "sel-tag" in (attrs.get("class") or "")] == [chosen.id]


def test_without_a_choice_the_first_nodes_are_shown_up_close(guide):
    document, nodes, config = guide
    page = assert_self_contained(snapshot_html(document, nodes, config, selected_ids=("not-a-node",)))
    views = [attrs["id"] for tag, attrs in page.tags if tag == "article"]
    assert views == [f"view-{i}" for i in range(DEFAULT_VIEWS)]
    for node in nodes[:DEFAULT_VIEWS]:
        assert node.get_content(MetadataMode.LLM) in page.text


@pytest.mark.parametrize("name", ["raw_html.md", "script_and_handlers.html"])
def test_hostile_text_names_and_metadata_read_as_text(name):
    config = PipelineConfig(
        splitter=get_splitter("character", chunk_size=120, chunk_overlap=20),
        metadata=MetadataSettings(extra=(("author", XSS_IMG),)),
    )
    (loaded,) = load(HOSTILE / name)
    document = loaded.with_metadata({**loaded.metadata, "file_name": MARKUP_NAME})
    nodes = run_split([document], config)
    page_html = snapshot_html(document, nodes, config, selected_ids=tuple(node.id for node in nodes))
    page = assert_self_contained(page_html)
    assert page.source_text == document.text
    assert MARKUP_NAME in page.text
    assert XSS_IMG in page.text  # the metadata value, shown in every LLM view
    assert html.escape(XSS_IMG) in page_html
    assert f"<title>{html.escape(MARKUP_NAME)} · ChunkScope snapshot</title>" in page_html


def test_a_query_trace_shows_retrieval_each_stage_and_the_final_context(guide):
    document, nodes, config = guide
    query = "<script>alert('q')</script> chunk overlap"
    result = run_query(nodes, query, postprocessors=[("top_n", {"top_n": 2})], retrieval=RetrievalSettings(mode="bm25", top_k=5))
    page = assert_self_contained(snapshot_html(document, nodes, config, query_result=result))
    assert query in page.text
    assert "retrieval5" in page.text.replace("\n", "") and "top_n2" in page.text.replace("\n", "")
    assert "5 in → 2 out · 3 dropped" in page.text
    assert final_context(result.final) in page.text
    for item in result.retrieved:
        assert f"{item.score:.4f}" in page.text


def test_without_a_trace_there_is_no_query_section(guide):
    document, nodes, config = guide
    page = assert_self_contained(snapshot_html(document, nodes, config))
    assert not any(attrs.get("id") == "query" for _, attrs in page.tags)


def test_a_document_with_no_nodes_still_makes_a_page():
    (document,) = load(GUIDE)
    config = PipelineConfig(splitter=get_splitter("character", chunk_size=400, chunk_overlap=0))
    page = assert_self_contained(snapshot_html(document, [], config))
    assert page.source_text == document.text
    assert "no nodes" in page.text
