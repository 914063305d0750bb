"""The Evaluate page's Tune section: a space to search, the Pareto front of quality against cost, one click to use a point.

The search is :func:`core.evaluation.tune.tune` within :class:`core.evaluation.tune.TuneBudget`; the front and the pick are by
the quality's mean over folds (:mod:`core.evaluation.folds`: in sample; the nested estimate is held out); what may vary and how its values are read
is :mod:`core.evaluation.sweep`'s (and the retrieval settings' own declarations). A point
picked on the chart (or in the list under it) can be loaded into the session's
configuration, which every other page then uses.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.documents import prepare_documents
from core.errors import ChunkScopeError
from core.evaluation.evaluate import EvalQuery
from core.evaluation.folds import DEFAULT_FOLDS, FOLD_KINDS, validation_summary
from core.evaluation.sweep import SweepSpec, sweep_values, sweepable, sweepable_params
from core.evaluation.tune import (
    COSTS,
    EXHAUSTIVE_BUDGET,
    QUALITIES,
    SEARCHES,
    TuneBudget,
    TuneSpace,
    default_space,
    exhaustive,
    recommended_note,
    retrieval_values,
    tune,
)
from core.evaluation.tune_space import DEFAULT_FUSIONS, DEFAULT_RETURNS
from core.schema import Document
from core.splitters import SPLITTERS, get_splitter
from ui import cache, state, widgets
from ui.charts import SERIES_COLOURS
from ui.evaluate_sweep import default_values

KEY = "eval.tune"
DEFAULT_SIZES = "128, 256, 512, 1024"
DEFAULT_TOP_KS = "3, 5"
MAX_VARIED = 3  # parameters per splitter: the combinations multiply
__all__ = ["pareto_figure", "tune_section"]


_NUMBER = st.column_config.NumberColumn
FRONT_COLUMNS = {
    "config": st.column_config.TextColumn("Configuration"),
    "fold_mean": _NUMBER(
        "Mean over folds (in sample)",
        format="%.3f",
        help="The mean over folds of each fold's score. In sample: these questions took part in choosing; "
        "only the nested estimate below is held out",
    ),
    "fold_spread": _NUMBER("± across folds", format="%.3f", help="Standard deviation of the folds' scores"),
    "in_sample": _NUMBER("In sample", format="%.3f", help="The score on every question (optimistic for a pick)"),
    "hit_rate": _NUMBER("Hit rate (in sample)", format="%.3f"),
    "mrr": _NUMBER("MRR (in sample)", format="%.3f"),
    "recall": _NUMBER("Recall (in sample)", format="%.3f"),
    "context_tokens": _NUMBER("Context tokens / query", format="%.0f"),
    "nodes": _NUMBER("Nodes"),
    "embed_tokens": _NUMBER("Embedding tokens", format="%d"),
    "embed_seconds": _NUMBER("Embedding s", format="%.2f", help="This run's; near 0 for chunks already embedded"),
    "truncated_share": _NUMBER(
        "Share truncated", format="%.2f", help="Share of the chunks longer than the model's window: embedded cut"
    ),
}


def tune_section(
    config: PipelineConfig, documents: Sequence[Document], queries: Sequence[EvalQuery], scope: str
) -> None:
    """The space and objectives, the run button, then the last run's front (if it was a tuning run)."""
    space, problems = space_form(config)
    quality, cost, search = objectives()
    validation = validation_form()
    budget = TuneBudget.from_params(widgets.param_widgets(TuneBudget, f"{KEY}.budget"))
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
            "objectives": [quality, cost, search, scope, validation],
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
            {**validation, "budget": budget},
            signature,
        )
    stored = state.evaluation()
    if not stored or stored.get("kind") != "Tune":
        st.info("Choose the space to search, then press **Search**.", icon=":material/travel_explore:")
        return
    show_front(stored, config, signature)


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
            "Sentence chunks of 128–1024 tokens (overlap 0 or 64); hierarchical chunks of 2048/256, 1024/256, "
            "1024/128 and 512/128 tokens whose leaves are searched and whose parents are returned or merged; "
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
    if not names:
        problems.append("choose at least one splitter")
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
            help="Hierarchical chunks of 2048/256 tokens, the leaves searched by hybrid retrieval and their parents "
            "returned: the best known untuned configuration, the yardstick a pick must clearly beat",
        )
    return {"folds_by": by, "folds": int(count), "include_default": default}


# -- running and showing ------------------------------------------------------------------


def run_and_store(documents, queries, space, config, scope, objectives, validation, signature) -> None:  # noqa: ANN001
    """Search under a progress bar and keep the result in the session; a failure is shown and ends this run."""
    quality, cost, search = objectives
    budget = validation.pop("budget")
    prepared = prepare_documents(documents, config)
    needs = validation["include_default"] or any(mode != "bm25" for mode in space.modes)
    embedder = cache.embedder() if needs else None
    bar = st.progress(0.0, text="Starting…")
    try:
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
            report=lambda fraction, text: bar.progress(min(max(fraction, 0.0), 1.0), text=widgets.md_escape(text)),
        )
    except ChunkScopeError as exc:
        bar.empty()
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()
    bar.empty()
    state.set_evaluation({"kind": "Tune", "result": result.to_dict(), "signature": signature})


def pareto_figure(result: dict[str, Any]) -> go.Figure:
    """Quality (mean over folds) against cost: every configuration measured on all queries, the front joined, the pick
    starred."""
    quality, cost = result["quality"], result["cost"]
    full = [row for row in result["rows"] if row["fold_mean"] is not None]
    others = [row for row in full if not row["on_front"]]
    figure = go.Figure()
    for rows, name, colour, mode in (
        (others, "Other configurations", "#b0b7c3", "markers"),
        (result["front"], "Pareto front", SERIES_COLOURS[0], "lines+markers"),
    ):
        figure.add_trace(
            go.Scatter(
                x=[row[cost] for row in rows],
                y=[row["fold_mean"] for row in rows],
                customdata=[row["id"] for row in rows],
                hovertext=[row["config"] for row in rows],
                hovertemplate="%{hovertext}<br>%{x:,.4g} · %{y:.3f}<extra></extra>",
                mode=mode,
                name=name,
                line={"shape": "hv", "color": colour},
                marker={"size": 11 if name == "Pareto front" else 8, "color": colour},
            )
        )
    pick = result["rows"][result["pick"]] if result.get("pick") is not None else None
    if pick is not None and pick["fold_mean"] is not None:
        # The pick may lie off the front: an untuned yardstick nothing was clearly better than (said below).
        figure.add_trace(
            go.Scatter(
                x=[pick[cost]],
                y=[pick["fold_mean"]],
                customdata=[pick["id"]],
                hovertext=[pick["config"]],
                hovertemplate="Pick: %{hovertext}<br>%{x:,.4g} · %{y:.3f}<extra></extra>",
                mode="markers",
                name="Pick",
                marker={"size": 18, "symbol": "star", "color": SERIES_COLOURS[2], "line": {"width": 1, "color": "#333"}},
            )
        )
    figure.update_layout(
        xaxis_title=COSTS[cost],
        yaxis_title=f"{QUALITIES[quality]}, mean over folds (in sample)",
        height=420,
        margin={"t": 30},
        legend={"orientation": "h", "y": -0.2},
        clickmode="event+select",
    )
    return figure


def _clicked() -> None:
    """The chart's selection callback: the clicked point becomes the picked configuration."""
    event = state.widget_value(f"{KEY}.chart") or {}
    points = (event.get("selection") or {}).get("points") or []
    if points:
        data = points[0].get("customdata")
        state.set_widget_value(f"{KEY}.pick", data[0] if isinstance(data, list) else data)


def show_front(stored: dict[str, Any], config: PipelineConfig, signature: str) -> None:
    result = stored["result"]
    st.divider()
    st.subheader(":material/scatter_plot: Pareto front", anchor=False)
    dropped = sum(1 for row in result["rows"] if row["queries"] < result["queries"])
    st.caption(
        f"{len(result['front'])} of {len(result['rows'])} configurations on the front · {result['queries']} queries · "
        f"{result['search']}"
        + (f" ({dropped} dropped on a sample of the queries)" if dropped else "")
        + f" · {result['embedded_texts']:,} texts embedded, the rest from the cache"
    )
    for line in validation_summary(result, QUALITIES[result["quality"]], quote=widgets.md_escape):
        st.caption(line)
    why = {"budget": "the time budget was spent", "interrupted": "interrupted"}.get(result["stopped"])
    notes = [f"Stopped ({why}) after {len(result['rows'])} of {result['space_size']} configurations."] if why else []
    notes += [
        f"Skipped {widgets.md_escape(s['config'])}: {widgets.md_escape(s['reason'])}" for s in result.get("skipped", [])
    ]
    for note in notes:
        st.warning(note, icon=":material/warning:")
    if stored["signature"] != signature:
        st.info("The settings changed since this search: press **Search** to update.", icon=":material/update:")
    st.plotly_chart(
        pareto_figure(result), width="stretch", key=f"{KEY}.chart", on_select=_clicked, selection_mode="points"
    )
    columns = ["config", "fold_mean", "fold_spread", "in_sample", "hit_rate", "mrr", "recall", "context_tokens"]
    columns += ["nodes", "embed_tokens", "embed_seconds", "truncated_share"]
    shown = [{**row, "in_sample": row[result["quality"]]} for row in result["front"]]
    st.dataframe(
        pd.DataFrame([{c: row[c] for c in columns} for row in shown]),
        hide_index=True,
        width="stretch",
        key=f"{KEY}.front",
        column_config=FRONT_COLUMNS,
    )
    full = [row for row in result["rows"] if row["fold_mean"] is not None]
    ids = [row["id"] for row in result["front"]] + [row["id"] for row in full if not row["on_front"]]
    labels = {row["id"]: row["config"] for row in result["rows"]}
    if not ids:
        return
    state.keep_valid(f"{KEY}.pick", ids, result["pick"] if result["pick"] in ids else ids[0])
    picked = st.selectbox(
        "Configuration (click a point to pick it)", ids, key=f"{KEY}.pick", format_func=lambda i: labels.get(i, str(i))
    )
    if picked is None:
        return
    row = result["rows"][picked]
    splitter, retrieval = _settings(row)
    if config.splitter == splitter and config.retrieval == retrieval:
        st.success("This is the session's configuration: the Chunks and Query pages use it.", icon=":material/check:")
    else:
        st.button(
            "Use this configuration",
            icon=":material/input:",
            key=f"{KEY}.load",
            on_click=_load,
            args=(splitter, retrieval),
            help="Make it the session's splitter and retrieval settings",
        )


def _settings(row: dict[str, Any]) -> tuple[Any, RetrievalSettings]:
    settings = row["settings"]
    splitter = get_splitter(settings["splitter"]["name"], **settings["splitter"]["params"])
    return splitter, RetrievalSettings.from_params(settings["retrieval"])


def _load(splitter: Any, retrieval: RetrievalSettings) -> None:
    state.set_config(state.config().replace(splitter=splitter, retrieval=retrieval))
