"""LangChain's document loaders, the one that fits each format, as LangChain's users call them.

``PyPDFLoader`` (a document per page), ``Docx2txtLoader``, ``BSHTMLLoader`` (the
page's text through BeautifulSoup and lxml), ``CSVLoader`` (a document per row,
``column: value`` lines), and ``TextLoader`` for text, Markdown, JSON and code.
PowerPoint, Excel and EPUB files have only ``Unstructured*`` loaders in
``langchain-community``, which need the ``unstructured`` package and its system
parsers: those formats are refused with that reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.loaders.readers.base import FormatReader, Piece, ReaderEngine, plain_metadata
from core.translate.snippet import CodeSnippet

_MODULE = "langchain_community.document_loaders"


def _loader(name: str, call: str, *needs: str) -> FormatReader:
    return FormatReader(f"{_MODULE}:{name}", call, needs)


_PDF = _loader("PyPDFLoader", "PyPDFLoader(str(file)).load()", "pypdf")
_DOCX = _loader("Docx2txtLoader", "Docx2txtLoader(str(file)).load()", "docx2txt")
_HTML = _loader("BSHTMLLoader", "BSHTMLLoader(str(file)).load()", "bs4", "lxml")
_CSV = _loader("CSVLoader", "CSVLoader(str(file)).load()")
# TextLoader opens the file in the platform's encoding unless told; ChunkScope's files are read as UTF-8.
_TEXT = _loader("TextLoader", 'TextLoader(str(file), encoding="utf-8").load()')
_BY_SUFFIX = {".pdf": _PDF, ".docx": _DOCX, ".html": _HTML, ".htm": _HTML, ".csv": _CSV}
_UNSTRUCTURED = {
    ".pptx": "UnstructuredPowerPointLoader",
    ".xlsx": "UnstructuredExcelLoader",
    ".epub": "UnstructuredEPubLoader",
}


class LangChainReader(ReaderEngine):
    name = "langchain"
    framework = "LangChain"
    distribution = "langchain-community"
    what = "document loaders"

    def __init__(self, suffixes: list[str]) -> None:
        formats = {suffix: _BY_SUFFIX.get(suffix, _TEXT) for suffix in suffixes if suffix not in _UNSTRUCTURED}
        refused = {
            suffix: f"LangChain's only loader for {suffix} files is {loader}, which needs the unstructured "
            "package and its system parsers (not installed here)"
            for suffix, loader in _UNSTRUCTURED.items()
            if suffix in suffixes
        }
        super().__init__(formats=formats, refused=refused)

    def pieces(self, file: Path, suffix: str) -> list[Piece]:
        import warnings
        from importlib import import_module

        found = self.formats[suffix]
        module, _, name = found.target.partition(":")
        with warnings.catch_warnings():  # langchain-community's notice that it is being sunset, once per import
            warnings.simplefilter("ignore", DeprecationWarning)
            loader_class: Any = getattr(import_module(module), name)
        kwargs = {"encoding": "utf-8"} if found is _TEXT else {}
        return [
            (doc.page_content, plain_metadata(doc.metadata), [], []) for doc in loader_class(str(file), **kwargs).load()
        ]

    def code(self, suffix: str, code: CodeSnippet) -> str:
        found = self.formats[suffix]
        code.use(f"from {_MODULE} import {found.class_name}")
        return f"[(d.page_content, d.metadata, [], []) for d in {found.call}]"
