"""Metadata extractors: offline ones (title, keywords, summary) and LlamaIndex's LLM extractors (llm).

Adding one: a new module here and one import line below.
"""

from __future__ import annotations

from typing import Any

from core.extractors.base import Extractor
from core.extractors.registry import EXTRACTORS

# Importing a module registers its extractors.
from core.extractors import title, keywords, summary, llm  # noqa: F401  isort: skip


def get_extractor(name: str, **params: Any) -> Extractor:
    """An extractor by registry name, its parameters coerced and validated."""
    return EXTRACTORS.create(name, **params)


__all__ = ["EXTRACTORS", "Extractor", "get_extractor"]
