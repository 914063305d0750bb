"""Query: retrieve nodes for a query, run a postprocessor chain, and see what every stage did and why.

The nodes are the session's documents split with the session's configuration
(the Chunks and Metadata pages set it). Retrieval settings and the chain are
drawn from their declared parameters and written back to that configuration,
so a shared link or an export carries them.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.config import RetrievalSettings
from core.errors import ChunkScopeError
from core.query import final_context
from core.splitters.hierarchical import leaf_nodes
from ui import cache, state, trace, widgets
from ui import query as query_ui
from ui.page import documents_or_stop, setup_page

PAGE_KEY = "query"
DEFAULT_BUDGET = 4096

STAGE_COLUMNS = {
    "status": st.column_config.TextColumn("Status", width="small"),
    "node": st.column_config.TextColumn("Node", help="File and position among all nodes (as on the Chunks page)"),
    "rank_in": st.column_config.NumberColumn("Rank in", format="%d", help="1-based position in the stage's input"),
    "rank_out": st.column_config.NumberColumn("Rank out", format="%d", help="1-based position in the stage's output; empty if dropped"),
    "score_in": st.column_config.NumberColumn("Score in", format="%.4f"),
    "score_out": st.column_config.NumberColumn("Score out", format="%.4f"),
    "fate": st.column_config.TextColumn("Fate", width="large", help="What this stage did to the node, and why"),
    "text": st.column_config.TextColumn("Text (after the stage)", width="large"),
}
STATUS_COLOURS = {"dropped": "color:#dc2626;font-weight:600", "added": "color:#059669;font-weight:600"}


def status_of(fate: str) -> str:
    """``dropped`` / ``added`` / ``kept`` from a fate line (moved and changed nodes are kept)."""
    head = fate.split(":", 1)[0]
    return head if head in STATUS_COLOURS else "kept"


setup_page()
st.title("Query", anchor=False)
st.markdown(
    "Retrieve nodes for a query, then run the chain of node postprocessors a query engine would: "
    "see what each stage kept, dropped, moved or rewrote, and the context the LLM finally reads."
)

config = state.config()
all_docs = documents_or_stop(config)

# -- settings (sidebar) ----------------------------------------------------------------

with st.sidebar:
    st.header("Retrieval", anchor=False)
    retrieval_key = f"{PAGE_KEY}.retrieval"
    mode_now = st.session_state.get(widgets.widget_key(retrieval_key, "mode"), config.retrieval.mode)
    raw = widgets.param_widgets(
        RetrievalSettings, retrieval_key, config.retrieval.to_params(), exclude=() if mode_now == "hybrid" else ("alpha",)
    )
    raw.setdefault("alpha", config.retrieval.alpha)
    retrieval, retrieval_problem = widgets.try_build(RetrievalSettings, raw)
    if retrieval_problem:
        st.error(retrieval_problem, icon=":material/error:")

    st.header("Postprocessors", anchor=False)
    st.caption("Run in order, top to bottom, on the retrieved nodes.")
    chain, chain_problems = query_ui.chain_editor(config.postprocessors)

if retrieval is None or chain_problems:
    st.error("Fix the settings in the sidebar to run the query.", icon=":material/error:")
    st.stop()

new_config = config.replace(postprocessors=tuple(chain), retrieval=retrieval)
if new_config != config:
    state.set_config(new_config)
    config = new_config
query_ui.mark_synced(chain)
st.query_params.from_dict(config.to_query_params())

# -- the query ------------------------------------------------------------------------

query_col, budget_col = st.columns([5, 1], vertical_alignment="bottom")
with query_col:
    query = query_ui.query_picker(PAGE_KEY)
with budget_col:
    budget_key = f"{PAGE_KEY}.budget"
    query_ui.remember(budget_key, DEFAULT_BUDGET)
    budget = st.number_input(
        "Context budget (tokens)",
        min_value=16,
        max_value=1_000_000,
        step=256,
        key=budget_key,
        help="How many tokens you can spend on context in the prompt; the final context is counted against it.",
    )
    query_ui.keep(budget_key)

if not query.strip():
    st.info("Type a query to run it.", icon=":material/edit:")
    st.stop()

try:
    with st.spinner("Splitting…"):
        # Hierarchical splits nest; like an auto-merging retriever, search the leaves.
        nodes = leaf_nodes(cache.run_split_cached(all_docs, config))
    if not nodes:
        st.warning("The current splitter made no nodes from the loaded documents.", icon=":material/warning:")
        st.stop()
    needs_model = retrieval.mode != "bm25" or any(post.name == "sentence_embedding_optimizer" for post in chain)
    embedder = cache.embedder() if needs_model else None
    embeddings = query_ui.node_embeddings(nodes, embedder) if retrieval.mode != "bm25" else None
    result = query_ui.run(
        nodes, query, chain, top_k=retrieval.top_k, mode=retrieval.mode, alpha=retrieval.alpha,
        embedder=embedder, embeddings=embeddings,
    )
except ChunkScopeError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()

labels = trace.node_labels(nodes)
docs_by_id = {doc.id: doc for doc in all_docs}
context = final_context(result.final)
context_tokens = cache.count_tokens((context,), "model")[0]

splitter = config.splitter
changed = ", ".join(f"{k}={v}" for k, v in splitter.to_params(only_changed=True).items())
st.caption(
    f"Searched **{len(nodes):,} nodes** from {len(all_docs)} documents, split by **{widgets.label_for(splitter.name)}**"
    + (f" ({changed})" if changed else " (defaults)")
    + f" · retrieval **{retrieval.mode}**, top {retrieval.top_k}"
    + (f", alpha {retrieval.alpha:g}" if retrieval.mode == "hybrid" else "")
)

cards = st.columns(4)
cards[0].metric("Retrieved", len(result.retrieved), border=True, help=f"The top {retrieval.top_k} of {len(nodes):,} nodes")
cards[1].metric("Stages", len(result.stages), border=True, help="Postprocessors in the chain")
cards[2].metric("Final nodes", len(result.final), border=True, help="What reaches the LLM")
over = context_tokens > budget
cards[3].metric(
    "Context tokens",
    f"{context_tokens:,}",
    f"{abs(budget - context_tokens):,} {'over' if over else 'under'} the {budget:,} budget",
    delta_color="inverse" if over else "normal",
    delta_arrow="off",
    border=True,
    help="The final context counted with the embedding model's tokenizer (an estimate for the LLM's)",
)

st.html(trace.CSS)
funnel_col, summary_col = st.columns([3, 2], gap="large")
with funnel_col:
    st.plotly_chart(trace.funnel_figure(result), width="stretch", key=f"{PAGE_KEY}.funnel")
with summary_col:
    st.markdown("**What each stage did**")
    lines = [f"- **retrieval** ({retrieval.mode}): {len(result.retrieved)} of {len(nodes):,} nodes"]
    for index, stage in enumerate(result.stages, start=1):
        lines.append(f"- **{trace.stage_label(index, stage.name)}**: {trace.stage_summary(stage)}")
    st.markdown("\n".join(lines))

# -- stage by stage ---------------------------------------------------------------------

tab_names = ["Retrieval"] + [trace.stage_label(i, stage.name) for i, stage in enumerate(result.stages, start=1)]
tabs = st.tabs(tab_names)

with tabs[0]:
    st.caption(f"The {len(result.retrieved)} best of {len(nodes):,} nodes for the query, best first ({retrieval.mode} scores).")
    st.dataframe(
        pd.DataFrame(trace.retrieval_rows(result, labels)),
        hide_index=True,
        width="stretch",
        key=f"{PAGE_KEY}.table.retrieval",
        column_config={
            "rank": st.column_config.NumberColumn("Rank"),
            "node": STAGE_COLUMNS["node"],
            "score": st.column_config.NumberColumn("Score", format="%.4f"),
            "text": st.column_config.TextColumn("Text", width="large"),
        },
    )

for index, (tab, stage) in enumerate(zip(tabs[1:], result.stages, strict=True), start=1):
    with tab:
        params = ", ".join(f"{k}={v!r}" for k, v in stage.params.items()) or "no parameters"
        st.caption(f"`{stage.name}` ({params}) · {trace.stage_summary(stage)}")
        rows = trace.stage_rows(stage, labels)
        for row in rows:
            row["status"] = status_of(row["fate"])
        columns = ["status", "node", "rank_in", "rank_out", "score_in", "score_out", "fate", "text"]
        st.dataframe(
            pd.DataFrame(rows, columns=columns).style.map(lambda v: STATUS_COLOURS.get(v, ""), subset=["status"]),
            hide_index=True,
            width="stretch",
            key=f"{PAGE_KEY}.table.{index}",
            column_config=STAGE_COLUMNS,
        )

        if stage.name == "long_context_reorder" and stage.nodes_out:
            st.plotly_chart(trace.reorder_figure(stage, labels), width="stretch", key=f"{PAGE_KEY}.reorder.{index}")
            st.caption(
                "Models read the middle of a long context worst, so the best nodes go to both ends: "
                "the line should sag in the middle and rise towards the first and the last position."
            )

        if stage.sentences:
            st.markdown("**Sentences kept** (green) **and removed** (struck through), with each one's similarity to the query")
            before = {item.id: item for item in stage.nodes_in}
            for node_id, selection in stage.sentences.items():
                item = before[node_id]
                heading = f"{labels.get(node_id, node_id)} · kept {len(selection.kept)} of {len(selection.kept) + len(selection.removed)} sentences"
                st.html(trace.sentences_html(item.node.text, selection, heading))
        elif stage.text_changes:
            st.markdown("**Text replaced**: the node's own text (orange) inside what the LLM now reads (yellow)")
            before = {item.id: item for item in stage.nodes_in}
            for change in stage.text_changes:
                node = before[change.id].node
                offset = trace.window_offset(change, node, docs_by_id.get(node.doc_id))
                heading = f"{labels.get(change.id, change.id)} · {change.reason}"
                st.html(trace.window_html(change, offset, heading))

# -- what the LLM reads -------------------------------------------------------------------

st.subheader(":material/smart_toy: Final context", anchor=False)
st.caption(
    f"Exactly what the LLM reads: each final node's LLM view (metadata it may see, then its text), "
    f"joined by a blank line · {len(result.final)} nodes · {context_tokens:,} tokens"
)
if context_tokens > budget:
    st.warning(
        f"The context is {context_tokens:,} tokens, {context_tokens - budget:,} over your budget of {budget:,}: "
        "lower top_k, add a cutoff or top_n, or cut smaller chunks.",
        icon=":material/warning:",
    )
st.progress(min(context_tokens / budget, 1.0), text=f"{context_tokens:,} of {budget:,} budget tokens")
if context:
    st.code(context, language=None, wrap_lines=True, height=420)
else:
    st.info("No node survived the chain: the LLM would get no context.", icon=":material/block:")
