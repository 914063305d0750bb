"""Configurations scored with their metadata extractors and without them: what the extracted keys do for retrieval.

Both rows of a configuration run the steps every split runs (:mod:`core.documents`: the offline extractors
and the user's metadata before the splitter, then :func:`~core.documents.finish_nodes` with the LLM
extractors after it), so the "with" row embeds and searches the EMBED views the Chunks and Metadata pages
show, and the "without" row the same configuration's with no extractor at all. Each row carries its
context tokens (what the LLM is sent per query, :func:`core.evaluation.runner.mean_context_tokens`) and,
where LLM extractors ran, what they sent and spent (``llm_requests``, ``llm_cached``, ``llm_prompt_tokens``,
``llm_completion_tokens``: a rerun answered from the reply cache sends 0 requests).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.config_parts import DEFAULT_RETRIEVAL, RetrievalSettings
from core.errors import ConfigError
from core.evaluation.evaluate import Evaluation
from core.evaluation.queries import EvalQuery
from core.evaluation.runner import Report, Scope
from core.evaluation.sweep import SweepSpec, sweep_evaluations
from core.extractors.llm import llm_extractors
from core.runtime.parallel import Engine
from core.schema import Document

if TYPE_CHECKING:
    from core.config import PipelineConfig

WITH, WITHOUT = "with extractors", "without extractors"
__all__ = [
    "WITH",
    "WITHOUT",
    "compare_chosen",
    "compare_extractors",
    "held_out_sentence",
    "held_out_with_extractors",
    "session_spec",
    "without_llm_extractors",
]


def session_spec(config: PipelineConfig) -> SweepSpec:
    """The configuration's own splitter, as the one configuration a comparison runs."""
    return SweepSpec(config.splitter.name, {}, config.splitter.to_params(only_changed=True))


def without_llm_extractors(config: PipelineConfig) -> PipelineConfig:
    """``config`` with its offline extractors only: the nodes the LLM extractors' prompts are made from."""
    asking = llm_extractors(config.extractors)
    return config.replace(extractors=tuple(e for e in config.extractors if e not in asking))


def compare_extractors(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    specs: Sequence[SweepSpec],
    pipeline: PipelineConfig,
    *,
    embedder: Any = None,
    retrieval: RetrievalSettings = DEFAULT_RETRIEVAL,
    scope: Scope = "corpus",
    report: Report | None = None,
    engine: Engine | None = None,
    bounded: bool = False,
) -> list[tuple[str, Evaluation]]:
    """Every configuration of ``specs`` with ``pipeline``'s extractors and without them, in that order.

    ``documents`` come as loaded: each side prepares them with its own configuration
    (:func:`core.documents.prepare_documents`). ``pipeline`` gives the extractors, the LLM connection and the
    metadata settings (its splitter is not used: ``specs`` give them). One configuration's rows are labelled
    :data:`WITH` and :data:`WITHOUT`; several configurations' rows ``label · with extractors``.
    ``bounded``: the LLM extractors run in a child (:func:`core.documents.llm_run.extract_with_llm`).
    """
    from core.documents import prepare_documents

    if not pipeline.extractors:
        raise ConfigError("the configuration has no metadata extractors to compare against")
    sides = ((WITH, pipeline), (WITHOUT, pipeline.replace(extractors=())))
    done: list[list[tuple[str, Evaluation]]] = []
    for index, (_, chosen) in enumerate(sides):
        part = None if report is None else _half(report, index, sides[index][0])
        done.append(
            sweep_evaluations(
                prepare_documents(documents, chosen),
                queries,
                specs,
                embedder=embedder,
                retrieval=retrieval,
                scope=scope,
                report=part,
                engine=engine,
                pipeline=chosen,
                bounded=bounded,
                context_tokens=True,
            )
        )
    if report is not None:
        report(1.0, "Done")
    single = len(done[0]) == 1
    rows = []
    for with_row, without_row in zip(*done, strict=True):
        for side, (label, result) in zip((WITH, WITHOUT), (with_row, without_row), strict=True):
            rows.append((side if single else f"{label} · {side}", result))
    return rows


def compare_chosen(
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    rows: Sequence[dict[str, Any]],
    pipeline: PipelineConfig,
    *,
    embedder: Any = None,
    scope: Scope = "corpus",
    report: Report | None = None,
    engine: Engine | None = None,
    bounded: bool = False,
) -> list[dict[str, Any]]:
    """The tuner's chosen ``rows`` (:mod:`core.evaluation.tune`'s, each with its ``settings``: splitter, retrieval,
    EMBED view) scored with ``pipeline``'s extractors and without them, as :func:`compare_extractors` scores a
    configuration for Evaluate: on every question (in sample), each row with its context tokens and the LLM
    extractors' requests and tokens. Returns ``{"row": id, "config": "label · with extractors", ...}`` rows.
    ``documents`` come as loaded (each side prepares them); ``bounded``: the LLM extractors run in a child."""
    from dataclasses import replace

    out: list[dict[str, Any]] = []
    for number, row in enumerate(rows):
        settings = row["settings"]
        spec = SweepSpec(settings["splitter"]["name"], {}, dict(settings["splitter"]["params"]))
        view = {key: tuple(value) if isinstance(value, list) else value for key, value in settings["metadata"].items()}
        chosen = pipeline.replace(metadata=replace(pipeline.metadata, **view))
        part = None if report is None else _share(report, number, len(rows))
        compared = compare_extractors(
            documents,
            queries,
            [spec],
            chosen,
            embedder=embedder,
            retrieval=RetrievalSettings.from_params(settings["retrieval"]),
            scope=scope,
            report=part,
            engine=engine,
            bounded=bounded,
        )
        out.extend({"row": row["id"], "config": f"{row['config']} · {side}", **result.to_row()} for side, result in compared)
    return out


def held_out_with_extractors(result: dict[str, Any]) -> dict[str, Any] | None:
    """The tuner's held-out number for its pick with the extractors: the search's nested estimate (what choosing
    on the training folds scored held out) plus the extractors' difference on the pick, in the result's quality.

    Their difference is measured on every question but was not chosen on them (on or off is the user's choice, not
    the search's), so it adds no tuning optimism; the pick's own optimism is what the nested estimate removes.
    ``result``: a tune result's dict with its ``extractors`` rows (:func:`compare_chosen`). None without both.
    """
    quality = result["quality"]
    estimate = (result.get("cross_validation") or {}).get("estimate")
    sides = {row["config"].rsplit(" · ", 1)[-1]: row for row in result.get("extractors") or []}
    if estimate is None or WITH not in sides or WITHOUT not in sides:
        return None
    difference = sides[WITH][quality] - sides[WITHOUT][quality]
    return {"quality": quality, "without": estimate, "difference": difference, "with": estimate + difference}


def held_out_sentence(held: dict[str, Any]) -> str:
    """:func:`held_out_with_extractors` said in one line (the Tune tab and ``chunkscope tune``)."""
    return (
        f"Held out (estimate): {held['quality']} {held['with']:.3f} with the extractors, {held['without']:.3f} "
        "without: the nested estimate of the search plus the extractors' difference on the pick "
        f"({held['difference']:+.3f}), which no choice was made on"
    )


def _share(report: Report, index: int, count: int) -> Report:
    def share(fraction: float, text: str) -> None:
        report((index + fraction) / count, text)

    return share


def _half(report: Report, index: int, side: str) -> Report:
    def half(fraction: float, text: str) -> None:
        report((index + fraction) / 2, f"{side.capitalize()}: {text}")

    return half
