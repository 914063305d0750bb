"""The tuner's work on one splitter configuration, plain values in and out: split, embed, rank, score.

:func:`measure_setup` is what :func:`core.evaluation.tune.tune` spreads over an engine
(:func:`core.runtime.parallel.ordered_map`): a :class:`SetupTask` (one splitter
configuration by name and parameters, the arms to measure on it, on how many
queries) and the run's :class:`TuneInputs` in, a dict of plain rows out. The
same function runs in this process, a process pool or a Ray task, so every
engine measures the same rows.

A process splits and embeds a configuration once and keeps it (its bench), so
later rounds of successive halving reuse it there; a Ray task or another
worker prepares it again, with its chunk vectors from the disk cache. Each
query's ranking is computed once per (configuration, mode, alpha) at the run's
largest top_k (a smaller top_k keeps its first chunks: the ranking is a stable sort).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from core.config_parts import DEFAULT_METADATA, RetrievalSettings
from core.documents import finish_nodes, with_embed_allow_list
from core.documents.bounded import split_bounded
from core.errors import ConfigError
from core.evaluation.evaluate import score_query, shown_params
from core.evaluation.jobs import resolve_embedder
from core.evaluation.runner import RunPhases, ScopedRetriever
from core.evaluation.tune_space import view_metadata
from core.measure.metrics import DEFAULT_MAX_SEQ_LENGTH, SPECIAL_TOKENS
from core.schema import MetadataMode, Node, contents
from core.splitters import get_splitter
from core.splitters.hierarchical import leaf_nodes
from core.splitters.semantic import embedder_override

__all__ = ["OutOfBudget", "SetupTask", "TuneInputs", "encoded_texts", "make_task", "measure_setup", "skipped_row", "tune_row"]


@dataclass(frozen=True)
class SetupTask:
    """Measure ``arms`` (index, mode, alpha, top_k) of one splitter configuration on the first ``queries`` queries."""

    setup: int
    label: str
    splitter: str
    params: dict[str, Any]
    combination: dict[str, Any]
    arms: tuple[tuple[int, RetrievalSettings], ...]  # (arm index, its retrieval settings)
    queries: int


@dataclass
class TuneInputs:
    """What every task of a run shares: documents, usable queries in scoring order, scope, the model (or its ref).

    ``usable`` holds (query, its reference spans); ``order`` is the order queries are sampled in.
    """

    documents: tuple[Any, ...]
    usable: tuple[tuple[Any, list[Any]], ...]
    order: tuple[int, ...]
    scope: str
    max_k: int
    needs_vectors: bool
    embedder: Any = None
    deadline: float | None = None  # time.time() after which the run stops, inside a configuration too

    def bench(self) -> _Bench:
        """This process's bench for the run: made on first use, kept with these inputs, never pickled."""
        bench = self.__dict__.get("_bench")
        if bench is None:
            from core.tokens.tokenizers import get_tokenizer

            embedder = resolve_embedder(self.embedder) if self.needs_vectors else None
            counter = get_tokenizer("model")
            bench = _Bench(self.documents, self.usable, embedder, self.scope, self.max_k, list(self.order), counter)
            bench.deadline = self.deadline
            self.__dict__["_bench"] = bench
        return bench

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key != "_bench"}


def measure_setup(task: SetupTask, inputs: TuneInputs) -> dict[str, Any]:
    """The task's arms measured (a row each, by arm index), what its configuration is, and the texts encoded for it.

    A configuration the documents refuse (e.g. metadata that leaves no room for text in its chunk_size) is
    not measured: ``skipped`` holds the reason, ``rows`` is empty, and the other configurations go on.
    """
    bench = inputs.bench()
    before = encoded_texts(bench.embedder)
    splitter = get_splitter(task.splitter, **task.params)
    try:
        leaves_only = all(settings.returns != "chunks" for _, settings in task.arms)
        prepared = bench.prepare(
            task.setup, (task.label, splitter, task.combination), inputs.needs_vectors, leaves_only
        )
    except ConfigError as exc:
        return {**_described(task, splitter), "rows": {}, "over_window": None, "encoded": 0, "skipped": str(exc)}
    if inputs.needs_vectors:
        bench.embedder.embed([query.query for query, _ in inputs.usable])  # in batches; retrieval finds them cached
    rows = {}
    for arm, settings in task.arms:
        row = bench.measure(prepared, settings, task.queries)
        row.update(
            # The chunks the index holds: a hierarchy searched by its leaves holds its leaves.
            nodes=len(prepared.nodes) if settings.returns == "chunks" else prepared.leaves,
            embed_tokens=prepared.embed_tokens,
            embed_seconds=prepared.embed_seconds,
            split_embeddings=prepared.split_embeddings,
        )
        rows[arm] = row
    return {
        **_described(task, splitter),
        "rows": rows,
        "over_window": prepared.over_window,
        "encoded": encoded_texts(bench.embedder) - before,
        "skipped": None,
    }


def _described(task: SetupTask, splitter: Any) -> dict[str, Any]:
    """What the configuration is: its label, splitter, shown and full parameters."""
    return {
        "label": task.label,
        "splitter": splitter.name,
        "params": {**shown_params(splitter), **task.combination},
        "splitter_params": splitter.to_params(),
        "view": view_metadata(task.combination),
    }


def make_task(setup: int, built: tuple[str, Any, dict[str, Any]], arms: list[tuple[int, Any]], count: int) -> SetupTask:
    """The task of one splitter configuration (``built``: label, splitter, swept values) and its arms (index, Arm)."""
    label, splitter, combination = built
    measured = tuple((index, arm.settings()) for index, arm in arms)
    return SetupTask(setup, label, splitter.name, splitter.to_params(), combination, measured, count)


def tune_row(index: int, arm: Any, setup: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    """A JSON-ready row: labels, the splitter's shown parameters, retrieval, scores, costs, the config to load."""
    return {
        "id": index,
        "config": f"{setup['label']} · {arm.retrieval_label()}",
        "splitter": setup["splitter"],
        "params": dict(setup["params"]),
        "mode": arm.mode,
        "alpha": arm.alpha if arm.mode == "hybrid" else None,
        "fusion": arm.fusion if arm.mode == "hybrid" else None,
        "returns": arm.returns,
        "top_k": arm.top_k,
        **measured,
        "over_window": setup["over_window"],
        # The share of its chunks the model reads truncated (past its window); None when nothing is embedded.
        "truncated_share": None if setup["over_window"] is None else setup["over_window"] / max(measured["nodes"], 1),
        "settings": {
            "splitter": {"name": setup["splitter"], "params": setup["splitter_params"]},
            "retrieval": arm.settings().to_params(),
            # The metadata settings its EMBED view lays over the run's (empty: as loaded).
            "metadata": {key: list(value) if isinstance(value, tuple) else value for key, value in setup["view"].items()},
        },
    }


def skipped_row(setup: dict[str, Any]) -> dict[str, Any]:
    """A configuration that was not measured, and why (in the words of the error that refused it)."""
    return {
        "config": setup["label"],
        "splitter": setup["splitter"],
        "params": dict(setup["params"]),
        "reason": setup["skipped"],
    }


def encoded_texts(embedder: Any) -> int:
    """Texts the embedder has encoded so far (not served from memory or disk)."""
    if embedder is None or not hasattr(embedder, "cache_stats"):
        return 0
    stats = embedder.cache_stats()
    return stats["misses"] - stats["disk_hits"]


@dataclass
class _Prepared:
    """One splitter configuration, split and embedded: its chunks, their token counts, its retrievers."""

    label: str
    splitter: Any
    combination: dict[str, Any]
    nodes: list[Node]
    llm_tokens: np.ndarray
    embed_tokens: int
    embed_seconds: float
    over_window: int | None
    split_embeddings: int  # texts the splitter embedded while splitting
    leaves: int  # the chunks a retrieval returning parents or merging searches (all, where there is no hierarchy)
    retrievers: dict[tuple[str, bool], ScopedRetriever] = field(default_factory=dict)  # by (mode, leaves only)
    ranked: dict[tuple[Any, int], list[int]] = field(default_factory=dict)  # by (retrieval but top_k, query)

    def __post_init__(self) -> None:
        self.position = {id(node): i for i, node in enumerate(self.nodes)}

    def tokens(self, node: Node) -> int:
        """A chunk's LLM tokens, as counted for the context tokens (a context budget reads them)."""
        return int(self.llm_tokens[self.position[id(node)]])


class _Bench:
    """Splits, embeds and ranks on demand, each once; scores an arm on the first n queries of a fixed order."""

    def __init__(self, documents, usable, embedder, scope, max_k, order, counter) -> None:  # noqa: ANN001
        self.documents = documents
        self.usable = usable
        self.embedder = embedder
        self.scope = scope
        self.max_k = max_k
        self.order = order
        self.counter = counter
        self.prepared: dict[int, _Prepared] = {}
        # Progress inside a configuration (a line of text), where the run can show it (this process only).
        self.note: Callable[[str], None] | None = None
        self.deadline: float | None = None
        # The window as the chunk metrics and the evaluation count it: the model reads this much of each chunk.
        self.window = int(getattr(embedder, "max_seq_length", 0) or DEFAULT_MAX_SEQ_LENGTH) - SPECIAL_TOKENS

    def prepare(
        self, index: int, setup: tuple[str, Any, dict[str, Any]], needs_vectors: bool, leaves_only: bool = False
    ) -> _Prepared:
        if index in self.prepared:
            return self.prepared[index]
        label, splitter, combination = setup
        # The setup's EMBED view (metadata settings over the run's): its allow list before the split, as
        # every split applies it, and its section paths and the allow list over the split's keys after.
        view = replace(DEFAULT_METADATA, **view_metadata(combination))
        documents = with_embed_allow_list(self.documents, view)
        splitting = SplitEmbeddings(self._progress(f"{label}: splitting, sentence embeddings"))
        with embedder_override(splitting):
            # A link's engine must not hold the server (core.runtime.bounded); semantic splits stay here, recorded.
            nodes = finish_nodes(split_bounded(documents, splitter), documents, view)
        # The embedding time of a configuration counts the splitter's own (the semantic splitter's sentences).
        seconds = splitting.seconds
        leaves = leaf_nodes(nodes)  # every chunk, where there is no hierarchy
        # Only a hierarchy's leaves are embedded (and so cost) when every retrieval searches the leaves alone.
        indexed = leaves if leaves_only else nodes
        if needs_vectors and indexed:
            from core.embed.embedder import embed_nodes

            start = time.perf_counter()
            embed_nodes(indexed, self.embedder, progress=self._progress(f"{label}: embedding chunks"))
            seconds += time.perf_counter() - start
        llm = _counts(self.counter, contents(nodes, MetadataMode.LLM))
        embed = _counts(self.counter, contents(indexed, MetadataMode.EMBED))
        over = int((embed > self.window).sum()) if needs_vectors else None
        # The model reads at most its window of each chunk, plus its special tokens; and so of each text the
        # splitter embedded while splitting (the semantic splitter's sentence groups): a cost of this configuration.
        embed_tokens = int(np.minimum(embed, self.window).sum()) + SPECIAL_TOKENS * len(indexed)
        split_counts = _counts(self.counter, splitting.texts)
        embed_tokens += int(np.minimum(split_counts, self.window).sum()) + SPECIAL_TOKENS * len(splitting.texts)
        done = _Prepared(
            label, splitter, combination, nodes, llm, embed_tokens, seconds, over, len(splitting.texts), len(leaves)
        )
        self.prepared[index] = done
        return done

    def check_budget(self) -> None:
        """Raise OutOfBudget once the run's deadline has passed: a long configuration stops inside too."""
        if self.deadline is not None and time.time() > self.deadline:
            raise OutOfBudget

    def _progress(self, text: str) -> Callable[[int, int], None]:
        note = self.note

        def progress(done: int, total: int) -> None:
            self.check_budget()
            if note is not None:
                note(f"{text} {done:,} of {total:,}")

        return progress

    def ranking(self, prepared: _Prepared, settings: RetrievalSettings, query: int) -> list[int]:
        """The chunks (positions) the retrieval returns for a query.

        Ranked once at the run's largest top_k and cut, where a smaller top_k returns the first chunks of a
        larger one; reciprocal rank fusion (its depth is top_k) and a hierarchy's parents or merges are not
        such a prefix, so they are retrieved at their own top_k.
        """
        mode, leaves = settings.mode, settings.returns != "chunks"
        asked = replace(settings, top_k=self.max_k) if _prefix(settings) else settings
        key = (asked, query)
        if key not in prepared.ranked:
            retriever = prepared.retrievers.get((mode, leaves))
            if retriever is None:
                phases = RunPhases(None, splitting=0.0, embedding=mode != "bm25")
                embedder = self.embedder if mode != "bm25" else None
                retriever = prepared.retrievers[mode, leaves] = ScopedRetriever(
                    prepared.nodes, self.documents, embedder, mode, phases, leaves=leaves, tokens=prepared.tokens
                )
            eval_query = self.usable[query][0]
            doc = eval_query.doc if self.scope == "document" else None
            found = retriever.retrieve(eval_query.query, doc, asked)
            prepared.ranked[key] = [prepared.position[id(item.node)] for item in found]
        return prepared.ranked[key]

    def measure(self, prepared: _Prepared, settings: RetrievalSettings, count: int) -> dict[str, Any]:
        scores, tokens = [], []
        for query in self.order[:count]:
            self.check_budget()
            positions = self.ranking(prepared, settings, query)
            if _prefix(settings):
                positions = positions[: settings.top_k]
            eval_query, reference = self.usable[query]
            scores.append(score_query(eval_query, [prepared.nodes[p] for p in positions], reference))
            tokens.append(int(sum(prepared.llm_tokens[p] for p in positions)))
        row: dict[str, Any] = {"queries": count}
        per_query: dict[str, list[float]] = {}
        for metric, name in (
            ("hit_rate", "hit"),
            ("mrr", "reciprocal_rank"),
            ("recall", "recall"),
            ("precision", "precision"),
            ("iou", "iou"),
        ):
            row[metric] = sum(getattr(score, name) for score in scores) / len(scores)
            # Each query's value, in sampling order: the tuner's cross-validation (core.evaluation.cross_validation) reads them.
            per_query[metric] = [getattr(score, name) for score in scores]
        # Each query's reading too: the tuner caps what a choice may read on the questions it was chosen on.
        per_query["context_tokens"] = [float(t) for t in tokens]
        row["per_query"] = per_query
        row["context_tokens"] = sum(tokens) / len(tokens)
        return row


def _prefix(settings: RetrievalSettings) -> bool:
    """Whether the chunks this retrieval returns are the first top_k of the ranking at any larger top_k."""
    return settings.returns == "chunks" and (settings.mode != "hybrid" or settings.fusion == "relative_score")


class OutOfBudget(Exception):  # noqa: N818 - a signal, not an error
    """The tune's time budget is spent: the configuration being measured stops, and no other starts."""


class SplitEmbeddings:
    """The embed function a splitter uses while splitting, as it would (the packaged model), recording its texts and time.

    Installed with :func:`core.splitters.semantic.embedder_override`, it changes
    no vector: it calls what the splitter calls without it.
    """

    def __init__(self, progress: Callable[[int, int], None] | None = None) -> None:
        self.texts: list[str] = []
        self.seconds = 0.0
        self.progress = progress

    def __call__(self, texts: list[str]) -> np.ndarray:
        from core.embed.embedder import get_embedder

        start = time.perf_counter()
        try:
            return get_embedder().embed(texts, progress=self.progress)
        finally:
            self.seconds += time.perf_counter() - start
            self.texts.extend(texts)


def _counts(counter: Any, texts: list[str]) -> np.ndarray:
    """Token counts of ``texts``, each distinct text counted once."""
    unique = list(dict.fromkeys(texts))
    counted = dict(zip(unique, counter.count_many(unique), strict=True)) if unique else {}
    return np.array([counted[text] for text in texts], dtype=np.int64)
