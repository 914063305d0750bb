"""An example ChunkScope splitter plugin: one node per paragraph (or per few paragraphs).

A plugin is an ordinary installed distribution that names a splitter class in
the ``chunkscope.splitters`` entry-point group (see ``pyproject.toml``).
ChunkScope imports it only through that entry point, then treats it like a
built-in splitter: its parameters become widgets, CLI options and config keys,
and it must keep the same promises (exact spans, ordered, nothing dropped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.params import param
from core.schema import Document
from core.splitters.base import Span, Splitter
from core.tokens.segmentation import trim_span

# A paragraph ends at a blank line: a line break, optional spaces, another line break.
_BLANK_LINE = re.compile(r"(?:\r\n|\r|\n)[^\S\r\n]*(?:\r\n|\r|\n)\s*")


@dataclass(frozen=True)
class ParagraphSplitter(Splitter):
    """Paragraphs separated by blank lines, ``paragraphs_per_node`` at a time."""

    name = "paragraph"
    summary = "One node per blank-line paragraph, or per group of paragraphs (example plugin)."

    paragraphs_per_node: int = param(1, "How many consecutive paragraphs go into one node.", ge=1, le=1000)

    @property
    def overlap_limit(self) -> int | None:
        return 0

    def spans(self, document: Document) -> list[Span]:
        paragraphs = paragraph_spans(document.text)
        step = self.paragraphs_per_node
        return [
            Span(group[0][0], group[-1][1])
            for group in (paragraphs[i : i + step] for i in range(0, len(paragraphs), step))
        ]


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Each paragraph's span, without surrounding whitespace, in order."""
    spans = []
    start = 0
    for match in _BLANK_LINE.finditer(text):
        trimmed = trim_span(text, start, match.start())
        if trimmed is not None:
            spans.append(trimmed)
        start = match.end()
    trimmed = trim_span(text, start, len(text))
    if trimmed is not None:
        spans.append(trimmed)
    return spans
