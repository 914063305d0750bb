"""Evaluating many configurations: splitters side by side, or sweeps over any of their declared parameters.

:func:`core.evaluation.evaluate.evaluate` scores one configuration; the functions here
run it for several and report progress as they go. This module alone decides
what may be swept: every declared number, choice or switch of a splitter
(:func:`sweepable_params`), e.g. ``chunk_size``, markdown's ``heading_level``,
semantic's ``breakpoint_amount``. The values to sweep are read as any list
parameter is (:func:`core.params.typed_text.parse_list`), then coerced and bounds-checked
by the parameter's own declaration. Combinations that break a rule between
parameters (``chunk_overlap`` not below ``chunk_size``) are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import TYPE_CHECKING, Any

from core.config_parts import DEFAULT_RETRIEVAL, RetrievalSettings
from core.errors import ConfigError
from core.evaluation.evaluate import Evaluation, check_scope, evaluate
from core.evaluation.jobs import EvalInputs, EvalJob, evaluate_job, shippable_embedder
from core.evaluation.queries import EvalQuery
from core.evaluation.runner import Report, Scope
from core.measure.compare_view import LABELS, settings_summary
from core.params import Configurable, ParamSpec, check_bounds
from core.params.typed_text import parse_list
from core.runtime.parallel import Engine, ordered_map
from core.schema import Document
from core.splitters import SPLITTERS, Splitter, get_splitter

if TYPE_CHECKING:
    from core.embed.embedder import Embedder

SWEPT = ("chunk_size", "chunk_overlap")  # what the classic sweep varies (its rows are labelled "size/overlap")
SWEEPABLE_KINDS = ("int", "float", "choice", "bool")
__all__ = [
    "SWEPT",
    "Report",
    "SweepSpec",
    "sweep",
    "sweep_evaluations",
    "sweepable",
    "sweepable_params",
]


@dataclass(frozen=True)
class SweepSpec:
    """One splitter at every combination of ``grid`` (parameter -> values), its other parameters at ``base``."""

    splitter: str
    grid: dict[str, list[Any]] = field(default_factory=dict)
    base: dict[str, Any] = field(default_factory=dict)

    def combinations(self) -> list[dict[str, Any]]:
        """Every choice of one value per swept parameter (the first parameter varies slowest)."""
        names = list(self.grid)
        return [dict(zip(names, values, strict=True)) for values in product(*(self.grid[n] for n in names))]

    def label(self, combination: Mapping[str, Any], *, with_splitter: bool = False) -> str:
        """``256/64`` for a chunk_size × chunk_overlap sweep, else ``heading_level=2``; the splitter first if asked.

        A spec that sweeps nothing is labelled by its splitter's name.
        """
        if not self.grid:
            return self.splitter
        if tuple(self.grid) == SWEPT:
            text = "/".join(str(combination[name]) for name in SWEPT)
        else:
            text = ", ".join(f"{name}={value}" for name, value in combination.items())
        return f"{self.splitter} · {text}" if with_splitter else text


# -- what may be swept -----------------------------------------------------------------


def sweepable_params(cls: type[Configurable]) -> list[ParamSpec]:
    """The parameters a sweep may vary: every declared number, choice or switch (lists and free text are not)."""
    return [spec for spec in cls.params() if spec.kind in SWEEPABLE_KINDS]


def sweepable(cls: type[Configurable]) -> bool:
    """Whether a splitter class declares anything a sweep can vary."""
    return bool(sweepable_params(cls))


def sweep_param(splitter: str, name: str) -> ParamSpec:
    """The declaration of ``name`` in ``splitter`` if it is sweepable; else ConfigError naming what is."""
    specs = {spec.name: spec for spec in sweepable_params(SPLITTERS.get_class(splitter))}
    if name not in specs:
        known = ", ".join(specs) or "none"
        raise ConfigError(f"splitter {splitter!r} has no parameter {name!r} to sweep (sweepable: {known})")
    return specs[name]


def sweep_values(text: Any, name: str, spec: ParamSpec | None = None) -> list[Any]:
    """The values of one swept parameter, from ``"256, 512"`` or a JSON list; anything else raises ConfigError naming ``name``.

    Without ``spec`` the values are whole numbers ≥ 0. Numbers come back sorted and
    without repeats; choices and switches once each, in the order given.
    """
    try:
        items = parse_list(text)
    except ValueError:
        raise ConfigError(f"{name}: not a list of values: {text!r}") from None
    if not items:
        raise ConfigError(f"{name}: give at least one value")
    values: list[Any] = []
    for item in items:
        if spec is None:
            piece = str(item).strip()
            if not (piece.isascii() and piece.isdigit()):
                raise ConfigError(f"{name}: {piece!r} is not a whole number ≥ 0")
            value: Any = int(piece)
        else:
            try:
                value = spec.coerce(item)
                if value is not None:
                    check_bounds("", spec, value)
            except ConfigError as exc:
                # The bounds check names an owner ("" here): the option's name stands in its place.
                raise ConfigError(f"{name}: {str(exc).removeprefix(': ')}") from None
        if value not in values:
            values.append(value)
    if spec is None or spec.kind in ("int", "float"):
        return sorted(values, key=lambda v: (v is not None, v or 0))
    return values


def plan_sweeps(splitters: Sequence[str], settings: Mapping[str, Any], grid: Mapping[str, Any]) -> list[SweepSpec]:
    """One SweepSpec per splitter from ``settings`` and ``grid`` keyed ``param`` or ``splitter.param``.

    A plain key applies to every chosen splitter that declares the parameter, a
    prefixed one to that splitter; a key no chosen splitter takes is an error.
    Grid values are raw (text or lists) and read by :func:`sweep_values`.
    """
    names = list(dict.fromkeys(splitters))
    for name in names:
        SPLITTERS.get_class(name)  # an unknown name fails here, naming the known ones
    specs = []
    claimed: set[str] = set()
    for name in names:
        declared = {spec.name for spec in SPLITTERS.get_class(name).params()}
        base, swept = {}, {}
        for key, value in settings.items():
            if _applies(key, name, declared, len(names)):
                base[key.rpartition(".")[2]] = value
                claimed.add(key)
        for key, text in grid.items():
            if _applies(key, name, declared, len(names)):
                param = key.rpartition(".")[2]
                swept[param] = sweep_values(text, f"--sweep {key}", sweep_param(name, param))
                claimed.add(key)
        specs.append(SweepSpec(name, swept, base))
    unclaimed = [key for key in (*settings, *grid) if key not in claimed]
    if unclaimed:
        raise ConfigError(f"no chosen splitter ({', '.join(names)}) has a parameter {unclaimed[0]!r}")
    return specs


def _applies(key: str, splitter: str, declared: set[str], count: int) -> bool:
    prefix, dot, param = key.rpartition(".")
    if dot:
        return prefix == splitter and (param in declared or count == 1)
    # With one splitter every plain key is its own (an unknown one then fails as --set always has).
    return key in declared or count == 1


def configurations(specs: Sequence[SweepSpec]) -> list[tuple[str, Splitter, dict[str, Any]]]:
    """(label, splitter, swept values) for every valid combination of every spec; none valid is a ConfigError."""
    several = len(specs) > 1
    built = []
    for spec in specs:
        for combination in spec.combinations():
            try:
                splitter = get_splitter(spec.splitter, **{**spec.base, **combination})
            except ConfigError:
                if not spec.grid:
                    raise
                continue  # a rule between parameters, e.g. overlap not below size
            built.append((spec.label(combination, with_splitter=several), splitter, combination))
    if not built:
        raise ConfigError("no combination in the sweep is valid (e.g. chunk_overlap must be below chunk_size)")
    return built


# -- running ---------------------------------------------------------------------------


def sweep_evaluations(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    specs: Sequence[SweepSpec],
    *,
    embedder: Embedder | None = None,
    retrieval: RetrievalSettings = DEFAULT_RETRIEVAL,
    scope: Scope = "corpus",
    report: Report | None = None,
    progress: Callable[[int, int], None] | None = None,
    engine: Engine | None = None,
    pipeline: Any = None,
    bounded: bool = False,
    context_tokens: bool = False,
) -> list[tuple[str, Evaluation]]:
    """(label, Evaluation) for every valid configuration of ``specs``, settings all checked before any work.

    ``pipeline``, ``bounded`` and ``context_tokens`` are :func:`~core.evaluation.evaluate.evaluate`'s, for each
    configuration (``documents`` then come prepared with ``pipeline``: :func:`core.documents.prepare_documents`).

    ``report(fraction, text)`` follows the whole run, ``progress(done, total)``
    counts configurations; identical chunk texts are embedded once (across
    workers, through the disk cache). ``engine`` spreads the configurations
    (:mod:`core.runtime.parallel`); results are the same, in the same order, on every engine.
    """
    check_scope(scope)
    engine = engine or Engine()
    built = configurations(specs)
    jobs = [EvalJob(label, splitter.name, splitter.to_params(), combination) for label, splitter, combination in built]
    local = engine.kind == "local"
    inputs = EvalInputs(
        tuple(documents),
        tuple(queries),
        retrieval,
        scope,
        embedder if local else shippable_embedder(embedder),
        pipeline,
        bounded,
        context_tokens,
    )
    if local:
        done = (evaluate_job(job, inputs, _part(report, i, len(jobs), job.label)) for i, job in enumerate(jobs))
    else:
        if report is not None:
            report(0.0, f"{len(jobs)} configurations on {engine.describe()}")
        done = ordered_map(evaluate_job, jobs, inputs, engine)
    results = []
    for index, result in enumerate(done):
        results.append((jobs[index].label, result))
        if report is not None and not local:
            report((index + 1) / len(jobs), f"Configuration {index + 1} of {len(jobs)} done ({jobs[index].label})")
        if progress is not None:
            progress(index + 1, len(jobs))
    return results


def _part(report: Report | None, index: int, count: int, label: str) -> Report | None:
    """A report for configuration ``index`` of ``count``: its fraction scaled into its share of the run."""
    if report is None:
        return None

    def part(fraction: float, text: str) -> None:
        where = f"Configuration {index + 1} of {count} ({label}): " if count > 1 else ""
        report((index + fraction) / count, where + text)

    return part


def sweep(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    splitter: str,
    chunk_sizes: Sequence[int] = (),
    chunk_overlaps: Sequence[int] = (),
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    base_params: Mapping[str, Any] | None = None,
    embedder: Embedder | None = None,
    retrieval: RetrievalSettings = DEFAULT_RETRIEVAL,
    scope: Scope = "corpus",
    progress: Callable[[int, int], None] | None = None,
    report: Report | None = None,
    engine: Engine | None = None,
) -> list[dict[str, Any]]:
    """Evaluate ``splitter`` at every combination of ``grid`` (or of ``chunk_sizes`` × ``chunk_overlaps``).

    Returns one row per valid combination (see :meth:`Evaluation.to_row`),
    invalid ones skipped; ``progress(done, total)`` counts configurations.
    """
    values: dict[str, list[Any]] = {}
    if chunk_sizes:
        values["chunk_size"] = sorted(set(chunk_sizes))
    if chunk_overlaps:
        values["chunk_overlap"] = sorted(set(chunk_overlaps))
    values.update({name: list(items) for name, items in (grid or {}).items()})
    for name in values:
        sweep_param(splitter, name)
    spec = SweepSpec(splitter, values, dict(base_params or {}))
    done = sweep_evaluations(
        documents,
        queries,
        [spec],
        embedder=embedder,
        retrieval=retrieval,
        scope=scope,
        report=report,
        progress=progress,
        engine=engine,
    )
    return [result.to_row() for _, result in done]


def ui_rows(results: Sequence[tuple[str, Evaluation]], splitters: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """Rows for a page: ``config`` label first, the row, its per-document scores and warnings (and settings)."""
    rows = []
    for index, (label, result) in enumerate(results):
        row = {"config": label, **result.to_row()}
        if index < len(splitters):
            row["settings"] = settings_summary(splitters[index])
        row["per_document"] = result.per_document()
        row["warnings"] = result.warnings
        rows.append(row)
    return rows


def evaluate_configurations(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    splitters: Sequence[Any],
    *,
    retrieval: RetrievalSettings,
    embedder: Any,
    report: Report,
    scope: Scope = "corpus",
) -> list[dict[str, Any]]:
    """One row per splitter (labelled A, B, …, with its settings), reporting progress through every phase."""
    labels = [LABELS[i] if i < len(LABELS) else str(i + 1) for i in range(len(splitters))]
    check_scope(scope)
    results = []
    for index, splitter in enumerate(splitters):
        part = _part(report, index, len(splitters), labels[index])
        result = evaluate(
            documents, queries, splitter, embedder=embedder, retrieval=retrieval, scope=scope, report=part
        )
        results.append((labels[index], result))
    report(1.0, "Done")
    return ui_rows(results, splitters)


def evaluate_sweep(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    spec: SweepSpec,
    *,
    retrieval: RetrievalSettings,
    embedder: Any,
    report: Report,
    scope: Scope = "corpus",
) -> list[dict[str, Any]]:
    """:func:`sweep_evaluations` of one spec as page rows, labelled ``size/overlap`` or ``param=value``."""
    results = sweep_evaluations(
        documents, queries, [spec], embedder=embedder, retrieval=retrieval, scope=scope, report=report
    )
    report(1.0, "Done")
    return ui_rows(results)
