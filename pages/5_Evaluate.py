"""Evaluate: how well splitter configurations serve a set of queries with known answers.

Pick several configurations (or sweep any declared parameters of a splitter),
the retrieval settings and scope, and run: every configuration splits the session's documents, embeds
the chunks and retrieves for each query; the table and charts show hit rate@k,
MRR and the token-level recall, precision and IoU against the reference
excerpts (``core.evaluation.evaluate``). Running is explicit because it embeds.
"""

from __future__ import annotations

import streamlit as st

from ui import evaluate as evaluate_ui
from ui import evaluate_builder, evaluate_draft, evaluate_tune, llm, state
from ui.page import documents_or_stop, setup_page

setup_page()
st.title("Evaluate", anchor=False)
st.markdown(
    "Score splitter configurations against queries whose answers are known: for each query, does the "
    "top-k hold the reference text (hit rate, MRR), and how much of what is retrieved is that text "
    "(recall, precision, IoU over characters)? Run several configurations side by side, or sweep "
    "any of a splitter's parameters, or tune: search splitters and retrieval settings for the best "
    "quality at the least cost. When the configuration has metadata extractors, score it with them and without."
)

config = state.config()
documents = evaluate_ui.pool_or_stop(documents_or_stop(config))
loaded_names = {str(doc.metadata.get("file_name")) for doc in documents}
evaluate_draft.draft_box(config, documents)
evaluate_builder.query_builder(documents)
queries = evaluate_ui.queries_or_stop(documents)

llm.not_scored_note(config)
evaluate_ui.chain_note(config)
chosen = evaluate_ui.selection(config, documents)
if chosen.kind == "Tune":
    # The tuner searches splitters and retrieval settings itself: its own form, its own results.
    evaluate_tune.tune_section(config, documents, queries, evaluate_ui.scope_choice())
    st.stop()
retrieval = evaluate_ui.retrieval_settings(config)
scope = evaluate_ui.scope_choice()
# What the results on screen were computed from: a change makes them stale.
signature = evaluate_ui.signature(chosen, retrieval, queries, loaded_names, config, scope)

if evaluate_ui.run_button(ready=chosen.ready and retrieval is not None):
    evaluate_ui.run_and_store(documents, queries, chosen, retrieval, config, signature, scope)
evaluate_ui.cancelled_note()

result = state.evaluation()
if not result or result["kind"] == "Tune":  # a tuning run's front is shown in the Tune section
    st.info("Choose what to compare, then press **Run the evaluation**.", icon=":material/play_arrow:")
    st.stop()
evaluate_ui.show_results(result, signature)
