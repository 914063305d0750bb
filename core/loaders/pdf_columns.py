"""Pages set in two columns: the regions a reader goes through, in order.

pdfplumber's text lines run the page's width, so on a two-column page a "line"
is the left column's line followed by the right column's, and paragraphs
interleave. :func:`column_regions` finds the gutter and cuts the page into bands
from top to bottom: a band whose lines cross the gutter (a title, a full-width
figure caption) is one region; a band whose lines keep to either side is two,
left column first. A page without a clear gutter is one region, read as before.

The gutter is the widest vertical strip in the middle of the text (30-70% of its
width) crossed by at most a tenth of the page's rows (a title or a closing line
may run across). It counts only when it is at least :data:`MIN_GUTTER` points
wide, has at least a quarter of the words on each side, and the lines on each
side mostly fill their column (running text does; a glossary's terms do not). A
single-column page has no such strip, since its words cover the middle on
almost every row.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

Box = tuple[float, float, float, float]

MIN_GUTTER = 6.0
MIN_WORDS = 40
# Each column holds at least this many lines, and its median line runs at least this share of its width.
MIN_COLUMN_ROWS = 5
MIN_LINE_FILL = 0.7
# Words whose tops are this close (points) are one row.
ROW_TOLERANCE = 2.0


def column_regions(page: Any, words: list[dict[str, Any]]) -> list[Box] | None:
    """The page's regions in reading order when it is set in two columns, else None.

    ``words`` are pdfplumber's words of the page outside its tables, or its visible characters
    (cheaper: no word grouping; a character crosses the gutter where its word does); the regions
    span the page's width and height, so every word falls in exactly one.
    """
    if len(words) < MIN_WORDS:
        return None
    rows = _rows(words)
    gutter = _gutter(words, len(rows))
    if gutter is None:
        return None
    if sum(_crosses(row, gutter) for row in rows) > 0.1 * len(rows) or not _both_sides_fill(rows, gutter):
        return None
    x0, top, x1, bottom = page.bbox
    regions: list[Box] = []
    band_start = top
    index = 0
    while index < len(rows):
        crossing = _crosses(rows[index], gutter)
        end = index
        while end + 1 < len(rows) and _crosses(rows[end + 1], gutter) == crossing:
            end += 1
        if end + 1 < len(rows):
            band_end = (max(w["bottom"] for w in rows[end]) + min(w["top"] for w in rows[end + 1])) / 2
        else:
            band_end = bottom
        if crossing:
            regions.append((x0, band_start, x1, band_end))
        else:
            regions += [(x0, band_start, gutter, band_end), (gutter, band_start, x1, band_end)]
        band_start = band_end
        index = end + 1
    return regions


def _gutter(words: list[dict[str, Any]], rows: int) -> float | None:
    """The middle of the widest strip crossed by few words (a tenth of the rows at most: a title or a
    closing line may run across), if it separates two columns of words."""
    left = min(w["x0"] for w in words)
    right = max(w["x1"] for w in words)
    width = right - left
    first, last = int(left + 0.3 * width), int(left + 0.7 * width)
    candidates = list(range(first, last + 1))
    # crossing[x - first]: how many words run across x (x0 < x < x1), counted with a difference array.
    change = [0] * (len(candidates) + 1)
    for word in words:
        low = max(first, math.floor(word["x0"]) + 1)
        high = min(last, math.ceil(word["x1"]) - 1)
        if low <= high:
            change[low - first] += 1
            change[high - first + 1] -= 1
    crossing = list(itertools.accumulate(change))
    allowed = max(1, int(0.1 * rows))
    best: tuple[int, int] | None = None
    run_start: int | None = None
    for x in [*candidates, None]:
        if x is not None and crossing[x - first] <= allowed:
            run_start = x if run_start is None else run_start
            continue
        if run_start is not None:
            run_end = (x if x is not None else candidates[-1] + 1) - 1
            if best is None or run_end - run_start > best[1] - best[0]:
                best = (run_start, run_end)
            run_start = None
    if best is None or best[1] - best[0] < MIN_GUTTER:
        return None
    middle = (best[0] + best[1]) / 2
    left_words = sum(1 for w in words if w["x1"] <= middle)
    right_words = sum(1 for w in words if w["x0"] >= middle)
    if min(left_words, right_words) < 0.25 * len(words):
        return None
    return middle


def _both_sides_fill(rows: list[list[dict[str, Any]]], gutter: float) -> bool:
    """Whether the lines on each side of the gutter mostly run the width of their column, as running text does.

    A glossary or a form (short terms on the left, values on the right) also leaves a gutter, but
    its left lines are ragged; read column by column, each term would be parted from its value.
    """
    for side in (lambda w: w["x1"] <= gutter, lambda w: w["x0"] >= gutter):
        widths = []
        for row in rows:
            boxes = [w for w in row if side(w)]
            if boxes:
                widths.append((min(w["x0"] for w in boxes), max(w["x1"] for w in boxes)))
        if len(widths) < MIN_COLUMN_ROWS:
            return False
        column = max(end for _, end in widths) - min(start for start, _ in widths)
        fills = sorted((end - start) / column for start, end in widths)
        if fills[len(fills) // 2] < MIN_LINE_FILL:
            return False
    return True


def _rows(words: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    rows: list[list[dict[str, Any]]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        if rows and word["top"] - rows[-1][0]["top"] <= ROW_TOLERANCE:
            rows[-1].append(word)
        else:
            rows.append([word])
    return rows


def _crosses(row: list[dict[str, Any]], gutter: float) -> bool:
    return any(w["x0"] < gutter < w["x1"] for w in row)
