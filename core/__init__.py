"""ChunkScope's engine: load documents, split them into nodes, look at what readers see.

Framework-free: usable from a notebook, a script or the ``chunkscope`` CLI.
"""

from core.config import PipelineConfig
from core.documents import run_split
from core.errors import ChunkScopeError, ConfigError, LoadError
from core.evaluation import EvalQuery, Evaluation, evaluate, load_queries
from core.extractors import get_extractor
from core.loaders import load, load_bytes
from core.postprocessors import get_postprocessor
from core.schema import Document, Element, MetadataMode, Node, NodeRelationship, NodeWithScore, Page
from core.splitters import get_splitter
from core.sweep import SweepSpec, sweep, sweep_evaluations

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
