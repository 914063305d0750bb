"""What the Evaluate page asks and runs: the queries, the configurations or sweep, the scope, runs with progress.

The evaluation itself is :mod:`core.evaluation.evaluate` (one configuration) and
:mod:`core.evaluation.sweep` (several, with progress); this module draws the page's forms,
feeds them the session's documents and shows their progress (splitting,
embedding, scoring) as a bar. The sweep form is :mod:`ui.evaluate_sweep`, the
results :mod:`ui.evaluate_results`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import streamlit as st

from core.config import PipelineConfig
from core.config_parts import RetrievalSettings
from core.documents import prepare_documents
from core.errors import ChunkScopeError, LoadError
from core.evaluation.queries import EvalQuery, decode_queries
from core.evaluation.query_checks import check_queries
from core.evaluation.sweep import SweepSpec, evaluate_configurations, evaluate_sweep
from core.evaluation.tune_space import recommended_splitter
from core.extractors.llm import llm_extractors
from core.measure.compare_view import LABELS, starting_slots
from core.query.retrieval import SCOPES
from core.schema import Document
from core.splitters import SPLITTERS
from ui import cache, evaluate_extractors, state, widgets
from ui.evaluate_builder import chosen_written_queries
from ui.evaluate_results import show_results
from ui.evaluate_sweep import sweep_form
from ui.query import sample_queries

PAGE_KEY = "eval"
CANCEL_KEY = f"{PAGE_KEY}.cancel"
# Tune: ui.evaluate_tune draws its own form and results; "Extractors" (ui.evaluate_extractors) is offered beside
# them when the session's configuration has extractors.
MODES = ("Configurations", "Sweep", "Tune")
SCOPE_LABELS = {"corpus": "Whole corpus", "document": "The query's document"}
__all__ = ["pool_or_stop", "queries_or_stop", "retrieval_settings", "run_and_store", "run_button", "scope_choice", "selection",
           "show_results", "signature"]  # fmt: skip


@dataclass(frozen=True)
class Selection:
    """What a run evaluates: the configurations' splitters, or one sweep. Any problem blocks the run."""

    kind: str
    splitters: tuple[Any, ...] = ()
    sweep: SweepSpec | None = None
    problems: tuple[str, ...] = ()
    pipeline: PipelineConfig | None = None  # the configuration scored with and without its extractors

    @property
    def ready(self) -> bool:
        if self.kind == evaluate_extractors.MODE:
            return not self.problems and self.pipeline is not None and bool(self.pipeline.extractors)
        return not self.problems and bool(self.splitters if self.kind == "Configurations" else self.sweep)


# -- the pool and the queries --------------------------------------------------------------


def chain_note(config: PipelineConfig) -> None:
    """Say that the Query page's postprocessor chain is not scored here (these numbers are retrieval's top-k)."""
    if config.postprocessors:
        names = ", ".join(post.name for post in config.postprocessors)
        st.caption(
            widgets.md_escape(
                f"The postprocessor chain from the Query page ({names}) is not part of these scores: they measure "
                "what retrieval returns (its top-k, hierarchy and context budget) before any postprocessor runs."
            )
        )


def pool_or_stop(documents: Sequence[Document]) -> list[Document]:
    """The documents retrieval searches, chosen among the loaded ones (the samples marked); none chosen ends this run."""
    from ui.documents import sample_files

    names = list(dict.fromkeys(str(doc.metadata.get("file_name")) for doc in documents))
    samples = {path.name for path in sample_files()} & set(names)
    key = f"{PAGE_KEY}.pool"
    state.keep_valid(key, names, names)
    chosen = st.multiselect(
        "Documents in the pool",
        names,
        key=key,
        format_func=lambda name: f"{name} (sample)" if name in samples else name,
        help="Retrieval searches the chunks of these documents only: the scores depend on what else is in the pool",
    )
    kept_samples = sorted(samples & set(chosen))
    st.caption(
        f"Retrieval searches **{len(chosen)} of {len(names)}** loaded documents"
        + (f", {len(kept_samples)} of them sample documents" if kept_samples else "")
        + "."
    )
    if not chosen:
        st.warning("Choose at least one document for the pool.", icon=":material/warning:")
        st.stop()
    return [doc for doc in documents if str(doc.metadata.get("file_name")) in chosen]


def queries_or_stop(documents: Sequence[Document]) -> list[EvalQuery]:
    """Draw the queries (sample or uploaded), checked against the pool at once; with none usable or an excerpt
    missing, say so and end this run (before anything is split or embedded)."""
    loaded_names = {str(doc.metadata.get("file_name")) for doc in documents}
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
    checked = check_queries(documents, queries)
    if checked.warnings:
        st.warning(_listed(checked.warnings), icon=":material/warning:")
    if checked.errors:
        st.error(_listed(["Fix the queries file:", *checked.errors]), icon=":material/error:")
        st.stop()
    return queries


def _listed(lines: Sequence[str], most: int = 6) -> str:
    """Lines as an escaped Markdown list, the first ``most`` of them and how many more."""
    shown = [f"- {widgets.md_escape(line)}" for line in lines[:most]]
    if len(lines) > most:
        shown.append(f"- … and {len(lines) - most} more")
    return "\n".join(shown)


def _chosen_queries() -> tuple[list[EvalQuery], str]:
    """The uploaded queries file if one is given and valid (else the samples, with the reason shown), and its name."""
    upload = st.file_uploader("Use your own queries file", type=["json"], key=f"{PAGE_KEY}.queries_file")
    written = chosen_written_queries()
    if written:
        return written, "queries written here"
    if upload is None:
        return list(sample_queries()), "sample queries"
    try:
        return decode_queries(upload.getvalue(), upload.name), upload.name
    except LoadError as exc:
        st.error(f"{widgets.md_escape(str(exc))}; using the sample queries.", icon=":material/error:")
    return list(sample_queries()), "sample queries"


# -- what to evaluate ------------------------------------------------------------------


def selection(config: PipelineConfig, documents: Sequence[Document] = ()) -> Selection:
    """Draw the mode switch and then the configurations' forms, the sweep's or the extractors' comparison (over the
    pool ``documents``): what a run would evaluate."""
    mode_key = f"{PAGE_KEY}.mode"
    modes = evaluate_extractors.modes(config, MODES)
    state.keep_valid(mode_key, modes)
    labels = {evaluate_extractors.MODE: evaluate_extractors.LABEL}
    kind = (
        st.segmented_control("What to evaluate", modes, key=mode_key, format_func=lambda m: labels.get(m, m))
        or MODES[0]
    )
    if kind == "Tune":
        return Selection("Tune")
    if kind == evaluate_extractors.MODE:
        return evaluate_extractors.extractors_form(config, documents, Selection)
    return configurations(config) if kind == "Configurations" else sweep_form(config, Selection)


def configurations(config: PipelineConfig) -> Selection:
    """One bordered form per configuration (A is the session's splitter, B the recommended one), side by side."""
    count_key = f"{PAGE_KEY}.count"
    choices = list(range(1, len(LABELS) + 1))
    state.keep_valid(count_key, choices, 2)
    count = st.segmented_control("Configurations", choices, key=count_key, format_func=lambda n: f"{n}") or 2
    first = (config.splitter.name, config.splitter.to_params())
    starts = starting_slots(SPLITTERS, first)
    # B starts as the recommended configuration (the best known, core.evaluation.tune_space): yours beside it.
    recommended = recommended_splitter()
    best = (recommended.name, recommended.to_params())
    if best != first:
        starts = [first, best, *starts[1:]][: len(starts)]
    notes = {
        0: " · the session's splitter" + (" · recommended" if best == first else ""),
        1: " · recommended" if best != first else "",
    }
    splitters, problems = [], []
    for slot, column in enumerate(st.columns(count, gap="small")):
        with column.container(border=True):
            label = LABELS[slot]
            st.markdown(f"**Configuration {label}**" + notes.get(slot, ""))
            splitter, problem = widgets.splitter_form(
                f"{PAGE_KEY}.{slot}", starts[slot], columns=2 if count <= 2 else 1
            )
            if problem:
                problems.append(f"configuration {label}: {problem}")
            else:
                splitters.append(splitter)
    return Selection("Configurations", splitters=tuple(splitters), problems=tuple(problems))


def retrieval_settings(config: PipelineConfig) -> RetrievalSettings | None:
    """The retrieval form (alpha only for hybrid), seeded from the session; an invalid one is shown and gives None."""
    st.markdown("**Retrieval**")
    return widgets.retrieval_form(config.retrieval, f"{PAGE_KEY}.retrieval", columns=3)


def scope_choice() -> str:
    """Where each query's chunks are retrieved from: the whole corpus, or only the document the query is about."""
    key = f"{PAGE_KEY}.scope"
    state.keep_valid(key, SCOPES, "corpus")
    chosen = st.segmented_control(
        "Retrieve from",
        SCOPES,
        key=key,
        format_func=SCOPE_LABELS.get,
        help="The query's document: each question competes only with its own file's chunks (per-document scores)",
    )
    return chosen or "corpus"


def signature(
    chosen: Selection,
    retrieval: RetrievalSettings | None,
    queries: Sequence[EvalQuery],
    loaded_names: set[str],
    config: PipelineConfig,
    scope: str = "corpus",
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
            "scope": scope,
            "queries": [[q.query, q.doc, list(q.excerpts)] for q in queries],
            "documents": sorted(loaded_names),
            # With / without extractors scores the session's own configuration: its splitter and LLM too.
            "session": chosen.pipeline.to_dict() if chosen.pipeline is not None else None,
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


def _extractor_rows(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    config: PipelineConfig,
    retrieval: RetrievalSettings,
    embedder: Any,
    report: Any,
    scope: str,
) -> list[dict[str, Any]]:
    """The session's configuration with and without its extractors, as page rows. The documents as loaded: each
    side prepares them itself; the LLM extractors run in a bounded child (framework code, waiting on a network)."""
    from core.evaluation.sweep import ui_rows
    from core.evaluation.with_extractors import compare_extractors, session_spec

    results = compare_extractors(
        documents,
        queries,
        [session_spec(config)],
        config,
        embedder=embedder,
        retrieval=retrieval,
        scope=scope,
        report=report,
        bounded=True,
    )
    return ui_rows(results, [config.splitter] * len(results))


def run_and_store(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    chosen: Selection,
    retrieval: RetrievalSettings,
    config: PipelineConfig,
    run_signature: str,
    scope: str = "corpus",
) -> None:
    """Run the evaluation under a progress bar and keep its rows in the session; a failure is shown and ends this run."""
    # The session's metadata settings decide what the embedding model reads, as on every other page.
    prepared = prepare_documents(documents, config)
    embedder = cache.embedder() if retrieval.mode != "bm25" else None
    asks = chosen.pipeline is not None and bool(llm_extractors(chosen.pipeline.extractors))
    with progress_bar(cancellable=asks) as report:
        rows = _rows(documents, prepared, queries, chosen, retrieval, embedder, report, scope)
    state.set_evaluation(
        {
            "kind": chosen.kind,
            "rows": rows,
            "signature": run_signature,
            "top_k": retrieval.top_k,
            "mode": retrieval.mode,
            "scope": scope,
            "swept": list(chosen.sweep.grid) if chosen.sweep else [],
        }
    )


@contextmanager
def progress_bar(*, cancellable: bool) -> Iterator[Callable[[float, str], None]]:
    """A run's progress bar, with Cancel under it when the run asks an LLM (its replies cost money and time);
    both go when the run ends. A ChunkScopeError inside is said in one sentence and ends this page's run.

    Cancel reruns the page: the run stops at its next progress line, and an LLM extractors' run stops before
    its next request (core.documents.llm_run), the replies already received cached for the next Run."""
    slot = st.empty()
    with slot.container():
        bar = st.progress(0.0, text="Starting…")
        if cancellable:
            st.button(
                "Cancel",
                key=CANCEL_KEY,
                icon=":material/stop:",
                on_click=state.cancel_evaluation,
                help="Stops before the LLM's next request; the replies already received stay in the cache.",
            )
    try:
        yield lambda fraction, text: bar.progress(min(max(fraction, 0.0), 1.0), text=widgets.md_escape(text))
    except ChunkScopeError as exc:
        slot.empty()
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()
    slot.empty()


def cancelled_note() -> None:
    """Say that Cancel stopped the last run, once, where its results would have been."""
    if state.take_evaluation_cancelled():
        st.caption(
            "Cancelled before the LLM's next request: the replies already received are in the cache, so running "
            "again asks only for the rest."
        )


def _rows(documents, prepared, queries, chosen, retrieval, embedder, report, scope) -> list[dict[str, Any]]:  # noqa: ANN001
    """The result rows of the chosen kind of run (configurations, a sweep, or with / without extractors)."""
    if chosen.pipeline is not None:
        return _extractor_rows(documents, queries, chosen.pipeline, retrieval, embedder, report, scope)
    if chosen.sweep is None:
        return evaluate_configurations(
            prepared, queries, chosen.splitters, retrieval=retrieval, embedder=embedder, report=report, scope=scope
        )
    return evaluate_sweep(
        prepared, queries, chosen.sweep, retrieval=retrieval, embedder=embedder, report=report, scope=scope
    )
