"""Office and EPUB files that are small but unpack to millions of elements: refused after bounded work.

Each hostile file is written here with zipfile: a few KB that pass the zip-bomb
bounds (bytes and entries) and would cost minutes and gigabytes to walk. The
refusal names the file and the limit, and comes after at most the limit's worth
of work, measured in CPU time (``cpu_budget``), not wall-clock time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cpu_budget import cpu_budget
from hypothesis import given
from hypothesis import strategies as st
from test_loaders_office import DOCX_NS, OFFICE_REL, P_NS, REL_NS, W, docx, epub, pptx, zipped

from core.errors import CorruptDocumentError, TooLargeError
from core.limits import DEFAULT_LIMITS, MB, Limits
from core.loaders import load, load_bytes

SAMPLES = Path(__file__).resolve().parent.parent / "sample_docs"
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
CT = "application/vnd.openxmlformats-officedocument.spreadsheetml"


def xlsx_parts(shared_strings: str, sheets: int = 1) -> bytes:
    """A workbook written from literal XML: ``sheets`` entries all naming one worksheet, and the given strings."""
    sheet_list = "".join(f'<sheet name="S{i}" sheetId="{i + 1}" r:id="rId1"/>' for i in range(sheets))
    return zipped(
        {
            "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            f'<Override PartName="/xl/workbook.xml" ContentType="{CT}.sheet.main+xml"/>'
            f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{CT}.worksheet+xml"/>'
            f'<Override PartName="/xl/strings.xml" ContentType="{CT}.sharedStrings+xml"/></Types>',
            "_rels/.rels": f'<Relationships {REL_NS}><Relationship Id="rId1" Type="{OFFICE_REL}/officeDocument" '
            'Target="xl/workbook.xml"/></Relationships>',
            "xl/workbook.xml": f'<workbook xmlns="{S}" xmlns:r="{OFFICE_REL}"><sheets>{sheet_list}</sheets></workbook>',
            "xl/_rels/workbook.xml.rels": f'<Relationships {REL_NS}><Relationship Id="rId1" '
            f'Type="{OFFICE_REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" '
            f'Type="{OFFICE_REL}/sharedStrings" Target="strings.xml"/></Relationships>',
            "xl/worksheets/sheet1.xml": f'<worksheet xmlns="{S}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c>'
            '<c r="B1" t="s"><v>1</v></c></row></sheetData></worksheet>',
            # Named by its content type only, as openpyxl finds it: not at the usual xl/sharedStrings.xml.
            "xl/strings.xml": f'<sst xmlns="{S}">{shared_strings}</sst>',
        }
    )


def refusal(data: bytes, file_name: str, limits: Limits = DEFAULT_LIMITS, cpu_seconds: float = 5.0) -> str:
    with cpu_budget(cpu_seconds), pytest.raises(TooLargeError) as caught:
        load_bytes(data, file_name, limits=limits)
    return str(caught.value)


def test_two_million_empty_paragraphs_are_refused_after_the_paragraph_limit() -> None:
    data = docx("<w:p/>" * 2_000_000)
    assert len(data) < 30_000  # 12 MB of XML in a few KB: the zip-bomb bounds let it through
    assert refusal(data, "report.docx") == (
        "report.docx: has more than 200,000 paragraphs (limit: max_paragraphs=200,000); refused before reading the rest"
    )


@given(paragraphs=st.integers(0, 60), rows=st.integers(0, 8), cells=st.integers(1, 8), limit=st.integers(1, 60))
def test_a_count_at_its_limit_loads_and_one_more_is_refused(paragraphs: int, rows: int, cells: int, limit: int) -> None:
    # Paragraphs inside table cells are paragraphs too: every w:p counts, wherever it is.
    table = "<w:tbl>" + ("<w:tr>" + "<w:tc><w:p/></w:tc>" * cells + "</w:tr>") * rows + "</w:tbl>" if rows else ""
    data = docx("<w:p><w:r><w:t>text</w:t></w:r></w:p>" + "<w:p/>" * paragraphs + table)
    total = 1 + paragraphs + rows * cells
    limits = Limits(max_paragraphs=limit, max_table_cells=limit)
    if total <= limit:
        assert load_bytes(data, "counted.docx", limits=limits)[0].text.startswith("text")
    else:
        with pytest.raises(TooLargeError, match=r"has more than \d+ (paragraphs|table cells)"):
            load_bytes(data, "counted.docx", limits=limits)


@pytest.mark.parametrize(
    ("body", "limits", "expected"),
    [
        ("<w:p>" + "<w:r/>" * 5_000 + "</w:p>", Limits(max_runs=1_000), "1,000 runs (limit: max_runs=1,000)"),
        (
            "<w:tbl>" + "<w:tr/>" * 5_000 + "</w:tbl>",
            Limits(max_table_rows=1_000),
            "1,000 table rows (limit: max_table_rows=1,000)",
        ),
        (
            "<w:tbl><w:tr>" + "<w:tc/>" * 5_000 + "</w:tr></w:tbl>",
            Limits(max_table_cells=1_000),
            "1,000 table cells (limit: max_table_cells=1,000)",
        ),
        (
            "<w:p>" + "<w:bookmarkStart/>" * 5_000 + "</w:p>",
            Limits(max_xml_elements=1_000),
            "1,000 XML elements (limit: max_xml_elements=1,000)",
        ),
    ],
)
def test_runs_rows_cells_and_elements_each_have_their_limit(body: str, limits: Limits, expected: str) -> None:
    assert refusal(docx(body), "table.docx", limits) == (
        f"table.docx: has more than {expected}; refused before reading the rest"
    )


def test_elements_add_up_over_the_parts_of_a_file() -> None:
    # Two styles parts of 600 elements each are fine alone and over the limit together.
    styles = "".join(f'<w:style w:styleId="s{i}"/>' for i in range(600))
    data = docx("<w:p><w:r><w:t>text</w:t></w:r></w:p>", styles=styles)
    assert load_bytes(data, "ok.docx", limits=Limits(max_xml_elements=1_000))[0].text == "text"
    with pytest.raises(TooLargeError, match=r"more than 600 XML elements"):
        load_bytes(data, "twice.docx", limits=Limits(max_xml_elements=600))


def test_a_part_that_unpacks_past_the_part_limit_is_refused_before_it_is_unpacked() -> None:
    data = docx("<w:p/>" * 400_000)  # 2.4 MB of XML
    assert refusal(data, "big.docx", Limits(max_xml_part_bytes=2 * MB), cpu_seconds=0.5) == (
        "big.docx: has a part word/document.xml that unpacks to 2.4 MB, more than the limit of 2.0 MB "
        "(max_xml_part_bytes)"
    )


def test_part_sizes_that_round_to_the_same_megabytes_are_shown_in_bytes() -> None:
    empty = len(f"<w:document {W} {DOCX_NS}><w:body></w:body></w:document>")
    body = " " * (2 * MB + 1 - empty)  # word/document.xml is 2,000,001 bytes
    message = refusal(docx(body), "edge.docx", Limits(max_xml_part_bytes=2 * MB), cpu_seconds=0.5)
    assert message == (
        "edge.docx: has a part word/document.xml that unpacks to 2,000,001 bytes, more than the limit of "
        "2,000,000 bytes (max_xml_part_bytes)"
    )


def test_xml_nested_past_any_real_document_is_refused_as_damaged() -> None:
    body = "<w:sdt><w:sdtContent>" * 200 + "<w:p/>" + "</w:sdtContent></w:sdt>" * 200
    with pytest.raises(CorruptDocumentError, match=r"^deep\.docx: has XML nested deeper than 256 levels in word/"):
        load_bytes(docx(body), "deep.docx")


def test_millions_of_shared_strings_are_refused_before_openpyxl_reads_them() -> None:
    data = xlsx_parts("<si><t>head</t></si><si><t>two</t></si>" + "<si><t/></si>" * 3_000_000)
    assert len(data) < 200_000
    assert refusal(data, "strings.xlsx") == (
        "strings.xlsx: has more than 250,000 shared strings (limit: max_shared_strings=250,000); "
        "refused before reading the rest"
    )


def test_a_sheet_of_a_million_stored_cells_is_refused_before_openpyxl_reads_a_cell() -> None:
    # openpyxl reads some 50,000 cells a second: these would take about 20 s.
    data = xlsx_parts("<si><t>head</t></si><si><t>two</t></si>")
    parts = _unzipped(data)
    rows = "".join(f'<row r="{i}"><c r="A{i}"><v>{i}</v></c><c r="B{i}"><v>1</v></c></row>' for i in range(1, 500_001))
    parts["xl/worksheets/sheet1.xml"] = f'<worksheet xmlns="{S}"><sheetData>{rows}</sheetData></worksheet>'.encode()
    assert refusal(zipped(parts), "cells.xlsx", cpu_seconds=3.0) == (
        "cells.xlsx: has more than 300,000 cells (limit: max_cells=300,000); refused before reading the rest"
    )


def test_a_workbook_listing_one_sheet_thousands_of_times_is_refused_before_openpyxl_opens_it() -> None:
    data = xlsx_parts("<si><t>head</t></si><si><t>two</t></si>", sheets=6_000)
    assert refusal(data, "sheets.xlsx", cpu_seconds=2.0) == (
        "sheets.xlsx: has more than 5,000 sheets (limit: max_sections=5,000); refused before reading the rest"
    )


def test_a_workbook_within_the_limits_reads_its_shared_strings() -> None:
    (document,) = load_bytes(xlsx_parts("<si><t>head</t></si><si><t>two</t></si>"), "small.xlsx")
    assert document.text == "S0\n\n| head | two |\n| --- | --- |"


def test_a_deck_listing_one_slide_thousands_of_times_is_refused() -> None:
    data = pptx(["<p:sp><p:txBody><a:p><a:r><a:t>slide</a:t></a:r></a:p></p:txBody></p:sp>"])
    deck = _unzipped(data)
    deck["ppt/presentation.xml"] = (
        f"<p:presentation {P_NS}><p:sldIdLst>"
        + '<p:sldId id="256" r:id="rId1"/>' * 6_000
        + "</p:sldIdLst></p:presentation>"
    )
    assert refusal(zipped(deck), "deck.pptx", cpu_seconds=2.0) == (
        "deck.pptx: has more than 5,000 slides (limit: max_sections=5,000); refused before reading the rest"
    )


def test_a_spine_of_many_chapters_is_refused_and_a_repeated_chapter_read_once() -> None:
    book = _unzipped(epub({"one.xhtml": "<p>One.</p>"}))
    opf = book["OEBPS/book.opf"].decode()
    book["OEBPS/book.opf"] = opf.replace('<itemref idref="c0"/>', '<itemref idref="c0"/>' * 3).encode()
    assert load_bytes(zipped(book), "book.epub")[0].text == "One."
    book["OEBPS/book.opf"] = opf.replace('<itemref idref="c0"/>', '<itemref idref="c0"/>' * 6_000).encode()
    assert refusal(zipped(book), "book.epub", cpu_seconds=2.0) == (
        "book.epub: has more than 5,000 chapters (limit: max_sections=5,000); refused before reading the rest"
    )


@pytest.mark.parametrize("name", ["parsing_office_files.docx", "chunking_in_ten_slides.pptx"])
def test_the_samples_read_the_same_under_the_default_limits_as_with_none(name: str) -> None:
    unbounded = Limits(**{field: 10**12 for field in DEFAULT_LIMITS.to_params()})
    (bounded,) = load(SAMPLES / name)
    (free,) = load(SAMPLES / name, limits=unbounded)
    assert (bounded.text, bounded.elements, bounded.pages, bounded.metadata) == (
        free.text,
        free.elements,
        free.pages,
        free.metadata,
    )
    assert len(bounded.text) > 1_000


def _unzipped(data: bytes) -> dict[str, bytes]:
    import zipfile
    from io import BytesIO

    archive = zipfile.ZipFile(BytesIO(data))
    return {name: archive.read(name) for name in archive.namelist()}


def test_chapter_markup_counts_against_the_element_limit_before_the_html_walk() -> None:
    # 2.1 million empty paragraphs: about 20 s of HTML walking, refused after counting them.
    data = epub({"one.xhtml": "<p>One.</p>", "two.xhtml": "<p></p>" * 2_100_000})
    assert refusal(data, "pages.epub", cpu_seconds=2.0) == (
        "pages.epub: has more than 2,000,000 XML elements (limit: max_xml_elements=2,000,000); "
        "refused before reading the rest"
    )
