"""One text from blocks: how the structured formats (DOCX, PPTX, XLSX, EPUB, JSON) lay out what they read.

Blocks are joined by a blank line, except consecutive list items and the rows
of one table, which are joined by a single line break (as the HTML loader
does). A table is written as Markdown-like rows, ``| a | b |``, with a
``| --- | --- |`` line after its header row: the table element's ``header`` is
the header row and ``header_end`` the end of that line, and every body row is
a ``table_row`` element, so the splitters that keep rows whole never cut one.

Pages (slides, sheets, chapters) follow each other with exactly one blank line
between them, as PDF pages do: page ``n``'s span is its blocks and nothing
else, and the pages tile the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.schema import Element, Page

BLOCK_SEPARATOR = "\n\n"
_TIGHT_KINDS = ("list_item", "table_row")


class BlockText:
    """Collects blocks, tables and page breaks; :meth:`result` gives the text, elements and pages."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.length = 0
        self.elements: list[Element] = []
        self.pages: list[Page] = []
        self._last_kind: str | None = None
        self._page: tuple[int, str, int] | None = None  # (number, label, start) of the open page

    @property
    def page_count(self) -> int:
        """Pages started so far (the open one included)."""
        return len(self.pages) + (self._page is not None)

    def start_page(self, label: str) -> None:
        """Close the open page (if any) and open the next one, labelled ``label``."""
        self._close_page()
        number = len(self.pages) + 1
        if number > 1:
            self._write(BLOCK_SEPARATOR)
        self._page = (number, label, self.length)
        self._last_kind = None

    def add(self, text: str, kind: str, level: int | None = None, attrs: dict[str, Any] | None = None) -> bool:
        """One block (its text trimmed; a blank block is left out). True when it was added."""
        text = text.strip()
        if not text:
            return False
        start, end = self._block(text, kind)
        if kind == "heading":
            attrs = {"title": " ".join(text.split()), **(attrs or {})}
        self.elements.append(Element(kind, start, end, level=level, page=self._page_number(), attrs=attrs or {}))
        return True

    def add_elements(self, text: str, elements: Sequence[Element]) -> None:
        """A block of text that comes with its own elements (spans relative to ``text``), e.g. an HTML chapter."""
        if not text.strip():
            return
        start, _ = self._block(text, "text")
        page = self._page_number()
        for element in elements:
            attrs = dict(element.attrs)
            if "header_end" in attrs:  # a table's header end is a position too
                attrs["header_end"] = int(attrs["header_end"]) + start
            self.elements.append(
                Element(
                    element.kind,
                    element.start_char + start,
                    element.end_char + start,
                    level=element.level,
                    page=page if element.page is None else element.page,
                    attrs=attrs,
                )
            )

    def add_table(self, rows: Sequence[Sequence[str]], attrs: dict[str, Any] | None = None) -> bool:
        """A table whose first row is its header; rows with no text are left out. True when it was added."""
        cleaned = [[_cell(value) for value in row] for row in rows]
        cleaned = [row for row in cleaned if any(row)]
        if not cleaned:
            return False
        width = max(len(row) for row in cleaned)
        lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in cleaned]
        header, body = lines[0], lines[1:]
        page = self._page_number()
        start, _ = self._block(header, "table_row")
        _, header_end = self._block("| " + " | ".join(["---"] * width) + " |", "table_row")
        rows_out = [Element("table_row", *self._block(line, "table_row"), page=page) for line in body]
        end = rows_out[-1].end_char if rows_out else header_end
        table_attrs = {"header": header, "header_end": header_end, "columns": width, **(attrs or {})}
        self.elements.append(Element("table", start, end, page=page, attrs=table_attrs))
        self.elements.extend(rows_out)
        self._last_kind = "table"  # the next block, even another table, starts after a blank line
        return True

    def result(self) -> tuple[str, list[Element], list[Page]]:
        self._close_page()
        elements = sorted(self.elements, key=lambda e: (e.start_char, -e.end_char))
        return "".join(self.pieces), elements, list(self.pages)

    # -- internals -----------------------------------------------------

    def _block(self, text: str, kind: str) -> tuple[int, int]:
        page_open_and_empty = self._page is not None and self._page[2] == self.length
        if self.pieces and not page_open_and_empty:
            tight = kind == self._last_kind and kind in _TIGHT_KINDS
            self._write("\n" if tight else BLOCK_SEPARATOR)
        start = self.length
        self._write(text)
        self._last_kind = kind
        return start, self.length

    def _write(self, text: str) -> None:
        self.pieces.append(text)
        self.length += len(text)

    def _page_number(self) -> int | None:
        return self._page[0] if self._page is not None else None

    def _close_page(self) -> None:
        if self._page is not None:
            number, label, start = self._page
            self.pages.append(Page(number=number, label=label, start_char=start, end_char=self.length))
            self._page = None


def _cell(value: str) -> str:
    """A cell's text on one line, with ``|`` escaped so the row keeps its columns."""
    return " ".join(str(value).split()).replace("|", "\\|")
