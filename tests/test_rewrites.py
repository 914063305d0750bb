"""What a framework did to the text: span-status summaries and rewrite segments, and identical chunks in Compare."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import get_splitter, load
from core.measure.compare import identical_chunks
from core.schema import Document
from core.spans.recovery import SpanStatus
from core.spans.rewrites import (
    Segment,
    changed_characters,
    has_span_status,
    rewrite_segments,
    status_of,
    status_summary,
)


def test_a_stripped_header_is_source_only_and_the_rest_is_the_same():
    assert rewrite_segments("# Title\n\nBody text.", "Body text.") == [
        Segment("source_only", "# Title\n\n"),
        Segment("same", "Body text."),
    ]


def test_collapsed_blank_lines_show_what_went_and_what_came():
    segments = rewrite_segments("one\n\n\ntwo", "one\ntwo")
    assert segments == [Segment("same", "one\n"), Segment("source_only", "\n\n"), Segment("same", "two")]
    assert changed_characters(segments) == (2, 0)


@given(st.text(max_size=60), st.text(max_size=60))
def test_segments_give_back_both_texts(source: str, chunk: str):
    segments = rewrite_segments(source, chunk)
    assert "".join(s.text for s in segments if s.kind != "chunk_only") == source
    assert "".join(s.text for s in segments if s.kind != "source_only") == chunk
    assert all(s.text for s in segments)


def test_a_framework_split_reports_exact_and_rewritten_chunks():
    documents = load("sample_docs/chunking_guide.md")
    nodes = get_splitter("langchain.markdown_header").split(documents)
    assert has_span_status(nodes)
    statuses = [status_of(node) for node in nodes]
    rewritten = statuses.count(SpanStatus.REWRITTEN)
    assert rewritten > 0  # LangChain moves the headers into metadata
    assert status_summary(nodes) == (
        f"{len(nodes)} chunks: {statuses.count(SpanStatus.EXACT)} exact · {rewritten} rewritten · 0 unplaced"
    )
    text = documents[0].text
    for node in nodes:
        if status_of(node) is SpanStatus.REWRITTEN:
            dropped, added = changed_characters(rewrite_segments(text[node.start_char : node.end_char], node.text))
            assert dropped or added


def test_native_nodes_carry_no_span_status():
    nodes = get_splitter("recursive", chunk_size=200, chunk_overlap=0).split([Document(text="word " * 100)])
    assert not has_span_status(nodes)
    assert {status_of(node) for node in nodes} == {SpanStatus.EXACT}


def test_identical_chunks_need_the_same_span_and_text():
    document = Document(text="alpha beta gamma delta " * 20)
    a = get_splitter("recursive", chunk_size=100, chunk_overlap=0).split([document])
    b = get_splitter("recursive", chunk_size=100, chunk_overlap=0).split([document])
    c = get_splitter("recursive", chunk_size=60, chunk_overlap=0).split([document])
    assert identical_chunks(a, b) == len(b)
    assert identical_chunks(a, c) < len(c)
    assert identical_chunks(a, []) == 0


SAMPLES = sorted(
    path
    for path in Path("sample_docs").iterdir()
    if path.is_file() and path.suffix not in (".json",)
)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda path: path.name)
@pytest.mark.parametrize(("size", "overlap"), [(1000, 200), (400, 0), (256, 32)])
def test_the_langchain_engine_matches_the_native_recursive_splitter_on_every_sample(path, size, overlap):
    # The README says so; this keeps it true.
    documents = load(path)
    native = get_splitter("recursive", chunk_size=size, chunk_overlap=overlap).split(documents)
    engine = get_splitter("langchain.recursive", chunk_size=size, chunk_overlap=overlap).split(documents)
    assert identical_chunks(native, engine) == len(engine) == len(native)


def test_a_compat_split_whose_first_chunk_is_exact_still_reports_its_rewritten_ones():
    # LangChain's CharacterTextSplitter drops the empty pieces between repeated separators, so the chunk that
    # spans them is rewritten; the first chunk is an exact slice and carries no status.
    text = "alpha beta gamma delta.\n\none.\n\n\n\ntwo."
    nodes = get_splitter("character", chunk_size=25, chunk_overlap=0, compat="langchain").split([Document(text=text)])
    assert [node.text for node in nodes] == ["alpha beta gamma delta.", "one.\n\ntwo."]
    assert status_of(nodes[0]) is SpanStatus.EXACT and "span_status" not in nodes[0].metadata
    assert status_of(nodes[1]) is SpanStatus.REWRITTEN
    assert has_span_status(nodes)
