"""The PDF parsers: pypdf's text layer, pdfplumber's structure (headings, Markdown tables) and Tesseract's OCR.

The fixtures come from scripts/make_pdf_fixtures.py: table_report.pdf (two pages,
headings, a ruled table of the splitter benchmarks) and sample_docs/scanned_handbook_page.pdf (a
handbook section drawn as an image: no text layer).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pypdf
import pytest

from core.config import PipelineConfig
from core.documents import run_split
from core.errors import EmptyDocumentError
from core.loaders import load, load_bytes
from core.loaders import pdf as pdf_module
from core.loaders.parsers import diff_lines, found_phrase, parse_summary, text_diff
from core.loaders.pdf_ocr import parse_tsv
from core.splitters import get_splitter

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
TABLE_PDF = FIXTURES / "table_report.pdf"
SCANNED_PDF = ROOT / "sample_docs" / "scanned_handbook_page.pdf"
HANDBOOK_PDF = ROOT / "sample_docs" / "rag_handbook.pdf"
HANDBOOK_MD = ROOT / "scripts" / "sample_sources" / "rag_handbook.md"


TABLE_TEXT = """## Results by configuration

| splitter | chunk_size | chunk_overlap | num_chunks | hit_rate_at_5 | mrr |
| --- | --- | --- | --- | --- | --- |
| character | 128 | 0 | 1822 | 0.528 | 0.391 |
| character | 256 | 0 | 920 | 0.646 | 0.454 |
| character | 512 | 0 | 458 | 0.773 | 0.588 |
| character | 512 | 50 | 505 | 0.771 | 0.594 |
| character | 1024 | 100 | 252 | 0.841 | 0.605 |
| recursive | 128 | 0 | 1916 | 0.571 | 0.426 |
| recursive | 256 | 0 | 968 | 0.691 | 0.530 |
| recursive | 256 | 25 | 1042 | 0.708 | 0.522 |

Larger chunks find"""


def structured(path: Path, **options):
    (document,) = load(path, parser="pdfplumber", **options)
    return document


def check_spans(document) -> None:
    for page in document.pages:
        assert 0 <= page.start_char <= page.end_char <= len(document.text)
    for before, after in zip(document.pages, document.pages[1:], strict=False):
        assert document.text[before.end_char : after.start_char] == "\n\n"
    for element in document.elements:
        piece = document.text[element.start_char : element.end_char]
        assert piece and piece == piece.strip(), element


# -- the structure-aware parser --------------------------------------------------------


def test_a_ruled_table_becomes_a_markdown_table_with_a_row_element_per_body_row() -> None:
    document = structured(TABLE_PDF)
    check_spans(document)
    assert TABLE_TEXT in document.text
    (table,) = [e for e in document.elements if e.kind == "table"]
    rows = [e for e in document.elements if e.kind == "table_row"]
    assert table.attrs["header"] == "| splitter | chunk_size | chunk_overlap | num_chunks | hit_rate_at_5 | mrr |"
    assert document.text[table.start_char : table.attrs["header_end"]].endswith("| --- |")
    assert [document.text[r.start_char : r.end_char] for r in rows] == TABLE_TEXT.splitlines()[4:12]
    assert all(r.page == 1 and table.start_char < r.start_char < r.end_char <= table.end_char for r in rows)


def test_headings_come_out_as_markdown_lines_with_their_level_and_title() -> None:
    document = structured(TABLE_PDF)
    headings = [
        (e.level, e.attrs["title"], document.text[e.start_char : e.end_char])
        for e in document.elements
        if e.kind == "heading"
    ]
    assert headings == [
        (1, "Splitter settings compared", "# Splitter settings compared"),
        (2, "Results by configuration", "## Results by configuration"),
        (2, "What the numbers do not say", "## What the numbers do not say"),
    ]
    assert [e.page for e in document.elements if e.kind == "heading"] == [1, 1, 2]
    assert document.text.startswith("# Splitter settings compared\n\nThis report lists how each splitter setting")
    assert document.metadata["parser"] == "pdfplumber"
    assert "parser" not in document.get_metadata_str("embed") and "parser" not in document.get_metadata_str("llm")


def test_the_handbook_headings_are_the_markdown_source_headings_at_their_levels() -> None:
    """The quality bar: every heading the PDF was typeset from, found at its level, and nothing else."""
    source = [line for line in HANDBOOK_MD.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    expected = [(len(line.split()[0]), line.split(" ", 1)[1].strip()) for line in source]
    document = structured(HANDBOOK_PDF)
    check_spans(document)
    assert [(e.level, e.attrs["title"]) for e in document.elements if e.kind == "heading"] == expected
    assert len(document.pages) == 7 and document.metadata["page_count"] == 7


@pytest.mark.parametrize(
    "splitter,params",
    [
        ("recursive", {"chunk_size": 60, "chunk_overlap": 0}),
        ("recursive", {"chunk_size": 140, "chunk_overlap": 20}),
        ("sentence", {"chunk_size": 60, "chunk_overlap": 0, "tokenizer": "characters", "metadata_aware": False}),
        ("sentence", {"chunk_size": 25, "chunk_overlap": 5, "tokenizer": "words", "metadata_aware": False}),
    ],
)
def test_no_splitter_cuts_a_table_row(splitter: str, params: dict) -> None:
    document = structured(TABLE_PDF)
    nodes = run_split([document], PipelineConfig(splitter=get_splitter(splitter, **params)))
    rows = [e for e in document.elements if e.kind == "table_row"]
    assert len(rows) == 8
    for node in nodes:
        assert node.text == document.text[node.start_char : node.end_char]
        for row in rows:
            inside = node.start_char <= row.start_char and row.end_char <= node.end_char
            apart = node.end_char <= row.start_char or row.end_char <= node.start_char
            assert inside or apart, (node.text, document.text[row.start_char : row.end_char])
    assert any(document.text[r.start_char : r.end_char] in node.text for node in nodes for r in rows)


def test_pypdf_stays_the_default_and_reads_the_table_as_loose_words() -> None:
    (document,) = load(TABLE_PDF)
    assert document.metadata["parser"] == "pypdf"
    assert "character 128 0 1822 0.528 0.391" in document.text
    assert not [e for e in document.elements if e.kind in ("table", "heading")]


def test_without_table_finding_the_cells_read_as_text() -> None:
    document = structured(TABLE_PDF, find_tables=False)
    assert not [e for e in document.elements if e.kind == "table"]
    assert "character 128 0 1822 0.528 0.391" in document.text


# -- OCR ----------------------------------------------------------------------------


@pytest.mark.parametrize("parser", ["pypdf", "pdfplumber"])
def test_a_scanned_page_is_read_by_ocr_with_its_confidence(parser: str) -> None:
    (document,) = load(SCANNED_PDF, parser=parser)
    check_spans(document)
    words = " ".join(document.text.split())
    assert words.startswith("What an embedding captures Embedding models are trained on pairs of texts")
    assert "weak at exact identifiers, such as part numbers, error codes and version strings" in words
    assert document.metadata["ocr_pages"] == [1]
    confidence = document.metadata["ocr_confidence"]["1"]
    assert 80 <= confidence <= 100
    assert document.metadata["load_warning"] == f"read by OCR (mean word confidence): page 1 ({confidence:.0f}%)"
    assert all(e.attrs["ocr_confidence"] == confidence for e in document.elements)
    assert "ocr_confidence" not in document.get_metadata_str("embed")
    summary = parse_summary(document)
    assert summary["parser"] == f"{parser} + OCR" and summary["ocr_pages"] == 1
    assert found_phrase(summary) == f"1 page · 1 OCR page ({confidence:.0f}%)"


NO_TESSERACT = "OCR needs Tesseract, which is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)"


def text_page_then_scan() -> bytes:
    """A two-page PDF: the table report's first page (a text layer), then the scanned page (none)."""
    writer = pypdf.PdfWriter()
    writer.append(str(TABLE_PDF), pages=[0])
    writer.append(str(SCANNED_PDF))
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_auto_reads_only_the_page_without_a_text_layer() -> None:
    (document,) = load_bytes(text_page_then_scan(), "mixed.pdf")
    assert document.metadata["ocr_pages"] == [2]
    first, second = (document.text[p.start_char : p.end_char] for p in document.pages)
    assert first.startswith("Splitter settings compared")
    assert "Embedding models are trained" in second
    assert {e.page for e in document.elements if "ocr_confidence" in e.attrs} == {2}


STAMP = "RECEIVED 12 MARCH 2024 - ARCHIVE COPY"


def stamped_scan() -> bytes:
    """The scanned page with one small line of real text on top, as a scanner's software stamps it."""
    from fpdf import FPDF

    reader = pypdf.PdfReader(SCANNED_PDF)
    scan = reader.pages[0]
    stamp = FPDF(unit="pt", format=(float(scan.mediabox.width), float(scan.mediabox.height)))
    stamp.add_page()
    stamp.set_font("Helvetica", size=8)
    stamp.text(x=400, y=20, text=STAMP)
    stamp_page = pypdf.PdfReader(io.BytesIO(bytes(stamp.output()))).pages[0]
    writer = pypdf.PdfWriter()
    page = writer.add_page(scan)
    page.merge_page(stamp_page)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("parser", ["pypdf", "pdfplumber"])
def test_auto_reads_a_scan_whose_text_layer_is_one_stamp_line(parser: str) -> None:
    """Any text layer used to make a page 'not scanned': the stamp was read and the page's words lost."""
    (document,) = load_bytes(stamped_scan(), "stamped.pdf", parser=parser)
    words = " ".join(document.text.split())
    assert "Embedding models are trained on pairs of texts" in words
    assert document.metadata["ocr_pages"] == [1]
    assert document.metadata["load_warning"].endswith(
        "the text layer of page 1 covers little of a page-size image (a scan with a stamp or a page number "
        f"on top): OCR's reading of the page without that layer kept instead; the layer's words: \"{STAMP}\""
    )


def test_when_pdfplumber_cannot_measure_a_page_auto_reads_its_text_layer(monkeypatch) -> None:
    def fail(*args, **kwargs):
        raise ValueError("pdfminer could not parse this file")

    monkeypatch.setattr(pdf_module, "page_coverage", fail)
    (document,) = load_bytes(stamped_scan(), "stamped.pdf")
    assert " ".join(document.text.split()) == STAMP and "ocr_pages" not in document.metadata


def test_the_stamp_is_all_the_text_layer_holds() -> None:
    """The defect as it was: ocr='off' reads only the stamp."""
    (document,) = load_bytes(stamped_scan(), "stamped.pdf", ocr="off")
    assert " ".join(document.text.split()) == STAMP


def test_coverage_tells_a_stamped_scan_from_a_text_page() -> None:
    from core.loaders.pdf_ocr import page_coverage

    (scan,) = page_coverage(stamped_scan(), [1]).values()
    assert scan.images == pytest.approx(1.0) and scan.text < 0.005 and scan.scan_like
    text_page = page_coverage(HANDBOOK_PDF.read_bytes(), [2])[2]
    assert text_page.images == 0.0 and text_page.text > 0.2 and not text_page.scan_like


def test_a_page_of_text_over_a_page_size_image_is_not_sent_to_ocr(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("OCR ran on a page of text")

    writer = pypdf.PdfWriter()
    page = writer.add_page(pypdf.PdfReader(SCANNED_PDF).pages[0])
    page.merge_page(pypdf.PdfReader(HANDBOOK_PDF).pages[1])
    buffer = io.BytesIO()
    writer.write(buffer)
    monkeypatch.setattr(pdf_module, "ocr_page", refuse)
    (document,) = load_bytes(buffer.getvalue(), "background.pdf")
    assert "ocr_pages" not in document.metadata
    assert document.text == pypdf.PdfReader(HANDBOOK_PDF).pages[1].extract_text()


def test_ocr_off_says_so_in_one_sentence() -> None:
    with pytest.raises(EmptyDocumentError) as caught:
        load(SCANNED_PDF, ocr="off")
    assert (
        str(caught.value)
        == "scanned_handbook_page.pdf: has no text layer (scanned?) and OCR is off (ocr='auto' reads scanned pages)"
    )


def test_without_tesseract_a_scan_is_refused_in_one_line(monkeypatch) -> None:
    monkeypatch.setattr(pdf_module, "ocr_unavailable_reason", lambda: NO_TESSERACT)
    with pytest.raises(EmptyDocumentError) as caught:
        load(SCANNED_PDF)
    assert str(caught.value) == f"scanned_handbook_page.pdf: has no text layer (scanned?); {NO_TESSERACT}"
    assert "\n" not in str(caught.value)


def test_without_tesseract_a_scanned_page_among_text_pages_is_a_note(monkeypatch) -> None:
    monkeypatch.setattr(pdf_module, "ocr_unavailable_reason", lambda: NO_TESSERACT)
    (document,) = load_bytes(text_page_then_scan(), "mixed.pdf")
    assert document.metadata["load_warning"] == f"no text on page 2; page 2 not read: {NO_TESSERACT}"
    assert "ocr_pages" not in document.metadata


def test_a_blank_page_is_not_sent_to_ocr(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("OCR ran on a page with no image")

    monkeypatch.setattr(pdf_module, "ocr_page", refuse)
    (document,) = load(FIXTURES / "partly_blank.pdf")
    assert document.metadata["load_warning"] == "no text on page 2"


def test_tesseract_tsv_becomes_paragraphs_and_a_mean_confidence() -> None:
    header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = [
        "1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t",
        "5\t1\t1\t1\t1\t1\t0\t0\t9\t9\t90\tChunks",
        "5\t1\t1\t1\t1\t2\t0\t0\t9\t9\t80\toverlap",
        "5\t1\t1\t1\t2\t1\t0\t0\t9\t9\t70\ta little.",
        "5\t1\t2\t1\t1\t1\t0\t0\t9\t9\t100\tNext",
    ]
    page = parse_tsv("\n".join([header, *rows]))
    assert page.text == "Chunks overlap\na little.\n\nNext"
    assert parse_tsv("\n".join([header, *rows]), reflow=True).text == "Chunks overlap a little.\n\nNext"
    assert page.confidence == 85.0 and page.words == 4


# -- two parsers compared -------------------------------------------------------------


def test_the_text_diff_compares_words_and_keeps_exact_spans() -> None:
    a = "Results by\nconfiguration\nsplitter size"
    b = "## Results by configuration\n\n| splitter | size |"
    diff = text_diff(a, b)
    assert [(run.kind, a[run.a_start : run.a_end], b[run.b_start : run.b_end]) for run in diff.runs] == [
        ("b_only", "", "##"),
        ("same", "Results by\nconfiguration", "Results by configuration"),
        ("b_only", "", "|"),
        ("same", "splitter", "splitter"),
        ("b_only", "", "|"),
        ("same", "size", "size"),
        ("b_only", "", "|"),
    ]
    # The markup shows in the runs; the counts are of words with a letter or digit: the same five on both sides.
    assert (diff.a_words, diff.b_words, diff.same_words) == (5, 5, 5)
    assert diff.similarity == 1.0
    assert diff_lines(diff, a, b)[:3] == ["+ ##", "  Results by configuration", "+ |"]


def test_the_two_parsers_of_the_handbook_read_the_same_words_but_the_markup() -> None:
    (plain,) = load(HANDBOOK_PDF)
    rich = structured(HANDBOOK_PDF)
    diff = text_diff(plain.text, rich.text)
    added = [rich.text[r.b_start : r.b_end] for r in diff.runs if r.kind == "b_only"]
    assert diff.similarity > 0.98
    assert sum(1 for words in added if re.fullmatch(r"#{1,3}", words)) == 33


# -- word gaps on tightly set pages (#30.2) ------------------------------------------------

TIGHT_PDF = FIXTURES / "tight_set.pdf"
MARKUP = {"#", "##", "###", "|", "---"}


def test_a_tightly_set_page_keeps_its_words_apart() -> None:
    """Word gaps of 0.22 em (2 pt at 9 pt) placed by TJ offsets, no space characters: pdfplumber's default
    3 pt tolerance read "Largelanguagemodels(LLMs)are…"."""
    document = structured(TIGHT_PDF)
    assert document.text == (
        "# Why chunk size matters\n\n"
        "Large language models (LLMs) are handed the passages a retriever finds, so what a chunk holds decides "
        "what the model can read. A chunk that is too small cuts an answer in half; one that is too large buries "
        "it among unrelated sentences and spends the context window on text nobody asked for. Always measure."
    )


def test_the_fallback_text_of_a_page_keeps_tight_words_apart_too() -> None:
    from core.loaders.pdf_structure import page_text

    (text,) = page_text(TIGHT_PDF.read_bytes(), [1]).values()
    assert text.splitlines()[1].startswith("Large language models (LLMs) are handed")


def test_the_handbook_reads_the_same_words_with_either_parser_but_the_markup() -> None:
    """The sample typeset at 10-11 pt: the word gap no longer joins a list number to its word ("10.Review")."""
    (plain,) = load(HANDBOOK_PDF)
    rich = structured(HANDBOOK_PDF)
    assert [word for word in rich.text.split() if word not in MARKUP] == plain.text.split()
    assert "10. Review the grounded prompt" in rich.text


def _pdf_with_resources_behind_references(links: int, text: str) -> bytes:
    """One page whose /Resources is a chain of ``links`` references before the dictionary: pdfplumber follows
    it, pypdf raises on the page (and the file used to read as having no text layer)."""
    import io

    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 10 0 R /Contents 5 0 R >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    content = b"BT /F1 12 Tf 72 720 Td (" + text.encode() + b") Tj ET"
    objects[5] = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
    for i in range(links):
        objects[10 + i] = b"%d 0 R" % (11 + i)
    objects[10 + links] = b"<< /Font << /F1 4 0 R >> >>"
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n")
    xref, size = out.tell(), max(objects) + 1
    out.write(b"xref\n0 %d\n" % size)
    for number in range(size):
        out.write(b"%010d 00000 n \n" % offsets[number] if number in offsets else b"0000000000 65535 f \n")
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref))
    return out.getvalue()


@pytest.mark.parametrize("links", [1, 40])
def test_a_page_pypdf_cannot_read_is_read_by_pdfplumber_and_said_so(links: int) -> None:
    text = "Text behind a chain of resource references."
    (document,) = load_bytes(_pdf_with_resources_behind_references(links, text), "chained.pdf")
    assert document.text == text
    assert document.metadata["parser"] == "pypdf" and document.metadata["fallback_pages"] == [1]
    assert document.metadata["load_warning"] == "pypdf could not read page 1: read by pdfplumber instead"
