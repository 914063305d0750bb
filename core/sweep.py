"""Evaluating many configurations: splitters side by side, or a chunk_size × chunk_overlap sweep.

:func:`core.evaluation.evaluate` scores one configuration; the functions here
run it for several and report progress as they go. A splitter is *sweepable*
when it declares both swept parameters; the values to sweep are read as any
list parameter is (:func:`core.params.parse_list`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import TYPE_CHECKING, Any

from core.compare_view import LABELS, settings_summary
from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.evaluation import EvalQuery, evaluate
from core.params import Configurable, parse_list
from core.retrieval import RetrievalMode
from core.schema import Document
from core.splitters import SPLITTERS, get_splitter

if TYPE_CHECKING:
    from core.embeddings import Embedder

SWEPT = ("chunk_size", "chunk_overlap")
# (done, total, what is happening): how a run of several configurations reports progress.
Report = Callable[[float, str], None]


@dataclass(frozen=True)
class SweepSpec:
    """One sweep: ``splitter`` at every chunk_size × chunk_overlap pair, the other parameters at ``base``."""

    splitter: str
    sizes: list[int]
    overlaps: list[int]
    base: dict[str, Any]


def sweepable(cls: type[Configurable]) -> bool:
    """Whether a splitter class declares both parameters a sweep varies."""
    return set(SWEPT) <= {spec.name for spec in cls.params()}


def check_sweepable(splitter: str) -> None:
    if not sweepable(SPLITTERS.get_class(splitter)):
        raise ConfigError(f"splitter {splitter!r} has no chunk_size and chunk_overlap to sweep")


def sweep_values(text: str, name: str) -> list[int]:
    """``"256, 512"`` -> ``[256, 512]``, sorted and without repeats; anything else raises ConfigError naming ``name``."""
    try:
        items = parse_list(text)
    except ValueError:
        raise ConfigError(f"{name}: not a list of whole numbers: {text!r}") from None
    if not items:
        raise ConfigError(f"{name}: give at least one whole number")
    values = []
    for item in items:
        piece = str(item).strip()
        if not (piece.isascii() and piece.isdigit()):
            raise ConfigError(f"{name}: {piece!r} is not a whole number ≥ 0")
        values.append(int(piece))
    return sorted(set(values))


def sweep(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    splitter: str,
    chunk_sizes: Sequence[int],
    chunk_overlaps: Sequence[int],
    *,
    base_params: Mapping[str, Any] | None = None,
    embedder: Embedder | None = None,
    top_k: int = 5,
    mode: RetrievalMode = "dense",
    alpha: float = 0.5,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Evaluate every valid chunk_size x chunk_overlap pair; invalid pairs (overlap >= size) are skipped.

    Returns one row per evaluated pair (see :meth:`Evaluation.to_row`), in
    chunk_size then chunk_overlap order; identical chunk texts are embedded once.
    """
    check_sweepable(splitter)
    configs = []
    for size, overlap in product(sorted(set(chunk_sizes)), sorted(set(chunk_overlaps))):
        params = {**dict(base_params or {}), "chunk_size": size, "chunk_overlap": overlap}
        try:
            configs.append(get_splitter(splitter, **params))
        except ConfigError:
            continue
    if not configs:
        raise ConfigError("no chunk_size and chunk_overlap pair in the sweep is valid (overlap must be below size)")
    rows = []
    for done, config in enumerate(configs, start=1):
        result = evaluate(documents, queries, config, embedder=embedder, top_k=top_k, mode=mode, alpha=alpha)
        rows.append(result.to_row())
        if progress is not None:
            progress(done, len(configs))
    return rows


def evaluate_configurations(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    splitters: Sequence[Any],
    *,
    retrieval: RetrievalSettings,
    embedder: Any,
    report: Report,
) -> list[dict[str, Any]]:
    """One row per splitter (``Evaluation.to_row`` plus its label and settings), reporting progress as it goes.

    Each configuration's nodes are embedded first with a progress callback; the
    embedder keeps the vectors (by text), so ``evaluate`` then finds them cached.
    """
    from core.embeddings import embed_nodes

    rows = []
    count = len(splitters)
    for index, splitter in enumerate(splitters):
        label = LABELS[index] if index < len(LABELS) else str(index + 1)
        name = f"{label} ({index + 1} of {count})"
        if retrieval.mode != "bm25":
            nodes = splitter.split(list(documents))

            def embedding(done: int, total: int, index: int = index, name: str = name) -> None:
                report(
                    (index + 0.8 * done / max(total, 1)) / count,
                    f"Configuration {name}: embedding {done:,} of {total:,} chunks",
                )

            report(index / count, f"Configuration {name}: embedding {len(nodes):,} chunks")
            embed_nodes(nodes, embedder, progress=embedding)

        def scoring(done: int, total: int, index: int = index, name: str = name) -> None:
            report(
                (index + 0.8 + 0.2 * done / max(total, 1)) / count,
                f"Configuration {name}: scoring query {done} of {total}",
            )

        result = evaluate(documents, queries, splitter, embedder=embedder, progress=scoring, **retrieval.to_params())
        rows.append({"config": label, **result.to_row(), "settings": settings_summary(splitter)})
    report(1.0, "Done")
    return rows


def evaluate_sweep(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    spec: SweepSpec,
    *,
    retrieval: RetrievalSettings,
    embedder: Any,
    report: Report,
) -> list[dict[str, Any]]:
    """:func:`sweep` with one progress step per evaluated pair; rows labelled ``size/overlap``."""

    def progress(done: int, total: int) -> None:
        report(done / max(total, 1), f"Evaluated {done} of {total} chunk_size × chunk_overlap pairs")

    report(0.0, "Splitting and embedding the first pair…")
    rows = sweep(
        documents,
        queries,
        spec.splitter,
        spec.sizes,
        spec.overlaps,
        base_params=spec.base,
        embedder=embedder,
        progress=progress,
        **retrieval.to_params(),
    )
    return [{"config": f"{row['chunk_size']}/{row['chunk_overlap']}", **row} for row in rows]
