"""The sentence splitter's metadata budget: a node's views, not only its text, fit chunk_size.

A node carries the document's metadata and, per node, ``page_label`` and (inside a
table's body) ``table_header``, shown through ``text_template``. The budget reserves
room for all of it, so with the model tokenizer the shipped defaults keep every
EMBED view inside the embedding model's window.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import prose, table_documents

from core.config import PipelineConfig
from core.documents import run_split
from core.loaders import load
from core.measure.metrics import chunk_metrics
from core.schema import Document, MetadataMode, Page
from core.splitters import get_splitter
from core.splitters.hierarchical import leaf_nodes
from core.splitters.nodes import HEADER_NOTE, shorten_header
from core.tokens.tokenizers import get_tokenizer

MODEL_WINDOW = 254  # all-MiniLM-L6-v2 reads 256 tokens, [CLS] and [SEP] among them


@pytest.mark.parametrize("name", ["splitter_benchmarks.csv", "rag_handbook.pdf"])
def test_default_sentence_split_of_a_sample_keeps_every_embed_view_inside_the_window(sample_docs, name) -> None:
    documents = load(sample_docs / name)
    sentence = get_splitter("sentence")
    nodes = run_split(documents, PipelineConfig(splitter=sentence))
    model = get_tokenizer("model")
    sizes = model.count_many([node.get_content(MetadataMode.EMBED) for node in nodes])
    assert max(sizes) <= sentence.chunk_size <= MODEL_WINDOW
    metrics = chunk_metrics(documents, nodes, size_limit=250, tokenizer="model")
    assert metrics.over_window == 0


@pytest.mark.parametrize("name", ["splitter_benchmarks.csv", "rag_handbook.pdf", "chunking_guide.md"])
def test_the_default_hierarchys_leaves_fit_the_window_with_their_level_and_page_label(sample_docs, name) -> None:
    documents = load(sample_docs / name)
    config = PipelineConfig()
    leaves = leaf_nodes(run_split(documents, config))
    sizes = get_tokenizer("model").count_many([node.get_content(MetadataMode.EMBED) for node in leaves])
    assert max(sizes) <= config.splitter.level_sizes[-1] <= MODEL_WINDOW


def test_budget_reserves_the_page_label_a_node_gets() -> None:
    # "file_name: a\n\n" is 14 characters; a node across pages 9 and 10 adds "\npage_label: 9-10" (17): 40 - 31 = 9.
    text = "Aaaa. Bbbb. Cccc. Dddd."
    pages = [Page(1, "9", 0, 11), Page(2, "10", 11, len(text))]
    document = Document(text=text, metadata={"file_name": "a"}, pages=pages)
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=40, chunk_overlap=0)
    assert splitter.chunk_budget(document) == 40 - len("file_name: a\npage_label: 10-10\n\n")
    for node in splitter.split([document]):
        assert len(node.get_content(MetadataMode.EMBED)) <= 40


def test_budget_reserves_the_table_header_and_the_template_words() -> None:
    document = Document(
        text="x",
        metadata={"k": "v"},
        text_template="Context: {metadata_str}\nText: {content}",
        elements=[],
    )
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=60, chunk_overlap=0)
    assert splitter.chunk_budget(document) == 60 - len("Context: k: v\nText: ")


def test_compat_llamaindex_keeps_llamaindex_budget_of_the_document_metadata_alone() -> None:
    text = "Aaaa. Bbbb."
    document = Document(text=text, metadata={"file_name": "a"}, pages=[Page(1, "1", 0, 6), Page(2, "2", 6, 11)])
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=40, chunk_overlap=0, compat="llamaindex")
    assert splitter.chunk_budget(document) == 40 - len("file_name: a")


@given(document=table_documents(), chunk_size=st.integers(160, 400), paged=st.booleans())
def test_every_view_fits_chunk_size_in_characters(document: Document, chunk_size: int, paged: bool) -> None:
    """Counted in characters (exact and additive), no view is longer than chunk_size, unless it is one table row."""
    if paged:
        middle = len(document.text) // 2
        pages = [Page(1, "i", 0, middle), Page(2, "ii", middle, len(document.text))]
        document = Document(
            text=document.text, metadata=document.metadata, elements=document.elements, pages=pages, id="d"
        )
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=chunk_size, chunk_overlap=0)
    rows = {(e.start_char, e.end_char) for e in document.elements if e.kind == "table_row"}
    for node in splitter.split([document]):
        if (node.start_char, node.end_char) in rows:
            continue
        for mode in (MetadataMode.EMBED, MetadataMode.LLM):
            assert len(node.get_content(mode)) <= chunk_size


@given(text=prose(), chunk_size=st.integers(40, 200))
def test_views_of_unpaged_plain_text_fit_chunk_size(text: str, chunk_size: int) -> None:
    document = Document(text=text, metadata={"file_name": "p.txt"})
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=chunk_size, chunk_overlap=0)
    for node in splitter.split([document]):
        assert len(node.get_content(MetadataMode.EMBED)) <= chunk_size


# -- a header row too long to repeat (issue #44.2) ----------------------------------------------


def wide_table_document(columns: int, width: int = 8) -> Document:
    """Prose, then a table of ``columns`` columns whose header cells are ``width`` characters, and 30 rows."""
    from core.loaders.blocks import BlockText

    out = BlockText()
    out.add("Inventory of the harbour stores, counted in March.", "paragraph")
    header = [f"column {n}".ljust(width, "x") for n in range(1, columns + 1)]
    out.add_table([header, *([str(r * c) for c in range(1, columns + 1)] for r in range(1, 31))])
    text, elements, _ = out.result()
    return Document(text=text, metadata={"file_name": "wide.pdf"}, elements=elements, id="wide")


def views_fit(document: Document, nodes: list, chunk_size: int) -> bool:
    """Every node's views fit ``chunk_size``, but a node of one table row, or of the header row (a row is never
    cut)."""
    (table,) = [e for e in document.elements if e.kind == "table"]
    rows = {(e.start_char, e.end_char) for e in document.elements if e.kind == "table_row"}
    return all(
        len(node.get_content(mode)) <= chunk_size
        for node in nodes
        if (node.start_char, node.end_char) not in rows
        and not (table.start_char <= node.start_char and node.end_char <= table.attrs["header_end"])
        for mode in (MetadataMode.EMBED, MetadataMode.LLM)
    )


def test_a_header_row_that_leaves_no_room_was_refused() -> None:
    """The defect: a header row longer than chunk_size made every split of the document a ConfigError."""
    document = wide_table_document(9)
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=110, chunk_overlap=0)
    header = [e for e in document.elements if e.kind == "table"][0].attrs["header"]
    assert len(header) + len("file_name: wide.pdf\ntable_header: \n\n") > 110
    assert splitter.split([document])  # refused before: "no room in chunk_size 110"


@pytest.mark.parametrize(("chunk_size", "kept"), [(110, 2), (120, 3), (160, 6)])
def test_a_header_row_too_long_to_repeat_is_shortened_in_metadata_and_says_so(chunk_size: int, kept: int) -> None:
    document = wide_table_document(9)
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=chunk_size, chunk_overlap=0)
    nodes = splitter.split([document])
    (header,) = {node.metadata["table_header"] for node in nodes if "table_header" in node.metadata}
    cells = " | ".join(f"column {n}" for n in range(1, kept + 1))
    assert header == f"| {cells} | … {9 - kept} more columns |"
    assert all(node.text == document.text[node.start_char : node.end_char] for node in nodes)
    assert views_fit(document, nodes, chunk_size)
    # The header takes at most three quarters of the room the other metadata leaves.
    room = chunk_size - len("file_name: wide.pdf\n\n")
    assert len("\ntable_header: ") + len(header) <= room * 0.75


def test_a_header_row_whose_first_cell_does_not_fit_is_replaced_by_a_note() -> None:
    document = wide_table_document(4, width=80)
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=150, chunk_overlap=0)
    nodes = splitter.split([document])
    assert {node.metadata.get("table_header") for node in nodes} == {None, "(header row too long to repeat)"}
    assert views_fit(document, nodes, 150)


def test_a_header_row_that_fits_is_repeated_whole() -> None:
    document = wide_table_document(3)
    nodes = get_splitter("sentence", tokenizer="characters", chunk_size=200, chunk_overlap=0).split([document])
    header = [e for e in document.elements if e.kind == "table"][0].attrs["header"]
    assert {node.metadata.get("table_header") for node in nodes} == {None, header}


def test_the_hierarchy_shortens_the_header_per_level_instead_of_refusing() -> None:
    document = wide_table_document(9)
    splitter = get_splitter("hierarchical", tokenizer="characters", chunk_sizes=[400, 130], chunk_overlap=0)
    leaves = leaf_nodes(splitter.split([document]))
    assert views_fit(document, leaves, 130)
    assert {node.metadata.get("table_header") for node in leaves} == {
        None,
        "| column 1 | column 2 | column 3 | … 6 more columns |",
    }


def test_shorten_header_keeps_what_fits_and_says_what_it_left_out() -> None:
    header = "| item description | quantity ordered | unit price in euros |"
    assert shorten_header(header, lambda h: len(h) <= 61) == header
    assert (
        shorten_header(header, lambda h: len(h) <= 58) == "| item description | quantity ordered | … 1 more columns |"
    )
    assert shorten_header(header, lambda h: len(h) <= 50) == "| item description | … 2 more columns |"
    assert shorten_header(header, lambda h: len(h) <= 38) == HEADER_NOTE
    assert shorten_header(header, lambda h: len(h) <= 30) == ""


def test_a_header_row_no_view_shows_is_left_whole() -> None:
    document = wide_table_document(9)
    hidden = replace(
        document, excluded_llm_metadata_keys=["table_header"], excluded_embed_metadata_keys=["table_header"]
    )
    nodes = get_splitter("sentence", tokenizer="characters", chunk_size=110, chunk_overlap=0).split([hidden])
    header = [e for e in document.elements if e.kind == "table"][0].attrs["header"]
    assert {node.metadata.get("table_header") for node in nodes} == {None, header}
