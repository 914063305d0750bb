"""ChunkScope's engine: load documents, split them into nodes, look at what readers see.

Framework-free: usable from a notebook, a script or the ``chunkscope`` CLI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each public name and the module it comes from. They are imported on first use (PEP 562), so a command
# that needs one module (``chunkscope query`` with every vector cached) does not pay for all of them.
_EXPORTS = {
    "PipelineConfig": "core.config",
    "run_split": "core.documents",
    "ChunkScopeError": "core.errors",
    "ConfigError": "core.errors",
    "LoadError": "core.errors",
    "EvalQuery": "core.evaluation.evaluate",
    "Evaluation": "core.evaluation.evaluate",
    "evaluate": "core.evaluation.evaluate",
    "load_queries": "core.evaluation.evaluate",
    "get_extractor": "core.extractors",
    "load": "core.loaders",
    "load_bytes": "core.loaders",
    "get_postprocessor": "core.postprocessors",
    "Document": "core.schema",
    "Element": "core.schema",
    "MetadataMode": "core.schema",
    "Node": "core.schema",
    "NodeRelationship": "core.schema",
    "NodeWithScore": "core.schema",
    "Page": "core.schema",
    "get_splitter": "core.splitters",
    "SweepSpec": "core.evaluation.sweep",
    "sweep": "core.evaluation.sweep",
    "sweep_evaluations": "core.evaluation.sweep",
}

# Who registers components into a lower layer's registry from above (core.registry imports them on its first
# lookup): the framework engines are splitters built on the splitters' base, so only this facade names them.
PROVIDERS: dict[str, tuple[str, ...]] = {"splitter": ("core.engines",)}

if TYPE_CHECKING:
    from core.config import PipelineConfig
    from core.documents import run_split
    from core.errors import ChunkScopeError, ConfigError, LoadError
    from core.evaluation.evaluate import Evaluation, evaluate
    from core.evaluation.queries import EvalQuery, load_queries
    from core.evaluation.sweep import SweepSpec, sweep, sweep_evaluations
    from core.extractors import get_extractor
    from core.loaders import load, load_bytes
    from core.postprocessors import get_postprocessor
    from core.schema import Document, Element, MetadataMode, Node, NodeRelationship, NodeWithScore, Page
    from core.splitters import get_splitter


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "ChunkScopeError",
    "ConfigError",
    "Document",
    "Element",
    "EvalQuery",
    "Evaluation",
    "LoadError",
    "MetadataMode",
    "Node",
    "NodeRelationship",
    "NodeWithScore",
    "Page",
    "PipelineConfig",
    "SweepSpec",
    "evaluate",
    "get_extractor",
    "get_postprocessor",
    "get_splitter",
    "load",
    "load_bytes",
    "load_queries",
    "run_split",
    "sweep",
    "sweep_evaluations",
]
