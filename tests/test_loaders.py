"""Loaders: the real sample documents, literal examples that read like the spec, and broken files.

Broken binary files live in tests/fixtures/ (regenerate with tests/fixtures/make_fixtures.py).
"""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import pypdf
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import unicode_text

from core.errors import (
    ConfigError,
    CorruptDocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    LoadError,
    TooLargeError,
    UnsupportedFileError,
)
from core.limits import DEFAULT_LIMITS
from core.loaders import LOADERS, load, load_bytes, loader_for, pdf_reader
from core.loaders.code import LANGUAGES
from core.loaders.decoding import decode_text
from core.schema import Document, MetadataMode

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def check_spans(document: Document) -> None:
    """The invariants every loader keeps: spans inside the text, pages tiling it in order."""
    text = document.text
    for element in document.elements:
        assert 0 <= element.start_char < element.end_char <= len(text), element
        if element.kind == "table":
            assert element.start_char <= element.attrs["header_end"] <= element.end_char, element
    tables = [e for e in document.elements if e.kind == "table"]
    for row in (e for e in document.elements if e.kind == "table_row"):
        assert any(t.attrs["header_end"] < row.start_char and row.end_char <= t.end_char for t in tables), row
    if document.pages:
        assert document.pages[0].start_char == 0
        assert document.pages[-1].end_char == len(text)
        for before, after in zip(document.pages, document.pages[1:], strict=False):
            assert after.number == before.number + 1
            assert after.start_char == before.end_char + len("\n\n")
            assert text[before.end_char : after.start_char] == "\n\n"


def spans(document: Document, kind: str) -> list[str]:
    return [document.text[e.start_char : e.end_char] for e in document.elements if e.kind == kind]


def load_fixture(name: str, **options) -> Document:
    (document,) = load(FIXTURES / name, **options)
    check_spans(document)
    return document


# -- the registry ---------------------------------------------------------------


def test_every_loader_is_registered_in_order() -> None:
    assert LOADERS.names() == ["text", "markdown", "html", "pdf", "code", "csv", "docx", "pptx", "xlsx", "epub", "json"]


@pytest.mark.parametrize("cls", list(LOADERS), ids=lambda cls: cls.name)
def test_loader_declares_itself(cls) -> None:
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    assert cls.summary and cls.extensions
    for extension in cls.extensions:
        assert extension == extension.lower() and extension.startswith(".")
        assert loader_for(f"some file{extension.upper()}") is cls
    cls.from_params(cls().to_params())  # the declared defaults round-trip


def test_no_extension_is_claimed_twice() -> None:
    extensions = [ext for cls in LOADERS for ext in cls.extensions]
    assert len(extensions) == len(set(extensions))


def test_unknown_extension_is_unsupported_but_text_can_be_forced() -> None:
    with pytest.raises(UnsupportedFileError, match=r"^notes\.xyz: files ending in '\.xyz' are not supported"):
        load_bytes(b"hello", "notes.xyz")
    (document,) = load_bytes(b"hello\n", "LICENSE", loader="text")
    assert document.text == "hello\n"
    assert document.metadata["file_type"] == "text"


def test_declared_params_are_validated() -> None:
    with pytest.raises(ConfigError, match="extraction_mode"):
        LOADERS.create("pdf", extraction_mode="ocr")
    with pytest.raises(ConfigError, match="max_pages must be at least 1"):
        LOADERS.create("pdf", max_pages=0)
    assert LOADERS.create("text", normalize_newlines="false").normalize_newlines is False


# -- the sample documents ---------------------------------------------------------

SAMPLES = {
    "chunking_guide.md": "markdown",
    "rag_handbook.pdf": "pdf",
    "vector_search_faq.html": "html",
    "chunk_stats.py": "code",
    "splitter_benchmarks.csv": "csv",
    "release_notes.txt": "text",
}


@pytest.mark.parametrize("file_name,file_type", SAMPLES.items())
def test_sample_loads_with_valid_spans(sample_docs: Path, file_name: str, file_type: str) -> None:
    (document,) = load(sample_docs / file_name)
    check_spans(document)
    assert document.metadata["file_name"] == file_name
    assert document.metadata["file_type"] == file_type
    assert document.elements, "every sample has structure"
    assert "load_warning" not in document.metadata


def test_sample_directory_loads_every_supported_file(sample_docs: Path) -> None:
    names = {document.metadata["file_name"] for document in load(sample_docs)}
    assert set(SAMPLES) <= names


def test_pdf_pages_hold_what_pypdf_extracts(sample_docs: Path) -> None:
    data = (sample_docs / "rag_handbook.pdf").read_bytes()
    (document,) = load_bytes(data, "rag_handbook.pdf")
    reader = pypdf.PdfReader(io.BytesIO(data))
    assert len(document.pages) == len(reader.pages) == document.metadata["page_count"] == 7
    for page, pdf_page in zip(document.pages, reader.pages, strict=True):
        assert document.text[page.start_char : page.end_char] == pdf_page.extract_text()
    assert [page.label for page in document.pages] == ["1", "2", "3", "4", "5", "6", "7"]
    assert document.metadata["title"] == "Retrieval-Augmented Generation Field Handbook"
    assert document.metadata["author"] == "ChunkScope sample documents"
    assert document.text.startswith("Retrieval-Augmented Generation Field\nHandbook")
    # Paragraph elements carry their page and stay inside it.
    for element in document.elements:
        page = document.pages[element.page - 1]
        assert page.start_char <= element.start_char < element.end_char <= page.end_char
    assert {e.page for e in document.elements} == set(range(1, 8))
    third = document.pages[2]
    assert document.pages_for_span(third.start_char + 5, third.end_char) == [third]


def test_pdf_layout_mode_is_pypdfs_layout_extraction(sample_docs: Path) -> None:
    data = (sample_docs / "rag_handbook.pdf").read_bytes()
    (document,) = load_bytes(data, "rag_handbook.pdf", extraction_mode="layout")
    check_spans(document)
    first = pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text(extraction_mode="layout")
    assert document.text[: document.pages[0].end_char] == first
    assert document.text != load_bytes(data, "rag_handbook.pdf")[0].text


def test_markdown_sample_headings_table_and_code(sample_docs: Path) -> None:
    (document,) = load(sample_docs / "chunking_guide.md")
    source = (sample_docs / "chunking_guide.md").read_text(encoding="utf-8")
    assert document.text == source  # the raw Markdown, not a rendering
    headings = [e for e in document.elements if e.kind == "heading"]
    assert (headings[0].level, headings[0].attrs["title"]) == (1, "A Practical Guide to Chunking for RAG")
    assert document.metadata["title"] == "A Practical Guide to Chunking for RAG"
    by_title = {h.attrs["title"]: h for h in headings}
    assert by_title["Why Chunk Size Matters"].level == 2
    assert by_title["The precision and context trade-off"].level == 3
    why = by_title["Why Chunk Size Matters"]
    assert document.text[why.start_char : why.end_char] == "## Why Chunk Size Matters"
    # Headings in the source outside code fences: 1 h1, 8 h2, 18 h3.
    assert [sum(h.level == n for h in headings) for n in (1, 2, 3)] == [1, 8, 18]

    (table,) = [e for e in document.elements if e.kind == "table"]
    assert table.attrs["header"] == "| Splitter | Boundary rule | Size control | Indexing cost | Typical use |"
    assert document.text[table.start_char : table.attrs["header_end"]].endswith("\n|---|---|---|---|---|")
    rows = spans(document, "table_row")
    assert len(rows) == 9
    assert rows[0] == "| Character | One fixed separator | Approximate | Very low | Quick baselines, logs |"
    assert rows[-1].startswith("| Code-aware |")

    code = [e for e in document.elements if e.kind == "code"]
    assert len(code) == 3 and {e.attrs["language"] for e in code} == {"python"}
    assert document.text[code[0].start_char : code[0].end_char].startswith("```python\n")


def test_html_sample_is_visible_text_with_structure(sample_docs: Path) -> None:
    (document,) = load(sample_docs / "vector_search_faq.html")
    text = document.text
    assert document.metadata["title"] == "Vector Search and Chunk Retrieval: Frequently Asked Questions"
    assert "font-family" not in text and "<" not in text.replace("<=", "")  # no CSS, no tags
    assert text.startswith("Vector Search and Chunk Retrieval: Frequently Asked Questions\n\nThis page collects")
    headings = [(e.level, text[e.start_char : e.end_char]) for e in document.elements if e.kind == "heading"]
    assert headings[:3] == [
        (1, "Vector Search and Chunk Retrieval: Frequently Asked Questions"),
        (2, "Basics"),
        (3, "What exactly is stored in a vector index?"),
    ]
    (table,) = [e for e in document.elements if e.kind == "table"]
    assert table.attrs["header"] == "Metric | Range | Higher means | Notes"
    assert text[table.start_char : table.attrs["header_end"]] == "Metric | Range | Higher means | Notes"
    rows = spans(document, "table_row")
    assert rows[0] == "Cosine similarity | -1 to 1 | More similar | Ignores vector length; the common default."
    assert len(rows) == 4
    (code,) = spans(document, "code")
    assert code.startswith("import math\n\ndef cosine(a, b):\n    dot = sum(x * y for x, y in zip(a, b))")
    items = spans(document, "list_item")
    assert items[0] == "The query text is embedded with the same model that embedded the chunks."


def test_code_sample_is_the_file_with_its_language(sample_docs: Path) -> None:
    (document,) = load(sample_docs / "chunk_stats.py")
    assert document.text == (sample_docs / "chunk_stats.py").read_text(encoding="utf-8")
    assert document.metadata["language"] == "python"
    assert spans(document, "code")[0].startswith('"""Summary statistics for a list of text chunks.')


def test_csv_sample_rows(sample_docs: Path) -> None:
    (document,) = load(sample_docs / "splitter_benchmarks.csv")
    assert document.metadata["row_count"] == 30
    assert document.metadata["columns"] == (
        "splitter,chunk_size,chunk_overlap,num_chunks,mean_tokens,hit_rate_at_5,mrr,token_iou"
    )
    (table,) = [e for e in document.elements if e.kind == "table"]
    assert table.attrs["header"] == document.metadata["columns"]
    rows = spans(document, "table_row")
    assert rows[0] == "character,128,0,1822,109.8,0.528,0.391,0.431"
    assert rows[-1] == "hierarchical,2048,0,326,614.3,0.850,0.630,0.181"


def test_text_sample_paragraphs(sample_docs: Path) -> None:
    (document,) = load(sample_docs / "release_notes.txt")
    paragraphs = spans(document, "paragraph")
    assert len(paragraphs) == 11
    assert paragraphs[0] == "Knowledge Assistant Retrieval Pipeline - Release Notes, Version 2.4"
    assert paragraphs[-1].startswith("Rollout.")


# -- literal examples: bytes in, text and elements out ---------------------------------


def test_text_paragraphs_are_blank_line_separated_blocks() -> None:
    (document,) = load_bytes(b"  First para\nline two\n\n\n\tSecond  \n", "a.txt")
    assert document.text == "  First para\nline two\n\n\n\tSecond  \n"
    assert spans(document, "paragraph") == ["First para\nline two", "Second"]
    assert document.metadata == {"file_name": "a.txt", "file_type": "text", "encoding": "utf-8"}


@pytest.mark.parametrize(
    "data,normalized,paragraphs",
    [
        (b"a\r\nb\r\n\r\nc", "a\nb\n\nc", ["a\r\nb", "c"]),
        (b"a\rb\r\rc", "a\nb\n\nc", ["a\rb", "c"]),
        (b"a\r\nb\n\rc", "a\nb\n\nc", ["a\r\nb", "c"]),
    ],
    ids=["crlf", "lone-cr", "mixed"],
)
def test_line_breaks_are_normalized_unless_asked_not_to(data: bytes, normalized: str, paragraphs: list[str]) -> None:
    (document,) = load_bytes(data, "a.txt")
    assert document.text == normalized
    (raw,) = load_bytes(data, "a.txt", normalize_newlines=False)
    assert raw.text == data.decode()
    assert spans(raw, "paragraph") == paragraphs
    check_spans(raw)


def test_markdown_literal_example() -> None:
    source = (
        "# Title\n"
        "\n"
        "Intro *text*.\n"
        "\n"
        "## Setup\n"
        "\n"
        "- one\n"
        "- two\n"
        "\n"
        "| a | b |\n"
        "|---|:-:|\n"
        "| 1 | 2 |\n"
        "| 3 | 4 |\n"
        "\n"
        "```sh\n"
        "make run\n"
        "```\n"
        "Setext *heading*\n"
        "----------------\n"
    )
    (document,) = load_bytes(source.encode(), "guide.md")
    got = [(e.kind, e.level, document.text[e.start_char : e.end_char]) for e in document.elements]
    assert got == [
        ("heading", 1, "# Title"),
        ("paragraph", None, "Intro *text*."),
        ("heading", 2, "## Setup"),
        ("list_item", None, "- one"),
        ("list_item", None, "- two"),
        ("table", None, "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |"),
        ("table_row", None, "| 1 | 2 |"),
        ("table_row", None, "| 3 | 4 |"),
        ("code", None, "```sh\nmake run\n```"),
        ("heading", 2, "Setext *heading*\n----------------"),
    ]
    table = document.elements[5]
    assert table.attrs == {"header": "| a | b |", "header_end": source.index("|:-:|") + len("|:-:|")}
    assert document.elements[8].attrs == {"language": "sh"}
    assert document.elements[-1].attrs == {"title": "Setext heading"}
    assert document.metadata["title"] == "Title"


def test_markdown_spans_survive_crlf_when_kept() -> None:
    source = b"# A\r\n\r\n| x |\r\n|---|\r\n| 1 |\r\n"
    (document,) = load_bytes(source, "a.md", normalize_newlines=False)
    assert document.text == source.decode()
    assert spans(document, "table_row") == ["| 1 |"]
    assert spans(document, "heading") == ["# A"]


def test_html_literal_example() -> None:
    html = (
        "<html><head><title>The  Page</title><style>p { color: red }</style></head><body>"
        "<h1>Main</h1><p>Some <b>bold</b>\n  text.<br>Next line</p>"
        "<ul><li>one</li><li>two<ul><li>inner</li></ul></li></ul>"
        "<pre class='language-python'>\ndef f():\n    return 1\n</pre>"
        "<table><thead><tr><th>k</th><th>v</th></tr></thead>"
        "<tbody><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></tbody></table>"
        "</body></html>"
    )
    (document,) = load_bytes(html.encode(), "page.html")
    assert document.text == (
        "Main\n\nSome bold text.\nNext line\n\none\ntwo\ninner\n\ndef f():\n    return 1\n\nk | v\na | 1\nb | 2"
    )
    got = [(e.kind, e.level, document.text[e.start_char : e.end_char]) for e in document.elements]
    assert got == [
        ("heading", 1, "Main"),
        ("paragraph", None, "Some bold text.\nNext line"),
        ("list_item", None, "one"),
        ("list_item", None, "two"),
        ("list_item", None, "inner"),
        ("code", None, "def f():\n    return 1"),
        ("table", None, "k | v\na | 1\nb | 2"),
        ("table_row", None, "a | 1"),
        ("table_row", None, "b | 2"),
    ]
    assert document.elements[5].attrs == {"language": "python"}
    assert document.elements[6].attrs == {"header": "k | v", "header_end": document.text.index("k | v") + 5}
    assert document.metadata["title"] == "The Page"


def test_html_without_thead_takes_the_first_row_as_header() -> None:
    (document,) = load_bytes(b"<table><tr><td>h1<td>h2<tr><td>x<td>y</table><p>after</p>", "t.html")
    assert document.text == "h1 | h2\nx | y\n\nafter"
    (table,) = [e for e in document.elements if e.kind == "table"]
    assert table.attrs["header"] == "h1 | h2"
    assert spans(document, "table_row") == ["x | y"]


def test_html_shows_no_script_code() -> None:
    html = (
        b"<p>Safe <img src=x onerror=\"alert('img')\"> text</p>"
        b"<script>document.write('script-code')</script>"
        b"<a href=\"javascript:alert('link')\">a link</a>"
        b"<style>.x { background: url(javascript:alert('css')) }</style>"
        b"<noscript>noscript-text</noscript><template><p>template-text</p></template>"
        b"<iframe srcdoc='<p>frame</p>'>iframe-text</iframe><svg><text>svg-text</text></svg>"
        b'<div hidden>hidden-text</div><p onclick="steal()">end</p>'
    )
    (document,) = load_bytes(html, "evil.html")
    assert document.text == "Safe text\n\na link\n\nend"
    for fragment in (
        "alert",
        "javascript",
        "script",
        "background",
        "template",
        "iframe",
        "svg-text",
        "hidden",
        "steal",
    ):
        assert fragment not in document.text


def test_html_nested_10000_levels_deep_loads() -> None:
    html = "<div><span>" * 10_000 + "deep text" + "</span></div>" * 10_000
    (document,) = load_bytes(html.encode(), "deep.html")
    assert document.text == "deep text"
    unclosed = "<ul><li>" * 10_000 + "x"
    (document,) = load_bytes(unclosed.encode(), "unclosed.html")
    assert document.text == "x"


@pytest.mark.parametrize("extension,language", LANGUAGES.items())
def test_code_language_comes_from_the_extension(extension: str, language: str) -> None:
    (document,) = load_bytes(b"x = 1\n\ny = 2\n", f"source{extension}")
    assert document.metadata["language"] == language
    assert document.metadata["file_type"] == "code"
    assert spans(document, "code") == ["x = 1", "y = 2"]
    assert document.elements[0].attrs == {"language": language}


def test_csv_literal_example_with_quoted_newline_and_ragged_rows() -> None:
    document = load_fixture("ragged.csv")
    assert document.text == 'name,size,note\na,1,"two\nlines"\nb,2\nc,3,x,extra\n'
    assert spans(document, "table_row") == ['a,1,"two\nlines"', "b,2", "c,3,x,extra"]
    (table,) = [e for e in document.elements if e.kind == "table"]
    assert table.attrs["header"] == "name,size,note"
    assert table.attrs["header_end"] == len("name,size,note")
    assert document.metadata["row_count"] == 3
    assert document.metadata["columns"] == "name,size,note"
    assert document.metadata["load_warning"] == "data rows 2, 3 have a different number of fields than the header (3)"


def test_csv_cell_larger_than_csvs_own_field_limit_loads() -> None:
    """csv refuses fields over 128 KiB by default; here only the character limit bounds a cell."""
    cell = "x" * 200_000
    (document,) = load_bytes(f'id,body\n1,"{cell}"\n2,short\n'.encode(), "wide.csv")
    assert [len(row) for row in spans(document, "table_row")] == [len(f'1,"{cell}"'), len("2,short")]
    assert document.metadata["row_count"] == 2


@pytest.mark.parametrize(
    "data,file_name,delimiter",
    [
        (b"a;b\n1;2\n3;4\n", "semi.csv", ";"),
        (b"a\tb\n1\t2\n", "tabs.tsv", "\t"),
        (b"only\none\ncolumn\n", "single.csv", ","),
    ],
)
def test_csv_delimiter_is_sniffed(data: bytes, file_name: str, delimiter: str) -> None:
    (document,) = load_bytes(data, file_name)
    assert document.elements[0].attrs["delimiter"] == delimiter
    assert document.metadata["row_count"] == len(data.splitlines()) - 1


# -- encodings ------------------------------------------------------------------


@pytest.mark.parametrize(
    "fixture,text,encoding,warning",
    [
        ("cp1252.txt", "Déjà vu: the “smart quotes” and café crème of a Windows editor.\n", "cp1252", "decoded as cp1252, not UTF-8"),
        ("latin1.txt", "Grüße aus Köln, schöne Straße.\n", "cp1252", "decoded as cp1252, not UTF-8"),
        ("utf16_bom.txt", "UTF-16 with a byte-order mark: naïve.\n", "utf-16-le", None),
        ("utf32_bom.txt", "UTF-32 with a mark.\n", "utf-32-le", None),
        ("utf16le_nobom.txt", "UTF-16 little endian, no mark.\n", "utf-16-le", "decoded as utf-16-le (no byte-order mark), not UTF-8"),
        ("utf16be_nobom.txt", "UTF-16 big endian, no mark.\n", "utf-16-be", "decoded as utf-16-be (no byte-order mark), not UTF-8"),
    ],
)  # fmt: skip
def test_encodings_are_detected(fixture: str, text: str, encoding: str, warning: str | None) -> None:
    document = load_fixture(fixture)
    assert document.text == text
    assert document.metadata["encoding"] == encoding
    assert document.metadata.get("load_warning") == warning
    # How a file was decoded is not what the models should read.
    assert "encoding" not in document.get_metadata_str(MetadataMode.EMBED)
    assert "load_warning" not in document.get_metadata_str(MetadataMode.LLM)


@pytest.mark.parametrize(
    "head,encoding,warning",
    [
        ('<meta charset="windows-1251">', "cp1251", "decoded as cp1251 (declared in the file), not UTF-8"),
        ('<meta http-equiv="Content-Type" content="text/html; charset=KOI8-R">', "koi8_r", None),
        ('<meta charset="utf-16">', None, None),  # an ASCII page cannot be UTF-16: ignored
        ('<meta charset="hex">', None, None),  # not a text encoding: ignored
    ],
)
def test_html_declared_charset_is_tried_before_guessing(head: str, encoding: str | None, warning: str | None) -> None:
    body = "<p>Привет, мир: это проверка кодировки страницы.</p>"
    declared = encoding or "cp1251"
    (document,) = load_bytes((head + body).encode(declared), "ru.html")
    if encoding is not None:
        assert document.text == "Привет, мир: это проверка кодировки страницы."
        assert document.metadata["encoding"] == encoding
        assert document.metadata["load_warning"] == (
            warning or f"decoded as {encoding} (declared in the file), not UTF-8"
        )
    else:  # charset-normalizer decides
        assert "(declared in the file)" not in document.metadata["load_warning"]


def test_utf8_bom_is_dropped() -> None:
    assert decode_text(b"\xef\xbb\xbfhello", "bom.txt") == ("hello", "utf-8-sig", None, 0)


# UTF-8 with a few bytes that are not UTF-8 (a damaged download, a pasted fragment) is UTF-8 with
# each bad byte replaced by U+FFFD; a code page is a better reading only when it loses nothing.
@pytest.mark.parametrize(
    "data,text,encoding,replaced",
    [
        ("café naïve".encode() + b"\x81", "café naïve\ufffd", "utf-8", 1),
        ("fox 日本 ".encode() + b"\x81", "fox 日本 \ufffd", "utf-8", 1),
        # A cut-off character is two bad bytes; the characters around it are intact.
        ("Grüße ".encode() + "日".encode()[:2] + " aus Köln".encode(), "Grüße \ufffd\ufffd aus Köln", "utf-8", 2),
        # cp1252 has no character at 0x81, so nothing reads this better than UTF-8 does.
        (b"plain ASCII and one stray \x81 byte", "plain ASCII and one stray \ufffd byte", "utf-8", 1),
        (b"\xef\xbb\xbfa byte-order mark, then a stray \xff", "a byte-order mark, then a stray \ufffd", "utf-8-sig", 1),
        # No multibyte characters, and cp1252 reads every high byte as a letter: a Windows editor's "café".
        (b"caf\xe9 cr\xe8me", "café crème", "cp1252", 0),
    ],
)
def test_a_few_invalid_bytes_in_utf8_are_replaced(data: bytes, text: str, encoding: str, replaced: int) -> None:
    warning = (
        f"replaced {replaced} invalid UTF-8 byte{'s' if replaced > 1 else ''} with \ufffd"
        if replaced
        else (f"decoded as {encoding}, not UTF-8")
    )
    assert decode_text(data, "x.txt") == (text, encoding, warning, replaced)


@pytest.mark.parametrize(
    "text,encoding",
    [
        ("吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所で泣いていた。", "shift_jis"),
        ("吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所で泣いていた。", "euc_jp"),
        ("天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。", "gb18030"),
        ("天下大勢，分久必合，合久必分。周末七國分爭，並入於秦。及秦滅之後，楚、漢分爭，又並入於漢。", "big5"),
        ("대한민국은 민주공화국이다. 대한민국의 주권은 국민에게 있고, 모든 권력은 국민으로부터 나온다.", "euc_kr"),
        ("Все счастливые семьи похожи друг на друга, каждая несчастливая семья несчастлива по-своему.", "cp1251"),
    ],
)  # fmt: skip
def test_legacy_code_pages_are_still_guessed(text: str, encoding: str) -> None:
    """Their bytes form a valid UTF-8 character now and then, far fewer than the bytes UTF-8 rejects."""
    decoded, _, warning, replaced = decode_text(text.encode(encoding), "legacy.txt")
    assert decoded == text
    assert warning is not None and warning.startswith("decoded as ")
    assert replaced == 0


@st.composite
def utf8_with_stray_bytes(draw: st.DrawFn) -> tuple[str, bytes]:
    """Valid UTF-8 text, and its bytes with a few non-ASCII bytes inserted between characters.

    A few: up to three, or up to as many as the text has non-ASCII characters. The inserted
    bytes are 0x80-0xFF, the ones that can be invalid UTF-8 (NUL makes a file binary or UTF-16).
    """
    text = draw(st.one_of(unicode_text(), st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"))))
    text = text.lstrip("\ufeff")  # a leading byte-order mark is not text
    if not text.strip():
        text += "x"
    limit = max(3, sum(1 for char in text if char > "\x7f"))
    pieces = [char.encode() for char in text]
    for _ in range(draw(st.integers(1, limit))):
        stray = bytes([draw(st.integers(0x80, 0xFF))])
        pieces.insert(draw(st.integers(0, len(pieces))), stray)
    return text, b"".join(pieces)


@given(utf8_with_stray_bytes())
def test_utf8_with_stray_bytes_keeps_every_character(case: tuple[str, bytes]) -> None:
    text, data = case
    decoded = decode_text(data, "damaged.txt")[0]
    remaining = iter(decoded)
    assert all(char in remaining for char in text), (text, decoded)  # in order


@pytest.mark.parametrize("loader", ["text", "markdown", "html", "code", "csv"])
def test_every_text_loader_records_the_replaced_bytes(loader: str) -> None:
    data = "Ünïcode text with one stray byte: ".encode() + b"\x81.\n"
    (document,) = load_bytes(data, "file", loader=loader)
    assert "Ünïcode text with one stray byte: \ufffd." in document.text
    assert document.metadata["encoding"] == "utf-8"
    assert document.metadata["replaced_bytes"] == 1
    assert document.metadata["load_warning"] == "replaced 1 invalid UTF-8 byte with \ufffd"
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        assert "replaced" not in document.get_metadata_str(mode)


@pytest.mark.parametrize(
    "data,problem",
    [
        (b"\xef\xbb\xbf", "is empty"),
        (b"\xff\xfe", "is empty"),
        (" \n \t".encode("utf-16"), "contains only whitespace"),
        (" \n  ".encode("utf-16-le"), "contains only whitespace"),
    ],
)
def test_a_byte_order_mark_alone_is_empty(data: bytes, problem: str) -> None:
    with pytest.raises(EmptyDocumentError, match=rf"^x\.txt: {problem}$"):
        decode_text(data, "x.txt")


@pytest.mark.parametrize("loader", ["text", "markdown", "html", "code", "csv"])
def test_every_text_loader_decodes_through_the_same_fallback(loader: str) -> None:
    data = "Déjà vu, a café crème, naïve “quotes”.\n".encode("cp1252")
    (document,) = load_bytes(data, "file", loader=loader)
    assert "Déjà vu" in document.text
    assert document.metadata["load_warning"] == "decoded as cp1252, not UTF-8"


# -- broken inputs ---------------------------------------------------------------


@pytest.mark.parametrize(
    "fixture,error,message",
    [
        ("empty.txt", EmptyDocumentError, "empty.txt: is empty"),
        ("whitespace.txt", EmptyDocumentError, "whitespace.txt: contains only whitespace"),
        ("binary.txt", CorruptDocumentError, "binary.txt: looks like binary data, not text"),
        ("nul_bytes.txt", CorruptDocumentError, "nul_bytes.txt: looks like binary data, not text"),
        ("encrypted.pdf", EncryptedDocumentError, "encrypted.pdf: is encrypted and cannot be read without its"),
        ("encrypted_aes.pdf", EncryptedDocumentError, "encrypted_aes.pdf: is encrypted and cannot be read without"),
        ("blank.pdf", EmptyDocumentError, "blank.pdf: has no text layer, and no page image for OCR to read"),
        ("truncated.pdf", CorruptDocumentError, "truncated.pdf: is not a readable PDF"),
        ("looped_pages.pdf", CorruptDocumentError, "looped_pages.pdf: is not a readable PDF"),
    ],
)
def test_broken_files_raise_a_typed_error_naming_the_file(fixture: str, error: type, message: str) -> None:
    with pytest.raises(error) as caught:
        load(FIXTURES / fixture)
    assert str(caught.value).startswith(message)
    assert str(caught.value).count(". ") == 0  # one sentence


@pytest.mark.parametrize("cls", list(LOADERS), ids=lambda cls: cls.name)
@pytest.mark.parametrize("data", [b"", b" \n\t \r\n"], ids=["empty", "whitespace"])
def test_every_loader_refuses_empty_input(cls, data: bytes) -> None:
    with pytest.raises(EmptyDocumentError, match=rf"^nothing{re.escape(cls.extensions[0])}: "):
        cls().load_bytes(data, f"nothing{cls.extensions[0]}")


@pytest.mark.parametrize("cls", [cls for cls in LOADERS if cls.name not in ("pdf", "docx", "pptx", "xlsx", "epub")], ids=lambda cls: cls.name)
def test_every_text_loader_refuses_binary_data(cls) -> None:
    data = (FIXTURES / "binary.txt").read_bytes()
    with pytest.raises(CorruptDocumentError, match="looks like binary data, not text"):
        cls().load_bytes(data, f"image{cls.extensions[0]}")


def test_html_with_no_visible_text_is_empty() -> None:
    with pytest.raises(EmptyDocumentError, match=r"^blank\.html: has no visible text$"):
        load_bytes(b"<html><head><title>t</title></head><body><script>x()</script></body></html>", "blank.html")


@pytest.mark.parametrize("fixture", ["owner_only.pdf", "owner_only_aes.pdf"])
def test_pdf_with_an_empty_user_password_is_opened(fixture: str) -> None:
    document = load_fixture(fixture)
    assert document.text == "Alpha page one text.\n\nBeta page two text."


def test_pdf_pages_without_text_are_listed_in_a_warning() -> None:
    document = load_fixture("partly_blank.pdf")
    assert document.metadata["page_count"] == 3
    assert document.metadata["load_warning"] == "no text on page 2"
    assert [(p.start_char, p.end_char) for p in document.pages] == [(0, 20), (22, 22), (24, 43)]
    assert document.text == "Alpha page one text.\n\n\n\nBeta page two text."
    assert [e.page for e in document.elements] == [1, 3]


def test_pdf_beyond_max_pages_is_too_large() -> None:
    with pytest.raises(TooLargeError, match=r"^two_pages\.pdf: has 2 pages, more than max_pages=1$"):
        load(FIXTURES / "two_pages.pdf", max_pages=1)
    assert load(FIXTURES / "two_pages.pdf", max_pages=2)[0].metadata["page_count"] == 2


def test_readme_states_every_limit_with_its_unit() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Limits and safety\n", 1)[1].split("\n## ", 1)[0]
    pdf = LOADERS.get_class("pdf")()
    for stated in (
        f"({DEFAULT_LIMITS.max_upload_bytes:,} bytes)",
        f"{DEFAULT_LIMITS.max_text_chars:,} characters",
        f"{DEFAULT_LIMITS.max_nodes:,}, for every splitter and engine",
        f"{DEFAULT_LIMITS.max_embed_chars:,} characters per split",
        f"**PDF pages:** {pdf.max_pages:,}, counted before any page is read",
        f"{pdf.max_content_mb} MiB ({pdf.max_content_mb * pdf_reader.MB:,} bytes)",
    ):
        assert stated in section


def test_every_load_error_names_its_file() -> None:
    for fixture in FIXTURES.iterdir():
        if fixture.suffix == ".py":
            continue
        try:
            load(fixture)
        except LoadError as exc:
            assert exc.file_name == fixture.name
            assert str(exc).startswith(f"{fixture.name}: ")


def test_the_extensions_table_is_what_the_loaders_read_and_listing_imports_no_parser() -> None:
    """Each loader takes its extensions from a table, so listing a folder imports no parser."""
    import subprocess
    import sys

    from core.loaders.registry import FOLDER_EXTENSIONS, FORMAT_EXTENSIONS, LOADERS

    expected = set()
    for cls in LOADERS:
        expected.update(cls.extensions if cls.folder_extensions is None else cls.folder_extensions)
    assert set(FOLDER_EXTENSIONS) == expected
    assert ".json" not in FOLDER_EXTENSIONS
    assert FORMAT_EXTENSIONS == {name: LOADERS.get_class(name).extensions for name in FORMAT_EXTENSIONS}
    from core.loaders.code import LANGUAGES

    assert set(FORMAT_EXTENSIONS["code"]) == set(LANGUAGES)  # every code extension has its language
    assert list(FORMAT_EXTENSIONS) == [cls.name for cls in LOADERS]
    # Listing a folder imports no parser; finding a Markdown file's loader imports Markdown's alone.
    code = (
        "import sys; import core.loaders as l; l.folder_extensions(); print(any('pypdf' in m for m in sys.modules)); "
        "print(l.loader_for('a/B.MD').name, any('pypdf' in m or 'docx' in m for m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "markdown", "False"]
    for extension in sorted(expected | {".json"}):
        assert extension in loader_for(f"x{extension}").extensions
