"""HTML: the visible text, with its block structure kept as line breaks.

Scripts, styles, templates, noscript, iframes, SVG and the head are dropped; no
attribute is ever output, so nothing from an ``onerror`` handler or a
``javascript:`` URL can reach the text. Nothing is executed or fetched.

The stdlib ``HTMLParser`` is event driven, and the open elements live in a list,
so broken or absurdly deep markup costs time in proportion to its size and never
recursion. Blocks are separated by a blank line, except consecutive list items
and the rows of one table, which are separated by a single line break. Table
cells are joined with " | ". ``<pre>`` content is kept verbatim.

**Main content** (the loader's ``main_content``, on by default): where a page marks its
main content, with ``<main>`` (or ``role="main"``) or else a single ``<article>``, only
that is read: the site's navigation, header, footer and sidebars around it are not
the document. A page that marks nothing is read whole, and so is one whose marked
region holds no text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from core.errors import CorruptDocumentError, EmptyDocumentError
from core.loaders.base import Loader
from core.loaders.decoding import decode_text
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import make_document, text_metadata
from core.params import param
from core.schema import Document, Element

# Elements whose content is never visible text.
_HIDDEN = frozenset({"script", "style", "template", "noscript", "head", "iframe", "object", "svg", "math", "title"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)
# Elements that start and end a block of text.
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "ol", "p", "pre",
        "section", "summary", "table", "ul",
    }
)  # fmt: skip
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_CELLS = frozenset({"td", "th"})
_LANGUAGE_CLASS = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)
_CHARSET_SCAN_BYTES = 4096  # browsers look only near the start, too
_LINE_BREAK_MARK = "\x00"  # stands for <br> inside a block until the block is flushed


@dataclass
class _Open:
    """One open element: its tag and the block context its text belongs to."""

    tag: str
    kind: str  # heading | list_item | code | paragraph
    level: int | None = None
    hidden: bool = False
    region: bool = False  # the main-content element being read (see main_region)


@dataclass
class _Table:
    rows: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, text) in the output
    header_index: int | None = None  # the <thead> row, if any
    cells: list[str] | None = None  # the open row's cells
    cell: list[str] | None = None  # the open cell's text pieces
    row_in_thead: bool = False
    in_thead: bool = False


class _VisibleText(HTMLParser):
    """Collects the visible text as blocks and records an element per block."""

    def __init__(self, region: str | None = None, source: str = "") -> None:
        super().__init__(convert_charrefs=True)
        self.source = source  # what is fed, for the region's span (HTMLParser's own buffer is trimmed as it goes)
        # Only the first element matching ``region`` ("main" or "article") is read, when one is named.
        self.region = region
        self.region_depth = 0
        self.region_seen = False
        self.region_span: tuple[int, int] | None = None  # where the region's markup starts and ends in the source
        self._line_starts: list[int] | None = None
        self.pieces: list[str] = []
        self.length = 0
        self.elements: list[Element] = []
        self.title_parts: list[str] = []
        self.stack: list[_Open] = [_Open("#root", "paragraph")]
        self.open_counts: dict[str, int] = {}
        self.hidden_depth = 0
        self.title_depth = 0
        self.buffer: list[str] = []
        self.last_kind: str | None = None
        self.table: _Table | None = None
        self.nested_table_depth = 0
        self.code_language = ""

    # -- parser events -------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.open_counts.get("svg"):
            self.title_depth += 1
        if tag in _VOID:
            self._void_tag(tag)
            return
        parent = self.stack[-1]
        hidden = tag in _HIDDEN or any(name == "hidden" for name, _ in attrs)
        entry = _Open(tag, parent.kind, parent.level, hidden)
        self._enter_region(entry, attrs)
        self._push(entry)
        if hidden:
            self.hidden_depth += 1
        if self.hidden_depth or self._outside():
            return
        if tag == "table":
            self._open_table()
        elif self.table is not None:
            self._tag_in_table(tag)
        elif tag in _BLOCKS:
            self._start_block(entry, attrs)
        elif tag == "code" and parent.kind == "code" and not self.code_language:
            self.code_language = _language_of(attrs)

    def _void_tag(self, tag: str) -> None:
        """A tag with no content: ``<br>`` breaks the line (a space in a table), ``<hr>`` ends the block."""
        if self.hidden_depth or self._outside():
            return
        if tag == "br":
            self._add_inline(_LINE_BREAK_MARK if self.table is None else " ")
        elif tag == "hr":
            self._block_boundary()

    def _enter_region(self, entry: _Open, attrs: list[tuple[str, str | None]]) -> None:
        """Start reading at ``entry`` when it is the first visible element of the main content named."""
        if (
            self._outside()
            and not self.hidden_depth
            and _in_region(self.region, entry.tag, attrs)
            and not self.region_seen
        ):
            entry.region, self.region_seen = True, True
            self.region_depth += 1
            self.region_span = (self._offset(), -1)

    def _tag_in_table(self, tag: str) -> None:
        if self.nested_table_depth:
            self._add_inline(" ")  # a table inside a cell is read as the cell's text
        else:
            self._table_start_tag(tag)

    def _start_block(self, entry: _Open, attrs: list[tuple[str, str | None]]) -> None:
        """A block element opens: the text before it ends, and a heading, list item or ``<pre>`` labels its own."""
        self._block_boundary()
        tag = entry.tag
        if tag in _HEADINGS:
            entry.kind, entry.level = "heading", _HEADINGS[tag]
        elif tag == "li":
            entry.kind, entry.level = "list_item", None
        elif tag == "pre":
            entry.kind, entry.level = "code", None
            self.code_language = _language_of(attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title_depth:
            self.title_depth -= 1
        if tag in _VOID or not self.open_counts.get(tag):
            return  # a stray end tag closes nothing
        while True:
            entry = self.stack.pop()
            self.open_counts[entry.tag] -= 1
            self._close(entry)
            if entry.tag == tag:
                return

    def handle_data(self, data: str) -> None:
        if self.title_depth:
            self.title_parts.append(data)
        if self.hidden_depth or self._outside():
            return
        self._add_inline(data)

    def _offset(self) -> int:
        """The parser's position (line, column) as an offset into the source fed to it."""
        if self._line_starts is None:
            self._line_starts = [0, *(i + 1 for i, char in enumerate(self.source) if char == "\n")]
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def _end_of_tag(self) -> int:
        at = self.source.find(">", min(self._offset(), len(self.source)))
        return len(self.source) if at < 0 else at + 1

    def _outside(self) -> bool:
        """Whether the text here lies outside the main content being read (never, when none is)."""
        return self.region is not None and self.region_depth == 0

    def close(self) -> None:
        super().close()
        while len(self.stack) > 1:
            entry = self.stack.pop()
            self.open_counts[entry.tag] -= 1
            self._close(entry)
        self._block_boundary()

    # -- structure -----------------------------------------------------

    def _push(self, entry: _Open) -> None:
        self.stack.append(entry)
        self.open_counts[entry.tag] = self.open_counts.get(entry.tag, 0) + 1

    def _close(self, entry: _Open) -> None:
        if entry.hidden:
            self.hidden_depth -= 1
            return
        if self.hidden_depth or self._outside():
            return
        if entry.region:
            self._block_boundary()
            self.region_depth -= 1
            start, _ = self.region_span or (0, 0)
            # Up to the end of the tag that closed it (or of the page, when the page ended it).
            self.region_span = (start, self._end_of_tag())
            return
        if entry.tag == "table":
            if self.nested_table_depth:
                self.nested_table_depth -= 1
                self._add_inline(" ")
            else:
                self._close_table()
        elif self.table is not None:
            if self.nested_table_depth:
                self._add_inline(" ")
            else:
                self._table_end_tag(entry.tag)
        elif entry.tag in _BLOCKS:
            # The block's own kind decides how its text is labelled, so flush before it is gone.
            self._flush(entry)

    def _add_inline(self, data: str) -> None:
        table = self.table
        if table is not None:
            if table.cell is not None:
                table.cell.append(data)
            elif table.cells is None and data.strip():
                # Text in a table but outside any row (a caption): a block of its own.
                self.buffer.append(data)
            return
        self.buffer.append(data)

    def _block_boundary(self) -> None:
        self._flush(self.stack[-1])

    def _flush(self, context: _Open) -> None:
        if not self.buffer:
            return
        raw = "".join(self.buffer)
        self.buffer = []
        if context.kind == "code":
            text = raw.replace("\r\n", "\n").replace("\r", "\n").replace(_LINE_BREAK_MARK, "\n")
            text = text.lstrip("\n").rstrip()
            attrs = {"language": self.code_language}
            self.code_language = ""
        else:
            lines = (" ".join(line.split()) for line in raw.split(_LINE_BREAK_MARK))
            text = "\n".join(line for line in lines if line)
            attrs = {"title": text} if context.kind == "heading" else {}
        if text.strip():
            self._emit(text, context.kind, context.level, attrs)

    def _emit(self, text: str, kind: str, level: int | None = None, attrs: dict | None = None) -> tuple[int, int]:
        if self.pieces:
            tight = kind == self.last_kind and kind in ("list_item", "table_row")
            separator = "\n" if tight else "\n\n"
            self.pieces.append(separator)
            self.length += len(separator)
        start = self.length
        self.pieces.append(text)
        self.length += len(text)
        self.last_kind = kind
        if kind != "table_row":  # rows become elements when their table closes
            self.elements.append(Element(kind, start, self.length, level=level, attrs=attrs or {}))
        return start, self.length

    # -- tables --------------------------------------------------------

    def _open_table(self) -> None:
        if self.table is not None:
            self.nested_table_depth += 1
            self._add_inline(" ")
            return
        self._block_boundary()
        self.table = _Table()

    def _table_start_tag(self, tag: str) -> None:
        table = self.table
        assert table is not None
        if tag == "thead":
            table.in_thead = True
        elif tag == "tr":
            self._end_row()
            table.cells, table.row_in_thead = [], table.in_thead
        elif tag in _CELLS:
            if table.cells is None:  # a cell without a <tr>
                table.cells, table.row_in_thead = [], table.in_thead
            self._end_cell()
            table.cell = []
        elif tag in _BLOCKS and table.cell is not None:
            table.cell.append(" ")
        elif tag in _BLOCKS:
            self._flush(self.stack[-1])

    def _table_end_tag(self, tag: str) -> None:
        table = self.table
        assert table is not None
        if tag == "thead":
            table.in_thead = False
            self._end_row()
        elif tag == "tr":
            self._end_row()
        elif tag in _CELLS:
            self._end_cell()
        elif tag in _BLOCKS and table.cell is not None:
            table.cell.append(" ")
        elif tag in _BLOCKS:
            self._flush(self.stack[-1])

    def _end_cell(self) -> None:
        table = self.table
        assert table is not None
        if table.cell is not None and table.cells is not None:
            table.cells.append(" ".join("".join(table.cell).split()))
        table.cell = None

    def _end_row(self) -> None:
        table = self.table
        assert table is not None
        self._end_cell()
        cells, table.cells = table.cells, None
        if not cells or not any(cells):
            return
        self._flush(self.stack[-1])  # a caption before this row
        start, end = self._emit(" | ".join(cells), "table_row")
        if table.row_in_thead and table.header_index is None:
            table.header_index = len(table.rows)
        table.rows.append((start, end, " | ".join(cells)))

    def _close_table(self) -> None:
        table = self.table
        assert table is not None
        self._end_row()
        self._flush(self.stack[-1])
        self.table = None
        if not table.rows:
            return
        header_index = table.header_index or 0
        header_start, header_end, header = table.rows[header_index]
        attrs = {"header": header, "header_end": header_end}
        self.elements.append(Element("table", table.rows[0][0], table.rows[-1][1], attrs=attrs))
        for index, (start, end, _) in enumerate(table.rows):
            if index != header_index:
                self.elements.append(Element("table_row", start, end))


def _language_of(attrs: list[tuple[str, str | None]]) -> str:
    for name, value in attrs:
        if name == "class" and value:
            match = _LANGUAGE_CLASS.search(value)
            if match:
                return match.group(1)
    return ""


def declared_charset(data: bytes) -> str | None:
    """The charset a page declares in its first kilobytes (``<meta charset>`` or http-equiv), if any."""
    match = _META_CHARSET.search(data[:_CHARSET_SCAN_BYTES])
    return match.group(1).decode("ascii") if match else None


def html_to_text(html: str) -> tuple[str, list[Element], str]:
    """``(visible text, elements with spans in that text, title)`` of an HTML string: the whole page."""
    text, elements, title, _ = page_text(html, main_content=False)
    return text, elements, title


def page_text(html: str, *, main_content: bool) -> tuple[str, list[Element], str, str]:
    """:func:`html_to_text`'s three, and the markup they were read from: the page's, or with ``main_content`` only
    its marked main content's (:func:`main_region`; the engines that read markup then read what the text holds)."""
    region = main_region(html) if main_content else None
    parser = _VisibleText(region, html if region else "")
    parser.feed(html)
    parser.close()
    if parser.table is not None:
        parser._close_table()
    text = "".join(parser.pieces)
    if region is not None and (not text.strip() or parser.region_span is None):
        return page_text(html, main_content=False)  # the marked region holds no text: the page is read whole
    elements = sorted(parser.elements, key=lambda e: (e.start_char, -e.end_char))
    title = " ".join("".join(parser.title_parts).split())
    if parser.region_span is None:
        return text, elements, title, html
    start, end = parser.region_span
    return text, elements, title, html[start:end]


_MAIN_TAG = re.compile(r"<main[\s>/]|<[a-z][a-z0-9]*\s[^>]*\brole\s*=\s*[\"']?main\b", re.IGNORECASE)
_ARTICLE_TAG = re.compile(r"<article[\s>/]", re.IGNORECASE)


def main_region(html: str) -> str | None:
    """What a page marks as its main content: "main" (a ``<main>`` or ``role="main"``), else "article" (exactly one
    ``<article>``), else None. A first look at the markup; the parser reads the first matching element, and a page
    whose match holds no text (e.g. one inside a comment) is read whole."""
    if _MAIN_TAG.search(html):
        return "main"
    return "article" if len(_ARTICLE_TAG.findall(html)) == 1 else None


def _in_region(region: str | None, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    if region == "main":
        return tag == "main" or any(name == "role" and (value or "").strip().lower() == "main" for name, value in attrs)
    return region == "article" and tag == "article"


@LOADERS.register
@dataclass(frozen=True)
class HtmlLoader(Loader):
    """The visible text of a web page, with headings, paragraphs, lists, code and tables as elements."""

    name = "html"
    summary = "HTML (.html): the visible text (no scripts or styles), block structure kept as line breaks."
    extensions = FORMAT_EXTENSIONS["html"]

    main_content: bool = param(
        True,
        "Read only the page's main content where it marks it (its <main> or role=main, else its one <article>): "
        "the navigation, header, footer and sidebars around it are left out. A page that marks none is read whole.",
    )

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        source, encoding, warning, replaced = decode_text(data, file_name, declared=declared_charset(data))
        try:
            text, elements, title, markup = page_text(source, main_content=self.main_content)
        except AssertionError:  # HTMLParser's way of giving up on some malformed declarations
            raise CorruptDocumentError(file_name, "is HTML too malformed to parse") from None
        if not text.strip():
            raise EmptyDocumentError(file_name, "has no visible text")
        metadata = text_metadata(file_name, "html", encoding, warning, replaced)
        if title:
            metadata["title"] = title
        document = make_document(text, metadata, elements)
        # LlamaIndex's HTMLNodeParser and LangChain's HTMLHeaderTextSplitter read the page's markup, not its text
        # (the main content's, where only that was read).
        document.markup = markup
        return [document]
