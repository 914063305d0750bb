"""Text a PDF's drawing corrupts without a junk character: glyphs drawn over themselves, and text set rotated.

Both read as text to every later step, so they are caught here, where the characters' positions are known.

* **Overdraw**: a PDF may draw a glyph two to four times at one position (a fake bold, a
  doubled layer). A viewer shows one glyph; pdfplumber, which reads characters by position,
  writes every copy ("333300000000222211118888"), and pypdf, which reads in drawing order,
  writes every pass ("300218300218300218300218"). A page whose characters repeat at one
  position (same character, within :data:`SAME_POSITION` points, or shifted by less than
  half the glyph's width as a fake bold shifts its copies: :func:`glyph_copies`) at least
  :data:`MIN_REPEATED` times is read once per position, and the page is named in
  ``load_warning``. (pdfplumber's own ``dedupe_chars`` stops at its tolerance: copies 1.2 pt
  apart read "1155..7755".) pypdf's text is looked at first
  (:func:`looks_overdrawn`: a run written again right after itself, or three characters in a
  row each doubled); only a page that looks so is opened with pdfplumber to count.
* **Rotation**: a character's direction is the angle of its text matrix. pdfplumber reads
  every non-upright line top to bottom and every upright one left to right, so a vertical
  column header set upwards reads "latoT" and text turned upside down "noitalupoP latoT".
  :func:`direction_options` gives pdfplumber the reading direction of text turned by 90,
  180 or 270 degrees, so it reads "Total Population"; other angles (a diagonal watermark)
  are read as before.
* **Words run together**: pdfplumber splits words at a fixed 3 pt gap, which runs the words of tightly set
  text together; every reading of this path splits them at :data:`WORD_GAP_EM` of the font size instead.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

# Two copies of a character whose positions differ by at most this (points) are one glyph drawn twice.
SAME_POSITION = 1.0
# A fake bold draws a glyph again shifted by a fraction of a point: a copy less than this share of the glyph's
# width along the line from the one before (a neighbour written twice, "ll", sits a whole width on; 0.5 of the
# narrowest Helvetica glyph at 11 pt is 1.2 pt) ...
COPY_SHARE = 0.5
# ... and less than this share of its size across it (the same letter on the next line is a line away) is a copy.
BOLD_DRIFT = 0.15
# A character this close to a right angle runs at it (a slightly skewed text layer, as on a deskewed scan).
SKEW_DEGREES = 5.0
# A page is overdrawn from this many repeated characters on (one stray duplicate is not worth a rewrite).
MIN_REPEATED = 3
# Two characters farther apart than this share of the font size are two words. pdfplumber's default is a
# fixed 3 pt, which runs words together on tightly set pages (TeX's 9-10 pt text has word gaps of 2-3 pt:
# "Largelanguagemodels(LLMs)are"); letters within a word sit less than 0.05 em apart, a word gap is
# 0.2-0.33 em, so 0.15 em splits both ways at every size (1.5 pt at 10 pt, 3.6 pt in a 24 pt title).
WORD_GAP_EM = 0.15

# pypdf's text of an overdrawn page: a token of three or more characters written again right after itself, up
# to the end of a token ("300218300218", "amount300218 Total amount"), three characters in a row each written two
# to four times ("TToottaall"), or a line of some length written twice (a pass over several lines, drawn again).
_REPEATED_RUN = re.compile(r"(?<!\S)([^\W_][^\n]{1,60}?[^\s])\1{1,3}(?!\S)")
_DOUBLED_CHARS = re.compile(r"([^\W_])\1{1,3}([^\W_])\2{1,3}([^\W_])\3{1,3}")
_LONG_LINE = 12

# pdfplumber's reading directions for text turned by each angle (counter-clockwise, degrees): the
# characters' order and the lines' order, rendered left to right and top to bottom.
_DIRECTIONS: dict[int, dict[str, str]] = {
    90: {"char_dir_rotated": "btt", "line_dir_rotated": "ltr"},
    180: {"char_dir": "rtl", "line_dir": "btt"},
    270: {"char_dir_rotated": "ttb", "line_dir_rotated": "rtl"},
}
_RENDER = {"char_dir_render": "ltr", "line_dir_render": "ttb"}


def looks_overdrawn(text: str) -> bool:
    """Whether pypdf's text of a page repeats itself as overdrawn glyphs do: worth counting the page's characters."""
    if _REPEATED_RUN.search(text) or _DOUBLED_CHARS.search(text):
        return True
    lines = Counter(line for line in (raw.strip() for raw in text.split("\n")) if len(line) >= _LONG_LINE)
    return any(count > 1 for count in lines.values())


def times_drawn(chars: list[dict[str, Any]]) -> int:
    """How many times the most repeated glyph of ``chars`` is drawn at one position (:func:`glyph_copies`), when at
    least MIN_REPEATED characters repeat one drawn before them; 1 otherwise."""
    copies = [group for group in glyph_copies(chars) if chars[group[0]]["text"].strip()]
    repeated = sum(len(group) - 1 for group in copies)
    return max(len(group) for group in copies) if repeated >= MIN_REPEATED else 1


def glyph_copies(chars: list[dict[str, Any]]) -> list[list[int]]:
    """The indices of ``chars`` grouped by the glyph a viewer shows: copies of one character (same text, font and
    size) drawn over each other, the first of each group the one kept (top-most, then left-most).

    Copies are consecutive, in position, along the line and across it: within SAME_POSITION points, or a fake
    bold's shift: less than COPY_SHARE of the glyph's width along the line (a neighbour written twice, "ll",
    "00", "..", sits a whole width on) and BOLD_DRIFT of its size across it. Text not upright keeps SAME_POSITION
    both ways.
    """
    # (top, x0, x1, index) of each character, by glyph.
    by_glyph: dict[tuple[Any, ...], list[tuple[float, float, float, int]]] = {}
    for index, char in enumerate(chars):
        key = (char.get("upright", True), char["text"], char.get("fontname"), char.get("size"))
        x0 = char["x0"]
        by_glyph.setdefault(key, []).append((char["top"], x0, char.get("x1", x0), index))
    groups: list[list[int]] = []
    for (upright, _, _, size), placed in by_glyph.items():
        if len(placed) == 1:
            groups.append([placed[0][3]])
            continue
        across = max(SAME_POSITION, BOLD_DRIFT * float(size or 0)) if upright else SAME_POSITION
        # Top to bottom: a line is a run of copies each at most ``across`` below the one before.
        placed.sort()
        line = [placed[0]]
        for item, before in zip(placed[1:], placed, strict=False):
            if item[0] - before[0] > across:
                groups.extend(_copies_along(line, upright))
                line = []
            line.append(item)
        groups.extend(_copies_along(line, upright))
    return groups


def _copies_along(line: list[tuple[float, float, float, int]], upright: bool) -> list[list[int]]:
    """The (top, x0, x1, index) of one glyph on one line, split where the next sits farther right of the one
    before than COPY_SHARE of its width (SAME_POSITION at least, and only that for text not upright); each group's
    indices top-most, then left-most, first."""
    if len(line) == 1:
        return [[line[0][3]]]
    line.sort(key=lambda item: item[1])
    clusters: list[list[tuple[float, float, float, int]]] = []
    before = None
    for item in line:
        reach = max(SAME_POSITION, COPY_SHARE * (before[2] - before[1])) if upright and before else SAME_POSITION
        if before is not None and item[1] - before[1] <= reach:
            clusters[-1].append(item)
        else:
            clusters.append([item])
        before = item
    return [[cluster[0][3]] if len(cluster) == 1 else [item[3] for item in sorted(cluster)] for cluster in clusters]


def one_glyph_per_position(page: Any) -> tuple[Any, int]:
    """A pdfplumber page with every glyph once per position, as a viewer shows it (:func:`glyph_copies`), and how
    many times its most repeated glyph was drawn (the page itself and 1 when nothing is drawn over)."""
    chars = page.chars
    times = times_drawn(chars)
    if times == 1:
        return page, 1
    copies = {id(chars[index]) for group in glyph_copies(chars) for index in group[1:]}
    return page.filter(lambda obj: obj.get("object_type") != "char" or id(obj) not in copies), times


def char_direction(char: dict[str, Any]) -> int:
    """The angle (0, 90, 180 or 270 degrees, counter-clockwise, within SKEW_DEGREES) a character's baseline runs
    at; -1 for any other."""
    a, b = char["matrix"][:2]
    angle = math.degrees(math.atan2(b, a)) % 360
    nearest = round(angle / 90) * 90 % 360
    off = abs(angle - nearest) % 360
    return nearest if min(off, 360 - off) <= SKEW_DEGREES else -1


def char_size(char: dict[str, Any]) -> float:
    """A character's font size: pdfminer gives a character turned by 90 or 270 degrees its advance as its size
    (7.3 for a 12-point "T"), while its box across the baseline is the font size, as an upright one's height is."""
    if char_direction(char) in (90, 270):
        return float(char["x1"] - char["x0"])
    return float(char["size"])


def direction_options(chars: list[dict[str, Any]]) -> dict[str, str]:
    """pdfplumber's text options that read ``chars`` in the direction most of them run (none for upright text)."""
    directions = Counter(char_direction(char) for char in chars if char["text"].strip())
    if not directions:
        return {}
    direction = directions.most_common(1)[0][0]
    return {**_DIRECTIONS[direction], **_RENDER} if direction in _DIRECTIONS else {}


def join_vertical_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pdfplumber's text lines of vertical text with the words of one column joined: it writes each word of a
    vertical run on a line of its own, in reading order."""
    joined: list[dict[str, Any]] = []
    for line in lines:
        last = joined[-1] if joined else None
        if last is not None and abs(line["x0"] - last["x0"]) <= SAME_POSITION and abs(line["x1"] - last["x1"]) <= 2:
            last["text"] = f"{last['text']} {line['text']}"
            last["top"], last["bottom"] = min(last["top"], line["top"]), max(last["bottom"], line["bottom"])
            last["chars"] = [*last["chars"], *line["chars"]]
        else:
            joined.append(dict(line))
    return joined


def angled_lines(chars: list[dict[str, Any]], word_gap_em: float) -> list[dict[str, Any]]:
    """The lines of text set at an angle other than 0, 90, 180 or 270 degrees (a diagonal watermark), read along
    their baseline: pdfplumber, which reads every character as upright or turned by 90 degrees, scatters them
    ("n o ati ul p o P al ot T"). Each line is ``{"text", "size", "top", "bottom", "x0", "x1", "chars"}``, as
    pdfplumber gives its text lines with the font size; characters farther apart than ``word_gap_em`` of their size are two words."""
    by_angle: dict[int, list[dict[str, Any]]] = {}
    for char in chars:
        a, b = char["matrix"][:2]
        by_angle.setdefault(round(math.degrees(math.atan2(b, a))) % 360, []).append(char)
    lines: list[dict[str, Any]] = []
    for angle, group in sorted(by_angle.items()):
        along_x, along_y = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        # PDF space (y up): a character's origin projected on its baseline and across it.
        placed = [
            (
                char["matrix"][4] * along_x + char["matrix"][5] * along_y,
                char["matrix"][5] * along_x - char["matrix"][4] * along_y,
                char,
            )
            for char in group
        ]
        rows: list[list[tuple[float, float, dict[str, Any]]]] = []
        for item in sorted(placed, key=lambda item: -item[1]):
            if rows and abs(rows[-1][0][1] - item[1]) <= float(item[2]["size"]) / 2:
                rows[-1].append(item)
            else:
                rows.append([item])
        for row in rows:
            row.sort(key=lambda item: item[0])
            text, end = "", None
            for along, _, char in row:
                scale = math.hypot(*char["matrix"][:2])
                if end is not None and along - end > word_gap_em * float(char["size"]):
                    text += " "
                text += char["text"]
                end = along + float(char.get("adv") or 0.0) * scale
            members = [char for _, _, char in row]
            sizes = sorted(_angled_size(char, along_x, along_y) for char in members)
            lines.append(
                {
                    "text": " ".join(text.split()),
                    "size": sizes[len(sizes) // 2],
                    "top": min(c["top"] for c in members),
                    "bottom": max(c["bottom"] for c in members),
                    "x0": min(c["x0"] for c in members),
                    "x1": max(c["x1"] for c in members),
                    "chars": members,
                }
            )
    return [line for line in lines if line["text"]]


def _angled_size(char: dict[str, Any], along_x: float, along_y: float) -> float:
    """The font size of a character set at an angle: pdfminer's box is the turned glyph's (advance by font size)
    bounding box, whose height or width, less the advance's share of it, is the font size's share."""
    advance = float(char.get("adv") or 0.0) * math.hypot(*char["matrix"][:2])
    cos, sin = abs(along_x), abs(along_y)
    if cos >= sin:
        return max((float(char["bottom"] - char["top"]) - advance * sin) / cos, 0.0)
    return max((float(char["x1"] - char["x0"]) - advance * cos) / sin, 0.0)
