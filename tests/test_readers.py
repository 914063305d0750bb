"""Reader engines: LlamaIndex's SimpleDirectoryReader, LangChain's loaders and markitdown as a loader's ``reader``.

The spec: the Document's text is the framework's own text (its pieces joined by a
blank line, each page's span holding exactly what the framework gave for it), its
metadata the framework's (less the temporary copy's path and dates), its parser
named with the framework's version; a reader that cannot run says why; every
framework read happens in a bounded child, after the zip bounds.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ConfigError, LoadError, TooLargeError, WorkTimeoutError
from core.limits import Limits
from core.loaders import LOADERS, load, load_bytes
from core.loaders.readers import READER_NAMES, UNAVAILABLE_READERS, reader_engine, readers
from core.loaders.readers.base import joined_pieces

FIXTURES = Path(__file__).parent / "fixtures"


def _framework_pages_of_pdf(path: Path) -> list[str]:
    from langchain_community.document_loaders import PyPDFLoader

    return [page.page_content for page in PyPDFLoader(str(path)).load()]


def test_every_loader_offers_the_reader_choice_once_declared():
    for cls in LOADERS:
        spec = next(spec for spec in cls.params() if spec.name == "reader")
        assert spec.default == "chunkscope"
        assert spec.choices == ("chunkscope", *READER_NAMES)


def test_langchain_reads_a_pdf_page_by_page_and_each_page_span_is_the_framework_text(sample_docs):
    path = sample_docs / "rag_handbook.pdf"
    (document,) = load(path, reader="langchain")
    pages = _framework_pages_of_pdf(path)
    assert [document.text[page.start_char : page.end_char] for page in document.pages] == pages
    assert document.text == "\n\n".join(pages)
    assert document.metadata["source"] == "rag_handbook.pdf"  # the file, not the temporary copy
    assert document.metadata["total_pages"] == len(pages)
    assert "page" not in document.metadata  # it differs by page: it is the pages' business
    assert document.metadata["parser"].startswith("LangChain PyPDFLoader · langchain-community 0.")
    assert "parser" in document.excluded_llm_metadata_keys


def test_llamaindex_keeps_simpledirectoryreaders_metadata_and_exclusions_less_the_temporary_copys_dates(sample_docs):
    (document,) = load(sample_docs / "rag_handbook.pdf", reader="llamaindex")
    assert document.metadata["file_name"] == "rag_handbook.pdf"
    assert document.metadata["file_path"] == "rag_handbook.pdf"
    assert document.metadata["file_type"] == "application/pdf"
    assert "creation_date" not in document.metadata and "last_modified_date" not in document.metadata
    assert [page.label for page in document.pages] == [str(n) for n in range(1, 8)]
    assert "file_name" in document.excluded_embed_metadata_keys  # SimpleDirectoryReader's own exclusion
    assert "PDFReader" in document.metadata["parser"]


def test_markitdown_reads_a_docx_as_markdown_with_its_headings_and_table_found(sample_docs):
    (document,) = load(sample_docs / "parsing_office_files.docx", reader="markitdown")
    headings = [e for e in document.elements if e.kind == "heading"]
    tables = [e for e in document.elements if e.kind == "table"]
    assert document.text.startswith("# Parsing Office Files for Retrieval")
    assert headings[0].level == 1 and document.text[headings[0].start_char : headings[0].end_char].startswith("# ")
    assert len(tables) == 1 and document.text[tables[0].start_char : tables[0].end_char].startswith("|")


def test_an_untrusted_file_name_never_reaches_the_disk_and_names_the_document(sample_docs):
    name = "../../etc/evil name $(rm -rf).pdf"
    (document,) = load_bytes((sample_docs / "rag_handbook.pdf").read_bytes(), name, reader="langchain")
    assert document.metadata["source"] == name and document.metadata["file_name"] == name


def test_a_format_a_reader_cannot_read_here_is_refused_with_the_reason():
    with pytest.raises(ConfigError, match="UnstructuredPowerPointLoader, which needs the unstructured package"):
        LOADERS.create("pptx", reader="langchain")
    with pytest.raises(ConfigError, match="UnstructuredEPubLoader, which needs the unstructured package"):
        LOADERS.create("epub", reader="langchain")
    rows = {row["name"]: row for row in readers()}
    assert rows["langchain"]["reads"][".pdf"] == "PyPDFLoader"
    assert "unstructured" in rows["langchain"]["refused"][".xlsx"]
    assert rows["docling"]["unavailable_reason"] == UNAVAILABLE_READERS["docling"]
    assert "AGPL" in rows["pymupdf4llm"]["unavailable_reason"]


def test_llamaindex_reads_an_epub_with_its_epub_reader_chapter_by_chapter(tmp_path):
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("chunkscope-test")
    book.set_title("Chunking notes")
    chapters = []
    for name, body in (("one", "<h1>Chunking</h1><p>Small chunks lose context.</p>"), ("two", "<h1>Overlap</h1><p>Overlap keeps a sentence whole.</p>")):
        chapter = epub.EpubHtml(title=name.title(), file_name=f"{name}.xhtml", lang="en")
        chapter.content = body
        book.add_item(chapter)
        chapters.append(chapter)
    book.toc = tuple(chapters)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *chapters]
    path = tmp_path / "notes.epub"
    epub.write_epub(str(path), book)

    (document,) = load_bytes(path.read_bytes(), "notes.epub", reader="llamaindex")
    # EpubReader's own text: each chapter through html2text, in spine order, then the navigation page.
    assert document.text.startswith("# Chunking\n\nSmall chunks lose context.\n\n\n# Overlap\n\nOverlap keeps a sentence whole.")
    assert "(EpubReader)" in document.metadata["parser"]


def test_the_zip_bounds_hold_before_any_framework_unpacks_the_file():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for index in range(5):
            archive.writestr(f"word/part{index}.xml", "<w/>")
    with pytest.raises(TooLargeError, match="max_zip_entries=2"):
        load_bytes(buffer.getvalue(), "bomb.docx", reader="markitdown", max_zip_entries=2)


def test_a_framework_read_runs_in_a_child_stopped_at_the_load_deadline(sample_docs):
    data = (sample_docs / "rag_handbook.pdf").read_bytes()
    with pytest.raises(WorkTimeoutError):
        load_bytes(data, "rag_handbook.pdf", reader="markitdown", limits=Limits(load_seconds=0.1))


def test_the_framework_error_is_a_sentence_naming_the_file_and_the_reader():
    with pytest.raises(Exception, match=r"^broken\.pdf: LangChain PyPDFLoader could not read it: "):
        load_bytes(b"%PDF-1.4 not really a pdf", "broken.pdf", reader="langchain")


@pytest.mark.parametrize("name", READER_NAMES)
def test_every_reader_reads_markdown_as_the_files_own_text(sample_docs, name):
    (document,) = load(sample_docs / "chunking_guide.md", reader=name)
    assert document.text == (sample_docs / "chunking_guide.md").read_text(encoding="utf-8")
    assert reader_engine(name).version() in document.metadata["parser"]


_META = st.dictionaries(
    st.sampled_from(["page", "page_label", "source", "title", "file_path", "creation_date", "n"]),
    st.one_of(st.integers(0, 9), st.text(max_size=5), st.lists(st.integers(), max_size=2)),
    max_size=4,
)


@given(st.lists(st.tuples(st.text(max_size=30), _META), min_size=1, max_size=6))
def test_joined_pieces_keep_each_piece_at_its_span_and_only_the_metadata_every_piece_shares(raw):
    pieces = [(text, meta, [], []) for text, meta in raw]
    text, metadata, pages, _, _ = joined_pieces(pieces, "f.pdf")
    assert text == "\n\n".join(piece[0] for piece in pieces)
    if pages:
        assert [text[start:end] for start, end, _ in pages] == [piece[0] for piece in pieces]
    assert metadata["file_name"] == "f.pdf" and "creation_date" not in metadata
    for key, value in metadata.items():
        if key not in ("file_name", "source", "file_path"):
            assert all(piece[1].get(key) == value for piece in pieces)
            assert isinstance(value, str | int | float | bool)
    for key in ("source", "file_path"):
        assert metadata.get(key, "f.pdf") == "f.pdf"


@settings(max_examples=12, deadline=None)
@given(
    st.sampled_from([("langchain", ".pdf"), ("llamaindex", ".pdf"), ("markitdown", ".docx"), ("langchain", ".html")]),
    st.binary(max_size=300),
)
def test_any_bytes_through_a_framework_reader_load_or_raise_a_load_error_naming_the_file(reader_and_suffix, data):
    reader, suffix = reader_and_suffix
    file_name = f"fuzzed{suffix}"
    try:
        documents = load_bytes(data, file_name, reader=reader)
    except LoadError as exc:
        assert exc.file_name == file_name
        return
    for document in documents:
        assert document.text.strip() and document.metadata["file_name"] == file_name
        assert all(0 <= page.start_char <= page.end_char <= len(document.text) for page in document.pages)


def test_simpledirectoryreaders_skipped_file_is_said_to_be_skipped():
    with pytest.raises(LoadError, match="read no text from it .SimpleDirectoryReader skips"):
        load_bytes(b"%PDF-1.4 not really a pdf", "broken.pdf", reader="llamaindex")


def test_the_parser_benchmark_counts_a_files_words_not_the_labels_readers_write_around_them():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import parsers

    markitdown = "<!-- Slide number: 1 -->\n# Revenue\n![Quarterly revenue chart](Picture2.jpg)\n"
    llamaindex = "Title: Revenue\n-----\nRevenue\n[Speaker Notes]: quarterly"
    assert parsers.words(markitdown) == {"revenue", "quarterly"}  # the alt text is the file's; its image name is not
    assert parsers.words(llamaindex) == {"revenue", "quarterly"}
    assert [label for label, _ in parsers.readers_for(".pdf")] == [
        "chunkscope", "chunkscope pdfplumber", "llamaindex", "langchain", "markitdown"
    ]  # fmt: skip
    assert "langchain" not in [label for label, _ in parsers.readers_for(".pptx")]


@pytest.mark.parametrize("reader", ["langchain", "llamaindex"])
def test_a_frameworks_garbled_pdf_pages_are_named_in_a_warning_never_shown_silently(reader):
    (document,) = load(FIXTURES / "garbled_layer.pdf", reader=reader)
    warning = document.metadata["load_warning"]
    assert "read garbled text on pages 2, 3" in warning and "pdfplumber" in warning
    (clean,) = load(FIXTURES.parent.parent / "sample_docs" / "rag_handbook.pdf", reader=reader)
    assert "load_warning" not in clean.metadata
