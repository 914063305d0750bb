"""What the Evaluate page asks, runs and draws: the queries, the configurations or sweep, runs with progress, the results.

The evaluation itself is :mod:`core.evaluation`; this module draws the page's
forms, feeds the evaluation the session's documents, reports progress while it
embeds, and turns its rows into a table and plotly figures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.config import PipelineConfig, RetrievalSettings
from core.documents import prepare_documents
from core.errors import ChunkScopeError, ConfigError, LoadError
from core.evaluation import EvalQuery, evaluate, parse_queries, sweep
from core.schema import Document
from core.splitters import SPLITTERS
from ui import cache, widgets
from ui.charts import SERIES_COLOURS
from ui.compare import settings_summary, starting_slots
from ui.query import sample_queries

PAGE_KEY = "eval"
RESULT_KEY = "eval.result"  # dict: kind, rows, signature, top_k, mode
RUN_REQUESTED = "eval.run_requested"
MODES = ("Configurations", "Sweep")
DEFAULT_SIZES = "256, 512, 1024"
DEFAULT_OVERLAPS = "0, 64"

# The metrics of a row (Evaluation.to_row), in the order a reader compares them.
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
LABELS = ("A", "B", "C", "D")
# (done, total, what is happening): how a run reports progress.
Report = Callable[[float, str], None]


@dataclass(frozen=True)
class SweepSpec:
    """One sweep: ``splitter`` at every chunk_size × chunk_overlap pair, the other parameters at ``base``."""

    splitter: str
    sizes: list[int]
    overlaps: list[int]
    base: dict[str, Any]


@dataclass(frozen=True)
class Selection:
    """What a run evaluates: the configurations' splitters, or one sweep. Any problem blocks the run."""

    kind: str
    splitters: tuple[Any, ...] = ()
    sweep: SweepSpec | None = None
    problems: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        return not self.problems and bool(self.splitters if self.kind == "Configurations" else self.sweep)


def sweepable() -> list[type]:
    """Splitters that declare both chunk_size and chunk_overlap (what a sweep varies)."""
    return [cls for cls in SPLITTERS if {"chunk_size", "chunk_overlap"} <= {spec.name for spec in cls.params()}]


def parse_sizes(text: str, name: str) -> list[int]:
    """``"256, 512 1024"`` -> ``[256, 512, 1024]``; anything else raises ConfigError naming ``name``."""
    pieces = [piece for piece in re.split(r"[,\s]+", text.strip()) if piece]
    if not pieces:
        raise ConfigError(f"{name}: give at least one whole number")
    values = []
    for piece in pieces:
        if not piece.isdigit():
            raise ConfigError(f"{name}: {piece!r} is not a whole number ≥ 0")
        values.append(int(piece))
    return sorted(set(values))


# -- the queries -----------------------------------------------------------------------


def queries_or_stop(loaded_names: set[str]) -> list[EvalQuery]:
    """Draw the queries (sample or uploaded) and how many are usable; with none usable, say so and end this run."""
    with st.expander("Queries", icon=":material/quiz:", expanded=False):
        st.caption(
            'A JSON list of {"query", "doc", "excerpts"}: the file that holds the answer and exact passages of it. '
            "The sample queries ship with the sample documents."
        )
        queries, source = _chosen_queries()
        st.dataframe(
            pd.DataFrame([{"query": q.query, "doc": q.doc, "loaded": q.doc in loaded_names} for q in queries]),
            hide_index=True,
            width="stretch",
            column_config={"loaded": st.column_config.CheckboxColumn("Doc loaded", help="Queries about other files are skipped")},
        )
    usable = sum(1 for q in queries if q.doc in loaded_names)
    skipped = len(queries) - usable
    st.caption(
        f"**{usable} of {len(queries)} {widgets.md_escape(source)}** have their document loaded"
        + (f"; {skipped} will be skipped" if skipped else "")
        + "."
    )
    if not usable:
        st.warning("None of the queries is about a loaded document: load the files they name.", icon=":material/warning:")
        st.stop()
    return queries


def _chosen_queries() -> tuple[list[EvalQuery], str]:
    """The uploaded queries file if one is given and valid (else the samples, with the reason shown), and its name."""
    upload = st.file_uploader("Use your own queries file", type=["json"], key=f"{PAGE_KEY}.queries_file")
    if upload is None:
        return list(sample_queries()), "sample queries"
    try:
        return parse_queries(json.loads(upload.getvalue().decode("utf-8")), upload.name), upload.name
    except (ValueError, UnicodeDecodeError) as exc:
        st.error(
            f"{widgets.md_escape(upload.name)} is not valid JSON ({widgets.md_escape(str(exc))}); using the sample queries.",
            icon=":material/error:",
        )
    except LoadError as exc:
        st.error(f"{widgets.md_escape(str(exc))}; using the sample queries.", icon=":material/error:")
    return list(sample_queries()), "sample queries"


# -- what to evaluate ------------------------------------------------------------------


def selection(config: PipelineConfig) -> Selection:
    """Draw the mode switch and then the configurations' forms or the sweep's: what a run would evaluate."""
    mode_key = f"{PAGE_KEY}.mode"
    if st.session_state.get(mode_key) not in MODES:
        st.session_state[mode_key] = MODES[0]
    kind = st.segmented_control("What to evaluate", MODES, key=mode_key) or MODES[0]
    return configurations(config) if kind == "Configurations" else sweep_form(config)


def configurations(config: PipelineConfig) -> Selection:
    """One bordered form per configuration (A is the session's splitter), side by side."""
    count_key = f"{PAGE_KEY}.count"
    choices = list(range(1, len(LABELS) + 1))
    if st.session_state.get(count_key) not in choices:
        st.session_state[count_key] = 2
    count = st.segmented_control("Configurations", choices, key=count_key, format_func=lambda n: f"{n}") or 2
    starts = starting_slots(SPLITTERS, (config.splitter.name, config.splitter.to_params()))
    splitters, problems = [], []
    for slot, column in enumerate(st.columns(count, gap="small")):
        with column.container(border=True):
            label = LABELS[slot]
            st.markdown(f"**Configuration {label}**" + (" · the session's splitter" if slot == 0 else ""))
            default_name, default_params = starts[slot]
            cls = widgets.component_picker(SPLITTERS, "Splitter", f"{PAGE_KEY}.{slot}.splitter", default=default_name)
            seed = default_params if cls.name == default_name else None
            values = widgets.param_widgets(cls, f"{PAGE_KEY}.{slot}.{cls.name}", seed, columns=2 if count <= 2 else 1)
            splitter, problem = widgets.try_build(cls, values)
            if problem:
                st.error(widgets.md_escape(problem), icon=":material/error:")
                problems.append(f"configuration {label}: {problem}")
            else:
                splitters.append(splitter)
    return Selection("Configurations", splitters=tuple(splitters), problems=tuple(problems))


def sweep_form(config: PipelineConfig) -> Selection:
    """A splitter, the chunk_size and chunk_overlap lists, and its other parameters (the same for every pair)."""
    with st.container(border=True):
        options = sweepable()
        default = config.splitter.name if config.splitter.name in {c.name for c in options} else options[0].name
        left, right = st.columns([1, 1], gap="large")
        with left:
            cls = widgets.component_picker(options, "Splitter", f"{PAGE_KEY}.sweep.splitter", default=default)
            sizes_text = st.text_input(
                "chunk_size values", DEFAULT_SIZES, key=f"{PAGE_KEY}.sweep.sizes", help="Comma-separated whole numbers"
            )
            overlaps_text = st.text_input(
                "chunk_overlap values",
                DEFAULT_OVERLAPS,
                key=f"{PAGE_KEY}.sweep.overlaps",
                help="Comma-separated whole numbers; pairs whose overlap is not below the size are skipped",
            )
        with right:
            st.caption("Other parameters, the same for every pair:")
            seed = config.splitter.to_params() if cls.name == config.splitter.name else None
            base = widgets.param_widgets(cls, f"{PAGE_KEY}.sweep.{cls.name}", seed, exclude=("chunk_size", "chunk_overlap"))
        try:
            sizes = parse_sizes(sizes_text, "chunk_size values")
            overlaps = parse_sizes(overlaps_text, "chunk_overlap values")
        except ChunkScopeError as exc:
            st.error(widgets.md_escape(str(exc)), icon=":material/error:")
            return Selection("Sweep", problems=(str(exc),))
        valid = sum(1 for s in sizes for o in overlaps if o < s)
        st.caption(f"{len(sizes)} × {len(overlaps)} = {len(sizes) * len(overlaps)} pairs, {valid} valid (overlap below size).")
        return Selection("Sweep", sweep=SweepSpec(cls.name, sizes, overlaps, base))


def retrieval_settings(config: PipelineConfig) -> RetrievalSettings | None:
    """The retrieval form (alpha only for hybrid), seeded from the session; an invalid one is shown and gives None."""
    st.markdown("**Retrieval**")
    key = f"{PAGE_KEY}.retrieval"
    mode_now = st.session_state.get(widgets.widget_key(key, "mode"), config.retrieval.mode)
    raw = widgets.param_widgets(
        RetrievalSettings,
        key,
        config.retrieval.to_params(),
        exclude=() if mode_now == "hybrid" else ("alpha",),
        columns=3,
    )
    raw.setdefault("alpha", config.retrieval.alpha)
    retrieval, problem = widgets.try_build(RetrievalSettings, raw)
    if problem:
        st.error(widgets.md_escape(problem), icon=":material/error:")
    return retrieval


def signature(
    chosen: Selection,
    retrieval: RetrievalSettings | None,
    queries: Sequence[EvalQuery],
    loaded_names: set[str],
    config: PipelineConfig,
) -> str:
    """What results would be computed from, as one string: results stored under another one are stale."""
    return json.dumps(
        {
            "kind": chosen.kind,
            "splitters": [[s.name, s.to_params()] for s in chosen.splitters] if chosen.kind == "Configurations" else None,
            "sweep": asdict(chosen.sweep) if chosen.sweep else None,
            "retrieval": retrieval.to_params() if retrieval else None,
            "queries": [[q.query, q.doc, list(q.excerpts)] for q in queries],
            "documents": sorted(loaded_names),
            # Loader options, metadata settings and extractors change what gets split and embedded.
            "pipeline": {k: v for k, v in config.to_dict().items() if k in ("loaders", "metadata", "extractors")},
        },
        sort_keys=True,
        default=str,
    )


# -- running ---------------------------------------------------------------------------


def _request_run() -> None:
    st.session_state[RUN_REQUESTED] = True


def run_button(ready: bool) -> bool:
    """Draw the run button; True once after it was pressed (and the run is possible)."""
    # The click is remembered by a callback: a rerun of the script (e.g. by the app frame) would lose a button's value.
    st.button(
        "Run the evaluation",
        type="primary",
        icon=":material/play_arrow:",
        disabled=not ready,
        help="Splits, embeds and retrieves for every configuration: it takes a while",
        key=f"{PAGE_KEY}.run",
        on_click=_request_run,
    )
    return bool(st.session_state.pop(RUN_REQUESTED, False)) and ready


def run_and_store(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    chosen: Selection,
    retrieval: RetrievalSettings,
    config: PipelineConfig,
    run_signature: str,
) -> None:
    """Run the evaluation under a progress bar and keep its rows in the session; a failure is shown and ends this run."""
    # The session's metadata settings decide what the embedding model reads, as on every other page.
    prepared = prepare_documents(documents, config)
    embedder = cache.embedder() if retrieval.mode != "bm25" else None
    bar = st.progress(0.0, text="Starting…")

    def report(fraction: float, text: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=text)

    try:
        if chosen.sweep is None:
            rows = run_configurations(prepared, queries, chosen.splitters, retrieval=retrieval, embedder=embedder, report=report)
            for row, splitter in zip(rows, chosen.splitters, strict=True):
                row["settings"] = settings_summary(splitter)
        else:
            rows = run_sweep(prepared, queries, chosen.sweep, retrieval=retrieval, embedder=embedder, report=report)
    except ChunkScopeError as exc:
        bar.empty()
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()
    bar.empty()
    st.session_state[RESULT_KEY] = {
        "kind": chosen.kind,
        "rows": rows,
        "signature": run_signature,
        "top_k": retrieval.top_k,
        "mode": retrieval.mode,
    }


def _retrieval_arguments(retrieval: RetrievalSettings) -> dict[str, Any]:
    """The keyword arguments ``core.evaluation.evaluate`` and ``sweep`` take from the retrieval settings."""
    return {"top_k": retrieval.top_k, "mode": retrieval.mode, "alpha": retrieval.alpha}


def run_configurations(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    splitters: Sequence[Any],
    *,
    retrieval: RetrievalSettings,
    embedder: Any,
    report: Report,
) -> list[dict[str, Any]]:
    """One row per splitter (``Evaluation.to_row`` plus its label), reporting progress as it goes.

    Each configuration's nodes are embedded first with a progress callback; the
    embedder keeps the vectors (by text), so ``evaluate`` then finds them cached.
    """
    from core.embeddings import embed_nodes

    rows = []
    count = len(splitters)
    for index, splitter in enumerate(splitters):
        label = LABELS[index] if index < len(LABELS) else str(index + 1)
        name = f"{label} ({index + 1} of {count})"
        if retrieval.mode != "bm25":
            nodes = splitter.split(list(documents))

            def embedding(done: int, total: int, index: int = index, name: str = name) -> None:
                report((index + 0.8 * done / max(total, 1)) / count, f"Configuration {name}: embedding {done:,} of {total:,} chunks")

            report(index / count, f"Configuration {name}: embedding {len(nodes):,} chunks")
            embed_nodes(nodes, embedder, progress=embedding)

        def scoring(done: int, total: int, index: int = index, name: str = name) -> None:
            report((index + 0.8 + 0.2 * done / max(total, 1)) / count, f"Configuration {name}: scoring query {done} of {total}")

        result = evaluate(documents, queries, splitter, embedder=embedder, progress=scoring, **_retrieval_arguments(retrieval))
        rows.append({"config": label, **result.to_row()})
    report(1.0, "Done")
    return rows


def run_sweep(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    spec: SweepSpec,
    *,
    retrieval: RetrievalSettings,
    embedder: Any,
    report: Report,
) -> list[dict[str, Any]]:
    """``core.evaluation.sweep``, one progress step per evaluated pair; rows labelled ``size/overlap``."""

    def progress(done: int, total: int) -> None:
        report(done / max(total, 1), f"Evaluated {done} of {total} chunk_size × chunk_overlap pairs")

    report(0.0, "Splitting and embedding the first pair…")
    rows = sweep(
        documents, queries, spec.splitter, spec.sizes, spec.overlaps, base_params=spec.base, embedder=embedder,
        progress=progress, **_retrieval_arguments(retrieval),
    )
    return [{"config": f"{row['chunk_size']}/{row['chunk_overlap']}", **row} for row in rows]


# -- results ---------------------------------------------------------------------------


def stored_result() -> dict[str, Any] | None:
    """The last run's result (kind, rows, signature, top_k, mode), if any."""
    return st.session_state.get(RESULT_KEY)


def show_results(result: dict[str, Any], current_signature: str) -> None:
    """The results heading, a note if the settings changed since, the table, and the bars (with a heatmap for a sweep)."""
    st.divider()
    st.subheader(":material/leaderboard: Results", anchor=False)
    rows = result["rows"]
    queries_scored = rows[0]["queries"] if rows else 0
    st.caption(
        f"{len(rows)} configuration{'s' if len(rows) != 1 else ''} · {queries_scored} queries each · "
        f"top {result['top_k']} by {result['mode']} retrieval"
    )
    if result["signature"] != current_signature:
        st.info("The settings changed since this run: press **Run the evaluation** to update.", icon=":material/update:")
    st.dataframe(results_table(rows), hide_index=True, width="stretch", column_config=_column_config(), key=f"{PAGE_KEY}.table")
    if result["kind"] == "Sweep" and rows:
        bars_col, heat_col = st.columns([1, 1], gap="large")
        with heat_col:
            metric_key = f"{PAGE_KEY}.heatmap_metric"
            if st.session_state.get(metric_key) not in METRICS:
                st.session_state[metric_key] = "mrr"
            metric = st.selectbox("Heatmap metric", list(METRICS), key=metric_key, format_func=METRICS.get)
            st.plotly_chart(heatmap_figure(rows, metric), width="stretch", key=f"{PAGE_KEY}.heatmap")
        with bars_col:
            st.plotly_chart(metrics_figure(rows), width="stretch", key=f"{PAGE_KEY}.bars")
    else:
        st.plotly_chart(metrics_figure(rows), width="stretch", key=f"{PAGE_KEY}.bars")


def results_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The rows as a frame: labels first, then the metrics, the chunk count and whatever else a row holds."""
    table = pd.DataFrame(rows)
    first = ["config", "splitter", "settings"] if "settings" in table else ["config", "splitter"]
    metric_columns = list(METRICS)
    rest = [c for c in table.columns if c not in {*first, *metric_columns, "nodes", "queries", "top_k", "mode"}]
    return table[[*first, *metric_columns, "nodes", *rest]]


def _column_config() -> dict[str, Any]:
    column_config = {
        "config": st.column_config.TextColumn("Config", help="A, B… or chunk_size/chunk_overlap for a sweep"),
        "splitter": st.column_config.TextColumn("Splitter"),
        "settings": st.column_config.TextColumn("Settings", help="Parameters changed from the splitter's defaults"),
        "nodes": st.column_config.NumberColumn("Chunks", help="How many nodes the configuration made"),
    }
    for metric, title in METRICS.items():
        column_config[metric] = st.column_config.NumberColumn(title, format="%.3f", help=METRIC_HELP[metric])
    return column_config


# -- figures ---------------------------------------------------------------------------

_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    "font": {"size": 12},
    "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},
}
_METRIC_COLOURS = (*SERIES_COLOURS, "#0891b2")


def metrics_figure(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """Grouped bars: one group per configuration, one bar per metric (all in [0, 1])."""
    configs = [str(row["config"]) for row in rows]
    figure = go.Figure()
    for index, (metric, title) in enumerate(METRICS.items()):
        figure.add_trace(
            go.Bar(
                x=configs,
                y=[row[metric] for row in rows],
                name=title,
                marker_color=_METRIC_COLOURS[index % len(_METRIC_COLOURS)],
                # Precision and IoU are often tiny next to hit rate: the number keeps them readable.
                text=[f"{row[metric]:.3f}" for row in rows] if len(rows) <= 4 else None,
                textposition="outside",
                textfont={"size": 10},
                hovertemplate=f"%{{x}}<br>{title} %{{y:.3f}}<extra></extra>",
            )
        )
    figure.update_layout(
        **{**_LAYOUT, "legend": {"orientation": "h", "yanchor": "top", "y": -0.12, "xanchor": "left", "x": 0}},
        height=380,
        barmode="group",
        title="Metrics per configuration",
        yaxis={"title": "score", "range": [0, 1.1]},
        xaxis={"type": "category"},
    )
    return figure


def heatmap_figure(rows: Sequence[dict[str, Any]], metric: str) -> go.Figure:
    """chunk_size (rows) × chunk_overlap (columns) coloured by ``metric``; pairs not evaluated stay blank."""
    sizes = sorted({row["chunk_size"] for row in rows})
    overlaps = sorted({row["chunk_overlap"] for row in rows})
    value = {(row["chunk_size"], row["chunk_overlap"]): row[metric] for row in rows}
    z = [[value.get((size, overlap)) for overlap in overlaps] for size in sizes]
    text = [["" if v is None else f"{v:.3f}" for v in line] for line in z]
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=[str(o) for o in overlaps],
            y=[str(s) for s in sizes],
            text=text,
            texttemplate="%{text}",
            colorscale="Blues",
            zmin=0,
            zmax=1,
            colorbar={"title": METRICS[metric]},
            hovertemplate="chunk_size %{y}<br>chunk_overlap %{x}<br>" + METRICS[metric] + " %{z:.3f}<extra></extra>",
        )
    )
    figure.update_layout(
        **_LAYOUT,
        height=max(260, 90 + 60 * len(sizes)),
        title=f"{METRICS[metric]} by chunk size and overlap",
        xaxis={"title": "chunk_overlap", "type": "category"},
        yaxis={"title": "chunk_size", "type": "category"},
    )
    return figure
