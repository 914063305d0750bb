"""Markdown: the raw source as the document text, with the structure markdown-it finds.

The text is what the user wrote, so every span points into their file. Elements
come from markdown-it-py's block tokens, whose ``map`` gives each block's line
range; line ranges become character spans through the table of line starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from core.loaders.registry import LOADERS
from core.loaders.text import DecodedTextLoader, line_spans, make_document, text_metadata
from core.schema import Document, Element


@LOADERS.register
@dataclass(frozen=True)
class MarkdownLoader(DecodedTextLoader):
    """Markdown source with heading, paragraph, code, list item, table and table row elements."""

    name = "markdown"
    summary = "Markdown (.md): the source text as written, with headings, lists, code blocks and tables found."
    extensions = (".md", ".markdown")

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        text, encoding, warning, replaced = self.decode(data, file_name)
        elements = markdown_elements(text)
        metadata = text_metadata(file_name, "markdown", encoding, warning, replaced)
        title = next((e.attrs["title"] for e in elements if e.kind == "heading" and e.level == 1), None)
        if title:
            metadata["title"] = title
        return [make_document(text, metadata, elements)]


def markdown_elements(text: str) -> list[Element]:
    """Elements of Markdown ``text`` with spans into ``text`` itself, in document order."""
    # markdown-it counts lines split on CRLF, CR or LF, exactly as line_spans does.
    lines = line_spans(text)
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
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
            title = _inline_after(tokens, index)
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


def _inline_after(tokens: list[Token], index: int) -> str:
    """A heading's words without inline markup: "Why *Chunk* Size" -> "Why Chunk Size"."""
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if following is None or following.type != "inline":
        return ""
    words = []
    for child in following.children or []:
        if child.type in ("text", "code_inline"):
            words.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            words.append(" ")
    return " ".join("".join(words).split())


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
