"""Where a reference excerpt lies in a document's text, however the excerpt was copied.

A person copies an excerpt from the file they read (an HTML page's source, a
PDF viewer, a spreadsheet), while a loader's text is what the loader made of
the file: HTML blocks joined by blank lines and runs of spaces collapsed, PDF
lines broken where the page broke them. So an excerpt is looked for in three
steps, each only when the one before found nothing:

1. exactly, every occurrence (overlapping ones included);
2. ignoring whitespace: the excerpt's non-whitespace characters, in order, with
   any whitespace (or none) between them in the text;
3. for an excerpt holding markup (``<b>``, ``&amp;``): its tags dropped and its
   character references decoded, then step 2.

Every span found is a range ``(start, end)`` of the document's text that starts
and ends on a non-whitespace character of the match.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

Span = tuple[int, int]

_TAG = re.compile(r"<[^<>]*>")


def occurrences(text: str, excerpt: str) -> list[Span]:
    """Every place ``excerpt`` occurs in ``text`` exactly, overlapping ones included."""
    spans = []
    start = text.find(excerpt) if excerpt else -1
    while start != -1:
        spans.append((start, start + len(excerpt)))
        start = text.find(excerpt, start + 1)
    return spans


def without_markup(excerpt: str) -> str:
    """The text a browser shows for an excerpt of HTML source: tags dropped, ``&amp;`` and the like decoded."""
    return html.unescape(_TAG.sub("", excerpt))


@dataclass
class ExcerptFinder:
    """Finds excerpts in one text; the whitespace-free form of the text is made once, on first need."""

    text: str
    _dense: str | None = field(default=None, init=False, repr=False)
    _positions: list[int] = field(default_factory=list, init=False, repr=False)

    def find(self, excerpt: str) -> list[Span]:
        """The excerpt's spans in the text, by the first of the three steps that finds any (module docstring)."""
        found = occurrences(self.text, excerpt)
        if not found:
            found = self._ignoring_whitespace(excerpt)
        if not found and ("<" in excerpt or "&" in excerpt):
            found = self._ignoring_whitespace(without_markup(excerpt))
        return found

    def find_plain(self, excerpt: str) -> list[Span]:
        """Steps 1 and 2 only: for text a model copied, which has no markup of the file's to drop."""
        return occurrences(self.text, excerpt) or self._ignoring_whitespace(excerpt)

    def _ignoring_whitespace(self, excerpt: str) -> list[Span]:
        wanted = "".join(excerpt.split())
        if not wanted:
            return []
        if self._dense is None:
            # _positions[i] is where the i-th non-whitespace character of the text is.
            self._positions = [i for i, char in enumerate(self.text) if not char.isspace()]
            self._dense = "".join(self.text[i] for i in self._positions)
        return [
            (self._positions[start], self._positions[end - 1] + 1) for start, end in occurrences(self._dense, wanted)
        ]
