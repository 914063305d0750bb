"""Where a split's chunks lie in their documents: the share of text they cover, what several chunks share, and
which chunks end in the middle of a sentence (a table row counts as a sentence).

Everything is computed from spans with numpy over per-document prefix sums, kept in bounded memos, so
:mod:`core.measure.metrics` can measure again after every parameter change.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.runtime.memo import Memo
from core.schema import Document, Node
from core.tokens.char_index import CharIndex

# The sentence ends of the last texts measured: at most 8 texts and 8 million characters.
_SENTENCE_ENDS = Memo(8_000_000, max_entries=8)


def _sentence_ends(text: str) -> np.ndarray:
    from core.tokens.segmentation import sentence_ends

    (ends,) = _SENTENCE_ENDS.get_many([text])
    if ends is None:
        ends = sentence_ends(text)
        _SENTENCE_ENDS.put(text, ends, max(len(text), 1))
    return ends


def _row_ends(document: Document) -> np.ndarray:
    """Where a table's rows end (its header row included), sorted: a cut there ends no sentence but is clean."""
    ends = set()
    for element in document.elements:
        if element.kind == "table_row":
            ends.add(element.end_char)
        elif element.kind == "table":
            ends.add(element.end_char)
            if "header_end" in element.attrs:
                ends.add(int(element.attrs["header_end"]))
    return np.array(sorted(ends), dtype=np.int64)


def mid_sentence(documents: Sequence[Document], nodes: Sequence[Node]) -> list[bool]:
    """For each node: does it end (trailing whitespace dropped) somewhere other than a sentence end of its
    document or the end of a table row (rows hold no sentences)? False for a node of no document given."""
    by_id = {document.id: document for document in documents}
    groups: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        if node.doc_id in by_id:
            groups.setdefault(node.doc_id, []).append(i)
    flags = [False] * len(nodes)
    for doc_id, positions in groups.items():
        text = by_id[doc_id].text
        starts = np.fromiter((nodes[i].start_char for i in positions), dtype=np.int64, count=len(positions))
        ends = np.fromiter((nodes[i].end_char for i in positions), dtype=np.int64, count=len(positions))
        trimmed = CharIndex.of(text).trimmed_ends(starts, np.minimum(ends, len(text)))
        sentence_ends = _sentence_ends(text)
        if len(sentence_ends):
            at = np.minimum(np.searchsorted(sentence_ends, trimmed), len(sentence_ends) - 1)
            mid = sentence_ends[at] != trimmed
        else:
            mid = np.ones(len(positions), dtype=bool)
        row_ends = _row_ends(by_id[doc_id])
        if len(row_ends):
            mid &= ~np.isin(trimmed, row_ends)
        for i, flag in zip(positions, mid.tolist(), strict=True):
            flags[i] = flag
    return flags


def coverage_of(documents: Sequence[Document], nodes: Sequence[Node]) -> tuple[dict[str, float], float, float]:
    """Per-document and overall non-whitespace coverage, and the overlap share."""
    spans_by_doc: dict[str, tuple[list[int], list[int]]] = {document.id: ([], []) for document in documents}
    for node in nodes:
        spans = spans_by_doc.get(node.doc_id)
        if spans is not None and node.end_char > node.start_char:
            spans[0].append(node.start_char)
            spans[1].append(node.end_char)
    by_document: dict[str, float] = {}
    covered_total = non_space_total = 0
    union_total = multiple_total = 0
    for document in documents:
        prefix = _non_space_prefix(document.text)
        covered, union, multiple = _sweep(*spans_by_doc[document.id], prefix)
        non_space = int(prefix[-1])
        by_document[document.id] = covered / non_space if non_space else 1.0
        covered_total += covered
        non_space_total += non_space
        union_total += union
        multiple_total += multiple
    coverage = covered_total / non_space_total if non_space_total else 1.0
    overlap = multiple_total / union_total if union_total else 0.0
    return by_document, coverage, overlap


def _sweep(starts: Sequence[int], ends: Sequence[int], prefix: np.ndarray) -> tuple[int, int, int]:
    """For spans ``[starts[k], ends[k])``: the non-whitespace characters their union holds (``prefix`` counts
    them), the union's length, and how many positions two or more spans hold."""
    if not starts:
        return 0, 0, 0
    positions = np.concatenate([np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)])
    changes = np.concatenate([np.ones(len(starts), dtype=np.int64), np.full(len(ends), -1, dtype=np.int64)])
    order = np.argsort(positions, kind="stable")
    positions = positions[order]
    # Between consecutive events the depth is the number of spans open there.
    depth = np.cumsum(changes[order])[:-1]
    lengths = np.diff(positions)
    inside = depth >= 1
    covered = int((prefix[positions[1:]] - prefix[positions[:-1]])[inside].sum())
    return covered, int(lengths[inside].sum()), int(lengths[depth >= 2].sum())


def _non_space_prefix(text: str) -> np.ndarray:
    """``prefix[i]`` = non-whitespace characters in ``text[:i]``: any span's count is one subtraction."""
    return CharIndex.of(text).non_space_prefix
