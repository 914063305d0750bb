"""Helpers for the Metadata page: the key/value editor's rows, key origins, and excluded-key choices.

Pure functions (no Streamlit calls), so they are tested without a running app.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from core.schema import Node

EDITOR_COLUMNS = ("key", "value")

ORIGIN_YOURS = "added here"
ORIGIN_EXTRACTOR = "extractor"
ORIGIN_LOADER = "loader"
ORIGIN_SPLITTER = "splitter"


def extra_frame(extra: Iterable[tuple[str, Any]]) -> pd.DataFrame:
    """The user's metadata pairs as the editor's table (values shown as text)."""
    return pd.DataFrame([{"key": key, "value": str(value)} for key, value in extra], columns=list(EDITOR_COLUMNS))


def extra_from_rows(rows: Sequence[Mapping[str, Any]]) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The pairs from the editor's rows, and a sentence about the first problem (or None).

    Blank rows are skipped; a value without a key and a key given twice are problems.
    """
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        key = _cell(row.get("key"))
        value = _cell(row.get("value"))
        if not key:
            if value:
                return tuple(pairs), f"Row {number} has a value but no key: give it a key or clear the row."
            continue
        if key in seen:
            return tuple(pairs), f"The key {key!r} is given twice: each key can hold one value."
        seen.add(key)
        pairs.append((key, value))
    return tuple(pairs), None


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):  # empty cells arrive as None or NaN
        return ""
    return str(value).strip()


def key_origins(
    node: Node,
    *,
    loader_keys: Iterable[str],
    extra_keys: Iterable[str],
    extractor_keys: Iterable[str],
) -> dict[str, str]:
    """Where each of ``node``'s metadata keys comes from; the user's keys win, as they do in the config."""
    yours, extracted, loaded = set(extra_keys), set(extractor_keys), set(loader_keys)
    origins = {}
    for key in node.metadata:
        if key in yours:
            origins[key] = ORIGIN_YOURS
        elif key in extracted:
            origins[key] = ORIGIN_EXTRACTOR
        elif key in loaded:
            origins[key] = ORIGIN_LOADER
        else:
            origins[key] = ORIGIN_SPLITTER
    return origins


def metadata_rows(node: Node, origins: Mapping[str, str]) -> pd.DataFrame:
    """One row per key of ``node``: value, origin, and whether the LLM and the embedding model see it."""
    llm_hidden = set(node.excluded_llm_metadata_keys)
    embed_hidden = set(node.excluded_embed_metadata_keys)
    return pd.DataFrame(
        [
            {
                "key": key,
                "value": str(value),
                "from": origins.get(key, ORIGIN_SPLITTER),
                "LLM sees": key not in llm_hidden,
                "EMBED sees": key not in embed_hidden,
            }
            for key, value in node.metadata.items()
        ],
        columns=["key", "value", "from", "LLM sees", "EMBED sees"],
    )


def key_choices(nodes: Sequence[Node], *also: Iterable[str]) -> list[str]:
    """Every metadata key the nodes carry (in first-seen order), plus ``also`` (e.g. keys already excluded)."""
    keys: dict[str, None] = {}
    for node in nodes:
        keys.update(dict.fromkeys(node.metadata))
    for extra in also:
        keys.update(dict.fromkeys(extra))
    return list(keys)


def chosen_exclusions(
    selected: Sequence[str], configured: Sequence[str] | None, loader_default: Sequence[str]
) -> tuple[str, ...] | None:
    """What the config should hold for one reader's excluded keys.

    Unset (None) means "what the loader chose"; it stays unset while the selection
    still equals the loader's choice, so configs and links only carry real changes.
    """
    if configured is None and sorted(selected) == sorted(loader_default):
        return None
    return tuple(selected)
