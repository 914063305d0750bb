"""The configuration's LLM extractors run on a split's nodes: what they will send said first, the run in a child
stopped at the connection's deadline (or here), its progress heard and its cancel obeyed while it goes.

:func:`extract_with_llm` is the step :func:`core.documents.finish_nodes` runs between the section paths and the
embedding model's allow list.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from core.limits import DEFAULT_LIMITS, Limits
from core.schema import Node

if TYPE_CHECKING:
    from core.config import PipelineConfig


class _Watch:
    """``progress`` called with the replies so far; what it raises cancels the run and is held till the run stops."""

    def __init__(self, control: Any, progress: Callable[[int, int], object] | None, calls: int) -> None:
        self.control, self.progress, self.calls = control, progress, calls
        self.held: BaseException | None = None

    def __call__(self) -> None:
        if self.progress is None or self.held is not None:
            return
        try:
            self.progress(self.control.done, self.calls)
        except BaseException as exc:  # noqa: BLE001 - a page's rerun or a KeyboardInterrupt: raised after the stop
            self.held = exc
            self.control.cancel()

    def raise_held(self) -> None:
        if self.held is not None:
            raise self.held


def _run_llm(
    work: Callable[..., Any], nodes: list[Node], what: str, config: PipelineConfig, limits: Limits, bounded: bool, watch: _Watch
) -> Any:
    """The LLM run of :func:`extract_with_llm`: in a bounded child (``watch`` called while it waits), or here."""
    if not bounded:
        if watch.control is not None and watch.progress is not None:
            watch.control.on_reply = watch  # in-process: each reply is seen in this thread as it comes
        return work()
    from core.runtime.bounded import run_bounded

    return run_bounded(
        work,
        file_name=str(nodes[0].metadata.get("file_name") or nodes[0].doc_id),
        what=what,
        seconds=config.llm.deadline_seconds,
        memory_mb=limits.work_memory_mb,
        seconds_name="llm deadline_seconds",
        poll=watch if watch.progress is not None else None,
    )


def extract_with_llm(
    nodes: list[Node],
    config: PipelineConfig,
    limits: Limits = DEFAULT_LIMITS,
    *,
    bounded: bool = False,
    report: Callable[[str], object] | None = None,
    on_run: Callable[[Any], object] | None = None,
    progress: Callable[[int, int], object] | None = None,
    control: Any = None,
) -> list[Node]:
    """The configuration's LLM extractors (:mod:`core.extractors.llm`) run on ``nodes``, their keys written in
    (in place). Nothing happens, and nothing is sent, without one. ``bounded``: in a child stopped at the
    connection's ``deadline_seconds`` (the extractors are framework code, and wait on the network).
    ``on_run`` is handed the run's :class:`~core.extractors.llm.LLMRun` (what it sent and spent), once it is done.

    ``progress(done, calls)``: the replies so far (sent or from the cache) of at most ``calls``, called in this
    thread while the run goes (every :data:`core.runtime.bounded.POLL_SECONDS` in a child, else at each reply).
    ``control`` (an :class:`~core.llm.control.LLMControl`) cancels the run from elsewhere. Either way a cancel
    stops before the next request (the replies already received are cached) and raises
    :class:`~core.llm.control.LLMCancelled`; what ``progress`` raises (a page's rerun) cancels the run the same
    way and is raised once the run has stopped."""
    from core.extractors.llm import apply_run, llm_extractors, plan, run_llm_extractors
    from core.llm.control import LLMControl

    chosen = llm_extractors(config.extractors)
    if not chosen or not nodes:
        return nodes
    # Counted (the prompts tokenized) only for those who hear it: a batch worker's files pay nothing for it.
    planned = plan(nodes, chosen, config.llm) if report is not None or progress is not None else None
    if report is not None and planned is not None:
        report(planned.sentence(config.llm))
    control = control if control is not None or progress is None else LLMControl()
    watch = _Watch(control, progress, planned.calls if planned is not None else 0)
    work = partial(run_llm_extractors, nodes, chosen, config.llm, control)
    try:
        what = f"asking {config.llm.model} for {', '.join(extractor.name for extractor in chosen)}"
        run = _run_llm(work, nodes, what, config, limits, bounded, watch)
    finally:
        watch.raise_held()
    apply_run(nodes, run)
    if report is not None:
        report(run.sentence())
    if on_run is not None:
        on_run(run)
    return nodes
