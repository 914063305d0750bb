"""A PDF page's ruled tables, read as they are drawn: frames left out, nested tables kept, each cell's text.

The tables are pdfplumber's ``find_tables`` (ruled cells by default), with the rules a page draws in an image under
its text (a scanned form with its values typed in: :mod:`core.loaders.pdf_image_rules`) beside its own, except:

* a **frame** around the page (a "table" covering :data:`FRAME_SHARE` of the page or more that has one column,
  is split into columns by column rules, or holds another table) is no table: its text is running text (read
  column by column, as any page set in columns), and the tables inside it are tables;
* a table **open at its outer sides** (every row rule runs on past its outer vertical rules, with text there, as
  R draws a table) goes on to where its rules end, so its row labels and last column stay in their rows;
* a table inside another's cell is a **nested** table, read as a table of its own right after the one holding
  it; that cell keeps its own text and says so (:data:`NESTED_NOTE`), and the nested table's attributes name
  the cell;
* text that **runs on** past a cell's edge into no ruled cell (a value set longer than its label's box, or than
  the table is wide), and text set after a cell's text on its line where no cell or grid position is (a value
  beside its label's box, and the lines it wraps onto), is read with that cell, so no rule cuts a word and the
  value stays with its label;
* a cell of **turned** text (a vertical column header) is read in its direction, and the text of a grid position
  no ruled cell starts at (the unruled corner of a cross table) fills that position.

The boxes the tables' text was read from are returned with them: the characters inside them are the tables',
and the page's running text is read without them (other text in a table's outline but in no cell stays in it).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from core.loaders.pdf_corruption import WORD_GAP_EM, angled_lines, char_direction, direction_options
from core.loaders.pdf_image_rules import ImageRules, image_rules, vertical_edge

Box = tuple[float, float, float, float]
Position = tuple[int, int]  # a cell's row and column in a table's grid, from 0
Lines = list[list[dict[str, Any]]]  # characters, line by line

# A ruled "table" covering this share of the page or more, with one column or another table inside, is a frame
# around the page (a text area's border, with rules setting off the running head), not a table.
FRAME_SHARE = 0.5
# ... and so is one split into columns by column rules: at most this many rows (a running head, the text, a
# foot), one of them FRAME_SHARE of the page high. A table of that size has more rows than that.
FRAME_ROWS = 3
# In a cell that holds a table, where that table was: it is read as a table of its own, right after.
NESTED_NOTE = "(nested table below)"
# On a line, a character in no ruled cell that follows a cell's text by at most this share of its size runs on
# from that cell (a word gap is 0.2-0.33 em); one farther off is text of its own (text set in a grid position
# starts past its rule and its padding, and the text before it ends before the other cell's padding). Characters
# whose middles are at most LINE_TOLERANCE points apart in height are on one line.
RUN_ON_GAP_EM = 0.5
LINE_TOLERANCE = 3.0
# A table's horizontal rules that all run on past its outer vertical rule by more than this many points, with text
# in that band, are the rules of its rows' outer cells, left open on that side (see _open_sides).
OPEN_SIDE_MIN = 3.0


@dataclass
class Table:
    """A table's rows of cell texts, where it is drawn, and the tables drawn in its cells."""

    bbox: Box
    rows: list[list[str]]
    region: int = 0  # which of the page's regions (columns, bands) it is in, in reading order
    nested: list[Table] = field(default_factory=list)  # the tables drawn in its cells, read after it
    attrs: dict[str, Any] = field(default_factory=dict)  # where it is nested (see _read_tree)

    @property
    def top(self) -> float:
        return float(self.bbox[1])

    def in_reading_order(self) -> list[Table]:
        """This table, then the tables nested in its cells, each followed by its own."""
        return [self, *(inner for nested in self.nested for inner in nested.in_reading_order())]


@dataclass
class PageTables:
    """What :func:`read_tables` finds on a page."""

    tables: list[Table]  # nested in no other (each holding its nested ones), top to bottom as found
    boxes: list[Box]  # the boxes their text was read from
    frames: list[Any]  # pdfplumber's "tables" that are frames around the page (their rules set off its regions)


def read_tables(page: Any, data: bytes | None = None) -> PageTables:
    """The tables of ``page``, the boxes their text was read from, and the frames around the page. With the PDF's
    bytes (``data``), the rules drawn in an image under the page's text are rules too
    (:mod:`core.loaders.pdf_image_rules`)."""
    drawn = image_rules(page, data) if data is not None else ImageRules()
    everything = page.find_tables(table_settings=drawn.table_settings())
    opened = _open_sides(page, _without_frames(page, everything), drawn.horizontal)
    if opened:
        # The rows of a table open at its outer sides go on to where their rules end (see _open_sides).
        settings = drawn.table_settings() or {}
        settings["explicit_vertical_lines"] = [*settings.get("explicit_vertical_lines", []), *opened]
        everything = page.find_tables(table_settings=settings)
    found = _without_frames(page, everything)
    parents = _nesting(found)
    children: dict[int, list[int]] = {}
    # The tables nested in each table, top to bottom (in their cells' reading order).
    for index, parent in sorted(parents.items(), key=lambda pair: (found[pair[0]].bbox[1], found[pair[0]].bbox[0])):
        if parent is not None:
            children.setdefault(parent, []).append(index)
    roots = [index for index in range(len(found)) if index not in parents]
    read = [_read_tree(page, found, index, children, 0) for index in roots]
    frames = [table for table in everything if table not in found]
    return PageTables([table for table, _ in read], [box for _, boxes in read for box in boxes], frames)


def _open_sides(page: Any, tables: list[Any], drawn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Vertical edges closing the tables of ``page`` that are open at an outer side: where every one of a table's
    horizontal rules (one at each row's top and bottom) runs on past its outer vertical rule, by more than
    OPEN_SIDE_MIN, with text in that band, an edge from its top to its bottom where the shortest of those rules
    ends.

    pdfplumber's lines strategy makes a cell only between two vertical rules, so a table drawn with its rules
    across the full width but vertical rules only between its inner columns (R's tables, tabula-py's data.pdf)
    loses its row labels and its last column: they were read after it, as one run ("carb Mazda RX4 4 ...").
    ``drawn``: the horizontal rules drawn in the page's image, rules as the page's own are.
    """
    from pdfplumber.table import DEFAULT_JOIN_TOLERANCE, DEFAULT_SNAP_TOLERANCE, merge_edges

    snap, join = DEFAULT_SNAP_TOLERANCE, DEFAULT_JOIN_TOLERANCE
    horizontal = [edge for edge in page.edges if edge["orientation"] == "h"] + drawn
    if not tables or not horizontal:
        return []
    rules = merge_edges(horizontal, snap, snap, join, join)
    upright = [char for char in page.chars if char["text"].strip() and char_direction(char) == 0]
    edges = []
    for table in tables:
        x0, top, x1, bottom = table.bbox
        ends = _rule_ends(table, rules, snap)
        if ends is None:
            continue
        for x, side in ((ends[0], (ends[0], top, x0, bottom)), (ends[1], (x1, top, ends[1], bottom))):
            if side[2] - side[0] > OPEN_SIDE_MIN and any(center_in(char, side) for char in upright):
                edges.append(vertical_edge(x, top, bottom))
    return edges


def _rule_ends(table: Any, rules: list[dict[str, Any]], tolerance: float) -> tuple[float, float] | None:
    """How far left and right all of ``table``'s row rules run (the shortest's ends), or None if a row's top or
    bottom has no rule across the table."""
    x0, _, x1, _ = table.bbox
    starts, stops = [], []
    for y in sorted({edge for row in table.rows for edge in (row.bbox[1], row.bbox[3])}):
        across = [
            rule
            for rule in rules
            if abs(rule["top"] - y) <= tolerance and rule["x0"] <= x0 + tolerance and rule["x1"] >= x1 - tolerance
        ]
        if not across:
            return None
        starts.append(min(rule["x0"] for rule in across))
        stops.append(max(rule["x1"] for rule in across))
    return max(starts), min(stops)


def has_text(rows: list[list[str]]) -> bool:
    return any(any(cell.strip() for cell in row) for row in rows)


class BoxIndex:
    """Boxes looked up by a character's centre, as :func:`center_in` does, checking only the boxes level with
    it (a page of one large table has thousands of cells and of characters)."""

    BAND = 16.0  # points of height per band

    def __init__(self, boxes: list[Box]) -> None:
        self._bands: dict[int, list[Box]] = {}
        for box in boxes:
            for band in range(math.floor(box[1] / self.BAND), math.floor(box[3] / self.BAND) + 1):
                self._bands.setdefault(band, []).append(box)

    def holds(self, char: dict[str, Any]) -> bool:
        """Whether the centre of ``char`` is in one of the boxes."""
        band = math.floor((char["top"] + char["bottom"]) / 2 / self.BAND)
        return any(center_in(char, box) for box in self._bands.get(band, ()))


def center_in(char: dict[str, Any], box: Box) -> bool:
    """Whether ``char`` is in ``box``, as pdfplumber assigns characters to cells: by the centre, the box's right
    and bottom edges excluded."""
    x = (char["x0"] + char["x1"]) / 2
    y = (char["top"] + char["bottom"]) / 2
    return box[0] <= x < box[2] and box[1] <= y < box[3]


def _holds(outer: Any, inner: Any) -> bool:
    a, b = outer.bbox, inner.bbox
    return a[0] <= b[0] and a[1] <= b[1] and b[2] <= a[2] and b[3] <= a[3]


def _without_frames(page: Any, tables: list[Any]) -> list[Any]:
    """``tables`` less the frames drawn around the page: a "table" covering FRAME_SHARE of the page or more that
    has one column (a frame and the rules across it that set off a running head or a page number), or at most
    FRAME_ROWS rows one of which is FRAME_SHARE of the page high (a frame split into columns by column rules),
    or holds another table. Its text is the page's running text, and the tables inside it are tables."""
    area = float(page.width) * float(page.height)

    def frame(table: Any) -> bool:
        x0, top, x1, bottom = table.bbox
        if (x1 - x0) * (bottom - top) < FRAME_SHARE * area:
            return False
        return (
            len(table.columns) == 1
            or _text_area(table, float(page.height))
            or any(other is not table and _holds(table, other) for other in tables)
        )

    return [table for table in tables if not frame(table)]


def _text_area(table: Any, height: float) -> bool:
    """Whether ``table`` has the rows of a text area in a frame: a row as high as most of the page (the text,
    set in the frame's columns), with at most a running head and a foot set off above and below it."""
    rows = table.rows
    return len(rows) <= FRAME_ROWS and any(row.bbox[3] - row.bbox[1] >= FRAME_SHARE * height for row in rows)


def _nesting(tables: list[Any]) -> dict[int, int | None]:
    """The tables inside another, by index: the index of the smallest table holding it (whose cell it is drawn
    in), or None for a table found twice at one place (the later copy, left out)."""
    nesting: dict[int, int | None] = {}
    for index, table in enumerate(tables):
        holders = [other for other in range(len(tables)) if other != index and _holds(tables[other], table)]
        if any(tables[other].bbox == table.bbox and other < index for other in holders):
            nesting[index] = None
            continue
        holders = [other for other in holders if tables[other].bbox != table.bbox]
        if holders:
            nesting[index] = min(holders, key=lambda other: _area(tables[other].bbox))
    return nesting


def _area(bbox: Box) -> float:
    return (bbox[2] - bbox[0]) * (bbox[3] - bbox[1])


def _read_tree(
    page: Any, tables: list[Any], index: int, children: dict[int, list[int]], depth: int
) -> tuple[Table, list[Box]]:
    """Table ``index`` and the tables nested in its cells (``children``, by index), each read as a table of its
    own, after the one holding it; the boxes their text was taken from.

    A cell holding a table keeps its own text (a label above the table) and NESTED_NOTE for each table in it; the
    nested table's ``nested_in_row`` and ``nested_in_column`` (from 1, the header row being row 1) name that cell
    of the table holding it, the nearest table before it whose ``nesting_depth`` is one less (0 or none: a table
    nested in no other).
    """
    table = tables[index]
    rows, boxes = _read_table(page, table)
    read = Table(table.bbox, rows)
    inner = [tables[child] for child in children.get(index, [])]
    held = _note_nested_cells(page, table, rows, inner)
    for child, (row, column) in zip(children.get(index, []), held, strict=True):
        nested, nested_boxes = _read_tree(page, tables, child, children, depth + 1)
        if row is not None and column is not None:
            nested.attrs = {"nested_in_row": row + 1, "nested_in_column": column + 1, "nesting_depth": depth + 1}
        boxes.extend(nested_boxes)
        if has_text(nested.rows):
            read.nested.append(nested)
    return read, boxes


def _note_nested_cells(
    page: Any, table: Any, rows: list[list[str]], inner: list[Any]
) -> list[tuple[int | None, int | None]]:
    """Each cell of ``table`` that holds tables of ``inner`` read again, into ``rows``: its text outside them, then
    NESTED_NOTE once per table. The (row, column) of the cell holding each table of ``inner`` (None, None: none
    does)."""
    from pdfplumber.utils import extract_text

    held: list[tuple[int | None, int | None]] = []
    for nested in inner:
        x = (nested.bbox[0] + nested.bbox[2]) / 2
        y = (nested.bbox[1] + nested.bbox[3]) / 2
        where = (None, None)
        for r, row in enumerate(table.rows):
            for c, cell in enumerate(row.cells):
                if cell is not None and cell[0] <= x < cell[2] and cell[1] <= y < cell[3]:
                    where = (r, c)
        held.append(where)
    for r, c in sorted({where for where in held if where[0] is not None}):
        cell = table.rows[r].cells[c]
        own = [
            char
            for char in page.chars
            if center_in(char, cell) and not any(center_in(char, nested.bbox) for nested in inner)
        ]
        text = extract_text(own, x_tolerance_ratio=WORD_GAP_EM) if own else ""
        notes = [NESTED_NOTE] * held.count((r, c))
        rows[r][c] = " ".join([*text.split(), *notes])
    return held


def _read_table(page: Any, table: Any) -> tuple[list[list[str]], list[Box]]:
    """A table's rows of cell texts, and the boxes its text was taken from."""
    rows = [[cell or "" for cell in row] for row in table.extract(x_tolerance_ratio=WORD_GAP_EM)]
    boxes = _read_outside_cells(page, table, rows)
    _read_turned_cells(page, table, rows)
    return rows, boxes


def _read_outside_cells(page: Any, table: Any, rows: list[list[str]]) -> list[Box]:
    """The text in ``table``'s outline but in no ruled cell, into ``rows``: text running on from a cell read with
    it (text drawn across the table's right rule too), text in a grid position no ruled cell starts at as that
    position's; the boxes all its text was taken from (the cells' among them). Other text there stays running
    text."""
    cells: list[tuple[Position | None, Box]] = [
        ((r, c), cell) for r, row in enumerate(table.rows) for c, cell in enumerate(row.cells) if cell
    ]
    # pdfplumber computes a table's bbox from its cells at every use.
    outline = table.bbox
    # The characters level with the table from its left edge on: text drawn across its right rule runs on too.
    beside = (outline[0], outline[1], math.inf, outline[3])
    level = [char for char in page.chars if char_direction(char) == 0 and center_in(char, beside)]
    upright = [char for char in level if center_in(char, outline)]
    # Text drawn across a cell's edge is that cell's, before a grid position beside it takes any of it ...
    across = _run_on_chars(level, cells, RUN_ON_GAP_EM)
    held = cells + [(where, _box_around(line)) for where, lines in across.items() for line in lines]
    unruled = _read_unruled_positions(page, table, rows, [box for _, box in held])
    # ... and so is text set after it on its line where no cell or grid position is (a label's value), and the
    # lines that text wraps onto.
    after = _run_on_chars(upright, held + [(None, box) for box in unruled], math.inf, wraps=True)
    _read_with_run_on(page, table, rows, across, after)
    boxes = [box for _, box in held] + unruled
    boxes.extend(_box_around(line) for lines in after.values() for line in lines)
    return boxes


def _read_with_run_on(page: Any, table: Any, rows: list[list[str]], *run_on: dict[Position, Lines]) -> None:
    """Each cell some text of ``run_on`` runs on from read again, into ``rows``: its own text with that text."""
    from pdfplumber.utils import extract_text

    for r, c in sorted({where for found in run_on for where in found}):
        lines = [line for found in run_on for line in found.get((r, c), [])]
        own = [char for char in page.chars if center_in(char, table.rows[r].cells[c])]
        rows[r][c] = extract_text(own + [char for line in lines for char in line], x_tolerance_ratio=WORD_GAP_EM)


def _run_on_chars(
    chars: list[dict[str, Any]], holders: list[tuple[Position | None, Box]], gap_em: float, *, wraps: bool = False
) -> dict[Position, Lines]:
    """The characters of ``chars`` in none of the boxes of ``holders`` that run on from a cell's text, by the
    cell's (row, column), line by line: on a line read left to right, each follows a character in a box of that
    cell, or one running on from it, by at most ``gap_em`` of its size. A box held by None (a grid position's)
    is no cell's: the text after it runs on from nothing. With ``wraps``, a line of such characters that none
    precedes, set right under a line running on from a cell and starting where it starts, runs on from it too
    (a value set in two lines beside its label).

    A value set longer than its label's box ("Name : " and the name, from inside the box on) is one line of text
    drawn across the box's edge: read by the cell alone, the edge cuts it mid-word ("Name : Dhananjay K") and the
    rest is read apart, later ("umar Sharma").
    """
    from pdfplumber.utils import cluster_objects

    run_on: dict[Position, Lines] = {}
    for line in cluster_objects(chars, lambda char: (char["top"] + char["bottom"]) / 2, LINE_TOLERANCE):
        # Only the boxes level with the line can hold its characters (a large table has thousands).
        low = min(char["top"] for char in line)
        high = max(char["bottom"] for char in line)
        level = [holder for holder in holders if holder[1][1] < high and holder[1][3] > low]
        ran_on, alone = _walk_line(sorted(line, key=lambda char: char["x0"]), level, gap_em)
        if wraps and alone:
            above = next((where for where, lines in run_on.items() if _wraps_under(alone, lines[-1])), None)
            if above is not None:
                ran_on.setdefault(above, []).extend(alone)
        for where, line_chars in ran_on.items():
            run_on.setdefault(where, []).append(line_chars)
    return run_on


def _walk_line(
    line: list[dict[str, Any]], holders: list[tuple[Position | None, Box]], gap_em: float
) -> tuple[dict[Position, list[dict[str, Any]]], list[dict[str, Any]]]:
    """The characters of one line (left to right) that run on from a cell, by cell; and those in no box of
    ``holders`` that run on from none (see :func:`_run_on_chars`)."""
    ran_on: dict[Position, list[dict[str, Any]]] = {}
    alone: list[dict[str, Any]] = []
    holder: Position | None = None
    previous: dict[str, Any] | None = None
    for char in line:
        box = next((where for where in holders if center_in(char, where[1])), None)
        gap = char["x0"] - previous["x1"] if previous is not None else math.inf
        if box is not None:
            holder = box[0]
        elif holder is not None and gap <= gap_em * float(char["size"]):
            ran_on.setdefault(holder, []).append(char)
        else:
            holder = None
            alone.append(char)
        previous = char
    return ran_on, alone


def _wraps_under(chars: list[dict[str, Any]], line: list[dict[str, Any]]) -> bool:
    """Whether ``chars`` (a line's) start where ``line`` starts (within one em), right under it (less than half
    an em below)."""
    if not chars:
        return False
    first, start = chars[0], min(line, key=lambda char: char["x0"])
    size = float(first["size"])
    gap = first["top"] - max(char["bottom"] for char in line)
    return abs(first["x0"] - start["x0"]) <= size and 0 <= gap < 0.5 * size


def _box_around(chars: list[dict[str, Any]]) -> Box:
    return (
        min(char["x0"] for char in chars),
        min(char["top"] for char in chars),
        max(char["x1"] for char in chars),
        max(char["bottom"] for char in chars),
    )


def _read_turned_cells(page: Any, table: Any, rows: list[list[str]]) -> None:
    """pdfplumber reads every cell upright: a cell of turned text (a vertical column header) is read again,
    into ``rows``."""
    turned = [char for char in page.chars if char["text"].strip() and char_direction(char) != 0]
    for r, row in enumerate(table.rows if turned else []):
        for c, cell in enumerate(row.cells):
            if cell is not None and any(center_in(char, cell) for char in turned):
                rows[r][c] = _turned_cell_text([char for char in page.chars if center_in(char, cell)])


def _read_unruled_positions(page: Any, table: Any, rows: list[list[str]], taken: list[Box]) -> list[Box]:
    """The text of the grid positions no ruled cell starts at, into ``rows``; the boxes it was read from.

    pdfplumber leaves such a position as None, e.g. the unruled top-left corner of a cross table; the
    characters there (and in none of the boxes ``taken``: the cells, text running on from a cell) are that
    position's text, so a label written in the corner is not lost.
    """
    from pdfplumber.utils import extract_text

    columns = table.columns
    boxes = []
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            if cell is not None:
                continue
            box = (columns[c].bbox[0], row.bbox[1], columns[c].bbox[2], row.bbox[3])
            chars = [
                char for char in page.chars if center_in(char, box) and not any(center_in(char, real) for real in taken)
            ]
            if chars:
                rows[r][c] = extract_text(chars, x_tolerance_ratio=WORD_GAP_EM, **direction_options(chars))
                boxes.append(box)
    return boxes


def _turned_cell_text(chars: list[dict[str, Any]]) -> str:
    """A cell's text, read in the direction most of its characters run (at any angle), on one line."""
    from pdfplumber.utils import extract_text

    visible = [char for char in chars if char["text"].strip()]
    directions = Counter(char_direction(char) for char in visible)
    if directions.most_common(1)[0][0] == -1:
        return " ".join(line["text"] for line in angled_lines(chars, WORD_GAP_EM))
    return " ".join(extract_text(chars, x_tolerance_ratio=WORD_GAP_EM, **direction_options(chars)).split())
