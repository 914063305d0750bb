"""DOCX headers and footers: each read once, where the first section that shows it starts (headers) or ends
(footers), marked ``page_header``/``page_footer`` with its kind; a section that shows the previous one's adds nothing.

The documents are written here with python-docx (a dev dependency), laid out as python-docx's own test files
are (odd and even headers, a first-page header, sections added later): the files are our own.
"""

from __future__ import annotations

from io import BytesIO

from docx import Document as WordDocument
from test_loaders import check_spans

from core.loaders import load_bytes


def three_sections() -> bytes:
    word = WordDocument()
    first = word.sections[0]
    first.different_first_page_header_footer = True
    first.header.paragraphs[0].text = "Odd header"
    first.even_page_header.paragraphs[0].text = "Even header"
    first.first_page_header.paragraphs[0].text = "Title page header"
    first.footer.paragraphs[0].text = "Copyright 2026 ChunkScope"
    table = first.footer.add_table(rows=1, cols=2, width=first.page_width)
    table.cell(0, 0).text, table.cell(0, 1).text = "Left side", "Right side"
    word.add_paragraph("Body of section one.")
    word.add_section()  # shows section one's header and footer: nothing new to read
    word.add_paragraph("Body of section two.")
    third = word.add_section()
    third.header.is_linked_to_previous = False
    third.header.paragraphs[0].text = "Appendix header"
    word.add_paragraph("Body of section three.")
    word.settings.odd_and_even_pages_header_footer = True
    out = BytesIO()
    word.save(out)
    return out.getvalue()


def marked(document) -> list[tuple[str, str, dict]]:
    """(kind, exact span text, where it stands) per element; a table's own attributes are checked apart."""
    margins = ("page_header", "page_footer")
    return [
        (e.kind, document.text[e.start_char : e.end_char], {k: v for k, v in e.attrs.items() if k in margins})
        for e in document.elements
    ]


def test_each_header_and_footer_is_read_once_where_its_section_starts_or_ends():
    (document,) = load_bytes(three_sections(), "sections.docx")
    check_spans(document)
    assert marked(document) == [
        ("paragraph", "Odd header", {"page_header": "default"}),
        ("paragraph", "Even header", {"page_header": "even"}),
        ("paragraph", "Title page header", {"page_header": "first"}),
        ("paragraph", "Body of section one.", {}),
        ("paragraph", "Copyright 2026 ChunkScope", {"page_footer": "default"}),
        ("table", "| Left side | Right side |\n| --- | --- |", {"page_footer": "default"}),
        ("paragraph", "Body of section two.", {}),
        ("paragraph", "Appendix header", {"page_header": "default"}),
        ("paragraph", "Body of section three.", {}),
    ]
    (table,) = [e for e in document.elements if e.kind == "table"]
    assert table.attrs["header"] == "| Left side | Right side |"  # the table's own header row, kept
    assert document.text.count("Odd header") == 1 and document.text.count("Copyright") == 1


def test_headers_and_footers_can_be_left_out():
    (document,) = load_bytes(three_sections(), "sections.docx", include_headers_footers=False)
    check_spans(document)
    assert document.text == "Body of section one.\n\nBody of section two.\n\nBody of section three."
