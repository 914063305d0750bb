"""Widgets drawn from declared parameters: one function renders any Configurable.

A page never lays out a component's parameters by hand. It calls
:func:`param_widgets` with the component class; each :class:`~core.params.ParamSpec`
becomes the fitting input (number, slider, select box, checkbox, text, multiselect),
advanced ones fold into an expander, and the raw values come back as a dict that
:func:`try_build` turns into a validated instance or the ConfigError's sentence
(which the page shows instead of a traceback).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import streamlit as st

from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.measure import lint
from core.params import Configurable, ParamSpec, readable_name
from core.params.typed_text import format_list, read_typed, write_typed
from core.splitters import SPLITTERS
from ui import state

C = TypeVar("C", bound=Configurable)

# Ranges this small read better as a slider than as a number box.
_SLIDER_INT_SPAN = 64
_SLIDER_FLOAT_SPAN = 100.0

# A table's text wraps only in rows taller than 4rem (Streamlit's rule): this height holds three lines.
# For tables of a few rows whose cells are names or sentences (configurations, fates) rather than numbers.
WRAPPING_ROW_HEIGHT = 66


# Streamlit's Markdown (GFM) turns bare URLs, www. names and e-mail addresses into links after escapes are
# resolved, so a backslash cannot stop it; an invisible word joiner inside each trigger does.
_AUTOLINK_TRIGGER = re.compile(r"(?i)(?<=:)(?=//)|(?<=\bwww)(?=\.)|(?<=@)")
_WORD_JOINER = "\u2060"


def md_escape(text: str) -> str:
    """Untrusted text (a file name, a metadata value, a link) made literal inside ``st.markdown``.

    Markdown syntax is backslash-escaped, and URL-like runs are broken up so no link or image is made.
    """
    unlinked = _AUTOLINK_TRIGGER.sub(_WORD_JOINER, text)
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:])", r"\\\1", unlinked)


def label_for(name: str) -> str:
    """``chunk_overlap`` -> ``Chunk overlap``, ``ocr`` -> ``OCR`` (see :func:`core.params.readable_name`)."""
    return readable_name(name)


def widget_key(key: str, spec_name: str) -> str:
    """The session-state key of one parameter's widget (pages may preset it)."""
    return f"{key}.{spec_name}"


def param_widgets(
    component: type[Configurable],
    key: str,
    values: Mapping[str, Any] | None = None,
    *,
    exclude: Iterable[str] = (),
    advanced_label: str = "Advanced parameters",
    columns: int = 1,
) -> dict[str, Any]:
    """Draw one input per declared parameter of ``component`` and return their values.

    ``key`` namespaces the widgets (two forms of the same class need two keys);
    ``values`` seeds them the first time they are drawn (e.g. from a URL config).
    Parameters in ``exclude`` are neither drawn nor returned. Advanced parameters
    go in an expander. ``columns`` lays the main parameters out side by side.
    """
    values = dict(values or {})
    skipped = set(exclude)
    specs = [spec for spec in component.params() if spec.name not in skipped]
    main = [spec for spec in specs if not spec.advanced]
    advanced = [spec for spec in specs if spec.advanced]
    out: dict[str, Any] = {}
    slots = st.columns(columns) if columns > 1 and len(main) > 1 else [st.container()]
    for index, spec in enumerate(main):
        with slots[index % len(slots)]:
            out[spec.name] = _param_widget(spec, key, values)
    if advanced:
        with st.expander(advanced_label, expanded=False):
            for spec in advanced:
                out[spec.name] = _param_widget(spec, key, values)
    return out


def seed_values(component: type[Configurable], key: str, values: Mapping[str, Any]) -> None:
    """Overwrite what the widgets of ``component`` under ``key`` show (e.g. after opening a shared link)."""
    for spec in component.params():
        if spec.name in values:
            state.set_widget_value(widget_key(key, spec.name), _to_widget_value(spec, values[spec.name]))


def preset_buttons(component: type[Configurable], key: str) -> None:
    """One click to ChunkScope's defaults or to a framework's (``component.framework_defaults``), if it has any."""
    presets = getattr(component, "framework_defaults", {})
    if not presets:
        return
    defaults = {spec.name: spec.default for spec in component.params()}
    choices = {"ChunkScope's defaults": {}, **{f"{label}'s defaults": values for label, values in presets.items()}}
    with st.popover("Start from defaults", icon=":material/restart_alt:", width="stretch"):
        for label, values in choices.items():
            changed = ", ".join(
                f"{name} {value:,}" if isinstance(value, int) else f"{name} {value}" for name, value in values.items()
            )
            st.button(
                label,
                key=f"{key}.preset.{label}",
                help=changed or "The values this splitter starts with.",
                on_click=seed_values,
                args=(component, key, {**defaults, **values}),
                width="stretch",
            )


def try_build(component: type[C], values: Mapping[str, Any]) -> tuple[C | None, str | None]:
    """Validate ``values`` into an instance: ``(instance, None)`` or ``(None, the ConfigError's sentence)``."""
    try:
        return component.from_params(dict(values)), None
    except ConfigError as exc:
        return None, str(exc)


def build_or_explain(component: type[C], values: Mapping[str, Any]) -> tuple[C | None, str | None]:
    """:func:`try_build`, with the problem also shown where the widgets are (an error box), as every form does."""
    instance, problem = try_build(component, values)
    if problem:
        st.error(md_escape(problem), icon=":material/error:")
    return instance, problem


def splitter_form(
    key: str, start: tuple[str, Mapping[str, Any]], *, columns: int = 1
) -> tuple[Configurable | None, str | None]:
    """One splitter configuration: a picker over the registry and the picked splitter's parameters, validated.

    ``start`` (name, parameters) is what the form opens on; its parameters seed the
    widgets only while that splitter is picked. Shared by the pages that set
    several configurations side by side (Compare, Evaluate).
    """
    default_name, default_params = start
    cls = component_picker(SPLITTERS, "Splitter", f"{key}.splitter", default=default_name)
    seed = default_params if cls.name == default_name else None
    return build_or_explain(cls, param_widgets(cls, f"{key}.{cls.name}", seed, columns=columns))


def retrieval_form(
    current: RetrievalSettings, key: str, *, columns: int = 1, levels: bool = True
) -> RetrievalSettings | None:
    """The retrieval settings' widgets, alpha and fusion only in hybrid mode, what a hierarchy returns only where
    the chunks have ``levels``, merge_ratio only when merging, the context budget only when returning parents;
    None, with the problem shown, when invalid.

    Shared by the pages that retrieve (Query, Evaluate), so both offer the same choices in the same way.
    """
    mode_now = state.widget_value(widget_key(key, "mode"), current.mode)
    returns_now = state.widget_value(widget_key(key, "returns"), current.returns)
    hidden = (
        (() if mode_now == "hybrid" else ("alpha", "fusion"))
        + (() if returns_now == "merged" else ("merge_ratio",))
        + (() if returns_now == "parents" else ("context_budget",))
    )
    if not levels:  # chunks with no hierarchy are returned as they are: nothing to choose
        hidden += ("returns", "merge_ratio", "context_budget")
    raw = param_widgets(RetrievalSettings, key, current.to_params(), exclude=hidden, columns=columns)
    for name in hidden:  # kept as they were while hidden
        raw.setdefault(name, getattr(current, name))
    return build_or_explain(RetrievalSettings, raw)[0]


def splitter_warnings(splitter: Any) -> None:
    """One warning per problem with the splitter's settings themselves (core.measure.lint lints them)."""
    for message in lint.splitter_warnings(splitter):
        st.warning(md_escape(message), icon=":material/warning:")


def component_picker(
    registry: Iterable[type[Configurable]],
    label: str,
    key: str,
    default: str | None = None,
    *,
    help: str | None = None,
) -> type[Configurable]:
    """A select box over a registry's classes, showing each one's summary below it."""
    classes = {cls.name: cls for cls in registry}
    names = list(classes)
    state.keep_valid(key, names, default)
    name = st.selectbox(label, names, key=key, help=help, format_func=lambda n: classes[n].title())
    chosen = classes[name]
    if chosen.summary:
        st.caption(chosen.summary)
    return chosen


# -- one parameter -------------------------------------------------------------


def _param_widget(spec: ParamSpec, key: str, values: Mapping[str, Any]) -> Any:
    wkey = widget_key(key, spec.name)
    if not state.has_widget_value(wkey):
        state.set_widget_value(wkey, _to_widget_value(spec, values.get(spec.name, spec.default)))
    label = label_for(spec.name)
    help_text = spec.help
    if spec.kind == "bool":
        return st.checkbox(label, key=wkey, help=help_text)
    if spec.kind == "choice" and spec.choices:
        options = list(spec.choices)
        if spec.optional:
            options = [None, *options]
        return st.selectbox(
            label, options, key=wkey, help=help_text, format_func=lambda v: "(none)" if v is None else str(v)
        )
    if spec.kind in ("int", "float"):
        value = _number(spec, wkey, label, help_text, integer=spec.kind == "int")
        if spec.unset and value == spec.unset_value:
            # An empty box or a bare 0 says nothing: say what it means where the person looks.
            st.caption(f"{'Empty' if value is None else value}: {md_escape(spec.unset)}.")
        return value
    if spec.kind == "str_list" and spec.choices:
        return tuple(st.multiselect(label, list(spec.choices), key=wkey, help=help_text))
    if spec.kind in ("int_list", "str_list"):
        raw = st.text_input(label, key=wkey, help=f"{help_text} (comma-separated)")
        return None if spec.optional and not raw.strip() else raw
    raw = st.text_input(label, key=wkey, help=help_text)  # the help says the escape rule (core.params.typed_text.read_typed)
    if spec.optional and raw == "":
        return None
    return read_typed(raw)


def _number(spec: ParamSpec, wkey: str, label: str, help_text: str, *, integer: bool) -> Any:
    low, high = spec.ge, spec.le
    cast = int if integer else float
    bounded = low is not None and high is not None
    if bounded and not spec.optional:
        span = high - low
        if (integer and span <= _SLIDER_INT_SPAN) or (not integer and span <= _SLIDER_FLOAT_SPAN):
            step = 1 if integer else (0.01 if span <= 1 else 0.5)
            return st.slider(label, cast(low), cast(high), key=wkey, step=cast(step), help=help_text)
    kwargs: dict[str, Any] = {"help": help_text, "key": wkey}
    if low is not None:
        kwargs["min_value"] = cast(low)
    if high is not None:
        kwargs["max_value"] = cast(high)
    kwargs["step"] = 1 if integer else 0.05
    if not integer:
        # %g: a budget of 20 minutes reads "20", a weight of 0.35 "0.35", not "20.000" and "0.350".
        kwargs["format"] = "%g"
    return st.number_input(label, **kwargs)


def _to_widget_value(spec: ParamSpec, value: Any) -> Any:
    """What the widget holds for a parameter value (lists as text, escapes shown)."""
    if value is None:
        return None if spec.kind in ("int", "float", "choice") else ""
    if spec.kind in ("int_list", "str_list"):
        if spec.choices:
            return list(value)
        if isinstance(value, str):
            return value
        # An empty list is an empty box ("[]" would read as a literal); only an optional list tells "" from none.
        return "" if not value and not spec.optional else format_list(value)
    if spec.kind == "str":
        return write_typed(str(value))
    if spec.kind == "int":
        return int(value)
    if spec.kind == "float":
        return float(value)
    return value
