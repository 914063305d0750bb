"""DOCX, PPTX, XLSX, EPUB and JSON/JSONL: literal files in, the exact text, elements, spans and pages out.

The small files are written here from literal XML (XLSX through openpyxl), so each
test shows the structure it reads; the shipped samples are checked too.
"""

from __future__ import annotations

import json
import zipfile
from io import BytesIO
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_loaders import check_spans

from core.errors import CorruptDocumentError, EmptyDocumentError, EncryptedDocumentError, LoadError, TooLargeError
from core.loaders import LOADERS, load, load_bytes
from core.schema import Document, MetadataMode, Page

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
P_NS = (
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
    'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
)
# The other namespaces a Word body uses: alternate content, drawings, equations, VML.
DOCX_NS = (
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math" '
    'xmlns:v="urn:schemas-microsoft-com:vml"'
)
REL_NS = 'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"'
OFFICE_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def zipped(parts: dict[str, str | bytes]) -> bytes:
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in parts.items():
            archive.writestr(name, content)
    return out.getvalue()


def laid_out(document: Document) -> list[tuple[str, str, int | None, int | None]]:
    """(kind, exact span text, level, page) per element: what a test compares literally."""
    return [(e.kind, document.text[e.start_char : e.end_char], e.level, e.page) for e in document.elements]


def load_one(data: bytes, file_name: str, **options) -> Document:
    (document,) = load_bytes(data, file_name, **options)
    check_spans(document)
    return document


# -- DOCX ---------------------------------------------------------------------------


def docx(body: str, styles: str | None = None, extra: dict[str, str | bytes] | None = None) -> bytes:
    parts: dict[str, str | bytes] = {
        "[Content_Types].xml": "<Types/>",
        "_rels/.rels": f'<Relationships {REL_NS}><Relationship Id="rId1" '
        f'Type="{OFFICE_REL}/officeDocument" Target="word/document.xml"/></Relationships>',
        "word/document.xml": f"<w:document {W} {DOCX_NS}><w:body>{body}</w:body></w:document>",
    }
    if styles is not None:
        parts["word/styles.xml"] = f"<w:styles {W}>{styles}</w:styles>"
    parts.update(extra or {})
    return zipped(parts)


def para(text: str, style: str | None = None, numbered: bool = False) -> str:
    ppr = ""
    if style or numbered:
        ppr = "<w:pPr>"
        ppr += f'<w:pStyle w:val="{style}"/>' if style else ""
        ppr += '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>' if numbered else ""
        ppr += "</w:pPr>"
    return f'<w:p>{ppr}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def cell(text: str) -> str:
    return f"<w:tc>{para(text)}</w:tc>"


HEADING_STYLES = (
    '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/>'
    '<w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>'
    '<w:style w:type="paragraph" w:styleId="Kop2"><w:name w:val="heading 2"/></w:style>'
    '<w:style w:type="paragraph" w:styleId="Bullets"><w:name w:val="My bullets"/>'
    '<w:pPr><w:numPr><w:numId w:val="3"/></w:numPr></w:pPr></w:style>'
)


def test_docx_headings_paragraphs_lists_and_a_table_with_exact_spans() -> None:
    body = (
        para("Chunking Office files", "Heading1")
        + para("Parsers decide what the text is.")
        + para("Keep structure", "Kop2")  # a localized style id: its name says "heading 2"
        + para("Headings with levels", numbered=True)
        + para("Rows with headers", "Bullets")  # numbered through its style
        + "<w:tbl>"
        + "<w:tr>" + cell("Format") + cell("Pages") + "</w:tr>"
        + "<w:tr>" + cell("PPTX") + cell("slides") + "</w:tr>"
        + "<w:tr>" + cell("a | b") + cell("") + "</w:tr>"
        + "</w:tbl>"
        + para("The end.")
    )  # fmt: skip
    document = load_one(docx(body, HEADING_STYLES), "notes.docx")
    assert document.text == (
        "Chunking Office files\n\n"
        "Parsers decide what the text is.\n\n"
        "Keep structure\n\n"
        "Headings with levels\n"
        "Rows with headers\n\n"
        "| Format | Pages |\n"
        "| --- | --- |\n"
        "| PPTX | slides |\n"
        "| a \\| b |  |\n\n"
        "The end."
    )
    table_text = "| Format | Pages |\n| --- | --- |\n| PPTX | slides |\n| a \\| b |  |"
    assert laid_out(document) == [
        ("heading", "Chunking Office files", 1, None),
        ("paragraph", "Parsers decide what the text is.", None, None),
        ("heading", "Keep structure", 2, None),
        ("list_item", "Headings with levels", None, None),
        ("list_item", "Rows with headers", None, None),
        ("table", table_text, None, None),
        ("table_row", "| PPTX | slides |", None, None),
        ("table_row", "| a \\| b |  |", None, None),
        ("paragraph", "The end.", None, None),
    ]
    table = next(e for e in document.elements if e.kind == "table")
    assert table.attrs["header"] == "| Format | Pages |"
    assert document.text[table.start_char : table.attrs["header_end"]] == "| Format | Pages |\n| --- | --- |"
    assert document.metadata == {"file_name": "notes.docx", "file_type": "docx", "title": "Chunking Office files"}
    assert document.pages == []


def test_docx_reads_what_is_shown_not_deleted_or_moved_away_text_field_codes_or_fallback_copies() -> None:
    # A text box is read after its paragraph, marked; of alternate content only the choice, not its fallback copy.
    body = (
        "<w:p><w:r><w:t>Kept</w:t></w:r>"
        "<w:del><w:r><w:delText>deleted</w:delText></w:r></w:del>"
        # Moved text is stored twice, where it was (w:moveFrom, in w:t like any run) and where it went.
        "<w:moveFrom><w:r><w:t>moved</w:t></w:r></w:moveFrom>"
        '<w:ins><w:r><w:t xml:space="preserve"> inserted</w:t></w:r></w:ins>'
        '<w:r><w:instrText> HYPERLINK "http://example.invalid" </w:instrText></w:r>'
        '<w:hyperlink><w:r><w:t xml:space="preserve"> linked</w:t></w:r></w:hyperlink>'
        "<w:r><w:br/><w:t>second line</w:t><w:tab/><w:t>tabbed</w:t></w:r>"
        '<w:r><w:ptab w:relativeTo="margin" w:alignment="right" w:leader="none"/><w:t>at the margin</w:t></w:r>'
        "<w:r><mc:AlternateContent><mc:Choice><w:drawing><w:txbxContent><w:p><w:r><w:t>box</w:t></w:r></w:p>"
        "</w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>box copy</w:t>"
        "</w:r></w:p></w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
        "<w:moveTo><w:r><w:t xml:space='preserve'> moved</w:t></w:r></w:moveTo>"
        "</w:p>"
        "<w:sdt><w:sdtContent><w:p><w:r><w:t>In a content control</w:t></w:r></w:p></w:sdtContent></w:sdt>"
        "<w:tbl><w:tr><w:trPr/>" + cell("a") + cell("b") + "</w:tr>"
        "<w:tr><w:trPr><w:tblHeader/></w:trPr>" + cell("Head 1") + cell("Head 2") + "</w:tr></w:tbl>"
    )
    document = load_one(docx(body), "shown.docx")
    assert document.text == (
        "Kept inserted linked\nsecond line tabbed at the margin moved\n\n"
        "box\n\n"
        "In a content control\n\n"
        "| Head 1 | Head 2 |\n| --- | --- |\n| a | b |"
    )
    assert [e.kind for e in document.elements] == ["paragraph", "paragraph", "paragraph", "table", "table_row"]
    assert document.elements[1].attrs == {"text_box": True}


def test_docx_style_ids_without_styles_part_and_title_from_core_properties() -> None:
    core = (
        '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title> Parser notes </dc:title>'
        "<dc:creator>ChunkScope</dc:creator></cp:coreProperties>"
    )
    data = docx(para("Intro", "Heading2") + para("Body text."), extra={"docProps/core.xml": core})
    document = load_one(data, "plain.docx")
    assert laid_out(document) == [("heading", "Intro", 2, None), ("paragraph", "Body text.", None, None)]
    assert document.metadata["title"] == "Parser notes" and document.metadata["author"] == "ChunkScope"


def test_docx_with_macros_loads_its_text_and_says_the_macros_were_ignored() -> None:
    # A .docm-like file: the VBA project sits beside the text; nothing reads it, the note says so.
    macro = b'\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1Attribute VB_Name = "AutoOpen"\nSub AutoOpen(): Shell "calc": End Sub'
    data = docx(
        para("Quarterly notes"),
        extra={"word/vbaProject.bin": macro, "word/embeddings/oleObject1.bin": b"\x00" * 64},
    )
    document = load_one(data, "macro.docx")
    assert document.text == "Quarterly notes"
    assert document.metadata["load_warning"] == (
        "ignored its macros and embedded objects (nothing in the file is run or followed)"
    )
    # A note about loading, not content: kept out of what the models read.
    assert "load_warning" in document.excluded_llm_metadata_keys


# -- zip limits and damage, for every zip format ---------------------------------------

ZIP_LOADERS = ["docx", "pptx", "xlsx", "epub"]


def zip_bomb() -> bytes:
    """A few kilobytes that unpack to 300 MB of zeros (one entry; zlib packs zeros about 1000:1)."""
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("word/document.xml", "w", force_zip64=True) as entry:
            block = b"\x00" * 1_000_000
            for _ in range(300):
                entry.write(block)
    return out.getvalue()


@pytest.mark.parametrize("name", ZIP_LOADERS)
def test_a_zip_bomb_is_refused_before_unpacking_naming_the_file_and_limit(name: str) -> None:
    data = zip_bomb()
    assert len(data) < 1_000_000
    file_name = f"bomb.{name}"
    with pytest.raises(TooLargeError) as caught:
        load_bytes(data, file_name)
    assert str(caught.value) == (
        f"{file_name}: unpacks to 300.0 MB, more than max_unzipped_mb=200 (refused before unpacking: a zip bomb?)"
    )


@pytest.mark.parametrize("name", ZIP_LOADERS)
def test_too_many_entries_are_refused(name: str) -> None:
    data = zipped({f"part{i}.xml": "<x/>" for i in range(30)})
    with pytest.raises(
        TooLargeError, match=r"^many\.\w+: is a zip archive of 30 entries, more than max_zip_entries=20$"
    ):
        load_bytes(data, f"many.{name}", max_zip_entries=20)


def test_an_entry_longer_than_its_directory_record_says_is_damage_not_unbounded() -> None:
    data = bytearray(docx(para("x" * 5000)))
    # Shrink the declared size of word/document.xml in the central directory: zipfile stops there and the CRC fails.
    directory = data.rindex(b"PK\x01\x02", 0, data.index(b"PK\x05\x06"))
    data[directory + 24 : directory + 28] = (100).to_bytes(4, "little")
    with pytest.raises(CorruptDocumentError, match=r"^short\.docx: has a damaged part word/document\.xml"):
        load_bytes(bytes(data), "short.docx")


@pytest.mark.parametrize(
    "data,error,message",
    [
        (b"", EmptyDocumentError, "is empty"),
        (b"plain text, not a zip", CorruptDocumentError, "is not a .docx file (it is not a readable zip archive)"),
        (
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100,
            EncryptedDocumentError,
            "is a password-protected Office file or an old binary Office file, not a .docx file; "
            "save it unprotected in the current format",
        ),
        (zipped({"readme.txt": "hi"}), CorruptDocumentError, "is not a .docx file (it has no word/document.xml)"),
        (
            zipped({"word/document.xml": "<w:document"}),
            CorruptDocumentError,
            "has malformed XML in word/document.xml (unclosed token: line 1, column 0)",
        ),
        (
            zipped(
                {
                    "word/document.xml": '<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
                    f"<w:document {W}><w:body><w:p><w:r><w:t>&b;</w:t></w:r></w:p></w:body></w:document>"
                }
            ),
            CorruptDocumentError,
            "has XML entity declarations in word/document.xml, which are refused",
        ),
        (docx(para("   ")), EmptyDocumentError, "has no text"),
    ],
    ids=["empty", "not-zip", "ole", "no-main-part", "bad-xml", "entities", "blank"],
)
def test_docx_failures_are_one_line_reasons(data: bytes, error: type[LoadError], message: str) -> None:
    with pytest.raises(error) as caught:
        load_bytes(data, "broken.docx")
    assert str(caught.value) == f"broken.docx: {message}"
    assert "\n" not in str(caught.value)


# -- PPTX ---------------------------------------------------------------------------


def pptx(slides: list[str], notes: dict[int, str] | None = None, hidden: tuple[int, ...] = ()) -> bytes:
    ids = "".join(f'<p:sldId id="{256 + i}" r:id="rId{i + 1}"/>' for i in range(len(slides)))
    rels = "".join(
        f'<Relationship Id="rId{i + 1}" Type="{OFFICE_REL}/slide" Target="slides/slide{i + 1}.xml"/>'
        for i in range(len(slides))
    )
    parts: dict[str, str | bytes] = {
        "_rels/.rels": f'<Relationships {REL_NS}><Relationship Id="rId1" '
        f'Type="{OFFICE_REL}/officeDocument" Target="ppt/presentation.xml"/></Relationships>',
        "ppt/presentation.xml": f"<p:presentation {P_NS}><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>",
        "ppt/_rels/presentation.xml.rels": f"<Relationships {REL_NS}>{rels}"
        '<Relationship Id="rIdX" Type="x/hyperlink" Target="http://example.invalid" TargetMode="External"/>'
        "</Relationships>",
    }
    for i, shapes in enumerate(slides, start=1):
        show = ' show="0"' if i in hidden else ""
        parts[f"ppt/slides/slide{i}.xml"] = (
            f"<p:sld {P_NS}{show}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"
        )
    for i, note in (notes or {}).items():
        parts[f"ppt/slides/_rels/slide{i}.xml.rels"] = (
            f'<Relationships {REL_NS}><Relationship Id="rId9" Type="{OFFICE_REL}/notesSlide" '
            f'Target="../notesSlides/notesSlide{i}.xml"/></Relationships>'
        )
        parts[f"ppt/notesSlides/notesSlide{i}.xml"] = (
            f"<p:notes {P_NS}><p:cSld><p:spTree>{shape(note, 'body')}{shape(str(i), 'sldNum')}"
            "</p:spTree></p:cSld></p:notes>"
        )
    return zipped(parts)


def shape(text: str, placeholder: str | None = None, bullets: bool = False) -> str:
    ph = ""
    if placeholder == "obj":
        ph = '<p:nvPr><p:ph idx="1"/></p:nvPr>'
    elif placeholder:
        ph = f'<p:nvPr><p:ph type="{placeholder}"/></p:nvPr>'
    ppr = '<a:pPr><a:buChar char="•"/></a:pPr>' if bullets else ""
    paragraphs = "".join(f"<a:p>{ppr}<a:r><a:t>{line}</a:t></a:r></a:p>" for line in text.split("\n"))
    return f"<p:sp><p:nvSpPr>{ph}</p:nvSpPr><p:txBody>{paragraphs}</p:txBody></p:sp>"


def table_frame(rows: list[list[str]]) -> str:
    body = "".join(
        "<a:tr>"
        + "".join(f"<a:tc><a:txBody><a:p><a:r><a:t>{c}</a:t></a:r></a:p></a:txBody></a:tc>" for c in row)
        + "</a:tr>"
        for row in rows
    )
    return (
        f"<p:graphicFrame><a:graphic><a:graphicData><a:tbl>{body}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>"
    )


def test_pptx_one_page_per_slide_with_titles_bullets_text_and_tables() -> None:
    slides = [
        shape("Chunking in brief", "ctrTitle") + shape("A two-slide tour", "subTitle"),
        shape("Settings", "title")
        + shape("Size\nOverlap", "obj")
        + shape("Plain note")
        + shape("Dotted", bullets=True)
        + "<p:grpSp>" + table_frame([["Splitter", "Size"], ["sentence", "256"]]) + "</p:grpSp>"
        + shape("7", "sldNum"),
        "",  # an empty slide keeps its page
    ]  # fmt: skip
    # The layout of what a slide shows; its footer (the slide number) is read and tested apart.
    document = load_one(
        pptx(slides, notes={2: "Say why."}, hidden=(3,)), "deck.pptx", include_notes=False, include_footers=False
    )
    assert document.text == (
        "Chunking in brief\n\nA two-slide tour"
        "\n\n"
        "Settings\n\nSize\nOverlap\n\nPlain note\n\nDotted\n\n"
        "| Splitter | Size |\n| --- | --- |\n| sentence | 256 |"
        "\n\n"
    )
    assert document.pages == [
        Page(number=1, label="1", start_char=0, end_char=35),
        Page(number=2, label="2", start_char=37, end_char=133),
        Page(number=3, label="3", start_char=135, end_char=135),
    ]
    assert laid_out(document) == [
        ("heading", "Chunking in brief", 1, 1),
        ("paragraph", "A two-slide tour", None, 1),
        ("heading", "Settings", 2, 2),
        ("list_item", "Size", None, 2),
        ("list_item", "Overlap", None, 2),
        ("paragraph", "Plain note", None, 2),
        ("list_item", "Dotted", None, 2),
        ("table", "| Splitter | Size |\n| --- | --- |\n| sentence | 256 |", None, 2),
        ("table_row", "| sentence | 256 |", None, 2),
    ]
    assert document.metadata == {
        "file_name": "deck.pptx",
        "file_type": "pptx",
        "page_count": 3,
        "page_unit": "slide",
        "title": "Chunking in brief",
        "load_warning": "slide 3 hidden in the show, read anyway",
    }
    # How the deck was read stays out of what the LLM and the embedding model read; what it says stays in.
    assert document.excluded_llm_metadata_keys == ["load_warning", "page_unit"]
    assert document.get_content(MetadataMode.LLM).startswith(
        "file_name: deck.pptx\nfile_type: pptx\npage_count: 3\ntitle:"
    )
    assert "page_unit" not in document.get_content(MetadataMode.EMBED)
    with_notes = load_one(pptx(slides, notes={2: "Say why."}), "deck.pptx")  # notes are read by default
    note = next(e for e in with_notes.elements if e.attrs.get("notes"))
    assert (with_notes.text[note.start_char : note.end_char], note.page) == ("Say why.", 2)


def test_pptx_without_slides_is_empty() -> None:
    with pytest.raises(EmptyDocumentError, match=r"^empty\.pptx: has no slides$"):
        load_bytes(pptx([]), "empty.pptx")


# -- XLSX ---------------------------------------------------------------------------


def xlsx(
    sheets: dict[str, list[list[object]]], hidden: tuple[str, ...] = (), formats: dict[str, str] | None = None
) -> bytes:
    """A workbook of ``sheets``; ``formats`` gives a column (by letter) a number format below its first row."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
        for column, number_format in (formats or {}).items():
            for cell in sheet[column][1:]:
                cell.number_format = number_format
        if title in hidden:
            sheet.sheet_state = "hidden"
    out = BytesIO()
    book.save(out)
    return out.getvalue()


def test_xlsx_one_page_per_sheet_with_its_cells_as_a_table() -> None:
    import datetime as dt

    data = xlsx(
        {
            "Runs": [
                [None, None, None],
                [None, "splitter", "chunk_size", "hit_rate", "ran"],
                [None, "sentence", 256, 0.8125, dt.date(2024, 5, 1)],  # openpyxl formats it yyyy-mm-dd
                [None, None, None],
                [None, "recursive", 512.0, "n/a", True],
            ],
            "Notes": [["Measured on the sample queries."]],
            "Empty": [],
        }
    )
    document = load_one(data, "runs.xlsx")
    runs_table = (
        "| splitter | chunk_size | hit_rate | ran |\n| --- | --- | --- | --- |\n"
        "| sentence | 256 | 0.8125 | 2024-05-01 |\n| recursive | 512 | n/a | TRUE |"
    )
    notes_table = "| Measured on the sample queries. |\n| --- |"
    assert document.text == f"Runs\n\n{runs_table}\n\nNotes\n\n{notes_table}\n\nEmpty"
    assert [(p.label, document.text[p.start_char : p.end_char]) for p in document.pages] == [
        ("Runs", f"Runs\n\n{runs_table}"),
        ("Notes", f"Notes\n\n{notes_table}"),
        ("Empty", "Empty"),
    ]
    assert laid_out(document) == [
        ("heading", "Runs", 1, 1),
        ("table", runs_table, None, 1),
        ("table_row", "| sentence | 256 | 0.8125 | 2024-05-01 |", None, 1),
        ("table_row", "| recursive | 512 | n/a | TRUE |", None, 1),
        ("heading", "Notes", 1, 2),
        ("table", notes_table, None, 2),
        ("heading", "Empty", 1, 3),
    ]
    assert document.metadata["page_unit"] == "sheet" and document.metadata["page_count"] == 3


def test_xlsx_formulas_give_their_saved_value_and_are_never_evaluated() -> None:
    # openpyxl writes formulas without a cached value: data_only reads that as empty, never computes 2+3.
    data = xlsx({"Sums": [["a", "b", "total"], [2, 3, "=A2+B2"]]})
    document = load_one(data, "sums.xlsx")
    assert "| 2 | 3 |  |" in document.text and "5" not in document.text


def test_xlsx_with_too_many_cells_is_refused_and_macros_are_noted() -> None:
    data = xlsx({"Big": [[i, i + 1, i + 2] for i in range(50)]})
    with pytest.raises(
        TooLargeError,
        match=r"^big\.xlsx: has more than 100 cells \(limit: max_cells=100\); refused before reading the rest$",
    ):
        load_bytes(data, "big.xlsx", max_cells=100)
    source = zipfile.ZipFile(BytesIO(xlsx({"S": [["h"], ["v"]]}, hidden=())))
    with_macro = zipped({**{n: source.read(n) for n in source.namelist()}, "xl/vbaProject.bin": b"Sub Auto_Open()"})
    document = load_one(with_macro, "macro.xlsx")
    assert document.metadata["load_warning"] == "ignored its macros (nothing in the file is run or followed)"



SHARED_STRINGS_TYPE = b"application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
INLINE_SHEET = (
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1">'
    '<c r="A1" t="inlineStr"><is><r><t xml:space="preserve">Regular </t></r><r><rPr><b/></rPr><t>Bold</t></r></is></c>'
    '<c r="B1"><v>2</v></c></row></sheetData></worksheet>'
)


def test_xlsx_naming_a_shared_strings_part_it_lacks_reads_its_inline_strings() -> None:
    """xlsx2csv's formatted_inline_string.xlsx, made here: [Content_Types].xml names xl/sharedStrings.xml, the
    zip has no such part (openpyxl raised KeyError), and the one string is inline in the sheet."""
    source = zipfile.ZipFile(BytesIO(xlsx({"S": [["a"]]})))
    parts: dict[str, str | bytes] = {name: source.read(name) for name in source.namelist()}
    assert "xl/sharedStrings.xml" not in parts
    parts["[Content_Types].xml"] = source.read("[Content_Types].xml").replace(
        b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="' + SHARED_STRINGS_TYPE + b'"/></Types>'
    )
    parts["xl/worksheets/sheet1.xml"] = INLINE_SHEET
    document = load_one(zipped(parts), "inline.xlsx")
    assert document.text == "S\n\n| Regular Bold | 2 |\n| --- | --- |"
    assert document.metadata["load_warning"] == (
        "its content list names a part the file does not hold (xl/sharedStrings.xml): read without it"
    )


# -- EPUB ---------------------------------------------------------------------------


def epub(chapters: dict[str, str], encrypted: str | None = None) -> bytes:
    manifest = "".join(
        f'<item id="c{i}" href="{quote(name)}" media-type="application/xhtml+xml"/>' for i, name in enumerate(chapters)
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    parts: dict[str, str | bytes] = {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
        "OEBPS/book.opf": '<package xmlns="http://www.idpf.org/2007/opf"><metadata '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Chunking Notes</dc:title>'
        "<dc:creator>ChunkScope</dc:creator><dc:language>en</dc:language></metadata>"
        f'<manifest>{manifest}<item id="css" href="style.css" media-type="text/css"/></manifest>'
        f'<spine>{spine}<itemref idref="css"/></spine></package>',
    }
    for name, body in chapters.items():
        parts[f"OEBPS/{name}"] = (
            f'<?xml version="1.0" encoding="utf-8"?><!DOCTYPE html><html><body>{body}</body></html>'
        )
    if encrypted:
        parts["META-INF/encryption.xml"] = (
            '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
            'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:CipherData>'
            f'<enc:CipherReference URI="{encrypted}"/></enc:CipherData></enc:EncryptedData></encryption>'
        )
    return zipped(parts)


def test_epub_one_page_per_chapter_in_spine_order_through_the_html_reader() -> None:
    chapters = {
        "cover.xhtml": '<img src="cover.png" alt="cover"/>',
        "text/one a.xhtml": "<h1>Why chunk</h1><p>Windows are limited.</p><ul><li>precision</li><li>context</li></ul>",
        "two.xhtml": "<h2>Tables</h2><table><tr><th>size</th><th>hits</th></tr><tr><td>256</td><td>12</td></tr></table>",
    }
    data = epub(chapters)
    document = load_one(data, "book.epub")
    assert document.text == (
        "Why chunk\n\nWindows are limited.\n\nprecision\ncontext\n\nTables\n\nsize | hits\n256 | 12"
    )
    assert [(p.label, document.text[p.start_char : p.end_char]) for p in document.pages] == [
        ("1", "Why chunk\n\nWindows are limited.\n\nprecision\ncontext"),
        ("2", "Tables\n\nsize | hits\n256 | 12"),
    ]
    assert laid_out(document) == [
        ("heading", "Why chunk", 1, 1),
        ("paragraph", "Windows are limited.", None, 1),
        ("list_item", "precision", None, 1),
        ("list_item", "context", None, 1),
        ("heading", "Tables", 2, 2),
        ("table", "size | hits\n256 | 12", None, 2),
        ("table_row", "256 | 12", None, 2),
    ]
    assert {k: document.metadata[k] for k in ("title", "author", "language", "page_unit")} == {
        "title": "Chunking Notes",
        "author": "ChunkScope",
        "language": "en",
        "page_unit": "chapter",
    }


def test_epub_with_encrypted_chapters_is_refused() -> None:
    data = epub({"one.xhtml": "<p>secret</p>"}, encrypted="OEBPS/one.xhtml")
    with pytest.raises(EncryptedDocumentError, match=r"^drm\.epub: is DRM-protected"):
        load_bytes(data, "drm.epub")
    fonts_only = epub({"one.xhtml": "<p>open</p>"}, encrypted="OEBPS/fonts/a.otf")
    assert load_one(fonts_only, "fonts.epub").text == "open"


# -- JSON and JSONL -------------------------------------------------------------------------


def test_jsonl_records_text_field_and_the_rest_as_metadata() -> None:
    lines = [
        {"id": 1, "title": "Overlap", "body": "Overlap repeats the end of one chunk.", "tags": ["a"]},
        {"id": 2, "title": "Size", "body": "Chunk size trades precision for context."},
        {"id": 3, "title": "No body"},
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode() + b"\n\n"
    document = load_one(data, "faq.jsonl")
    assert document.text == "Overlap repeats the end of one chunk.\n\nChunk size trades precision for context."
    assert [(e.kind, document.text[e.start_char : e.end_char], e.attrs) for e in document.elements] == [
        (
            "paragraph",
            "Overlap repeats the end of one chunk.",
            {"record": 1, "fields": {"id": 1, "title": "Overlap", "tags": ["a"]}},
        ),
        ("paragraph", "Chunk size trades precision for context.", {"record": 2, "fields": {"id": 2, "title": "Size"}}),
    ]
    assert document.metadata["text_field"] == "body" and document.metadata["record_count"] == 2
    assert document.metadata["load_warning"] == "skipped 1 record without text in the field 'body'"
    chosen = load_one(data, "faq.jsonl", text_field="title")
    assert chosen.text == "Overlap\n\nSize\n\nNo body"


def test_json_records_in_an_object_nested_fields_and_failures() -> None:
    data = json.dumps({"version": 2, "data": [{"doc": {"text": "First passage."}}, {"doc": {"text": "Second."}}]})
    document = load_one(data.encode(), "export.json", text_field="doc.text")
    assert document.text == "First passage.\n\nSecond."
    assert document.metadata["records_from"] == "data"
    assert load_one(b'["one", "two"]', "list.json").text == "one\n\ntwo"
    with pytest.raises(
        CorruptDocumentError, match=r"^bad\.jsonl: is not valid JSON on line 2 \(Expecting value at column 1\)$"
    ):
        load_bytes(b'{"text": "ok"}\n}\n', "bad.jsonl")
    with pytest.raises(EmptyDocumentError, match=r"^nums\.json: has no string field to use as text; set text_field$"):
        load_bytes(b'[{"a": 1}]', "nums.json")
    with pytest.raises(CorruptDocumentError, match="nested too deep"):
        load_bytes(b"[" * 100_000, "deep.json")


record_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(str.strip)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(record_text, st.integers()), min_size=1, max_size=12))
def test_jsonl_records_round_trip_their_text_field_through_their_spans(records) -> None:
    data = "\n".join(json.dumps({"n": n, "text": text}) for text, n in records).encode()
    document = load_one(data, "records.jsonl", text_field="text")
    assert [document.text[e.start_char : e.end_char] for e in document.elements] == [text for text, _ in records]
    assert [e.attrs["fields"] for e in document.elements] == [{"n": n} for _, n in records]


# -- the registry, the samples ---------------------------------------------------------------


def test_the_new_loaders_are_registered_for_their_extensions() -> None:
    expected = {"docx": (".docx",), "pptx": (".pptx",), "xlsx": (".xlsx",), "epub": (".epub",)}
    expected["json"] = (".json", ".jsonl", ".ndjson")
    assert {name: LOADERS.get_class(name).extensions for name in expected} == expected


SAMPLES = Path(__file__).resolve().parent.parent / "sample_docs"


def test_the_docx_sample_has_headings_lists_and_a_table() -> None:
    (document,) = load(SAMPLES / "parsing_office_files.docx")
    check_spans(document)
    assert document.metadata["title"] == "Parsing Office Files for Retrieval"
    headings = [(e.level, e.attrs["title"]) for e in document.elements if e.kind == "heading"]
    assert headings[:3] == [
        (1, "Parsing Office Files for Retrieval"),
        (2, "What a Parser Should Keep"),
        (3, "Tables deserve special care"),
    ]
    assert sum(e.kind == "list_item" for e in document.elements) == 12
    table = next(e for e in document.elements if e.kind == "table")
    assert table.attrs["header"] == "| Format | Unit of structure | Becomes a page | Tables |"
    assert sum(e.kind == "table_row" for e in document.elements) == 4
    assert "load_warning" not in document.metadata


def test_the_pptx_sample_has_ten_slides_as_pages() -> None:
    (document,) = load(SAMPLES / "chunking_in_ten_slides.pptx")
    check_spans(document)
    assert [p.label for p in document.pages] == [str(n) for n in range(1, 11)]
    titles = [e.attrs["title"] for e in document.elements if e.kind == "heading"]
    assert titles[:2] == ["Chunking for RAG in Ten Slides", "Why chunk at all?"] and len(titles) == 10
    table = next(e for e in document.elements if e.kind == "table")
    assert table.page == 5 and table.attrs["header"] == "| Content | Splitter | chunk_size | chunk_overlap |"
    assert "load_warning" not in document.metadata


# -- damaged archives: a reason, never another exception ---------------------------------------

DAMAGEABLE = {
    "docx": (SAMPLES / "parsing_office_files.docx").read_bytes(),
    "pptx": (SAMPLES / "chunking_in_ten_slides.pptx").read_bytes(),
    "xlsx": xlsx({"Runs": [["splitter", "size"], ["sentence", 256]]}),
    "epub": epub({"one.xhtml": "<h1>One</h1><p>Text.</p>", "two.xhtml": "<p>More text.</p>"}),
}


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """A real file with a few bytes overwritten, often truncated."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 8))):
        out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(0, 255))
    return bytes(out[: draw(st.integers(0, len(out)))]) if draw(st.booleans()) else bytes(out)


@pytest.mark.parametrize("name", list(DAMAGEABLE))
def test_damaged_archives_load_or_give_a_load_error(name: str) -> None:
    file_name = f"damaged.{name}"

    @settings(max_examples=80, deadline=None)
    @given(damaged(DAMAGEABLE[name]))
    def check(data: bytes) -> None:
        try:
            documents = load_bytes(data, file_name)
        except LoadError as exc:
            assert exc.file_name == file_name and "\n" not in str(exc)
            return
        for document in documents:
            check_spans(document)

    check()


def test_xlsx_parts_declaring_entities_are_refused_before_openpyxl_reads_them() -> None:
    source = zipfile.ZipFile(BytesIO(xlsx({"S": [["h"], ["v"]]})))
    parts = {n: source.read(n) for n in source.namelist()}
    workbook = parts["xl/workbook.xml"].decode()
    parts["xl/workbook.xml"] = '<!DOCTYPE w [<!ENTITY a "aaaa">]>' + workbook.split("?>", 1)[-1]
    with pytest.raises(CorruptDocumentError, match=r"^laughs\.xlsx: has XML entity declarations in xl/workbook\.xml"):
        load_bytes(zipped(parts), "laughs.xlsx")


def test_a_folder_walk_loads_jsonl_but_leaves_json_to_be_named(tmp_path: Path) -> None:
    (tmp_path / "queries.json").write_text('[{"query": "How much overlap should chunks have?"}]')
    (tmp_path / "corpus.jsonl").write_text('{"text": "Overlap repeats a little text."}\n')
    assert [d.metadata["file_name"] for d in load(tmp_path)] == ["corpus.jsonl"]
    assert [d.metadata["file_name"] for d in load(tmp_path / "queries.json")] == ["queries.json"]


def slide_number_field(cached: str) -> str:
    return (
        '<p:sp><p:nvSpPr><p:nvPr><p:ph type="sldNum" idx="12"/></p:nvPr></p:nvSpPr><p:txBody><a:p>'
        f'<a:fld id="{{B6F15528}}" type="slidenum"><a:t>{cached}</a:t></a:fld></a:p></p:txBody></p:sp>'
    )


def test_pptx_slide_footers_dates_and_numbers_follow_the_content_marked() -> None:
    slides = [
        shape("2026-12-06", "dt") + shape("Results", "title") + shape("Acme, confidential", "ftr")
        + slide_number_field("‹#›") + shape("Up 4%", "obj"),
        shape("Next", "title") + slide_number_field("7"),  # a stale cached number: the slide's own is shown
    ]  # fmt: skip
    document = load_one(pptx(slides, notes={1: "Mention the margin."}), "footers.pptx")
    assert document.text == (
        "Results\n\nUp 4%\n\n2026-12-06\n\nAcme, confidential\n\n1\n\nMention the margin.\n\nNext\n\n2"
    )
    assert [(e.attrs.get("slide_footer"), e.page) for e in document.elements if e.attrs.get("slide_footer")] == [
        ("date", 1),
        ("footer", 1),
        ("slide_number", 1),
        ("slide_number", 2),
    ]
    without = load_one(pptx(slides), "footers.pptx", include_footers=False)
    assert without.text == "Results\n\nUp 4%\n\nNext"


def test_pptx_equations_are_linear_text_apart_from_their_words_and_read_once_not_from_their_fallback() -> None:
    # PowerPoint writes an equation as an a14:m choice and a plain-runs copy of it as the fallback.
    math = (
        '<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
        '<mc:Choice Requires="a14"><a14:m xmlns:a14="http://schemas.microsoft.com/office/drawing/2010/main">'
        '<m:oMathPara xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"><m:oMath>'
        "<m:r><m:t>E=m</m:t></m:r><m:sSup><m:e><m:r><m:t>c</m:t></m:r></m:e><m:sup><m:r><m:t>2</m:t></m:r></m:sup>"
        "</m:sSup></m:oMath></m:oMathPara></a14:m></mc:Choice>"
        "<mc:Fallback><a:r><a:t>E=mc2</a:t></a:r></mc:Fallback></mc:AlternateContent>"
    )
    body = f"<a:p><a:r><a:t>Energy</a:t></a:r>{math}<a:r><a:t>holds.</a:t></a:r></a:p>"
    slide = shape("Physics", "title") + f"<p:sp><p:nvSpPr/><p:txBody>{body}</p:txBody></p:sp>"
    document = load_one(pptx([slide]), "math.pptx")
    assert document.text == "Physics\n\nEnergy E = mc^2 holds."
    assert laid_out(document)[1] == ("paragraph", "Energy E = mc^2 holds.", None, 1)
