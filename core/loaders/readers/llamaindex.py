"""LlamaIndex's ``SimpleDirectoryReader`` with its default file readers, as LlamaIndex's users run it.

``SimpleDirectoryReader(input_files=[file]).load_data()`` picks the reader by the
file's suffix from ``llama-index-readers-file`` (PDFReader: a document per page;
DocxReader, PptxReader, PandasCSVReader, PandasExcelReader, EpubReader) and reads
every other file as plain text. Without that package it reads *every* file as
text, a PDF's bytes included, so a binary format is refused here instead.

``llama-index-readers-file`` 0.7.0 pins ``pypdf<7`` and ``pandas<3``; this project
runs newer ones (pypdf 7, pandas 3), so it is installed beside them with
``--no-deps`` and its readers run on the newer versions (the tests read a PDF,
DOCX, PPTX, XLSX and CSV through it).
"""

from __future__ import annotations

from pathlib import Path

from core.loaders.readers.base import FormatReader, Piece, ReaderEngine, plain_metadata
from core.translate.snippet import CodeSnippet

# What to install for SimpleDirectoryReader's default readers, said where one is missing.
_FILE_READERS = "--no-deps llama-index-readers-file; its 0.7.0 pins pypdf<7 and pandas<3, older than this project's"
_CALL = "SimpleDirectoryReader(input_files=[file]).load_data()"


def _default(reader: str, *needs: str, install: str = _FILE_READERS) -> FormatReader:
    return FormatReader(f"llama_index.readers.file:{reader}", _CALL, ("llama_index.readers.file", *needs), install)


# What SimpleDirectoryReader does with each suffix ChunkScope reads (its default_file_reader_cls, else text).
_TEXT = FormatReader("llama_index.core:SimpleDirectoryReader", _CALL)
_BY_SUFFIX = {
    ".pdf": _default("PDFReader", "pypdf"),
    ".docx": _default("DocxReader", "docx2txt", install=f"docx2txt, and {_FILE_READERS}"),
    ".pptx": _default("PptxReader", "pptx"),
    ".csv": _default("PandasCSVReader", "pandas"),
    ".xlsx": _default("PandasExcelReader", "pandas", "openpyxl"),
    ".epub": _default("EpubReader", "ebooklib", "html2text", install=f"ebooklib html2text, and {_FILE_READERS}"),
}


class LlamaIndexReader(ReaderEngine):
    name = "llamaindex"
    framework = "LlamaIndex"
    distribution = "llama-index-core"
    what = "SimpleDirectoryReader"
    empty_note = " (SimpleDirectoryReader skips, with a printed line, a file its reader fails on)"

    def __init__(self, suffixes: list[str]) -> None:
        formats = {suffix: _BY_SUFFIX.get(suffix, _TEXT) for suffix in suffixes}
        super().__init__(formats=formats)

    def title(self, suffix: str | None = None) -> str:
        found = self.formats.get(suffix or "")
        if found is None or found is _TEXT:
            return "LlamaIndex SimpleDirectoryReader"
        return f"LlamaIndex SimpleDirectoryReader ({found.class_name})"

    def pieces(self, file: Path, suffix: str) -> list[Piece]:
        from llama_index.core import SimpleDirectoryReader

        documents = SimpleDirectoryReader(input_files=[file]).load_data()
        return [
            (
                document.text,
                plain_metadata(document.metadata),
                list(document.excluded_llm_metadata_keys),
                list(document.excluded_embed_metadata_keys),
            )
            for document in documents
        ]

    def code(self, suffix: str, code: CodeSnippet) -> str:
        code.use("from llama_index.core import SimpleDirectoryReader")
        return (
            "[(d.text, d.metadata, d.excluded_llm_metadata_keys, d.excluded_embed_metadata_keys)\n"
            f"            for d in {_CALL}]"
        )
