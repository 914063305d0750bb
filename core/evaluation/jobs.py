"""One configuration's evaluation as plain values in and out: what a worker runs for a sweep or the tuner.

:func:`evaluate_job` takes an :class:`EvalJob` (the splitter by name and
parameters) and the run's :class:`EvalInputs` (documents, queries, retrieval
settings) and returns the :class:`~core.evaluation.evaluate.Evaluation`, all picklable,
so :func:`core.runtime.parallel.ordered_map` can run it in this process, a process pool
or on Ray and get the same result. A model cannot be pickled: workers are sent
an :class:`EmbedderRef` and load the model once per process; the vectors of
chunk texts they share reach each other through the disk cache
(:mod:`core.embed.cache`, keyed by model and text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.config_parts import DEFAULT_RETRIEVAL, RetrievalSettings
from core.errors import ConfigError
from core.evaluation.evaluate import Evaluation, evaluate
from core.evaluation.queries import EvalQuery
from core.evaluation.runner import Report
from core.schema import Document
from core.splitters import get_splitter

if TYPE_CHECKING:
    from core.embed.embedder import Embedder

__all__ = ["EmbedderRef", "EvalInputs", "EvalJob", "evaluate_job", "resolve_embedder", "shippable_embedder"]


@dataclass(frozen=True)
class EmbedderRef:
    """An embedding model named by plain values and loaded where the work runs (once per process)."""

    model: str | None = None  # a local model folder; None: the packaged one

    def get(self) -> Embedder:
        from core.embed.embedder import get_embedder

        return get_embedder(self.model)


@dataclass(frozen=True)
class EvalJob:
    """One configuration as plain values: its label, its splitter by name and parameters, the swept values."""

    label: str
    splitter: str
    params: dict[str, Any]
    combination: dict[str, Any]


@dataclass(frozen=True)
class EvalInputs:
    """What every configuration of a run is scored on; ``embedder`` is an Embedder (in-process only) or a ref."""

    documents: tuple[Document, ...]
    queries: tuple[EvalQuery, ...]
    retrieval: RetrievalSettings = DEFAULT_RETRIEVAL
    scope: str = "corpus"
    embedder: Any = None
    # The configuration whose steps after the split run on every configuration's nodes (its metadata settings
    # and LLM extractors: evaluate's ``pipeline``; the documents were prepared with it), and evaluate's switches.
    pipeline: Any = None
    bounded: bool = False
    context_tokens: bool = False


def resolve_embedder(embedder: Any) -> Any:
    """The Embedder itself: a ref (anything with ``get()``, e.g. :class:`EmbedderRef`) loads it here."""
    get = getattr(embedder, "get", None)
    return get() if callable(get) else embedder


def shippable_embedder(embedder: Any) -> Any:
    """What a worker is sent for ``embedder``: a ref as is, a plain :class:`~core.embed.embedder.Embedder` by its model.

    A model cannot be pickled; a worker loads its own and shares the vectors through the disk cache.
    """
    if embedder is None or callable(getattr(embedder, "get", None)):
        return embedder
    from core.embed.embedder import Embedder as Loaded

    if type(embedder) is not Loaded:
        raise ConfigError("an embedder sent to workers must be a core.evaluation.sweep.EmbedderRef (or have get())")
    return EmbedderRef(embedder.model_path)


def evaluate_job(job: EvalJob, inputs: EvalInputs, report: Report | None = None) -> Evaluation:
    """One configuration's Evaluation from plain values, the same in this process or in a worker."""
    splitter = get_splitter(job.splitter, **job.params)
    result = evaluate(
        inputs.documents,
        inputs.queries,
        splitter,
        embedder=resolve_embedder(inputs.embedder) if inputs.retrieval.mode != "bm25" else None,
        retrieval=inputs.retrieval,
        scope=inputs.scope,
        report=report,
        pipeline=inputs.pipeline,
        bounded=inputs.bounded,
        context_tokens=inputs.context_tokens,
    )
    # A swept value is shown even where it is the default (rows list only changed parameters otherwise).
    result.params = {**result.params, **job.combination}
    return result
