"""Corruption a PDF's text layer hides (issue #44.1): each is read as a viewer shows the page, or named in a
warning on the document and the page, never passed on silently.

* glyphs drawn two to four times at one position (a fake bold, a doubled layer) are read once, and the page
  is named in ``load_warning``;
* text turned by 90, 180 or 270 degrees (a vertical column header, margin text), or at another angle (a
  diagonal watermark), reads in its direction, and apart from the lines it crosses;
* a scanned page under a big watermark is a scan: its few big glyphs do not make it a page of text;

The PDFs are generated here (fpdf2, and the sample scan), a few hundred bytes to a few hundred KB each.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pypdf
import pytest
from fpdf import FPDF
from hypothesis import given, settings
from hypothesis import strategies as st

from core.loaders import load_bytes
from core.loaders.pdf_corruption import glyph_copies, looks_overdrawn, times_drawn
from core.loaders.pdf_ocr import page_coverage

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import parser_checks  # noqa: E402  (the benchmark's simulated scans)

SCANNED_PDF = ROOT / "sample_docs" / "scanned_handbook_page.pdf"
# Words the sample scan shows, all of which OCR reads on it without a watermark.
SCAN_WORDS = "Embedding models are trained on pairs of texts"


def watermarked_scan(mark: str, size: float, *, opacity: float = 1.0, angle: float = 0.0, grey: int = 150) -> bytes:
    """The sample scan (a page-size image, no text layer) with ``mark`` set across its middle, as a watermark."""
    scan = pypdf.PdfReader(SCANNED_PDF).pages[0]
    width, height = float(scan.mediabox.width), float(scan.mediabox.height)
    layer = FPDF(unit="pt", format=(width, height))
    layer.add_page()
    layer.set_font("Helvetica", "B", size=size)
    layer.set_text_color(grey)
    with layer.local_context(fill_opacity=opacity), layer.rotation(angle, width / 2, height / 2):
        layer.text(x=(width - layer.get_string_width(mark)) / 2, y=height / 2, text=mark)
    writer = pypdf.PdfWriter()
    page = writer.add_page(scan)
    page.merge_page(pypdf.PdfReader(io.BytesIO(bytes(layer.output()))).pages[0])
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


PARSERS = ["pypdf", "pdfplumber"]
LINES = ("Quarterly revenue grew in every region", "Operating margin 300218 and falling")


def overdrawn_pdf(lines: tuple[str, ...], times: int, *, per_glyph: bool = False, offset: float = 0.0) -> bytes:
    """One page drawing ``lines`` ``times`` over: pass after pass of the whole text, or each glyph again in place
    (``per_glyph``); each copy ``offset`` points right of the one before (a fake bold's shift)."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    if per_glyph:
        for row, line in enumerate(lines):
            x = 72.0
            for char in line:
                for copy in range(times):
                    pdf.text(x + copy * offset, 100 + 16 * row, char)
                x += pdf.get_string_width(char)
    else:
        for copy in range(times):
            for row, line in enumerate(lines):
                pdf.text(72 + copy * offset, 100 + 16 * row, line)
    return bytes(pdf.output())


def turned_pdf(words: str, angle: int) -> bytes:
    """A line of text, then ``words`` turned ``angle`` degrees counter-clockwise (a column header, margin text)."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(72, 100, "Header row")
    with pdf.rotation(angle, 300, 400):
        pdf.text(300, 400, words)
    return bytes(pdf.output())


def tokens(text: str) -> list[str]:
    return text.split()


# -- overdraw ----------------------------------------------------------------------------


def test_the_overdraw_as_each_parser_read_it() -> None:
    """The defect (pdfplumber's issue-842 file draws its digits 4 times over): what a viewer shows once, each
    parser wrote four times."""
    data = overdrawn_pdf(("300218",), 4)
    assert pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text() == "300218300218300218300218"
    per_glyph = overdrawn_pdf(("300218",), 4, per_glyph=True)
    assert pypdf.PdfReader(io.BytesIO(per_glyph)).pages[0].extract_text() == "333300000000222211118888"


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("per_glyph", [False, True], ids=["passes", "per-glyph"])
def test_glyphs_drawn_four_times_read_once_and_are_named(parser: str, per_glyph: bool) -> None:
    (document,) = load_bytes(overdrawn_pdf(("300218",), 4, per_glyph=per_glyph), "overdrawn.pdf", parser=parser)
    assert document.text == "300218"
    by = ", by pdfplumber" if parser == "pypdf" else ""
    assert document.metadata["load_warning"] == (
        "glyphs drawn over themselves on page 1 (up to 4 times at one position, as a fake bold draws them): "
        f"read once per position{by}"
    )


def test_the_pypdf_parser_says_pdfplumber_read_the_overdrawn_page() -> None:
    (document,) = load_bytes(overdrawn_pdf(LINES, 2), "overdrawn.pdf")
    assert document.text == "\n".join(LINES)
    assert document.metadata["fallback_pages"] == [1]
    assert "garbled" not in document.metadata["load_warning"]


def test_a_page_drawn_once_is_not_overdrawn() -> None:
    for parser in PARSERS:
        (document,) = load_bytes(overdrawn_pdf(LINES, 1), "plain.pdf", parser=parser)
        assert tokens(document.text) == tokens(" ".join(LINES))
        assert "load_warning" not in document.metadata


def test_what_makes_pypdfs_text_look_overdrawn() -> None:
    assert looks_overdrawn("300218300218300218300218")
    assert looks_overdrawn("300218 Total amount300218 Total amount")
    assert looks_overdrawn("TTTToooottttaaaallll")
    assert looks_overdrawn(f"{LINES[0]}\n{LINES[1]}\n{LINES[0]}")
    # Repeats in real text: a word written twice, a year, a word with double letters pairs of three.
    assert not looks_overdrawn("the code code we ran in in 2020 and 2021")


def test_two_copies_of_one_character_are_not_yet_an_overdraw() -> None:
    char = {"text": "a", "x0": 10.0, "top": 20.0}
    assert times_drawn([char, dict(char)]) == 1
    assert times_drawn([char, dict(char), {**char, "text": "b"}, {**char, "text": "b"}, {**char, "text": "b"}]) == 3


# -- fake bold: copies shifted a fraction of a glyph ----------------------------------------

PRICES = (("Item", "Qty", "Price"), ("Apples", "12", "3.50"), ("Pears", "7", "12.25"), ("Total", "19", "15.75"))


def fake_bold_table(rows: tuple[tuple[str, ...], ...], bold: set[int], offset: float, copies: int) -> bytes:
    """A ruled table of ``rows`` whose rows in ``bold`` are set in a fake bold: each cell's text drawn ``copies``
    times, the copies spread evenly over ``offset`` points to the right (a viewer shows one bolder glyph)."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    x0, y0, width, height = 72.0, 100.0, 120.0, 20.0
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            pdf.rect(x0 + c * width, y0 + r * height, width, height)
            for copy in range(copies if r in bold else 1):
                shift = offset * copy / max(copies - 1, 1)
                pdf.text(x0 + c * width + 4 + shift, y0 + r * height + 14, cell)
    return bytes(pdf.output())


def markdown_table(rows: tuple[tuple[str, ...], ...]) -> str:
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([lines[0], "| " + " | ".join("---" for _ in rows[0]) + " |", *lines[1:]])


def test_the_fake_bold_rows_as_pdfplumber_read_them() -> None:
    """The defect: copies shifted by a point are more than pdfplumber's ``dedupe_chars`` tolerance apart, so
    each bold row reads twice over ("TToottaall", "1155..7755")."""
    import pdfplumber

    with pdfplumber.open(io.BytesIO(fake_bold_table(PRICES, {0, 3}, 1.2, 2))) as pdf:
        rows = pdf.pages[0].dedupe_chars(tolerance=1.0).extract_table()
    assert rows[3] == ["TToottaall", "1199", "1155..7755"]


@pytest.mark.parametrize("parser", PARSERS)
def test_a_fake_bold_row_reads_once_with_its_decimal_points(parser: str) -> None:
    (document,) = load_bytes(fake_bold_table(PRICES, {0, 3}, 1.2, 2), "bold.pdf", parser=parser)
    expected = markdown_table(PRICES) if parser == "pdfplumber" else "\n".join(" ".join(row) for row in PRICES)
    assert document.text == expected
    assert "glyphs drawn over themselves on page 1 (up to 2 times" in document.metadata["load_warning"]


def test_a_letter_written_twice_is_two_glyphs_and_a_shifted_copy_is_one() -> None:
    """Neighbours ("lll", "...") sit a whole glyph's width apart; a fake bold's copy less than half of it."""
    ell = {"text": "l", "x0": 10.0, "x1": 12.44, "top": 20.0, "size": 11.0, "upright": True}
    neighbours = [{**ell, "x0": 10.0 + 2.44 * k, "x1": 12.44 + 2.44 * k} for k in range(4)]
    assert times_drawn(neighbours) == 1
    shifted = [{**char, "x0": char["x0"] + 1.2, "x1": char["x1"] + 1.2} for char in neighbours]
    assert times_drawn(neighbours + shifted) == 2
    assert sorted(map(sorted, glyph_copies(neighbours + shifted))) == [[k, k + 4] for k in range(4)]


@settings(max_examples=25, deadline=None)
@given(
    offset=st.floats(0.2, 1.2),
    copies=st.integers(2, 4),
    bold=st.sets(st.integers(0, len(PRICES) - 1), min_size=1),
    parser=st.sampled_from(PARSERS),
)
def test_fake_bold_rows_read_once_at_any_shift(offset: float, copies: int, bold: set[int], parser: str) -> None:
    """Over shifts of 0.2-1.2 pt and 2-4 copies, every row of the table reads once, digits and decimal points
    whole, and the page is named."""
    (document,) = load_bytes(fake_bold_table(PRICES, bold, offset, copies), "bold.pdf", parser=parser)
    expected = markdown_table(PRICES) if parser == "pdfplumber" else "\n".join(" ".join(row) for row in PRICES)
    assert document.text == expected
    assert "glyphs drawn over themselves on page 1" in document.metadata["load_warning"]


# -- rotated text ------------------------------------------------------------------------


@pytest.mark.parametrize("angle", [90, 180, 270])
def test_pdfplumber_read_turned_text_backwards(angle: int) -> None:
    """The defect: pdfplumber reads every turned line top to bottom, left to right."""
    import pdfplumber

    with pdfplumber.open(io.BytesIO(turned_pdf("Total Population", angle))) as pdf:
        text = pdf.pages[0].extract_text()
    assert ("latoT" in text) == (angle in (90, 180))


READINGS = [{"parser": "pypdf"}, {"parser": "pypdf", "extraction_mode": "layout"}, {"parser": "pdfplumber"}]


@pytest.mark.parametrize("options", READINGS, ids=["pypdf", "pypdf-layout", "pdfplumber"])
@pytest.mark.parametrize("angle", [90, 180, 270, 30, 45, 315])
def test_turned_text_reads_in_its_direction(options: dict[str, str], angle: int) -> None:
    """pypdf's layout mode dropped turned text; pdfplumber read it backwards, or scattered it at other angles."""
    (document,) = load_bytes(turned_pdf("Total Population", angle), "turned.pdf", **options)
    assert tokens(document.text) == ["Header", "row", "Total", "Population"]


def vertical_header_table(angle: int) -> bytes:
    """A ruled table whose header cells are set turned ``angle`` degrees, as narrow columns' headers are."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    xs, ys = [72, 172, 272, 372], [80, 180, 200, 220]
    for x in xs:
        pdf.line(x, ys[0], x, ys[-1])
    for y in ys:
        pdf.line(xs[0], y, xs[-1], y)
    for column, header in enumerate(["District", "Population", "Total"]):
        x, y = xs[column] + 55, 170 if angle == 90 else 90
        with pdf.rotation(angle, x, y):
            pdf.text(x, y, header)
    for row, values in enumerate([["North", "1200", "3400"], ["South", "900", "2100"]]):
        for column, value in enumerate(values):
            pdf.text(xs[column] + 5, ys[row + 1] + 14, value)
    return bytes(pdf.output())


@pytest.mark.parametrize("angle", [90, 270])
def test_vertical_column_headers_read_in_their_direction(angle: int) -> None:
    """The issue's "latoT", "noitalupoP": pdfplumber read every table cell upright."""
    (document,) = load_bytes(vertical_header_table(angle), "table.pdf", parser="pdfplumber")
    assert document.text == (
        "| District | Population | Total |\n| --- | --- | --- |\n| North | 1200 | 3400 |\n| South | 900 | 2100 |"
    )


def test_a_diagonal_watermark_does_not_break_into_the_lines_it_crosses() -> None:
    page = _with_turned(overdrawn_pdf(LINES, 1), "DRAFT", 30, size=60, at=(200, 160))
    (document,) = load_bytes(page, "marked.pdf", parser="pdfplumber")
    assert LINES[0] in document.text and LINES[1] in document.text
    assert "DRAFT" in tokens(document.text)


# -- the property --------------------------------------------------------------------------

WORDS = st.sampled_from(
    "revenue margin district population quarterly budget harbour railway library station council "
    "museum orchard river valley summit".split()
)


@settings(max_examples=30, deadline=None)
@given(
    lines=st.lists(st.lists(WORDS, min_size=2, max_size=5).map(" ".join), min_size=1, max_size=3).map(tuple),
    times=st.integers(1, 4),
    per_glyph=st.booleans(),
    offset=st.sampled_from([0.0, 0.3]),
    turned=st.sampled_from([None, 90, 180, 270, 45]),
    options=st.sampled_from(READINGS),
)
def test_generated_pdfs_read_their_real_words(
    lines: tuple[str, ...], times: int, per_glyph: bool, offset: float, turned: int | None, options: dict[str, str]
) -> None:
    """Over overdraw x1-x4 (passes or per glyph, in place or shifted) and text turned 90/180/270/45 degrees, the
    loaded text holds the page's words, each once per time it is written; an overdrawn page is named."""
    data = overdrawn_pdf(lines, times, per_glyph=per_glyph, offset=offset)
    expected = tokens(" ".join(lines))
    if turned is not None:
        data = _with_turned(data, "Total Population", turned)
        expected += ["Total", "Population"]
    (document,) = load_bytes(data, "generated.pdf", **options)
    assert sorted(tokens(document.text)) == sorted(expected)
    warning = document.metadata.get("load_warning", "")
    assert ("glyphs drawn over themselves on page 1" in warning) == (times > 1)


def _with_turned(
    data: bytes, words: str, angle: int, *, size: float = 12, at: tuple[float, float] = (300, 400)
) -> bytes:
    """``data``'s page with ``words`` turned ``angle`` degrees about ``at`` (points from the top left)."""
    layer = FPDF(unit="pt", format="A4")
    layer.add_page()
    layer.set_font("Helvetica", size=size)
    with layer.rotation(angle, *at):
        layer.text(*at, words)
    writer = pypdf.PdfWriter()
    page = writer.add_page(pypdf.PdfReader(io.BytesIO(data)).pages[0])
    page.merge_page(pypdf.PdfReader(io.BytesIO(bytes(layer.output()))).pages[0])
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


# -- scans under watermarks ------------------------------------------------------------


@pytest.mark.parametrize(("mark", "size"), [("SCANNED COPY", 64), ("DRAFT", 120)])
def test_the_watermark_was_all_the_text_layer_holds(mark: str, size: float) -> None:
    """The defect as it was: with OCR off, the page reads as its watermark."""
    (document,) = load_bytes(watermarked_scan(mark, size), "marked.pdf", ocr="off")
    assert " ".join(document.text.split()) == mark


@pytest.mark.parametrize("parser", ["pypdf", "pdfplumber"])
@pytest.mark.parametrize(("mark", "size"), [("SCANNED COPY", 64), ("DRAFT", 120)])
def test_a_scan_under_a_big_watermark_is_read_by_ocr(mark: str, size: float, parser: str) -> None:
    """The watermark's glyphs cover 6-9% of the page, past the 5% rule; as words at reading size, 0.1-0.2%."""
    (document,) = load_bytes(watermarked_scan(mark, size, opacity=0.3), "marked.pdf", parser=parser)
    assert SCAN_WORDS in " ".join(document.text.split())
    assert document.metadata["ocr_pages"] == [1]
    assert "the text layer of page 1 covers little of a page-size image" in document.metadata["load_warning"]


def test_an_opaque_watermark_hides_no_word_of_the_scan_under_it() -> None:
    """OCR read the page with "DRAFT" (120 pt, opaque, 45 degrees) drawn over the scan and lost 38% of its words
    (word error rate 0.384 against 0.039 unmarked); the page is now read as it shows without its text layer, and
    the mark is quoted in the note, not mixed into the text."""
    text = parser_checks.known_text()
    scan = parser_checks.scan_pdf(text)
    (plain,) = load_bytes(scan, "scan.pdf")
    (marked,) = load_bytes(parser_checks.watermarked(scan, "DRAFT", 120, 1.0, 45), "marked.pdf")
    unmarked_rate = parser_checks.word_error_rate(text, plain.text)
    assert unmarked_rate < 0.06
    assert parser_checks.word_error_rate(text, marked.text) <= unmarked_rate + 0.01
    assert "DRAFT" not in marked.text and marked.metadata["ocr_pages"] == [1]
    assert marked.metadata["load_warning"].endswith("the layer's words: \"DRAFT\"")


@settings(max_examples=25, deadline=None)
@given(
    mark=st.sampled_from(["DRAFT", "SCANNED COPY", "CONFIDENTIAL", "COPY"]),
    size=st.sampled_from([24, 48, 64, 90, 120, 160]),
    opacity=st.sampled_from([0.15, 0.5, 1.0]),
    angle=st.sampled_from([0, 30, 45, 90]),
)
def test_no_watermark_makes_a_scan_look_like_a_page_of_text(
    mark: str, size: float, opacity: float, angle: float
) -> None:
    coverage = page_coverage(watermarked_scan(mark, size, opacity=opacity, angle=angle), [1])[1]
    assert coverage.images == pytest.approx(1.0)
    assert coverage.scan_like, coverage
