"""Pages set in columns (two, three or more): the regions a reader goes through, in order.

pdfplumber's text lines run the page's width, so on a page set in columns a "line" is
the first column's line followed by the next column's, and paragraphs interleave.
:func:`column_regions` finds the gutters and cuts the page into bands from top to
bottom: a band whose lines cross no gutter is one region per column, left to right;
a band whose lines cross gutters (a title, a full-width caption) is cut only at the
gutters none of its lines cross, so a line across the page is one region. A page
without a clear gutter is one region, read as before.

A gutter is a vertical strip inside the text (between 10% and 90% of its width) that
at most a tenth of the page's rows cross (a title or a closing line may run across),
and at most a third of the rows with text on its shorter side, at least
:data:`MIN_GUTTER` points wide and half as wide as the page's widest gutter (a river of
word spaces down a justified column is narrower), with a text edge beside it (the
lines after it start flush, or the lines before it end flush). The gutters hold only
if every column they cut is running text: at least :data:`MIN_COLUMN_ROWS` lines, the
lines mostly filling the column's width (running text does; a glossary's terms do
not), mostly letters (an unruled table's figures are not), holding its share of the
page's words (a column of line numbers does not). A column that is not running text
is joined to its neighbour across the narrower of its gutters, and the columns are
checked again. A single-column page has no such strip, since its words cover it on
almost every row.

A last column shorter than MIN_COLUMN_ROWS (the text ends a few lines into it) is still
a column when it continues the one before it: it starts level with one of that column's first
lines and its lines but the last are as wide as that column's.

Not read column by column: any other column of fewer than :data:`MIN_COLUMN_ROWS` lines,
or any column of no more lines than a tenth of the page's rows (one line at least: its strip
is taken for the margin, as a title across the page may cross a gutter).

A page inside a frame split into columns by column rules (:func:`frame_regions`) is
read by the frame's rows and cells instead: the rules are its gutters and bands.
"""

from __future__ import annotations

import bisect
import itertools
import math
from typing import Any

Box = tuple[float, float, float, float]
Gutter = tuple[float, float]  # a strip's left and right edges

MIN_GUTTER = 6.0
# ... and at least this share of the page's widest gutter.
MIN_GUTTER_SHARE = 0.5
MIN_WORDS = 40
# Each column holds at least this many lines, and its median line runs at least this share of its width.
MIN_COLUMN_ROWS = 5
MIN_LINE_FILL = 0.7
# Of its letters and digits, at least this share are letters (an index's leader dots count for neither).
MIN_LETTER_SHARE = 0.5
# Each of k columns holds at least this share of the page's glyphs, divided by k (k = 2: a twentieth each; a
# short last column counts, a column of line numbers or a few margin labels does not).
MIN_COLUMN_SHARE = 0.1
# A column's edge: at least this share of its lines start (or end) within 2 * EDGE_TOLERANCE points of each other.
MIN_EDGE_SHARE = 0.5
EDGE_TOLERANCE = 1.0
# Of the rows with text on a gutter's shorter side, at most this share cross it (a title, a closing line).
MAX_CROSSING_SHARE = 1 / 3
# A last column shorter than MIN_COLUMN_ROWS starts level with one of the column before's first TOP_ROWS rows.
TOP_ROWS = 3
# Words whose tops are this close (points) are one row.
ROW_TOLERANCE = 2.0
# Gutters are looked for between these shares of the text's width.
GUTTER_RANGE = (0.1, 0.9)


def column_regions(page: Any, words: list[dict[str, Any]]) -> list[Box] | None:
    """The page's regions in reading order when it is set in columns, else None.

    ``words`` are pdfplumber's words of the page outside its tables, or its visible characters
    (cheaper: no word grouping; a character crosses the gutter where its word does); the regions
    span the page's width and height, so every word falls in exactly one.
    """
    if len(words) < MIN_WORDS:
        return None
    rows = _rows(words)
    gutters = _running_text_gutters(words, rows, _gutters(words, len(rows)))
    if not gutters:
        return None
    x0, top, x1, bottom = page.bbox
    regions: list[Box] = []
    band_start = top
    index = 0
    while index < len(rows):
        crossed = _crossed(rows[index], gutters)
        end = index
        # A band: rows that cross no gutter, or rows that each cross one.
        while end + 1 < len(rows) and bool(_crossed(rows[end + 1], gutters)) == bool(crossed):
            end += 1
            crossed |= _crossed(rows[end], gutters)
        if end + 1 < len(rows):
            band_end = (max(w["bottom"] for w in rows[end]) + min(w["top"] for w in rows[end + 1])) / 2
        else:
            band_end = bottom
        edges = [x0, *(_middle(g) for g in gutters if g not in crossed), x1]
        regions += [(left, band_start, right, band_end) for left, right in itertools.pairwise(edges)]
        band_start = band_end
        index = end + 1
    return regions


def frame_regions(page: Any, frames: list[Any]) -> list[Box] | None:
    """The page's regions in reading order when a frame around it is split into columns by column rules, else
    None: the frame's rows top to bottom (a running head, the text, a foot), each row's cells left to right.

    ``frames`` are pdfplumber's tables that are frames (the largest split one is read). The regions are widened
    to the page's edges, the first row up to its top, the last down to its bottom, a row's first and last cells
    out to its sides, so every word falls in exactly one.
    """
    split = [frame for frame in frames if len(frame.columns) > 1]
    if not split:
        return None
    frame = max(split, key=lambda table: (table.bbox[2] - table.bbox[0]) * (table.bbox[3] - table.bbox[1]))
    x0, top, x1, bottom = page.bbox
    rows = [sorted(cell for cell in row.cells if cell is not None) for row in frame.rows]
    rows = [cells for cells in rows if cells]
    # A frame drawn past the page's edge is cut at it: no region reaches outside the page.
    tops = [top, *(min(max(cells[0][1], top), bottom) for cells in rows[1:]), bottom]
    regions: list[Box] = []
    for cells, (row_top, row_bottom) in zip(rows, itertools.pairwise(tops), strict=True):
        edges = [x0, *(min(max(cell[0], x0), x1) for cell in cells[1:]), x1]
        regions += [(left, row_top, right, row_bottom) for left, right in itertools.pairwise(edges)]
    return regions


def _gutters(words: list[dict[str, Any]], rows: int) -> list[Gutter]:
    """The strips at least MIN_GUTTER wide crossed by few words (a tenth of the rows at most: a title or a
    closing line may run across), with words on both sides, left to right."""
    left = min(w["x0"] for w in words)
    right = max(w["x1"] for w in words)
    width = right - left
    first, last = int(left + GUTTER_RANGE[0] * width), int(left + GUTTER_RANGE[1] * width)
    if last <= first:
        return []
    # crossing[x - first]: how many words run across x (x0 < x < x1), counted with a difference array.
    change = [0] * (last - first + 2)
    for word in words:
        low = max(first, math.floor(word["x0"]) + 1)
        high = min(last, math.ceil(word["x1"]) - 1)
        if low <= high:
            change[low - first] += 1
            change[high - first + 1] -= 1
    crossing = list(itertools.accumulate(change))[: last - first + 1]
    allowed = max(1, int(0.1 * rows))
    gutters: list[Gutter] = []
    # Runs of few crossings; one touching either end of the range is a margin's edge, not a gutter.
    for few, run in itertools.groupby(range(first, last + 1), key=lambda x: crossing[x - first] <= allowed):
        xs = list(run)
        if few and xs[0] > first and xs[-1] < last and xs[-1] - xs[0] >= MIN_GUTTER:
            gutters.append((float(xs[0]), float(xs[-1])))
    return gutters


def _running_text_gutters(
    words: list[dict[str, Any]], rows: list[list[dict[str, Any]]], gutters: list[Gutter]
) -> list[Gutter]:
    """Of ``gutters``, those that part columns of running text. A gutter crossed by more than a tenth of the
    rows (or by a third of those beside it), or less than half as wide as the widest, goes first; then, one at
    a time, a gutter with no text edge beside it, or the narrower gutter beside a column that is not running
    text."""
    gutters = [g for g in gutters if _few_cross(rows, g)]
    # A page's gutters are set alike; a strip less than half as wide as the widest is a river of word spaces.
    widest = max((g[1] - g[0] for g in gutters), default=0.0)
    gutters = [g for g in gutters if g[1] - g[0] >= MIN_GUTTER_SHARE * widest]
    while gutters:
        columns = _split(rows, gutters)
        unaligned = (g for i, g in enumerate(gutters) if not _edge_beside(columns[i], columns[i + 1]))
        bad = next(unaligned, None)
        failing = next((i for i in range(len(columns)) if not _column_of_text(columns, i, len(words))), None)
        if bad is None and failing is None:
            return gutters
        if bad is None and failing is not None:
            beside = [gutters[i] for i in (failing - 1, failing) if 0 <= i < len(gutters)]
            bad = min(beside, key=lambda g: g[1] - g[0])
        gutters.remove(bad)
    return []


def _few_cross(rows: list[list[dict[str, Any]]], gutter: Gutter) -> bool:
    """Whether at most a tenth of the page's rows cross ``gutter``, and at most MAX_CROSSING_SHARE of the rows
    with text on its shorter side: a river of word spaces down a short column is crossed by half its lines."""
    middle = _middle(gutter)
    crossing = sum(1 for row in rows if gutter in _crossed(row, [gutter]))
    left = sum(1 for row in rows if any(w["x0"] < middle for w in row))
    right = sum(1 for row in rows if any(w["x1"] > middle for w in row))
    return crossing <= 0.1 * len(rows) and crossing <= MAX_CROSSING_SHARE * min(left, right)


def _edge_beside(left: list[list[dict[str, Any]]], right: list[list[dict[str, Any]]]) -> bool:
    """Whether the text beside a gutter has an edge: most lines of the column after it start at one x (text
    set flush left), or most lines of the column before it end at one x (flush right, or justified).

    A river of word spaces running down one column leaves a strip too, but the words on either side of it
    start and end wherever they fall.
    """
    return _aligned([min(w["x0"] for w in row) for row in right]) or _aligned(
        [max(w["x1"] for w in row) for row in left]
    )


def _aligned(xs: list[float]) -> bool:
    """Whether at least MIN_EDGE_SHARE of ``xs`` lie within EDGE_TOLERANCE of one of them (a line across the
    page, or a heading, may start or end elsewhere)."""
    xs = sorted(xs)
    most = max((bisect.bisect_right(xs, x + 2 * EDGE_TOLERANCE) - i for i, x in enumerate(xs)), default=0)
    return bool(xs) and most >= MIN_EDGE_SHARE * len(xs)


def _split(rows: list[list[dict[str, Any]]], gutters: list[Gutter]) -> list[list[list[dict[str, Any]]]]:
    """Each column's rows (its words on each page row that has some and crosses no gutter: a title's pieces
    would widen the columns), columns left to right."""
    edges = [-math.inf, *(_middle(g) for g in gutters), math.inf]
    within = [row for row in rows if not _crossed(row, gutters)]
    columns: list[list[list[dict[str, Any]]]] = []
    for left, right in itertools.pairwise(edges):
        column = [[w for w in row if left <= (w["x0"] + w["x1"]) / 2 < right] for row in within]
        columns.append([row for row in column if row])
    return columns


def _column_of_text(columns: list[list[list[dict[str, Any]]]], index: int, total: int) -> bool:
    """Whether column ``index`` of ``columns`` is running text (:func:`_running_text`), or the last column,
    where the text that fills the columns before it ends after a few lines (:func:`_continues`)."""
    column = columns[index]
    if _running_text(column, total, len(columns)):
        return True
    return index == len(columns) - 1 and index > 0 and _continues(columns[index - 1], column)


def _continues(before: list[list[dict[str, Any]]], last: list[list[dict[str, Any]]]) -> bool:
    """Whether ``last``, a column too short to be judged alone, is where the text of the column ``before`` it
    runs on: it starts level with one of that column's first lines (a title may stand above the text there),
    its lines are mostly letters, and each but its last (which ends a paragraph) is as wide as that column's
    lines (a margin note's lines are narrower)."""
    if not last or not any(abs(last[0][0]["top"] - row[0]["top"]) <= ROW_TOLERANCE for row in before[:TOP_ROWS]):
        return False
    words = [w for row in last for w in row]
    letters = sum(sum(ch.isalpha() for ch in w["text"]) for w in words)
    if letters < MIN_LETTER_SHARE * sum(sum(ch.isalnum() for ch in w["text"]) for w in words):
        return False
    width = max(w["x1"] for row in before for w in row) - min(w["x0"] for row in before for w in row)
    spans = [max(w["x1"] for w in row) - min(w["x0"] for w in row) for row in last[:-1]]
    return all(span >= MIN_LINE_FILL * width for span in spans)


def _running_text(rows: list[list[dict[str, Any]]], total: int, count: int) -> bool:
    """Whether a column's rows read as running text: enough lines, mostly filling the column's width, mostly
    letters, and the column's share of the page's words.

    A glossary or a form (short terms on the left, values on the right) also leaves a gutter, but its left
    lines are ragged; an unruled table's figures fill their narrow columns, but are not letters. Read column
    by column, each term would be parted from its value.
    """
    words = [w for row in rows for w in row]
    if len(rows) < MIN_COLUMN_ROWS or len(words) < MIN_COLUMN_SHARE / count * total:
        return False
    letters = sum(sum(ch.isalpha() for ch in w["text"]) for w in words)
    if letters < MIN_LETTER_SHARE * sum(sum(ch.isalnum() for ch in w["text"]) for w in words):
        return False
    spans = [(min(w["x0"] for w in row), max(w["x1"] for w in row)) for row in rows]
    width = max(end for _, end in spans) - min(start for start, _ in spans)
    fills = sorted((end - start) / width for start, end in spans)
    return fills[len(fills) // 2] >= MIN_LINE_FILL


def _rows(words: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    rows: list[list[dict[str, Any]]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        if rows and word["top"] - rows[-1][0]["top"] <= ROW_TOLERANCE:
            rows[-1].append(word)
        else:
            rows.append([word])
    return rows


def _middle(gutter: Gutter) -> float:
    return (gutter[0] + gutter[1]) / 2


def _crossed(row: list[dict[str, Any]], gutters: list[Gutter]) -> set[Gutter]:
    """The gutters ``row`` runs across: a word over a gutter's middle, or words on both sides of it closer
    than half the gutter's width (a line across the page whose word space falls on the gutter)."""
    crossed = set()
    for gutter in gutters:
        middle = _middle(gutter)
        before = [w["x1"] for w in row if w["x1"] <= middle]
        after = [w["x0"] for w in row if w["x0"] >= middle]
        over = any(w["x0"] < middle < w["x1"] for w in row)
        if over or (before and after and min(after) - max(before) < (gutter[1] - gutter[0]) / 2):
            crossed.add(gutter)
    return crossed
