"""Garbled text layers: telling a page whose extracted text is glyph numbers from one that reads as words.

A PDF draws glyphs, not characters; an extractor turns them back into text
through the font's ``/ToUnicode`` map, its encoding, or (pdfminer, under
pdfplumber) the ``cmap`` table of the embedded font program. When the way an
extractor takes is missing, it does not fail: it writes the glyph numbers as
characters, e.g. pypdf's "5HWULHYDO\\x03DXJPHQWHG" for "Retrieval augmented"
(a CID font without ``/ToUnicode``, glyph = code - 29, glyph 3 the space).
Such text looks like text to every later step, so it has to be caught here.

Two measures, both cheap and language-agnostic:

* **junk characters**: control characters (other than tab and line breaks),
  private-use code points, U+FFFD and pdfminer's ``(cid:N)`` placeholders, as a
  share of the page's non-space characters. Real text has none; a share of
  :data:`JUNK_SHARE` or more is garbled, whatever else the page holds.
* **word-like tokens**: tokens made of letters in one case pattern (``word``,
  ``Word``, ``CamelCase``, any script, at most 30 characters: longer is words
  run together) or a number, as a share of the tokens. Where most tokens hold
  a letter or a digit, a token of punctuation alone (an operator, a prompt, a
  rule, a table's bars) is markup and not counted: counted, it made pages of
  code or Markdown tables suspect and sent them to a second extractor for
  nothing. A page made mostly of such tokens counts them all: capitals shifted
  to glyph numbers come out as punctuation too.
  ALL-CAPS tokens do not count: glyph numbers shifted from lowercase letters
  come out in capitals ("DXJPHQWHG"), and a real page has few of them. Below
  :data:`SUSPECT_WORD_SHARE` a page is *suspect*: a second extractor is asked,
  and its text wins when it reads clearly more words. A low share alone is no
  proof (a page of code, formulas or capitals has one), so it never warns by
  itself.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from core.loaders.text import paragraph_spans

# From this share of junk characters on, a page's text is garbled (real text has none at all).
JUNK_SHARE = 0.02
# Below this share of word-like tokens, a page is worth a second extractor's opinion.
SUSPECT_WORD_SHARE = 0.6
# The second extractor's text replaces the first's when it holds this many times the word-like tokens...
BETTER_BY = 1.5
# ...and at least this many more (a page of five words proves nothing).
BETTER_BY_AT_LEAST = 5

# Longer than this, a token is words run together ("Largelanguagemodelsarehanded"), not one word.
MAX_WORD_CHARS = 30

_CID = re.compile(r"\(cid:\d+\)")
_JUNK = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd\U000f0000-\U0010ffff]")
# Tokens are split at spaces and at control characters, which garbled text uses as its spaces.
_TOKEN_SPLIT = re.compile("[\\s\x00-\x1f\x7f-\x9f]+")
_EDGE_PUNCTUATION = "\"'()[]{}<>.,;:!?*\u2018\u2019\u201c\u201d\u00ab\u00bb\u2026-\u2013\u2014/"
_NUMBER = re.compile(r"[-+]?[$€£]?\d[\d.,:/%]*[%]?")
# One case pattern per word part: lower, Capitalized, UPPER; parts joined by an apostrophe or a hyphen.
_PART = r"(?:[^\W\d_]+)"


@dataclass(frozen=True)
class TextQuality:
    """How a page's extracted text reads: junk characters over non-space characters, word-like tokens over tokens."""

    junk_share: float
    word_share: float  # words over the tokens (those that hold a letter or a digit, where they are the most)
    words: int  # word-like tokens
    tokens: int

    @property
    def garbled(self) -> bool:
        return self.junk_share >= JUNK_SHARE

    @property
    def suspect(self) -> bool:
        return self.garbled or (self.tokens > 0 and self.word_share < SUSPECT_WORD_SHARE)


def text_quality(text: str) -> TextQuality:
    """The junk share and word-like share of one page's text."""
    tokens = [token for token in _TOKEN_SPLIT.split(_CID.sub("\x00", text)) if token]
    words = sum(1 for token in tokens if is_word_like(token))
    scored = sum(1 for token in tokens if _LETTER_OR_DIGIT.search(token))
    if 2 * scored <= len(tokens):  # mostly punctuation: every token counts
        scored = len(tokens)
    return TextQuality(
        junk_share=junk_share(text),
        word_share=words / scored if scored else 1.0,
        words=words,
        tokens=len(tokens),
    )


_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


def junk_share(text: str) -> float:
    """Junk characters (``(cid:N)`` placeholders included) over the page's characters other than spaces and breaks."""
    cid_chars = sum(len(match) for match in _CID.findall(text))
    visible = len(text) - sum(text.count(space) for space in " \t\n\r")
    junk = cid_chars + len(_JUNK.findall(_CID.sub("", text) if cid_chars else text))
    return junk / visible if visible else 0.0


# Plain lowercase words, counted at C speed: a subset of the word-like tokens, so a page with no junk whose
# share of them alone reaches SUSPECT_WORD_SHARE is not suspect, without looking at each token in Python.
_PLAIN_WORD = re.compile(r"(?<!\S)[\"'(\u2018\u201c]?[a-z]{1,30}[.,;:!?)\"'\u2019\u201d]*(?!\S)")


def suspect(text: str) -> bool:
    """Whether a page's text is worth a second extractor's reading (as ``text_quality(text).suspect``, faster)."""
    if not _JUNK.search(text) and not _CID.search(text):
        tokens = len(text.split())
        if not tokens or len(_PLAIN_WORD.findall(text)) >= SUSPECT_WORD_SHARE * tokens:
            return False
    return text_quality(text).suspect


def is_word_like(token: str) -> bool:
    """Whether a token reads as a word (letters in one case pattern other than ALL CAPS, any script) or a number."""
    core = token.strip(_EDGE_PUNCTUATION)
    if not core or len(core) > MAX_WORD_CHARS:
        return False
    if _NUMBER.fullmatch(core):
        return True
    parts = re.split(r"['\u2019-]", core)
    return all(part and re.fullmatch(_PART, part) and _one_case_pattern(part) for part in parts)


def _one_case_pattern(part: str) -> bool:
    if part.islower() or len(part) == 1 or not any(char.isupper() or char.islower() for char in part):
        return True
    # Capitalized or CamelCase ("Word", "LlamaIndex"): each capital starts a lowercase run.
    return part[0].isupper() and all(not (a.isupper() and b.isupper()) for a, b in zip(part, part[1:], strict=False))


def better_text(first: str, second: str) -> bool:
    """Whether ``second`` reads clearly better than ``first``: not garbled, and either ``first`` is garbled and
    ``second`` reads at least half as many words as ``first`` has tokens, or ``second`` reads clearly more words."""
    a, b = text_quality(first), text_quality(second)
    if b.garbled or not b.words:
        return False
    if a.garbled:
        return b.words >= 0.5 * a.tokens
    return b.words >= BETTER_BY * a.words and b.words - a.words >= BETTER_BY_AT_LEAST


def garbled_pages(page_texts: dict[int, str]) -> list[int]:
    """The page numbers whose text is garbled (junk characters, ``(cid:N)`` aside: those have their own note)."""
    return [number for number, text in sorted(page_texts.items()) if junk_share(_CID.sub("", text)) >= JUNK_SHARE]


def repair_garbled(
    data: bytes, texts: list[str], *, layout: bool, skip: Collection[int] = ()
) -> tuple[list[str], list[int]]:
    """pypdf's page texts, with pdfplumber's where pypdf's is suspect and pdfplumber's reads clearly better
    (:mod:`core.loaders.pdf_garble`); and the numbers of the pages so replaced.

    pdfplumber opens the file only when a page is suspect: on a clean PDF this costs one scan of the texts.
    The pages in ``skip`` are never read again (the caller's bound on pdfplumber's work).
    """
    doubtful = [number for number, text in enumerate(texts, start=1) if text and number not in skip and suspect(text)]
    if not doubtful:
        return texts, []
    from core.loaders.pdf_structure import page_text

    try:
        theirs = page_text(data, doubtful, layout=layout)
    except Exception:  # pdfplumber cannot read a file pypdf did: keep pypdf's text (a garbled page is still named)
        return texts, []
    repaired = list(texts)
    replaced: list[int] = []
    for number, text in theirs.items():
        if better_text(texts[number - 1], text):
            repaired[number - 1] = text
            replaced.append(number)
    return repaired, replaced


def read_unread_pages(
    data: bytes, texts: list[str], unread: Collection[int], *, layout: bool, skip: Collection[int] = ()
) -> tuple[list[str], list[int]]:
    """pypdf's page texts, with pdfplumber's for the pages pypdf could not read (``unread``: it failed or gave up
    on them) where pdfplumber reads some text; and the numbers of the pages so read.

    pypdf fails on some structures pdfplumber follows (a page's /Resources behind a chain of references: pypdf
    raised on it and the file read as "has no text layer"). The pages in ``skip`` are never read again.
    """
    wanted = sorted(number for number in unread if number not in skip and not texts[number - 1])
    if not wanted:
        return texts, []
    from core.loaders.pdf_structure import page_text

    try:
        theirs = page_text(data, wanted, layout=layout)
    except Exception:  # pdfplumber cannot read them either: they stay unread, with pypdf's reason
        return texts, []
    read = list(texts)
    found = [number for number, text in sorted(theirs.items()) if text.strip()]
    for number in found:
        read[number - 1] = theirs[number]
    return read, found


def draws_text(reader: Any, number: int) -> bool:
    """Whether page ``number``'s own content stream opens a text object (``BT``): a page pypdf read as blank,
    though it draws text, is worth a second read. A scan's page draws an image only."""
    try:
        contents = reader.pages[number - 1].get_contents()
        return contents is not None and b"BT" in contents.get_data()
    except Exception:  # content pypdf cannot even decode: the second read finds out
        return True


def repair_garbled_blocks(reader: Any, pages_blocks: list[list[Any]]) -> tuple[list[list[Any]], list[int]]:
    """pdfplumber's blocks, with a page's pypdf text as paragraphs where pdfplumber's is suspect and pypdf's reads
    clearly better; and the numbers of the pages so replaced."""
    from core.loaders.pdf_structure import Block

    repaired = list(pages_blocks)
    replaced: list[int] = []
    for number, blocks in enumerate(pages_blocks, start=1):
        ours = blocks_text(blocks)
        if not ours or not suspect(ours):
            continue
        try:
            theirs = reader.pages[number - 1].extract_text()
        except Exception:  # pypdf cannot read the page either: keep pdfplumber's text
            continue
        if better_text(ours, theirs):
            spans = paragraph_spans(theirs, 0, len(theirs))
            repaired[number - 1] = [Block("paragraph", theirs[start:end]) for start, end in spans]
            replaced.append(number)
    return repaired, replaced


def blocks_text(blocks: list[Any]) -> str:
    """A page's pdfplumber blocks as plain text (table cells joined by spaces), for judging how it reads."""
    return "\n\n".join(block.text or " ".join(" ".join(row) for row in block.rows) for block in blocks)
