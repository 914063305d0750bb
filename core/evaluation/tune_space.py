"""The tuner's default space and its recommended configuration: what ``chunkscope tune`` and the Tune tab search.

Declared once here, read by the CLI (:mod:`core.cli.tune`) and the app (``ui/evaluate_tune.py``), so the Tune
tab with its defaults searches what the CLI searches. The space holds the levers that move retrieval
(benchmarks/RESULTS.md, "The tuner's levers"):

- chunk sizes and overlaps of the sentence splitter (what the EMBED view holds, within the model's window);
- **retrieve small, read large**: hierarchical chunks whose leaves are searched and whose parents are read
  (``returns="parents"``) or merged (``"merged"``, LlamaIndex's AutoMergingRetriever rule);
- dense, BM25 and hybrid retrieval, hybrid weights, and both fusions frameworks deploy (min-max weighted,
  reciprocal rank);
- as yardsticks, LlamaIndex's ``SentenceSplitter()`` at its defaults and the recommended configuration.

The **recommended configuration** is the best general one the benchmarks support: hierarchical chunks of
2048 and 256 tokens (overlap 20), the 256-token leaves searched with hybrid retrieval (alpha 0.5) and their
2048-token parents returned. Chosen on two question sets and then confirmed on three others it was not
chosen on; the tuner measures it first and stays with it unless another configuration is clearly better.
"""

from __future__ import annotations

from typing import Any

from core.config_parts import DEFAULT_RETRIEVAL
from core.evaluation.sweep import SweepSpec

__all__ = [
    "DEFAULT_ALPHAS",
    "DEFAULT_FUSIONS",
    "DEFAULT_MODES",
    "DEFAULT_RETURNS",
    "DEFAULT_TOP_KS",
    "FRAMEWORK_DEFAULT",
    "HIERARCHIES",
    "RECOMMENDED",
    "SENTENCE_GRID",
    "default_specs",
    "recommended_splitter",
]

# The classic sizes and overlaps, for every splitter that declares them.
SENTENCE_GRID: dict[str, list[int]] = {"chunk_size": [128, 256, 512, 1024], "chunk_overlap": [0, 64]}
# (parent, leaf) sizes in tokens: leaves of 128-256 tokens fit all-MiniLM-L6-v2's window whole.
HIERARCHIES: list[tuple[int, int]] = [(2048, 256), (1024, 256), (1024, 128), (512, 128)]
FRAMEWORK_DEFAULT = "llamaindex.sentence"  # LlamaIndex's SentenceSplitter() at its defaults
RECOMMENDED = SweepSpec("hierarchical", base={"chunk_sizes": (2048, 256), "chunk_overlap": 20})

DEFAULT_MODES = ("dense", "bm25", "hybrid")
DEFAULT_ALPHAS = (0.3, 0.5, 0.7)
DEFAULT_FUSIONS = ("relative_score", "reciprocal_rank")
DEFAULT_RETURNS = ("parents", "merged")
DEFAULT_TOP_KS = (DEFAULT_RETRIEVAL.top_k,)


def recommended_splitter() -> Any:
    """The recommended configuration's splitter (its retrieval is :data:`~core.config_parts.DEFAULT_RETRIEVAL`)."""
    from core.splitters import get_splitter

    return get_splitter(RECOMMENDED.splitter, **RECOMMENDED.base)


def default_specs(available: set[str] | None = None) -> list[SweepSpec]:
    """The default space's splitter sweeps (those whose splitters this installation has, if ``available`` is given)."""
    specs = [
        SweepSpec("sentence", {key: list(values) for key, values in SENTENCE_GRID.items()}),
        SweepSpec("hierarchical", {"chunk_sizes": list(HIERARCHIES)}, {"chunk_overlap": 20}),
        SweepSpec(FRAMEWORK_DEFAULT),
    ]
    return [spec for spec in specs if available is None or spec.splitter in available]

