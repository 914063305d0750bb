"""What the Evaluate page asks, runs and draws: the queries, the configurations or sweep, runs with progress, the results.

The evaluation itself is :mod:`core.evaluation` (one configuration) and
:mod:`core.sweep` (several, with progress); this module draws the page's forms,
feeds them the session's documents, shows their progress as a bar, and turns
their rows into a table and plotly figures.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.compare_view import LABELS, starting_slots
from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.documents import prepare_documents
from core.errors import ChunkScopeError, LoadError
from core.evaluation import METRIC_HELP, METRICS, EvalQuery, parse_queries
from core.schema import Document
from core.splitters import SPLITTERS
from core.sweep import SWEPT, SweepSpec, evaluate_configurations, evaluate_sweep, sweep_values, sweepable
from ui import cache, state, widgets
from ui.charts import SERIES_COLOURS
from ui.query import sample_queries

PAGE_KEY = "eval"
MODES = ("Configurations", "Sweep")
DEFAULT_SIZES = "256, 512, 1024"
DEFAULT_OVERLAPS = "0, 64"


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
            column_config={
                "loaded": st.column_config.CheckboxColumn("Doc loaded", help="Queries about other files are skipped")
            },
        )
    usable = sum(1 for q in queries if q.doc in loaded_names)
    skipped = len(queries) - usable
    st.caption(
        f"**{usable} of {len(queries)} {widgets.md_escape(source)}** have their document loaded"
        + (f"; {skipped} will be skipped" if skipped else "")
        + "."
    )
    if not usable:
        st.warning(
            "None of the queries is about a loaded document: load the files they name.", icon=":material/warning:"
        )
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
        options = [cls for cls in SPLITTERS if sweepable(cls)]
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
            base = widgets.param_widgets(cls, f"{PAGE_KEY}.sweep.{cls.name}", seed, exclude=SWEPT)
        try:
            sizes = sweep_values(sizes_text, "chunk_size values")
            overlaps = sweep_values(overlaps_text, "chunk_overlap values")
        except ChunkScopeError as exc:
            st.error(widgets.md_escape(str(exc)), icon=":material/error:")
            return Selection("Sweep", problems=(str(exc),))
        valid = sum(1 for s in sizes for o in overlaps if o < s)
        st.caption(
            f"{len(sizes)} × {len(overlaps)} = {len(sizes) * len(overlaps)} pairs, {valid} valid (overlap below size)."
        )
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
            "splitters": [[s.name, s.to_params()] for s in chosen.splitters]
            if chosen.kind == "Configurations"
            else None,
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
        on_click=state.request_evaluation,
    )
    return state.take_evaluation_request() and ready


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
            rows = evaluate_configurations(
                prepared, queries, chosen.splitters, retrieval=retrieval, embedder=embedder, report=report
            )
        else:
            rows = evaluate_sweep(
                prepared, queries, chosen.sweep, retrieval=retrieval, embedder=embedder, report=report
            )
    except ChunkScopeError as exc:
        bar.empty()
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()
    bar.empty()
    state.set_evaluation(
        {
            "kind": chosen.kind,
            "rows": rows,
            "signature": run_signature,
            "top_k": retrieval.top_k,
            "mode": retrieval.mode,
        }
    )


# -- results ---------------------------------------------------------------------------


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
        st.info(
            "The settings changed since this run: press **Run the evaluation** to update.", icon=":material/update:"
        )
    st.dataframe(
        results_table(rows), hide_index=True, width="stretch", column_config=_column_config(), key=f"{PAGE_KEY}.table"
    )
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
