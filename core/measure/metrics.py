"""Chunk metrics: how a set of nodes covers its documents, and what looks wrong with each node.

Everything is computed from spans and batched token counts, so a run of a few
thousand nodes is measured in well under a second (the model tokenizer is the
fast Rust one; the embedding model itself is never loaded).

Terms used below:

- *coverage*: the share of a document's non-whitespace characters inside at least one node;
- *overlap*: characters inside two or more nodes, as a share of the characters inside any node;
- *mid-sentence*: a node whose end (ignoring trailing whitespace) is not where a
  sentence of :func:`core.tokens.segmentation.sentence_spans` ends;
- *over-window*: a node whose EMBED view has more model tokens than the
  embedding model reads (``max_seq_length`` minus the two special tokens).

A hierarchical run is summed up by its leaves, the nodes that are embedded and searched (levels nest, so all
levels together would overlap by design and mix their sizes); its parents are counted (``parents``) and keep their
rows in the node table.

The rules that turn these numbers into lint flags (and the warnings about a
splitter's settings) are in :mod:`core.measure.lint`; token counting, with its fast
per-document index, is in :mod:`core.tokens.counts`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import numpy as np

from core.measure.coverage import coverage_of, mid_sentence
from core.measure.lint import node_flags
from core.measure.window import DEFAULT_MAX_SEQ_LENGTH, SPECIAL_TOKENS
from core.schema import Document, MetadataMode, Node, NodeRelationship, page_range_label, view_parts
from core.tokens.char_index import CharIndex, exact_spans
from core.tokens.counts import count_node_strings
from core.tokens.tokenizers import SizeFn, get_tokenizer

FIRST_WORDS = 8


@dataclass(frozen=True)
class SizeStats:
    """A size distribution: min, mean, median, 95th percentile, max and standard deviation."""

    min: float
    mean: float
    p50: float
    p95: float
    max: float
    sd: float

    @classmethod
    def of(cls, values: Sequence[float]) -> SizeStats:
        if len(values) == 0:
            return cls(0, 0, 0, 0, 0, 0)
        array = np.asarray(values, dtype=float)
        ordered = np.sort(array).tolist()
        return cls(
            min=ordered[0],
            mean=float(array.mean()),
            p50=_percentile(ordered, 50 / 100),
            p95=_percentile(ordered, 95 / 100),
            max=ordered[-1],
            sd=float(array.std()),
        )


def _percentile(ordered: list[float], q: float) -> float:
    """``numpy.percentile(values, 100 * q)`` of sorted floats, by numpy's own arithmetic (its default, "linear").

    The same float operations in the same order (numpy's ``_quantile`` and ``_lerp``), so the same
    bits (tests/test_batch_arrow.py compares them), at a tenth of the time: np.percentile costs ~90 µs a
    call, and its first call imports numpy.ma (20 ms, in every batch worker).
    """
    top = len(ordered) - 1
    position = top * q
    if position >= top:
        return ordered[-1]
    low = math.floor(position)
    below, above = ordered[low], ordered[low + 1]
    weight = position - low
    step = above - below
    return above - step * (1 - weight) if weight >= 0.5 else below + step * weight


@dataclass(frozen=True)
class ChunkMetrics:
    """The summary of one chunking run (shares are fractions in [0, 1])."""

    count: int  # of a hierarchy: its leaves
    tokenizer: str | SizeFn
    characters: SizeStats
    tokens: SizeStats
    coverage: float  # over all documents' non-whitespace characters
    coverage_by_document: dict[str, float]
    overlap: float
    mid_sentence: float
    window_tokens: int  # the EMBED view's token budget: max_seq_length minus special tokens
    over_window: float  # share of the embedded nodes (a hierarchy's leaves; its parents are never embedded)
    size_limit: int | None
    over_limit: float  # share above size_limit (0 without one)
    duplicates: int  # nodes whose text repeats an earlier node's
    metadata_tokens: dict[str, float]  # mean tokens the metadata adds, per view ("llm", "embed")
    metadata_tokens_max: dict[str, int]
    parents: int = 0  # a hierarchy's nodes with children: left out of every number above

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Facts:
    """Per-node measurements shared by the metrics, the flags and the node table."""

    characters: list[int]
    tokens: list[int]
    embed_tokens: list[int]  # model tokens of the EMBED view
    metadata_tokens: dict[str, list[int]]
    mid_sentence: list[bool]
    duplicate: list[bool]
    words: list[int]
    window_tokens: int
    size_limit: int | None
    tokenizer: str | SizeFn

    def flags(self, index: int) -> list[str]:
        return node_flags(
            mid_sentence=self.mid_sentence[index],
            embed_tokens=self.embed_tokens[index],
            window_tokens=self.window_tokens,
            tokens=self.tokens[index],
            size_limit=self.size_limit,
            words=self.words[index],
            duplicate=self.duplicate[index],
        )


def chunk_metrics(
    documents: Sequence[Document],
    nodes: Sequence[Node],
    *,
    size_limit: int | None = None,
    tokenizer: str | SizeFn = "model",
    max_seq_length: int | None = None,
) -> ChunkMetrics:
    """Measure ``nodes`` cut from ``documents``.

    Sizes are counted with ``tokenizer`` (characters, words, model or a size function), and
    ``size_limit`` is in the same units (pass the splitter's ``size_limit`` and
    ``size_unit``). The window check always counts model tokens of the EMBED view.
    """
    facts = _measure(documents, nodes, size_limit, tokenizer, max_seq_length)
    return _summary(documents, nodes, facts)


def chunk_report(
    documents: Sequence[Document],
    nodes: Sequence[Node],
    *,
    size_limit: int | None = None,
    tokenizer: str | SizeFn = "model",
    max_seq_length: int | None = None,
) -> tuple[ChunkMetrics, list[dict[str, Any]]]:
    """``chunk_metrics`` and the node table's rows (one per node) from one measurement.

    A page that shows both (the Chunks page does) measures every node's text and
    views once instead of twice.
    """
    metrics, rows = chunk_report_deferred(
        documents, nodes, size_limit=size_limit, tokenizer=tokenizer, max_seq_length=max_seq_length
    )
    return metrics, rows()


def chunk_report_deferred(
    documents: Sequence[Document],
    nodes: Sequence[Node],
    *,
    size_limit: int | None = None,
    tokenizer: str | SizeFn = "model",
    max_seq_length: int | None = None,
) -> tuple[ChunkMetrics, Callable[[], list[dict[str, Any]]]]:
    """:func:`chunk_report` with the rows built on the first call of the second value (then kept).

    The Chunks page shows the metrics on every rerun and the rows only in its
    node table and size tabs: building a row per node was ~15 ms of a new
    chunk_size's ~3,400 nodes before the metrics could show.
    """
    documents, nodes = list(documents), list(nodes)
    facts = _measure(documents, nodes, size_limit, tokenizer, max_seq_length)
    return _summary(documents, nodes, facts), cache(lambda: _rows(documents, nodes, facts))


def chunk_columns(
    documents: Sequence[Document],
    nodes: Sequence[Node],
    *,
    size_limit: int | None = None,
    tokenizer: str | SizeFn = "model",
    max_seq_length: int | None = None,
    views: tuple[Sequence[str], Sequence[str]] | None = None,
) -> tuple[ChunkMetrics, dict[str, list[Any]]]:
    """``chunk_metrics`` and the per-node numbers a dataset stores, as columns, from one measurement.

    Columns: ``characters``, ``tokens`` (in ``tokenizer``), ``embed_tokens`` (model tokens of the
    EMBED view) and ``flags`` (the lint flags). The numbers are the node table's and the flags its
    rows' (``chunk_report``); the model tokens are the ones the window check counted, not a second count.
    ``views``: the nodes' EMBED and LLM views (``contents``), when the caller has made them already.
    """
    documents, nodes = list(documents), list(nodes)
    facts = _measure(documents, nodes, size_limit, tokenizer, max_seq_length, views)
    columns = {
        "characters": facts.characters,
        "tokens": facts.tokens,
        "embed_tokens": facts.embed_tokens,
        "flags": [facts.flags(index) for index in range(len(nodes))],
    }
    return _summary(documents, nodes, facts), columns


def _summary(documents: Sequence[Document], nodes: Sequence[Node], facts: _Facts) -> ChunkMetrics:
    # The embedded nodes: every node but a hierarchy's parents (those with children).
    embedded = [i for i, node in enumerate(nodes) if not node.relationships.get(NodeRelationship.CHILD)]
    count = len(embedded)
    coverage_by_document, coverage, overlap = coverage_of(documents, [nodes[i] for i in embedded])

    def of(values: Sequence[Any]) -> list[Any]:
        return [values[i] for i in embedded]

    def share(flags: Sequence[bool]) -> float:
        return sum(flags) / count if count else 0.0

    tokens = of(facts.tokens)
    metadata_tokens = {view: of(extra) for view, extra in facts.metadata_tokens.items()}
    return ChunkMetrics(
        count=count,
        tokenizer=facts.tokenizer,
        characters=SizeStats.of(of(facts.characters)),
        tokens=SizeStats.of(tokens),
        coverage=coverage,
        coverage_by_document=coverage_by_document,
        overlap=overlap,
        mid_sentence=share(of(facts.mid_sentence)),
        window_tokens=facts.window_tokens,
        over_window=share([n > facts.window_tokens for n in of(facts.embed_tokens)]),
        size_limit=facts.size_limit,
        over_limit=share([n > facts.size_limit for n in tokens]) if facts.size_limit is not None else 0.0,
        duplicates=sum(of(facts.duplicate)),
        metadata_tokens={view: float(np.mean(extra)) if extra else 0.0 for view, extra in metadata_tokens.items()},
        metadata_tokens_max={view: max(extra, default=0) for view, extra in metadata_tokens.items()},
        parents=len(nodes) - count,
    )


def _rows(documents: Sequence[Document], nodes: Sequence[Node], facts: _Facts) -> list[dict[str, Any]]:
    """One row per node for the app's node table."""
    by_id = {document.id: document for document in documents}
    rows = []
    for index, node in enumerate(nodes):
        document = by_id.get(node.doc_id)
        pages = document.pages_for_span(node.start_char, node.end_char) if document is not None else []
        words = node.text.split(None, FIRST_WORDS)
        first_words = " ".join(words[:FIRST_WORDS]) + (" …" if len(words) > FIRST_WORDS else "")
        rows.append(
            {
                "id": node.id,
                "doc_id": node.doc_id,
                "span": f"{node.start_char}–{node.end_char}",
                "start_char": node.start_char,
                "end_char": node.end_char,
                "characters": facts.characters[index],
                "tokens": facts.tokens[index],
                "pages": page_range_label(pages),
                "header_path": str(node.metadata.get("header_path", "")),
                "first_words": first_words,
                "flags": facts.flags(index),
            }
        )
    return rows


def _measure(
    documents: Sequence[Document],
    nodes: Sequence[Node],
    size_limit: int | None,
    tokenizer: str | SizeFn,
    max_seq_length: int | None,
    views: tuple[Sequence[str], Sequence[str]] | None = None,
) -> _Facts:
    counter = get_tokenizer(tokenizer)
    model = get_tokenizer("model")
    texts = [node.text for node in nodes]
    same_views = all(n.excluded_llm_metadata_keys == n.excluded_embed_metadata_keys for n in nodes)
    # Each view as view_parts gives it: a view that is some metadata and the text is not joined, only counted.
    if views is None:
        embed_views = view_parts(nodes, MetadataMode.EMBED)
        llm_views = embed_views if same_views else view_parts(nodes, MetadataMode.LLM)
    else:
        embed_views, llm_views = ([(None, view) for view in each] for each in views)
    exact = exact_spans(documents, nodes, texts)
    # Views often equal each other (no exclusions) or the text (no metadata): count each string once.
    views = (embed_views,) if same_views else (embed_views, llm_views)
    tokens, view_tokens = count_node_strings(counter, documents, nodes, texts, views, exact=exact)
    embed_tokens = view_tokens[0]
    llm_tokens = embed_tokens if same_views else view_tokens[1]
    if counter is model:
        embed_model_tokens = embed_tokens
    else:
        embed_model_tokens = count_node_strings(model, documents, nodes, texts, (embed_views,), exact=exact)[1][0]
    seen: set[str] = set()
    duplicate = []
    for text in texts:
        duplicate.append(text in seen)
        seen.add(text)
    return _Facts(
        characters=[len(text) for text in texts],
        tokens=tokens,
        embed_tokens=embed_model_tokens,
        metadata_tokens={
            "llm": [view - own for view, own in zip(llm_tokens, tokens, strict=True)],
            "embed": [view - own for view, own in zip(embed_tokens, tokens, strict=True)],
        },
        mid_sentence=mid_sentence(documents, nodes),
        duplicate=duplicate,
        words=_words(documents, texts, exact),
        window_tokens=(max_seq_length or DEFAULT_MAX_SEQ_LENGTH) - SPECIAL_TOKENS,
        size_limit=size_limit,
        tokenizer=tokenizer,
    )


def _words(
    documents: Sequence[Document], texts: Sequence[str], exact: dict[str, tuple[list[int], np.ndarray, np.ndarray]]
) -> list[int]:
    """``len(text.split())`` of each text: from the document's index for a node that is its span."""
    words: list[int | None] = [None] * len(texts)
    by_id = {document.id: document for document in documents}
    for doc_id, (positions, starts, ends) in exact.items():
        counted = CharIndex.of(by_id[doc_id].text).words(starts, ends).tolist()
        for i, count in zip(positions, counted, strict=True):
            words[i] = count
    # str.split() cuts at the same whitespace runs as \S+ matches, several times faster.
    return [count if count is not None else len(text.split()) for count, text in zip(words, texts, strict=True)]


# Sentence ends keyed by a document's text, sorted: the last few documents measured.
