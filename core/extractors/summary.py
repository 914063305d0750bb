"""Summary extractor: the document's most central sentences, in their original order.

A sentence is central when its TF-IDF vector points the same way as the whole
document's: it talks about what the document talks about most. Extractive, so
every word of the summary is the author's.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Any

from core.extractors.base import Extractor
from core.extractors.registry import EXTRACTORS
from core.extractors.terms import content_terms, smoothed_idf
from core.params import param
from core.schema import Document
from core.tokens.segmentation import sentence_spans
from core.translate.snippet import call

# Sentences inside these elements are structure or data, not prose worth quoting.
_SKIPPED_KINDS = frozenset({"heading", "code", "table", "table_row"})


@EXTRACTORS.register
@dataclass(frozen=True)
class SummaryExtractor(Extractor):
    """Writes ``section_summary`` (the key LlamaIndex's SummaryExtractor uses), without a model."""

    name = "summary"
    summary = "section_summary: the most central sentences (by TF-IDF similarity to the whole text), in order."
    keys = ("section_summary",)

    sentences: int = param(3, "How many sentences the summary keeps.", ge=1, le=20)
    min_words: int = param(5, "Sentences with fewer content words are never picked (headings, captions).", ge=1, le=50)

    def extract(self, document: Document) -> dict[str, Any]:
        text = document.text
        picked = self.central_sentences(document)
        return {"section_summary": " ".join(" ".join(text[start:end].split()) for start, end in picked)}

    def llamaindex(self) -> str | None:
        return call("SummaryExtractor", summaries=["self"])

    def central_sentences(self, document: Document) -> list[tuple[int, int]]:
        """Spans of the chosen sentences, in document order."""
        text = document.text
        skipped = _SkipIndex(document)
        spans = [span for span in sentence_spans(text) if not skipped.covers(*span)]
        terms = [content_terms(text[start:end]) for start, end in spans]
        idf = smoothed_idf(terms)
        whole = _weights(Counter(term for sentence in terms for term in sentence), idf)
        scored = []
        for index, sentence_terms in enumerate(terms):
            if len(sentence_terms) < self.min_words:
                continue
            scored.append((_cosine(_weights(Counter(sentence_terms), idf), whole), index))
        # Best first; among equals, the earlier sentence.
        scored.sort(key=lambda item: (-item[0], item[1]))
        chosen = sorted(index for _, index in scored[: self.sentences])
        return [spans[index] for index in chosen]


def _weights(counts: Counter[str], idf: dict[str, float]) -> dict[str, float]:
    return {term: (1 + math.log(count)) * idf[term] for term, count in counts.items()}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    dot = sum(weight * b.get(term, 0.0) for term, weight in a.items())
    norm = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
    return dot / norm if norm else 0.0


class _SkipIndex:
    """Answers whether a span starts inside a heading, code block or table."""

    def __init__(self, document: Document) -> None:
        self.blocks = sorted((e.start_char, e.end_char) for e in document.elements if e.kind in _SKIPPED_KINDS)
        self.starts = [start for start, _ in self.blocks]

    def covers(self, start: int, end: int) -> bool:
        i = bisect_right(self.starts, start) - 1
        return i >= 0 and self.blocks[i][0] <= start < self.blocks[i][1]
