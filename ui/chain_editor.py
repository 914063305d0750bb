"""The Query page's postprocessor chain editor: steps to move, remove and tune, and a picker that adds one.

Each step's parameters are drawn from its postprocessor's declaration by
:mod:`ui.widgets`; the chain itself (ids, order, last values) is kept by
:mod:`ui.state`, so it survives a visit to another page.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import streamlit as st

from core.postprocessors import POSTPROCESSORS, Postprocessor
from ui import state, widgets

ADD_KEY = "query.add"


def step_key(uid: int, name: str) -> str:
    """The widget namespace of one step's parameters: it follows the step's id, not its position."""
    return f"query.post.{uid}.{name}"


def chain_editor(
    configured: Sequence[Postprocessor],
    current_query: Callable[[], str],
    node_metadata_keys: Callable[[], Collection[str] | None] = lambda: None,
) -> tuple[list[Postprocessor], list[str]]:
    """Draw the chain (each step with move, remove and its parameters) and the picker that adds one.

    ``current_query`` gives the query when a step is added (a new step starts with
    values that act on it); ``node_metadata_keys`` the metadata keys the session's
    nodes carry (None when unknown), so a step that reads one they lack says so.
    Returns the built postprocessors in order and the problems of steps whose values are invalid.
    """
    steps = state.chain_steps(configured)
    built: list[Postprocessor] = []
    problems: list[str] = []
    if not steps:
        st.caption("No postprocessors: the retrieved nodes go to the LLM as they are. Add one below.")
    for position, step in enumerate(steps):
        cls = POSTPROCESSORS.get_class(step.name)
        with st.container(border=True):
            _step_header(position, len(steps), step.uid, cls.name)
            st.caption(cls.summary)
            values = widgets.param_widgets(cls, step_key(step.uid, cls.name), step.values)
            instance, problem = widgets.build_or_explain(cls, values)
            if problem:
                problems.append(f"step {position + 1} ({cls.name}): {problem}")
            else:
                state.set_chain_step_values(step.uid, instance.to_params())
                built.append(instance)
                idle = instance.idle_reason()
                keys = node_metadata_keys() if idle is None else None
                missing = instance.missing_input_reason(keys) if keys is not None else None
                if idle or missing:
                    st.info(f"This step changes nothing: {widgets.md_escape(idle or missing)}.", icon=":material/info:")
    _adder(current_query)
    return built, problems


def _step_header(position: int, count: int, uid: int, name: str) -> None:
    """The step's number and name, with its move up, move down and remove buttons."""
    title, up, down, remove = st.columns([6, 1, 1, 1], vertical_alignment="center", gap="small")
    title.markdown(f"**{position + 1}. {widgets.label_for(name)}**")
    up.button(
        "", icon=":material/arrow_upward:", key=f"query.up.{uid}", type="tertiary",
        help="Move up (run earlier)", disabled=position == 0, on_click=state.move_chain_step, args=(uid, -1),
    )
    down.button(
        "", icon=":material/arrow_downward:", key=f"query.down.{uid}", type="tertiary",
        help="Move down (run later)", disabled=position == count - 1, on_click=state.move_chain_step, args=(uid, 1),
    )
    remove.button(
        "", icon=":material/close:", key=f"query.remove.{uid}", type="tertiary",
        help="Remove from the chain", on_click=state.remove_chain_step, args=(uid,),
    )


def _add(current_query: Callable[[], str]) -> None:
    name = state.widget_value(ADD_KEY)
    if name in POSTPROCESSORS.names() and POSTPROCESSORS.get_class(name).unavailable_reason() is None:
        # Added with values that act on the current query (e.g. a keyword from it), never as a silent no-op.
        state.add_chain_step(name, POSTPROCESSORS.get_class(name).starting_values(current_query()))


def _adder(current_query: Callable[[], str]) -> None:
    """The picker over every registered postprocessor (unavailable ones say why) and the button that adds it."""
    names = POSTPROCESSORS.names()
    state.keep_valid(ADD_KEY, names)

    def label(name: str) -> str:
        unavailable = POSTPROCESSORS.get_class(name).unavailable_reason()
        return f"{widgets.label_for(name)} (unavailable)" if unavailable else widgets.label_for(name)

    name = st.selectbox("Add a postprocessor", names, key=ADD_KEY, format_func=label)
    reason = POSTPROCESSORS.get_class(name).unavailable_reason()
    if reason:
        st.warning(f"{widgets.label_for(name)} cannot run here: {widgets.md_escape(reason)}.", icon=":material/block:")
    else:
        st.caption(POSTPROCESSORS.get_class(name).summary)
    st.button(
        "Add to the chain", icon=":material/add:", key="query.add.button", disabled=reason is not None,
        on_click=_add, args=(current_query,), width="stretch",
    )
