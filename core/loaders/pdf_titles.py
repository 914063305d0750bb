"""Whether a line set in a heading's font reads as a title: the rule the PDF structure reader keeps headings by.

A large or bold font is only the first sign (:mod:`core.loaders.pdf_structure` finds those lines); the text
itself decides. A title is short and mostly words, and it is neither a sentence, nor a form's line (a blank to
fill in, a leader to a page number, a "Label: value" pair), nor an answer standing alone ("None", "Yes").
"""

from __future__ import annotations

import re

# A heading is a title: longer than this, a block in a heading's font is a paragraph set large.
MAX_HEADING_CHARS = 200
# A form's answers, on a line of their own in a heading's font: not titles.
FORM_ANSWERS = frozenset({"none", "n/a", "na", "nil", "null", "yes", "no", "true", "false", "tbd", "unknown", "-"})
# The last word of a sentence: two letters or more and a full stop (not "1.", "U.S." or "etc..").
_SENTENCE_END = re.compile(r"^[(\"'“]*[^\W\d_]{2,}[)\"'”]*\.$")
# Within a heading: a word's full stop, then a new sentence ("Read this first. Then ..."; not "U.S. market",
# "Dr. Smith" or "What is RAG? How it works").
_SENTENCE_BREAK = re.compile(r"[^\W\d_]{3,}\. +[A-Z][a-z]")
# A blank to fill in ("____") or a leader to a page number ("......", ". . . .").
_FILL_IN = re.compile(r"_{3,}|\.{4,}|(?:\. ){3,}|…{2,}")
# "Label: value" or "Label:" (a colon in "http://" is no label's).
_LABEL = re.compile(r"^(?P<label>[^:]*[^:\s][^:]*):(?P<value>(?:\s.*)?)$", re.DOTALL)
# A label ending in its number ("Chapter 2", "Step 1", "Part II", "Appendix A"): a title, not a form's label.
_NUMBERED_LABEL = re.compile(r"(?:^|\s)(?:\d+(?:\.\d+)*|[IVXLC]+|[A-Z])$")
# A word for the heading test: two letters in a row (so "N/A", "12.5" or "--" are not).
_WORD_PART = re.compile(r"[^\W\d_]{2,}")


def reads_as_heading(text: str) -> bool:
    """Whether a block set in a heading's font reads as a title: short, mostly words, and neither a sentence,
    a form's line nor an answer.

    A large or bold font alone is no heading: a paragraph set large (an introduction, a pull quote; 350-480
    characters in the wild), a sentence set large ("... filed with the office."), a table value on a line of
    its own ("N/A", "12.5"), a form's label and answer ("Name: ____", "Answer: None", "Date: 2026-12-07") or
    the answer alone ("None", "Yes") are not titles.
    """
    tokens = text.split()
    words = sum(1 for token in tokens if _WORD_PART.search(token))
    if len(text) > MAX_HEADING_CHARS or words == 0 or words < 0.5 * len(tokens):
        return False
    return not (_is_sentence(text, tokens) or _is_form_line(text) or text.strip().lower() in FORM_ANSWERS)


def _is_sentence(text: str, tokens: list[str]) -> bool:
    # A word and a full stop end a sentence ("Not applicable."); "Chapter 1." or "the U.S." do not, nor a
    # leader ("...."). A full stop and a new capital inside start one.
    return bool(tokens and _SENTENCE_END.search(tokens[-1])) or _SENTENCE_BREAK.search(text) is not None


def _is_form_line(text: str) -> bool:
    """A blank to fill in or a leader to a page number ("Name: ____", "Introduction ...... 3"), or a label and
    its value: a label with no number after it ("Chapter 2: ..." is a title) and a value that is empty, one
    word, holds a digit, or another label ("Name: Ada   Date: 2026-12-07")."""
    if _FILL_IN.search(text):
        return True
    found = _LABEL.match(text)
    if found is None or _NUMBERED_LABEL.search(found["label"].strip()):
        return False
    value = found["value"].strip()
    return len(value.split()) <= 1 or any(ch.isdigit() for ch in value) or ":" in value
