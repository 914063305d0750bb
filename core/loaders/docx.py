"""Word (.docx): the body's paragraphs, headings, list items and tables, read straight from the XML.

The main part (``word/document.xml``, or wherever ``_rels/.rels`` points) is
walked in order. A paragraph is a heading when its own outline level, or its
style's (through ``basedOn``), says so, or when its style is named "Heading N"
or "Title"; a list item when it or its style is numbered. Tables become
Markdown-like rows (see :mod:`core.loaders.blocks`); the row marked as a header
(``w:tblHeader``), else the first, is the header. A merged cell keeps every
value under its header: a cell spanning columns (``w:gridSpan``) is its value
then empty cells, a cell continuing a vertical merge (``w:vMerge``) is empty.
Deleted text of tracked changes, text moved away (``w:moveFrom``: it is read
where it moved to, as Word's final view shows it), field codes and comments are
left out; a paragraph's line breaks are kept. Word stores no page breaks it can
vouch for, so a DOCX has no pages.

What a paragraph anchors follows it, in its order there: a picture's
description (its alt text, ``wp:docPr/@descr``, else its title) as a paragraph
marked ``alt_text``, and a text box's content (``w:txbxContent``, its own
story of paragraphs and tables) marked ``text_box``. Of alternate content
(``mc:AlternateContent``) only the first choice is read: the fallback is a copy
of the same text box for older readers. Equations (OMML) are linear text
(:mod:`core.loaders.omml`). Anchors and notes are read by :mod:`core.loaders.docx_notes`.

Footnotes and endnotes (``include_footnotes``, on by default) leave a mark
where they are referenced, ``[^1]`` (footnotes numbered 1, 2, 3 and endnotes
i, ii, iii, Word's default formats, in the order they are referenced), and
are read after the body, under a "Footnotes" (or "Endnotes") heading, one
paragraph per note, ``[^1]: text``, marked ``footnote`` (``endnote``) with its
number; the headings are marked ``footnotes`` (``endnotes``).

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
tags, read in document order with ``mc:Fallback`` copies skipped; the archive's
size is bounded before anything is unpacked, XML goes through defusedxml, and
the app gains no lxml dependency.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element as XmlElement

from core.errors import CorruptDocumentError, EmptyDocumentError, TooLargeError
from core.loaders.archive import Archive, ZipLoader, attr, child, children, core_properties, local
from core.loaders.blocks import BlockText
from core.loaders.docx_notes import (
    Notes,
    alt_text_marks,
    anchored,
    chosen,
    is_notes_heading,
    paragraph_nodes,
    read_notes,
)
from core.loaders.omml import math_text
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import add_warning, make_document
from core.params import param
from core.schema import Document

_HEADING_NAME = re.compile(r"heading\s*([1-9])$", re.IGNORECASE)
# Run content that is text; everything else in a run (drawings, objects, field codes, deleted text) is not.
# A positional tab (``w:ptab``, Word's "Company<tab>Page 1" in footers) is a tab as a reader sees it.
_RUN_TEXT = {"t": None, "tab": "\t", "ptab": "\t", "br": "\n", "cr": "\n", "noBreakHyphen": "-", "softHyphen": ""}
# Containers whose content is not part of a paragraph's own text: text boxes (their own story, read after
# the paragraph), deleted text and text moved away (tracked changes: Word's final view shows neither, and a
# move's text is read where it moved to), embedded objects and pictures (their alt text is read after the
# paragraph), and the paragraph's and runs' properties.
_SKIPPED = frozenset(
    {"txbxContent", "del", "moveFrom", "object", "drawing", "pict", "instrText", "delText", "pPr", "rPr"}
)
# What a paragraph's text is read from, and nothing under it: runs' text, equations, notes' references.
_TEXT_NODES = frozenset({*_RUN_TEXT, "oMath", "oMathPara", "footnoteReference", "endnoteReference"})
# Wrappers around paragraphs and tables in the body: content controls, custom XML, tracked insertions; and
# alternate content, whose first choice alone is read (see ``_inside``).
_TRANSPARENT = frozenset({"sdt", "sdtContent", "customXml", "ins", "moveTo", "smartTag", "AlternateContent"})
_STYLE_CHAIN_LIMIT = 20
# The columns one cell may span in a table that declares no grid (Word always writes one).
_MAX_SPAN = 64
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
    include_footnotes: bool = param(
        True,
        "Read footnotes and endnotes: a mark where each is referenced ([^1]), the notes after the body under a "
        "Footnotes (Endnotes) heading.",
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
        notes = Notes() if self.include_footnotes else None
        stories = _Stories(archive, main, _styles(archive), out, self.include_headers_footers, notes)
        stories.read_body(body)
        text, elements, _ = out.result()
        if not text.strip():
            raise EmptyDocumentError(file_name, "has no text")
        metadata: dict[str, Any] = {"file_name": file_name, "file_type": "docx"}
        metadata.update(core_properties(archive))
        if "title" not in metadata:
            heading = next(
                (e for e in elements if e.kind == "heading" and e.level == 1 and not is_notes_heading(e.attrs)),
                None,
            )
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
    notes: Notes | None = None
    _sections: list[XmlElement | None] = field(default_factory=list)
    _read: set[str] = field(default_factory=set)
    _grid_cells: int = 0

    def read_body(self, body: XmlElement) -> None:
        # Every section's properties, last first (the body's own), so the section being read is the list's end.
        self._sections = [child(body, "sectPr"), *reversed(list(_section_breaks(body)))]
        self._margins("header")
        self._walk(body, {})
        self._notes()
        self._margins("footer")

    def _walk(self, container: XmlElement, attrs: dict[str, Any]) -> None:
        """The block content of a story (or of a content control in it) in document order."""
        for node in container:
            tag = local(node.tag)
            if tag == "p":
                _paragraph(node, self.out, self.styles, attrs, self.notes)
                self._anchored(node, attrs)
                ended = child(child(node, "pPr"), "sectPr")
                if ended is not None and not attrs and len(self._sections) > 1:  # a section of the body ends
                    self._margins("footer")
                    self._sections.pop()
                    self._margins("header")
            elif tag == "tbl":
                self.out.add_table(self._table_rows(node), attrs=attrs or None)
            elif tag in _TRANSPARENT:
                self._walk(_inside(node), attrs)

    def _anchored(self, paragraph: XmlElement, attrs: dict[str, Any]) -> None:
        """What ``paragraph`` anchors, after it: pictures' descriptions and text boxes' content."""
        for found in anchored(paragraph):
            if isinstance(found, str):
                self.out.add(found, "paragraph", attrs={**attrs, **alt_text_marks(found)})
            else:
                self._walk(found, {**attrs, "text_box": True})

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

    def _notes(self) -> None:
        """The notes referenced, after the body: each kind under its heading, in the order of their numbers."""
        if self.notes is not None:
            read_notes(self.archive, self.main, self.notes, self.out, lambda note: _block_text(note, "\n"))

    def _table_rows(self, table: XmlElement) -> list[list[str]]:
        """Every row's cells on the table's grid; the header row (``w:tblHeader``) first.

        A merged cell leaves the cells it covers empty, never repeats its value: the row keeps one cell per grid
        column (so every value stays under its header and the Markdown table stays rectangular), and a value
        written once is counted once by every word count and retrieval score."""
        grid = child(table, "tblGrid")
        width = sum(1 for _ in children(grid, "gridCol")) if grid is not None else 0
        rows: list[list[str]] = []
        header_index: int | None = None
        for row in _children(table, "tr"):
            trpr = child(row, "trPr")
            cells: list[str] = []
            self._cover(cells, _int_value(child(trpr, "gridBefore"), 0), width)
            for cell in _children(row, "tc"):
                tcpr = child(cell, "tcPr")
                merge = child(tcpr, "vMerge")
                continues = merge is not None and attr(merge, "val") in (None, "continue")
                self._count_grid_cells(1)
                cells.append("" if continues else _block_text(cell, " ", self.notes))
                self._cover(cells, _int_value(child(tcpr, "gridSpan"), 1) - 1, width)
            marker = child(trpr, "tblHeader")
            if header_index is None and marker is not None and attr(marker, "val") not in ("0", "false", "off"):
                header_index = len(rows)
            rows.append(cells)
        if header_index:
            rows.insert(0, rows.pop(header_index))
        return rows

    def _cover(self, cells: list[str], count: int, width: int) -> None:
        """``count`` empty cells, the grid columns a merged cell (or a row's indent) covers; never past the
        table's grid (a damaged or hostile span), nor more than ``_MAX_SPAN`` when the table declares no grid."""
        count = min(count, max(width - len(cells), 0) if width else _MAX_SPAN)
        if count > 0:
            self._count_grid_cells(count)
            cells.extend([""] * count)

    def _count_grid_cells(self, count: int) -> None:
        """Spans multiply cells: the grid's cells are bounded by the same limit as the stored ones."""
        self._grid_cells += count
        limit = self.archive.budget.limits.max_table_cells
        if self._grid_cells > limit:
            raise TooLargeError(
                self.archive.file_name,
                f"has more than {limit:,} table cells (limit: max_table_cells={limit:,}); refused before reading "
                "the rest",
            )


def _inside(wrapper: XmlElement) -> XmlElement:
    """What a transparent wrapper holds: its content, or of alternate content (``mc:AlternateContent``) the first
    choice (else the fallback), as in a paragraph: the others are copies of it."""
    if local(wrapper.tag) != "AlternateContent":
        return wrapper
    branch = chosen(wrapper)
    return branch if branch is not None else XmlElement("empty")


def _int_value(node: XmlElement | None, default: int) -> int:
    try:
        return int(attr(node, "val") or "") if node is not None else default
    except ValueError:
        return default


def _section_breaks(container: XmlElement) -> Iterator[XmlElement]:
    """The properties of every section but the last, in order: each ends a paragraph (``w:pPr/w:sectPr``)."""
    for node in container:
        tag = local(node.tag)
        if tag == "p":
            ended = child(child(node, "pPr"), "sectPr")
            if ended is not None:
                yield ended
        elif tag in _TRANSPARENT:
            yield from _section_breaks(_inside(node))


def _paragraph(
    paragraph: XmlElement, out: BlockText, styles: dict[str, _Style], attrs: dict[str, Any], notes: Notes | None
) -> None:
    text = paragraph_text(paragraph, notes)
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


def paragraph_text(paragraph: XmlElement, notes: Notes | None = None) -> str:
    """A paragraph's visible text: runs (also inside links, fields and insertions), equations as linear text,
    a note's mark where it is referenced (when ``notes`` numbers them), line breaks as "\\n"."""
    pieces = [_node_text(tag, node, notes) for tag, node in paragraph_nodes(paragraph, _SKIPPED, _TEXT_NODES)]
    lines = ("".join(pieces)).split("\n")
    return "\n".join(" ".join(line.split()) for line in lines if line.strip())


def _node_text(tag: str, node: XmlElement, notes: Notes | None) -> str:
    """What one node of a paragraph adds to its text: a run's text, a tab or a break, an equation, a note's mark."""
    if tag in _RUN_TEXT:
        value = _RUN_TEXT[tag]
        return (node.text or "") if value is None else value
    if tag in ("oMath", "oMathPara"):  # an equation stands apart from the words around it
        return f" {math_text(node)} "
    if tag in ("footnoteReference", "endnoteReference") and notes is not None:
        return notes.mark(tag.removesuffix("Reference"), attr(node, "id") or "")
    return ""


def _children(parent: XmlElement, tag: str) -> list[XmlElement]:
    """``parent``'s children named ``tag`` (a table's ``tr``, a row's ``tc``), also inside transparent wrappers."""
    found = []
    for node in parent:
        name = local(node.tag)
        if name == tag:
            found.append(node)
        elif name in _TRANSPARENT:
            found.extend(_children(_inside(node), tag))
    return found


def _block_text(container: XmlElement, joiner: str, notes: Notes | None = None) -> str:
    """A cell's (or a note's) paragraphs, what they anchor, and any table in it, joined by ``joiner``; each
    part on one line."""
    parts = []
    for node in container:
        tag = local(node.tag)
        if tag == "p":
            parts.append(paragraph_text(node, notes))
            for found in anchored(node):
                parts.append(found if isinstance(found, str) else _block_text(found, " ", notes))
        elif tag == "tbl":
            parts.extend(" ".join(cell for cell in row if cell) for row in _plain_rows(node, notes))
        elif tag in _TRANSPARENT:
            parts.append(_block_text(_inside(node), joiner, notes))
    return joiner.join(" ".join(part.split()) for part in parts if part.strip())


def _plain_rows(table: XmlElement, notes: Notes | None) -> list[list[str]]:
    """A nested table's rows, cell by cell (no grid: the rows are flattened into their cell's line)."""
    return [[_block_text(cell, " ", notes) for cell in _children(row, "tc")] for row in _children(table, "tr")]


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
