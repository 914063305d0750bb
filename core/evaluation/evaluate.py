"""Retrieval evaluation: how well a chunking configuration serves a set of sample queries.

The queries come from a queries file (:mod:`core.evaluation.queries`); each excerpt is found in its
document exactly, else whitespace-insensitively, else without its markup (:mod:`core.evaluation.excerpts`).
Every occurrence of an excerpt counts as reference text.

Per query, with the top-k retrieved nodes (from every loaded document, or with
``scope="document"`` only from the query's own):

- **hit rate@k**: 1 if a retrieved node overlaps reference text, else 0; the
  **hit curve** is the hit rate at every k from 1 to top_k;
- **MRR**: 1 / rank of the first such node (0 on a miss);
- **recall, precision, IoU** over character positions, as in Chroma's chunking
  evaluation (which measures character ranges too). With *R* the positions
  the retrieved nodes cover, *E* the reference positions and *L* the total
  length of the retrieved nodes (text repeated by overlapping nodes counts each
  time the context holds it, so overlap costs precision):
  recall = |R ∩ E| / |E|, precision = |R ∩ E| / L, IoU = |R ∩ E| / (L + |E \\ R|).

A configuration's numbers are the means over its queries (and, per document,
over that document's queries). The span arithmetic is :mod:`core.evaluation.span_metrics`;
the run's progress, scoped retrieval and window check are :mod:`core.evaluation.runner`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from core.config_parts import DEFAULT_METADATA, DEFAULT_RETRIEVAL, MetadataSettings, RetrievalSettings
from core.errors import ConfigError
from core.evaluation.excerpts import ExcerptFinder, occurrences
from core.evaluation.queries import EvalQuery
from core.evaluation.runner import (
    SCOPES,
    Report,
    RunPhases,
    Scope,
    ScopedRetriever,
    mean_context_tokens,
    over_window,
    split_with_progress,
)
from core.evaluation.span_metrics import (
    DocSpan,
    SpanScores,
    covered,
    hit_curve,
    intersection,
    merge_spans,
    rank_scores,
    span_scores,
)
from core.extractors.llm import llm_extractors
from core.schema import Document, Node
from core.splitters import Splitter, get_splitter

if TYPE_CHECKING:
    from core.config import PipelineConfig
    from core.embed.embedder import Embedder

# Names kept here for the callers that import them from this module.
__all__ = [
    "METRICS",
    "SCOPES",
    "DocSpan",
    "Evaluation",
    "QueryScore",
    "SpanScores",
    "covered",
    "evaluate",
    "intersection",
    "merge_spans",
    "occurrences",
    "rank_scores",
    "reference_spans",
    "score_query",
    "span_scores",
]


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
# What a row says of a run of LLM extractors (as llm_<name>): requests sent (each retry counts; 0 when every reply
# came from the cache), replies from the cache, and the prompt and completion tokens the endpoint counted.
LLM_COLUMNS = ("requests", "cached", "prompt_tokens", "completion_tokens")
# Which QueryScore field each metric of a row is the mean of.
_FIELDS = {"hit_rate": "hit", "mrr": "reciprocal_rank", "recall": "recall", "precision": "precision", "iou": "iou"}


@dataclass
class Evaluation:
    """One configuration's scores: per query and their means."""

    splitter: str
    params: dict[str, Any]
    top_k: int
    mode: str
    node_count: int  # the chunks retrieval searched (a hierarchy searched by its leaves: the leaves)
    per_query: list[QueryScore]
    skipped_queries: list[str] = field(default_factory=list)  # their doc was not loaded
    scope: str = "corpus"
    # Chunks whose EMBED view is longer than the model reads (their vectors are of a truncated text); None: nothing embedded.
    over_window: int | None = None
    window_tokens: int | None = None
    # Per query, the model tokens of the retrieved chunks' LLM views (what the LLM is sent), as the tuner counts
    # them; None: not measured (evaluate's context_tokens).
    context_tokens: float | None = None
    # What the configuration's LLM extractors sent and spent (LLM_COLUMNS); None: it has none.
    llm: dict[str, int] | None = None

    def mean(self, metric: str) -> float:
        values = [getattr(score, metric) for score in self.per_query]
        return sum(values) / len(values) if values else 0.0

    def hit_curve(self) -> list[float]:
        """Hit rate at k = 1 … top_k (the last is the hit rate)."""
        return hit_curve([score.first_relevant_rank for score in self.per_query], self.top_k)

    def per_document(self) -> list[dict[str, Any]]:
        """One row per document the queries are about: its query count and the means of its queries' metrics."""
        by_doc: dict[str, list[QueryScore]] = {}
        for score in self.per_query:
            by_doc.setdefault(score.doc, []).append(score)
        rows = []
        for doc, scores in sorted(by_doc.items()):
            row: dict[str, Any] = {"doc": doc, "queries": len(scores)}
            row.update(
                {metric: sum(getattr(s, name) for s in scores) / len(scores) for metric, name in _FIELDS.items()}
            )
            rows.append(row)
        return rows

    @property
    def warnings(self) -> list[str]:
        if not self.over_window:
            return []
        return [
            f"{self.over_window:,} of {self.node_count:,} chunks are longer than the embedding model's window "
            f"({self.window_tokens} tokens): they were embedded truncated"
        ]

    def to_row(self) -> dict[str, Any]:
        """A flat, JSON-ready row: the configuration, the mean of each metric, the hit@1..k curve, the window count."""
        row: dict[str, Any] = {"splitter": self.splitter}
        row.update(self.params)
        row.update({"top_k": self.top_k, "mode": self.mode, "scope": self.scope, "nodes": self.node_count})
        row["queries"] = len(self.per_query)
        row.update({metric: self.mean(name) for metric, name in _FIELDS.items()})
        row["hit_curve"] = self.hit_curve()
        row["over_window"] = self.over_window
        if self.context_tokens is not None:
            row["context_tokens"] = self.context_tokens
        if self.llm is not None:
            row.update({f"llm_{name}": self.llm.get(name, 0) for name in LLM_COLUMNS})
        return row


def reference_spans(
    documents: Sequence[Document],
    query: EvalQuery,
    number: int = 0,
    finders: dict[str, ExcerptFinder] | None = None,
) -> list[DocSpan]:
    """Where the query's excerpts lie in the documents loaded from its file (found as :mod:`core.evaluation.excerpts` says).

    ``finders`` (by document id) keeps each document's whitespace-free form across queries.
    """
    finders = {} if finders is None else finders
    sources = [doc for doc in documents if doc.metadata.get("file_name") == query.doc]
    spans: list[DocSpan] = []
    for excerpt in query.excerpts:
        found = []
        for doc in sources:
            finder = finders.setdefault(doc.id, ExcerptFinder(doc.text))
            found.extend((doc.id, start, end) for start, end in finder.find(excerpt))
        if not found:
            label = f"query {number}" if number else repr(query.query)
            raise ConfigError(f"{label}: an excerpt does not occur in {query.doc}: {excerpt[:60]!r}")
        spans.extend(found)
    return spans


def references(
    documents: Sequence[Document], queries: Sequence[EvalQuery]
) -> tuple[list[tuple[EvalQuery, list[DocSpan]]], list[str]]:
    """(query, its reference spans) for each query whose document is loaded, and the texts of the others.

    Raises ConfigError when no query's document is loaded or an excerpt is not found (naming the query).
    """
    loaded = {doc.metadata.get("file_name") for doc in documents}
    if not any(query.doc in loaded for query in queries):
        names = ", ".join(sorted({q.doc for q in queries}))
        raise ConfigError(f"none of the queries' documents is loaded (they name: {names})")
    finders: dict[str, ExcerptFinder] = {}
    usable = [
        (query, reference_spans(documents, query, number, finders))
        for number, query in enumerate(queries, start=1)
        if query.doc in loaded
    ]
    return usable, [query.query for query in queries if query.doc not in loaded]


def check_scope(scope: str) -> None:
    """Raise ConfigError for a scope no evaluation knows, before anything is split or embedded (the retrieval
    settings were checked when they were made)."""
    if scope not in SCOPES:
        raise ConfigError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")


def evaluate(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    splitter: Splitter | str,
    params: Mapping[str, Any] | None = None,
    *,
    embedder: Embedder | None = None,
    retrieval: RetrievalSettings = DEFAULT_RETRIEVAL,
    scope: Scope = "corpus",
    progress: Callable[[int, int], None] | None = None,
    report: Report | None = None,
    metadata: MetadataSettings = DEFAULT_METADATA,
    pipeline: PipelineConfig | None = None,
    bounded: bool = False,
    context_tokens: bool = False,
) -> Evaluation:
    """Split ``documents`` with one configuration and score retrieval for every query.

    Queries whose ``doc`` is not among ``documents`` are skipped (and listed).
    With ``scope="document"`` a query retrieves only among the chunks of its own
    document. Every setting and every excerpt is checked before anything is
    embedded. ``report(fraction, text)`` follows the whole run (splitting,
    embedding, scoring); ``progress(done, total)`` counts scored queries. ``documents`` come with the
    metadata settings applied (:func:`core.documents.prepare_documents`); ``metadata``'s steps after the split
    (:func:`core.documents.finish_nodes`: section paths, the embedding model's allow list) run here.

    ``pipeline``: a configuration whose steps after the split run here as every split runs them
    (:func:`core.documents.finish_nodes` with its metadata settings, in place of ``metadata``, and its LLM
    extractors, :func:`core.documents.llm_run.extract_with_llm`; ``bounded``: in a child), so what the EMBED view holds
    is what is embedded and searched; ``documents`` then come from
    :func:`core.documents.documents_to_split` with it (its offline extractors). What its LLM extractors sent is
    :attr:`Evaluation.llm`. ``context_tokens``: measure :attr:`Evaluation.context_tokens`.
    """
    check_scope(scope)
    mode = retrieval.mode
    if isinstance(splitter, str):
        splitter = get_splitter(splitter, **dict(params or {}))
    usable, skipped = references(documents, queries)
    phases = RunPhases(report, splitting=0.3 if splitter.embeds_text else 0.05, embedding=mode != "bm25")
    from core.documents import finish_nodes

    runs: list[Any] = []
    extract = None
    if pipeline is not None:
        from core.documents.llm_run import extract_with_llm

        metadata = pipeline.metadata
        # The extractors' plan (before anything is sent) and their spend (after) are lines of the run's progress.
        extract = partial(
            extract_with_llm,
            config=pipeline,
            bounded=bounded,
            report=lambda text: phases.say(phases.split_end, text),
            on_run=runs.append,
            # The replies as they come: a page's bar moves, and a rerun raised from it (Cancel) stops the run
            # before its next request.
            progress=None if report is None else partial(_asking, phases, pipeline.llm.model),
        )
    nodes = finish_nodes(split_with_progress(splitter, documents, phases), documents, metadata, extract)
    if mode != "bm25" and embedder is None:
        from core.embed.embedder import get_embedder

        embedder = get_embedder()
    retriever = ScopedRetriever(nodes, documents, embedder, mode, phases, leaves=retrieval.returns != "chunks")
    retriever.embed_queries([query.query for query, _ in usable])
    per_query = []
    contexts: list[list[Node]] = []
    for done, (query, reference) in enumerate(usable, start=1):
        doc = query.doc if scope == "document" else None
        results = retriever.retrieve(query.query, doc, retrieval)
        per_query.append(score_query(query, [item.node for item in results], reference))
        contexts.append([item.node for item in results])
        phases.scoring(done, len(usable))
        if progress is not None:
            progress(done, len(usable))
    # What the index holds: every chunk, or a hierarchy's leaves when they are searched for their parents.
    indexed = retriever.nodes
    over, window = (None, None) if mode == "bm25" else over_window(indexed, embedder)
    return Evaluation(
        splitter=splitter.name,
        params=shown_params(splitter),
        top_k=retrieval.top_k,
        mode=mode,
        node_count=len(indexed),
        per_query=per_query,
        skipped_queries=skipped,
        scope=scope,
        over_window=over,
        window_tokens=window,
        context_tokens=mean_context_tokens(contexts, embedder) if context_tokens else None,
        llm=llm_spend(runs) if pipeline is not None and llm_extractors(pipeline.extractors) else None,
    )


def _asking(phases: RunPhases, model: str, done: int, calls: int) -> None:
    phases.say(phases.split_end, f"Asking {model}: {done:,} of up to {calls:,} calls answered")


def llm_spend(runs: Sequence[Any]) -> dict[str, int]:
    """What runs of LLM extractors (:class:`core.extractors.llm.LLMRun`) sent and spent, summed (LLM_COLUMNS)."""
    return {name: sum(int(getattr(run, name)) for run in runs) for name in LLM_COLUMNS}


def shown_params(splitter: Splitter) -> dict[str, Any]:
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
