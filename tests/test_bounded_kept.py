"""What a bounded child computes for a text comes back to its parent (core.runtime.memo.TextTables).

A 1 MB text is split in a forked child (core.documents.bounded.split_bounded), which dies with what it
computed: at every new chunk_size of a Chunks rerun it segmented again each paragraph the last child
had segmented. The child now sends what it added to the per-text tables (the sentences of ranges of
the text) with its nodes; the parent keeps them, so the next child starts with them. And where a
splitter builds its nodes from spans, the child sends the spans (they pickle in a fraction of the time)
and the parent builds the nodes. The nodes stay those of an in-process split.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from core.config import PipelineConfig
from core.documents import bounded as bounded_module
from core.documents import run_split
from core.documents.bounded import split_bounded
from core.loaders import load
from core.runtime.bounded import map_bounded
from core.runtime.memo import TextTables, added_to_tables, keep_in_tables, mark_tables
from core.schema import Document, Node
from core.splitters import SPLITTERS, get_splitter
from core.splitters import sentence as sentence_module
from core.splitters.base import spans_of_nodes
from core.splitters.sentence import SentenceSplitter
from core.tokens import segmentation
from core.tokens.segmentation import SENTENCE_SPANS, sentence_spans_within

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

PARAGRAPH = (
    "Chunks hold whole sentences where they fit. A sentence that does not fit is cut at clauses, then words. "
    "Überlänge wird an Sätzen geschnitten. La phrase suivante est courte. "
)
# Paragraphs of ~40 sentences each: over a 60-token chunk, so each is cut at its sentences.
TEXT = "\n\n\n".join(f"Part {i}. " + PARAGRAPH * 10 for i in range(6))


@pytest.fixture
def tables() -> TextTables:
    memo = TextTables(1_000_000)
    yield memo
    from core.runtime import memo as memo_module

    memo_module._TEXT_TABLES.remove(memo)


# -- the tables ---------------------------------------------------------------------------------


def test_what_was_added_since_the_mark_is_what_is_sent(tables: TextTables) -> None:
    tables.table("some text")[(0, 4)] = "kept before"
    marks = mark_tables("some text")
    tables.table("some text")[(5, 9)] = "added"
    tables.table("some text")[(0, 9)] = "added too"
    added = added_to_tables("some text", marks)
    assert added[-1] == [((5, 9), "added"), ((0, 9), "added too")]


def test_a_table_made_after_the_mark_is_sent_whole(tables: TextTables) -> None:
    marks = mark_tables("a new text")
    tables.table("a new text")[(0, 1)] = "first"
    assert added_to_tables("a new text", marks)[-1] == [((0, 1), "first")]
    # made anew after the text was forgotten: its entries are all new, whatever the old table held
    tables.table("another")[(0, 1)] = "old"
    marks = mark_tables("another")
    tables.clear()
    tables.table("another")[(2, 3)] = "new"
    assert added_to_tables("another", marks)[-1] == [((2, 3), "new")]


def test_the_parent_keeps_what_was_sent_without_changing_what_it_holds(tables: TextTables) -> None:
    tables.table("text")[(0, 1)] = "the parent's"
    keep_in_tables("text", [[] for _ in range(len(mark_tables("text")) - 1)] + [[((0, 1), "other"), ((1, 2), "sent")]])
    assert tables.table("text") == {(0, 1): "the parent's", (1, 2): "sent"}


# -- the bounded split --------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def nothing_kept() -> None:
    """No sentences kept and no pieces' splits kept (those would spare the child its segmenting)."""
    SENTENCE_SPANS.clear()
    sentence_module._SPLITS.clear()


def _segmented_in_child(log: Path):  # noqa: ANN202
    """sentence_spans that notes each call in ``log`` (the child's calls, seen from here)."""
    original = segmentation.sentence_spans

    def noting(text: str) -> list[tuple[int, int]]:
        with log.open("a") as out:
            out.write("x")
        return original(text)

    return noting


def test_a_child_splitting_the_same_text_does_not_segment_what_the_last_child_did(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "calls"
    monkeypatch.setattr(bounded_module, "IN_PROCESS_CHARS", -1)  # every split to a child
    monkeypatch.setattr(bounded_module, "LIGHT_IN_PROCESS_CHARS", -1)
    monkeypatch.setattr(segmentation, "sentence_spans", _segmented_in_child(log))
    document = Document(text=TEXT)
    first = run_split([document], PipelineConfig(splitter=get_splitter("sentence", chunk_size=60)), bounded=True)
    segmented = len(log.read_text())
    assert segmented >= 6  # each paragraph, in the child
    assert len(SENTENCE_SPANS.table(TEXT)) == segmented  # ... and kept here
    # Another child, another overlap: the same paragraphs to cut, none segmented again.
    again = run_split(
        [document], PipelineConfig(splitter=get_splitter("sentence", chunk_size=60, chunk_overlap=10)), bounded=True
    )
    assert len(log.read_text()) == segmented
    assert first == run_split([document], PipelineConfig(splitter=get_splitter("sentence", chunk_size=60)))
    assert again == run_split(
        [document], PipelineConfig(splitter=get_splitter("sentence", chunk_size=60, chunk_overlap=10))
    )


def test_the_splits_of_a_childs_pieces_are_kept_here_and_give_the_same_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_module, "IN_PROCESS_CHARS", -1)
    monkeypatch.setattr(bounded_module, "LIGHT_IN_PROCESS_CHARS", -1)
    document = Document(text=TEXT)
    run_split(
        [document], PipelineConfig(splitter=get_splitter("sentence", chunk_size=60, chunk_overlap=5)), bounded=True
    )
    kept = len(sentence_module._SPLITS.table(TEXT))
    assert kept >= 6  # the text, then each paragraph, split once in the child and kept here
    smaller = PipelineConfig(splitter=get_splitter("sentence", chunk_size=12, chunk_overlap=2))
    from_kept = run_split([document], smaller, bounded=True)
    assert len(sentence_module._SPLITS.table(TEXT)) > kept  # the pieces split only at the smaller size, kept too
    segmentation.reuse_sentence_spans(False)  # nothing kept: every piece split afresh, here
    try:
        assert from_kept == run_split([document], smaller)
    finally:
        segmentation.reuse_sentence_spans(True)


def test_the_kept_sentences_are_those_segmented_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_module, "IN_PROCESS_CHARS", -1)
    monkeypatch.setattr(bounded_module, "LIGHT_IN_PROCESS_CHARS", -1)
    run_split(
        [Document(text=TEXT)],
        PipelineConfig(splitter=get_splitter("sentence", chunk_size=40, chunk_overlap=5)),
        bounded=True,
    )
    kept = dict(SENTENCE_SPANS.table(TEXT))
    assert kept
    SENTENCE_SPANS.clear()
    assert kept == {(start, end): sentence_spans_within(TEXT, start, end) for start, end in kept}


def test_the_child_never_scans_what_it_inherited() -> None:
    frozen_here = gc.get_freeze_count()
    frozen_there = map_bounded(
        lambda _: gc.get_freeze_count(), [None], file_names=["x"], what="counting", seconds=30, memory_mb=None
    )[0]
    assert frozen_there > frozen_here
    assert gc.get_freeze_count() == frozen_here


# -- the spans a child sends instead of its nodes -----------------------------------------------

SAMPLES = Path(__file__).resolve().parent.parent / "sample_docs"
# Markdown with headings, a table and code; HTML; a PDF with pages; a CSV (rows as elements).
SAMPLE_FILES = ("chunking_guide.md", "vector_search_faq.html", "rag_handbook.pdf", "splitter_benchmarks.csv")


@pytest.fixture(scope="module")
def sample_documents() -> list[Document]:
    return [document for name in SAMPLE_FILES for document in load(SAMPLES / name)]


def _settings() -> list[tuple[str, dict]]:
    """Every splitter that does not embed, at its defaults and in each of its compat modes."""
    found = []
    for name in SPLITTERS.names():
        cls = SPLITTERS.get_class(name)
        if cls.embeds_text:
            continue
        found.append((name, {}))
        compat = next((spec for spec in cls.params() if spec.name == "compat"), None)
        found += [(name, {"compat": mode}) for mode in (compat.choices if compat else ()) if mode != "none"]
    return found


@pytest.mark.parametrize(("name", "params"), _settings(), ids=lambda value: str(value))
def test_nodes_built_from_the_spans_a_child_sends_are_the_splitters_own(
    name: str, params: dict, sample_documents: list[Document]
) -> None:
    splitter = get_splitter(name, **params)
    for document in sample_documents:
        spans = spans_of_nodes(splitter, document)
        if spans is not None:
            assert splitter.nodes_from_spans(document, spans) == splitter.split([document])


def test_the_rerun_splitters_send_spans_and_a_compat_mode_that_keeps_a_frameworks_text_sends_nodes(
    sample_documents: list[Document],
) -> None:
    document = sample_documents[0]
    for name in ("sentence", "recursive", "character", "token", "markdown"):
        assert spans_of_nodes(get_splitter(name), document) is not None
    assert spans_of_nodes(get_splitter("sentence", compat="llamaindex"), document) is None
    assert spans_of_nodes(get_splitter("hierarchical"), document) is None  # levels: made its own way
    assert spans_of_nodes(get_splitter("langchain.recursive"), document) is None  # a framework's chunks


class FirstNodeOnly(SentenceSplitter):
    """A plugin that makes its nodes its own way and says nothing of their spans."""

    def split_document(self, document: Document) -> list[Node]:
        return super().split_document(document)[:1]


def test_a_subclass_that_makes_its_nodes_its_own_way_sends_them_whole(sample_documents: list[Document]) -> None:
    splitter = FirstNodeOnly(chunk_size=60, chunk_overlap=5)
    document = sample_documents[0]
    assert spans_of_nodes(splitter, document) is None
    assert split_bounded([document], splitter) == splitter.split([document])
    assert len(splitter.split([document])) == 1


def test_a_text_keeps_the_splits_of_its_four_latest_settings() -> None:
    separators = ["\n\n\n", "\n\n", "\n", ". ", "; "]
    for separator in separators:
        get_splitter("sentence", chunk_size=40, chunk_overlap=5, paragraph_separator=separator).split(
            [Document(text=TEXT)]
        )
    kept = {key[0][0] for key in sentence_module._SPLITS.table(TEXT)}
    assert kept == set(separators[1:])
    last = get_splitter("sentence", chunk_size=40, chunk_overlap=5, paragraph_separator="; ")
    from_kept = last.split([Document(text=TEXT)])
    segmentation.reuse_sentence_spans(False)
    try:
        assert from_kept == last.split([Document(text=TEXT)])
    finally:
        segmentation.reuse_sentence_spans(True)
