"""A PDF's pages joined into one document text: page spans, paragraphs, headings and tables as elements.

The PDF loader (:mod:`core.loaders.pdf`) reads every page with the chosen parser, or with OCR; these functions
lay the pages out one after another, so every page and element has an exact span in the text.

Every page's text passes through :func:`expand_ligatures` on its way in (pypdf's, pdfplumber's and OCR's), so a
search for "classification" finds the word a font set with the one glyph "ﬁ"; the spans are into that text.
"""

from __future__ import annotations

from typing import Any

from core.loaders.blocks import BlockText
from core.loaders.pdf_garble import blocks_text
from core.loaders.pdf_ocr import OcrPage
from core.loaders.text import paragraph_spans
from core.schema import Element, Page

# Between two pages' texts: a blank line, so a paragraph never runs across a page break.
PAGE_SEPARATOR = "\n\n"
# The Latin ligatures of Unicode's presentation forms (U+FB00-U+FB06), as the letters they join. pypdf writes
# the character a font's ToUnicode map names, so "classiﬁcation" keeps its one "ﬁ" (pdfplumber expands them
# itself). The two "st" forms are the long-s one (ﬅ) and the round one (ﬆ); both read "st", as NFKC has them.
LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})


def expand_ligatures(text: str) -> str:
    """``text`` with each Latin presentation-form ligature (ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ) written as its letters."""
    return text.translate(LIGATURES)


# A ToUnicode map written with its two bytes swapped names U+4D00 for "M": the page reads as CJK ("䴀甀氀琀椀挀漀氀漀爀",
# pikepdf's cmyk.pdf) that no garble check flags. Such a code point is a printable ASCII byte followed by a zero
# byte; only 95 of the CJK blocks' ~20,000 characters have that form (一, U+4E00, is one), so a page is taken for
# byte-swapped only when nearly all of its characters have it.
SWAPPED = {code << 8: chr(code) for code in range(0x20, 0x7F)}
MIN_SWAPPED = 6
SWAPPED_SHARE = 0.9


def byte_swapped(text: str) -> bool:
    """Whether ``text`` reads as ASCII stored as byte-swapped UTF-16 (at least MIN_SWAPPED such characters, and
    SWAPPED_SHARE of those not whitespace)."""
    shown = [char for char in text if not char.isspace()]
    swapped = sum(ord(char) in SWAPPED for char in shown)
    return swapped >= MIN_SWAPPED and swapped >= SWAPPED_SHARE * len(shown)


def unswap(text: str) -> str:
    """``text`` with every byte-swapped ASCII character (U+2000, U+4D00, ...) read back as its letter."""
    return text.translate(SWAPPED)


def readable(text: str, swapped: bool) -> str:
    """A page's text as it enters the document: ligatures spelled out, and byte-swapped text read back."""
    text = expand_ligatures(text)
    return unswap(text) if swapped else text


def assemble_texts(
    texts: list[str], labels: list[str], ocr_read: dict[int, OcrPage]
) -> tuple[str, list[Element], list[Page]]:
    """pypdf's page texts (or OCR's, where it read a page) joined by a blank line; paragraphs found per page."""
    pieces: list[str] = []
    pages: list[Page] = []
    offset = 0
    for number, (label, text) in enumerate(zip(labels, texts, strict=True), start=1):
        text = ocr_read[number].text if number in ocr_read else text
        text = readable(text, byte_swapped(text))
        if number > 1:
            pieces.append(PAGE_SEPARATOR)
            offset += len(PAGE_SEPARATOR)
        pieces.append(text)
        pages.append(Page(number=number, label=label, start_char=offset, end_char=offset + len(text)))
        offset += len(text)
    full_text = "".join(pieces)
    elements: list[Element] = []
    for page in pages:
        attrs = _ocr_attrs(ocr_read, page.number)
        for start, end in paragraph_spans(full_text, page.start_char, page.end_char):
            elements.append(Element("paragraph", start, end, page=page.number, attrs=dict(attrs)))
    return full_text, elements, pages


def assemble_blocks(
    pages_blocks: list[list[Any]], labels: list[str], ocr_read: dict[int, OcrPage]
) -> tuple[str, list[Element], list[Page]]:
    """pdfplumber's blocks page by page: headings as ``#`` lines, tables as Markdown rows (or OCR's paragraphs)."""
    out = BlockText()
    for number, (label, blocks) in enumerate(zip(labels, pages_blocks, strict=True), start=1):
        out.start_page(label)
        if number in ocr_read:
            attrs = _ocr_attrs(ocr_read, number)
            for paragraph in expand_ligatures(ocr_read[number].text).split("\n\n"):
                out.add(paragraph, "paragraph", attrs=dict(attrs))
            continue
        swapped = byte_swapped(blocks_text(blocks))
        for block in blocks:
            if block.kind == "table":
                rows = [[readable(str(cell), swapped) for cell in row] for row in block.rows]
                out.add_table(rows, attrs=block.attrs or None)
            elif block.kind == "heading":
                title = " ".join(readable(block.text, swapped).split())
                out.add(f"{'#' * (block.level or 1)} {title}", "heading", level=block.level, attrs={"title": title})
            else:
                out.add(readable(block.text, swapped), block.kind)
    return out.result()


def _ocr_attrs(ocr_read: dict[int, OcrPage], number: int) -> dict[str, Any]:
    return {"ocr_confidence": ocr_read[number].confidence} if number in ocr_read else {}
