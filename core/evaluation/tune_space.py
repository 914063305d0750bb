"""The tuner's space: its points (arms), the default space and the recommended configuration.

A :class:`TuneSpace` is splitter sweeps times retrieval settings; each of its points is an :class:`Arm`.
The default space is declared once here, read by the CLI (:mod:`core.cli.tune`) and the app (``ui/evaluate_tune.py``), so the Tune
tab with its defaults searches what the CLI searches. The space holds the levers that move retrieval
(benchmarks/RESULTS.md, "The tuner's levers"):

- chunk sizes and overlaps of the sentence splitter (what the EMBED view holds, within the model's window);
- **retrieve small, read large**: hierarchical chunks whose leaves are searched and whose parents are read
  (``returns="parents"``) or merged (``"merged"``, LlamaIndex's AutoMergingRetriever rule);
- dense, BM25 and hybrid retrieval, hybrid weights, and both fusions frameworks deploy (min-max weighted,
  reciprocal rank);
- as yardsticks, LlamaIndex's ``SentenceSplitter()`` and LangChain's ``RecursiveCharacterTextSplitter()`` at their
  defaults, and the recommended configuration.

What the embedding model reads (:data:`EMBED_VIEWS`: the keys it sees, a section path as a contextual header) is a
lever a space can search (``views``); the default space reads each chunk as loaded, because searching it did not
improve the held-out estimate on the benchmarks' question sets.

The **recommended configuration** is the best general one the benchmarks support: hierarchical chunks of
2048 and 250 tokens (overlap 20), the 250-token leaves searched with hybrid retrieval (alpha 0.5) and their
2048-token parents returned while they fit a context budget of 5,500 tokens a query (else the leaf). Chosen on
two question sets and then confirmed on three others it was not chosen on (the budget was set on all five); the
tuner measures it first and stays with it unless another configuration is clearly better.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.config_parts import DEFAULT_RETRIEVAL, DEFAULT_SPLITTER, RetrievalSettings
from core.errors import ConfigError
from core.evaluation.sweep import SweepSpec, configurations, sweep_values

__all__ = [
    "Arm",
    "TuneSpace",
    "default_space",
    "plain_arm",
    "plain_position",
    "view_metadata",
    "recommended_note",
    "retrieval_values",
    "AS_LOADED",
    "EMBED_VIEWS",
    "VIEW_KEY",
    "DEFAULT_ALPHAS",
    "DEFAULT_BUDGETS",
    "DEFAULT_FUSIONS",
    "DEFAULT_MODES",
    "DEFAULT_RETURNS",
    "DEFAULT_TOP_KS",
    "DEFAULT_VIEWS",
    "FRAMEWORK_DEFAULT",
    "LANGCHAIN_DEFAULT",
    "HIERARCHIES",
    "RECOMMENDED",
    "SENTENCE_GRID",
    "default_specs",
    "hierarchy_sizes",
    "recommended_splitter",
]

# The classic sizes and overlaps, for every splitter that declares them.
SENTENCE_GRID: dict[str, list[int]] = {"chunk_size": [128, 256, 512, 1024], "chunk_overlap": [0, 64]}
# (parent, leaf) sizes in tokens: leaves of 128-250 tokens (and the `level` key) fit all-MiniLM-L6-v2's window
# whole; the first is the recommended configuration's.
HIERARCHIES: list[tuple[int, int]] = [(2048, 250), (1024, 250), (1024, 128), (512, 128)]
FRAMEWORK_DEFAULT = "llamaindex.sentence"  # LlamaIndex's SentenceSplitter() at its defaults
LANGCHAIN_DEFAULT = "langchain.recursive"  # LangChain's RecursiveCharacterTextSplitter() at its defaults (4000/200)
# The recommended configuration is the default one (core.config_parts.DEFAULT_SPLITTER at its defaults, with
# DEFAULT_RETRIEVAL), so what a user meets first is what the tuner must clearly beat; its sizes are spelled out
# so that its row says them (tests/test_tune.py holds it equal to the default splitter).
RECOMMENDED = SweepSpec(DEFAULT_SPLITTER, base={"chunk_sizes": (2048, 250), "chunk_overlap": 20})

# What the embedding model reads, as a lever (benchmarks/RESULTS.md, "What the embedding reads"): each view is
# metadata settings (core.config_parts.MetadataSettings) laid over the run's own. loaded: every key the loader
# shows (changes nothing); text: the chunk's text alone; title: the document's title only; title+section: its
# title and the section path the chunk starts in (a contextual header); loaded+section: every key and the path.
AS_LOADED = "loaded"
EMBED_VIEWS: dict[str, dict[str, Any]] = {
    AS_LOADED: {},
    "text": {"embed_metadata_keys": ()},
    "title": {"embed_metadata_keys": ("title",)},
    "title+section": {"embed_metadata_keys": ("title", "section"), "section_metadata": "embed"},
    "loaded+section": {"section_metadata": "embed"},
}
# The key a setup's swept values hold its EMBED view under (absent: as loaded).
VIEW_KEY = "embed_view"

DEFAULT_MODES = ("dense", "bm25", "hybrid")
DEFAULT_ALPHAS = (0.3, 0.5, 0.7)
DEFAULT_FUSIONS = ("relative_score", "reciprocal_rank")
DEFAULT_RETURNS = ("parents", "merged")
DEFAULT_TOP_KS = (DEFAULT_RETRIEVAL.top_k,)
DEFAULT_BUDGETS = (DEFAULT_RETRIEVAL.context_budget,)
# Only as loaded by default: searched with title+section too, the nested estimate did not improve on any of five
# question sets and the search took twice as long (benchmarks/RESULTS.md, "What the embedding model reads").
DEFAULT_VIEWS = (AS_LOADED,)


def hierarchy_sizes(pairs: Sequence[tuple[int, int]] = ()) -> str:
    """The hierarchies as a reader says them: "2048/250, 1024/250, 1024/128 and 512/128" (default: HIERARCHIES)."""
    said = [f"{parent}/{leaf}" for parent, leaf in (pairs or HIERARCHIES)]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def recommended_splitter() -> Any:
    """The recommended configuration's splitter (its retrieval is :data:`~core.config_parts.DEFAULT_RETRIEVAL`)."""
    from core.splitters import get_splitter

    return get_splitter(RECOMMENDED.splitter, **RECOMMENDED.base)


def default_specs(available: set[str] | None = None) -> list[SweepSpec]:
    """The default space's splitter sweeps (those whose splitters this installation has, if ``available`` is given)."""
    specs = [
        SweepSpec("sentence", {key: list(values) for key, values in SENTENCE_GRID.items()}),
        SweepSpec("hierarchical", {"chunk_sizes": list(HIERARCHIES)}, {"chunk_overlap": 20}),
        SweepSpec(FRAMEWORK_DEFAULT),
        SweepSpec(LANGCHAIN_DEFAULT),
    ]
    return [spec for spec in specs if available is None or spec.splitter in available]


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
    fusion: str = "relative_score"
    returns: str = "chunks"
    context_budget: int = 0  # returns="parents" only

    def retrieval_label(self) -> str:
        mode = f"hybrid α={self.alpha:g}" if self.mode == "hybrid" else self.mode
        if self.mode == "hybrid" and self.fusion == "reciprocal_rank":
            mode += " rrf"
        returns = "" if self.returns == "chunks" else f" · {self.returns}"
        if self.context_budget:
            returns += f" ≤ {self.context_budget:,} tokens"
        return f"{mode} · k={self.top_k}{returns}"

    def settings(self) -> RetrievalSettings:
        return RetrievalSettings(
            top_k=self.top_k,
            mode=self.mode,
            alpha=self.alpha,
            fusion=self.fusion,
            returns=self.returns,
            context_budget=self.context_budget,
        )


@dataclass(frozen=True)
class TuneSpace:
    """Splitter sweeps × retrieval modes × alphas and fusions (hybrid only) × top_k values × what a hierarchy returns.

    ``returns`` applies to splitters with levels (hierarchical) only; the others return their chunks.
    """

    specs: tuple[SweepSpec, ...]
    modes: tuple[str, ...] = ("dense",)
    alphas: tuple[float, ...] = (0.5,)
    top_ks: tuple[int, ...] = (5,)
    fusions: tuple[str, ...] = ("relative_score",)
    returns: tuple[str, ...] = ("chunks",)
    views: tuple[str, ...] = (AS_LOADED,)
    # The context budgets a retrieval returning parents is tried with (0: none).
    budgets: tuple[int, ...] = DEFAULT_BUDGETS

    def check(self) -> None:
        """Raise ConfigError for an empty list or a value no retrieval or view accepts."""
        if (
            not self.specs
            or not self.modes
            or not self.top_ks
            or not self.returns
            or not self.views
            or not self.budgets
            or ("hybrid" in self.modes and not (self.alphas and self.fusions))
        ):
            raise ConfigError(
                "the space needs at least one splitter, mode, top_k, returns, view, context budget (and alpha, "
                "fusion for hybrid)"
            )
        for budget in self.budgets:
            RetrievalSettings(context_budget=budget)  # refused here as its declaration says
        for view in self.views:
            if view not in EMBED_VIEWS:
                raise ConfigError(f"EMBED view must be one of {', '.join(map(repr, EMBED_VIEWS))}, got {view!r}")
        for mode in self.modes:
            for top_k in self.top_ks:
                for alpha in self.alphas:
                    for fusion in self.fusions:
                        for returns in self.returns:
                            # refused here as its declaration says
                            RetrievalSettings(top_k=top_k, mode=mode, alpha=alpha, fusion=fusion, returns=returns)

    def setups(self) -> list[tuple[str, Any, dict[str, Any]]]:
        """(label, splitter, swept values) of every valid splitter configuration, under each EMBED view.

        A view other than "loaded" is a swept value (:data:`VIEW_KEY`) and is named in the label.
        """
        built = configurations(self.specs)
        return [
            (label, splitter, combination)
            if view == AS_LOADED
            else (f"{label} · EMBED {view}", splitter, {**combination, VIEW_KEY: view})
            for label, splitter, combination in built
            for view in self.views
        ]

    def arms(self, setups: Sequence[tuple[str, Any, dict[str, Any]]] | None = None) -> list[Arm]:
        setups = self.setups() if setups is None else setups
        retrievals = [
            (mode, alpha, fusion)
            for mode in self.modes
            for alpha in (self.alphas if mode == "hybrid" else (0.5,))
            for fusion in (self.fusions if mode == "hybrid" else ("relative_score",))
        ]
        return [
            Arm(setup, mode, alpha, top_k, fusion, returns, budget)
            for setup, (_, splitter, _) in enumerate(setups)
            for returns in (self.returns if getattr(splitter, "has_levels", False) else ("chunks",))
            for budget in (self.budgets if returns == "parents" else (0,))
            for mode, alpha, fusion in retrievals
            for top_k in self.top_ks
        ]


def default_space() -> TuneSpace:
    """The default space of :mod:`core.evaluation.tune_space`: what ``chunkscope tune`` searches when no splitter,
    sweep or setting is named, and the Tune tab's default."""
    from core.splitters import SPLITTERS

    specs = default_specs({cls.name for cls in SPLITTERS})
    return TuneSpace(
        tuple(specs),
        DEFAULT_MODES,
        DEFAULT_ALPHAS,
        DEFAULT_TOP_KS,
        DEFAULT_FUSIONS,
        DEFAULT_RETURNS,
        DEFAULT_VIEWS,
        DEFAULT_BUDGETS,
    )


def recommended_outside(space: TuneSpace) -> bool:
    """Whether measuring the recommended configuration adds a configuration to ``space`` (it is not one of its points)."""
    splitter = recommended_splitter()
    setups = space.setups()
    position = plain_position(setups, splitter)
    return position is None or plain_arm(position, splitter) not in space.arms(setups)


def plain_position(setups: Sequence[tuple[str, Any, dict[str, Any]]], splitter: Any) -> int | None:
    """Where ``splitter`` stands among ``setups`` with the EMBED view as loaded (None: not there)."""
    return next(
        (i for i, (_, other, swept) in enumerate(setups) if other == splitter and VIEW_KEY not in swept), None
    )


def view_metadata(swept: dict[str, Any]) -> dict[str, Any]:
    """The metadata settings a setup's EMBED view lays over the run's (empty: as loaded)."""
    return dict(EMBED_VIEWS[swept.get(VIEW_KEY, AS_LOADED)])


def recommended_note(space: TuneSpace, include: bool) -> str:
    """How a count of the space's configurations goes on: the recommended one beside them, or among them."""
    if not include:
        return ""
    return " and the recommended one" if recommended_outside(space) else ", the recommended one among them,"


def plain_arm(setup: int, splitter: Any) -> Arm:
    """The arm of a splitter configuration at the default retrieval settings."""
    plain = DEFAULT_RETRIEVAL
    hybrid = plain.mode == "hybrid"
    alpha, fusion = (plain.alpha, plain.fusion) if hybrid else (0.5, "relative_score")
    returns = plain.returns if getattr(splitter, "has_levels", False) else "chunks"
    budget = plain.context_budget if returns == "parents" else 0
    return Arm(setup, plain.mode, alpha, plain.top_k, fusion, returns, budget)
