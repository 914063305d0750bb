"""Markdown as LlamaIndex's MarkdownNodeParser cuts it: the markdown splitter's ``compat="llamaindex"`` mode.

LlamaIndex scans lines split on ``\n``, toggles code blocks at backtick fences,
takes any ``#`` run as a heading (no setext) and keeps the raw title (inline code
keeps its backticks) in ``header_path``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from core.splitters.compat import CompatChunk
from core.tokens.segmentation import trim_span

# LlamaIndex's MarkdownNodeParser: a heading line, and a fence line (which toggles code blocks).
_LLAMAINDEX_HEADING = re.compile(r"(#+)\s(.*)")


class LlamaIndexHeading(NamedTuple):
    """A heading as MarkdownNodeParser finds it: its line's span, level, raw title and separator."""

    start: int
    end: int
    level: int
    title: str
    # The line as LlamaIndex writes it into the node: "#" * level + " " + title.
    line: str


def llamaindex_headings(text: str) -> list[LlamaIndexHeading]:
    """The heading lines of ``text`` as LlamaIndex's MarkdownNodeParser sees them (lines split on ``\\n`` only).

    A line whose left-stripped text starts with three backticks opens or closes a
    code block; outside one, a line matching ``^(#+)\\s(.*)`` is a heading.
    """
    headings = []
    in_code = False
    position = 0
    for line in text.split("\n"):
        start, position = position, position + len(line) + 1
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        match = _LLAMAINDEX_HEADING.match(line)
        if match:
            level, title = len(match.group(1)), match.group(2)
            headings.append(LlamaIndexHeading(start, start + len(line), level, title, "#" * level + " " + title))
    return headings


def llamaindex_sections(text: str, deepest: float = float("inf")) -> list[CompatChunk]:
    """MarkdownNodeParser's nodes of ``text``: one per heading (down to level ``deepest``) and the text before the first.

    A node's text is its section stripped, its heading line written as LlamaIndex
    writes it; ``header_path`` is ``"/"`` joined around the raw titles of the
    enclosing headings (``"/"`` at the top). Blank sections vanish.
    """
    starters = [h for h in llamaindex_headings(text) if h.level <= deepest]
    chunks: list[CompatChunk] = []
    stack: list[LlamaIndexHeading] = []
    bounds = [0] + [h.start for h in starters] + [len(text)]
    for index in range(len(bounds) - 1):
        heading = starters[index - 1] if index > 0 else None
        end = bounds[index + 1]
        if heading is not None:
            while stack and stack[-1].level >= heading.level:
                stack.pop()
            parents = [h.title for h in stack]
            stack.append(heading)
            written = (heading.line + text[heading.end : end]).strip()
        else:
            parents = []
            written = text[bounds[index] : end].strip()
        trimmed = trim_span(text, bounds[index], end)
        if trimmed is None or not written:
            continue
        joined = "/".join(parents)
        path = f"/{joined}/" if joined else "/"
        exact = text[trimmed[0] : trimmed[1]] == written
        chunks.append(CompatChunk(trimmed[0], trimmed[1], None if exact else written, {"header_path": path}))
    return chunks
