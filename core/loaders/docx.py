"""Word (.docx): the body's paragraphs, headings, list items and tables, read straight from the XML.

The main part (``word/document.xml``, or wherever ``_rels/.rels`` points) is
walked in order. A paragraph is a heading when its own outline level, or its
style's (through ``basedOn``), says so, or when its style is named "Heading N"
or "Title"; a list item when it or its style is numbered. Tables become
Markdown-like rows (see :mod:`core.loaders.blocks`); the row marked as a header
(``w:tblHeader``), else the first, is the header. Deleted text of tracked
changes, field codes, text boxes, comments and footnotes are left out; a
paragraph's line breaks are kept. Word stores no page breaks it can vouch for,
so a DOCX has no pages.

Headers and footers (``include_headers_footers``, on by default) are read once
each, where the section that first names them starts (its headers, before its
body) and ends (its footers, after it), marked ``page_header`` or
``page_footer`` with their kind (``default``, ``first``, ``even``) in the
element's attributes (a table's ``header`` is its header row).
Once, not once per page: Word repeats them on every page, but a DOCX has no
pages, and "Confidential" repeated a hundred times would outweigh the text in
every chunk and every retrieval score. Read at all, because they can hold what
the body does not (a title, a document number, a copyright line; docx2txt,
under LlamaIndex's and LangChain's DOCX readers, reads them too), and marked,
so a splitter or a filter can tell them from the body. A section that names no
header of its own shows the previous one's, already read; a part no section
names is never shown by Word and is not read.

Why a direct read rather than python-docx: the structure needed here is a dozen
tags, read in document order with text boxes and ``mc:Fallback`` copies skipped;
the archive's size is bounded before anything is unpacked, XML goes through
defusedxml, and the app gains no lxml dependency.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element as XmlElement

from core.errors import CorruptDocumentError, EmptyDocumentError
from core.loaders.archive import Archive, ZipLoader, attr, child, children, core_properties, local
from core.loaders.blocks import BlockText
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import add_warning, make_document
from core.params import param
from core.schema import Document

_HEADING_NAME = re.compile(r"heading\s*([1-9])$", re.IGNORECASE)
# Run content that is text; everything else in a run (drawings, objects, field codes, deleted text) is not.
_RUN_TEXT = {"t": None, "tab": "\t", "br": "\n", "cr": "\n", "noBreakHyphen": "-", "softHyphen": ""}
# Containers whose content is never read: text boxes (their own story), the fallback copy of
# alternate content, deleted text, embedded objects and pictures.
_SKIPPED = frozenset({"txbxContent", "Fallback", "del", "object", "drawing", "pict", "instrText", "delText"})
# Wrappers around paragraphs and tables in the body: content controls, custom XML, tracked insertions.
_TRANSPARENT = frozenset({"sdt", "sdtContent", "customXml", "ins", "moveTo", "smartTag"})
_STYLE_CHAIN_LIMIT = 20
# What a hostile file multiplies (each costs parse and walk time), counted while parts are parsed.
_COUNTED = {
    "p": ("paragraphs", "max_paragraphs"),
    "r": ("runs", "max_runs"),
    "tr": ("table rows", "max_table_rows"),
    "tc": ("table cells", "max_table_cells"),
}


@dataclass
class _Style:
    name: str
    based_on: str | None
    outline_level: int | None  # 0-based, as stored
    numbered: bool


@LOADERS.register
@dataclass(frozen=True)
class DocxLoader(ZipLoader):
    """Word documents: headings with levels, paragraphs, list items and tables with a header row."""

    name = "docx"
    summary = "Word (.docx): headings, paragraphs, list items and tables (Markdown-like rows); macros never run."
    extensions = FORMAT_EXTENSIONS["docx"]
    format_label = "a .docx file"
    counted_elements = _COUNTED

    include_headers_footers: bool = param(
        True, "Read each header and footer once, where the first section that shows it starts (or ends)."
    )

    def read_archive(self, archive: Archive, data: bytes) -> list[Document]:
        file_name = archive.file_name
        main = _main_part(archive)
        root = archive.xml(main)
        if root is None:
            raise CorruptDocumentError(file_name, f"is not a .docx file (it has no {main})")
        body = child(root, "body")
        if body is None:
            raise CorruptDocumentError(file_name, f"is not a .docx file ({main} has no body)")
        out = BlockText()
        stories = _Stories(archive, main, _styles(archive), out, self.include_headers_footers)
        stories.read_body(body)
        text, elements, _ = out.result()
        if not text.strip():
            raise EmptyDocumentError(file_name, "has no text")
        metadata: dict[str, Any] = {"file_name": file_name, "file_type": "docx"}
        metadata.update(core_properties(archive))
        if "title" not in metadata:
            heading = next((e for e in elements if e.kind == "heading" and e.level == 1), None)
            if heading is not None:
                metadata["title"] = heading.attrs["title"]
        note = archive.active_content_note()
        if note:
            add_warning(metadata, note)
        return [make_document(text, metadata, elements)]


def _main_part(archive: Archive) -> str:
    for kind, target in archive.relationships("").values():
        if kind == "officeDocument":
            return target
    return "word/document.xml"


def _styles(archive: Archive) -> dict[str, _Style]:
    root = archive.xml("word/styles.xml")
    found: dict[str, _Style] = {}
    if root is None:
        return found
    for style in children(root, "style"):
        style_id = attr(style, "styleId")
        if not style_id:
            continue
        name_node, based_node = child(style, "name"), child(style, "basedOn")
        ppr = child(style, "pPr")
        found[style_id] = _Style(
            name=(attr(name_node, "val") or "") if name_node is not None else "",
            based_on=attr(based_node, "val") if based_node is not None else None,
            outline_level=_outline_level(ppr),
            numbered=_numbered(ppr),
        )
    return found


@dataclass
class _Stories:
    """The body read in order, each section's headers before it and footers after it (each part once)."""

    archive: Archive
    main: str
    styles: dict[str, _Style]
    out: BlockText
    headers_footers: bool
    _sections: list[XmlElement | None] = field(default_factory=list)
    _read: set[str] = field(default_factory=set)

    def read_body(self, body: XmlElement) -> None:
        # Every section's properties, last first (the body's own), so the section being read is the list's end.
        self._sections = [child(body, "sectPr"), *reversed(list(_section_breaks(body)))]
        self._margins("header")
        self._walk(body, {})
        self._margins("footer")

    def _walk(self, container: XmlElement, attrs: dict[str, str]) -> None:
        """The block content of a story (or of a content control in it) in document order."""
        for node in container:
            tag = local(node.tag)
            if tag == "p":
                _paragraph(node, self.out, self.styles, attrs)
                ended = child(child(node, "pPr"), "sectPr")
                if ended is not None and not attrs and len(self._sections) > 1:  # a section of the body ends
                    self._margins("footer")
                    self._sections.pop()
                    self._margins("header")
            elif tag == "tbl":
                self.out.add_table(_table_rows(node), attrs=attrs or None)
            elif tag in _TRANSPARENT:
                self._walk(node, attrs)

    def _margins(self, kind: str) -> None:
        """The headers (or footers) the current section names, in stored order, each part read the first time."""
        section = self._sections[-1]
        if section is None or not self.headers_footers:
            return
        rels = self.archive.relationships(self.main)
        for reference in children(section, f"{kind}Reference"):
            rel_kind, part = rels.get(attr(reference, "id") or "", ("", ""))
            if rel_kind != kind or part in self._read:
                continue
            self._read.add(part)
            root = self.archive.xml(part)
            if root is not None:
                self._walk(root, {f"page_{kind}": attr(reference, "type") or "default"})


def _section_breaks(container: XmlElement) -> Iterator[XmlElement]:
    """The properties of every section but the last, in order: each ends a paragraph (``w:pPr/w:sectPr``)."""
    for node in container:
        tag = local(node.tag)
        if tag == "p":
            ended = child(child(node, "pPr"), "sectPr")
            if ended is not None:
                yield ended
        elif tag in _TRANSPARENT:
            yield from _section_breaks(node)


def _paragraph(paragraph: XmlElement, out: BlockText, styles: dict[str, _Style], attrs: dict[str, str]) -> None:
    text = paragraph_text(paragraph)
    ppr = child(paragraph, "pPr")
    style_node = child(ppr, "pStyle")
    style_id = attr(style_node, "val") if style_node is not None else None
    level = _heading_level(ppr, style_id, styles)
    if level is not None:
        out.add(" ".join(text.split()), "heading", level=level, attrs=attrs or None)
    elif _numbered(ppr) or _style_numbered(style_id, styles):
        out.add(text, "list_item", attrs=attrs or None)
    else:
        out.add(text, "paragraph", attrs=attrs or None)


def paragraph_text(paragraph: XmlElement) -> str:
    """A paragraph's visible text: runs (also inside links, fields and insertions), line breaks as "\\n"."""
    pieces: list[str] = []
    stack = [iter(paragraph)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        tag = local(node.tag)
        if tag in _SKIPPED or tag == "pPr" or tag == "rPr":
            continue
        if tag in _RUN_TEXT:
            value = _RUN_TEXT[tag]
            if value is None:
                pieces.append(node.text or "")
            elif tag == "br" and attr(node, "type") == "page":
                pieces.append("\n")
            else:
                pieces.append(value)
            continue
        stack.append(iter(node))
    lines = ("".join(pieces)).split("\n")
    return "\n".join(" ".join(line.split()) for line in lines if line.strip())


def _table_rows(table: XmlElement) -> list[list[str]]:
    """Every row's cell texts; the header row (``w:tblHeader``) first."""
    rows: list[list[str]] = []
    header_index: int | None = None
    for row in _children(table, "tr"):
        cells = [_cell_text(cell) for cell in _children(row, "tc")]
        marker = child(child(row, "trPr"), "tblHeader")
        if header_index is None and marker is not None and attr(marker, "val") not in ("0", "false", "off"):
            header_index = len(rows)
        rows.append(cells)
    if header_index:
        rows.insert(0, rows.pop(header_index))
    return rows


def _children(parent: XmlElement, tag: str) -> list[XmlElement]:
    """``parent``'s children named ``tag`` (a table's ``tr``, a row's ``tc``), also inside transparent wrappers."""
    found = []
    for node in parent:
        name = local(node.tag)
        if name == tag:
            found.append(node)
        elif name in _TRANSPARENT:
            found.extend(_children(node, tag))
    return found


def _cell_text(cell: XmlElement) -> str:
    """A cell's paragraphs (and any table nested in it) as one line."""
    parts = []
    for node in cell:
        tag = local(node.tag)
        if tag == "p":
            parts.append(paragraph_text(node))
        elif tag == "tbl":
            parts.extend(" ".join(row) for row in _table_rows(node))
        elif tag in _TRANSPARENT:
            parts.append(_cell_text(node))
    return " ".join(" ".join(parts).split())


def _heading_level(ppr: XmlElement | None, style_id: str | None, styles: dict[str, _Style]) -> int | None:
    own = _outline_level(ppr)
    if own is not None:
        return own + 1 if own < 9 else None
    seen = 0
    while style_id and style_id in styles and seen < _STYLE_CHAIN_LIMIT:
        style = styles[style_id]
        if style.outline_level is not None:
            return style.outline_level + 1 if style.outline_level < 9 else None
        match = _HEADING_NAME.match(style.name.strip())
        if match:
            return int(match.group(1))
        if style.name.strip().lower() == "title":
            return 1
        style_id, seen = style.based_on, seen + 1
    if style_id and style_id not in styles:  # a style id without styles.xml: Word's own ids
        match = _HEADING_NAME.match(style_id)
        if match:
            return int(match.group(1))
        if style_id.lower() == "title":
            return 1
    return None


def _outline_level(ppr: XmlElement | None) -> int | None:
    node = child(ppr, "outlineLvl")
    if node is None:
        return None
    try:
        return int(attr(node, "val") or "")
    except ValueError:
        return None


def _numbered(ppr: XmlElement | None) -> bool:
    numpr = child(ppr, "numPr")
    if numpr is None:
        return False
    num_id = child(numpr, "numId")
    return num_id is None or attr(num_id, "val") != "0"


def _style_numbered(style_id: str | None, styles: dict[str, _Style]) -> bool:
    seen = 0
    while style_id and style_id in styles and seen < _STYLE_CHAIN_LIMIT:
        style = styles[style_id]
        if style.numbered:
            return True
        if style.name.lower().startswith("list bullet") or style.name.lower().startswith("list number"):
            return True
        style_id, seen = style.based_on, seen + 1
    return False
