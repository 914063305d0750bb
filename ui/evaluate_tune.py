"""The Evaluate page's Tune section: a space to search, the objectives and folds, the run (the front: ``ui.tune_front``).

The search is :func:`core.evaluation.tune.tune` within :class:`core.evaluation.tune.TuneBudget`; the front and the pick are by
the quality's mean over folds (:mod:`core.evaluation.folds`: in sample; the nested estimate is held out); what may vary and how its values are read
is :mod:`core.evaluation.sweep`'s (and the retrieval settings' own declarations); the default space is
:mod:`core.evaluation.tune_space`'s, the CLI's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import streamlit as st

from core.config import PipelineConfig
from core.documents import prepare_documents
from core.errors import ChunkScopeError
from core.evaluation.folds import DEFAULT_FOLDS, FOLD_KINDS
from core.evaluation.queries import EvalQuery
from core.evaluation.sweep import SweepSpec, sweep_values, sweepable, sweepable_params
from core.evaluation.tune import (
    CONTEXT_CAPS,
    COSTS,
    EXHAUSTIVE_BUDGET,
    QUALITIES,
    SEARCHES,
    TuneBudget,
    exhaustive,
    tune,
)
from core.evaluation.tune_space import (
    DEFAULT_BUDGETS,
    DEFAULT_FUSIONS,
    DEFAULT_RETURNS,
    DEFAULT_VIEWS,
    EMBED_VIEWS,
    HIERARCHIES,
    TuneSpace,
    default_space,
    hierarchy_sizes,
    recommended_note,
    retrieval_values,
)
from core.evaluation.with_extractors import compare_chosen
from core.extractors.llm import llm_extractors
from core.schema import Document
from core.splitters import SPLITTERS
from ui import cache, state, widgets
from ui.evaluate import cancelled_note, progress_bar
from ui.evaluate_sweep import default_values
from ui.tune_front import show_front

KEY = "eval.tune"
DEFAULT_SIZES = "128, 256, 512, 1024"
DEFAULT_TOP_KS = "3, 5"
MAX_VARIED = 3  # parameters per splitter: the combinations multiply
__all__ = ["tune_section"]


def tune_section(
    config: PipelineConfig, documents: Sequence[Document], queries: Sequence[EvalQuery], scope: str
) -> None:
    """The space and objectives, the run button, then the last run's front (if it was a tuning run)."""
    space, problems = space_form(config)
    quality, cost, search = objectives()
    validation = validation_form()
    budget = TuneBudget.from_params(widgets.param_widgets(TuneBudget, f"{KEY}.budget"))
    compare = extractors_option(config)
    if space is not None:
        count = len(space.arms())
        way = (
            "every one on every query"
            if search == "exhaustive" or (search == "auto" and exhaustive(count, len(queries)))
            else "successive halving on a growing sample of the queries"
        )
        extra = recommended_note(space, validation["include_default"])
        st.caption(f"{count} configurations{extra} to search: {way}.")
    for problem in problems:
        st.error(widgets.md_escape(problem), icon=":material/error:")
    signature = json.dumps(
        {
            "space": asdict(space) if space else None,
            "objectives": [quality, cost, search, scope, validation, compare],
            "queries": [[q.query, q.doc, list(q.excerpts)] for q in queries],
            "documents": sorted(str(doc.metadata.get("file_name")) for doc in documents),
            "pipeline": {k: v for k, v in config.to_dict().items() if k in ("loaders", "metadata", "extractors")},
        },
        sort_keys=True,
        default=str,
    )
    st.button(
        "Search",
        type="primary",
        icon=":material/travel_explore:",
        disabled=space is None or bool(problems),
        help="Splits and embeds each splitter configuration once, then scores every retrieval setting",
        key=f"{KEY}.run",
        on_click=state.request_evaluation,
    )
    if state.take_evaluation_request() and space is not None and not problems:
        run_and_store(
            documents,
            queries,
            space,
            config,
            scope,
            (quality, cost, search),
            {**validation, "budget": budget, "compare": compare},
            signature,
        )
    cancelled_note()
    stored = state.evaluation()
    if not stored or stored.get("kind") != "Tune":
        st.info("Choose the space to search, then press **Search**.", icon=":material/travel_explore:")
        return
    show_front(stored, config, signature, KEY)


# -- the space ------------------------------------------------------------------------------


SPACES = {
    "default": "The default space (what chunkscope tune searches)",
    "own": "My own: splitters, values and retrieval settings to try",
}


def space_form(config: PipelineConfig) -> tuple[TuneSpace | None, list[str]]:
    """The default space, or one's own: the splitters and their varied parameters, then the retrieval lists."""
    state.keep_valid(f"{KEY}.space", SPACES, "default")
    chosen = st.radio("Space", list(SPACES), format_func=SPACES.get, key=f"{KEY}.space", horizontal=True)
    if chosen == "default":
        space = default_space()
        st.caption(
            "Sentence chunks of 128–1024 tokens (overlap 0 or 64); hierarchical chunks of "
            f"{hierarchy_sizes()} tokens whose leaves are searched and whose parents are returned or merged; "
            "LlamaIndex's SentenceSplitter() at its defaults. Dense, BM25 and hybrid retrieval (alpha 0.3, 0.5, "
            "0.7; min-max weighted or reciprocal rank fusion), top 5."
        )
        return space, []
    return _own_space(config)


def _own_space(config: PipelineConfig) -> tuple[TuneSpace | None, list[str]]:
    """The splitters and their varied parameters, then the retrieval lists: the space, or the problems with it."""
    options = [cls.name for cls in SPLITTERS if sweepable(cls)]
    chosen_key = f"{KEY}.splitters"
    state.keep_valid(chosen_key, options, [config.splitter.name] if config.splitter.name in options else options[:1])
    names = st.multiselect("Splitters", options, key=chosen_key, help="Each is tried with the values below")
    specs, problems = [], []
    for column, name in zip(st.columns(max(len(names), 1), gap="small"), names, strict=False):
        with column.container(border=True):
            spec, problem = _splitter_space(config, name)
            if problem:
                problems.append(f"{name}: {problem}")
            elif spec is not None:
                specs.append(spec)
    left, middle, right = st.columns(3, gap="small")
    texts = {
        "mode": left.multiselect(
            "Retrieval modes", ["dense", "bm25", "hybrid"], default=[config.retrieval.mode], key=f"{KEY}.modes"
        ),
        "top_k": middle.text_input("top_k values", DEFAULT_TOP_KS, key=f"{KEY}.top_ks"),
    }
    if "hybrid" in texts["mode"]:
        texts["alpha"] = right.text_input(
            "Hybrid alphas", "0.3, 0.5, 0.7", key=f"{KEY}.alphas", help="The dense score's weight in hybrid mode, 0-1"
        )
        texts["fusion"] = right.multiselect(
            "Hybrid fusions", list(DEFAULT_FUSIONS), default=list(DEFAULT_FUSIONS), key=f"{KEY}.fusions"
        )
    if any(getattr(SPLITTERS.get_class(name), "has_levels", False) for name in names):
        texts["returns"] = middle.multiselect(
            "A hierarchy returns",
            ["chunks", "parents", "merged"],
            default=list(DEFAULT_RETURNS),
            key=f"{KEY}.returns",
            help="For splitters with levels: every chunk, the leaves' parents, or leaves merged into parents",
        )
        if "parents" in texts["returns"]:
            texts["context_budget"] = middle.text_input(
                "Context budgets (tokens)",
                ", ".join(str(budget) for budget in DEFAULT_BUDGETS),
                key=f"{KEY}.budgets",
                help="Returning parents: at most this many tokens of context per query (parents while they fit, "
                "else the leaf); 0 means no budget",
            )
    views = left.multiselect(
        "What the embedding model reads",
        list(EMBED_VIEWS),
        default=list(DEFAULT_VIEWS),
        key=f"{KEY}.views",
        help="EMBED views to try: loaded (every key the loader shows), text (the chunk alone), title, "
        "title+section (the title and the section path a chunk starts in), loaded+section",
    )
    if not names:
        problems.append("choose at least one splitter")
    if not views:
        problems.append("choose at least one view of what the embedding model reads")
    if not texts["mode"]:
        problems.append("choose at least one retrieval mode")
    if problems:
        return None, problems
    try:
        space = TuneSpace(
            tuple(specs),
            tuple(retrieval_values("mode", texts["mode"])),
            tuple(retrieval_values("alpha", texts.get("alpha", "0.5"))),
            tuple(retrieval_values("top_k", texts["top_k"])),
            tuple(retrieval_values("fusion", texts.get("fusion") or ["relative_score"])),
            tuple(retrieval_values("returns", texts.get("returns") or ["chunks"])),
            tuple(views),
            tuple(retrieval_values("context_budget", texts.get("context_budget", "0"))),
        )
        space.check()
        space.setups()
    except ChunkScopeError as exc:
        return None, [str(exc)]
    return space, []


def _splitter_space(config: PipelineConfig, name: str) -> tuple[SweepSpec | None, str]:
    """One splitter's varied parameters and their values; the rest from the session's configuration (or defaults)."""
    cls = SPLITTERS.get_class(name)
    specs = {spec.name: spec for spec in sweepable_params(cls)}
    seed = config.splitter.to_params() if name == config.splitter.name else {}
    st.markdown(f"**{widgets.md_escape(name)}**")
    varied = st.multiselect(
        "Parameters to vary",
        list(specs),
        default=[p for p in ("chunk_size", "chunk_overlap") if p in specs],
        max_selections=MAX_VARIED,
        key=f"{KEY}.{name}.params",
    )
    texts = {}
    for param in varied:
        start = (
            DEFAULT_SIZES
            if param == "chunk_size"
            else default_values(specs[param], seed.get(param, specs[param].default))
        )
        texts[param] = st.text_input(f"{param} values", start, key=f"{KEY}.{name}.values.{param}")
    st.caption("Other parameters: " + ("the session's." if seed else "their defaults."))
    try:
        grid = {param: sweep_values(texts[param], f"{param} values", specs[param]) for param in varied}
    except ChunkScopeError as exc:
        return None, str(exc)
    base = {key: value for key, value in seed.items() if key not in grid}
    return SweepSpec(name, grid, base), ""


def objectives() -> tuple[str, str, str]:
    """The quality to maximise, the cost to minimise and how to search."""
    left, middle, right = st.columns(3, gap="small")
    state.keep_valid(f"{KEY}.quality", QUALITIES, "mrr")
    state.keep_valid(f"{KEY}.cost", COSTS, "context_tokens")
    state.keep_valid(f"{KEY}.search", SEARCHES, "auto")
    quality = left.selectbox("Quality (maximised)", list(QUALITIES), key=f"{KEY}.quality", format_func=QUALITIES.get)
    cost = middle.selectbox(
        "Cost (minimised)",
        list(COSTS),
        key=f"{KEY}.cost",
        format_func=COSTS.get,
        help="Context tokens: what the LLM is sent per query (the retrieved chunks' LLM views)",
    )
    search = right.selectbox(
        "Search",
        SEARCHES,
        key=f"{KEY}.search",
        help=f"auto: every configuration on every query up to {EXHAUSTIVE_BUDGET:,} pairs of them, else halving",
    )
    return quality, cost, search


def validation_form() -> dict[str, Any]:
    """How the questions are folded for the held-out scores, and whether the default configuration is measured."""
    left, middle, right = st.columns(3, gap="small")
    state.keep_valid(f"{KEY}.folds_by", FOLD_KINDS, "document")
    by = left.selectbox(
        "Folds by",
        FOLD_KINDS,
        key=f"{KEY}.folds_by",
        help="document: a held-out fold asks about documents the choice never saw. Folds declared in the "
        'queries file (a "fold" on every entry) are used instead',
    )
    count = middle.number_input("Folds", min_value=2, max_value=20, value=DEFAULT_FOLDS, key=f"{KEY}.folds")
    with right:
        default = st.checkbox(
            "Measure the recommended configuration",
            value=True,
            key=f"{KEY}.default",
            help=f"Hierarchical chunks of {hierarchy_sizes(HIERARCHIES[:1])} tokens, the leaves searched by hybrid "
            "retrieval and their parents returned: the best known untuned configuration and the app's default, the "
            "yardstick a pick must clearly beat",
        )
        capped = st.checkbox(
            "Read no more than LlamaIndex's defaults",
            value=False,
            key=f"{KEY}.context_cap",
            help=CONTEXT_CAPS["framework"].capitalize(),
        )
    cap = "framework" if capped else "none"
    return {"folds_by": by, "folds": int(count), "include_default": default, "context_cap": cap}


# -- running and showing ------------------------------------------------------------------


def run_and_store(documents, queries, space, config, scope, objectives, validation, signature) -> None:  # noqa: ANN001
    """Search under a progress bar and keep the result in the session; a failure is shown and ends this run."""
    quality, cost, search = objectives
    budget = validation.pop("budget")
    compare = validation.pop("compare")
    prepared = prepare_documents(documents, config)
    needs = validation["include_default"] or any(mode != "bm25" for mode in space.modes)
    embedder = cache.embedder() if needs else None
    asks = compare and bool(llm_extractors(config.extractors))
    with progress_bar(cancellable=asks) as report:
        result = tune(
            prepared,
            queries,
            space,
            embedder=embedder,
            scope=scope,
            quality=quality,
            cost=cost,
            search=search,
            **validation,
            budget=budget.seconds(),
            # Inside a configuration too: "256/0: embedding chunks 120 of 343", the semantic splitter's sentences.
            report=report,
        )
        data = result.to_dict()
        if compare and result.pick is not None and result.stopped is None:
            # On the documents as loaded: each side prepares them with its configuration (a bounded child asks the LLM).
            data["extractors"] = compare_chosen(
                documents,
                queries,
                [result.rows[result.pick]],
                config,
                embedder=embedder,
                scope=scope,
                report=lambda fraction, text: report(fraction, f"The pick with / without extractors: {text}"),
                bounded=True,
            )
    state.set_evaluation({"kind": "Tune", "result": data, "signature": signature})


def extractors_option(config: PipelineConfig) -> bool:
    """Whether to score the pick with the session's extractors and without them (offered when it has some)."""
    if not config.extractors:
        return False
    names = ", ".join(extractor.name for extractor in config.extractors)
    chosen = st.checkbox(
        "Then score the pick with / without the configuration's extractors",
        key=f"{KEY}.extractors",
        help="As 'With / without extractors' scores a configuration, once the search is done: not a dimension of it.",
    )
    asking = llm_extractors(config.extractors)
    note = f"Extractors: {names}."
    if asking:
        note += (
            f" The LLM ones ask {config.llm.describe()}: one call per chunk of the pick per extractor (more for "
            "llm_title's), the replies already cached asked again by none; the table says what was sent."
        )
    st.caption(widgets.md_escape(note))
    return bool(chosen)
