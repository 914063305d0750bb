"""The Evaluate page's "With / without extractors" form: the session's configuration scored with its metadata
extractors and without them (:mod:`core.evaluation.with_extractors`).

Offered only when the session's configuration has extractors. Its LLM extractors (there are some only when an
LLM connection is configured: the configuration refuses them otherwise) run on every chunk of the pool, so
their cost is shown before the run, counted as the Metadata page counts it (:func:`core.extractors.llm.plan`
over the nodes they will be asked about); nothing is sent until **Run the evaluation**.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from core.config import PipelineConfig
from core.evaluation.with_extractors import without_llm_extractors
from core.extractors.llm import LLMPlan, llm_extractors, plan
from core.measure.compare_view import settings_summary
from core.schema import Document
from ui import cache, widgets

MODE = "Extractors"
LABEL = "With / without extractors"


def modes(config: PipelineConfig, base: Sequence[str]) -> tuple[str, ...]:
    """The page's modes, and this one when the session's configuration has extractors."""
    return (*base, MODE) if config.extractors else tuple(base)


def extractors_form(config: PipelineConfig, documents: Sequence[Document], selection_type: Any) -> Any:
    """What the comparison runs, said in a box, with the LLM extractors' cost; a Selection of the session's config."""
    asking = llm_extractors(config.extractors)
    names = ", ".join(extractor.name for extractor in config.extractors)
    with st.container(border=True):
        st.markdown("**The session's configuration, with its extractors and without them**")
        st.caption(
            widgets.md_escape(
                f"Splitter {config.splitter.name} ({settings_summary(config.splitter)}); extractors: {names}. "
                "Both rows split, embed and search as the Chunks page does, so the first row's EMBED views carry "
                "the extractors' keys and the second row's carry none. Each row adds its context tokens per query "
                "(what the LLM is sent)."
            )
        )
        if asking:
            _llm_cost(config, documents, asking)
    return selection_type(MODE, pipeline=config)


def _llm_cost(config: PipelineConfig, documents: Sequence[Document], asking: Sequence[Any]) -> None:
    connection = config.llm
    cost = extraction_cost(config, documents)
    st.markdown(
        widgets.md_escape(f"LLM extractors ({', '.join(e.name for e in asking)}) ask {connection.describe()}.")
        + f"  \n**{cost.nodes:,} chunks in the pool**: up to **{cost.plan.calls:,} calls**, about "
        f"**{cost.plan.prompt_tokens:,} prompt tokens** and at most {cost.plan.calls * connection.max_tokens:,} "
        "reply tokens. Replies already in the cache are not asked again: the results say what was sent."
    )
    if cost.plan.largest_prompt_tokens > connection.context_window:
        st.warning(
            f"The largest prompt ({cost.plan.largest_prompt_tokens:,} tokens) is longer than the model's "
            f"{connection.context_window:,}-token window: the endpoint may cut or refuse it.",
            icon=":material/warning:",
        )


@dataclass(frozen=True)
class ExtractionCost:
    """What the LLM extractors will send for the pool: the plan, and how many chunks it was counted on."""

    nodes: int
    plan: LLMPlan


def extraction_cost(config: PipelineConfig, documents: Sequence[Document]) -> ExtractionCost:
    """The plan of ``config``'s LLM extractors over the pool's nodes without them (the split the Chunks page
    caches for that configuration), kept while the split and the extractors are the same."""
    nodes = cache.run_split_cached(documents, without_llm_extractors(config))
    asking = tuple(llm_extractors(config.extractors))
    key = (nodes.split_key, asking, config.llm)
    return cache.cached("evaluate.extraction_cost", key, lambda: ExtractionCost(len(nodes), plan(nodes, asking, config.llm)))
