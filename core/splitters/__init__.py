"""Splitters (node parsers). Adding one: a new module here and one import line below."""

from __future__ import annotations

from typing import Any

from core.splitters.base import SizedSplitter, Span, Splitter
from core.splitters.fast.packing import merge_pieces
from core.splitters.nodes import build_nodes
from core.splitters.registry import SPLITTERS

# Importing a module registers its splitters.
from core.splitters import character  # noqa: F401  isort: skip
from core.splitters import recursive, token, sentence, sentence_window, code  # noqa: F401  isort: skip
from core.splitters import markdown, html, semantic, hierarchical  # noqa: F401  isort: skip


def get_splitter(name: str, **params: Any) -> Splitter:
    """A splitter by registry name, its parameters coerced and validated."""
    return SPLITTERS.create(name, **params)


__all__ = ["SPLITTERS", "SizedSplitter", "Span", "Splitter", "build_nodes", "get_splitter", "merge_pieces"]
