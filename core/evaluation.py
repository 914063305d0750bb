"""Retrieval evaluation: how well a chunking configuration serves a set of sample queries.

A queries file is a JSON list of ``{"query", "doc", "excerpts"}``: ``doc`` is a
file name and each excerpt an exact substring of that document's text (the
reference answer). Every occurrence of an excerpt counts as reference text.

Per query, with the top-k retrieved nodes:

- **hit rate@k**: 1 if a retrieved node overlaps reference text, else 0;
- **MRR**: 1 / rank of the first such node (0 on a miss);
- **recall, precision, IoU** over character positions, as in Chroma's chunking
  evaluation (which measures character ranges too). With *R* the positions
  the retrieved nodes cover, *E* the reference positions and *L* the total
  length of the retrieved nodes (text repeated by overlapping nodes counts each
  time the context holds it, so overlap costs precision):
  recall = |R ∩ E| / |E|, precision = |R ∩ E| / L, IoU = |R ∩ E| / (L + |E \\ R|).

A configuration's numbers are the means over its queries.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError, LoadError
from core.retrieval import RetrievalMode, retrieve
from core.schema import Document, Node
from core.splitters import Splitter, get_splitter

if TYPE_CHECKING:
    from core.embeddings import Embedder

Span = tuple[int, int]
# (document id, start, end): a range of characters in one document.
DocSpan = tuple[str, int, int]


@dataclass(frozen=True)
class EvalQuery:
    query: str
    doc: str  # the file name of the document holding the answer
    excerpts: tuple[str, ...]


def load_queries(path: str | os.PathLike[str]) -> list[EvalQuery]:
    """Read a queries file; a malformed one raises LoadError naming the file and the entry."""
    name = os.path.basename(os.fspath(path))
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise LoadError(name, "file not found") from None
    except json.JSONDecodeError as exc:
        raise LoadError(name, f"is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return parse_queries(data, name)


def parse_queries(data: Any, source: str = "queries") -> list[EvalQuery]:
    if not isinstance(data, list) or not data:
        raise LoadError(source, "must hold a non-empty JSON list of queries")
    queries = []
    for number, entry in enumerate(data, start=1):
        where = f"query {number}"
        if not isinstance(entry, dict):
            raise LoadError(source, f"{where} is not an object")
        query, doc, excerpts = entry.get("query"), entry.get("doc"), entry.get("excerpts")
        if not isinstance(query, str) or not query.strip():
            raise LoadError(source, f"{where} has no query text")
        if not isinstance(doc, str) or not doc:
            raise LoadError(source, f"{where} names no doc (the file name holding the answer)")
        if not isinstance(excerpts, list) or not excerpts or not all(isinstance(e, str) and e for e in excerpts):
            raise LoadError(source, f"{where} needs a non-empty list of excerpt strings")
        queries.append(EvalQuery(query=query, doc=doc, excerpts=tuple(excerpts)))
    return queries


# -- the metrics on spans ---------------------------------------------------------


def occurrences(text: str, excerpt: str) -> list[Span]:
    """Every place ``excerpt`` occurs in ``text``, overlapping ones included (the excerpt is the reference)."""
    spans = []
    start = text.find(excerpt)
    while start != -1 and excerpt:
        spans.append((start, start + len(excerpt)))
        start = text.find(excerpt, start + 1)
    return spans


def merge_spans(spans: Sequence[DocSpan]) -> list[DocSpan]:
    """Sorted, disjoint ranges covering the same characters."""
    merged: list[DocSpan] = []
    for doc, start, end in sorted(s for s in spans if s[2] > s[1]):
        if merged and merged[-1][0] == doc and start <= merged[-1][2]:
            last = merged[-1]
            merged[-1] = (doc, last[1], max(last[2], end))
        else:
            merged.append((doc, start, end))
    return merged


def covered(spans: Sequence[DocSpan]) -> int:
    return sum(end - start for _, start, end in merge_spans(spans))


def intersection(a: Sequence[DocSpan], b: Sequence[DocSpan]) -> int:
    """Characters covered by both span lists."""
    total = 0
    for doc_a, start_a, end_a in merge_spans(a):
        for doc_b, start_b, end_b in merge_spans(b):
            if doc_a == doc_b:
                total += max(0, min(end_a, end_b) - max(start_a, start_b))
    return total


@dataclass(frozen=True)
class SpanScores:
    recall: float
    precision: float
    iou: float


def span_scores(retrieved: Sequence[DocSpan], reference: Sequence[DocSpan]) -> SpanScores:
    """Recall, precision and IoU of retrieved ranges against reference ranges (see the module docstring)."""
    shared = intersection(retrieved, reference)
    reference_size = covered(reference)
    retrieved_length = sum(max(0, end - start) for _, start, end in retrieved)
    unmatched_reference = reference_size - shared
    return SpanScores(
        recall=shared / reference_size if reference_size else 0.0,
        precision=shared / retrieved_length if retrieved_length else 0.0,
        iou=shared / (retrieved_length + unmatched_reference) if retrieved_length + unmatched_reference else 0.0,
    )


def rank_scores(relevant: Sequence[bool]) -> tuple[float, float]:
    """(hit, reciprocal rank) for the relevance of the retrieved nodes in rank order."""
    for rank, is_relevant in enumerate(relevant, start=1):
        if is_relevant:
            return 1.0, 1.0 / rank
    return 0.0, 0.0


# -- evaluating a configuration -------------------------------------------------


@dataclass
class QueryScore:
    query: str
    doc: str
    hit: float
    reciprocal_rank: float
    recall: float
    precision: float
    iou: float
    retrieved: list[str]  # node ids, best first
    first_relevant_rank: int | None


# The metrics of a row (Evaluation.to_row), in the order a reader compares them, with their names and meanings.
METRICS: dict[str, str] = {
    "hit_rate": "Hit rate@k",
    "mrr": "MRR",
    "recall": "Recall",
    "precision": "Precision",
    "iou": "IoU",
}
METRIC_HELP = {
    "hit_rate": "Share of queries with reference text in some retrieved chunk",
    "mrr": "Mean of 1 / rank of the first chunk holding reference text (0 on a miss)",
    "recall": "Share of the reference characters the retrieved chunks hold",
    "precision": "Share of the retrieved characters that are reference text (repeats count each time)",
    "iou": "Reference ∩ retrieved over their union (repeats count each time)",
}


@dataclass
class Evaluation:
    """One configuration's scores: per query and their means."""

    splitter: str
    params: dict[str, Any]
    top_k: int
    mode: str
    node_count: int
    per_query: list[QueryScore]
    skipped_queries: list[str] = field(default_factory=list)  # their doc was not loaded

    def mean(self, metric: str) -> float:
        values = [getattr(score, metric) for score in self.per_query]
        return sum(values) / len(values) if values else 0.0

    def to_row(self) -> dict[str, Any]:
        """A flat, JSON-ready row: the configuration and the mean of each metric."""
        row: dict[str, Any] = {"splitter": self.splitter}
        row.update(self.params)
        row.update(
            {
                "top_k": self.top_k,
                "mode": self.mode,
                "nodes": self.node_count,
                "queries": len(self.per_query),
                "hit_rate": self.mean("hit"),
                "mrr": self.mean("reciprocal_rank"),
                "recall": self.mean("recall"),
                "precision": self.mean("precision"),
                "iou": self.mean("iou"),
            }
        )
        return row


def reference_spans(documents: Sequence[Document], query: EvalQuery, number: int = 0) -> list[DocSpan]:
    """Where the query's excerpts occur in the documents loaded from its file."""
    sources = [doc for doc in documents if doc.metadata.get("file_name") == query.doc]
    spans: list[DocSpan] = []
    for excerpt in query.excerpts:
        found = [(doc.id, start, end) for doc in sources for start, end in occurrences(doc.text, excerpt)]
        if not found:
            label = f"query {number}" if number else repr(query.query)
            raise ConfigError(f"{label}: an excerpt does not occur in {query.doc}: {excerpt[:60]!r}")
        spans.extend(found)
    return spans


def evaluate(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    splitter: Splitter | str,
    params: Mapping[str, Any] | None = None,
    *,
    embedder: Embedder | None = None,
    top_k: int = 5,
    mode: RetrievalMode = "dense",
    alpha: float = 0.5,
    progress: Callable[[int, int], None] | None = None,
) -> Evaluation:
    """Split ``documents`` with one configuration and score retrieval for every query.

    Queries whose ``doc`` is not among ``documents`` are skipped (and listed).
    """
    if isinstance(splitter, str):
        splitter = get_splitter(splitter, **dict(params or {}))
    nodes = splitter.split(documents)
    loaded = {doc.metadata.get("file_name") for doc in documents}
    usable = [(n, q) for n, q in enumerate(queries, start=1) if q.doc in loaded]
    skipped = [q.query for q in queries if q.doc not in loaded]
    if not usable:
        names = ", ".join(sorted({q.doc for q in queries}))
        raise ConfigError(f"none of the queries' documents is loaded (they name: {names})")
    if mode != "bm25" and embedder is None:
        from core.embeddings import get_embedder

        embedder = get_embedder()
    node_embeddings = None
    if mode != "bm25" and nodes:
        from core.embeddings import embed_nodes

        node_embeddings = embed_nodes(nodes, embedder)
    per_query = []
    for done, (number, query) in enumerate(usable, start=1):
        reference = reference_spans(documents, query, number)
        results = (
            retrieve(
                nodes,
                query.query,
                embedder=embedder,
                top_k=top_k,
                mode=mode,
                alpha=alpha,
                node_embeddings=node_embeddings,
            )
            if nodes
            else []
        )
        per_query.append(score_query(query, [item.node for item in results], reference))
        if progress is not None:
            progress(done, len(usable))
    return Evaluation(
        splitter=splitter.name,
        params=_shown_params(splitter),
        top_k=top_k,
        mode=mode,
        node_count=len(nodes),
        per_query=per_query,
        skipped_queries=skipped,
    )


def _shown_params(splitter: Splitter) -> dict[str, Any]:
    """The sizes (always: they are what a reader compares) and every other parameter set away from its default."""
    every = splitter.to_params()
    shown = {key: every[key] for key in ("chunk_size", "chunk_overlap") if key in every}
    shown.update(splitter.to_params(only_changed=True))
    return shown


def score_query(query: EvalQuery, retrieved: Sequence[Node], reference: Sequence[DocSpan]) -> QueryScore:
    """One query's scores, from the retrieved nodes' spans (best first) and the reference spans."""
    spans = [(node.doc_id, node.start_char, node.end_char) for node in retrieved]
    relevant = [intersection([span], reference) > 0 for span in spans]
    hit, reciprocal_rank = rank_scores(relevant)
    scores = span_scores(spans, reference)
    return QueryScore(
        query=query.query,
        doc=query.doc,
        hit=hit,
        reciprocal_rank=reciprocal_rank,
        recall=scores.recall,
        precision=scores.precision,
        iou=scores.iou,
        retrieved=[node.id for node in retrieved],
        first_relevant_rank=relevant.index(True) + 1 if any(relevant) else None,
    )
