"""The tuner: search a space of splitter and retrieval settings for the Pareto front of quality against cost.

A space is what :mod:`core.evaluation.sweep` sweeps (splitters and any of their declared
numbers, choices or switches, read by its own rules) times the retrieval modes,
hybrid weights (alpha) and fusions, top_k values and what a hierarchy returns (parents, merged)
to try (:mod:`core.evaluation.tune_space`, which also declares the default space). Each point of it, an **arm**,
gets a quality (a metric of :data:`core.evaluation.evaluate.METRICS`, e.g. MRR) and
costs:

- ``context_tokens``: per query, the tokens of the retrieved chunks' LLM views,
  i.e. what the LLM is sent (counted by the embedding model's tokenizer);
- ``nodes``: the chunks the index holds (a hierarchy searched by its leaves: its leaves);
- ``embed_tokens``: the model tokens of every embedded chunk's EMBED view (at most the
  model's window each), and of every text the splitter embedded while splitting
  (the semantic splitter's sentence groups, counted in ``split_embeddings``),
  the work of embedding the configuration from scratch:
  embedding time is proportional to it, and unlike seconds it does not depend
  on what the cache already held;
- ``embed_seconds``: the time this run spent embedding the configuration's
  chunks and its splitter's texts (texts other configurations share are
  embedded once and then cost 0).

The questions are cut into folds (by document by default, :mod:`core.evaluation.folds`). Every row
carries its quality's mean over folds (``fold_mean``: in sample, as its other scores are); the **front**
and the **pick** are by it, the pick staying with an untuned yardstick (the recommended configuration,
measured unless ``include_default=False``, then a framework's defaults) unless another is clearly
better question by question. The one held-out number is the nested estimate: what choosing on the
training folds scored on each held-out fold.

Small spaces are searched exhaustively; large ones by successive halving over a
growing sample of the queries (:mod:`core.evaluation.halving`). A configuration is split,
embedded and ranked once whatever the retrieval settings (:mod:`core.evaluation.tune_measure`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError
from core.evaluation.cross_validation import held_out_rows
from core.evaluation.evaluate import METRICS, check_scope, references
from core.evaluation.folds import DEFAULT_FOLDS, make_folds
from core.evaluation.halving import halve_rows, interleaved
from core.evaluation.jobs import shippable_embedder
from core.evaluation.pareto import front
from core.evaluation.queries import EvalQuery
from core.evaluation.runner import Report
from core.evaluation.tune_measure import OutOfBudget, TuneInputs, make_task, measure_setup, skipped_row, tune_row
from core.evaluation.tune_space import (
    FRAMEWORK_DEFAULT,
    Arm,
    TuneSpace,
    plain_arm,
    plain_position,
    recommended_splitter,
)
from core.params import Configurable, param
from core.runtime.parallel import Engine, ordered_map
from core.schema import Document

if TYPE_CHECKING:
    from core.config import PipelineConfig
    from core.embed.embedder import Embedder

COSTS: dict[str, str] = {
    "context_tokens": "Context tokens per query",
    "nodes": "Chunks in the index",
    "embed_tokens": "Embedding work (model tokens)",
    "embed_seconds": "Embedding time (s)",
}
QUALITIES = dict(METRICS)
SEARCHES = ("auto", "exhaustive", "halving")
# What a choice may read (core.evaluation.cross_validation.cross_validate), declared once for the CLI and the Tune tab.
CONTEXT_CAPS: dict[str, str] = {
    "framework": "a choice reads no more context tokens per query than LlamaIndex's defaults (when the space "
    "measures them) on the questions it is chosen on: reading more text is not a win",
    "none": "a choice may read any amount",
}
# "auto" measures every arm on every query up to this many (arm, query) pairs: scoring is cheap next to
# splitting and embedding (done once per splitter configuration either way), and a small query set is
# a noisy sample (on 4 queries many arms tie at a hit rate of 1, and the cheapest would crowd out the rest).
EXHAUSTIVE_BUDGET = 20_000
__all__ = [
    "CONTEXT_CAPS",
    "COSTS",
    "QUALITIES",
    "SEARCHES",
    "TuneBudget",
    "TuneResult",
    "exhaustive",
    "tune",
]


@dataclass(frozen=True)
class TuneBudget(Configurable):
    """How long a search may run: declared once, read by the CLI's ``--budget`` and the Tune page."""

    name = "tune_budget"
    summary = "The time a tune may spend: when it is spent the search stops, inside a configuration too."

    budget_minutes: float = param(
        20.0,
        "Stop the search after this many minutes (0: no limit), even inside a configuration being split, embedded "
        "or scored. Sized for 2 cores: the default space on 250 kB of text took 9 minutes cold on a busy machine. "
        "A stopped search keeps the configurations it finished, the defaults first.",
        ge=0.0,
        le=1440.0,
    )

    def seconds(self) -> float | None:
        return self.budget_minutes * 60 if self.budget_minutes > 0 else None


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
    folds: dict[str, Any] = field(default_factory=dict)  # how the questions were folded (core.evaluation.folds)
    cross_validation: dict[str, Any] = field(default_factory=dict)  # per fold: the training choice, held out
    pick: int | None = None  # the best held-out row, or a yardstick nothing clearly beat (core.evaluation.cross_validation)
    default: int | None = None  # the recommended configuration's row (core.evaluation.tune_space)
    stopped: str | None = None  # "budget" or "interrupted" when the search did not finish
    space_size: int = 0  # configurations in the space (rows holds the measured ones)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # splitter configurations refused, with the reason
    # The pick with a configuration's extractors and without them (tune's with_extractors), with their costs.
    extractors: list[dict[str, Any]] = field(default_factory=list)

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
            "folds": self.folds,
            "cross_validation": self.cross_validation,
            "pick": self.pick,
            "default": self.default,
            "stopped": self.stopped,
            "space_size": self.space_size,
            "skipped": self.skipped,
            "extractors": self.extractors,
        }


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
    folds_by: str = "document",
    folds: int = DEFAULT_FOLDS,
    include_default: bool = True,
    context_cap: str = "none",
    budget: float | None = None,
    report: Report | None = None,
    engine: Engine | None = None,
    with_extractors: PipelineConfig | None = None,
) -> TuneResult:
    """Search ``space``; every setting and excerpt is checked before anything is split or embedded.

    ``report(fraction, text)`` follows the run. With ``search="auto"`` a space of
    at most :data:`EXHAUSTIVE_BUDGET` (arm, query) pairs is searched exhaustively.
    ``engine`` spreads the splitter configurations (every one, or each round's of
    successive halving) over workers (:mod:`core.runtime.parallel`); the rows are the same on every engine.
    ``folds_by`` and ``folds`` say how the questions are cut for the held-out scores
    (:func:`core.evaluation.folds.make_folds`; folds declared in the queries file win).
    ``context_cap`` (:data:`CONTEXT_CAPS`) bounds what a choice may read.
    ``budget`` (seconds) stops the search once spent, inside the configuration being measured too
    (between embedding batches and scored questions); Ctrl-C (KeyboardInterrupt) stops it at once. Either
    way the result holds the configurations measured (the recommended configuration first), with ``stopped``
    saying why.
    ``with_extractors`` (a configuration with metadata extractors, and the LLM its llm_* ones ask): once the
    search is done, its pick is also scored with those extractors and without them, in ``extractors``
    (:func:`core.evaluation.with_extractors.compare_chosen`: in sample, with what the LLM was sent and spent).
    The extractors are not a dimension of the search.
    """
    _check_choices(quality=quality, cost=cost, search=search, context_cap=context_cap)
    if with_extractors is not None and not with_extractors.extractors:
        raise ConfigError("with_extractors: the configuration has no metadata extractors to compare against")
    space.check()
    check_scope(scope)
    engine = engine or Engine()
    plan = _Plan.make(documents, queries, space, include_default, search, (folds_by, folds, seed))
    if plan.needs_vectors and embedder is None and engine.kind == "local":
        from core.embed.embedder import get_embedder

        embedder = get_embedder()
    shared = embedder if engine.kind == "local" else shippable_embedder(embedder)
    stop_at = None if budget is None else time.time() + budget  # a clock workers share
    inputs = TuneInputs(
        tuple(documents),
        tuple(plan.usable),
        tuple(plan.order),
        scope,
        max(arm.top_k for arm in plan.arms),
        plan.needs_vectors,
        shared,
        stop_at,
    )
    measuring = _Search(plan.setups, plan.arms, inputs, engine, plan.first, report or (lambda f, t: None), budget)
    chosen, rungs, stopped = measuring.search(plan.used, plan.default_arm, quality, cost, eta, keep, min_queries)
    result = _result(plan, measuring, chosen, rungs, stopped, quality, cost, context_cap)
    if with_extractors is not None and result.pick is not None and stopped is None:
        from core.evaluation.with_extractors import compare_chosen

        result.extractors = compare_chosen(
            documents,
            queries,
            [result.rows[result.pick]],
            with_extractors,
            embedder=shared,
            scope=scope,
            report=None if report is None else (lambda f, t: report(f, f"The pick with / without extractors: {t}")),
            engine=engine,
        )
    return result


@dataclass
class _Plan:
    """What a tune will measure: the splitter configurations, the arms, the questions and their folds."""

    setups: list[tuple[str, Any, dict[str, Any]]]
    arms: list[Arm]
    default_arm: int | None
    usable: list[Any]
    skipped: list[str]
    folding: Any
    used: str  # "exhaustive" or "halving"
    order: list[int]  # the order the questions are measured in
    first: dict[int, int]  # the yardsticks' splitter configurations, measured first
    untuned: list[int]  # the untuned arms, in order of preference

    @property
    def needs_vectors(self) -> bool:
        return any(arm.mode != "bm25" for arm in self.arms)

    @classmethod
    def make(
        cls,
        documents: Sequence[Document],
        queries: Sequence[EvalQuery],
        space: TuneSpace,
        include_default: bool,
        search: str,
        folding: tuple[str, int, int],
    ) -> _Plan:
        setups = space.setups()
        arms = space.arms(setups)
        default_arm = _add_default(setups, arms) if include_default else None
        usable, skipped = references(documents, queries)
        by, count, seed = folding
        folds = make_folds([q.doc for q, _ in usable], [q.fold for q, _ in usable], by=by, count=count, seed=seed)
        halving = search == "halving" or (search == "auto" and not exhaustive(len(arms), len(usable)))
        order = interleaved([q.doc for q, _ in usable]) if halving else list(range(len(usable)))
        first, untuned = _yardsticks(setups, arms, default_arm)
        used = "halving" if halving else "exhaustive"
        return cls(setups, arms, default_arm, usable, skipped, folds, used, order, first, untuned)


def _result(
    plan: _Plan,
    measuring: _Search,
    chosen: dict[int, dict[str, Any]],
    rungs: list[dict[str, Any]],
    stopped: str | None,
    quality: str,
    cost: str,
    context_cap: str,
) -> TuneResult:
    """The rows of the arms measured on every question asked, their held-out scores, the front and the pick."""
    arms = plan.arms
    done = [index for index in range(len(arms)) if index in chosen and arms[index].setup in measuring.setup_of]
    rows = [
        tune_row(row_id, arms[index], measuring.setup_of[arms[index].setup], chosen[index])
        for row_id, index in enumerate(done)
    ]
    default_row = done.index(plan.default_arm) if plan.default_arm in done else None
    marks = [done.index(index) for index in plan.untuned if index in done]  # the pick stays on one unless beaten
    cap = _framework_arm(plan.setups, arms, plan.untuned) if context_cap == "framework" else None
    cap_row = done.index(cap) if cap in done else None
    validation = held_out_rows(rows, plan.order, plan.folding, quality, cost, default_row, marks, cap_row)
    refused = [skipped_row(setup) for _, setup in sorted(measuring.setup_of.items()) if setup["skipped"] is not None]
    ended = "Done" if stopped is None else f"Stopped ({stopped}): {len(rows)} of {len(arms)} configurations measured"
    measuring.say(1.0, ended)
    kept = ("folds", "estimate", "default_estimate", "estimates", "challenger", "context_cap")
    return TuneResult(
        quality,
        cost,
        plan.used,
        rows,
        _front(rows, cost),
        len(plan.usable),
        rungs,
        measuring.encoded,
        plan.skipped,
        plan.folding.to_dict(),
        {key: validation[key] for key in kept},
        validation["pick"],
        default_row,
        stopped,
        len(arms),
        refused,
    )


def _check_choices(**chosen: str) -> None:
    """Each named choice is one its list holds (quality, cost, search, context_cap)."""
    lists = {"quality": QUALITIES, "cost": COSTS, "search": SEARCHES, "context_cap": CONTEXT_CAPS}
    for what, value in chosen.items():
        if value not in lists[what]:
            raise ConfigError(f"{what} must be one of {', '.join(lists[what])}, got {value!r}")


def _front(rows: list[dict[str, Any]], cost: str) -> list[int]:
    """The Pareto front's row ids (quality over folds against ``cost``), cheapest first; each row says if it is on it."""
    full = [row["id"] for row in rows if row["fold_mean"] is not None]
    on_front = [full[i] for i in front([(rows[i]["fold_mean"], rows[i][cost]) for i in full])]
    on_front.sort(key=lambda i: (rows[i][cost], -rows[i]["fold_mean"]))
    for row in rows:
        row["on_front"] = row["id"] in on_front
    return on_front


class _Search:
    """One tune's measuring: a task per splitter configuration on the engine, the yardsticks' first.

    ``measured`` holds each arm's last row, ``setup_of`` what each splitter configuration is (as its task
    reported it), ``encoded`` the texts the model encoded in this run.
    """

    def __init__(
        self,
        setups: list[tuple[str, Any, dict[str, Any]]],
        arms: list[Arm],
        inputs: TuneInputs,
        engine: Engine,
        first: dict[int, int],
        say: Report,
        budget: float | None,
    ) -> None:
        self.setups, self.arms, self.inputs, self.engine, self.first = setups, arms, inputs, engine, first
        self.say = say
        self.deadline = None if budget is None else time.monotonic() + budget
        self.measured: dict[int, dict[str, Any]] = {}
        self.setup_of: dict[int, dict[str, Any]] = {}
        self.encoded = 0
        self.at = 0.0  # the run's fraction done, for the progress inside a configuration
        if engine.kind == "local":
            inputs.bench().note = lambda text: say(self.at, text)

    def search(
        self, used: str, default_arm: int | None, quality: str, cost: str, eta: int, keep: int, min_queries: int
    ) -> tuple[dict[int, dict[str, Any]], list[dict[str, Any]], str | None]:
        """Every arm's row as the search used it, halving's rounds, and why it stopped early (None: it did not)."""
        chosen, rungs = self.measured, []
        queries = len(self.inputs.usable)
        try:
            if used == "exhaustive":
                self.say(0.0, f"Measuring {len(self.arms)} configurations in {self.engine.describe()}")
                needs_vectors = self.inputs.needs_vectors
                what = "Splitting, embedding and scoring" if needs_vectors else "Splitting and scoring"
                self.run(range(len(self.arms)), queries, 0.0, 1.0, what)
            else:
                chosen, rungs = halve_rows(
                    len(self.arms), queries, self.rung, self.measured, quality, cost, eta=eta, keep=keep,
                    min_items=min_queries,
                )
                if default_arm in self.measured and chosen.get(default_arm, {}).get("queries") != queries:
                    # The default is the yardstick: always measured on every question.
                    self.run([default_arm], queries, 1.0, 0.0, None)
                    chosen[default_arm] = self.measured[default_arm]
        except KeyboardInterrupt:
            return chosen, rungs, "interrupted"
        except OutOfBudget:
            return chosen, rungs, "budget"
        return chosen, rungs, None

    def rung(self, alive: list[int], items: int, number: int, rounds: int) -> None:
        text = f"Round {number + 1} of {rounds}: {len(alive)} configurations on {items} queries"
        self.run(alive, items, number / rounds, 1 / rounds, text)

    def run(self, arm_indices: Sequence[int], count: int, start: float, width: float, text: str | None) -> None:
        """Measure these arms on the first ``count`` queries: a task per splitter configuration, on the engine."""
        tasks = self._tasks(arm_indices, count)
        # With a budget, a batch at a time so the clock is read between them (workers' worth each).
        batch = (
            1
            if self.engine.kind == "local"
            else (self.engine.size() if self.deadline is not None else max(len(tasks), 1))
        )
        done = 0
        for start_at in range(0, len(tasks), batch):
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise OutOfBudget
            part = tasks[start_at : start_at + batch]
            for task, result in zip(part, ordered_map(measure_setup, part, self.inputs, self.engine), strict=True):
                done += 1
                self.encoded += result["encoded"]
                self.setup_of[task.setup] = result
                self.measured.update(result["rows"])
                self.at = start + width * done / len(tasks)
                if text is not None:
                    self.say(self.at, f"{text}: configuration {done} of {len(tasks)} ({task.label})")

    def _tasks(self, arm_indices: Sequence[int], count: int) -> list[Any]:
        """A task per splitter configuration not refused, the yardsticks' first (a stopped run has them)."""
        groups: dict[int, list[int]] = {}
        for arm_index in arm_indices:
            setup = self.arms[arm_index].setup
            if self.setup_of.get(setup, {}).get("skipped") is None:
                groups.setdefault(setup, []).append(arm_index)
        tasks = [
            make_task(setup, self.setups[setup], [(i, self.arms[i]) for i in group], count)
            for setup, group in groups.items()
        ]
        tasks.sort(key=lambda task: self.first.get(task.setup, len(self.first)))
        return tasks


def _add_default(setups: list[tuple[str, Any, dict[str, Any]]], arms: list[Arm]) -> int:
    """Put the recommended configuration into the space (if it is not there) and return its arm's index.

    Its splitter is :func:`core.evaluation.tune_space.recommended_splitter`, its retrieval
    :data:`~core.config_parts.DEFAULT_RETRIEVAL` (what a hierarchy returns applies to splitters with levels only).
    """
    splitter = recommended_splitter()
    position = plain_position(setups, splitter)
    if position is None:
        setups.append((f"{splitter.name} (recommended)", splitter, {}))
        position = len(setups) - 1
    arm = plain_arm(position, splitter)
    if arm not in arms:
        arms.append(arm)
    return arms.index(arm)


def _yardsticks(
    setups: list[tuple[str, Any, dict[str, Any]]], arms: list[Arm], default_arm: int | None
) -> tuple[dict[int, int], list[int]]:
    """The splitter configurations measured first (by position), and the untuned arms in order of preference.

    First the recommended configuration, then any splitter at its own defaults: a search the budget or Ctrl-C
    stops still holds what a pick is judged against (e.g. LlamaIndex's SentenceSplitter()). Their arms at the
    default retrieval settings (hybrid first, then dense, then BM25) are what
    :func:`core.evaluation.cross_validation.cross_validate` stays with unless clearly beaten, the recommended one first.
    """
    first = {} if default_arm is None else {arms[default_arm].setup: 0}
    for position, (_, _, swept) in enumerate(setups):
        if not swept:
            first.setdefault(position, 1)
    modes = ("hybrid", "dense", "bm25")  # hybrid first: the strongest untuned retrieval
    untuned = []
    for index, arm in enumerate(arms):
        if arm.setup not in first:
            continue
        plain = plain_arm(arm.setup, setups[arm.setup][1])
        if (arm.top_k, arm.returns, arm.context_budget) == (plain.top_k, plain.returns, plain.context_budget) and (
            arm.mode != "hybrid" or (arm.alpha, arm.fusion) == (plain.alpha, plain.fusion)
        ):
            untuned.append(index)
    return first, sorted(untuned, key=lambda i: (first[arms[i].setup], modes.index(arms[i].mode)))


def _framework_arm(setups: list[tuple[str, Any, dict[str, Any]]], arms: list[Arm], untuned: list[int]) -> int | None:
    """LlamaIndex's defaults' untuned arm (hybrid first, as the yardsticks are ordered), if the space has one."""
    return next(
        (i for i in untuned if setups[arms[i].setup][1].name == FRAMEWORK_DEFAULT and not setups[arms[i].setup][2]),
        None,
    )


def exhaustive(arms: int, queries: int) -> bool:
    """Whether ``search="auto"`` measures every arm on every query."""
    return arms * queries <= EXHAUSTIVE_BUDGET
