"""The Evaluate page's sweep form: a splitter, which of its parameters to sweep and their values, the rest fixed.

What may be swept is :func:`core.evaluation.sweep.sweepable_params` (every declared number,
choice or switch); the values are read by :func:`core.evaluation.sweep.sweep_values` from the
parameter's own declaration. Nothing here decides either.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.config import PipelineConfig
from core.errors import ChunkScopeError
from core.evaluation.sweep import SWEPT, SweepSpec, configurations, sweep_values, sweepable, sweepable_params
from core.params import ParamSpec
from core.splitters import SPLITTERS
from ui import widgets

PAGE_KEY = "eval"
DEFAULT_SIZES = "256, 512, 1024"
DEFAULT_OVERLAPS = "0, 64"
# At most this many parameters at once: the combinations multiply.
MAX_SWEPT = 3


def values_key(name: str) -> str:
    """The session key of a swept parameter's values box (the size and overlap ones keep their short names)."""
    return {"chunk_size": f"{PAGE_KEY}.sweep.sizes", "chunk_overlap": f"{PAGE_KEY}.sweep.overlaps"}.get(
        name, f"{PAGE_KEY}.sweep.values.{name}"
    )


def default_values(spec: ParamSpec, current: Any) -> str:
    """What a values box starts with: the classic sizes and overlaps, every choice, or around the current value."""
    if spec.name == "chunk_size":
        return DEFAULT_SIZES
    if spec.name == "chunk_overlap":
        return DEFAULT_OVERLAPS
    if spec.kind == "choice" and spec.choices:
        return ", ".join(spec.choices)
    if spec.kind == "bool":
        return "false, true"
    if spec.kind == "int" and spec.ge is not None and spec.le is not None and spec.le - spec.ge <= 6:
        return ", ".join(str(v) for v in range(int(spec.ge), int(spec.le) + 1))
    return "" if current is None else str(current)


def sweep_form(config: PipelineConfig, selection_type: Any) -> Any:
    """A splitter, the parameters to sweep with their values, and its other parameters (the same for every run)."""
    with st.container(border=True):
        options = [cls for cls in SPLITTERS if sweepable(cls)]
        default = config.splitter.name if config.splitter.name in {c.name for c in options} else options[0].name
        left, right = st.columns([1, 1], gap="large")
        with left:
            cls = widgets.component_picker(options, "Splitter", f"{PAGE_KEY}.sweep.splitter", default=default)
            specs = {spec.name: spec for spec in sweepable_params(cls)}
            seed = config.splitter.to_params() if cls.name == config.splitter.name else {}
            swept = st.multiselect(
                "Parameters to sweep",
                list(specs),
                default=[name for name in SWEPT if name in specs] or list(specs)[:1],
                max_selections=MAX_SWEPT,
                key=f"{PAGE_KEY}.sweep.{cls.name}.params",
                help="Any declared number, choice or switch of the splitter; every combination of values runs",
            )
            texts = {
                name: st.text_input(
                    f"{name} values",
                    default_values(specs[name], seed.get(name, specs[name].default)),
                    key=values_key(name),
                    help="Comma-separated values; combinations that break a rule (overlap ≥ size) are skipped",
                )
                for name in swept
            }
        with right:
            st.caption("Other parameters, the same for every combination:")
            base = widgets.param_widgets(cls, f"{PAGE_KEY}.sweep.{cls.name}", seed or None, exclude=swept)
        if not swept:
            st.info("Choose at least one parameter to sweep.", icon=":material/tune:")
            return selection_type("Sweep", problems=("no parameter to sweep",))
        try:
            grid = {name: sweep_values(texts[name], f"{name} values", specs[name]) for name in swept}
            spec = SweepSpec(cls.name, grid, base)
            valid = len(configurations([spec]))
        except ChunkScopeError as exc:
            st.error(widgets.md_escape(str(exc)), icon=":material/error:")
            return selection_type("Sweep", problems=(str(exc),))
        total = 1
        for values in grid.values():
            total *= len(values)
        counts = " × ".join(str(len(values)) for values in grid.values())
        st.caption(f"{counts} = {total} combinations, {valid} valid.")
        return selection_type("Sweep", sweep=spec)
