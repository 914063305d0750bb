"""The model tokenizer on several threads: the same tokens as one thread, in order, from any number of callers.

A large batch is encoded in parts on parallel threads and a text's token index
is built from runs of blocks on parallel threads; both must give exactly what
the serial path gives. The sentence splitter keeps a text's sentence cuts for
its next split; that split must equal a fresh one.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from types import SimpleNamespace
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hard_words, prose, unicode_text, whitespace_runs

from core.schema import Document
from core.splitters import get_splitter
from core.tokens import segmentation
from core.tokens import threads as tokenizer_threads
from core.tokens.segmentation import SENTENCE_SPANS, reuse_sentence_spans
from core.tokens.threads import in_parallel, parts
from core.tokens.token_index import TokenIndex, reuse_token_indexes
from core.tokens.tokenizers import _offset_columns, get_tokenizer

MODEL = get_tokenizer("model")

# Empty strings, zero-width and odd spaces, combining marks, astral characters, CJK and right-to-left text.
texts = st.one_of(
    st.just(""), prose(), unicode_text(), whitespace_runs, st.text(max_size=60), hard_words, st.just("\u200b\ufeff")
)


def _lists(columns):
    return [(list(starts), list(ends)) for starts, ends in columns]


def serial():
    """One thread for every batch."""
    return patch.object(tokenizer_threads, "WORKERS", 1)


def parallel():
    """Two threads for every batch of two texts or more, however short."""
    return patch.multiple(tokenizer_threads, WORKERS=2, PARALLEL_MIN_CHARS=1)


@settings(max_examples=60, deadline=None)
@given(st.lists(texts, max_size=12))
def test_parallel_batches_equal_serial_ones(batch):
    with serial():
        columns, counts = _lists(MODEL.span_columns(batch)), MODEL.count_many(batch)
    with parallel():
        assert _lists(MODEL.span_columns(batch)) == columns
        assert MODEL.count_many(batch) == counts
    assert [list(zip(starts, ends, strict=True)) for starts, ends in columns] == [MODEL.spans(text) for text in batch]


@settings(max_examples=40, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8).map(" ".join), st.integers(min_value=1, max_value=40))
def test_parallel_token_index_equals_serial_one(text, block):
    with patch.object(TokenIndex, "BLOCK", block), patch.object(TokenIndex, "BATCH", 3):
        with serial():
            expected = TokenIndex(MODEL, text)
        with parallel():
            index = TokenIndex(MODEL, text)
    assert (index.starts, index.ends) == (expected.starts, expected.ends)
    assert list(zip(index.starts, index.ends, strict=True)) == MODEL.spans(text)


@pytest.mark.parametrize("control", ["\x0b", "\x0c", "\x1c", "\x1f", "\x85"])
def test_blocks_are_not_cut_at_control_characters_the_model_deletes(control):
    text = ("ab" + control + "cd ") * 8
    with patch.object(TokenIndex, "BLOCK", 1):
        index = TokenIndex(MODEL, text)
    assert list(zip(index.starts, index.ends, strict=True)) == MODEL.spans(text)
    assert MODEL.spans("ab" + control + "cd") == [(0, 4), (4, 5)]  # one word: "abcd" is "abc", "##d"


def test_a_large_text_is_indexed_on_two_threads_with_the_tokens_of_one():
    text = "Tokenizers release the GIL while they encode a batch, naïve café 東京. " * 2_000
    calls = []
    spy = MODEL.span_columns

    def recorded(blocks):
        calls.append(threading.get_ident())
        return spy(blocks)

    with patch.object(tokenizer_threads, "WORKERS", 2), patch.object(MODEL, "span_columns", recorded):
        index = TokenIndex(MODEL, text)
    assert len(set(calls)) == 2  # both runs of blocks were encoded, each on its own thread
    assert list(zip(index.starts, index.ends, strict=True)) == MODEL.spans(text)


def test_concurrent_callers_each_get_their_own_tokens():
    inputs = [f"Caller {n} writes naïve sentences, {'word ' * (n * 37 % 400)}end." for n in range(24)]
    expected_spans = [MODEL.spans(text) for text in inputs]
    expected_counts = MODEL.count_many(inputs)
    lent: set[int] = set()
    lock = threading.Lock()
    borrowed = MODEL._copies.borrowed
    overlaps = []

    def watched():
        with borrowed() as tokenizer:
            with lock:
                if id(tokenizer) in lent:
                    overlaps.append(id(tokenizer))
                lent.add(id(tokenizer))
            try:
                yield tokenizer
            finally:
                with lock:
                    lent.discard(id(tokenizer))

    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def caller(offset: int) -> None:
        try:
            start.wait()
            for round_ in range(6):
                order = inputs[offset:] + inputs[:offset]
                want = expected_spans[offset:] + expected_spans[:offset]
                assert MODEL.spans_many(order) == want
                assert MODEL.count_many(order) == expected_counts[offset:] + expected_counts[:offset]
                text = order[round_]
                assert MODEL.spans(text) == want[round_]
                assert MODEL.count(text) == len(want[round_])
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    with patch.object(MODEL._copies, "borrowed", contextmanager(watched)):
        threads = [threading.Thread(target=caller, args=(n * 3,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
    assert overlaps == []  # no copy of the Rust tokenizer was ever lent to two threads at once


def test_parts_are_consecutive_and_balanced_by_characters():
    texts = ["aaaa", "bb", "cc", "dddd"]
    assert parts(texts, 2) == [["aaaa", "bb"], ["cc", "dddd"]]
    assert parts(texts, 1) == [texts]
    assert parts(["x" * 100, "y"], 2) == [["x" * 100], ["y"]]
    assert parts(["only"], 2) == [["only"]]
    assert parts(["", "", ""], 2) == [[""], ["", ""]]


def test_in_parallel_keeps_order_raises_and_leaves_no_thread_behind():
    def fail():
        raise ValueError("task failed")

    before = threading.active_count()
    assert in_parallel([lambda: 1, lambda: 2, lambda: 3]) == [1, 2, 3]
    with pytest.raises(ValueError, match="task failed"):
        in_parallel([lambda: 1, fail])
    nested = in_parallel([lambda: in_parallel([threading.get_ident, threading.get_ident])] * 2)
    assert all(len(set(idents)) == 1 for idents in nested)  # a task's own tasks run on its thread
    assert threading.active_count() == before


def test_a_zero_width_token_is_left_out_of_the_columns():
    encodings = [
        SimpleNamespace(offsets=[(0, 3), (3, 3), (4, 6)]),
        SimpleNamespace(offsets=[]),
        SimpleNamespace(offsets=[(2, 2)]),
    ]
    assert _offset_columns(encodings) == [((0, 4), (3, 6)), ((), ()), ((), ())]


# -- the sentence splitter's kept sentence cuts ------------------------------------------------

PARAGRAPHS = (
    "Sentences are cut once. The cuts are kept for the text. A new chunk size reuses them. "
    "Nothing is segmented twice.\n\n\n"
    "A second paragraph follows. It has three sentences. The last one ends here."
)


@pytest.fixture
def kept_cuts():
    reuse_sentence_spans(True)
    reuse_token_indexes(True)
    yield
    reuse_sentence_spans(True)


def _split(chunk_size: int) -> list[tuple[int, int]]:
    splitter = get_splitter("sentence", chunk_size=chunk_size, chunk_overlap=2, tokenizer="words")
    return [(span.start, span.end) for span in splitter.spans(Document(text=PARAGRAPHS))]


def test_a_new_chunk_size_reuses_the_sentence_cuts_and_splits_as_a_fresh_split(kept_cuts):
    segmented = []
    real = segmentation.sentence_spans

    def counting(text):
        segmented.append(text)
        return real(text)

    with patch.object(segmentation, "sentence_spans", counting):
        at_12 = _split(12)
        first = len(segmented)
        at_9 = _split(9)
        assert first > 0 and len(segmented) == first  # the second split segmented nothing
        reuse_sentence_spans(False)  # and a fresh split (nothing kept) gives the same spans
        fresh_9 = _split(9)
        assert len(segmented) > first
    assert at_9 == fresh_9
    assert [PARAGRAPHS[a:b] for a, b in at_12] == [
        "Sentences are cut once. The cuts are kept for the text.",
        "A new chunk size reuses them. Nothing is segmented twice.",
        "A second paragraph follows. It has three sentences.",
        "The last one ends here.",
    ]
    assert [PARAGRAPHS[a:b] for a, b in at_9] == [
        "Sentences are cut once.",
        "The cuts are kept for the text.",
        "A new chunk size reuses them.",
        "Nothing is segmented twice.\n\n\nA second paragraph follows.",
        "It has three sentences. The last one ends here.",
    ]


@settings(max_examples=40, deadline=None)
@given(text=prose(), sizes=st.lists(st.integers(min_value=3, max_value=40), min_size=2, max_size=4))
def test_splits_kept_from_other_chunk_sizes_give_a_fresh_splits_spans(text, sizes):
    """The sentence splitter keeps how each piece split (it does not depend on the budget): reusing it at
    any later chunk_size gives what a split of a fresh document gives."""

    def spans(size: int) -> list[tuple[int, int]]:
        splitter = get_splitter("sentence", chunk_size=size, chunk_overlap=1, tokenizer="model")
        return [(span.start, span.end) for span in splitter.spans(Document(text=text))]

    reuse_sentence_spans(True)
    try:
        kept = [spans(size) for size in sizes]
        reuse_sentence_spans(False)
        fresh = [spans(size) for size in sizes]
    finally:
        reuse_sentence_spans(True)
    assert kept == fresh


def test_turning_reuse_off_forgets_the_kept_cuts(kept_cuts):
    _split(9)
    assert len(SENTENCE_SPANS) == 1
    reuse_sentence_spans(False)
    assert len(SENTENCE_SPANS) == 0
    _split(9)
    assert len(SENTENCE_SPANS) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_process_forked_while_every_copy_is_lent_can_still_tokenize():
    copies = len(MODEL._copies._copies)
    holding, release = threading.Barrier(copies + 1), threading.Event()

    def hold_a_copy():
        with MODEL._copies.borrowed():
            holding.wait()
            release.wait()

    holders = [threading.Thread(target=hold_a_copy) for _ in range(copies)]
    for holder in holders:
        holder.start()
    holding.wait()  # every copy is lent now
    try:
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child
            os._exit(0 if MODEL.count("Forked while lent.") == 5 else 1)
        deadline = time.monotonic() + 20
        while (done := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if done[0] == 0:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
        assert done[0] == child and os.waitstatus_to_exitcode(done[1]) == 0
    finally:
        release.set()
        for holder in holders:
            holder.join()
