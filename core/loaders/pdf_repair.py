"""pypdf's page texts repaired, in the order the repairs are made, each page read again by pdfplumber only
when pypdf's text gives a reason to:

1. a page that draws its glyphs over themselves (a fake bold, :func:`~core.loaders.pdf_corruption.looks_overdrawn`)
   is pdfplumber's text, each glyph once per position;
2. a garbled page (glyph numbers instead of letters) is pdfplumber's text where that reads clearly better
   (:func:`~core.loaders.pdf_garble.repair_garbled`);
3. a page pypdf could not read, or read blank while its content draws text, is pdfplumber's text
   (:func:`~core.loaders.pdf_garble.read_unread_pages`).

The pages in ``skip`` are never read again (the caller's bound on pdfplumber's work). pdfplumber is imported
only when a page is.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from core.loaders.pdf_corruption import looks_overdrawn
from core.loaders.pdf_garble import draws_text, read_unread_pages, repair_garbled


@dataclass
class PypdfRepairs:
    """pypdf's page texts after the repairs, and the pages each repair changed."""

    texts: list[str]
    overdrawn: dict[int, int]  # pages drawing glyphs over themselves: how many times a glyph was drawn
    garbled: list[int]  # pages whose garbled text pdfplumber's replaced
    read_by_other: list[int]  # pages pypdf could not read, read by pdfplumber


def repair_pypdf_texts(
    data: bytes, reader: Any, texts: list[str], unreadable: Collection[int], *, layout: bool, skip: Collection[int]
) -> PypdfRepairs:
    """The three repairs of pypdf's ``texts`` (``unreadable``: the pages pypdf failed on, wholly or in part)."""
    texts, overdrawn = repair_overdrawn(data, texts, layout=layout, skip=skip)
    texts, garbled = repair_garbled(data, texts, layout=layout, skip=skip)
    # Pages pypdf failed on, and blank ones whose content does draw text (pypdf lost it without a word).
    unread = {*unreadable, *(n for n, text in enumerate(texts, start=1) if not text and draws_text(reader, n))}
    texts, read_by_other = read_unread_pages(data, texts, unread, layout=layout, skip=skip)
    return PypdfRepairs(texts, overdrawn, garbled, read_by_other)


def repair_overdrawn(
    data: bytes, texts: list[str], *, layout: bool, skip: Collection[int] = ()
) -> tuple[list[str], dict[int, int]]:
    """pypdf's page texts, with pdfplumber's (one glyph per position) where a page draws its glyphs over
    themselves; and those pages' numbers with how many times a glyph was drawn.

    pdfplumber opens the file only when a page's text looks overdrawn (:func:`looks_overdrawn`). The pages
    in ``skip`` are never read again (the caller's bound on pdfplumber's work).
    """
    doubtful = [
        number for number, text in enumerate(texts, start=1) if text and number not in skip and looks_overdrawn(text)
    ]
    if not doubtful:
        return texts, {}
    from core.loaders.pdf_structure import page_readings

    try:
        readings = page_readings(data, doubtful, layout=layout)
    except Exception:  # pdfplumber cannot read a file pypdf did: keep pypdf's text
        return texts, {}
    repaired = list(texts)
    overdrawn: dict[int, int] = {}
    for number, (text, times) in readings.items():
        if times > 1 and text.strip():
            repaired[number - 1] = text
            overdrawn[number] = times
    return repaired, overdrawn
