"""What the Compare and Evaluate pages show of several configurations, as plain data.

The configurations' labels and starting points, a splitter's settings in a few
words, the boundary diff's table rows and the metrics table's rows. No
Streamlit here: :mod:`ui.compare` and :mod:`ui.evaluate` draw these.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from core.errors import ConfigError
from core.measure.compare import BoundaryChange, BoundaryDiff
from core.registry import Registry

LABELS = ("A", "B", "C", "D")
MAX_CONFIGS = len(LABELS)

# What slots B, C and D start with when the page opens: other families at sizes that
# cut the sample documents into a readable number of chunks.
PRESETS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("recursive", {"chunk_size": 800, "chunk_overlap": 100}),
    ("markdown", {}),
    ("sentence", {"chunk_size": 256, "chunk_overlap": 32}),
    ("token", {"chunk_size": 256, "chunk_overlap": 32}),
    ("character", {"chunk_size": 800, "chunk_overlap": 100}),
)


def starting_slots(registry: Registry, first: tuple[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The four slots' starting splitter and parameters.

    A is ``first`` (the session's current splitter); B is the same splitter at half
    its chunk size, when it has one, so the boundary diff has a story to tell;
    the rest come from :data:`PRESETS`, skipping what is not installed or not valid.
    """
    slots = [first]
    name, params = first
    half = _halved(registry, name, params)
    if half is not None:
        slots.append((name, half))
    for preset_name, preset_params in PRESETS:
        if len(slots) >= MAX_CONFIGS:
            break
        if preset_name == name or preset_name not in registry:
            continue
        try:
            registry.create(preset_name, **preset_params)
        except ConfigError:
            continue
        slots.append((preset_name, dict(preset_params)))
    while len(slots) < MAX_CONFIGS:
        slots.append(first)
    return slots


def _halved(registry: Registry, name: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
    size = params.get("chunk_size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 2:
        return None
    smaller = {**params, "chunk_size": size // 2}
    if "chunk_overlap" in params:
        smaller["chunk_overlap"] = min(int(params["chunk_overlap"]), size // 8)
    try:
        registry.create(name, **smaller)
    except ConfigError:
        return None
    return smaller


def settings_summary(splitter: Any) -> str:
    """``size 512 · overlap 50``: the parameters that differ from the defaults."""
    changed = splitter.to_params(only_changed=True)
    if not changed:
        return "defaults"
    # "chunk_size" reads as "size" here: the column is narrow and the context says chunk.
    return " · ".join(f"{key.removeprefix('chunk_')} {_show(value)}" for key, value in changed.items())


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    if isinstance(value, str):
        return repr(value)
    return str(value)


# -- boundary diff ---------------------------------------------------------------


def describe(change: BoundaryChange) -> str:
    if change.kind == "moved":
        return f"moved {change.before:,} → {change.after:,} ({change.shift:+,} characters)"
    if change.kind == "added":
        return f"new cut at {change.after:,}"
    if change.kind == "removed":
        return f"cut at {change.before:,} is gone"
    return f"same cut at {change.before:,}"


def context_at(text: str, position: int, width: int = 28) -> str:
    """The text either side of a cut, the cut shown as ``│`` and line breaks as ``⏎``."""
    before = text[max(0, position - width) : position]
    after = text[position : position + width]
    show = lambda part: part.replace("\r", "").replace("\n", "⏎").replace("\t", " ")  # noqa: E731
    return f"{'…' if position - width > 0 else ''}{show(before)}│{show(after)}{'…' if position + width < len(text) else ''}"


def change_column_order(labels: Sequence[str]) -> list[str]:
    """The changed cut points' columns in reading order: every configuration's position before the shift and the
    text (rows of C against A come after B's, and would otherwise put ``in C`` after the text)."""
    return ["compared", "change", *(f"in {label}" for label in labels), "shift", "text around the cut"]


def change_rows(label: str, diff: BoundaryDiff, text: str) -> list[dict[str, Any]]:
    """The changed cut points of one comparison as table rows, in document order."""
    rows = []
    for change in diff.changes:
        if change.kind == "unchanged":
            continue
        rows.append(
            {
                "compared": f"{label} vs A",
                "change": change.kind,
                "in A": change.before,
                f"in {label}": change.after,
                "shift": change.shift if change.kind == "moved" else None,
                "text around the cut": context_at(text, change.position),
            }
        )
    return rows


# -- metrics ---------------------------------------------------------------------


def metrics_row(label: str, splitter: Any, metrics: Any) -> dict[str, Any]:
    """One row of the metrics table (sizes in model tokens; shares as percentages)."""
    return {
        "config": label,
        "splitter": splitter.name,
        "settings": settings_summary(splitter),
        "nodes": metrics.count,
        "mean tokens": round(metrics.tokens.mean, 1),
        "p95 tokens": round(metrics.tokens.p95, 1),
        "max tokens": int(metrics.tokens.max),
        "coverage": 100 * metrics.coverage,
        "overlap": 100 * metrics.overlap,
        "mid-sentence": 100 * metrics.mid_sentence,
        "over window": 100 * metrics.over_window,
    }


def metrics_options(splitter: Any) -> str:
    """The metrics options for one splitter, as cache-key JSON: model tokens, and its own limit when it counts them."""
    options: dict[str, Any] = {"tokenizer": "model"}
    if splitter.size_unit == "model" and splitter.size_limit:
        options["size_limit"] = splitter.size_limit
    return json.dumps(options, sort_keys=True)
