"""Garbled text layers (issue #30.1): a page whose extracted text is glyph numbers is read by the other
extractor when that one reads it, and named in a warning when neither does.

The fixture comes from tests/fixtures/make_parser_fixtures.py: garbled_layer.pdf's page 1 is plain
Helvetica, page 2 a CID font without /ToUnicode (pypdf garbles it, pdfplumber reads the font's cmap),
page 3 a font whose codes map to no character at all (both garble it).
"""

from __future__ import annotations

import io
import unicodedata
from pathlib import Path

import pypdf
from hypothesis import given
from hypothesis import strategies as st

from core.loaders import load, load_bytes
from core.loaders.parsers import parse_summary
from core.loaders.pdf_assemble import expand_ligatures
from core.loaders.pdf_garble import better_text, garbled_pages, is_word_like, suspect, text_quality

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GARBLED = FIXTURES / "garbled_layer.pdf"
HANDBOOK_PDF = Path(__file__).resolve().parent.parent / "sample_docs" / "rag_handbook.pdf"

PAGE_2 = (
    "Retrieval augmented generation finds the passages that answer\n"
    "a question and hands them to the model. Chunk size decides how\n"
    "much text each passage holds, and overlap repeats a little."
)
PAGE_3_WARNING = (
    "garbled text on page 3: the PDF's fonts do not say which characters they draw "
    "(ocr='all' reads the page as an image)"
)


def page_texts(document) -> list[str]:
    return [document.text[p.start_char : p.end_char] for p in document.pages]


def test_pypdf_garbles_page_2_by_itself() -> None:
    """The defect as pypdf shows it: glyph numbers (code - 29) as characters, glyph 3 as the space."""
    raw = pypdf.PdfReader(GARBLED).pages[1].extract_text()
    assert raw.startswith("5HWULHYDO\x03DXJPHQWHG")
    assert text_quality(raw).garbled


def test_the_pypdf_parser_reads_a_garbled_page_with_pdfplumber_and_says_so() -> None:
    (document,) = load(GARBLED)
    first, second, third = page_texts(document)
    assert first.startswith("Embedding models are trained on pairs of texts")
    assert second == PAGE_2
    assert document.metadata["fallback_pages"] == [2]
    assert document.metadata["load_warning"] == (
        f"pypdf's text was garbled on page 2: read by pdfplumber instead; {PAGE_3_WARNING}"
    )
    assert text_quality(third).garbled
    assert parse_summary(document)["parser"] == "pypdf + pdfplumber"
    assert "fallback_pages" not in document.get_metadata_str("embed")
    assert "fallback_pages" not in document.get_metadata_str("llm")


def test_the_pdfplumber_parser_names_the_glyph_codes_it_cannot_read_and_falls_back_nowhere() -> None:
    (document,) = load(GARBLED, parser="pdfplumber")
    first, second, third = page_texts(document)
    assert second == " ".join(PAGE_2.split("\n"))
    assert third.startswith("(cid:1)(cid:2)")
    assert "fallback_pages" not in document.metadata
    assert document.metadata["load_warning"].startswith("26 glyphs written as (cid:N) on page 3: ")
    assert "garbled text" not in document.metadata["load_warning"]


def test_a_clean_pdf_reads_exactly_as_pypdf_extracts_it() -> None:
    (document,) = load(HANDBOOK_PDF)
    reader = pypdf.PdfReader(HANDBOOK_PDF)
    assert page_texts(document) == [page.extract_text() for page in reader.pages]
    assert "fallback_pages" not in document.metadata
    assert not any(text_quality(text).suspect for text in page_texts(document))


# -- the measures --------------------------------------------------------------------


def test_word_like_tokens_read_like_a_spec() -> None:
    words = [
        "chunk",
        "Chunk,",
        "LlamaIndex",
        "(retrieval)",
        "don't",
        "state-of-the-art",
        "3,072",
        "0.528",
        "Köln",
        "日本語",
    ]
    assert all(is_word_like(token) for token in words)
    junk = ["DXJPHQWHG", "5HWULHYDO", "&KXQN", "VL]H", "eXaMple", "(cid:3)", "\ue000\ue001", "...",
            "Largelanguagemodelsarehandedthepassages"]  # fmt: skip
    assert not any(is_word_like(token) for token in junk)


def test_text_quality_counts_junk_and_words() -> None:
    clean = text_quality("Plain words, 12 of them.")
    assert (clean.junk_share, clean.word_share, clean.words, clean.tokens) == (0.0, 1.0, 5, 5)
    assert text_quality("\ue000\ue001\ue002 words").garbled
    assert text_quality("(cid:12)(cid:7) x").garbled
    assert not text_quality("one stray \ufffd in a long line of ordinary words and more of them here").garbled


def test_the_better_text_must_read_clearly_more_and_not_be_garbled() -> None:
    garbled = "5HWULHYDO\x03DXJPHQWHG\x03JHQHUDWLRQ\x03ILQGV"
    assert better_text(garbled, "Retrieval augmented generation finds")
    assert not better_text(garbled, "(cid:1)(cid:2) ,.A(cid:32) C(cid:2)aA")
    assert not better_text("Retrieval augmented generation finds", "Retrieval augmented generation finds")
    assert not better_text("def f(x): return x", "def f ( x ) : return x")  # code stays as the first extractor read it


def test_a_page_of_code_or_a_markdown_table_is_not_suspect() -> None:
    """Where most tokens hold a letter or a digit, tokens of punctuation alone (operators, prompts, a table's bars
    and rules) are markup: they do not count against a page, which would otherwise be read a second time by
    pdfplumber for nothing (9 pages of a 300-page PDF of READMEs: 0.8 of its 1.8 s)."""
    page = (
        "## Settings\n\nThe table lists the settings this guide compares, one splitter a row.\n\n"
        "| splitter | chunk_size | overlap |\n|----------|-----------:|--------:|\n"
        "| recursive | 1000 | 200 |\n| sentence | 512 | 64 |\n| token | 256 | 32 |\n\n"
        "```python\n>>> nodes = splitter.split(documents)\n>>> len(nodes)\n```\n"
    )
    quality = text_quality(page)
    assert quality.words / quality.tokens < 0.6  # every token counted, it would be suspect
    assert not quality.suspect and not suspect(page)
    shifted = "5HWULHYDO DXJPHQWHG JHQHUDWLRQ ILQGV = | WKH SDVVDJHV"  # glyph numbers keep their letters: suspect
    assert suspect(shifted) and text_quality(shifted).word_share == 0.0
    # Mostly punctuation (capitals shifted to glyph numbers read so): every token counts.
    assert text_quality(". , i ; : ' .").word_share == 1 / 7
    assert suspect("$%& '() *+, -./ is")


def test_garbled_pages_leave_cid_codes_to_their_own_note() -> None:
    assert garbled_pages({1: "clean words", 2: "(cid:3)(cid:4)", 3: "\x01\x02\x03 abc"}) == [3]


@given(st.lists(st.from_regex(r"[a-z]{1,12}", fullmatch=True), min_size=1, max_size=40))
def test_lowercase_prose_is_never_suspect(words: list[str]) -> None:
    quality = text_quality(" ".join(words))
    assert quality.junk_share == 0.0 and quality.word_share == 1.0 and not quality.suspect


@given(st.text(alphabet=st.characters(min_codepoint=0xE000, max_codepoint=0xF8FF), min_size=1))
def test_private_use_text_is_garbled(text: str) -> None:
    assert text_quality(text).garbled


def test_the_pdfplumber_parser_takes_pypdfs_text_for_a_page_only_pypdf_reads() -> None:
    """No font we can write garbles pdfminer and not pypdf, so pypdf's side is a page object that extracts text."""
    from types import SimpleNamespace

    from core.loaders.pdf_garble import repair_garbled_blocks
    from core.loaders.pdf_structure import Block

    good = "Chunks overlap a little.\n\nSo an answer cut at a boundary is whole in one of them."
    reader = SimpleNamespace(pages=[SimpleNamespace(extract_text=lambda: "clean text"),
                                    SimpleNamespace(extract_text=lambda: good)])  # fmt: skip
    pages = [[Block("paragraph", "Clean text")], [Block("paragraph", "\ue001\ue002\ue003 \ue004\ue005")]]
    repaired, replaced = repair_garbled_blocks(reader, pages)
    assert replaced == [2]
    assert repaired[0] is pages[0]
    assert [(b.kind, b.text) for b in repaired[1]] == [
        ("paragraph", "Chunks overlap a little."),
        ("paragraph", "So an answer cut at a boundary is whole in one of them."),
    ]


def test_when_pdfplumber_cannot_read_the_file_pypdfs_text_stays_and_the_garbled_pages_are_named(monkeypatch) -> None:
    from core.loaders import pdf_structure

    def fail(*args, **kwargs):
        raise ValueError("pdfminer could not parse this file")

    monkeypatch.setattr(pdf_structure, "page_text", fail)
    (document,) = load(GARBLED)
    assert "fallback_pages" not in document.metadata
    assert document.metadata["load_warning"].startswith("garbled text on pages 2, 3: ")


@given(
    st.lists(
        st.one_of(
            st.from_regex(r"[a-z]{1,12}[.,]?", fullmatch=True),
            st.from_regex(
                r"[A-Z][a-z]{0,8}|[A-Z]{2,6}|\d{1,4}|\(cid:\d\)|[\ue000-\ue00f]{1,3}|[\x01-\x08]", fullmatch=True
            ),
            st.from_regex(r"[=|#*>`-]{1,4}|[a-z_]{1,8}\([a-z]{0,3}\)", fullmatch=True),  # code and table markup
        ),
        max_size=30,
    )
)
def test_the_quick_suspect_check_agrees_with_the_full_measure(tokens: list[str]) -> None:
    text = " ".join(tokens)
    assert suspect(text) == text_quality(text).suspect


# -- ligatures (issue #44) -------------------------------------------------------


def ligature_pdf(line: bytes) -> bytes:
    """One line of Helvetica whose codes 1 and 2 a ToUnicode map names U+FB01 (ﬁ) and U+FB02 (ﬂ), as a font
    that sets "fi" as one glyph writes it."""
    return mapped_pdf(line, {1: "ﬁ", 2: "ﬂ"})


def mapped_pdf(line: bytes, names: dict[int, str]) -> bytes:
    """One line of Helvetica whose ToUnicode map names the character of each code in ``names``."""
    pairs = b" ".join(b"<%02X> <%04X>" % (code, ord(char)) for code, char in sorted(names.items()))
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Lig def "
        b"1 begincodespacerange <00> <FF> endcodespacerange %d beginbfchar " % len(names)
        + pairs
        + b" endbfchar endcmap CMapName currentdict /CMap defineresource pop end end"
    )
    content = b"BT /F1 12 Tf 72 720 Td (" + line + b") Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /ToUnicode 6 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_the_ligatures_expand_to_their_letters() -> None:
    assert expand_ligatures("ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ") == "ff fi fl ffi ffl st st"
    assert expand_ligatures("classiﬁcation") == "classification"
    assert expand_ligatures("ﬁ") == unicodedata.normalize("NFKC", "ﬁ")
    assert expand_ligatures("æ œ ĳ") == "æ œ ĳ"  # letters of their own, not presentation forms


def test_pypdf_keeps_the_ligature_and_the_loader_writes_its_letters() -> None:
    data = ligature_pdf(b"Classi\x01cation of \x02ows")
    assert pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text() == "Classiﬁcation of ﬂows"
    for parser in ("pypdf", "pdfplumber"):
        (document,) = load_bytes(data, "ligatures.pdf", parser=parser)
        assert document.text == "Classification of flows", parser
        page = document.pages[0]
        assert document.text[page.start_char : page.end_char] == "Classification of flows"


SWAPPED_LINE = "Multicolor Black ink"


def test_text_stored_as_byte_swapped_utf16_reads_as_its_letters_and_is_named() -> None:
    # A ToUnicode map written with its bytes swapped names U+4D00 for "M" (pikepdf's cmyk.pdf): the page reads
    # "䴀甀氀琀椀挀漀氀漀爀 …", CJK-looking text no garble check flags.
    swapped = {ord(char): chr(ord(char) << 8) for char in set(SWAPPED_LINE)}
    data = mapped_pdf(SWAPPED_LINE.encode("ascii"), swapped)
    assert "䴀甀氀琀椀挀漀氀漀爀" in pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text()
    (document,) = load_bytes(data, "swapped.pdf")
    assert " ".join(document.text.split()) == SWAPPED_LINE
    assert "page 1's text is stored byte-swapped" in document.metadata["load_warning"]
    # pdfplumber's blocks of such a page (this hand-made font gives pdfminer no glyph widths, so it is not read
    # through pdfplumber here): every block of the page, table cells too, read back.
    from core.loaders.pdf_assemble import assemble_blocks
    from core.loaders.pdf_structure import Block

    blocks = [Block("paragraph", "䴀甀氀琀椀挀漀氀漀爀 䈀氀愀挀欀"), Block("table", rows=[["䌀礀愀渀", "㄀"]])]
    text, _, _ = assemble_blocks([blocks], ["1"], {})
    assert text.startswith("Multicolor Black\n\n| Cyan | 1 |\n")


def test_text_in_cjk_is_not_taken_for_byte_swapped() -> None:
    from core.loaders.pdf_assemble import byte_swapped, unswap

    assert byte_swapped("䴀甀氀琀椀挀漀氀漀爀 䈀氀愀挀欀") and unswap("䴀甀氀琀椀挀漀氀漀爀 䈀氀愀挀欀") == "Multicolor Black"
    assert not byte_swapped("一丁七万丈三上下不与")  # real CJK: 一 is U+4E00, but the others are not U+XX00
    assert not byte_swapped("一 二 三")  # too few to tell
    assert not byte_swapped("Multicolor Black")
