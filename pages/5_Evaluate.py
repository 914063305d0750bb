"""Evaluate: how well splitter configurations serve a set of queries with known answers.

Pick several configurations (or sweep chunk_size × chunk_overlap), the retrieval
settings, and run: every configuration splits the session's documents, embeds
the chunks and retrieves for each query; the table and charts show hit rate@k,
MRR and the token-level recall, precision and IoU against the reference
excerpts (``core.evaluation``). Running is explicit because it embeds.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.config import RetrievalSettings
from core.documents import prepare_documents
from core.errors import ChunkScopeError, LoadError
from core.evaluation import parse_queries
from core.splitters import SPLITTERS
from ui import cache, state, widgets
from ui import evaluate as evaluate_ui
from ui.compare import settings_summary, starting_slots
from ui.page import documents_or_stop, setup_page
from ui.query import sample_queries

PAGE_KEY = "eval"
RESULT_KEY = "eval.result"  # dict: kind, rows, signature, top_k, mode
RUN_REQUESTED = "eval.run_requested"
MODES = ("Configurations", "Sweep")
DEFAULT_SIZES = "256, 512, 1024"
DEFAULT_OVERLAPS = "0, 64"

setup_page()
st.title("Evaluate", anchor=False)
st.markdown(
    "Score splitter configurations against queries whose answers are known: for each query, does the "
    "top-k hold the reference text (hit rate, MRR), and how much of what is retrieved is that text "
    "(recall, precision, IoU over characters)? Run several configurations side by side, or sweep "
    "chunk size × overlap."
)

config = state.config()
documents = documents_or_stop(config)

# -- the queries ------------------------------------------------------------------------

loaded_names = {str(doc.metadata.get("file_name")) for doc in documents}
with st.expander("Queries", icon=":material/quiz:", expanded=False):
    st.caption(
        'A JSON list of {"query", "doc", "excerpts"}: the file that holds the answer and exact passages of it. '
        "The sample queries ship with the sample documents."
    )
    upload = st.file_uploader("Use your own queries file", type=["json"], key=f"{PAGE_KEY}.queries_file")
    queries = list(sample_queries())
    source = "sample queries"
    if upload is not None:
        try:
            queries = parse_queries(json.loads(upload.getvalue().decode("utf-8")), upload.name)
            source = upload.name
        except (ValueError, UnicodeDecodeError) as exc:
            st.error(f"{upload.name} is not valid JSON ({exc}); using the sample queries.", icon=":material/error:")
        except LoadError as exc:
            st.error(f"{exc}; using the sample queries.", icon=":material/error:")
    usable = [q for q in queries if q.doc in loaded_names]
    st.dataframe(
        pd.DataFrame([{"query": q.query, "doc": q.doc, "loaded": q.doc in loaded_names} for q in queries]),
        hide_index=True,
        width="stretch",
        column_config={"loaded": st.column_config.CheckboxColumn("Doc loaded", help="Queries about other files are skipped")},
    )
skipped = len(queries) - len(usable)
st.caption(
    f"**{len(usable)} of {len(queries)} {source}** have their document loaded"
    + (f"; {skipped} will be skipped" if skipped else "")
    + "."
)
if not usable:
    st.warning("None of the queries is about a loaded document: load the files they name.", icon=":material/warning:")
    st.stop()

# -- what to evaluate -------------------------------------------------------------------

mode_key = f"{PAGE_KEY}.mode"
if st.session_state.get(mode_key) not in MODES:
    st.session_state[mode_key] = MODES[0]
kind = st.segmented_control("What to evaluate", MODES, key=mode_key) or MODES[0]

splitters: list = []
problems: list[str] = []
sweep_spec: dict = {}
if kind == "Configurations":
    count_key = f"{PAGE_KEY}.count"
    if st.session_state.get(count_key) not in range(1, len(evaluate_ui.LABELS) + 1):
        st.session_state[count_key] = 2
    count = st.segmented_control(
        "Configurations", list(range(1, len(evaluate_ui.LABELS) + 1)), key=count_key, format_func=lambda n: f"{n}"
    ) or 2
    starts = starting_slots(SPLITTERS, (config.splitter.name, config.splitter.to_params()))
    for slot, column in enumerate(st.columns(count, gap="small")):
        with column.container(border=True):
            label = evaluate_ui.LABELS[slot]
            st.markdown(f"**Configuration {label}**" + (" · the session's splitter" if slot == 0 else ""))
            default_name, default_params = starts[slot]
            cls = widgets.component_picker(SPLITTERS, "Splitter", f"{PAGE_KEY}.{slot}.splitter", default=default_name)
            seed = default_params if cls.name == default_name else None
            values = widgets.param_widgets(cls, f"{PAGE_KEY}.{slot}.{cls.name}", seed, columns=2 if count <= 2 else 1)
            splitter, problem = widgets.try_build(cls, values)
            if problem:
                st.error(problem, icon=":material/error:")
                problems.append(f"configuration {label}: {problem}")
            else:
                splitters.append(splitter)
else:
    with st.container(border=True):
        options = evaluate_ui.sweepable()
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
            sizes = evaluate_ui.parse_sizes(sizes_text, "chunk_size values")
            overlaps = evaluate_ui.parse_sizes(overlaps_text, "chunk_overlap values")
        except ChunkScopeError as exc:
            problems.append(str(exc))
            st.error(str(exc), icon=":material/error:")
        else:
            valid = sum(1 for s in sizes for o in overlaps if o < s)
            st.caption(f"{len(sizes)} × {len(overlaps)} = {len(sizes) * len(overlaps)} pairs, {valid} valid (overlap below size).")
            sweep_spec = {"splitter": cls.name, "sizes": sizes, "overlaps": overlaps, "base": base}

st.markdown("**Retrieval**")
retrieval_key = f"{PAGE_KEY}.retrieval"
mode_now = st.session_state.get(widgets.widget_key(retrieval_key, "mode"), config.retrieval.mode)
raw = widgets.param_widgets(
    RetrievalSettings,
    retrieval_key,
    config.retrieval.to_params(),
    exclude=() if mode_now == "hybrid" else ("alpha",),
    columns=3,
)
raw.setdefault("alpha", config.retrieval.alpha)
retrieval, retrieval_problem = widgets.try_build(RetrievalSettings, raw)
if retrieval_problem:
    problems.append(retrieval_problem)
    st.error(retrieval_problem, icon=":material/error:")

# What the results on screen were computed from: a change makes them stale.
signature = json.dumps(
    {
        "kind": kind,
        "splitters": [[s.name, s.to_params()] for s in splitters] if kind == "Configurations" else None,
        "sweep": sweep_spec or None,
        "retrieval": retrieval.to_params() if retrieval else None,
        "queries": [[q.query, q.doc, list(q.excerpts)] for q in queries],
        "documents": sorted(loaded_names),
        # Loader options, metadata settings and extractors change what gets split and embedded.
        "pipeline": {k: v for k, v in config.to_dict().items() if k in ("loaders", "metadata", "extractors")},
    },
    sort_keys=True,
    default=str,
)

ready = not problems and retrieval is not None and (splitters if kind == "Configurations" else sweep_spec)
# The click is remembered by a callback: a rerun of the script (e.g. by the app frame) would lose a button's value.
st.button(
    "Run the evaluation",
    type="primary",
    icon=":material/play_arrow:",
    disabled=not ready,
    help="Splits, embeds and retrieves for every configuration: it takes a while",
    key=f"{PAGE_KEY}.run",
    on_click=lambda: st.session_state.update({RUN_REQUESTED: True}),
)

if st.session_state.pop(RUN_REQUESTED, False) and ready:
    # The session's metadata settings decide what the embedding model reads, as on every other page.
    prepared = prepare_documents(documents, config)
    embedder = cache.embedder() if retrieval.mode != "bm25" else None
    bar = st.progress(0.0, text="Starting…")

    def report(fraction: float, text: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=text)

    try:
        if kind == "Configurations":
            rows = evaluate_ui.run_configurations(
                prepared, queries, splitters, embedder=embedder, top_k=retrieval.top_k, mode=retrieval.mode,
                alpha=retrieval.alpha, report=report,
            )
            for row, splitter in zip(rows, splitters, strict=True):
                row["settings"] = settings_summary(splitter)
        else:
            rows = evaluate_ui.run_sweep(
                prepared, queries, sweep_spec["splitter"], sweep_spec["sizes"], sweep_spec["overlaps"],
                base_params=sweep_spec["base"], embedder=embedder, top_k=retrieval.top_k, mode=retrieval.mode,
                alpha=retrieval.alpha, report=report,
            )
    except ChunkScopeError as exc:
        bar.empty()
        st.error(str(exc), icon=":material/error:")
        st.stop()
    bar.empty()
    st.session_state[RESULT_KEY] = {
        "kind": kind,
        "rows": rows,
        "signature": signature,
        "top_k": retrieval.top_k,
        "mode": retrieval.mode,
    }

# -- results ---------------------------------------------------------------------------

result = st.session_state.get(RESULT_KEY)
if not result:
    st.info("Choose what to compare, then press **Run the evaluation**.", icon=":material/play_arrow:")
    st.stop()

st.divider()
st.subheader(":material/leaderboard: Results", anchor=False)
rows = result["rows"]
queries_scored = rows[0]["queries"] if rows else 0
st.caption(
    f"{len(rows)} configuration{'s' if len(rows) != 1 else ''} · {queries_scored} queries each · "
    f"top {result['top_k']} by {result['mode']} retrieval"
)
if result["signature"] != signature:
    st.info("The settings changed since this run: press **Run the evaluation** to update.", icon=":material/update:")

table = pd.DataFrame(rows)
first = ["config", "splitter", "settings"] if "settings" in table else ["config", "splitter"]
metric_columns = list(evaluate_ui.METRICS)
rest = [c for c in table.columns if c not in {*first, *metric_columns, "nodes", "queries", "top_k", "mode"}]
table = table[[*first, *metric_columns, "nodes", *rest]]
column_config = {
    "config": st.column_config.TextColumn("Config", help="A, B… or chunk_size/chunk_overlap for a sweep"),
    "splitter": st.column_config.TextColumn("Splitter"),
    "settings": st.column_config.TextColumn("Settings", help="Parameters changed from the splitter's defaults"),
    "nodes": st.column_config.NumberColumn("Chunks", help="How many nodes the configuration made"),
}
for metric, title in evaluate_ui.METRICS.items():
    column_config[metric] = st.column_config.NumberColumn(title, format="%.3f", help=evaluate_ui.METRIC_HELP[metric])
st.dataframe(table, hide_index=True, width="stretch", column_config=column_config, key=f"{PAGE_KEY}.table")

if result["kind"] == "Sweep" and rows:
    bars_col, heat_col = st.columns([1, 1], gap="large")
    with heat_col:
        metric_key = f"{PAGE_KEY}.heatmap_metric"
        if st.session_state.get(metric_key) not in evaluate_ui.METRICS:
            st.session_state[metric_key] = "mrr"
        metric = st.selectbox(
            "Heatmap metric", list(evaluate_ui.METRICS), key=metric_key, format_func=evaluate_ui.METRICS.get
        )
        st.plotly_chart(evaluate_ui.heatmap_figure(rows, metric), width="stretch", key=f"{PAGE_KEY}.heatmap")
    with bars_col:
        st.plotly_chart(evaluate_ui.metrics_figure(rows), width="stretch", key=f"{PAGE_KEY}.bars")
else:
    st.plotly_chart(evaluate_ui.metrics_figure(rows), width="stretch", key=f"{PAGE_KEY}.bars")
