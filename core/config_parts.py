"""What a PipelineConfig is made of: components from four registries, and two settings of its own.

The components (splitter, loaders, extractors, postprocessors) are instances of
registered classes, looked up by name when a config is read. The two sections
every config has are declared here: :class:`MetadataSettings` (how metadata is
rendered for each reader) and :class:`RetrievalSettings` (how nodes are
retrieved for a query).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.errors import ConfigError
from core.params import Configurable, param
from core.params.templates import check_length as _check_length
from core.params.templates import check_template as _check_template
from core.registry import Registry
from core.schema import (
    DEFAULT_METADATA_SEPARATOR,
    DEFAULT_METADATA_TEMPLATE,
    DEFAULT_TEXT_TEMPLATE,
    METADATA_TEMPLATE_FIELDS,
    TEXT_TEMPLATE_FIELDS,
)

# The best general configuration the benchmarks support (benchmarks/RESULTS.md, "The tuner's levers"): hierarchical
# chunks whose 250-token leaves are searched (hybrid) and whose 2048-token parents are read (DEFAULT_RETRIEVAL).
DEFAULT_SPLITTER = "hierarchical"

MetadataValue = str | int | float | bool
# Who reads a node's section path (core.extractors.sections): nobody (no key), the embedding model, or both readers.
SectionMetadata = Literal["off", "embed", "llm_and_embed"]




@dataclass(frozen=True)
class MetadataSettings(Configurable):
    """How metadata is rendered for the LLM and the embedding model (as in LlamaIndex).

    ``extra`` holds document metadata the user adds (key, value pairs); it is
    not a declared parameter because its keys are the user's own.
    """

    name = "metadata"
    summary = "Extra document metadata, excluded keys per reader, and the templates that render metadata."

    excluded_llm_metadata_keys: tuple[str, ...] | None = param(
        None, "Metadata keys the LLM does not see; unset keeps what the loader chose."
    )
    excluded_embed_metadata_keys: tuple[str, ...] | None = param(
        None, "Metadata keys the embedding model does not see; unset keeps what the loader chose."
    )
    metadata_template: str = param(
        DEFAULT_METADATA_TEMPLATE, "How one metadata pair is written; uses {key} and {value}, each at most once."
    )
    metadata_separator: str = param(DEFAULT_METADATA_SEPARATOR, "What goes between metadata pairs.")
    text_template: str = param(
        DEFAULT_TEXT_TEMPLATE, "How metadata and text are joined; uses {metadata_str} and {content}, each at most once."
    )
    # The two levers of what the embedding model reads (benchmarks/RESULTS.md, "What the embedding reads").
    embed_metadata_keys: tuple[str, ...] | None = param(
        None,
        "Only these metadata keys reach the embedding model, on top of the excluded ones (an allow list over "
        "every key, the splitter's too); unset: every key that is not excluded.",
    )
    section_metadata: SectionMetadata = param(
        "off",
        "Write 'section' into each node's metadata: the headings above where the node starts, joined by ' > ' "
        "(from the headings the loader found, for every splitter; added after the split, so sizes do not count "
        "it). embed: only the embedding model reads it (a contextual header); llm_and_embed: the LLM too.",
    )
    extra: tuple[tuple[str, MetadataValue], ...] = ()

    def validate(self) -> None:
        _check_length(self.name, "metadata_separator", self.metadata_separator)
        _check_template(self.name, "metadata_template", self.metadata_template, METADATA_TEMPLATE_FIELDS, required=())
        _check_template(self.name, "text_template", self.text_template, TEXT_TEMPLATE_FIELDS, required=("content",))
        seen: set[str] = set()
        for key, value in self.extra:
            if not isinstance(key, str) or not key.strip():
                raise ConfigError(f"{self.name}: a metadata key must be non-empty text, got {key!r}")
            if key in seen:
                raise ConfigError(f"{self.name}: metadata key {key!r} is given twice")
            seen.add(key)
            if not isinstance(value, (str, int, float, bool)):
                raise ConfigError(f"{self.name}: metadata value for {key!r} must be text or a number, got {value!r}")

    @property
    def extra_metadata(self) -> dict[str, MetadataValue]:
        return dict(self.extra)

    def view_settings(self) -> dict[str, Any]:
        """The settings to hand to :meth:`core.schema.Document.with_metadata`; unset keys are left out."""
        settings: dict[str, Any] = {
            "metadata_template": self.metadata_template,
            "metadata_separator": self.metadata_separator,
            "text_template": self.text_template,
        }
        if self.excluded_llm_metadata_keys is not None:
            settings["excluded_llm_metadata_keys"] = list(self.excluded_llm_metadata_keys)
        if self.excluded_embed_metadata_keys is not None:
            settings["excluded_embed_metadata_keys"] = list(self.excluded_embed_metadata_keys)
        return settings

    def embed_hidden(self, metadata: Mapping[str, Any], excluded: Sequence[str]) -> list[str]:
        """The keys hidden from the embedding model once :attr:`embed_metadata_keys` applies: ``excluded``,
        then, in ``metadata``'s order, every other key the allow list leaves out."""
        if self.embed_metadata_keys is None:
            return list(excluded)
        allowed = set(self.embed_metadata_keys)
        return [*excluded, *(key for key in metadata if key not in allowed and key not in excluded)]


RetrievalMode = Literal["dense", "bm25", "hybrid"]
# How hybrid retrieval fuses its two rankings: the names LlamaIndex's QueryFusionRetriever gives its modes.
Fusion = Literal["relative_score", "reciprocal_rank"]
# What a retrieval returns from a hierarchy of chunks (the hierarchical splitter's levels).
Returns = Literal["chunks", "parents", "merged"]


@dataclass(frozen=True)
class RetrievalSettings(Configurable):
    """How nodes are retrieved for a query before the postprocessors run."""

    name = "retrieval"
    summary = "Top-k retrieval over node embeddings, optionally hybrid with BM25."

    top_k: int = param(5, "How many nodes the retriever returns (LlamaIndex's similarity_top_k).", ge=1, le=200)
    # Hybrid by default: it beat dense and BM25 alone on every question set of benchmarks/RESULTS.md.
    mode: RetrievalMode = param(
        "hybrid", "Dense: cosine over embeddings; bm25: keywords only; hybrid: a weighted mix of both."
    )
    alpha: float = param(0.5, "Hybrid only: the dense score's weight (1 = dense only, 0 = BM25 only).", ge=0.0, le=1.0)
    fusion: Fusion = param(
        "relative_score",
        "Hybrid only. relative_score: each retriever's scores min-max scaled, then weighted by alpha. "
        "reciprocal_rank: alpha / (60 + dense rank) + (1 - alpha) / (60 + BM25 rank) over each retriever's top_k "
        "(LangChain's EnsembleRetriever; LlamaIndex's reciprocal_rerank at alpha 0.5).",
    )
    # Parents by default: on a hierarchy, the leaves fit the embedding model's window and the parents give
    # the LLM their context (benchmarks/RESULTS.md); chunks with no hierarchy are returned as they are.
    returns: Returns = param(
        "parents",
        "Hierarchical chunks only (chunks with a parent). chunks: every chunk of every level is retrieved as it is. "
        "parents: only the smallest chunks are searched and each one's top-level parent is returned, once "
        "(LangChain's ParentDocumentRetriever, LlamaIndex's recursive retrieval). merged: the top_k smallest chunks "
        "are retrieved and merged into their parent where more than merge_ratio of its children were "
        "(LlamaIndex's AutoMergingRetriever).",
    )
    merge_ratio: float = param(
        0.5, "returns=merged only: the share of a parent's children that must be retrieved to merge them.", ge=0.0, le=1.0
    )
    # Five 2048-token parents read more than LlamaIndex's defaults (five 1,024-token chunks) on long files. 5,500
    # is about the most those defaults read a query on the benchmarks' sets (4,786-5,479 model tokens): within
    # it the default reads 17-37% less than them on every set and keeps nearly all of its MRR (benchmarks/RESULTS.md).
    context_budget: int = param(
        5500,
        "returns=parents only: at most this many model tokens of context per query (the LLM views of what is "
        "returned). Best leaf first, each leaf's top-level parent is returned while it fits, else the leaf itself, "
        "else nothing for that leaf (the best leaf is always returned). 0: no budget.",
        ge=0,
        le=1_000_000,
    )


# The settings a retrieval uses when none are given: the app's, the CLI's and the Python API's defaults.
DEFAULT_RETRIEVAL = RetrievalSettings()
# The metadata settings of a run that names none: what every loader chose, no allow list, no section path.
DEFAULT_METADATA = MetadataSettings()


def splitter_registry() -> Registry:
    from core.splitters import SPLITTERS

    return SPLITTERS


def loader_registry() -> Registry:
    from core.loaders import LOADERS

    return LOADERS


def extractor_registry() -> Registry:
    from core.extractors import EXTRACTORS

    return EXTRACTORS


def postprocessor_registry() -> Registry:
    try:
        from core.postprocessors import POSTPROCESSORS
    except ImportError:
        raise ConfigError("postprocessors are not available in this installation") from None
    return POSTPROCESSORS


def default_splitter_name() -> str:
    """The splitter a run uses when none is named: :data:`DEFAULT_SPLITTER`, or, in an install without
    it, the first registered one (character, which always ships). The CLI, the app and a default
    :class:`~core.config.PipelineConfig` all ask this."""
    registry = splitter_registry()
    return DEFAULT_SPLITTER if DEFAULT_SPLITTER in registry else next(iter(registry)).name


def default_splitter() -> Configurable:
    return splitter_registry().create(default_splitter_name())
