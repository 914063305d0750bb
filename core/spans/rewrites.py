"""What a framework did to the text: span-status counts and the characters a rewritten chunk changed.

A framework engine's node keeps the framework's text. Where that text is not the
source slice its span covers (``rewritten``: stripped lines, collapsed blank
lines, headers moved into metadata), the app shows which characters differ, so
nobody mistakes a rewritten chunk for a cut of the source. Streamlit-free: the
Chunks page draws these, tests read them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any, Literal, NamedTuple

from core.schema import Node
from core.spans.recovery import SPAN_STATUS_KEY, RecoveredSpan, SpanStatus

SegmentKind = Literal["same", "source_only", "chunk_only"]

# difflib is quadratic in the worst case; a longer pair is compared by its first characters
# and the rest is reported as one segment per side, which says "and more differs" honestly.
MAX_DIFF_CHARS = 20_000


class Segment(NamedTuple):
    """A run of text: in both, only in the source slice (the framework dropped it), or only in the chunk (added)."""

    kind: SegmentKind
    text: str


def has_span_status(nodes: Sequence[Node]) -> bool:
    """Whether any node says how its span was found: every node of a framework engine, and the rewritten
    nodes of a native splitter's compat mode (its other nodes are exact slices and carry nothing)."""
    return any(SPAN_STATUS_KEY in node.metadata for node in nodes)


def status_of(node: Node) -> SpanStatus:
    """How the node's span was found; a native splitter's node is exact by construction."""
    return SpanStatus(node.metadata.get(SPAN_STATUS_KEY, SpanStatus.EXACT))


def span_counts(items: Iterable[Any]) -> dict[str, int]:
    """How many chunks are exact, rewritten and unplaced.

    ``items`` are nodes (read from their ``span_status`` metadata; nodes without
    it, such as a native splitter's, count as exact), RecoveredSpans or statuses.
    """
    counts: Counter[str] = Counter({status.value: 0 for status in SpanStatus})
    for item in items:
        if isinstance(item, RecoveredSpan):
            status: Any = item.status
        elif isinstance(item, str):
            status = item
        else:
            metadata: Mapping[str, Any] = getattr(item, "metadata", {})
            status = metadata.get(SPAN_STATUS_KEY, SpanStatus.EXACT)
        counts[SpanStatus(status).value] += 1
    return dict(counts)


def status_summary(nodes: Sequence[Node]) -> str:
    """One line for the page: ``26 chunks: 12 exact · 14 rewritten · 0 unplaced``."""
    counts = span_counts(nodes)
    parts = " · ".join(f"{counts[status.value]:,} {status.value}" for status in SpanStatus)
    return f"{len(nodes):,} chunks: {parts}"


def rewrite_segments(source_slice: str, chunk_text: str) -> list[Segment]:
    """The chunk against the source slice its span covers, as same / source-only / chunk-only runs.

    Joining the ``same`` and ``source_only`` runs gives the source slice back, joining
    ``same`` and ``chunk_only`` gives the chunk back (both only up to :data:`MAX_DIFF_CHARS`
    characters compared; the rest follows as one run per side).
    """
    head_a, tail_a = source_slice[:MAX_DIFF_CHARS], source_slice[MAX_DIFF_CHARS:]
    head_b, tail_b = chunk_text[:MAX_DIFF_CHARS], chunk_text[MAX_DIFF_CHARS:]
    segments: list[Segment] = []
    matcher = SequenceMatcher(None, head_a, head_b, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            _append(segments, "same", head_a[a0:a1])
            continue
        _append(segments, "source_only", head_a[a0:a1])
        _append(segments, "chunk_only", head_b[b0:b1])
    _append(segments, "source_only", tail_a)
    _append(segments, "chunk_only", tail_b)
    return segments


def changed_characters(segments: Sequence[Segment]) -> tuple[int, int]:
    """(characters the framework dropped from the source slice, characters it added)."""
    dropped = sum(len(s.text) for s in segments if s.kind == "source_only")
    added = sum(len(s.text) for s in segments if s.kind == "chunk_only")
    return dropped, added


def _append(segments: list[Segment], kind: SegmentKind, text: str) -> None:
    if not text:
        return
    if segments and segments[-1].kind == kind:
        segments[-1] = Segment(kind, segments[-1].text + text)
    else:
        segments.append(Segment(kind, text))
