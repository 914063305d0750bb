"""Microsoft's markitdown: any file to one Markdown text (headings as ``#``, tables as pipe rows).

``MarkItDown(enable_plugins=False).convert_local(file)``: a local path only, so
it never fetches a URL; plugins stay off. Its result is one document with the
title markitdown found (HTML's ``<title>``), if any. Each format needs the
package markitdown's extra for it would install: pdfminer.six (PDF), mammoth
(DOCX), python-pptx (PPTX), pandas and openpyxl (XLSX), beautifulsoup4 (HTML, EPUB).
"""

from __future__ import annotations

from pathlib import Path

from core.loaders.readers.base import FormatReader, Piece, ReaderEngine
from core.translate.snippet import CodeSnippet

_CALL = "MarkItDown(enable_plugins=False).convert_local(str(file))"
_NEEDS = {
    ".pdf": ("pdfminer",),
    ".docx": ("mammoth",),
    ".pptx": ("pptx",),
    ".xlsx": ("pandas", "openpyxl"),
    ".html": ("bs4",),
    ".htm": ("bs4",),
    ".epub": ("bs4",),
}
_INSTALL = {"pdfminer": "pdfminer.six", "pptx": "python-pptx", "bs4": "beautifulsoup4"}


class MarkItDownReader(ReaderEngine):
    name = "markitdown"
    framework = "markitdown"
    distribution = "markitdown"
    what = "MarkItDown"

    def __init__(self, suffixes: list[str]) -> None:
        formats = {}
        for suffix in suffixes:
            needs = _NEEDS.get(suffix, ())
            install = " ".join(_INSTALL.get(module, module) for module in needs)
            formats[suffix] = FormatReader("markitdown:MarkItDown", _CALL, needs, install)
        super().__init__(formats=formats)

    def title(self, suffix: str | None = None) -> str:
        return "markitdown MarkItDown"

    def pieces(self, file: Path, suffix: str) -> list[Piece]:
        from markitdown import MarkItDown

        result = MarkItDown(enable_plugins=False).convert_local(str(file))
        return [(result.text_content, {"title": result.title} if result.title else {}, [], [])]

    def code(self, suffix: str, code: CodeSnippet) -> str:
        code.use("from markitdown import MarkItDown")
        return f"[(result.text_content, {{'title': result.title}} if result.title else {{}}, [], [])\n            for result in [{_CALL}]]"
