"""The source text with every chunk's span coloured, as HTML: the picture the product is built around.

Pure (text in, HTML out), so the app, the HTML snapshot and a notebook draw the
same picture. :func:`source_html` escapes every piece of document text and every
id it puts in an attribute; document text is untrusted.

How spans read: each chunk gets a soft colour (cycling through a palette);
text held by two or more chunks is hatched (overlap); the selected node is
outlined; a small ``#n`` tag marks where chunk n starts; PDF page boundaries
are drawn as a labelled rule; non-blank text that no chunk holds is underlined
in red (a coverage hole).
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# Soft, distinct colours that keep dark text readable.
PALETTE = ("#bfdbfe", "#bbf7d0", "#fde68a", "#fbcfe8", "#c7d2fe", "#99f6e4", "#fed7aa", "#ddd6fe")
WINDOW_CHARS = 12_000
# Dense splits draw smaller windows: the browser's cost grows with the spans drawn (3,431
# overlapping sentence chunks of 1 MB made 40 KB of HTML per 12,000-character window). At 40 a
# window, the samples' usual splits (the guide: 53 chunks of 16 KB) keep whole 12,000-character parts.
CHUNKS_PER_WINDOW = 40
MIN_WINDOW_CHARS = 4_000
_LINE_SPLIT = re.compile(r"(\n)")
MAX_SEGMENTS = 4_000

CSS = """
<style>
.cs-legend{display:flex;flex-wrap:wrap;gap:14px;font-size:0.8rem;color:#475569;margin:2px 0 6px 0}
.cs-legend span.sw{display:inline-block;width:22px;height:12px;border-radius:3px;vertical-align:-1px;margin-right:5px}
.cs-source{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:0.82rem;line-height:1.75;
  white-space:pre-wrap;word-break:break-word;padding:12px 14px;border:1px solid #e2e8f0;border-radius:8px;
  background:#ffffff;color:#0f172a;max-height:var(--cs-height,560px);overflow-y:auto}
.cs-source .c{border-radius:2px}
.cs-source .ov{background-image:repeating-linear-gradient(135deg,rgba(15,23,42,.22) 0 2px,transparent 2px 6px)}
.cs-source .sel{outline:1.5px solid #2563eb;outline-offset:0}
.cs-source .hole{text-decoration:underline wavy #dc2626}
.cs-source .mk-window{background-color:#fef08a !important}
.cs-source .mk-focus{background-color:#f59e0b !important;color:#111827}
.cs-source .tag{font-size:0.62rem;font-weight:600;color:#1e3a8a;background:#eef2ff;border:1px solid #c7d2fe;
  border-radius:3px;padding:0 3px;margin:0 2px;vertical-align:1px;user-select:none}
.cs-source .tag.sel-tag{background:#2563eb;color:#ffffff;border-color:#2563eb}
.cs-source .page{display:block;border-top:2px dashed #94a3b8;color:#64748b;font-size:0.7rem;
  font-family:system-ui,sans-serif;margin:10px 0 4px 0;padding-top:2px;user-select:none}
.cs-source .page:first-child{margin-top:0;border-top:none}
.cs-source .page.ocr{color:#92400e;border-top-color:#f59e0b}
.cs-source .page.ocr b{font-weight:600;background:#fef3c7;border-radius:3px;padding:0 4px;margin-left:6px}
.cs-source .more{display:block;color:#64748b;font-style:italic;font-family:system-ui,sans-serif;margin-top:8px}
</style>
"""


class HasSpan(Protocol):
    id: str
    start_char: int
    end_char: int


@dataclass(frozen=True)
class Mark:
    """An extra highlight over the source, e.g. a sentence window (``kind``: window | focus)."""

    start: int
    end: int
    kind: str = "window"


@dataclass(frozen=True)
class Window:
    """A slice of the document rendered at once."""

    start: int
    end: int
    label: str


def colour_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def window_chars_for(text_length: int, node_count: int, window_chars: int = WINDOW_CHARS) -> int:
    """The window size that holds about :data:`CHUNKS_PER_WINDOW` chunks of an even split, within
    ``[MIN_WINDOW_CHARS, window_chars]``: a sparse split keeps ``window_chars``, a dense one draws less at a time."""
    if node_count <= 0:
        return window_chars
    even = text_length * CHUNKS_PER_WINDOW // node_count
    return max(min(MIN_WINDOW_CHARS, window_chars), min(window_chars, even))


def source_windows(document: Any, window_chars: int = WINDOW_CHARS) -> list[Window]:
    """Cut the document into slices of about ``window_chars``.

    Paged documents are cut on page boundaries (a window holds whole pages
    unless one page alone is larger); others on a line break near the limit.
    """
    text: str = document.text
    length = len(text)
    if length <= window_chars:
        return [Window(0, length, "whole document")]
    pages = list(getattr(document, "pages", []) or [])
    windows: list[Window] = []
    if pages:
        group: list[Any] = []
        for page in pages:
            if group and page.end_char - group[0].start_char > window_chars:
                windows.append(_page_window(group))
                group = []
            group.append(page)
        if group:
            windows.append(_page_window(group))
        # Text before the first page or after the last (rare) joins the neighbour.
        first, last = windows[0], windows[-1]
        windows[0] = Window(0, first.end, first.label)
        windows[-1] = Window(windows[-1].start, max(last.end, length), windows[-1].label)
        return windows
    start = 0
    while start < length:
        end = min(start + window_chars, length)
        if end < length:
            newline = text.rfind("\n", start + window_chars // 2, end)
            if newline != -1:
                end = newline + 1
        windows.append(Window(start, end, f"characters {start:,}–{end:,}"))
        start = end
    return windows


def _page_window(group: Sequence[Any]) -> Window:
    first, last = group[0], group[-1]
    label = f"page {first.label}" if first is last else f"pages {first.label}–{last.label}"
    return Window(first.start_char, last.end_char, label)


def window_index_for(windows: Sequence[Window], position: int) -> int:
    starts = [w.start for w in windows]
    return max(bisect_right(starts, position) - 1, 0)


def source_html(
    text: str,
    nodes: Sequence[HasSpan],
    *,
    start: int = 0,
    end: int | None = None,
    pages: Sequence[Any] = (),
    selected_id: str | None = None,
    marks: Sequence[Mark] = (),
    height_px: int = 560,
    include_css: bool = True,
    index_of: Mapping[str, int] | None = None,
    ocr_confidence: Mapping[int, float] | None = None,
) -> str:
    """HTML for ``text[start:end]`` with each node's span coloured (see the module docstring).

    A node is numbered (and coloured) by its position in ``nodes``, or by
    ``index_of[node.id]`` when given (e.g. leaves numbered as in the full node list).
    ``ocr_confidence`` maps the numbers of pages read by OCR to their mean word
    confidence: their page marker says so, since their text is a reading, not the file's.
    """
    end = len(text) if end is None else min(end, len(text))
    start = max(0, min(start, end))
    visible = _visible(nodes, index_of or {}, start, end)
    page_starts = {p.start_char: p for p in pages if start <= p.start_char < end}
    clipped_marks = [m for m in marks if m.start < end and m.end > start]
    boundaries = _boundaries(start, end, visible, page_starts, clipped_marks)
    starting = _starting_at(visible, start)
    active: dict[int, HasSpan] = {}
    parts: list[str] = [CSS] if include_css else []
    parts.append(f'<div class="cs-source" style="--cs-height:{int(height_px)}px">')
    for seg_no, (a, b) in enumerate(zip(boundaries, boundaries[1:], strict=False)):
        if seg_no >= MAX_SEGMENTS:
            parts.append(
                f'<span class="more">… {end - a:,} more characters in this window are not drawn '
                "(too many tiny chunks to show at once).</span>"
            )
            break
        for index in [i for i, n in active.items() if n.end_char <= a]:
            del active[index]
        if a in page_starts:
            parts.append(_page_marker(page_starts[a], ocr_confidence or {}))
        for index, node in starting.get(a, []):
            active[index] = node
            parts.append(_tag(index, node, selected_id))
        parts.extend(_segment(text[a:b], _segment_classes(text[a:b], a, b, active, selected_id, clipped_marks)))
    parts.append("</div>")
    return "".join(parts)


def _visible(nodes: Sequence[HasSpan], index_of: Mapping[str, int], start: int, end: int) -> list[tuple[int, HasSpan]]:
    """The numbered nodes whose non-empty span meets ``[start, end)``: (number, node), in the nodes' order."""
    numbered = [(index_of.get(n.id, i), n) for i, n in enumerate(nodes)]
    return [(i, n) for i, n in numbered if n.start_char < end and n.end_char > start and n.end_char > n.start_char]


def _starting_at(visible: Sequence[tuple[int, HasSpan]], start: int) -> dict[int, list[tuple[int, HasSpan]]]:
    """The visible nodes by where their drawing starts (a node begun before the window starts at its start)."""
    starting: dict[int, list[tuple[int, HasSpan]]] = {}
    for index, node in visible:
        starting.setdefault(max(node.start_char, start), []).append((index, node))
    return starting


def _boundaries(
    start: int,
    end: int,
    visible: Sequence[tuple[int, HasSpan]],
    page_starts: Mapping[int, Any],
    marks: Sequence[Mark],
) -> list[int]:
    """Every position where the drawing changes: a chunk, a page or a mark starts or ends (clipped to the window)."""
    cuts = {start, end, *page_starts}
    for _, node in visible:
        cuts.add(max(node.start_char, start))
        cuts.add(min(node.end_char, end))
    for mark in marks:
        cuts.add(max(mark.start, start))
        cuts.add(min(mark.end, end))
    return sorted(cuts)


def _tag(index: int, node: HasSpan, selected_id: str | None) -> str:
    """The ``#N`` label drawn where a chunk starts."""
    selected = " sel-tag" if node.id == selected_id else ""
    return f'<span class="tag{selected}" title="{html.escape(str(node.id), quote=True)}">#{index}</span>'


def _segment_classes(
    piece: str,
    a: int,
    b: int,
    active: Mapping[int, HasSpan],
    selected_id: str | None,
    marks: Sequence[Mark],
) -> tuple[list[str], str, str]:
    """How one segment between two boundaries is drawn: its classes, its colour and its tooltip."""
    classes: list[str] = []
    style = ""
    title = ""
    if active:
        top = max(active)
        classes.append("c")
        style = f' style="background-color:{colour_for(top)}"'
        if len(active) > 1:
            classes.append("ov")
        if selected_id is not None and any(n.id == selected_id for n in active.values()):
            classes.append("sel")
        numbers = ", ".join(f"#{i}" for i in sorted(active))
        title = f' title="{"overlap of " if len(active) > 1 else "chunk "}{numbers}"'
    elif piece.strip():
        classes.append("hole")
        title = ' title="not in any chunk"'
    for mark in marks:
        if mark.start <= a and b <= mark.end:
            classes.append(f"mk-{html.escape(mark.kind, quote=True)}")
    return classes, style, title


def _segment(piece: str, drawn: tuple[list[str], str, str]) -> list[str]:
    """One segment's escaped text, wrapped in its spans line by line."""
    escaped = html.escape(piece, quote=True)
    classes, style, title = drawn
    if not classes:
        return [escaped]
    # Line breaks stay outside the spans: an empty line fragment would draw a stray box.
    opening = f'<span class="{" ".join(classes)}"{style}{title}>'
    return [line if line == "\n" else f"{opening}{line}</span>" for line in _LINE_SPLIT.split(escaped) if line]


def _page_marker(page: Any, ocr_confidence: Mapping[int, float]) -> str:
    label = f"page {html.escape(str(page.label))}"
    confidence = ocr_confidence.get(page.number)
    if confidence is None:
        return f'<span class="page">{label}</span>'
    return f'<span class="page ocr">{label}<b>read by OCR · {confidence:.0f}% mean word confidence</b></span>'


def ocr_confidence_by_page(metadata: Mapping[str, Any]) -> dict[int, float]:
    """The PDF loader's ``ocr_confidence`` metadata (page numbers as strings, as JSON keeps them) by page number."""
    return {int(number): float(value) for number, value in (metadata.get("ocr_confidence") or {}).items()}


def legend_html(*, ocr: bool = False) -> str:
    overlap = f"background-color:{PALETTE[0]};background-image:repeating-linear-gradient(135deg,rgba(15,23,42,.28) 0 2px,transparent 2px 6px)"
    return (
        '<div class="cs-legend">'
        f'<span><span class="sw" style="background:{PALETTE[0]}"></span><span class="sw" style="background:{PALETTE[1]}"></span>'
        "chunks (one colour each)</span>"
        f'<span><span class="sw" style="{overlap}"></span>overlap (text in 2+ chunks)</span>'
        '<span><span class="sw" style="outline:2px solid #2563eb;background:#fff"></span>selected node</span>'
        '<span><span style="text-decoration:underline wavy #dc2626">text</span> in no chunk</span>'
        '<span><span class="sw" style="border-top:2px dashed #94a3b8;background:#fff"></span>page boundary</span>'
        + (
            '<span><span class="sw" style="border-top:2px dashed #f59e0b;background:#fef3c7"></span>page read by OCR</span>'
            if ocr
            else ""
        )
        + "</div>"
    )
