"""Offline metadata extractors: title, keywords, summary."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import Document, Element, load
from core.extractors import EXTRACTORS, get_extractor
from core.extractors.title import _HEADING_MARKS, shorten


def test_title_prefers_the_first_heading_element():
    text = "Draft, do not share\n\n## Scaling the index\n\nBody."
    heading = Element("heading", text.index("##"), text.index("\n\nBody"), level=2)
    document = Document(text=text, elements=[heading])
    assert get_extractor("title").extract(document) == {"document_title": "Scaling the index"}


def test_title_falls_back_to_the_first_non_empty_line():
    document = Document(text="\n\n   Quarterly report  \nMore text.")
    assert get_extractor("title").extract(document) == {"document_title": "Quarterly report"}


def test_long_titles_are_cut_at_a_word_with_an_ellipsis():
    assert shorten("Retrieval augmented generation for everyone", 20) == "Retrieval augmented…"
    assert len(get_extractor("title", max_chars=20).extract(Document(text="word " * 30))["document_title"]) <= 20


def test_title_strips_opening_and_closing_heading_marks():
    assert get_extractor("title").extract(Document(text="## Scaling the index ##\nBody.")) == {
        "document_title": "Scaling the index"
    }


# The pattern before the closing marks' run was anchored where it starts: quadratic in a run of spaces.
_QUADRATIC_HEADING_MARKS = re.compile(r"^\s{0,3}#{1,6}\s+|\s+#+\s*$")


@given(line=st.text(alphabet=" \t\u00a0\u3000#a=-\n", max_size=40))
def test_the_heading_marks_pattern_strips_what_the_quadratic_one_did(line):
    assert _HEADING_MARKS.sub("", line) == _QUADRATIC_HEADING_MARKS.sub("", line)


@pytest.mark.parametrize("use_headings", [True, False])
def test_a_title_line_with_a_megabyte_of_spaces_takes_no_time(use_headings):
    # The app runs the offline extractors in its server process: 20,000 spaces held it (and every session)
    # for 11 s, a megabyte of them for hours. Linear now: milliseconds; the bound is for a loaded machine.
    text = "# Intro" + " " * 1_000_000 + "end of the line\n\nA paragraph.\n"
    heading = Element("heading", 0, text.index("\n"), level=1)
    started = time.monotonic()
    title = get_extractor("title", use_headings=use_headings).extract(Document(text=text, elements=[heading]))
    assert time.monotonic() - started < 10
    assert title == {"document_title": "Intro end of the line"}


def test_keywords_rank_the_document_topic_first_and_group_plurals():
    text = (
        "Chunk overlap repeats text. Chunks that overlap keep ideas whole.\n\n"
        "A chunk size that is too large dilutes the embedding.\n\n"
        "Embedding models have a window; a chunk beyond it is truncated."
    )
    keywords = get_extractor("keywords", keywords=3).extract(Document(text=text))["excerpt_keywords"].split(", ")
    assert keywords[0] == "chunk"
    assert "embedding" in keywords
    assert "chunks" not in keywords  # the same term as "chunk"


def test_keywords_find_repeated_phrases():
    text = "Hybrid search mixes scores. Hybrid search needs BM25.\n\nWe tuned hybrid search twice."
    keywords = get_extractor("keywords", keywords=2).extract(Document(text=text))["excerpt_keywords"]
    assert keywords.startswith("hybrid search")


def test_keywords_keep_acronyms_as_written():
    text = "RAG systems retrieve. RAG systems answer.\n\nRAG needs chunks."
    assert "RAG" in get_extractor("keywords").extract(Document(text=text))["excerpt_keywords"]


def test_summary_keeps_the_central_sentences_in_their_original_order():
    text = (
        "Chunking splits documents into chunks for retrieval. "
        "The weather was pleasant on the day we wrote this. "
        "Chunk size decides what retrieval can find in documents. "
        "Overlap between chunks keeps retrieval from losing ideas at chunk boundaries."
    )
    summary = get_extractor("summary", sentences=2, min_words=3).extract(Document(text=text))["section_summary"]
    assert "weather" not in summary
    assert summary.index("Chunk size") < summary.index("Overlap")


def test_summary_skips_headings_and_code():
    text = "# Chunking documents for retrieval quickly\n\n```\nchunk = documents[0:100] retrieval chunk\n```\n\nChunking documents for retrieval needs care with chunk size."
    elements = [
        Element("heading", 0, text.index("\n\n"), level=1),
        Element("code", text.index("```"), text.index("```\n\n") + 3),
    ]
    summary = get_extractor("summary", sentences=3, min_words=1).extract(Document(text=text, elements=elements))
    assert summary == {"section_summary": "Chunking documents for retrieval needs care with chunk size."}


# The document-level (offline) extractors; the LLM extractors run on nodes (tests/test_llm_extractors.py).
OFFLINE = [cls.name for cls in EXTRACTORS if not cls.node_level]


@pytest.mark.parametrize("name", OFFLINE)
def test_every_extractor_writes_exactly_its_declared_keys_on_real_documents(name, sample_docs):
    extractor = get_extractor(name)
    for path in ("chunking_guide.md", "vector_search_faq.html", "release_notes.txt"):
        for document in load(sample_docs / path):
            found = extractor.extract(document)
            assert set(found) == set(type(extractor).keys)
            assert all(isinstance(value, str) and value.strip() for value in found.values()), (path, found)


@pytest.mark.parametrize("name", OFFLINE)
@given(text=st.text(max_size=300))
def test_every_extractor_is_total_and_deterministic(name, text):
    extractor = get_extractor(name)
    document = Document(text=text)
    first = extractor.extract(document)
    assert set(first) == set(type(extractor).keys)
    assert extractor.extract(document) == first
