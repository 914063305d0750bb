"""Summary statistics for a list of text chunks.

A chunk is described by a half-open character span ``(start, end)`` into the
original text. From a list of spans this module computes:

* size statistics (count, min, max, mean, median, standard deviation),
* the overlap between each pair of consecutive spans,
* how much of the text is covered by at least one span, and which gaps remain.

Only the standard library is used. Run the module directly to split a file
(or a built-in example) into fixed-size windows and print a report::

    python chunk_stats.py [FILE] [--size N] [--overlap M]
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Sequence, Tuple

Span = Tuple[int, int]

EXAMPLE_TEXT = (
    "Chunking splits long documents into passages that a retriever can "
    "index one by one. Each passage should be small enough to have a single "
    "clear topic, yet large enough to make sense without its neighbours.\n\n"
    "Overlap repeats the tail of one chunk at the head of the next, so that "
    "a sentence cut by a boundary still appears whole in at least one chunk. "
    "Too much overlap inflates the index and returns near-duplicate results."
)


def fixed_windows(length: int, size: int, overlap: int = 0) -> List[Span]:
    """Return spans of ``size`` characters that advance by ``size - overlap``.

    The last span is shortened to end at ``length``. Raises ``ValueError`` if
    the window would never advance.
    """
    if size <= 0:
        raise ValueError("size must be positive")
    if not 0 <= overlap < size:
        raise ValueError("overlap must be >= 0 and smaller than size")
    spans: List[Span] = []
    start = 0
    while start < length:
        end = min(start + size, length)
        spans.append((start, end))
        if end == length:
            break
        start += size - overlap
    return spans


def span_sizes(spans: Iterable[Span]) -> List[int]:
    """Return the length of each span."""
    return [end - start for start, end in spans]


def consecutive_overlaps(spans: Sequence[Span]) -> List[int]:
    """Return the number of shared characters between each span and the next.

    A negative value means there is a gap of that many characters between
    the two spans instead of an overlap.
    """
    return [prev[1] - nxt[0] for prev, nxt in zip(spans, spans[1:])]


def merge_spans(spans: Iterable[Span]) -> List[Span]:
    """Merge overlapping or touching spans into a sorted, disjoint list."""
    merged: List[Span] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def coverage(spans: Iterable[Span], length: int) -> float:
    """Return the fraction of ``[0, length)`` covered by at least one span."""
    if length <= 0:
        return 0.0
    covered = sum(
        min(end, length) - max(start, 0)
        for start, end in merge_spans(spans)
        if end > 0 and start < length
    )
    return covered / length


def uncovered_gaps(spans: Iterable[Span], length: int) -> List[Span]:
    """Return the parts of ``[0, length)`` that no span covers."""
    gaps: List[Span] = []
    cursor = 0
    for start, end in merge_spans(spans):
        if start > cursor:
            gaps.append((cursor, min(start, length)))
        cursor = max(cursor, end)
        if cursor >= length:
            break
    if cursor < length:
        gaps.append((cursor, length))
    return [gap for gap in gaps if gap[1] > gap[0]]


@dataclass
class ChunkStats:
    """Statistics for one chunking of a text.

    Build it with :meth:`from_spans` and print :meth:`report` for a readable
    summary, or read the attributes directly.
    """

    text_length: int
    sizes: List[int]
    overlaps: List[int]
    coverage: float
    gaps: List[Span]

    @classmethod
    def from_spans(cls, spans: Sequence[Span], text_length: int) -> "ChunkStats":
        """Compute every statistic for ``spans`` over a text of ``text_length``."""
        ordered = sorted(spans)
        return cls(
            text_length=text_length,
            sizes=span_sizes(ordered),
            overlaps=consecutive_overlaps(ordered),
            coverage=coverage(ordered, text_length),
            gaps=uncovered_gaps(ordered, text_length),
        )

    @property
    def count(self) -> int:
        """Number of chunks."""
        return len(self.sizes)

    @property
    def mean_size(self) -> float:
        """Average chunk length in characters (0 when there are no chunks)."""
        return statistics.fmean(self.sizes) if self.sizes else 0.0

    @property
    def median_size(self) -> float:
        """Median chunk length in characters."""
        return float(statistics.median(self.sizes)) if self.sizes else 0.0

    @property
    def stdev_size(self) -> float:
        """Population standard deviation of chunk lengths."""
        return statistics.pstdev(self.sizes) if self.sizes else 0.0

    @property
    def total_overlap(self) -> int:
        """Characters repeated between consecutive chunks (gaps ignored)."""
        return sum(o for o in self.overlaps if o > 0)

    @property
    def redundancy(self) -> float:
        """Total chunk characters divided by covered characters.

        1.0 means no text is stored twice; 1.25 means a quarter extra.
        """
        covered = self.coverage * self.text_length
        return sum(self.sizes) / covered if covered else 0.0

    def report(self) -> str:
        """Return a multi-line, human-readable summary."""
        lines = [
            f"text length      : {self.text_length} chars",
            f"chunks           : {self.count}",
        ]
        if self.sizes:
            lines += [
                f"size min/max     : {min(self.sizes)} / {max(self.sizes)}",
                f"size mean/median : {self.mean_size:.1f} / {self.median_size:.1f}",
                f"size stdev       : {self.stdev_size:.1f}",
            ]
        if self.overlaps:
            shown = ", ".join(str(o) for o in self.overlaps[:8])
            if len(self.overlaps) > 8:
                shown += f", ... ({len(self.overlaps) - 8} more)"
            lines.append(f"overlaps         : [{shown}] (total {self.total_overlap})")
        lines += [
            f"coverage         : {self.coverage:.1%}",
            f"redundancy       : {self.redundancy:.2f}x",
            f"uncovered gaps   : {self.gaps if self.gaps else 'none'}",
        ]
        return "\n".join(lines)


def _parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Report chunk statistics for a text file.")
    parser.add_argument("file", nargs="?", help="text file to analyse (default: built-in example)")
    parser.add_argument("--size", type=int, default=120, help="window size in characters")
    parser.add_argument("--overlap", type=int, default=20, help="overlap in characters")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns a process exit code."""
    args = _parse_args(argv)
    if args.file:
        text = Path(args.file).read_text(encoding="utf-8")
        source = args.file
    else:
        text = EXAMPLE_TEXT
        source = "built-in example"
    try:
        spans = fixed_windows(len(text), args.size, args.overlap)
    except ValueError as exc:
        print(f"error: {exc}")
        return 2
    stats = ChunkStats.from_spans(spans, len(text))
    print(f"Source: {source}  (size={args.size}, overlap={args.overlap})")
    print(stats.report())
    print()
    print("First chunks:")
    for i, (start, end) in enumerate(spans[:3]):
        preview = text[start:end].replace("\n", " ")
        print(f"  [{i}] {start:>5}-{end:<5} {preview[:60]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
