"""The structure-aware PDF parser: pdfplumber's characters and ruled tables turned into blocks.

A PDF has no paragraphs or headings, only characters with a position, a font and
a size. This module rebuilds them the way a reader does:

* **tables** are the page's ruled tables as :mod:`core.loaders.pdf_tables` reads
  them (frames around the page left out, nested tables kept); the characters
  they were read from are left out of the running text, and each table becomes
  one table block placed where its top edge is, the tables nested in its cells
  right after it;
* **lines** are pdfplumber's text lines of the remaining characters;
* the **body size** is the font size most characters of the whole document have;
  a line at least ``heading_ratio`` times larger is a heading, and so is a line in
  bold at body size or above that is short and does not end like a sentence. The
  distinct heading sizes, largest first, are levels 1, 2, 3 (bold body-size
  headings come last); consecutive heading lines of one size are one heading,
  kept as one only if it reads as a title (:func:`reads_as_heading`: at most
  200 characters, mostly words, not a sentence, not a form's "Label: value"
  line or fill-in blank, not an answer such as "None"), else it is a paragraph;
* other lines join into a **paragraph** until the gap above a line is more than
  half a line high, the size changes, or the line starts with a list marker
  (``-``, ``•``, ``1.``), which opens a **list item**. Lines are joined by a space;
  a line ending in a hyphen joins the next without one.

A page set in columns (two, three or more) is read column by column, band by band
(:mod:`core.loaders.pdf_columns`), and a page in a frame split by column rules by the
frame's rows and cells; a paragraph never joins across a column.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from io import BytesIO
from typing import Any

from core.loaders.pdf_columns import column_regions, frame_regions
from core.loaders.pdf_corruption import (
    WORD_GAP_EM,
    angled_lines,
    char_direction,
    char_size,
    direction_options,
    join_vertical_lines,
    one_glyph_per_position,
)
from core.loaders.pdf_tables import BoxIndex, PageTables, Table, has_text, read_tables
from core.loaders.pdf_titles import reads_as_heading

LIST_MARKER = re.compile(r"^(?:[-\u2022\u2023\u25aa\u25e6\u2013*]|\d{1,3}[.)])\s+")
BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
# A bold line longer than this, or ending like a sentence, is emphasis in the text, not a heading.
MAX_BOLD_HEADING_CHARS = 90
MAX_HEADING_LEVEL = 6


@dataclass
class Block:
    """One piece of a page in reading order: a heading (with level), paragraph, list item or table (rows)."""

    kind: str
    text: str = ""
    level: int | None = None
    rows: list[list[str]] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)  # a table's: where it is nested (core.loaders.pdf_tables)


@dataclass
class _Line:
    text: str
    top: float
    bottom: float
    size: float
    bold: bool
    region: int = 0  # which of the page's regions (columns, bands) it is in, in reading order


def read_pages(
    data: bytes, *, find_tables: bool = True, heading_ratio: float = 1.15
) -> tuple[list[list[Block]], dict[int, int]]:
    """Every page's blocks in reading order (an empty list for a page with no text); and the pages that draw
    their glyphs over themselves, read once per position, with how many times a glyph was drawn
    (:mod:`core.loaders.pdf_corruption`)."""
    import pdfplumber

    pages: list[list[_Line | Table]] = []
    overdrawn: dict[int, int] = {}
    with pdfplumber.open(BytesIO(data), password="") as pdf:
        for number, page in enumerate(pdf.pages, start=1):
            view, times = one_glyph_per_position(page)
            if times > 1:
                overdrawn[number] = times
            pages.append(_page_items(view, find_tables, data))
            page.close()  # pdfplumber keeps every page's objects otherwise
    sizes: Counter[float] = Counter()
    for items in pages:
        for item in items:
            if isinstance(item, _Line):
                sizes[item.size] += len(item.text)
    body = sizes.most_common(1)[0][0] if sizes else 0.0
    levels = _heading_levels(pages, body, heading_ratio)
    pages_blocks = [_blocks(items, body, heading_ratio, levels) for items in pages]
    _demote_non_headings(pages_blocks)
    return pages_blocks, overdrawn


def page_text(data: bytes, numbers: list[int], *, layout: bool = False) -> dict[int, str]:
    """pdfplumber's plain text of the pages ``numbers`` (1-based): what the pypdf parser falls back to on a garbled page."""
    return {number: text for number, (text, _) in page_readings(data, numbers, layout=layout).items()}


def page_readings(data: bytes, numbers: list[int], *, layout: bool = False) -> dict[int, tuple[str, int]]:
    """pdfplumber's plain text of the pages ``numbers`` (1-based), each glyph once per position, and how many
    times each page drew its most repeated glyph over itself (1: not overdrawn)."""
    import pdfplumber

    readings: dict[int, tuple[str, int]] = {}
    with pdfplumber.open(BytesIO(data), password="") as pdf:
        for number in numbers:
            page = pdf.pages[number - 1]
            view, times = one_glyph_per_position(page)
            readings[number] = (_plain_text(view, layout), times)
            page.close()
    return readings


def _plain_text(page: Any, layout: bool) -> str:
    """pdfplumber's text of a page; a page set in columns read column by column, band by band; text turned by 90,
    180 or 270 degrees read in its direction, its lines placed among the others by their top (not in ``layout``,
    which keeps pdfplumber's own placing)."""
    visible = [char for char in page.chars if char["text"].strip()]
    turned = {char_direction(char) for char in visible} - {0}
    if layout:
        return page.extract_text(layout=True, x_tolerance_ratio=WORD_GAP_EM) or ""
    if not turned:
        regions = column_regions(page, visible) or [page.bbox]
        views = [page] if len(regions) == 1 else [page.crop(region) for region in regions]
        texts = (view.extract_text(x_tolerance_ratio=WORD_GAP_EM) or "" for view in views)
        return "\n".join(text for text in texts if text)
    upright = page.filter(lambda obj: obj.get("object_type") != "char" or char_direction(obj) not in turned)
    lines = [(line.top, line.text) for line in _lines(upright, 0, {})]
    for direction in sorted(turned):
        view = page.filter(lambda obj, d=direction: obj.get("object_type") == "char" and char_direction(obj) == d)
        lines.extend((line.top, line.text) for line in _turned_lines(view, direction, 0))
    return "\n".join(text for _, text in sorted(lines, key=lambda line: line[0]))


def _page_items(page: Any, find_tables: bool, data: bytes) -> list[_Line | Table]:
    found = read_tables(page, data) if find_tables else PageTables([], [], [])
    tables, boxes = found.tables, found.boxes
    taken = BoxIndex(boxes)

    def outside_tables(obj: dict[str, Any]) -> bool:
        # Only a character inside a cell is the table's: one in its outline but in no cell stays running text.
        return obj.get("object_type") != "char" or not taken.holds(obj)

    text_page = page.filter(outside_tables) if boxes else page
    visible = [char for char in text_page.chars if char["text"].strip()]
    # Text turned (by 90, 180, 270 degrees or at any other angle) is read apart, in its own direction:
    # pdfplumber reads it backwards or scatters it, and a diagonal watermark's letters among the lines it crosses.
    turned = {char_direction(char) for char in visible} - {0}
    if turned:
        text_page = text_page.filter(lambda obj: obj.get("object_type") != "char" or char_direction(obj) not in turned)
        visible = [char for char in visible if char_direction(char) not in turned]
    # A frame split by column rules sets off the page's regions itself; else the gutters between columns do.
    regions = frame_regions(page, found.frames) or column_regions(page, visible) or [page.bbox]
    items: list[_Line | Table] = []
    items.extend(_region_lines(text_page, regions))
    items.extend(_turned_page_lines(page, turned, outside_tables, regions))
    items.extend(_table_items(tables, regions))
    # Reading order: region by region (one region unless the page is set in columns), top to bottom in each.
    items.sort(key=lambda item: (item.region, item.top))
    return items


def _region_lines(text_page: Any, regions: list[Any]) -> list[_Line]:
    """The upright lines of ``text_page``, region by region (a page set in columns is read column by column)."""
    lines: list[_Line] = []
    for region_index, region in enumerate(regions):
        view = text_page if len(regions) == 1 else text_page.crop(region)
        lines.extend(_lines(view, region_index, {}))
    return lines


def _turned_page_lines(
    page: Any, turned: set[int], keep: Callable[[dict[str, Any]], bool], regions: list[Any]
) -> list[_Line]:
    """The lines of the characters ``keep`` keeps that run in each direction of ``turned``, read apart, each
    direction's lines in the region where its characters start."""
    lines: list[_Line] = []
    for direction in sorted(turned):
        view = page.filter(
            lambda obj, d=direction: obj.get("object_type") == "char" and char_direction(obj) == d and keep(obj)
        )
        chars = view.chars
        where = (min(c["x0"] for c in chars), min(c["top"] for c in chars), max(c["x1"] for c in chars), 0.0)
        lines.extend(_turned_lines(view, direction, _region_of(where, regions)))
    return lines


def _table_items(tables: list[Table], regions: list[Any]) -> list[Table]:
    """The tables that hold some text, each placed at its top edge in its region."""
    for table in tables:
        table.region = _region_of(table.bbox, regions)
    return [table for table in tables if has_text(table.rows)]


def _turned_lines(view: Any, direction: int, region: int) -> list[_Line]:
    """The lines of ``view``, whose characters all run at ``direction`` (90, 180, 270, or -1: another angle)."""
    if direction != -1:
        return _lines(view, region, direction_options(view.chars))
    lines = []
    for line in angled_lines(view.chars, WORD_GAP_EM):
        bold = all(BOLD_FONT.search(str(c.get("fontname", ""))) for c in line["chars"] if c["text"].strip())
        size = round(float(line["size"]), 1)
        lines.append(_Line(line["text"], float(line["top"]), float(line["bottom"]), size, bold, region))
    return lines


def _lines(view: Any, region: int, options: dict[str, str]) -> list[_Line]:
    """pdfplumber's text lines of ``view`` (read with ``options``: a direction), as lines of ``region``."""
    lines = []
    found = view.extract_text_lines(return_chars=True, strip=True, x_tolerance_ratio=WORD_GAP_EM, **options)
    if "line_dir_rotated" in options:
        found = join_vertical_lines(found)
    for line in found:
        chars = [c for c in line["chars"] if c["text"].strip()]
        if not chars or not line["text"].strip():
            continue
        sizes = (char_size(c) if options else float(c["size"]) for c in chars)
        size = round(Counter(round(value, 1) for value in sizes).most_common(1)[0][0], 1)
        bold = all(BOLD_FONT.search(str(c.get("fontname", ""))) for c in chars)
        top, bottom = float(line["top"]), float(line["bottom"])
        lines.append(_Line(line["text"].strip(), top, bottom, size, bold, region))
    return lines


def _region_of(bbox: tuple[float, float, float, float], regions: list[Any]) -> int:
    x = (bbox[0] + bbox[2]) / 2
    y = bbox[1]
    return next(
        (index for index, (x0, top, x1, bottom) in enumerate(regions) if x0 <= x <= x1 and top <= y <= bottom), 0
    )


def _is_heading(line: _Line, body: float, ratio: float) -> bool:
    if not re.search(r"[^\W\d_]", line.text):
        return False
    if line.size >= body * ratio:
        return True
    return (
        line.bold
        and line.size >= body
        and len(line.text) <= MAX_BOLD_HEADING_CHARS
        and not line.text.endswith((".", ",", ";", ":"))
    )


def _heading_levels(pages: list[list[_Line | Table]], body: float, ratio: float) -> dict[float, int]:
    """Heading size -> level: the larger sizes first; bold headings at body size share the last level."""
    lines = [item for items in pages for item in items if isinstance(item, _Line)]
    large = sorted(
        {line.size for line in lines if line.size >= body * ratio and _is_heading(line, body, ratio)}, reverse=True
    )
    levels = {size: min(index + 1, MAX_HEADING_LEVEL) for index, size in enumerate(large)}
    bold_level = min(len(large) + 1, MAX_HEADING_LEVEL)
    for line in lines:
        if line.size not in levels and _is_heading(line, body, ratio):
            levels[line.size] = bold_level
    return levels


def _blocks(items: list[_Line | Table], body: float, ratio: float, levels: dict[float, int]) -> list[Block]:
    blocks: list[Block] = []
    previous: _Line | None = None
    for item in items:
        if isinstance(item, Table):
            # A table's block, then the blocks of the tables nested in its cells, each followed by its own.
            blocks.extend(Block("table", rows=table.rows, attrs=table.attrs) for table in item.in_reading_order())
            previous = None
            continue
        heading = _is_heading(item, body, ratio)
        kind = "heading" if heading else ("list_item" if LIST_MARKER.match(item.text) else "paragraph")
        current = blocks[-1] if blocks else None
        joins = (
            current is not None
            and previous is not None
            and kind != "list_item"
            and (current.kind == "heading") == heading
            and (not heading or current.level == levels.get(item.size))
            and previous.region == item.region
            and abs(previous.size - item.size) < 0.5
            and item.top - previous.bottom <= 0.5 * max(previous.bottom - previous.top, 1.0)
        )
        if joins and current is not None:
            current.text = _join(current.text, item.text)
        else:
            blocks.append(Block(kind, item.text, level=levels.get(item.size) if heading else None))
        previous = item
    return blocks


def _demote_non_headings(pages_blocks: list[list[Block]]) -> None:
    """Make the heading blocks that do not read as headings paragraphs (or list items), and number the levels
    that remain 1, 2, 3 in their order, so a demoted size leaves no gap."""
    kept: set[int] = set()
    for blocks in pages_blocks:
        for block in blocks:
            if block.kind != "heading":
                continue
            if reads_as_heading(block.text):
                kept.add(block.level or 1)
            else:
                block.kind = "list_item" if LIST_MARKER.match(block.text) else "paragraph"
                block.level = None
    renumbered = {level: index for index, level in enumerate(sorted(kept), start=1)}
    for blocks in pages_blocks:
        for block in blocks:
            if block.kind == "heading":
                block.level = renumbered[block.level or 1]


def _join(text: str, line: str) -> str:
    # A hyphen at a line's end usually joins a compound ("Retrieval-" + "Augmented"); keep it, add no space.
    return f"{text}{line}" if text.endswith("-") else f"{text} {line}"
