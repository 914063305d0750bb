"""PPTX: a picture's alt text and a chart's data are read, as markitdown and screen readers give them.

The decks are written here with python-pptx (a dependency: markitdown's PPTX converter), so the test files
are our own.
"""

from __future__ import annotations

import struct
import zlib
from io import BytesIO

from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches
from test_loaders import check_spans

from core.loaders import load_bytes


def tiny_png() -> bytes:
    """A 1x1 white PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\xff\xff")) + chunk(
        b"IEND", b""
    )


def deck(*, alt: str | None, title: str | None, chart: bool) -> bytes:
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])  # title only
    slide.shapes.title.text = "Retrieval quality by chunk size"
    picture = slide.shapes.add_picture(BytesIO(tiny_png()), Inches(1), Inches(1.5), Inches(1), Inches(1))
    if alt is not None:
        picture._element.nvPicPr.cNvPr.set("descr", alt)
    if title is not None:
        picture._element.nvPicPr.cNvPr.set("title", title)
    if chart:
        data = CategoryChartData()
        data.categories = ["128 tokens", "256 tokens", "512 tokens"]
        data.add_series("Hit rate", (0.71, 0.83, 0.79))
        data.add_series("MRR", (0.52, 0.64, 0.6))
        frame = slide.shapes.add_chart(
            XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(3), Inches(1.5), Inches(5), Inches(4), data
        )
        frame.chart.has_title = True
        frame.chart.chart_title.text_frame.text = "Hit rate and MRR at top 5"
    out = BytesIO()
    presentation.save(out)
    return out.getvalue()


def test_a_pictures_description_is_a_paragraph_of_the_slide():
    (document,) = load_bytes(deck(alt="Bar chart: hit rate peaks at 256 tokens", title=None, chart=False), "d.pptx")
    check_spans(document)
    assert "Bar chart: hit rate peaks at 256 tokens" in document.text
    (element,) = [e for e in document.elements if e.attrs.get("alt_text")]
    assert document.text[element.start_char : element.end_char] == "Bar chart: hit rate peaks at 256 tokens"


def test_a_picture_with_a_title_only_gives_its_title_and_a_file_name_gives_nothing():
    (titled,) = load_bytes(deck(alt="", title="Chunking pipeline diagram", chart=False), "d.pptx")
    assert "Chunking pipeline diagram" in titled.text
    (bare,) = load_bytes(deck(alt=None, title=None, chart=False), "d.pptx")  # python-pptx writes "image.png"
    assert bare.text == "Retrieval quality by chunk size"


def test_a_charts_title_and_cached_data_become_a_table():
    (document,) = load_bytes(deck(alt=None, title=None, chart=True), "d.pptx")
    check_spans(document)
    text = document.text
    assert "Hit rate and MRR at top 5" in text
    (table,) = [e for e in document.elements if e.kind == "table"]
    rows = [line for line in text[table.start_char : table.end_char].splitlines() if "---" not in line]
    assert rows == [
        "|  | Hit rate | MRR |",
        "| 128 tokens | 0.71 | 0.52 |",
        "| 256 tokens | 0.83 | 0.64 |",
        "| 512 tokens | 0.79 | 0.6 |",
    ]
