"""The tuner: search a space of splitter and retrieval settings for the Pareto front of quality against cost.

A space is what :mod:`core.sweep` sweeps (splitters and any of their declared
numbers, choices or switches, read by its own rules) times the retrieval modes,
hybrid weights (alpha) and top_k values to try. Each point of it, an **arm**,
gets a quality (a metric of :data:`core.evaluation.METRICS`, e.g. MRR) and
costs:

- ``context_tokens``: per query, the tokens of the retrieved chunks' LLM views,
  i.e. what the LLM is sent (counted by the embedding model's tokenizer);
- ``nodes``: the chunks the index holds;
- ``embed_tokens``: the model tokens of every chunk's EMBED view (at most the
  model's window each), the work of embedding the configuration from scratch:
  embedding time is proportional to it, and unlike seconds it does not depend
  on what the cache already held;
- ``embed_seconds``: the time this run spent embedding the configuration's
  chunks (texts other configurations share are embedded once and then cost 0).

Small spaces are searched exhaustively; large ones by successive halving over a
growing sample of the queries (:mod:`core.halving`). Splitting and embedding
happen once per splitter configuration whatever the retrieval settings; each
query's ranking is computed once per (configuration, mode, alpha) at the largest
top_k (a smaller top_k keeps its first chunks: the ranking is a stable sort),
and the embedder's caches, in memory and on disk, embed a chunk text shared by
several configurations once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.eval_runner import Report, RunPhases, ScopedRetriever
from core.evaluation import METRICS, EvalQuery, _shown_params, check_evaluation, references, score_query
from core.halving import schedule, successive_halving
from core.metrics import DEFAULT_MAX_SEQ_LENGTH, SPECIAL_TOKENS
from core.pareto import front
from core.schema import Document, MetadataMode, Node
from core.sweep import SweepSpec, configurations, sweep_values

if TYPE_CHECKING:
    from core.embeddings import Embedder

COSTS: dict[str, str] = {
    "context_tokens": "Context tokens per query",
    "nodes": "Chunks in the index",
    "embed_tokens": "Embedding work (model tokens)",
    "embed_seconds": "Embedding time (s)",
}
QUALITIES = dict(METRICS)
SEARCHES = ("auto", "exhaustive", "halving")
# "auto" measures every arm on every query up to this many (arm, query) pairs: scoring is cheap next to
# splitting and embedding (done once per splitter configuration either way), and a small query set is
# a noisy sample (on 4 queries many arms tie at a hit rate of 1, and the cheapest would crowd out the rest).
EXHAUSTIVE_BUDGET = 20_000
__all__ = ["COSTS", "QUALITIES", "SEARCHES", "Arm", "exhaustive", "TuneResult", "TuneSpace", "retrieval_values", "tune"]


def retrieval_values(name: str, text: Any) -> list[Any]:
    """Values of ``top_k``, ``mode`` or ``alpha`` from ``"3, 5"`` or a list, checked by RetrievalSettings' declaration."""
    specs = {spec.name: spec for spec in RetrievalSettings.params()}
    return sweep_values(text, name, specs[name])


@dataclass(frozen=True)
class Arm:
    """One point of the space: a splitter configuration (by position) and the retrieval settings."""

    setup: int
    mode: str
    alpha: float
    top_k: int

    def retrieval_label(self) -> str:
        mode = f"hybrid α={self.alpha:g}" if self.mode == "hybrid" else self.mode
        return f"{mode} · k={self.top_k}"


@dataclass(frozen=True)
class TuneSpace:
    """Splitter sweeps × retrieval modes × alphas (hybrid only) × top_k values."""

    specs: tuple[SweepSpec, ...]
    modes: tuple[str, ...] = ("dense",)
    alphas: tuple[float, ...] = (0.5,)
    top_ks: tuple[int, ...] = (5,)

    def check(self) -> None:
        """Raise ConfigError for an empty list or a value no retrieval accepts."""
        if not self.specs or not self.modes or not self.top_ks or ("hybrid" in self.modes and not self.alphas):
            raise ConfigError("the space needs at least one splitter, mode, top_k (and alpha for hybrid)")
        for mode in self.modes:
            for top_k in self.top_ks:
                for alpha in self.alphas:
                    check_evaluation(top_k, mode, alpha, "corpus")

    def setups(self) -> list[tuple[str, Any, dict[str, Any]]]:
        """(label, splitter, swept values) of every valid splitter configuration."""
        return configurations(self.specs)

    def arms(self, setup_count: int | None = None) -> list[Arm]:
        count = len(self.setups()) if setup_count is None else setup_count
        retrievals = [(mode, alpha) for mode in self.modes for alpha in (self.alphas if mode == "hybrid" else (0.5,))]
        return [
            Arm(setup, mode, alpha, top_k)
            for setup in range(count)
            for mode, alpha in retrievals
            for top_k in self.top_ks
        ]


@dataclass
class TuneResult:
    """Every arm's row (measured on ``queries`` of them, fewer for arms halving dropped) and the front's row ids."""

    quality: str
    cost: str
    search: str
    rows: list[dict[str, Any]]
    front: list[int]  # row ids on the Pareto front, cheapest first
    queries: int
    rungs: list[dict[str, Any]] = field(default_factory=list)
    embedded_texts: int = 0  # texts the model encoded in this run (the rest came from a cache)
    skipped_queries: list[str] = field(default_factory=list)

    def front_rows(self) -> list[dict[str, Any]]:
        return [self.rows[i] for i in self.front]

    def to_dict(self) -> dict[str, Any]:
        return {
            "quality": self.quality,
            "cost": self.cost,
            "search": self.search,
            "queries": self.queries,
            "front": self.front_rows(),
            "rows": self.rows,
            "rungs": self.rungs,
            "embedded_texts": self.embedded_texts,
            "skipped_queries": self.skipped_queries,
        }


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
    retrievers: dict[str, ScopedRetriever] = field(default_factory=dict)
    ranked: dict[tuple[str, float, int], list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.position = {id(node): i for i, node in enumerate(self.nodes)}


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
        # The window as the chunk metrics and the evaluation count it: the model reads this much of each chunk.
        self.window = int(getattr(embedder, "max_seq_length", 0) or DEFAULT_MAX_SEQ_LENGTH) - SPECIAL_TOKENS

    def prepare(self, index: int, setup: tuple[str, Any, dict[str, Any]], needs_vectors: bool) -> _Prepared:
        if index in self.prepared:
            return self.prepared[index]
        label, splitter, combination = setup
        nodes = splitter.split(self.documents)
        seconds = 0.0
        if needs_vectors and nodes:
            from core.embeddings import embed_nodes

            start = time.perf_counter()
            embed_nodes(nodes, self.embedder)
            seconds = time.perf_counter() - start
        llm = _counts(self.counter, [node.get_content(MetadataMode.LLM) for node in nodes])
        embed = _counts(self.counter, [node.get_content(MetadataMode.EMBED) for node in nodes])
        over = int((embed > self.window).sum()) if needs_vectors else None
        # The model reads at most its window of each chunk, plus its special tokens.
        embed_tokens = int(np.minimum(embed, self.window).sum()) + SPECIAL_TOKENS * len(nodes)
        done = _Prepared(label, splitter, combination, nodes, llm, embed_tokens, seconds, over)
        self.prepared[index] = done
        return done

    def ranking(self, prepared: _Prepared, mode: str, alpha: float, query: int) -> list[int]:
        key = (mode, alpha if mode == "hybrid" else 0.0, query)
        if key not in prepared.ranked:
            retriever = prepared.retrievers.get(mode)
            if retriever is None:
                phases = RunPhases(None, splitting=0.0, embedding=mode != "bm25")
                embedder = self.embedder if mode != "bm25" else None
                retriever = prepared.retrievers[mode] = ScopedRetriever(
                    prepared.nodes, self.documents, embedder, mode, phases
                )
            eval_query = self.usable[query][0]
            doc = eval_query.doc if self.scope == "document" else None
            found = retriever.retrieve(eval_query.query, doc, self.max_k, alpha)
            prepared.ranked[key] = [prepared.position[id(item.node)] for item in found]
        return prepared.ranked[key]

    def measure(self, arm: Arm, prepared: _Prepared, count: int) -> dict[str, Any]:
        scores, tokens = [], []
        for query in self.order[:count]:
            positions = self.ranking(prepared, arm.mode, arm.alpha, query)[: arm.top_k]
            eval_query, reference = self.usable[query]
            scores.append(score_query(eval_query, [prepared.nodes[p] for p in positions], reference))
            tokens.append(int(sum(prepared.llm_tokens[p] for p in positions)))
        row: dict[str, Any] = {"queries": count}
        for metric, name in (
            ("hit_rate", "hit"),
            ("mrr", "reciprocal_rank"),
            ("recall", "recall"),
            ("precision", "precision"),
            ("iou", "iou"),
        ):
            row[metric] = sum(getattr(score, name) for score in scores) / len(scores)
        row["context_tokens"] = sum(tokens) / len(tokens)
        return row


def _counts(counter: Any, texts: list[str]) -> np.ndarray:
    """Token counts of ``texts``, each distinct text counted once."""
    unique = list(dict.fromkeys(texts))
    counted = dict(zip(unique, counter.count_many(unique), strict=True)) if unique else {}
    return np.array([counted[text] for text in texts], dtype=np.int64)


def tune(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    space: TuneSpace,
    *,
    embedder: Embedder | None = None,
    scope: str = "corpus",
    quality: str = "mrr",
    cost: str = "context_tokens",
    search: str = "auto",
    eta: int = 2,
    keep: int = 8,
    min_queries: int = 4,
    seed: int = 0,
    report: Report | None = None,
) -> TuneResult:
    """Search ``space``; every setting and excerpt is checked before anything is split or embedded.

    ``report(fraction, text)`` follows the run. With ``search="auto"`` a space of
    at most :data:`EXHAUSTIVE_BUDGET` (arm, query) pairs is searched exhaustively.
    """
    if quality not in QUALITIES:
        raise ConfigError(f"quality must be one of {', '.join(QUALITIES)}, got {quality!r}")
    if cost not in COSTS:
        raise ConfigError(f"cost must be one of {', '.join(COSTS)}, got {cost!r}")
    if search not in SEARCHES:
        raise ConfigError(f"search must be one of {', '.join(SEARCHES)}, got {search!r}")
    space.check()
    check_evaluation(1, "dense", 0.5, scope)
    setups = space.setups()
    arms = space.arms(len(setups))
    usable, skipped = references(documents, queries)
    needs_vectors = any(mode != "bm25" for mode in space.modes)
    if needs_vectors and embedder is None:
        from core.embeddings import get_embedder

        embedder = get_embedder()
    from core.tokenizers import get_tokenizer

    counter = get_tokenizer("model")
    used = (
        "halving"
        if search == "halving" or (search == "auto" and not exhaustive(len(arms), len(usable)))
        else "exhaustive"
    )
    order = list(range(len(usable)))
    if used == "halving":
        random.Random(seed).shuffle(order)
    bench = _Bench(documents, usable, embedder, scope, max(space.top_ks), order, counter)
    before = _encoded(embedder)
    say = report or (lambda fraction, text: None)
    for index, setup in enumerate(setups):
        say(
            0.7 * index / len(setups),
            f"Splitting and embedding configuration {index + 1} of {len(setups)} ({setup[0]})",
        )
        bench.prepare(index, setup, needs_vectors)
    if needs_vectors:
        embedder.embed([query.query for query, _ in usable])  # once, in batches; retrieval finds them cached
    say(0.7, f"Scoring {len(arms)} configurations")
    measured: dict[int, dict[str, Any]] = {}

    def measure(arm_index: int, count: int) -> tuple[float, float]:
        arm = arms[arm_index]
        prepared = bench.prepared[arm.setup]
        row = bench.measure(arm, prepared, count)
        row.update(nodes=len(prepared.nodes), embed_tokens=prepared.embed_tokens, embed_seconds=prepared.embed_seconds)
        measured[arm_index] = row
        return row[quality], row[cost]

    rungs: list[dict[str, Any]] = []
    if used == "exhaustive":
        for arm_index in range(len(arms)):
            measure(arm_index, len(usable))
    else:
        rounds = len(schedule(len(arms), len(usable), eta=eta, keep=keep, min_items=min_queries))

        def on_rung(number: int, count: int, items: int) -> None:
            say(
                0.7 + 0.3 * number / rounds,
                f"Round {number + 1} of {rounds}: {count} configurations on {items} queries",
            )

        halving = successive_halving(
            len(arms), measure, len(usable), eta=eta, keep=keep, min_items=min_queries, on_rung=on_rung
        )
        rungs = [{"queries": r.items, "measured": len(r.arms), "kept": len(r.kept)} for r in halving.rungs]
    rows = [_row(index, arm, bench.prepared[arm.setup], measured[index]) for index, arm in enumerate(arms)]
    full = [row["id"] for row in rows if row["queries"] == len(usable)]
    on_front = [full[i] for i in front([(rows[i][quality], rows[i][cost]) for i in full])]
    on_front.sort(key=lambda i: (rows[i][cost], -rows[i][quality]))
    for row in rows:
        row["on_front"] = row["id"] in on_front
    say(1.0, "Done")
    return TuneResult(quality, cost, used, rows, on_front, len(usable), rungs, _encoded(embedder) - before, skipped)


def exhaustive(arms: int, queries: int) -> bool:
    """Whether ``search="auto"`` measures every arm on every query."""
    return arms * queries <= EXHAUSTIVE_BUDGET


def _encoded(embedder: Any) -> int:
    """Texts the embedder has encoded so far (not served from memory or disk)."""
    if embedder is None or not hasattr(embedder, "cache_stats"):
        return 0
    stats = embedder.cache_stats()
    return stats["misses"] - stats["disk_hits"]


def _row(index: int, arm: Arm, prepared: _Prepared, measured: dict[str, Any]) -> dict[str, Any]:
    """A JSON-ready row: labels, the splitter's shown parameters, retrieval, scores, costs, the config to load."""
    splitter = prepared.splitter
    row: dict[str, Any] = {
        "id": index,
        "config": f"{prepared.label} · {arm.retrieval_label()}",
        "splitter": splitter.name,
        "params": {**_shown_params(splitter), **prepared.combination},
        "mode": arm.mode,
        "alpha": arm.alpha if arm.mode == "hybrid" else None,
        "top_k": arm.top_k,
        **measured,
        "over_window": prepared.over_window,
        "settings": {
            "splitter": {"name": splitter.name, "params": splitter.to_params()},
            "retrieval": {"top_k": arm.top_k, "mode": arm.mode, "alpha": arm.alpha},
        },
    }
    return row
