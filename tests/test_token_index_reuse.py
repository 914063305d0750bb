"""A text's token index is built once and reused by later splits (and the metrics) of the same text."""

from __future__ import annotations

import threading

import pytest

from core.measure import metrics
from core.runtime.memo import Memo
from core.schema import Document
from core.splitters import get_splitter
from core.splitters.sentence import SentenceSplitter
from core.tokens.counts import document_token_count
from core.tokens.token_index import TOKEN_INDEXES, TokenIndex, reuse_token_indexes
from core.tokens.tokenizers import get_tokenizer

TEXT = (
    "Chunks hold whole sentences. A sentence that does not fit is cut at clauses, then words. "
    "Overlap repeats trailing sentences.\n\n\nA new paragraph starts here. It is short."
)


class CountingTokenizer:
    """Whitespace words, counting how many characters reach the tokenizer."""

    name = "words"

    def __init__(self) -> None:
        self.inner = get_tokenizer("words")
        self.characters = 0

    def count(self, text: str) -> int:
        self.characters += len(text)
        return self.inner.count(text)

    def count_many(self, texts):
        self.characters += sum(map(len, texts))
        return self.inner.count_many(texts)

    def span_columns(self, texts):
        self.characters += sum(map(len, texts))
        return self.inner.span_columns(texts)


@pytest.fixture(autouse=True)
def _fresh_indexes():
    reuse_token_indexes(True)
    yield
    reuse_token_indexes(True)


def _spans(tokenizer, chunk_size: int) -> list[tuple[int, int]]:
    splitter = get_splitter("sentence", chunk_size=chunk_size, chunk_overlap=3, tokenizer="words", metadata_aware=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SentenceSplitter, "get_tokenizer", lambda self: tokenizer)
        return [(span.start, span.end) for span in splitter.spans(Document(text=TEXT))]


def test_two_splits_at_different_chunk_sizes_tokenize_the_text_once():
    tokenizer = CountingTokenizer()
    at_12 = _spans(tokenizer, 12)
    assert tokenizer.characters == len(TEXT)
    at_8 = _spans(tokenizer, 8)
    assert tokenizer.characters == len(TEXT)  # the second split read the kept index
    assert [TEXT[a:b] for a, b in at_12] == [
        "Chunks hold whole sentences.",
        "A sentence that does not fit is cut at clauses, then words.",
        "Overlap repeats trailing sentences.\n\n\nA new paragraph starts here. It is short.",
    ]
    assert [TEXT[a:b] for a, b in at_8] == [
        "Chunks hold whole sentences. A sentence that does",
        "sentence that does not fit is cut at",
        "is cut at clauses, then words.",
        "clauses, then words. Overlap repeats trailing sentences.",
        "A new paragraph starts here. It is short.",
    ]


def test_token_windows_read_the_shared_index_and_cut_as_one_pass_does():
    from core.splitters.token import TokenSplitter

    tokenizer = CountingTokenizer()
    document = Document(text=TEXT)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TokenSplitter, "get_tokenizer", lambda self: tokenizer)
        windows = {
            size: [(s.start, s.end) for s in get_splitter("token", chunk_size=size, chunk_overlap=2).spans(document)]
            for size in (9, 5)
        }
    assert tokenizer.characters == len(TEXT)  # one tokenizer pass for both chunk sizes
    words = [start for start, _ in get_tokenizer("words").spans(TEXT)]
    for size, spans in windows.items():
        # The plain rule: window i runs from token i*(size-2) to the start of token i*(size-2)+size, trimmed.
        expected = [
            (words[first] if first else 0, words[first + size] if first + size < len(words) else len(TEXT))
            for first in range(0, len(words), size - 2)
        ]
        expected = expected[: next(i for i, (_, end) in enumerate(expected) if end == len(TEXT)) + 1]
        assert [TEXT[a:b] for a, b in spans] == [TEXT[a:b].strip() for a, b in expected]


def test_reused_index_gives_the_spans_of_a_fresh_one():
    tokenizer = CountingTokenizer()
    reused = [_spans(tokenizer, size) for size in (30, 12, 8, 5, 12)]
    reuse_token_indexes(False)
    fresh = [_spans(CountingTokenizer(), size) for size in (30, 12, 8, 5, 12)]
    assert reused == fresh
    shared = TokenIndex.shared(tokenizer, TEXT)
    rebuilt = TokenIndex(get_tokenizer("words"), TEXT)
    assert (list(shared.starts), list(shared.ends)) == (list(rebuilt.starts), list(rebuilt.ends))


def test_with_reuse_off_every_split_tokenizes_the_text():
    reuse_token_indexes(False)
    tokenizer = CountingTokenizer()
    _spans(tokenizer, 12)
    _spans(tokenizer, 8)
    assert tokenizer.characters == 2 * len(TEXT)
    assert len(TOKEN_INDEXES) == 0


def test_a_different_text_or_tokenizer_gets_its_own_index():
    words, model = get_tokenizer("words"), get_tokenizer("model")
    assert TokenIndex.shared(words, TEXT) is TokenIndex.shared(words, TEXT)
    assert TokenIndex.shared(words, TEXT) is not TokenIndex.shared(model, TEXT)
    assert TokenIndex.shared(words, TEXT + " more").count(0, len(TEXT) + 5) == len((TEXT + " more").split())


def test_metrics_read_the_index_the_split_built(monkeypatch):
    built: list[str] = []
    original = TokenIndex.__init__

    def counting_init(self, tokenizer, text):
        if tokenizer.name == "model":
            built.append(text)
        original(self, tokenizer, text)

    monkeypatch.setattr(TokenIndex, "__init__", counting_init)
    document = Document(text=TEXT * 3)
    nodes = get_splitter("sentence", chunk_size=40, chunk_overlap=5).split([document])
    metrics.chunk_metrics([document], nodes)
    assert document_token_count(document.text) == get_tokenizer("model").count(document.text)
    assert built == [document.text]


def test_concurrent_splits_of_one_text_agree():
    text = TEXT * 50
    expected = [
        (n.start_char, n.end_char)
        for n in get_splitter("sentence", chunk_size=64, chunk_overlap=8).split([Document(text=text)])
    ]
    reuse_token_indexes(True)  # forget it: the threads race to build it
    results: list[list[tuple[int, int]]] = []

    def split(size: int) -> None:
        nodes = get_splitter("sentence", chunk_size=size, chunk_overlap=8).split([Document(text=text)])
        results.append([(n.start_char, n.end_char) for n in nodes])

    threads = [threading.Thread(target=split, args=(64,)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 6
    assert len(TOKEN_INDEXES) == 1


def test_memo_forgets_the_oldest_beyond_its_entries_or_budget():
    memo = Memo(budget=10, max_entries=2)
    memo.put("a", 1, 4)
    memo.put("b", 2, 4)
    memo.get("a")  # now the newest
    memo.put("c", 3, 1)  # third entry: the oldest ("b") goes
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (1, None, 3)
    memo.put("d", 4, 9)  # 14 units: the oldest ("a") goes, 10 are left
    assert (memo.get("a"), memo.get("c"), memo.get("d")) == (None, 3, 4)
    assert memo.put("huge", 5, 11) == 5 and memo.get("huge") is None and memo.get("d") == 4
    assert memo.put("d", 6, 1) == 4  # a held key keeps its first value
