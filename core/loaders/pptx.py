"""PowerPoint (.pptx): one page per slide, with the slide's title, text and tables.

Slides are read in the order ``ppt/presentation.xml`` lists them; each is a
page labelled with its slide number. On a slide, shapes are read in their
stored order (groups opened): a title placeholder is a heading (level 1 for a
title slide's centred title, level 2 for a slide title), the paragraphs of a
content placeholder or of a bulleted text are list items, other text is
paragraphs, and a table becomes Markdown-like rows with its first row as the
header. A picture's alt text (its description, else its title) is a paragraph,
as markitdown and screen readers give it, also when it is only the picture's
file name (PowerPoint writes the inserted file's name there, and names such as
"q3-revenue.png" say what the picture shows; such a paragraph is marked
``file_name``); a chart is a table of its data (the series as columns, the
categories as rows, each value in its category's row, under the chart's title
and its axes' titles),
read from the values the chart part caches; a SmartArt graphic is its points'
paragraphs, marked ``smartart``, in its text pane's order (markitdown and
python-pptx read none of it). Each slide's speaker notes follow
its content, marked ``notes`` (markitdown and LlamaIndex read them too; they
are often the talk's own words), unless ``include_notes`` is off; embedded
objects and media are never read. An equation (``a14:m``, the choice of its
alternate content; the fallback is a copy) is linear text, as in a DOCX
(:mod:`core.loaders.omml`).

A slide's footer, date and slide number placeholders (``include_footers``, on
by default) follow its content, before its notes, each a paragraph marked
``slide_footer`` with its kind (``footer``, ``date``, ``slide_number``,
``header``): markitdown reads them too, and a footer can name what the body
does not (a client, a version, "Confidential"). A slide number field shows the
slide's own number, whatever number the file cached for it. Only what the
slide itself holds is read: a placeholder left on the layout or the master is
not shown on the slide.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element as XmlElement

from core.errors import CorruptDocumentError, EmptyDocumentError
from core.loaders.archive import Archive, ZipLoader, child, children, core_properties, descendants, local
from core.loaders.blocks import BlockText
from core.loaders.omml import math_text
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import add_warning, make_document
from core.params import param
from core.schema import Document, Element

_TITLES = {"ctrTitle": 1, "title": 2}
# Placeholders whose paragraphs are bullets unless a paragraph says otherwise (no type means "obj").
_BULLETED_PLACEHOLDERS = frozenset({"body", "obj"})
# Placeholders that are the slide's margins, not its content: read after it, marked with their kind.
_MARGIN_PLACEHOLDERS = {"ftr": "footer", "dt": "date", "sldNum": "slide_number", "hdr": "header"}
_AXES = {"catAx": "category", "valAx": "value", "dateAx": "date", "serAx": "series"}
_FILE_NAME = re.compile(r"[\w ().-]+\.(?:png|jpe?g|gif|bmp|tiff?|emf|wmf|svg|webp)", re.IGNORECASE)


@LOADERS.register
@dataclass(frozen=True)
class PptxLoader(ZipLoader):
    """PowerPoint decks: one page per slide, titles as headings, bullets as list items, tables as rows."""

    name = "pptx"
    summary = "PowerPoint (.pptx): one page per slide; titles, bullets, text and tables; macros never run."
    extensions = FORMAT_EXTENSIONS["pptx"]
    format_label = "a .pptx file"
    counted_elements = {
        "sldId": ("slides", "max_sections"),
        "p": ("paragraphs", "max_paragraphs"),
        "r": ("runs", "max_runs"),
        "tr": ("table rows", "max_table_rows"),
        "tc": ("table cells", "max_table_cells"),
    }

    include_notes: bool = param(True, "Add each slide's speaker notes after its content.")
    include_footers: bool = param(
        True, "Add each slide's footer, date and slide number after its content (marked slide_footer)."
    )

    def read_archive(self, archive: Archive, data: bytes) -> list[Document]:
        file_name = archive.file_name
        slides = _slide_parts(archive)
        if not slides:
            raise EmptyDocumentError(file_name, "has no slides")
        out = BlockText()
        hidden = []
        for number, part in enumerate(slides, start=1):
            if self._read_slide(archive, part, number, out):
                hidden.append(number)
        text, elements, pages = out.result()
        if not text.strip():
            raise EmptyDocumentError(file_name, "has no text on any slide")
        return [make_document(text, _metadata(archive, elements, len(pages), hidden), elements, pages)]

    def _read_slide(self, archive: Archive, part: str, number: int, out: BlockText) -> bool:
        """Slide ``number`` as a page: its shapes, then its footers and its notes when asked. Whether it is
        hidden in the show."""
        out.start_page(str(number))
        slide = archive.xml(part)
        if slide is None:
            return False  # listed but missing: an empty page keeps the numbering
        tree = child(child(slide, "cSld"), "spTree")
        if tree is not None:
            parts = _SlideParts(archive, part, number)
            _shapes(tree, out, parts)
            if self.include_footers:
                for kind, text in parts.margins:
                    out.add(text, "paragraph", attrs={"slide_footer": kind})
        if self.include_notes:
            _notes(archive, part, out)
        return slide.get("show") in ("0", "false")


def _slide_parts(archive: Archive) -> list[str]:
    """The slides' parts, in the order the presentation lists them."""
    presentation = _main_part(archive)
    root = archive.xml(presentation)
    if root is None:
        raise CorruptDocumentError(archive.file_name, f"is not a .pptx file (it has no {presentation})")
    rels = archive.relationships(presentation)
    slide_ids = child(root, "sldIdLst")
    slides = []
    for slide_id in children(slide_ids, "sldId") if slide_ids is not None else ():
        # r:id names the relationship (the plain id attribute is the slide's number in the deck).
        rel_id = next((value for key, value in slide_id.attrib.items() if key.endswith("}id")), "")
        rel = rels.get(rel_id)
        if rel is not None:
            slides.append(rel[1])
    return slides


def _metadata(archive: Archive, elements: list[Element], page_count: int, hidden: list[int]) -> dict[str, Any]:
    """The deck's metadata: its properties (its first heading as the title when it names none) and its notes."""
    metadata: dict[str, Any] = {"file_name": archive.file_name, "file_type": "pptx", "page_count": page_count}
    metadata["page_unit"] = "slide"
    metadata.update(core_properties(archive))
    if "title" not in metadata:
        heading = next((e for e in elements if e.kind == "heading"), None)
        if heading is not None:
            metadata["title"] = heading.attrs["title"]
    if hidden:
        numbers = ", ".join(str(n) for n in hidden)
        add_warning(metadata, f"slide{'s' if len(hidden) > 1 else ''} {numbers} hidden in the show, read anyway")
    note = archive.active_content_note()
    if note:
        add_warning(metadata, note)
    return metadata


def _main_part(archive: Archive) -> str:
    for kind, target in archive.relationships("").values():
        if kind == "officeDocument":
            return target
    return "ppt/presentation.xml"


@dataclass
class _SlideParts:
    """The parts a slide's shapes point to (its charts), looked up by relationship id when a shape needs one."""

    archive: Archive
    slide_part: str
    number: int = 0
    # The slide's footer, date and number placeholders' texts, read after its content: (kind, text).
    margins: list[tuple[str, str]] = field(default_factory=list)

    def related(self, rel_id: str, wanted: str) -> XmlElement | None:
        """The part the slide's relationship ``rel_id`` points to, when it is of the ``wanted`` kind."""
        kind, target = self.archive.relationships(self.slide_part).get(rel_id, ("", ""))
        return self.archive.xml(target) if kind == wanted else None


def _shapes(tree: XmlElement, out: BlockText, parts: _SlideParts) -> None:
    for shape in tree:
        tag = local(shape.tag)
        if tag == "sp":
            _text_shape(shape, out, parts)
        elif tag == "pic":
            _alt_text(shape, out)
        elif tag == "graphicFrame":
            table = next(descendants(shape, "tbl"), None)
            if table is not None:
                out.add_table(_table_rows(table))
            chart_ref = next(descendants(shape, "chart"), None)
            chart = parts.related(_rel_attr(chart_ref, "id"), "chart") if chart_ref is not None else None
            if chart is not None:
                _chart(chart, out)
            diagram_ref = next(descendants(shape, "relIds"), None)  # SmartArt: its data model holds the text
            diagram = parts.related(_rel_attr(diagram_ref, "dm"), "diagramData") if diagram_ref is not None else None
            if diagram is not None:
                _smartart(diagram, out)
        elif tag == "grpSp":
            _shapes(shape, out, parts)
        elif tag == "AlternateContent":
            choice = child(shape, "Choice")  # the Fallback is a copy of the same content
            if choice is not None:
                _shapes(choice, out, parts)


def _rel_attr(node: XmlElement, name: str) -> str:
    """The relationship id in ``node``'s attribute ``r:name``."""
    return next((value for key, value in node.attrib.items() if key.endswith("}" + name)), "")


def _smartart(data: XmlElement, out: BlockText) -> None:
    """A SmartArt graphic's text: each point's paragraphs, marked ``smartart``, in the order its text pane lists
    them (the tree of its connections, each point's children by their order), then any point the tree misses.
    The drawing PowerPoint caches of it is a copy laid out in shapes, not read."""
    points = {point.get("modelId"): point for point in descendants(data, "pt")}
    below: dict[str | None, list[tuple[int, str | None]]] = {}
    for link in descendants(data, "cxn"):
        if link.get("type", "parOf") == "parOf":
            below.setdefault(link.get("srcId"), []).append((_int(link.get("srcOrd")), link.get("destId")))
    stack = [key for key, point in points.items() if point.get("type") == "doc"]
    order: dict[str | None, None] = {}  # the points in reading order; each once, whatever cycles the links make
    while stack:
        key = stack.pop()
        if key not in order:
            order[key] = None
            stack.extend(dest for _, dest in sorted(below.get(key, []), key=lambda link: -link[0]) if dest not in order)
    order.update(dict.fromkeys(points))
    for key in order:
        point = points.get(key)
        body = child(point, "t") if point is not None and point.get("type", "node") in ("node", "asst") else None
        for paragraph in children(body, "p") if body is not None else ():
            text = paragraph_text(paragraph)
            if text:
                out.add(text, "paragraph", attrs={"smartart": True})


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _alt_text(picture: XmlElement, out: BlockText) -> None:
    """A picture's description (else its title) as a paragraph: the words a reader of the slide is given.
    A description that is only the image's file name (what PowerPoint writes when nobody wrote one) is read too,
    marked ``file_name``: "monty-truth.png" still says more about the slide than nothing."""
    properties = next(descendants(picture, "cNvPr"), None)
    if properties is None:
        return
    for alt in (properties.get("descr") or "", properties.get("title") or ""):
        alt = " ".join(alt.split())
        if alt:
            attrs: dict[str, Any] = {"alt_text": True}
            if _FILE_NAME.fullmatch(alt):
                attrs["file_name"] = True
            out.add(alt, "paragraph", attrs=attrs)
            return


def _chart(chart: XmlElement, out: BlockText) -> None:
    """A chart's title and its axes' titles as paragraphs, then its cached data as a table: a row per category,
    a column per series."""
    title = child(child(chart, "chart"), "title")
    if title is not None:
        out.add(" ".join(t.text or "" for t in descendants(title, "t")), "paragraph", attrs={"chart": True})
    plot_area = child(child(chart, "chart"), "plotArea")
    for axis in plot_area if plot_area is not None else ():
        axis_title = child(axis, "title") if local(axis.tag) in _AXES else None
        if axis_title is not None:
            text = " ".join(t.text or "" for t in descendants(axis_title, "t"))
            out.add(text, "paragraph", attrs={"chart": True, "axis_title": _AXES[local(axis.tag)]})
    series = list(descendants(chart, "ser"))
    if not series:
        return
    names = [_cached(child(s, "tx")).get(0) or f"Series {i + 1}" for i, s in enumerate(series)]
    categories = _cached(child(series[0], "cat"))
    values = [_cached(child(s, "val")) for s in series]
    # The points present anywhere, in index order: a point one series leaves out is an empty cell of its row.
    indexes = sorted(set(categories).union(*values))
    rows = [["", *names]]
    rows += [[categories.get(index, ""), *(v.get(index, "") for v in values)] for index in indexes]
    out.add_table(rows, attrs={"chart": True})


def _cached(reference: XmlElement | None) -> dict[int, str]:
    """The values a chart caches for a reference (``c:strRef``/``c:numRef``/literals) by point index. A cache
    leaves out the points of empty cells, so a value is placed by its index, never by its position.

    Multi-level categories (``c:lvl``, the leaves first) give each point its labels from the outermost level in,
    "US / CA / SF", where a group starts, and its leaf alone inside the group."""
    if reference is None:
        return {}
    levels = list(descendants(reference, "lvl"))
    if levels:
        by_level = [_points(level) for level in reversed(levels)]
        return {
            index: " / ".join(level[index] for level in by_level if level.get(index))
            for index in sorted(set().union(*by_level))
        }
    if next(descendants(reference, "pt"), None) is None:  # a literal name: c:tx/c:v
        return dict(enumerate(" ".join((v.text or "").split()) for v in descendants(reference, "v")))
    return _points(reference)


def _points(reference: XmlElement) -> dict[int, str]:
    values: dict[int, str] = {}
    for point in descendants(reference, "pt"):
        value = child(point, "v")
        try:
            index = int(point.get("idx", ""))
        except ValueError:
            continue
        values[index] = " ".join((value.text or "").split()) if value is not None else ""
    return values


def _text_shape(shape: XmlElement, out: BlockText, parts: _SlideParts) -> None:
    body = child(shape, "txBody")
    if body is None:
        return
    properties = child(shape, "nvSpPr")
    placeholder = next(descendants(properties, "ph"), None) if properties is not None else None
    kind = (placeholder.get("type") or "obj") if placeholder is not None else None
    if kind in _MARGIN_PLACEHOLDERS:
        lines = [paragraph_text(p, parts.number) for p in children(body, "p")]
        text = "\n".join(line for line in lines if line)
        if text:
            parts.margins.append((_MARGIN_PLACEHOLDERS[kind], text))
        return
    paragraphs = [(p, paragraph_text(p)) for p in children(body, "p")]
    if kind in _TITLES:
        out.add(" ".join(text for _, text in paragraphs), "heading", level=_TITLES[kind])
        return
    bulleted_by_default = kind in _BULLETED_PLACEHOLDERS
    for paragraph, text in paragraphs:
        out.add(text, "list_item" if _bulleted(paragraph, bulleted_by_default) else "paragraph")


def _bulleted(paragraph: XmlElement, default: bool) -> bool:
    ppr = child(paragraph, "pPr")
    if ppr is not None:
        if child(ppr, "buNone") is not None:
            return False
        if child(ppr, "buChar") is not None or child(ppr, "buAutoNum") is not None:
            return True
    return default


def paragraph_text(paragraph: XmlElement, slide_number: int | None = None) -> str:
    """A DrawingML paragraph's text: runs and fields, line breaks (``a:br``) as "\\n", equations as linear text
    apart from the words around them; a slide number field shows ``slide_number`` when given (the cached text
    can be stale, or the layout's "‹#›")."""
    pieces = []
    for node in _paragraph_content(paragraph):
        tag = local(node.tag)
        if tag == "fld" and slide_number is not None and (node.get("type") or "").lower() == "slidenum":
            pieces.append(str(slide_number))
        elif tag in ("r", "fld"):
            text_node = child(node, "t")
            pieces.append((text_node.text or "") if text_node is not None else "")
        elif tag == "br":
            pieces.append("\n")
        elif tag == "m":  # a14:m, an equation: its m:oMathPara (or m:oMath)
            pieces.extend(f" {math_text(math)} " for math in node if local(math.tag) in ("oMath", "oMathPara"))
    lines = "".join(pieces).split("\n")
    return "\n".join(" ".join(line.split()) for line in lines if line.strip())


def _paragraph_content(paragraph: XmlElement) -> Iterator[XmlElement]:
    """A paragraph's children, alternate content (``mc:AlternateContent``) as its first choice's: PowerPoint
    writes an equation as an ``a14:m`` choice with a copy of it in plain runs (or nothing) as the fallback."""
    for node in paragraph:
        if local(node.tag) != "AlternateContent":
            yield node
            continue
        chosen = child(node, "Choice")
        chosen = chosen if chosen is not None else child(node, "Fallback")
        if chosen is not None:
            yield from chosen


def _table_rows(table: XmlElement) -> list[list[str]]:
    rows = []
    for row in children(table, "tr"):
        cells = []
        for cell in children(row, "tc"):
            if cell.get("hMerge") in ("1", "true") or cell.get("vMerge") in ("1", "true"):
                cells.append("")  # covered by a merged neighbour
                continue
            body = child(cell, "txBody")
            texts = [paragraph_text(p) for p in children(body, "p")] if body is not None else []
            cells.append(" ".join(" ".join(texts).split()))
        rows.append(cells)
    return rows


def _notes(archive: Archive, slide_part: str, out: BlockText) -> None:
    for kind, target in archive.relationships(slide_part).values():
        if kind != "notesSlide":
            continue
        notes = archive.xml(target)
        tree = child(child(notes, "cSld"), "spTree") if notes is not None else None
        if tree is None:
            return
        for shape in tree:
            placeholder = next(descendants(shape, "ph"), None)
            if placeholder is None or placeholder.get("type") != "body":
                continue  # the notes page's slide image, number and header are not notes
            body = child(shape, "txBody")
            lines = [paragraph_text(p) for p in children(body, "p")] if body is not None else []
            note = "\n".join(line for line in lines if line)
            if note:
                out.add(note, "paragraph", attrs={"notes": True})
        return
