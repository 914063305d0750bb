"""Keyword extractor: the document's most characteristic words and short phrases, by TF-IDF.

The "corpus" for the inverse frequency is the document's own paragraphs (or
sentences), so a term scores high when it is frequent overall, and higher still
when its uses concentrate in a few places.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Literal

from core.extractors.base import Extractor
from core.extractors.registry import EXTRACTORS
from core.extractors.terms import WORD, is_content_word, smoothed_idf, stem
from core.params import param
from core.schema import Document
from core.tokens.segmentation import sentence_spans
from core.translate.snippet import call

_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")

Term = tuple[str, ...]  # the stems of a word or a phrase


@EXTRACTORS.register
@dataclass(frozen=True)
class KeywordExtractor(Extractor):
    """Writes ``excerpt_keywords`` (the key LlamaIndex's KeywordExtractor uses), comma-separated."""

    name = "keywords"
    summary = "excerpt_keywords: the top terms and phrases by TF-IDF over the document's own paragraphs."
    keys = ("excerpt_keywords",)

    keywords: int = param(5, "How many keywords to keep.", ge=1, le=50)
    unit: Literal["paragraph", "sentence"] = param(
        "paragraph", "What counts as one 'document' for the inverse frequency: paragraphs or sentences."
    )
    max_phrase_words: int = param(
        3,
        "Longest phrase (consecutive content words, seen at least twice) that can be a keyword; 1 for words only.",
        ge=1,
        le=5,
    )

    def extract(self, document: Document) -> dict[str, Any]:
        return {"excerpt_keywords": ", ".join(self.top_terms(_prose(document)))}

    def llamaindex(self) -> str | None:
        return call("KeywordExtractor", keywords=self.keywords)

    def top_terms(self, text: str) -> list[str]:
        """The keywords, best first, as they are most often written."""
        units = [_unit_terms(text[start:end], self.max_phrase_words) for start, end in self._units(text)]
        frequency: Counter[Term] = Counter()
        surfaces: defaultdict[Term, Counter[str]] = defaultdict(Counter)
        for unit in units:
            for term, surface in unit:
                frequency[term] += 1
                surfaces[term][surface] += 1
        idf = smoothed_idf([[term for term, _ in unit] for unit in units])

        def score(term: Term) -> float:
            # Longer phrases are rarer but say more; weigh them by their length.
            return frequency[term] * idf[term] * len(term)

        candidates = [term for term in frequency if len(term) == 1 or frequency[term] >= 2]
        candidates.sort(key=lambda term: (-score(term), " ".join(term)))
        chosen: list[Term] = []
        used: set[str] = set()
        for term in candidates:
            # A phrase and its own words say the same thing twice: keep whichever scored first.
            if used.intersection(term):
                continue
            chosen.append(term)
            used.update(term)
            if len(chosen) == self.keywords:
                break
        return [_display(surfaces[term]) for term in chosen]

    def _units(self, text: str) -> list[tuple[int, int]]:
        if self.unit == "sentence":
            return sentence_spans(text)
        spans, start = [], 0
        for match in _PARAGRAPH_BREAK.finditer(text):
            spans.append((start, match.start()))
            start = match.end()
        spans.append((start, len(text)))
        return [(s, e) for s, e in spans if text[s:e].strip()]


def _prose(document: Document) -> str:
    """The text with code blocks blanked out (same length): identifiers are not keywords."""
    text = document.text
    code = sorted((e.start_char, e.end_char) for e in document.elements if e.kind == "code")
    if not code:
        return text
    parts, position = [], 0
    for start, end in code:
        start = max(start, position)
        if end <= start:
            continue
        parts.append(text[position:start])
        parts.append("\n" * (end - start))
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _unit_terms(text: str, max_phrase_words: int) -> list[tuple[Term, str]]:
    """Every content word, and every run of 2..max consecutive content words, with its surface form."""
    out: list[tuple[Term, str]] = []
    run: list[tuple[str, str]] = []  # (stem, surface) of the current run of adjacent content words
    previous_end = None
    for match in WORD.finditer(text):
        word = match.group().replace("’", "'")
        lower = word.lower()
        adjacent = previous_end is not None and text[previous_end : match.start()].isspace()
        previous_end = match.end()
        if not is_content_word(lower):
            run = []
            continue
        if not adjacent:
            run = []
        run.append((stem(lower), word))
        out.append(((run[-1][0],), word))
        for size in range(2, min(max_phrase_words, len(run)) + 1):
            words = run[-size:]
            out.append((tuple(s for s, _ in words), " ".join(w for _, w in words)))
    return out


def _display(surfaces: Counter[str]) -> str:
    """The most common way the term is written; lower-cased unless a word is an acronym or CamelCase."""
    surface = max(surfaces.items(), key=lambda item: (item[1], item[0]))[0]
    return " ".join(word if any(c.isupper() for c in word[1:]) else word.lower() for word in surface.split(" "))
