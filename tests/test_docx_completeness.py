"""DOCX read completely: text boxes, footnotes and endnotes, pictures' descriptions, equations, merged cells.

The files are written here: tables with merged cells through python-docx (as Word merges them), the parts
python-docx cannot make (text boxes, notes, equations, a picture's description) from literal XML.
"""

from __future__ import annotations

from io import BytesIO
from xml.etree.ElementTree import fromstring

import pytest
from docx import Document as WordDocument
from hypothesis import given, settings
from hypothesis import strategies as st
from test_loaders_office import DOCX_NS, OFFICE_REL, REL_NS, W, docx, laid_out, load_one, para

from core.errors import EmptyDocumentError, TooLargeError
from core.limits import Limits
from core.loaders import load_bytes
from core.loaders.omml import math_text

WPS = 'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'


def text_box(text: str) -> str:
    """A floating text box as Word 2010+ writes it: the DrawingML shape, and a VML copy of it as the fallback."""
    content = f"<w:txbxContent>{para(text)}</w:txbxContent>"
    return (
        "<w:r><mc:AlternateContent>"
        f'<mc:Choice Requires="wps"><w:drawing><wp:anchor><wp:docPr id="1" name="Text Box 1"/>'
        f"<a:graphic {A}><a:graphicData><wps:wsp {WPS}><wps:txbx>{content}</wps:txbx></wps:wsp>"
        "</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>"
        f"<mc:Fallback><w:pict><v:shape><v:textbox>{content}</v:textbox></v:shape></w:pict></mc:Fallback>"
        "</mc:AlternateContent></w:r>"
    )


A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'


def marked(document) -> list[tuple[str, str, dict]]:
    """(kind, exact span text, attributes) per element."""
    return [(e.kind, document.text[e.start_char : e.end_char], e.attrs) for e in document.elements]


def test_a_document_that_is_one_text_box_is_read_once_not_twice_from_its_fallback() -> None:
    document = load_one(docx(f"<w:p>{text_box('Everything is in the box.')}</w:p>"), "box.docx")
    assert laid_out(document) == [("paragraph", "Everything is in the box.", None, None)]
    assert document.elements[0].attrs == {"text_box": True}


def test_a_text_box_follows_its_paragraph_keeps_its_own_structure_and_a_cell_reads_its_box() -> None:
    box_with_table = (
        "<w:r><w:drawing><wp:inline><wp:docPr id='2' name='Text Box 2'/>"
        "<w:txbxContent>" + para("Sidebar") + "<w:tbl><w:tr><w:tc>" + para("k") + "</w:tc><w:tc>" + para("v")
        + "</w:tc></w:tr></w:tbl></w:txbxContent></wp:inline></w:drawing></w:r>"
    )  # fmt: skip
    body = (
        f"<w:p><w:r><w:t>Before the box.</w:t></w:r>{box_with_table}</w:p>"
        + para("After.")
        + f"<w:tbl><w:tr><w:tc><w:p><w:r><w:t>cell</w:t></w:r>{text_box('boxed in a cell')}</w:p></w:tc></w:tr></w:tbl>"
    )
    document = load_one(docx(body), "boxes.docx")
    assert document.text == (
        "Before the box.\n\nSidebar\n\n| k | v |\n| --- | --- |\n\nAfter.\n\n| cell boxed in a cell |\n| --- |"
    )
    assert [(e.kind, e.attrs.get("text_box")) for e in document.elements[:3]] == [
        ("paragraph", None),
        ("paragraph", True),
        ("table", True),
    ]


def test_a_text_box_in_a_header_is_marked_both_ways() -> None:
    header = f"<w:hdr {W} {DOCX_NS}><w:p>{text_box('Draft 3')}</w:p></w:hdr>"
    section = f'<w:sectPr><w:headerReference w:type="default" xmlns:r="{OFFICE_REL}" r:id="rH"/></w:sectPr>'
    rels = f'<Relationships {REL_NS}><Relationship Id="rH" Type="{OFFICE_REL}/header" Target="header1.xml"/>'
    data = docx(
        para("Body.") + section,
        extra={"word/header1.xml": header, "word/_rels/document.xml.rels": rels + "</Relationships>"},
    )
    document = load_one(data, "header.docx")
    assert document.text == "Draft 3\n\nBody."
    assert document.elements[0].attrs == {"page_header": "default", "text_box": True}


def test_alternate_content_around_paragraphs_tables_and_cells_is_read_once_from_its_choice() -> None:
    def alternate(choice: str, fallback: str) -> str:
        return (
            f"<mc:AlternateContent><mc:Choice Requires='w14'>{choice}</mc:Choice>"
            f"<mc:Fallback>{fallback}</mc:Fallback></mc:AlternateContent>"
        )

    cell = "<w:tc>" + alternate(para("in a cell"), para("in a cell, a copy")) + "</w:tc>"
    body = (
        alternate(para("A paragraph"), para("A paragraph, a copy"))
        + alternate(f"<w:tbl><w:tr>{cell}</w:tr></w:tbl>", "")
        + f"<w:tbl><w:tr>{cell}{alternate('<w:tc>' + para('a row') + '</w:tc>', '')}</w:tr></w:tbl>"
    )
    document = load_one(docx(body), "alternate.docx")
    assert document.text == "A paragraph\n\n| in a cell |\n| --- |\n\n| in a cell | a row |\n| --- | --- |"


def test_a_document_with_no_text_anywhere_still_has_no_text() -> None:
    with pytest.raises(EmptyDocumentError):
        load_bytes(docx("<w:p><w:r><w:drawing><w:txbxContent><w:p/></w:txbxContent></w:drawing></w:r></w:p>"), "e.docx")


# -- footnotes and endnotes ------------------------------------------------------------


def notes_part(kind: str, notes: dict[str, str]) -> str:
    """A footnotes (endnotes) part: Word's two separator notes, then the notes, each starting with its own mark."""
    tag = kind.removesuffix("s")
    separators = (
        f'<w:{tag} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{tag}>'
        f'<w:{tag} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:{tag}>'
    )
    stored = "".join(
        f'<w:{tag} w:id="{note_id}"><w:p><w:r><w:{tag}Ref/></w:r><w:r><w:t xml:space="preserve"> {text}</w:t></w:r>'
        f"</w:p></w:{tag}>"
        for note_id, text in notes.items()
    )
    return f"<w:{kind} {W}>{separators}{stored}</w:{kind}>"


def with_notes(body: str) -> bytes:
    rels = (
        f'<Relationships {REL_NS}><Relationship Id="rF" Type="{OFFICE_REL}/footnotes" Target="footnotes.xml"/>'
        f'<Relationship Id="rE" Type="{OFFICE_REL}/endnotes" Target="endnotes.xml"/></Relationships>'
    )
    return docx(
        body,
        extra={
            "word/_rels/document.xml.rels": rels,
            # Stored in another order than referenced: Word numbers them as the text references them.
            "word/footnotes.xml": notes_part("footnotes", {"3": "Second note.", "2": "First note.", "9": "Unused."}),
            "word/endnotes.xml": notes_part("endnotes", {"1": "The end note."}),
        },
    )


def ref(kind: str, note_id: str) -> str:
    return f'<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:{kind}Reference w:id="{note_id}"/></w:r>'


NOTED_BODY = (
    f"<w:p><w:r><w:t>A claim.</w:t></w:r>{ref('footnote', '2')}<w:r><w:t xml:space='preserve'> Another</w:t></w:r>"
    f"{ref('footnote', '3')}<w:r><w:t>.</w:t></w:r></w:p>"
    f"<w:p><w:r><w:t>Cited again</w:t></w:r>{ref('footnote', '2')}<w:r><w:t>, and at the end</w:t></w:r>"
    f"{ref('endnote', '1')}</w:p>"
)


def test_footnotes_and_endnotes_are_marked_where_referenced_and_read_after_the_body() -> None:
    document = load_one(with_notes(NOTED_BODY), "notes.docx")
    assert document.text == (
        "A claim.[^1] Another[^2].\n\n"
        "Cited again[^1], and at the end[^i]\n\n"
        "Footnotes\n\n"
        "[^1]: First note.\n\n"
        "[^2]: Second note.\n\n"
        "Endnotes\n\n"
        "[^i]: The end note."
    )
    assert marked(document)[2:] == [
        ("heading", "Footnotes", {"title": "Footnotes", "footnotes": True}),
        ("paragraph", "[^1]: First note.", {"footnote": "1"}),
        ("paragraph", "[^2]: Second note.", {"footnote": "2"}),
        ("heading", "Endnotes", {"title": "Endnotes", "endnotes": True}),
        ("paragraph", "[^i]: The end note.", {"endnote": "i"}),
    ]
    assert "title" not in document.metadata  # the notes' heading is not the document's title


def test_footnotes_can_be_left_out_marks_and_all() -> None:
    (document,) = load_bytes(with_notes(NOTED_BODY), "notes.docx", include_footnotes=False)
    assert document.text == "A claim. Another.\n\nCited again, and at the end"


# -- pictures and equations ------------------------------------------------------------


def picture(descr: str, title: str = "") -> str:
    return (
        f'<w:r><w:drawing><wp:inline><wp:docPr id="5" name="Picture 5" descr="{descr}" title="{title}"/>'
        "</wp:inline></w:drawing></w:r>"
    )


def test_a_pictures_description_is_a_marked_paragraph_after_its_own() -> None:
    body = (
        f"<w:p><w:r><w:t>Sales rose.</w:t></w:r>{picture('Bar chart of sales by quarter, Q4 highest')}</w:p>"
        f"<w:p>{picture('', title='Company logo')}</w:p>"
        f"<w:p>{picture('chart-2024.png')}</w:p>"
        f"<w:p>{picture('')}</w:p>"
    )
    document = load_one(docx(body), "pictures.docx")
    assert marked(document) == [
        ("paragraph", "Sales rose.", {}),
        ("paragraph", "Bar chart of sales by quarter, Q4 highest", {"alt_text": True}),
        ("paragraph", "Company logo", {"alt_text": True}),
        ("paragraph", "chart-2024.png", {"alt_text": True, "file_name": True}),
    ]


def omml(xml: str) -> str:
    return f'<m:oMath xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math">{xml}</m:oMath>'


def r(text: str) -> str:
    return f"<m:r><m:t>{text}</m:t></m:r>"


def frac(num: str, den: str) -> str:
    return f"<m:f><m:num>{num}</m:num><m:den>{den}</m:den></m:f>"


def sup(base: str, exponent: str) -> str:
    return f"<m:sSup><m:e>{base}</m:e><m:sup>{exponent}</m:sup></m:sSup>"


# The grating equation of the issue, which read "sin⁡θ=mλa=(1)550×10-6 mm2.5 mm".
GRATING = (
    "<m:func><m:fName>" + r("sin") + "</m:fName><m:e>" + r("θ") + "</m:e></m:func>" + r("=")
    + frac(r("mλ"), r("a")) + r("=")
    + frac("<m:d><m:e>" + r("1") + "</m:e></m:d>" + r("550×") + sup(r("10"), r("-6")) + r(" mm"), r("2.5 mm"))
)  # fmt: skip


@pytest.mark.parametrize(
    ("xml", "linear"),
    [
        (GRATING, "sin θ = mλ/a = ((1)550×10^(-6) mm)/(2.5 mm)"),
        (sup(r("x"), r("2")) + r("+") + f"<m:sSub><m:e>{r('y')}</m:e><m:sub>{r('i')}</m:sub></m:sSub>", "x^2+y_i"),
        (f"<m:rad><m:radPr><m:degHide m:val='1'/></m:radPr><m:deg/><m:e>{r('b²-4ac')}</m:e></m:rad>", "√(b²-4ac)"),
        (
            "<m:nary><m:naryPr><m:chr m:val='∑'/></m:naryPr><m:sub>"
            + r("i=1")
            + "</m:sub><m:sup>"
            + r("n")
            + "</m:sup><m:e>"
            + r("i")
            + "</m:e></m:nary>"
            + r("=")
            + frac(r("n(n+1)"), r("2")),
            "∑_(i = 1)^n i = (n(n+1))/2",
        ),  # fmt: skip
        (
            "<m:d><m:dPr><m:begChr m:val='['/><m:endChr m:val=']'/><m:sepChr m:val=','/></m:dPr>"
            "<m:e>" + r("a") + "</m:e><m:e>" + r("b") + "</m:e></m:d>",
            "[a,b]",
        ),
        (
            "<m:m><m:mr><m:e>"
            + r("1")
            + "</m:e><m:e>"
            + r("0")
            + "</m:e></m:mr><m:mr><m:e>"
            + r("0")
            + "</m:e><m:e>"
            + r("1")
            + "</m:e></m:mr></m:m>",
            "[1, 0; 0, 1]",
        ),  # fmt: skip
        ("<m:limLow><m:e>" + r("lim") + "</m:e><m:lim>" + r("n→∞") + "</m:lim></m:limLow>", "lim_(n → ∞)"),
    ],
)
def test_equations_read_as_linear_text(xml: str, linear: str) -> None:
    assert math_text(fromstring(omml(xml))) == linear


def test_an_equation_in_a_paragraph_stands_apart_from_the_words_around_it() -> None:
    body = f"<w:p><w:r><w:t>The grating equation</w:t></w:r>{omml(GRATING)}<w:r><w:t>holds.</w:t></w:r></w:p>"
    document = load_one(docx(body), "math.docx")
    assert document.text == "The grating equation sin θ = mλ/a = ((1)550×10^(-6) mm)/(2.5 mm) holds."
    display = f'<w:p><m:oMathPara xmlns:m="{M}">{omml(r("E=mc"))}{omml(r("F=ma"))}</m:oMathPara></w:p>'
    assert load_one(docx(display), "display.docx").text == "E = mc\nF = ma"


M = "http://schemas.openxmlformats.org/officeDocument/2006/math"


# -- merged cells -----------------------------------------------------------------------


def word_table(rows: list[list[str]], merges: list[tuple[tuple[int, int], tuple[int, int]]]) -> bytes:
    word = WordDocument()
    table = word.add_table(rows=len(rows), cols=len(rows[0]))
    for r_index, row in enumerate(rows):
        for c_index, value in enumerate(row):
            table.cell(r_index, c_index).text = value
    for first, last in merges:
        merged = table.cell(*first).merge(table.cell(*last))
        merged.text = rows[first[0]][first[1]]  # a merge joins the cells' paragraphs: keep the first value
    out = BytesIO()
    word.save(out)
    return out.getvalue()


def test_merged_cells_keep_every_value_under_its_header() -> None:
    rows = [
        ["Region", "Q1", "", "Total"],
        ["", "Jan", "Feb", ""],
        ["North", "10", "12", "22"],
        ["South", "7", "9", "16"],
    ]
    # "Q1" spans two columns; "Region" and "Total" span the two header rows.
    data = word_table(rows, [((0, 1), (0, 2)), ((0, 0), (1, 0)), ((0, 3), (1, 3))])
    document = load_one(data, "merged.docx")
    assert document.text == (
        "| Region | Q1 |  | Total |\n"
        "| --- | --- | --- | --- |\n"
        "|  | Jan | Feb |  |\n"
        "| North | 10 | 12 | 22 |\n"
        "| South | 7 | 9 | 16 |"
    )


def test_a_row_indented_on_the_grid_starts_at_its_column() -> None:
    grid = "<w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>"
    row = '<w:tr><w:trPr><w:gridBefore w:val="1"/></w:trPr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr>'
    body = f"<w:tbl>{grid}<w:tr><w:tc>{para('a')}</w:tc><w:tc>{para('b')}</w:tc><w:tc>{para('c')}</w:tc></w:tr>"
    body += row.format(para("y"), para("z")) + "</w:tbl>"
    assert load_one(docx(body), "indent.docx").text == "| a | b | c |\n| --- | --- | --- |\n|  | y | z |"


def test_a_span_past_the_grid_is_cut_at_the_grid_and_spans_count_against_the_cell_limit() -> None:
    grid = "<w:tblGrid><w:gridCol/><w:gridCol/></w:tblGrid>"
    huge = f'<w:tc><w:tcPr><w:gridSpan w:val="1000000000"/></w:tcPr>{para("wide")}</w:tc>'
    document = load_one(docx(f"<w:tbl>{grid}<w:tr>{huge}</w:tr><w:tr>{huge}</w:tr></w:tbl>"), "span.docx")
    assert document.text == "| wide |  |\n| --- | --- |\n| wide |  |"
    gridless = docx(f"<w:tbl><w:tr>{huge}</w:tr></w:tbl>")  # no grid: a span is cut at 64 columns
    with pytest.raises(TooLargeError, match="max_table_cells=10"):
        load_bytes(gridless, "gridless.docx", limits=Limits(max_table_cells=10))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=6).flatmap(
        lambda width: st.tuples(
            st.just(width),
            st.lists(st.lists(st.integers(min_value=1, max_value=width), min_size=1, max_size=width), min_size=1,
                     max_size=5),
        )
    )
)  # fmt: skip
def test_every_row_fills_the_grid_and_every_value_sits_at_its_first_grid_column(case) -> None:
    width, rows = case
    grid = "<w:tblGrid>" + "<w:gridCol/>" * width + "</w:tblGrid>"
    xml_rows, expected = [], []
    for r_index, spans in enumerate(rows):
        cells, line, column = [], [""] * width, 0
        for c_index, span in enumerate(spans):
            if column >= width:
                break
            value = f"v{r_index}x{c_index}"
            cells.append(f'<w:tc><w:tcPr><w:gridSpan w:val="{span}"/></w:tcPr>{para(value)}</w:tc>')
            line[column] = value
            column += span
        xml_rows.append("<w:tr>" + "".join(cells) + "</w:tr>")
        expected.append(line)
    document = load_one(docx(f"<w:tbl>{grid}{''.join(xml_rows)}</w:tbl>"), "grid.docx")
    # The table is as wide as its widest row (never wider than the grid): columns no row reaches are not shown.
    used = max(max(i for i, value in enumerate(line) if value) for line in expected) + 1
    used = max(used, max(min(sum(spans), width) for spans in rows))
    lines = document.text.split("\n")
    assert len(lines) == len(rows) + 1
    for line, values in zip([lines[0], *lines[2:]], expected, strict=True):
        assert line == "| " + " | ".join(values[:used]) + " |"
