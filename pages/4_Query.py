"""Query: retrieve nodes for a query, run a postprocessor chain, and see what every stage did and why.

The nodes are the session's documents split with the session's configuration
(the Chunks and Metadata pages set it). Retrieval settings and the chain are
drawn from their declared parameters and written back to that configuration,
so a shared link or an export carries them.
"""

from __future__ import annotations

import streamlit as st

from ui import query as query_ui
from ui import query_run, state, trace
from ui.page import documents_or_stop, heading, setup_page

PAGE_KEY = "query"
# A small model's window: the default configuration reads up to 5,500 tokens a query (its retrieval's
# context_budget; benchmarks/RESULTS.md), which 4,096 flagged as over budget on the first screen.
DEFAULT_BUDGET = 8192

setup_page()
heading(
    "Query",
    "Retrieve nodes for a query, then run the chain of node postprocessors a query engine would: "
    "see what each stage kept, dropped, moved or rewrote, and the context the LLM finally reads.",
)

config = state.config()
all_docs = documents_or_stop(config)

# -- settings (sidebar), written back to the session config and the URL ------------------

retrieval, chain = query_ui.settings_or_stop(config, PAGE_KEY, all_docs)
config = query_ui.apply_settings(config, retrieval, chain)

# -- the query ------------------------------------------------------------------------

query, budget = query_ui.query_and_budget(PAGE_KEY, DEFAULT_BUDGET)
if not query.strip():
    st.info("Type a query to run it.", icon=":material/edit:")
    st.stop()

split, nodes, result = query_run.run_or_stop(all_docs, config, query)
context, context_tokens = query_run.context_with_tokens(result)

trace.run_caption(config, len(nodes), all_docs)
trace.metric_cards(result, retrieval.top_k, len(nodes), context_tokens, budget)
trace.overview(result, retrieval.mode, len(nodes), PAGE_KEY)

# -- stage by stage ---------------------------------------------------------------------

trace.stage_tabs(result, nodes, all_docs, retrieval.mode, PAGE_KEY, every=split)

# -- what the LLM reads -------------------------------------------------------------------

trace.final_context_panel(context, context_tokens, len(result.final), budget)
