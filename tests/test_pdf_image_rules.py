"""A table whose rules are drawn in an image under the text (issue #44.2: a scanned form with its values typed into
the text layer) is read as a table; a page whose image draws no rules reads as it did."""

from __future__ import annotations

import io
import random

import pdfplumber
import pytest
from fpdf import FPDF
from PIL import Image, ImageDraw

from core.loaders import load_bytes
from core.loaders.pdf_image_rules import image_rules
from core.loaders.pdf_ocr import render_page

ROWS = (("Meter", "Reading", "Factor"), ("A-17", "300.710", "1,6000"), ("B-02", "289.535", "0,0160"))
MARKDOWN = "| Meter | Reading | Factor |\n| --- | --- | --- |\n| A-17 | 300.710 | 1,6000 |\n| B-02 | 289.535 | 0,0160 |"
PAGE = (300.0, 200.0)  # points
SCALE = 4  # image pixels per point (288 dpi, as a scanner writes them)
CELL = (80.0, 24.0)  # points
ORIGIN = (30.0, 40.0)  # the grid's top left corner, points


def page_over(image: Image.Image, *, words: bool = True) -> bytes:
    """A page with ``image`` drawn over all of it and, with ``words``, ROWS typed into the text layer, each word
    in its cell of the grid at ORIGIN."""
    pdf = FPDF(unit="pt", format=PAGE)
    pdf.add_page()
    pdf.image(image, x=0, y=0, w=PAGE[0], h=PAGE[1])
    pdf.set_font("Helvetica", size=10)
    for r, row in enumerate(ROWS if words else ()):
        for c, word in enumerate(row):
            pdf.text(ORIGIN[0] + c * CELL[0] + 6, ORIGIN[1] + r * CELL[1] + 16, word)
    pdf.text(30, 170, "Readings are in kilowatt hours.")
    return bytes(pdf.output())


def ruled_image(
    *, colour: int = 90, boxes: tuple[tuple[float, int, int], ...] = ((ORIGIN[0], 3, len(ROWS)),)
) -> Image.Image:
    """A white page image with ``boxes`` drawn in ``colour``, 1 point thick: each a grid of CELL-sized cells,
    (left edge, columns, rows), its top at ORIGIN's."""
    image = Image.new("L", (int(PAGE[0] * SCALE), int(PAGE[1] * SCALE)), 255)
    draw = ImageDraw.Draw(image)
    for left, columns, rows in boxes:
        x0, y0 = left * SCALE, ORIGIN[1] * SCALE
        width, height = columns * CELL[0] * SCALE, rows * CELL[1] * SCALE
        for r in range(rows + 1):
            y = y0 + r * CELL[1] * SCALE
            draw.line([(x0, y), (x0 + width, y)], fill=colour, width=SCALE)
        for c in range(columns + 1):
            x = x0 + c * CELL[0] * SCALE
            draw.line([(x, y0), (x, y0 + height)], fill=colour, width=SCALE)
    return image


def read(data: bytes) -> str:
    (document,) = load_bytes(data, "form.pdf", parser="pdfplumber", ocr="off")
    return document.text


def test_pdfplumber_alone_reads_a_grid_drawn_in_an_image_as_loose_lines() -> None:
    """The defect: the values are in the text, the rules only in the image, and pdfplumber finds no table."""
    with pdfplumber.open(io.BytesIO(page_over(ruled_image()))) as pdf:
        assert pdf.pages[0].find_tables() == []


def test_a_grid_drawn_in_the_image_under_the_text_is_read_as_a_table() -> None:
    assert read(page_over(ruled_image())) == f"{MARKDOWN}\n\nReadings are in kilowatt hours."


@pytest.mark.parametrize("degrees", [0.5, 1.0])
def test_a_grid_scanned_a_little_askew_is_read_as_a_table(degrees: float) -> None:
    askew = ruled_image().rotate(degrees, resample=Image.Resampling.BICUBIC, fillcolor=255)
    assert read(page_over(askew)).startswith(MARKDOWN)


def test_a_grid_on_grey_paper_is_read_as_a_table() -> None:
    """Drawn is darker than the paper, whatever grey the scanner made of it."""
    grey = ruled_image(colour=120).point(lambda value: 225 if value == 255 else value)
    assert read(page_over(grey)).startswith(MARKDOWN)


def test_a_light_grid_is_a_grid_too() -> None:
    """A form's rules are often printed in a light colour (a bill's teal boxes): light grey is drawn."""
    assert read(page_over(ruled_image(colour=200))).startswith(MARKDOWN)


def test_two_boxes_set_side_by_side_a_few_points_apart_are_two_tables() -> None:
    """pdfplumber's default tolerance (3 points) joins the rules of two boxes 2.5 points apart into one grid."""
    data = page_over(ruled_image(boxes=((ORIGIN[0], 1, 2), (ORIGIN[0] + CELL[0] + 2.5, 1, 2))))
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        page = pdf.pages[0]
        rules = image_rules(page, data)
        assert (
            len(
                page.find_tables(
                    {"explicit_vertical_lines": rules.vertical, "explicit_horizontal_lines": rules.horizontal}
                )
            )
            == 1
        )
        assert len(page.find_tables(rules.table_settings())) == 2


def photo_like() -> Image.Image:
    """A page-size image with no rules: a grey gradient, a dark disc and speckles."""
    width, height = int(PAGE[0] * SCALE), int(PAGE[1] * SCALE)
    image = Image.linear_gradient("L").resize((width, height))
    draw = ImageDraw.Draw(image)
    draw.ellipse([(200, 150), (700, 650)], fill=30)
    noise = random.Random(44)
    for _ in range(4000):
        x, y = noise.randrange(width), noise.randrange(height)
        draw.point((x, y), fill=noise.randrange(256))
    return image


def test_a_page_whose_image_draws_no_rules_reads_as_it_would_without_the_image() -> None:
    with_image = read(page_over(photo_like()))
    blank = read(page_over(Image.new("L", photo_like().size, 255)))
    assert with_image == blank
    assert "|" not in with_image


def test_a_page_without_a_large_image_is_not_rendered(monkeypatch) -> None:
    """Only a page drawn on an image pays for the render: any other page's tables are what pdfplumber finds."""
    import core.loaders.pdf_image_rules as rules

    def no_render(*args, **kwargs):
        raise AssertionError("rendered")

    monkeypatch.setattr(rules, "render_page", no_render)
    pdf = FPDF(unit="pt", format=PAGE)
    pdf.add_page()
    pdf.image(ruled_image().resize((120, 80)), x=10, y=10, w=120, h=80)  # a quarter of the page
    pdf.set_font("Helvetica", size=10)
    pdf.text(30, 170, "Readings are in kilowatt hours.")
    assert read(bytes(pdf.output())).endswith("Readings are in kilowatt hours.")


def test_a_poster_sized_page_is_rendered_at_most_max_pixels(monkeypatch) -> None:
    """A hostile page size costs no more than an A4 page: the render is capped, not the page's size at 150 dpi."""
    import core.loaders.pdf_image_rules as rules

    sizes = []

    def recording(*args, **kwargs):
        image = render_page(*args, **kwargs)
        sizes.append(image.size)
        return image

    monkeypatch.setattr(rules, "render_page", recording)
    pdf = FPDF(unit="pt", format=(14_000, 14_000))  # 378 million pixels at 100 dpi
    pdf.add_page()
    pdf.image(ruled_image(), x=0, y=0, w=14_000, h=14_000)
    pdf.set_font("Helvetica", size=400)
    pdf.text(1_000, 13_000, "Readings are in kilowatt hours.")
    read(bytes(pdf.output()))
    ((width, height),) = sizes
    assert (width - 1) * (height - 1) <= rules.MAX_PIXELS  # each side rounded up to a whole pixel
