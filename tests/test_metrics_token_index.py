"""Model-token counts from a document's token index equal tokenizing each node's text and views.

The metrics count a node cut between words from its document's tokens (one
tokenization per document) and a view as its metadata's tokens plus the text's;
anything else is tokenized. These tests hold the shortcut to the plain count.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.measure.metrics import chunk_metrics, chunk_report
from core.schema import Document, MetadataMode
from core.splitters.nodes import build_nodes
from core.tokens.tokenizers import get_tokenizer

MODEL = get_tokenizer("model")
# Words, punctuation, accents (composed and combining), control characters, CJK and runs of spaces.
PIECES = ["cat", "sleeps", "unbelievably", "e.g.", "(x)", "café", "cafe\u0301", "\x00", "中文", "—", "  ", "\n\n", ".", "http://a.b/c?d=1"]


def model_counts(document: Document, nodes):
    texts = [node.text for node in nodes]
    embed = [node.get_content(MetadataMode.EMBED) for node in nodes]
    return MODEL.count_many(texts), MODEL.count_many(embed)


def test_a_span_cut_inside_a_word_is_counted_on_its_own():
    # "unbelievably" is several word pieces; a node holding "believably" tokenizes differently from the
    # pieces of the whole word that fall inside it, so it must be counted by itself.
    document = Document(text="It is unbelievably good.", id="d", metadata={"file_name": "d.txt"})
    nodes = build_nodes(document, [(0, 8), (8, 24)])
    _, rows = chunk_report([document], nodes, tokenizer="model")
    assert [row["tokens"] for row in rows] == MODEL.count_many(["It is un", "believably good."])


def test_the_embed_view_is_the_metadata_tokens_plus_the_text_tokens():
    document = Document(text="Cats sleep. Dogs bark.", id="p", metadata={"file_name": "pets.txt", "topic": "animals"})
    nodes = build_nodes(document, [(0, 11), (12, 22)])
    metrics = chunk_metrics([document], nodes, tokenizer="model")
    texts, embed = model_counts(document, nodes)
    assert texts == [3, 3]  # cats sleep . / dogs bark .
    assert metrics.metadata_tokens["embed"] == sum(e - t for e, t in zip(embed, texts, strict=True)) / 2
    assert metrics.metadata_tokens["embed"] > 0


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.sampled_from(PIECES), min_size=1, max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    title=st.sampled_from(["", "A title.", "Title:", "x"]),
)
def test_counts_match_the_tokenizer_wherever_the_nodes_are_cut(words, cuts, title):
    text = " ".join(words)
    metadata = {"file_name": "t.txt", **({"title": title} if title else {})}
    document = Document(text=text, id="t", metadata=metadata)
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    nodes = build_nodes(document, [(a, b) for a, b in zip(points, points[1:], strict=False) if b > a])
    if not nodes:
        return
    _, rows = chunk_report([document], nodes, tokenizer="model", max_seq_length=8)
    texts, embed = model_counts(document, nodes)
    assert [row["tokens"] for row in rows] == texts
    assert ["over-window" in row["flags"] for row in rows] == [count > 6 for count in embed]


def test_a_span_cut_inside_words_at_both_ends_tokenizes_only_the_cut_words():
    from core.tokens.counts import _span_counts

    text = "It is unbelievably good and remarkably cheap."
    start, end = text.index("believably"), text.index("cheap") + 2  # "believably good and remarkably ch"
    document = Document(text=text, id="w", metadata={"file_name": "w.txt"})
    nodes = build_nodes(document, [(0, start), (start, end), (end, len(text))])
    found, cut_words = _span_counts(MODEL, [document], nodes, [node.text for node in nodes])
    assert cut_words == {0: ["un"], 1: ["believably", "ch"], 2: ["eap"]}
    inner = MODEL.count_many(["It is ", " good and remarkably ", "."])
    assert found == dict(enumerate(inner))
    _, rows = chunk_report([document], nodes, tokenizer="model")
    assert [row["tokens"] for row in rows] == MODEL.count_many([node.text for node in nodes])
