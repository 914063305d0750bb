"""The ruling lines of a page drawn in its image: a form scanned with its values set as text over it.

pdfplumber finds a table by its ruling lines, and it sees only the lines a page draws as vector paths. A scanned
form whose values are typed into the text layer (an electricity bill, a scan with a searchable layer) draws its
rules, boxes and printed headers in one page-size image: the values are read as loose lines, not as the table
they fill. When an image covers :data:`IMAGE_SHARE` of a page that has text, the page is rendered without its
text (pypdfium2, at most :data:`MAX_PIXELS`), and each long thin dark run of pixels (at least :data:`MIN_RULE`
points long, at most :data:`MAX_THICKNESS` thick) is a rule, handed to pdfplumber's table finder as an explicit
line beside the page's own. A page with no such image is not rendered, and its tables are what they were.

A pixel is drawn when it is darker than the paper by :data:`INK_CONTRAST`: light rules (a teal box on a bill, dotted
rules blurred grey by the render) are rules too, and a photo's or a shading's long runs are too thick, or too
many (:data:`MAX_RULES`), to be read as rules at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.loaders.pdf_ocr import IMAGE_COVERAGE, image_share, render_page

# An image covering this share of a page is what the page is drawn on (a scan, a form's background).
IMAGE_SHARE = IMAGE_COVERAGE
# The page is rendered at this resolution, at most MAX_PIXELS pixels: an A4 page at 100 dpi is 1 million, a rule
# 1 point thick 1-2 pixels, and the render 0.1 CPU-s (0.2 at 150 dpi, for no rule more).
RENDER_DPI = 100
MAX_PIXELS = 2_000_000
# A pixel darker than the paper (the page's commonest grey level) by this much is drawn (0 black, 255 white).
INK_CONTRAST = 15
# A rule is a run of drawn pixels at least MIN_RULE points long and at most MAX_THICKNESS points thick: a table's
# cell is rarely less than 14 points wide or high, a letter's stroke that long belongs to a 20-point title, and a
# stroke that thick to a bold one.
MIN_RULE = 14.0
MAX_THICKNESS = 2.5
# More rules than this in one direction is a photo or a hatching, not a form: none is taken.
MAX_RULES = 400
MAX_RUNS = 8 * MAX_RULES  # runs of pixels that long, before they are joined into rules
# A rule's end this close to a crossing rule (points) ends on it (see _to_corners); and pdfplumber snaps and joins
# rules and finds where they cross only within TOLERANCE points (its default, 3, joins the sides of two boxes set 3
# points apart, making one grid of a form's boxes).
CORNER = 3.0
TOLERANCE = 1.5
# Beside a rule, on one side at least, a band SIDE points wide is paper: at most SIDE_INK of it drawn.
SIDE = 2.0
SIDE_INK = 0.35

Edge = dict[str, Any]
Rule = tuple[float, float, float]  # where a rule is across its direction, where it starts and ends along it


@dataclass
class ImageRules:
    """The rules drawn in a page's image, as pdfplumber's explicit lines (empty when the page has none)."""

    vertical: list[Edge] = field(default_factory=list)
    horizontal: list[Edge] = field(default_factory=list)

    def table_settings(self) -> dict[str, Any] | None:
        """pdfplumber's ``table_settings`` that add these rules to the page's own, or None (its defaults)."""
        if not self.vertical and not self.horizontal:
            return None
        lines = {"explicit_vertical_lines": list(self.vertical), "explicit_horizontal_lines": list(self.horizontal)}
        return lines | {"snap_tolerance": TOLERANCE, "join_tolerance": TOLERANCE, "intersection_tolerance": TOLERANCE}


def image_rules(page: Any, data: bytes) -> ImageRules:
    """The rules drawn in the image under ``page``'s text (``data``: the PDF's bytes), or none when no image
    covers IMAGE_SHARE of the page, the page has no text, or it is turned (``/Rotate``)."""
    if not page.chars or getattr(page, "rotation", 0) or image_share(page) < IMAGE_SHARE:
        return ImageRules()
    import numpy as np

    image = render_page(data, page.page_number - 1, RENDER_DPI, without_text=True, max_pixels=MAX_PIXELS)
    grey = np.asarray(image.convert("L"))
    # Drawn: darker than the paper (the commonest grey level: white, or a scan's grey) by INK_CONTRAST.
    paper = int(np.bincount(grey.ravel(), minlength=256).argmax())
    drawn = grey < paper - INK_CONTRAST
    x0, top, x1, bottom = (float(value) for value in page.bbox)
    scale_x, scale_y = drawn.shape[1] / (x1 - x0), drawn.shape[0] / (bottom - top)
    horizontal = _rules(drawn, min_length=MIN_RULE * scale_x, thickness=MAX_THICKNESS * scale_y)
    vertical = _rules(drawn.T, min_length=MIN_RULE * scale_y, thickness=MAX_THICKNESS * scale_x)
    if horizontal is None or vertical is None:
        return ImageRules()
    across = [(top + y / scale_y, x0 + a / scale_x, x0 + b / scale_x) for y, a, b in horizontal]
    down = [(x0 + x / scale_x, top + a / scale_y, top + b / scale_y) for x, a, b in vertical]
    across, down = _to_corners(across, down), _to_corners(down, across)
    return ImageRules([vertical_edge(*rule) for rule in down], [horizontal_edge(*rule) for rule in across])


def _rules(drawn: Any, *, min_length: float, thickness: float) -> list[tuple[float, int, int]] | None:
    """The rules along the rows of ``drawn`` (a boolean image): (row, first column, column past the last), the
    row the middle of the rule's thickness; None when there are more than MAX_RULES. A run of drawn pixels at
    least ``min_length`` long is part of a rule unless the runs that long above and below it make a band thicker
    than ``thickness`` (a filled area, a bold stroke)."""
    import numpy as np

    long_runs = _long_runs(drawn, min_length)
    if len(long_runs) > MAX_RUNS:  # a photo or a shading: too many to be rules, and too many to look at
        return None
    banded = np.zeros_like(drawn)
    for row, start, stop in long_runs:
        banded[row, start:stop] = True
    # Across the rows, the runs of long-run pixels thicker than a rule are filled areas: left out.
    thick = np.zeros_like(drawn)
    for column, start, stop in _long_runs(banded.T, thickness + 1):
        thick[start:stop, column] = True
    merged = _merge(_long_runs(banded & ~thick, min_length))
    if len(merged) > MAX_RULES:
        return None
    side = round(SIDE * thickness / MAX_THICKNESS)
    return [
        ((first + last + 1) / 2, start, stop)
        for first, last, start, stop in merged
        if _on_paper(drawn, first, last, slice(start, stop), side)
    ]


def _on_paper(drawn: Any, first: int, last: int, along: slice, side: int) -> bool:
    """Whether the band ``side`` pixels wide above or below rows ``first`` to ``last`` of ``drawn`` (over the
    columns ``along``) is paper, at most SIDE_INK of it drawn: a rule is drawn on paper, at least on one side,
    where the gaps between white letters on a coloured bar are not."""
    above = drawn[max(first - 1 - side, 0) : max(first - 1, 0), along]
    below = drawn[last + 2 : last + 2 + side, along]
    return any(band.size and band.mean() <= SIDE_INK for band in (above, below))


def _long_runs(drawn: Any, min_length: float) -> list[tuple[int, int, int]]:
    """(row, start, stop) of each run of True along the rows of ``drawn`` at least ``min_length`` long."""
    import numpy as np

    padded = np.zeros((drawn.shape[0], drawn.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = drawn
    steps = np.diff(padded, axis=1)
    rows, starts = np.nonzero(steps == 1)
    _, stops = np.nonzero(steps == -1)  # row-major order: the n-th stop ends the n-th start's run
    keep = stops - starts >= min_length
    return list(zip(rows[keep].tolist(), starts[keep].tolist(), stops[keep].tolist(), strict=True))


def _merge(runs: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
    """The runs on neighbouring rows that overlap, as one rule each: (first row, last row, start, stop)."""
    done: list[list[int]] = []
    open_rules: list[list[int]] = []  # first row, last row, start, stop: those a run on the next row may extend
    for row, start, stop in sorted(runs):
        done += [rule for rule in open_rules if rule[1] < row - 1]
        open_rules = [rule for rule in open_rules if rule[1] >= row - 1]
        rule = next((rule for rule in open_rules if rule[1] < row and start < rule[3] and rule[2] < stop), None)
        if rule is None:
            open_rules.append([row, row, start, stop])
        else:
            rule[1], rule[2], rule[3] = row, min(rule[2], start), max(rule[3], stop)
    return sorted(done + open_rules)


def _to_corners(rules: list[Rule], crossing: list[Rule]) -> list[Rule]:
    """``rules`` (position, start, end), each end within CORNER points of a rule of ``crossing`` (short of it or
    past it) moved onto it: a rounded box's sides stop short of its corners, and a rendered rule ends within a
    pixel or two of where it meets another, where pdfplumber's table finder needs the two to meet."""
    met = []
    for position, start, end in rules:
        level = [x for x, low, high in crossing if low - CORNER <= position <= high + CORNER]
        met.append((position, _nearest(start, level), _nearest(end, level)))
    return [rule for rule in met if rule[2] > rule[1]]


def _nearest(end: float, crossing: list[float]) -> float:
    """The position in ``crossing`` nearest ``end`` if it is within CORNER points of it, else ``end``."""
    near = min(crossing, key=lambda x: abs(x - end), default=end)
    return near if abs(near - end) <= CORNER else end


def vertical_edge(x: float, top: float, bottom: float) -> Edge:
    """A vertical edge as pdfplumber's ``explicit_vertical_lines`` takes one."""
    size = {"width": 0.0, "height": bottom - top}
    return {"object_type": "v_edge", "orientation": "v", "x0": x, "x1": x, "top": top, "bottom": bottom, **size}


def horizontal_edge(y: float, x0: float, x1: float) -> Edge:
    """A horizontal edge as pdfplumber's ``explicit_horizontal_lines`` takes one."""
    size = {"width": x1 - x0, "height": 0.0}
    return {"object_type": "h_edge", "orientation": "h", "x0": x0, "x1": x1, "top": y, "bottom": y, **size}
