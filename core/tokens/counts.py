"""Token counts of chunk texts and their views, read from a per-document token index where that is exact.

The metrics count every node's text and its LLM and EMBED views after each
parameter change. Tokenizing each new chunk again is the slow way; for the
model tokenizer (a BERT normalizer and pre-tokenizer, which always split at
ASCII whitespace and punctuation) a span cut at such word breaks has exactly
the tokens of the whole document that lie inside it. So the document is
tokenized once (:class:`core.tokens.token_index.TokenIndex`, kept per
document) and such a span's count is two binary searches. Everything else is
tokenized as before, and memoized.

The numbers equal plain ``count(text)`` either way: the measurement that
justifies this path is in ``benchmarks/RESULTS.md`` (new value: model tokens of
every new chunk), and ``tests/test_metrics_token_index.py`` keeps the two equal.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.runtime.memo import Memo
from core.schema import Document, Node
from core.tokens.char_index import WORD_BREAKS, CharIndex, exact_spans
from core.tokens.tokenizers import Tokenizer, get_tokenizer

# Counts keyed by (tokenizer, string): about 8 million characters of chunk texts and views.
_COUNTS = Memo(8_000_000)


def _count_once(counter: Tokenizer, texts: Sequence[str]) -> dict[str, int]:
    unique = list(dict.fromkeys(texts))
    if counter.name == "characters":  # cheaper to count than to look up
        return dict(zip(unique, counter.count_many(unique), strict=True))
    known = _COUNTS.get_many([(counter, text) for text in unique])
    missing = [text for text, count in zip(unique, known, strict=True) if count is None]
    fresh = dict(zip(missing, counter.count_many(missing), strict=True)) if missing else {}
    for text, count in fresh.items():
        _COUNTS.put((counter, text), count, max(len(text), 1))
    return {text: count if count is not None else fresh[text] for text, count in zip(unique, known, strict=True)}


def count_node_strings(
    counter: Tokenizer,
    documents: Sequence[Document],
    nodes: Sequence[Node],
    texts: Sequence[str],
    views: Sequence[Sequence[tuple[str | None, str | None]]],
    *,
    exact: dict[str, tuple[list[int], np.ndarray, np.ndarray]] | None = None,
) -> tuple[list[int], list[list[int]]]:
    """The token counts of every node's text, and of each of its views (``views[k][i]`` is node i's k-th
    view, as :func:`~core.schema.view_parts` gives it; the counts come back in the same shape).

    A node that is its span of the document is counted from the document's token
    index (one tokenization per document, kept): between word breaks by two binary
    searches, and a word cut at either end (token windows end inside words) by
    tokenizing only that part of a word. A view that is some metadata followed by
    the node's text, meeting at a word break, is that metadata's count plus the
    text's. Everything else is tokenized (and memoized). The numbers are the same
    either way; the index only saves re-tokenizing each new chunk after a
    parameter change.
    """
    from_index, cut_words = _span_counts(counter, documents, nodes, texts, exact)
    if cut_words:
        counted_words = _count_once(counter, [word for words in cut_words.values() for word in words])
        for i, words in cut_words.items():
            from_index[i] += sum(counted_words[word] for word in words)
    own = [from_index.get(i) for i in range(len(texts))]
    to_count = [text for text, count in zip(texts, own, strict=True) if count is None]
    plans = [_view_plan(texts, each, own, to_count) for each in views]
    counted = _count_once(counter, to_count)
    text_counts = [counted[text] if count is None else count for text, count in zip(texts, own, strict=True)]
    view_counts = [
        [
            mine if step is None else counted[step[1]] + mine if step[0] else counted[step[1]]
            for step, mine in zip(plan, text_counts, strict=True)
        ]
        for plan in plans
    ]
    return text_counts, view_counts


def _view_plan(
    texts: Sequence[str],
    views: Sequence[tuple[str | None, str | None]],
    own: Sequence[int | None],
    to_count: list[str],
) -> list[tuple[bool, str] | None]:
    """How each node's view (as :func:`~core.schema.view_parts` gives it: ``(prefix, None)`` for ``prefix + text``,
    ``(None, view)``) is counted: None (the view is the text), (True, prefix) (the prefix's count plus the text's,
    where they meet at a word break) or (False, view) (the view tokenized whole); what must be tokenized is added to
    ``to_count``. A whole view that ends with the text has the rest as its prefix."""
    plan: list[tuple[bool, str] | None] = []
    for text, (prefix, view), count in zip(texts, views, own, strict=True):
        if view is not None and (view is text or view == text):
            plan.append(None)
            continue
        if prefix is None and count is not None and text and view.endswith(text):
            prefix = view[: len(view) - len(text)]
        if prefix and count is not None and text and (prefix[-1] in WORD_BREAKS or text[0] in WORD_BREAKS):
            plan.append((True, prefix))
        else:
            plan.append((False, prefix + text if view is None else view))
        to_count.append(plan[-1][1])
    return plan


def _splits_at_word_breaks(counter: Tokenizer) -> bool:
    """Does ``counter`` tokenize each word on its own (a BERT normalizer and pre-tokenizer)?

    Then a span starting and ending at word breaks has exactly the tokens of
    the whole text that lie inside it.
    """
    inner = getattr(counter, "_tokenizer", None)  # ModelTokenizer's tokenizers.Tokenizer
    if counter.name != "model" or inner is None:
        return False
    return (
        type(inner.pre_tokenizer).__name__ == "BertPreTokenizer" and type(inner.normalizer).__name__ == "BertNormalizer"
    )


def _span_counts(
    counter: Tokenizer,
    documents: Sequence[Document],
    nodes: Sequence[Node],
    texts: Sequence[str],
    exact: dict[str, tuple[list[int], np.ndarray, np.ndarray]] | None = None,
) -> tuple[dict[int, int], dict[int, list[str]]]:
    """For the nodes whose text is their span of the document (``exact``, found when not given): node
    position -> the count of its tokens between word breaks, from the index, and position -> the cut
    words at its ends still to be counted.

    A span from ``s`` to ``e`` cut inside words holds a cut word ``[s, p)``, whole words
    ``[p, q)`` and a cut word ``[q, e)``, with ``p`` and ``q`` word breaks; the
    tokenizer splits there in the span's text as in the document's, so its count is
    the index's tokens inside ``[p, q)`` plus the two cut words' own counts.
    """
    if not _splits_at_word_breaks(counter):
        return {}, {}
    if exact is None:
        exact = exact_spans(documents, nodes, texts)
    by_id = {document.id: document for document in documents}
    found: dict[int, int] = {}
    cut_words: dict[int, list[str]] = {}
    for doc_id, (positions, span_starts, span_ends) in exact.items():
        full = by_id[doc_id].text
        chars = CharIndex.of(full)
        start_cut, end_cut = ~chars.at_break(span_starts), ~chars.at_break(span_ends)
        cut = start_cut | end_cut
        inner_starts, inner_ends = span_starts, span_ends
        if cut.any():
            # A span's whole words lie between the first break character at or after its start and the one
            # after the last break character before its end (none: past the end, and before the start).
            breaks = chars.breaks
            first = np.searchsorted(breaks, span_starts, "left")
            last = np.searchsorted(breaks, span_ends, "left") - 1
            after_start = np.append(breaks, len(full))[first]
            before_end = breaks[np.maximum(last, 0)] + 1 if len(breaks) else np.full(len(positions), -1)
            before_end = np.where(last >= 0, before_end, -1)
            inner_starts = np.where(start_cut, after_start, span_starts)
            inner_ends = np.where(end_cut, before_end, span_ends)
        starts, ends = _token_index(counter, full)
        # Tokens are in order: those ending by a span's start are a prefix of those starting before its end.
        inside = np.searchsorted(starts, inner_ends, "left") - np.searchsorted(ends, inner_starts, "right")
        counts = np.maximum(inside, 0).tolist()
        if not cut.any():
            found.update(zip(positions, counts, strict=True))
            continue
        for k in np.flatnonzero(~cut).tolist():
            found[positions[k]] = counts[k]
        for k in np.flatnonzero(cut).tolist():
            s, p, q, e = int(span_starts[k]), int(inner_starts[k]), int(inner_ends[k]), int(span_ends[k])
            if s <= p < q <= e:  # else no whole word inside (one cut word, or none): tokenized whole
                found[positions[k]] = counts[k]
                cut_words[positions[k]] = [word for word in (full[s:p], full[q:e]) if word]
    return found, cut_words


def document_token_count(text: str, tokenizer: str = "model") -> int:
    """How many ``tokenizer`` tokens a whole document's text has.

    For the model tokenizer this is read from the token index the metrics keep
    per document, so showing a document's size costs no extra tokenization
    when its nodes are measured too (the numbers equal ``count(text)``).
    """
    counter = get_tokenizer(tokenizer)
    if not _splits_at_word_breaks(counter):
        return counter.count(text)
    starts, _ = _token_index(counter, text)
    return len(starts)


def _token_index(counter: Tokenizer, text: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of every token of ``text``: the splitters' shared index, as numpy views."""
    from core.tokens.token_index import TokenIndex

    return TokenIndex.shared(counter, text).columns()
