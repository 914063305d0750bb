"""Node postprocessors: what a query engine does to the retrieved nodes before the LLM reads them.

Adding one: a new module here and one import line below.
"""

from __future__ import annotations

from typing import Any

from core.postprocessors.base import Outcome, PostprocessContext, Postprocessor, SentenceSelection
from core.postprocessors.registry import POSTPROCESSORS

# Importing a module registers its postprocessor; this order is the listing's order.
from core.postprocessors import similarity_cutoff  # noqa: F401  isort: skip
from core.postprocessors import keyword  # noqa: F401  isort: skip
from core.postprocessors import metadata_replacement  # noqa: F401  isort: skip
from core.postprocessors import long_context_reorder  # noqa: F401  isort: skip
from core.postprocessors import sentence_embedding_optimizer  # noqa: F401  isort: skip
from core.postprocessors import prev_next  # noqa: F401  isort: skip
from core.postprocessors import top_n  # noqa: F401  isort: skip
from core.postprocessors import rerank  # noqa: F401  isort: skip


def get_postprocessor(name: str, **params: Any) -> Postprocessor:
    """A postprocessor by registry name, its parameters coerced and validated."""
    return POSTPROCESSORS.create(name, **params)


def describe_postprocessors() -> list[dict[str, Any]]:
    """JSON-ready listing: every postprocessor, its declared parameters and whether it can run here."""
    return [cls.describe() for cls in POSTPROCESSORS]


__all__ = [
    "POSTPROCESSORS",
    "Outcome",
    "PostprocessContext",
    "Postprocessor",
    "SentenceSelection",
    "describe_postprocessors",
    "get_postprocessor",
]
