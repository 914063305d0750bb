"""PPTX: a picture's alt text, a chart's data and the speaker notes are read, as markitdown and screen readers give
them.

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
from pptx.opc.package import Part
from pptx.opc.packuri import PackURI
from pptx.oxml import parse_xml
from pptx.util import Inches
from test_loaders import check_spans
from test_loaders_office import OFFICE_REL

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
        frame.chart.value_axis.has_title = True
        frame.chart.value_axis.axis_title.text_frame.text = "Share of questions"
    out = BytesIO()
    presentation.save(out)
    return out.getvalue()


def test_a_pictures_description_is_a_paragraph_of_the_slide():
    (document,) = load_bytes(deck(alt="Bar chart: hit rate peaks at 256 tokens", title=None, chart=False), "d.pptx")
    check_spans(document)
    assert "Bar chart: hit rate peaks at 256 tokens" in document.text
    (element,) = [e for e in document.elements if e.attrs.get("alt_text")]
    assert document.text[element.start_char : element.end_char] == "Bar chart: hit rate peaks at 256 tokens"


def test_a_picture_with_a_title_only_gives_its_title():
    (titled,) = load_bytes(deck(alt="", title="Chunking pipeline diagram", chart=False), "d.pptx")
    assert "Chunking pipeline diagram" in titled.text


def test_a_description_that_is_a_file_name_is_read_and_marked_as_one():
    # PowerPoint writes the inserted file's name as the description; markitdown reads it, and so do we.
    (document,) = load_bytes(deck(alt="monty-truth.png", title=None, chart=False), "d.pptx")
    check_spans(document)
    assert document.text == "Retrieval quality by chunk size\n\nmonty-truth.png"
    (element,) = [e for e in document.elements if e.attrs.get("alt_text")]
    assert element.attrs == {"alt_text": True, "file_name": True}
    (described,) = load_bytes(deck(alt="Bar chart of hit rates", title=None, chart=False), "d.pptx")
    assert [e.attrs for e in described.elements if e.attrs.get("alt_text")] == [{"alt_text": True}]


def test_a_charts_title_and_cached_data_become_a_table():
    (document,) = load_bytes(deck(alt=None, title=None, chart=True), "d.pptx")
    check_spans(document)
    text = document.text
    assert "Hit rate and MRR at top 5" in text
    (axis,) = [e for e in document.elements if "axis_title" in e.attrs]
    assert (text[axis.start_char : axis.end_char], axis.attrs["axis_title"]) == ("Share of questions", "value")
    (table,) = [e for e in document.elements if e.kind == "table"]
    rows = [line for line in text[table.start_char : table.end_char].splitlines() if "---" not in line]
    assert rows == [
        "|  | Hit rate | MRR |",
        "| 128 tokens | 0.71 | 0.52 |",
        "| 256 tokens | 0.83 | 0.64 |",
        "| 512 tokens | 0.79 | 0.6 |",
    ]


def test_a_value_the_chart_leaves_out_keeps_the_next_values_in_their_rows():
    # An empty cell has no point in the chart's cache: 0.6 belongs to 512 tokens, not to 256.
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[6])  # blank
    data = CategoryChartData()
    data.categories = ["128 tokens", "256 tokens", "512 tokens"]
    data.add_series("Hit rate", (0.71, 0.83, 0.79))
    data.add_series("MRR", (0.52, None, 0.6))
    slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(5), Inches(4), data)
    out = BytesIO()
    presentation.save(out)
    (document,) = load_bytes(out.getvalue(), "d.pptx")
    check_spans(document)
    assert document.text.splitlines()[2:] == [
        "| 128 tokens | 0.71 | 0.52 |",
        "| 256 tokens | 0.83 |  |",
        "| 512 tokens | 0.79 | 0.6 |",
    ]


def test_speaker_notes_follow_each_slides_content_unless_switched_off():
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])  # title only
    slide.shapes.title.text = "Why overlap"
    slide.notes_slide.notes_text_frame.text = "Say that overlap repeats the sentence a cut would split."
    out = BytesIO()
    presentation.save(out)
    (document,) = load_bytes(out.getvalue(), "d.pptx")
    check_spans(document)
    assert document.text == "Why overlap\n\nSay that overlap repeats the sentence a cut would split."
    (note,) = [e for e in document.elements if e.attrs.get("notes")]
    assert (document.text[note.start_char : note.end_char], note.page) == (
        "Say that overlap repeats the sentence a cut would split.",
        1,
    )
    (without,) = load_bytes(out.getvalue(), "d.pptx", include_notes=False)
    assert without.text == "Why overlap"


def test_multi_level_categories_give_each_row_its_group_where_the_group_starts():
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[6])  # blank
    data = CategoryChartData()
    for country, cities in (("UK", ("London", "Glasgow")), ("US", ("Boston",))):
        group = data.add_category(country)
        for city in cities:
            group.add_sub_category(city)
    data.add_series("Readers", (12, 7, 30))
    slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(5), Inches(4), data)
    out = BytesIO()
    presentation.save(out)
    (document,) = load_bytes(out.getvalue(), "d.pptx")
    check_spans(document)
    assert document.text.splitlines()[2:] == ["| UK / London | 12 |", "| Glasgow | 7 |", "| US / Boston | 30 |"]


DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"


def smartart_deck() -> bytes:
    """A slide with a SmartArt graphic: "Plan" (with "Design" below it) then "Build", stored out of order, with the
    connection and presentation points PowerPoint keeps beside them."""

    def point(model_id: str, text: str | None, kind: str = "") -> str:
        body = f"<dgm:t><a:bodyPr/><a:p><a:r><a:t>{text}</a:t></a:r></a:p></dgm:t>" if text else ""
        return f'<dgm:pt modelId="{model_id}"{f" type={kind!r}" if kind else ""}>{body}</dgm:pt>'

    data = (
        f'<dgm:dataModel xmlns:dgm="{DGM}" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dgm:ptLst>'
        + point("0", None, "doc") + point("3", "Build") + point("2", "Design") + point("1", "Plan")
        + point("t1", None, "parTrans") + point("p1", "ignored layout text", "pres")
        + '</dgm:ptLst><dgm:cxnLst><dgm:cxn modelId="c3" srcId="0" destId="3" srcOrd="1"/>'
        '<dgm:cxn modelId="c1" srcId="0" destId="1" srcOrd="0"/><dgm:cxn modelId="c2" srcId="1" destId="2" srcOrd="0"/>'
        '<dgm:cxn modelId="c4" type="presOf" srcId="1" destId="p1"/></dgm:cxnLst></dgm:dataModel>'
    )  # fmt: skip
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    slide.shapes.title.text = "Our process"
    part = Part(
        PackURI("/ppt/diagrams/data1.xml"),
        "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml",
        presentation.part.package,
        data.encode(),
    )
    rel_id = slide.part.relate_to(part, f"{OFFICE_REL}/diagramData")
    frame = (
        f'<p:graphicFrame xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        f'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="{OFFICE_REL}">'
        '<p:nvGraphicFramePr><p:cNvPr id="9" name="Diagram 1"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr>'
        '<p:xfrm/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/diagram">'
        f'<dgm:relIds xmlns:dgm="{DGM}" r:dm="{rel_id}" r:lo="" r:qs="" r:cs=""/></a:graphicData></a:graphic>'
        "</p:graphicFrame>"
    )
    slide.shapes._spTree.append(parse_xml(frame))
    out = BytesIO()
    presentation.save(out)
    return out.getvalue()


def test_smartart_text_is_read_in_its_text_panes_order_and_marked():
    # markitdown (python-pptx) reads no SmartArt; the words are on the slide, so they are read here.
    (document,) = load_bytes(smartart_deck(), "process.pptx")
    check_spans(document)
    assert document.text == "Our process\n\nPlan\n\nDesign\n\nBuild"
    assert [e.attrs for e in document.elements[1:]] == [{"smartart": True}] * 3
