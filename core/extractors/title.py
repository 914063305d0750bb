"""Title extractor: the first heading the loader found, else the first non-empty line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.extractors.base import Extractor
from core.extractors.registry import EXTRACTORS
from core.params import param
from core.schema import Document
from core.translate.snippet import call

# Markdown heading marks ("## Title ##") and setext underlines are not part of a title.
# The closing marks' run of spaces is tried only where it starts ((?<!\s)): the same matches as without it (a
# match inside a run would start earlier), but linear. Without it, `re` retried every space of a long run, in C
# holding the GIL: a first line with 20,000 spaces froze the app's server for 11 s, and 1 MB of them for hours.
_HEADING_MARKS = re.compile(r"^\s{0,3}#{1,6}\s+|(?<!\s)\s+#+\s*$")
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_SPACE = re.compile(r"\s+")


@EXTRACTORS.register
@dataclass(frozen=True)
class TitleExtractor(Extractor):
    """Writes ``document_title`` (the key LlamaIndex's TitleExtractor uses), without a model."""

    name = "title"
    summary = "document_title: the first heading, else the first non-empty line."
    keys = ("document_title",)

    max_chars: int = param(120, "Longest title kept; longer ones are cut at a word and end in '…'.", ge=10, le=1000)
    use_headings: bool = param(True, "Prefer the first heading the loader found over the first line.")

    def extract(self, document: Document) -> dict[str, Any]:
        title = self._heading(document) if self.use_headings else None
        if title is None:
            title = _first_line(document.text)
        return {"document_title": shorten(title, self.max_chars)}

    def llamaindex(self) -> str | None:
        return call("TitleExtractor", nodes=5)

    def _heading(self, document: Document) -> str | None:
        for element in document.elements:
            if element.kind != "heading":
                continue
            raw = str(element.attrs.get("title") or document.text[element.start_char : element.end_char]).strip()
            title = _clean(_HEADING_MARKS.sub("", raw.splitlines()[0])) if raw else ""
            if title:
                return title
        return None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        cleaned = _clean(_HEADING_MARKS.sub("", line))
        if cleaned and not _UNDERLINE.match(line):
            return cleaned
    return ""


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def shorten(text: str, max_chars: int) -> str:
    """``text`` if it fits, else cut at the last word boundary with '…' (at most ``max_chars`` long)."""
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1]
    boundary = cut.rfind(" ")
    if boundary >= max_chars // 2:
        cut = cut[:boundary]
    return cut.rstrip(" ,;:-") + "…"
