"""Parsing hints: glyph codes a PDF's fonts cannot name are noted by page; a numeric first row is data."""

from __future__ import annotations

import datetime as dt

import pytest
from hostile.make_hostile import _FONT, _stream, raw_pdf
from test_loaders_office import load_one, xlsx

from core.loaders import load_bytes
from core.loaders.pdf_notes import cid_note
from core.schema import Page


def _pdf_with_unnamed_glyphs() -> bytes:
    """Page 1 in Helvetica; page 2 adds three glyphs of a CID font with no ToUnicode map."""
    return raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 8 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R /Resources << /Font << /F2 7 0 R >> >> >>",
        _stream(b"BT /F2 12 Tf 20 150 Td (A page of plain words) Tj ET"),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /NoMap /Encoding /Identity-H /DescendantFonts [6 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /NoMap /CIDSystemInfo "
        b"<< /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 600 >>",
        _FONT,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 9 0 R "
        b"/Resources << /Font << /F1 5 0 R /F2 7 0 R >> >> >>",
        _stream(b"BT /F2 12 Tf 20 150 Td (Readable words) Tj ET BT /F1 12 Tf 20 100 Td <000D000E000F> Tj ET"),
    ])  # fmt: skip


def test_pdfplumber_glyph_codes_are_noted_with_their_pages() -> None:
    (document,) = load_bytes(_pdf_with_unnamed_glyphs(), "codes.pdf", parser="pdfplumber")
    assert document.text == "A page of plain words\n\nReadable words\n\n(cid:13)(cid:14)(cid:15)"
    assert document.metadata["load_warning"] == (
        "3 glyphs written as (cid:N) on page 2: the PDF's fonts do not say which characters they draw "
        "(ocr='all' reads the page as an image)"
    )


def test_a_pdf_without_glyph_codes_gets_no_note() -> None:
    (document,) = load_bytes(raw_pdf_plain(), "plain.pdf", parser="pdfplumber")
    assert document.text == "Plain text only"
    assert "load_warning" not in document.metadata


def raw_pdf_plain() -> bytes:
    return raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        _stream(b"BT /F1 12 Tf 20 150 Td (Plain text only) Tj ET"),
        _FONT,
    ])  # fmt: skip


def test_the_note_counts_codes_per_page_and_names_only_pages_that_have_them() -> None:
    text = "(cid:1) one\n\nclean\n\n(cid:2)(cid:3) and (cid:40)"
    pages = [Page(1, "1", 0, 11), Page(2, "2", 13, 18), Page(3, "iii", 20, len(text))]
    note = cid_note(text, pages)
    assert note is not None and note.startswith("4 glyphs written as (cid:N) on pages 1, 3: ")
    assert cid_note("clean text", [Page(1, "1", 0, 10)]) is None


@pytest.mark.parametrize(
    ("rows", "table"),
    [
        # All numbers: data, so the columns are named by their letters.
        ([[1, 2.5, 3], [4, 5, 6]], "| A | B | C |\n| --- | --- | --- |\n| 1 | 2.5 | 3 |\n| 4 | 5 | 6 |"),
        # The letters are the sheet's own: an empty first column is trimmed, and the names start at B.
        ([[None, 10, 20], [None, 30, 40]], "| B | C |\n| --- | --- |\n| 10 | 20 |\n| 30 | 40 |"),
        # Any text in the first row makes it the header, as do dates (months across the top).
        ([["year", 2023, 2024], ["runs", 3, 4]], "| year | 2023 | 2024 |\n| --- | --- | --- |\n| runs | 3 | 4 |"),
        (
            [[dt.date(2024, 1, 1), dt.date(2024, 2, 1)], [5, 6]],
            "| 2024-01-01 | 2024-02-01 |\n| --- | --- |\n| 5 | 6 |",
        ),
    ],
)
def test_a_first_row_of_numbers_is_data_not_the_header(rows: list[list[object]], table: str) -> None:
    document = load_one(xlsx({"Data": rows}), "numbers.xlsx")
    assert document.text == f"Data\n\n{table}"
    header = next(e for e in document.elements if e.kind == "table").attrs["header"]
    assert header == table.split("\n", 1)[0]
    body_rows = [document.text[e.start_char : e.end_char] for e in document.elements if e.kind == "table_row"]
    assert body_rows == table.split("\n")[2:]
