"""Excerpts are found however they were copied: exactly, ignoring whitespace, or without their markup, on every loader."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.config_parts import RetrievalSettings
from core.evaluation.evaluate import evaluate, reference_spans
from core.evaluation.excerpts import ExcerptFinder, without_markup
from core.evaluation.queries import EvalQuery
from core.loaders import load, load_bytes

PAGE = b"""<html><body>
<h1>Chunk overlap</h1>
<p>The overlap should be
   ten percent of the <em>chunk size</em>, and never &amp; nowhere more.</p>
</body></html>"""


def test_an_html_excerpt_copied_from_the_source_with_a_line_break_is_found():
    (document,) = load_bytes(PAGE, "page.html")
    assert "should be ten percent" in document.text  # the loader collapsed the source's line break
    excerpt = "overlap should be\n   ten percent"
    spans = ExcerptFinder(document.text).find(excerpt)
    assert [document.text[start:end] for start, end in spans] == ["overlap should be ten percent"]


def test_an_excerpt_with_the_sources_markup_is_found_without_it():
    (document,) = load_bytes(PAGE, "page.html")
    spans = ExcerptFinder(document.text).find("of the <em>chunk size</em>, and never &amp; nowhere")
    assert [document.text[start:end] for start, end in spans] == ["of the chunk size, and never & nowhere"]
    assert without_markup("a <b>bold</b> &lt;tag&gt;") == "a bold <tag>"


def test_an_html_query_no_longer_aborts_the_evaluation():
    documents = load_bytes(PAGE, "page.html")
    query = EvalQuery("How much overlap?", "page.html", ("overlap should be\n   ten percent of the",))
    result = evaluate(documents, [query], "character", {"chunk_size": 40, "chunk_overlap": 0}, retrieval=RetrievalSettings(mode="bm25"))
    assert result.per_query[0].hit == 1.0


def test_exact_matches_win_and_repeats_all_count():
    assert ExcerptFinder("ab ab a b").find("ab") == [(0, 2), (3, 5)]  # "a b" only when no exact one
    assert ExcerptFinder("a  b, then a\tb").find("a b") == [(0, 4), (11, 14)]
    assert ExcerptFinder("text").find("   ") == []


@pytest.mark.parametrize(
    "name", ["vector_search_faq.html", "rag_handbook.pdf", "splitter_benchmarks.csv", "release_notes.txt"]
)
def test_on_every_loader_a_passage_with_its_whitespace_changed_is_found_where_it_is(sample_docs, name):
    (document,) = load(sample_docs / name)
    text = document.text
    # A passage of several lines from the middle of the text, copied with other line breaks and spaces.
    start = text.index("\n", len(text) // 3) + 1
    while text[start].isspace():
        start += 1
    end = start + 120
    while text[end - 1].isspace():
        end -= 1
    copied = "\r\n  ".join(text[start:end].split())
    assert copied not in text
    query = EvalQuery("q", name, (copied,))
    assert reference_spans([document], query) == [(document.id, start, end)]


words = st.text(alphabet="ab \n\t", max_size=30)


@given(text=words, bounds=st.tuples(st.integers(0, 30), st.integers(0, 30)), gaps=st.sampled_from(["", " ", "\n  "]))
def test_whatever_is_found_is_the_excerpt_up_to_whitespace(text, bounds, gaps):
    start, end = sorted(bounds)
    excerpt = gaps.join(text[start:end].split())
    spans = ExcerptFinder(text).find(excerpt)
    if "".join(excerpt.split()):
        assert spans
    for found_start, found_end in spans:
        assert "".join(text[found_start:found_end].split()) == "".join(excerpt.split())
