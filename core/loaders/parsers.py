"""Parsers side by side: which parser read a document, what it found, and how two parsers' texts differ.

Streamlit-free: the Documents page draws :func:`parse_summary` per file and the
Compare page's parser mode draws :func:`text_diff`.

The diff compares **words** (runs of non-space characters), not characters or
lines: two parsers of one PDF mostly differ in where they break lines (pypdf keeps
the page's line breaks, pdfplumber joins a paragraph's lines), and a line or
character diff would mark every rewrapped paragraph as changed. Words show what
each parser really adds or drops: ``##`` before a heading, ``|`` between table
cells, a running header, a word OCR misread. Its counts are of words with a letter
or digit: markup shows in the runs, not in "only in A/B". Each run keeps its exact span in its
own document's text, so ``a.text[start:end]`` is what a ``same`` or ``a_only`` run
covers (and likewise for ``b``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from core.schema import Document
from core.words import counted

DiffKind = Literal["same", "a_only", "b_only"]
_WORD = re.compile(r"\S+")
_WORDLIKE = re.compile(r"[^\W_]")  # a letter or a digit, in any script


@dataclass(frozen=True)
class DiffRun:
    """A run of words in both texts (``same``), only in A's or only in B's; spans into each text (empty where absent)."""

    kind: DiffKind
    a_start: int
    a_end: int
    b_start: int
    b_end: int


@dataclass(frozen=True)
class TextDiff:
    """Two documents' texts compared word by word."""

    runs: tuple[DiffRun, ...]
    a_words: int
    b_words: int
    same_words: int

    @property
    def similarity(self) -> float:
        """Shared words over the mean word count (1.0: the same words in the same order, spacing aside)."""
        total = self.a_words + self.b_words
        return 2 * self.same_words / total if total else 1.0


def text_diff(a: str, b: str) -> TextDiff:
    """``a`` against ``b``, word by word (whitespace differences are not differences).

    The runs show markup too (``##``, ``|``); the counts are of words holding a letter or a digit, so a
    table's pipes and rules, drawn by one parser and not the other, do not count as words only one of them read.
    """
    a_words = [(m.start(), m.end()) for m in _WORD.finditer(a)]
    b_words = [(m.start(), m.end()) for m in _WORD.finditer(b)]
    a_tokens, b_tokens = [a[s:e] for s, e in a_words], [b[s:e] for s, e in b_words]
    matcher = SequenceMatcher(None, a_tokens, b_tokens, autojunk=False)
    runs: list[DiffRun] = []
    same = 0

    def span(words: list[tuple[int, int]], first: int, last: int) -> tuple[int, int]:
        if first == last:  # no words: an empty span where they would be
            at = words[first][0] if first < len(words) else (words[-1][1] if words else 0)
            return at, at
        return words[first][0], words[last - 1][1]

    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            same += sum(map(_is_word, a_tokens[a0:a1]))
            runs.append(DiffRun("same", *span(a_words, a0, a1), *span(b_words, b0, b1)))
            continue
        if a1 > a0:
            runs.append(DiffRun("a_only", *span(a_words, a0, a1), *span(b_words, b0, b0)))
        if b1 > b0:
            runs.append(DiffRun("b_only", *span(a_words, a1, a1), *span(b_words, b0, b1)))
    return TextDiff(tuple(runs), sum(map(_is_word, a_tokens)), sum(map(_is_word, b_tokens)), same)


def _is_word(token: str) -> bool:
    return _WORDLIKE.search(token) is not None


def diff_lines(diff: TextDiff, a: str, b: str, *, context_words: int = 12, max_runs: int = 200) -> list[str]:
    """The changed runs as ``- words`` (only in A) and ``+ words`` (only in B) lines, each after a little shared context.

    Whitespace inside a run is shown as single spaces; at most ``max_runs`` changes are listed.
    """
    lines: list[str] = []
    shown = 0
    for index, run in enumerate(diff.runs):
        if run.kind == "same":
            continue
        if shown == max_runs:
            rest = sum(1 for r in diff.runs[index:] if r.kind != "same")
            lines.append(f"… and {rest:,} more changes")
            break
        previous = diff.runs[index - 1] if index else None
        if previous is not None and previous.kind == "same":
            words = a[previous.a_start : previous.a_end].split()
            lines.append("  " + ("… " if len(words) > context_words else "") + " ".join(words[-context_words:]))
        text = a[run.a_start : run.a_end] if run.kind == "a_only" else b[run.b_start : run.b_end]
        lines.append(("- " if run.kind == "a_only" else "+ ") + " ".join(text.split()))
        shown += 1
    return lines


def parser_name(document: Document) -> str:
    """Which parser read the document: the PDF's ``parser`` (with ``+ pdfplumber`` or ``+ pypdf`` when the other
    parser read the pages it garbled, ``+ OCR`` when Tesseract read pages), else the loader's type."""
    parser = str(document.metadata.get("parser") or document.metadata.get("file_type", ""))
    if document.metadata.get("fallback_pages"):
        parser += " + pdfplumber" if parser == "pypdf" else " + pypdf"
    return f"{parser} + OCR" if document.metadata.get("ocr_pages") else parser


def parse_summary(document: Document) -> dict[str, Any]:
    """What the parser found: pages, tables, headings, OCR pages (with their mean confidence), as plain numbers."""
    kinds = Counter(element.kind for element in document.elements)
    ocr_pages = list(document.metadata.get("ocr_pages") or [])
    confidences = [float(v) for v in dict(document.metadata.get("ocr_confidence") or {}).values()]
    return {
        "parser": parser_name(document),
        "pages": len(document.pages),
        "page_unit": str(document.metadata.get("page_unit") or "page"),  # slide, sheet, chapter
        "tables": kinds.get("table", 0),
        "headings": kinds.get("heading", 0),
        "ocr_pages": len(ocr_pages),
        "ocr_confidence": round(sum(confidences) / len(confidences), 1) if confidences else None,
    }


def comparable_pages(documents: Sequence[Document]) -> tuple[list[tuple[int, str]], int | None]:
    """The page numbers every reading has, each labelled with what a parser found there, and the page to
    open first: the first where a parser found something (a table, OCR), where two parsers differ most
    visibly, else the first page.

    The pairs are like ``(7, "page 7 · a table (B)")``, so two parsers can be looked at on
    the same page; empty (and no page) when a reading has no pages.
    """
    if not documents or not all(document.pages for document in documents):
        return [], None
    numbers = sorted(set.intersection(*({page.number for page in document.pages} for document in documents)))
    label_of = {page.number: page.label for page in documents[0].pages}
    labels = {number: [f"page {label_of[number]}"] for number in numbers}
    for slot, document in enumerate(documents):
        for number, found in _page_finds(document, chr(ord("A") + slot), numbers).items():
            labels[number] += found
    first = next((number for number in numbers if len(labels[number]) > 1), numbers[0] if numbers else None)
    return [(number, " · ".join(labels[number])) for number in numbers], first


def _page_finds(document: Document, letter: str, numbers: list[int]) -> dict[int, list[str]]:
    """What reading ``letter`` found on each of the pages ``numbers``: ``["a table (B)", "OCR (B)"]``, or nothing."""
    tables = {element.page for element in document.elements if element.kind == "table"}
    ocr = {int(number) for number in document.metadata.get("ocr_pages") or []}
    return {
        number: [f"{find} ({letter})" for find, pages in (("a table", tables), ("OCR", ocr)) if number in pages]
        for number in numbers
    }


def found_phrase(summary: dict[str, Any]) -> str:
    """``7 pages · 2 tables · 33 headings · 1 OCR page (96%)`` (``10 slides`` for a deck); parts that are zero are left out."""
    parts = [counted(summary["pages"], summary.get("page_unit", "page"))] if summary["pages"] else []
    for key, word in (("tables", "table"), ("headings", "heading")):
        if summary[key]:
            parts.append(counted(summary[key], word))
    if summary["ocr_pages"]:
        confidence = summary["ocr_confidence"]
        parts.append(
            counted(summary["ocr_pages"], "OCR page") + (f" ({confidence:.0f}%)" if confidence is not None else "")
        )
    return " · ".join(parts) or "—"
