"""The Metadata page's "LLM extractors" box: the connection, LlamaIndex's extractors, their cost, and Run.

Nothing is sent until a person presses Run under the cost of the run: the calls and prompt tokens for the
selected node and for the whole document, against the model's window. Once run, the extractors are part of
the session's configuration (every page then shows their keys; the reply cache answers again for free).
LLM extractors a link asked for wait here (:func:`ui.documents.hold_llm_extractors`): the link chose the
endpoint and the key's variable, so a person sees both before anything leaves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import streamlit as st

from core.config import PipelineConfig
from core.errors import ChunkScopeError
from core.extractors import EXTRACTORS
from core.extractors.llm import llm_extractors, plan
from core.llm import LLMConnection
from core.schema import Document, MetadataMode, Node
from ui import cache, state, widgets

RUN_KEY = "meta.llm.run"
CANCEL_KEY = "meta.llm.cancel"


@dataclass
class LLMChoice:
    """What the box holds: the connection, the LLM extractors switched on, the problems, and where the cost goes."""

    connection: LLMConnection
    extractors: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cost_box: Any = None
    approval: str = ""  # the Run these settings were approved by (what Cancel takes back)


def llm_section(config: PipelineConfig) -> LLMChoice:
    """Draw the box; the cost and the Run button are drawn into ``cost_box`` once the nodes are known (:func:`llm_run`)."""
    current = {extractor.name: extractor for extractor in (*llm_extractors(config.extractors), *state.llm_pending())}
    with st.container(border=True):
        st.markdown("#### :material/smart_toy: LLM extractors")
        st.caption(
            "LlamaIndex's own extractors, asking an OpenAI-compatible endpoint (Ollama, llama.cpp's server, vLLM, "
            "LM Studio, OpenAI). Nothing is sent until you press Run. The API key stays in the environment "
            "variable you name; ChunkScope stores and shows only that name."
        )
        with st.expander("Connection", expanded=not config.llm.configured, icon=":material/lan:"):
            values = widgets.param_widgets(LLMConnection, "meta.llm", config.llm.to_params(), columns=2)
            connection, error = widgets.try_build(LLMConnection, values)
        choice = LLMChoice(connection if connection is not None else config.llm)
        if error:
            choice.errors.append(error)
        if not choice.connection.configured:
            st.caption("Set a base URL and a model to use them; without one nothing is ever sent.")
        else:
            st.caption(widgets.md_escape(f"Asks {choice.connection.describe()}."))
            _toggles(choice, current)
            choice.cost_box = st.container()
        for problem in choice.errors:
            st.error(widgets.md_escape(problem), icon=":material/error:")
    return choice


def _toggles(choice: LLMChoice, current: dict[str, Any]) -> None:
    for cls in EXTRACTORS:
        if not cls.node_level:
            continue
        toggle_key = f"meta.extractor.{cls.name}.on"
        state.seed_widget(toggle_key, cls.name in current)
        keys = ", ".join(f"`{key}`" for key in cls.keys)
        if not st.toggle(f"**{cls.title()}** → {keys}", key=toggle_key, help=cls.summary):
            continue
        with st.container(border=True):
            st.caption(cls.summary)
            existing = current.get(cls.name)
            values = widgets.param_widgets(
                cls, f"meta.extractor.{cls.name}", existing.to_params() if existing else None, columns=2,
                advanced_label="Prompts",
            )
            extractor, error = widgets.try_build(cls, values)
        if error:
            choice.errors.append(error)
        elif extractor is not None:
            choice.extractors.append(extractor)


def llm_run(
    choice: LLMChoice, applied: PipelineConfig, nodes: Sequence[Node], selected_id: str | None
) -> PipelineConfig:
    """``applied`` with the connection, and with the LLM extractors once a person ran them (Run, now or before).

    ``nodes``: the document's nodes without them, whose prompts are counted; ``selected_id``: the selected node's.
    """
    node = next((n for n in nodes if n.id == selected_id), nodes[0] if len(nodes) else None)
    without = applied.replace(llm=choice.connection) if not choice.errors else applied
    if choice.errors or not choice.extractors or choice.cost_box is None:
        return without
    wanted = without.replace(extractors=(*without.extractors, *choice.extractors))
    # What a Run approves: these extractors, this endpoint, these prompts. A change that leaves the prompts as
    # they were (an exclusion) needs no new Run; one that changes them (a template, the splitter) does.
    approval = _approval(choice, nodes)
    connection = choice.connection
    whole = plan(nodes, choice.extractors, connection)
    with choice.cost_box:
        lines = [
            f"**Whole document** ({len(nodes):,} nodes): up to **{whole.calls:,} calls**, "
            f"about **{whole.prompt_tokens:,} prompt tokens** and at most {whole.calls * connection.max_tokens:,} "
            "reply tokens."
        ]
        if node is not None:
            selected = plan([node], choice.extractors, connection)
            lines.append(
                f"**Selected node**: {selected.calls:,} calls, about {selected.prompt_tokens:,} prompt tokens."
            )
        lines.append(
            f"Largest prompt: {whole.largest_prompt_tokens:,} of the model's {connection.context_window:,}-token window. "
            "Replies already in the cache are not asked again."
        )
        st.markdown("  \n".join(lines))
        if whole.largest_prompt_tokens > connection.context_window:
            st.warning("A prompt is longer than the model's window: the endpoint may cut or refuse it.", icon=":material/warning:")
        if state.llm_approved(approval):
            choice.approval = approval
            st.caption("Ran: their keys are in the preview and on every page. A rerun is answered from the cache.")
            return wanted
        if state.llm_cancelled(approval):
            st.caption(
                "Cancelled before the next request: the replies already received are in the cache, so Run asks "
                "only for the rest."
            )
        st.button(
            f"Run ({whole.calls:,} calls)",
            key=RUN_KEY,
            type="primary",
            icon=":material/play_arrow:",
            on_click=_approve,
            args=(approval,),
        )
    return without


def _approve(approval: str) -> None:
    state.approve_llm(approval)
    state.set_llm_pending(())


def split_with_llm(choice: LLMChoice, document: Document, config: PipelineConfig) -> cache.Nodes:
    """``document``'s nodes with the LLM extractors run: while they are asked, a progress bar and Cancel under the
    cost (the work runs in a bounded child; :func:`core.documents.llm_run.extract_with_llm`). Cancel reruns the page:
    the run stops before its next request, the replies already received stay cached, and Run is offered again.
    A split already kept shows neither. A ChunkScopeError is said in one sentence and ends this run."""
    try:
        if cache.split_is_kept([document], config):
            return cache.run_split_cached([document], config)
        with choice.cost_box if choice.cost_box is not None else st.container():
            slot = st.empty()
        with slot.container():
            bar = st.progress(0.0, text=_asking(config.llm.model, 0, 0))
            st.button(
                "Cancel",
                key=CANCEL_KEY,
                icon=":material/stop:",
                on_click=state.cancel_llm,
                args=(choice.approval,),
                help="Stops before the next request; the replies already received stay in the cache.",
            )
        nodes = cache.run_split_cached([document], config, progress=partial(show_progress, bar, config.llm.model))
    except ChunkScopeError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()
    slot.empty()
    return nodes


def show_progress(bar: Any, model: str, done: int, calls: int) -> None:
    """The bar at ``done`` replies of at most ``calls`` (Streamlit stops the run here when Cancel was clicked)."""
    bar.progress(min(done / calls, 1.0) if calls else 0.0, text=_asking(model, done, calls))


def _asking(model: str, done: int, calls: int) -> str:
    counted = f": {done:,} of up to {calls:,} calls answered" if calls else ""
    return widgets.md_escape(f"Asking {model} for the LLM extractors' keys{counted} (cached replies count at once)…")


def _approval(choice: LLMChoice, nodes: Sequence[Node]) -> str:
    contents = [node.get_content(MetadataMode.ALL) for node in nodes]
    return hashlib.sha256(repr((choice.connection, tuple(choice.extractors), contents)).encode("utf-8")).hexdigest()


def not_scored_note(config: PipelineConfig) -> None:
    """Say where an evaluation runs the LLM extractors: only in the with / without comparison, which shows their
    cost first, and for the tuner's pick when asked; configurations, sweeps and the search score the nodes without
    their keys."""
    asked = llm_extractors(config.extractors)
    if asked:
        st.info(
            f"The LLM extractors ({', '.join(extractor.name for extractor in asked)}) are run only by "
            "**With / without extractors**, which shows their cost before the run, and by the Tune tab for its "
            "pick when asked; configurations, sweeps and the tuner's search score the nodes without their keys.",
            icon=":material/info:",
        )
