"""Markdown: the raw source as the document text, with the structure markdown-it finds.

The text is what the user wrote, so every span points into their file. Elements
come from markdown-it-py's block tokens, whose ``map`` gives each block's line
range; line ranges become character spans through the table of line starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from core.loaders.base import elements_read
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import DecodedTextLoader, line_spans, make_document, text_metadata
from core.schema import Document, Element
from core.tokens.heading_words import inline_after


@LOADERS.register
@dataclass(frozen=True)
class MarkdownLoader(DecodedTextLoader):
    """Markdown source with heading, paragraph, code, list item, table and table row elements."""

    name = "markdown"
    summary = "Markdown (.md): the source text as written, with headings, lists, code blocks and tables found."
    extensions = FORMAT_EXTENSIONS["markdown"]

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        text, encoding, warning, replaced = self.decode(data, file_name)
        wanted = elements_read()
        if wanted is not None and wanted <= TABLE_KINDS:
            elements, title = markdown_tables_and_title(text)  # what the caller reads, parsed where it can be
        else:
            elements = markdown_elements(text)
            title = _title(elements)
        metadata = text_metadata(file_name, "markdown", encoding, warning, replaced)
        if title:
            metadata["title"] = title
        return [make_document(text, metadata, elements)]


def markdown_elements(text: str) -> list[Element]:
    """Elements of Markdown ``text`` with spans into ``text`` itself, in document order."""
    # markdown-it counts lines split on CRLF, CR or LF, exactly as line_spans does.
    lines = line_spans(text)
    tokens = _block_parser().parse(text)
    elements: list[Element] = []
    list_item_depth = 0
    for index, token in enumerate(tokens):
        if token.type == "list_item_open":
            list_item_depth += 1
        elif token.type == "list_item_close":
            list_item_depth -= 1
        if token.map is None:
            continue
        span = _span_of(text, lines, token.map)
        if span is None:
            continue
        start, end = span
        if token.type == "heading_open":
            level = int(token.tag[1])
            title = inline_after(tokens, index)
            elements.append(Element("heading", start, end, level=level, attrs={"title": title}))
        elif token.type == "paragraph_open" and list_item_depth == 0:
            elements.append(Element("paragraph", start, end))
        elif token.type in ("fence", "code_block"):
            language = token.info.strip().split(" ")[0] if token.info else ""
            elements.append(Element("code", start, end, attrs={"language": language}))
        elif token.type == "list_item_open":
            elements.append(Element("list_item", start, end))
        elif token.type == "table_open":
            # A table covers its lines exactly (no trimming), so its rows' spans sit inside it.
            first, last = token.map
            table_start, table_end = lines[first][0], lines[min(last, len(lines)) - 1][1]
            elements.extend(_table_elements(tokens, index, text, lines, table_start, table_end))
    return elements


TABLE_KINDS = frozenset({"table", "table_row"})
# A line that may be (part of) a level-1 heading: an ATX "# " or a setext "===" underline, after any
# container markers (block quotes, list items). Every level-1 heading has such a line; not every such
# line is one (a code block's comment, a quoted "#").
_H1_LINE = re.compile(r"^[ \t>*+0-9.)-]*(?:#(?:[ \t]|$)|=+[ \t]*$)", re.MULTILINE)
# A line that may be a table's delimiter row ("|---|:--:|"), container markers included, if it holds a "-".
# One character class, no "-" between two runs of it: a long line of dashes is matched in linear time.
_DELIMITER_LINE = re.compile(r"^[ \t>|:+*.)0-9-]+$", re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|$)")


def markdown_tables_and_title(text: str) -> tuple[list[Element], str | None]:
    """The table and table_row elements of :func:`markdown_elements` and the title (the first level-1
    heading's words), parsing no more of ``text`` than they need.

    A table needs a line holding "|" right above a delimiter row, and ends at a blank line: only the
    blocks up to the blank line after the last such pair, and then up to the first level-1 heading,
    are parsed. CommonMark reads blocks line by line (a line's block depends on the lines above it;
    a table's header, on the next one too), and nothing but fences, HTML blocks and containers
    opened above continues past a blank line; so the blocks of a prefix that ends at a blank line
    after a candidate and the line after it are the whole text's there. A title holding a link
    ("[") is parsed with the whole text's link references. Equal to the full parse:
    tests/test_markdown_outline.py.
    """
    if "\r" in text:
        elements = markdown_elements(text)
        return [e for e in elements if e.kind in TABLE_KINDS], _title(elements)
    tables: list[Element] = []
    end = _after_last_table(text)
    candidates = _H1_LINE.finditer(text)
    while True:
        if end:
            prefix = markdown_elements(text[:end])
            if not tables:  # every table is in the first prefix parsed (it holds the last candidate pair)
                tables = [e for e in prefix if e.kind in TABLE_KINDS]
            heading = next((e for e in prefix if e.kind == "heading" and e.level == 1), None)
            if heading is not None:
                if "[" in text[heading.start_char : heading.end_char] and end < len(text):
                    return tables, _title(markdown_elements(text))  # a link's target may be defined further down
                return tables, heading.attrs["title"]
            if end >= len(text):
                return tables, None
        # The next candidate past what was parsed (which held no level-1 heading): through its next line and on
        # to a blank line, and at least double the last prefix, so failed candidates cost about two parses.
        candidate = next((c for c in candidates if c.start() >= end), None)
        if candidate is None:
            return tables, None
        end = max(_prefix_end(text, candidate.start()), 2 * end)


def _prefix_end(text: str, start: int) -> int:
    """Where a prefix ends that holds the line at ``start``, the line after it, and all lines up to a blank one."""
    line_end = text.find("\n", start)
    next_end = text.find("\n", line_end + 1) if line_end >= 0 else -1
    if next_end < 0:
        return len(text)
    blank = _BLANK_LINE.search(text, next_end)
    return blank.start() + 1 if blank else len(text)


def _after_last_table(text: str) -> int:
    """The end of a prefix holding every table ``text`` may have (0 when it has none).

    A table's header is a line holding "|" right above a line that may be its delimiter row; it ends
    at a blank line (or before).
    """
    if "|" not in text:
        return 0
    last = -1
    for row in _DELIMITER_LINE.finditer(text):
        above_end = row.start() - 1
        if above_end <= 0 or "-" not in row.group():
            continue
        above_start = text.rfind("\n", 0, above_end) + 1
        if "|" in text[above_start:above_end]:
            last = above_start
    return _prefix_end(text, last) if last >= 0 else 0


def _title(elements: list[Element]) -> str | None:
    """The first level-1 heading's words (None without one; "" for an empty one, which sets no title)."""
    return next((e.attrs["title"] for e in elements if e.kind == "heading" and e.level == 1), None)


def _block_parser() -> MarkdownIt:
    """CommonMark with tables, parsing the inline content of headings only.

    The elements are blocks (line ranges); of the inline markup only a heading's words are read
    (its title). Parsing every paragraph's links and emphasis was three quarters of a load
    (benchmarks/RESULTS.md, corpus batch): headings are parsed as the full parser does, with the
    link references the whole document defines, so titles are unchanged.
    """
    parser = MarkdownIt("commonmark").enable("table")
    parser.core.ruler.at("inline", _heading_inline)
    return parser


def _heading_inline(state: StateCore) -> None:
    """markdown-it's core ``inline`` rule, for the inline tokens that are a heading's content."""
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.type == "inline" and index and tokens[index - 1].type == "heading_open":
            token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)


def _span_of(text: str, lines: list[tuple[int, int]], line_range: list[int]) -> tuple[int, int] | None:
    """Character span of lines ``[first, last)``, trimmed of surrounding whitespace."""
    first, last = line_range
    if first >= len(lines) or last <= first:
        return None
    start = lines[first][0]
    end = lines[min(last, len(lines)) - 1][1]
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _table_elements(
    tokens: list[Token], index: int, text: str, lines: list[tuple[int, int]], start: int, end: int
) -> list[Element]:
    """The table element (header = first line, header_end = end of the delimiter row) and its body rows."""
    first_line = tokens[index].map[0]  # type: ignore[index]
    header_start, header_stop = lines[first_line]
    delimiter_stop = lines[first_line + 1][1] if first_line + 1 < len(lines) else header_stop
    table = Element(
        "table",
        start,
        end,
        attrs={"header": text[header_start:header_stop].strip(), "header_end": min(delimiter_stop, end)},
    )
    rows = []
    in_body = False
    for token in tokens[index + 1 :]:
        if token.type == "table_close":
            break
        if token.type == "tbody_open":
            in_body = True
        elif token.type == "tr_open" and in_body and token.map is not None:
            row_start, row_end = lines[token.map[0]]
            rows.append(Element("table_row", row_start, row_end))
    return [table, *rows]
