"""``chunkscope batch --plan``: what a configuration's LLM extractors would send over a corpus, before anything is sent.

Each file is read, loaded and split exactly as a batch worker does it (:func:`core.batch.work.load_and_split`),
and at the step where the extractors would run their prompts are counted instead
(:func:`core.extractors.llm.plan`): calls, prompt tokens, and the largest prompt against the model's window.
Nothing is written and no request leaves. Replies already in the cache are counted too, since a prompt's
reply is known only once it is asked; the numbers are what a run with an empty cache would send.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from core.errors import ChunkScopeError


@dataclass
class CorpusPlan:
    """The LLM extractors' calls and prompt tokens summed over the files that split, and the files that did not."""

    files: int = 0
    nodes: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    largest_prompt_tokens: int = 0
    per_extractor: dict[str, list[int]] = field(default_factory=dict)  # name -> [calls, prompt tokens]
    failed: list[tuple[str, str]] = field(default_factory=list)  # (source, reason)

    def add(self, nodes: int, planned: Any) -> None:
        self.files += 1
        self.nodes += nodes
        self.calls += planned.calls
        self.prompt_tokens += planned.prompt_tokens
        self.largest_prompt_tokens = max(self.largest_prompt_tokens, planned.largest_prompt_tokens)
        for name, calls, tokens in planned.per_extractor:
            row = self.per_extractor.setdefault(name, [0, 0])
            row[0] += calls
            row[1] += tokens

    def lines(self, connection: Any) -> list[str]:
        """What ``--plan`` prints: the whole run, one line per extractor, and the window check."""
        out = [
            f"{self.files:,} files, {self.nodes:,} nodes: up to {self.calls:,} calls to {connection.model}, about "
            f"{self.prompt_tokens:,} prompt tokens and at most {self.calls * connection.max_tokens:,} reply tokens "
            "(replies already in the cache are not asked again)"
        ]
        out += [f"  {name}: {calls:,} calls, {tokens:,} prompt tokens" for name, (calls, tokens) in self.per_extractor.items()]
        window = connection.context_window
        if self.largest_prompt_tokens > window:
            out.append(
                f"  the largest prompt ({self.largest_prompt_tokens:,} tokens) is past the model's {window:,}-token "
                "window: the endpoint may cut or refuse it"
            )
        return out


def plan_corpus(
    inputs: Sequence[Any], config: Any, progress: Callable[[int, int], object] | None = None
) -> CorpusPlan:
    """The plan of ``config``'s LLM extractors over ``inputs`` (:class:`core.batch.inputs.Input`, in order);
    ``progress(done, total)`` after each file. A file that cannot be read or split is listed with its reason."""
    from core.batch.work import StageClock, load_and_split, one_line, read_file
    from core.extractors.llm import llm_extractors, plan

    extractors = llm_extractors(config.extractors)
    total = CorpusPlan()
    for done, entry in enumerate(inputs, 1):
        counted: list[Any] = []
        # Where a batch worker would run the extractors, their prompts are counted (finish_nodes calls this once).
        count = partial(_count, counted, partial(plan, extractors=extractors, connection=config.llm))
        try:
            if entry.problem:
                raise ChunkScopeError(entry.problem)
            data = read_file(Path(entry.path), {})
            _, nodes = load_and_split(data, Path(entry.path), {}, config, StageClock(), {}, extract=count)
            total.add(len(nodes), counted[0])
        except ChunkScopeError as exc:
            total.failed.append((entry.source, one_line(exc)))
        except Exception as exc:  # as a batch worker does: a library's surprise fails this file, the plan goes on
            total.failed.append((entry.source, f"{type(exc).__name__}: {one_line(exc)}"))
        if progress is not None:
            progress(done, len(inputs))
    return total


def _count(into: list[Any], planned: Callable[[list[Any]], Any], nodes: list[Any]) -> list[Any]:
    into.append(planned(nodes))
    return nodes
