"""What every splitter shares: the Splitter base, spans-to-nodes, and greedy merging.

A splitter computes spans ``(start, end)`` into the document's text; one shared
function, :func:`build_nodes`, turns spans into nodes with SOURCE/PREVIOUS/NEXT
relationships, inherited metadata, the pages a span touches and, for a span
inside a table that does not hold the table's header row, ``table_header``.
"""

from __future__ import annotations

import gc
import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import accumulate, pairwise, repeat
from operator import add
from typing import Any, ClassVar, NamedTuple

from core.memo import Memo
from core.params import Configurable, param
from core.schema import Document, Element, Node, NodeRelationship
from core.tokenizers import TOKENIZER_NAMES, Tokenizer, get_tokenizer, in_parallel, parallel_workers

# Where TokenIndex may cut a text into blocks: whitespace that no tokenizer joins across. Not the
# control characters Python counts as whitespace (\x0b \x0c \x1c-\x1f \x85): BERT's normalizer
# deletes them, so "ab\x0bcd" is one word to it.
_BLOCK_BREAK = re.compile(r"[^\S\x0b\x0c\x1c-\x1f\x85]")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a split allocates its nodes.

    Nodes, their metadata and relationship dicts form no reference cycles, so
    reference counting frees them; without the pause the collector rescans the
    growing set of young nodes over and over (about a quarter of a character-sized
    split's time on 10 MB). The collector's state is restored afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Span(NamedTuple):
    """A cut: ``document.text[start:end]``, with metadata this node alone adds."""

    start: int
    end: int
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class Splitter(Configurable):
    """Base of every splitter (node parser).

    Subclasses implement :meth:`spans`; those that build more than a flat chain
    (e.g. hierarchical) override :meth:`split_document`.
    """

    # True for splitters that never cut inside a table row (see :func:`protected_cuts`).
    keeps_table_rows: ClassVar[bool] = False
    # True for splitters that embed the whole text (so the embedding limit applies).
    embeds_text: ClassVar[bool] = False
    # The parameter values a framework's own splitter defaults to, under a label naming it, so a
    # user can start from them in one click. The algorithm stays this splitter's (sizes in its units).
    framework_defaults: ClassVar[Mapping[str, Mapping[str, Any]]] = {}

    include_metadata: bool = param(True, "Nodes inherit the document's metadata.", advanced=True)
    include_prev_next_rel: bool = param(True, "Link consecutive nodes with PREVIOUS/NEXT.", advanced=True)

    def unsuited_reason(self, document: Document) -> str | None:
        """Why this splitter cannot do its job on ``document`` (e.g. no headings to cut at), else None.

        The pages say it beside the result rather than let one node stand for a whole file.
        """
        return None

    def split(self, documents: Sequence[Document]) -> list[Node]:
        nodes: list[Node] = []
        with gc_paused():
            for document in documents:
                nodes.extend(self.split_document(document))
        return nodes

    def split_document(self, document: Document) -> list[Node]:
        return build_nodes(
            document,
            self.spans(document),
            include_metadata=self.include_metadata,
            include_prev_next_rel=self.include_prev_next_rel,
        )

    def spans(self, document: Document) -> list[Span]:
        raise NotImplementedError

    @property
    def size_limit(self) -> int | None:
        """The chunk size a node should not exceed (in :attr:`size_unit`), if the splitter has one."""
        return getattr(self, "chunk_size", None)

    @property
    def size_unit(self) -> str:
        return getattr(self, "tokenizer", "characters")

    @property
    def overlap_limit(self) -> int | None:
        """The most :attr:`size_unit` units two consecutive nodes may share, if the splitter bounds it."""
        return getattr(self, "chunk_overlap", None)


@dataclass(frozen=True)
class SizedSplitter(Splitter):
    """A splitter that packs text into chunks of at most ``chunk_size`` tokens."""

    chunk_size: int = param(1000, "Largest chunk, in the chosen tokenizer's units.", ge=1, le=1_000_000)
    chunk_overlap: int = param(200, "Units shared by consecutive chunks; below chunk_size.", ge=0, le=1_000_000)
    tokenizer: str = param(
        "characters",
        "What sizes count: characters, whitespace words, or the embedding model's tokens.",
        choices=TOKENIZER_NAMES,
    )

    def validate(self) -> None:
        from core.errors import ConfigError

        if self.chunk_overlap >= self.chunk_size:
            raise ConfigError(
                f"{self.name}: chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size ({self.chunk_size})"
            )

    def get_tokenizer(self) -> Tokenizer:
        return get_tokenizer(self.tokenizer)


def build_nodes(
    document: Document,
    spans: Sequence[Span | tuple[int, int]],
    *,
    include_metadata: bool = True,
    include_prev_next_rel: bool = True,
    id_prefix: str = "",
) -> list[Node]:
    """Turn spans into nodes: exact text, inherited metadata, pages, table headers, links."""
    text = document.text
    doc_id = document.id
    tables = _TableIndex(document.elements)
    paged = bool(document.pages)
    inherited = document.metadata if include_metadata else {}
    # The view settings are read once; each node gets its own key lists so that
    # hiding a key on one node (as a user may) never hides it on its siblings.
    view = document.view_settings()
    llm_keys, embed_keys = view["excluded_llm_metadata_keys"], view["excluded_embed_metadata_keys"]
    template, separator, text_template = view["metadata_template"], view["metadata_separator"], view["text_template"]
    id_stem = f"{doc_id}#{id_prefix}"
    ids = [f"{id_stem}{index}" for index in range(len(spans))]
    source, previous, following = NodeRelationship.SOURCE, NodeRelationship.PREVIOUS, NodeRelationship.NEXT
    # The same keys in the same order link_chain would leave: SOURCE, PREVIOUS, NEXT; each
    # dict made whole by a literal, in a comprehension (cheaper than growing it per node).
    if include_prev_next_rel and len(ids) > 1:
        links = [{source: doc_id, following: ids[1]}]
        links += [
            {source: doc_id, previous: before, following: after} for before, after in zip(ids, ids[2:], strict=False)
        ]
        links.append({source: doc_id, previous: ids[-2]})
    else:
        links = [{source: doc_id} for _ in ids]
    # Bound copy methods of plain dict/list: the cheapest fresh copy per node.
    copy_inherited, copy_llm_keys, copy_embed_keys = dict(inherited).copy, llm_keys.copy, embed_keys.copy
    nodes: list[Node] = []
    append = nodes.append
    # One pass, no keyword arguments: this loop is most of a character-sized split's node cost.
    for span, node_id, relationships in zip(spans, ids, links, strict=True):
        start, end = span[0], span[1]
        metadata: dict[str, Any] = copy_inherited()
        if paged:
            pages = document.pages_for_span(start, end)
            if pages:
                first, final = pages[0].label, pages[-1].label
                metadata["page_label"] = first if first == final else f"{first}-{final}"
        if tables.tables:
            header = tables.header_for(start, end)
            if header is not None:
                metadata["table_header"] = header
        if len(span) > 2 and span[2]:
            metadata.update(span[2])
        append(
            Node(
                text[start:end],
                node_id,
                metadata,
                copy_llm_keys(),
                copy_embed_keys(),
                template,
                separator,
                text_template,
                relationships,
                doc_id,
                start,
                end,
            )
        )
    return nodes


def link_chain(nodes: Sequence[Node]) -> None:
    """Set PREVIOUS/NEXT between consecutive nodes."""
    for before, after in zip(nodes, nodes[1:], strict=False):
        before.relationships[NodeRelationship.NEXT] = after.id
        after.relationships[NodeRelationship.PREVIOUS] = before.id


class _TableIndex:
    """Finds the table whose body a span lies in without holding its header row."""

    def __init__(self, elements: Sequence[Element]) -> None:
        self.tables = sorted(
            (e for e in elements if e.kind == "table" and e.attrs.get("header")), key=lambda e: e.start_char
        )
        self.starts = [t.start_char for t in self.tables]

    def header_for(self, start: int, end: int) -> str | None:
        if not self.tables:
            return None
        i = bisect_right(self.starts, start) - 1
        candidates = [self.tables[i]] if i >= 0 else []
        j = bisect_left(self.starts, end)
        candidates += self.tables[max(i + 1, 0) : j]
        for table in candidates:
            header_end = table.attrs.get("header_end", table.start_char)
            overlaps_body = start < table.end_char and end > header_end
            holds_header = start <= table.start_char and end >= header_end
            if overlaps_body and not holds_header:
                return str(table.attrs["header"])
        return None


def merge_pieces(
    pieces: Sequence[tuple[int, int]],
    sizes: Sequence[int],
    chunk_size: int,
    chunk_overlap: int,
    text: str,
) -> list[Span]:
    """Greedily pack consecutive pieces into chunks of at most ``chunk_size``.

    ``pieces`` are consecutive spans; ``sizes`` their sizes in tokens. A chunk's
    size is the sum of its pieces' sizes. A new chunk starts with the trailing
    pieces of the previous one whose total is at most ``chunk_overlap``. A piece
    larger than ``chunk_size`` becomes a chunk on its own (an indivisible unit).
    Chunks are trimmed of surrounding whitespace; whitespace-only chunks vanish.
    """
    spans: list[Span] = []
    append = spans.append
    n = len(pieces)
    # prefix[i] = sizes[0] + ... + sizes[i-1]; sizes are never negative, so the greedy
    # run from ``first`` ends at the last piece whose prefix stays within the budget.
    prefix = [0, *accumulate(sizes)]
    first = 0
    previous_end = -1
    # This loop runs once per chunk; trim_span is inlined and spans are made without
    # NamedTuple's Python-level __new__, which together were a third of its time.
    while first < n:
        last = bisect_right(prefix, prefix[first] + chunk_size, first + 1, n + 1) - 2
        if last < first:
            last = first
        start, end = pieces[first][0], pieces[last][1]
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end and end > previous_end:
            append(_new_span(Span, (start, end, None)))
            previous_end = end
        if last + 1 >= n:
            break
        # The next chunk starts with the longest run of trailing pieces ``j..last`` (j > first,
        # so it always moves forward) that holds at most chunk_overlap and still leaves room
        # for piece ``last + 1``: both bounds say prefix[j] is at least some value, so the
        # smallest such j is found by bisection (last + 1 when there is none).
        floor = max(prefix[last + 1] - chunk_overlap, prefix[last + 2] - chunk_size)
        first = bisect_left(prefix, floor, first + 1, last + 1)
    return spans


_new_span = tuple.__new__


class CutGuard:
    """Where a cut may not fall: strictly inside a protected span (a table row).

    A splitter that keeps rows whole asks :meth:`allows` about each cut it
    considers, or lets :meth:`pieces` drop the forbidden ones, so a row is an
    indivisible unit and a table larger than a chunk is split between rows.
    """

    def __init__(self, spans: Sequence[tuple[int, int]] = ()) -> None:
        merged: list[list[int]] = []
        for start, end in sorted((s, e) for s, e in spans if e - s > 1):
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self.spans = [(start, end) for start, end in merged]
        self._starts = [start for start, _ in self.spans]

    def __bool__(self) -> bool:
        return bool(self.spans)

    def allows(self, position: int) -> bool:
        """True unless ``position`` lies strictly inside a protected span."""
        i = bisect_left(self._starts, position) - 1
        return i < 0 or position >= self.spans[i][1]

    def pieces(self, start: int, end: int, cuts: Sequence[int]) -> list[tuple[int, int]]:
        """Consecutive spans covering ``[start, end)``, cut at the allowed ``cuts`` (sorted)."""
        out: list[tuple[int, int]] = []
        previous = start
        check = bool(self.spans)
        for cut in cuts:
            if previous < cut < end and (not check or self.allows(cut)):
                out.append((previous, cut))
                previous = cut
        if previous < end:
            out.append((previous, end))
        return out


def protected_cuts(document: Document) -> CutGuard:
    """The guard that keeps table rows whole: every ``table_row`` element and each table's header row."""
    spans = []
    for element in document.elements:
        if element.kind == "table_row":
            spans.append((element.start_char, element.end_char))
        elif element.kind == "table" and "header_end" in element.attrs:
            spans.append((element.start_char, int(element.attrs["header_end"])))
    return CutGuard(spans)


def trim_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Shrink ``[start, end)`` to exclude surrounding whitespace; None if nothing is left."""
    # A character at a time: the runs at a chunk's ends are short (a separator), and
    # stripping a copy of the chunk measured slower.
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


class TokenIndex:
    """Sizes of any spans of one text, from a single pass of the tokenizer over it.

    A span's size is the number of the text's tokens that overlap it. For
    pieces cut between words this is exactly the tokens of the piece's own
    text; where a cut falls inside a word, the word's tokens count for both
    pieces, so a size never undercounts what the piece's text would tokenize
    to. The text is tokenized in blocks cut just before whitespace (tokenizers
    do not join tokens across whitespace, and one very long string is slower
    to encode than the same text in blocks).

    An index never changes once built, so :meth:`shared` hands the same one to
    every split of a text (and to the metrics): a Chunks page rerun with a new
    chunk_size then skips the whole-document tokenizer pass.
    """

    BLOCK = 4096
    BATCH = 16
    # From this many pieces on, count_many bisects with numpy (below it, the Python loop is as fast).
    VECTOR_FROM = 8

    def __init__(self, tokenizer: Tokenizer, text: str) -> None:
        self.by_length = tokenizer.name == "characters"
        # Machine integers, not lists of ints: a quarter of the memory, the same bisection speed,
        # and numpy reads them without a copy (:meth:`columns`).
        self.starts = array("q")
        self.ends = array("q")
        self._columns: tuple[Any, Any] | None = None
        if self.by_length:
            return
        positions = [0]
        while positions[-1] < len(text):
            positions.append(_next_whitespace(text, positions[-1] + self.BLOCK))
        # A tokenizer that releases the GIL (the model's) gets the text in consecutive runs of
        # blocks, one run per thread: each thread encodes and collects its own run, so its
        # Python work overlaps the other's encoding (1 MB: 0.49 s -> 0.27 s wall on two cores).
        blocks = len(positions) - 1
        workers = min(parallel_workers(len(text)), blocks) if getattr(tokenizer, "parallel", False) else 1
        cuts = [blocks * n // max(workers, 1) for n in range(workers + 1)]
        runs = in_parallel(
            [partial(self._columns_of, tokenizer, text, positions[a : b + 1]) for a, b in pairwise(cuts)]
        )
        for run_starts, run_ends in runs:
            self.starts.extend(run_starts)
            self.ends.extend(run_ends)

    @classmethod
    def _columns_of(cls, tokenizer: Tokenizer, text: str, positions: list[int]) -> tuple[array, array]:
        """Token starts and ends of ``text[positions[0]:positions[-1]]``, tokenized block by block."""
        starts, ends = array("q"), array("q")
        # Blocks go to the tokenizer in batches: one call per batch, and only a batch's
        # encodings held at once (a whole megabyte's would add ~20 MB at the peak).
        for first in range(0, len(positions) - 1, cls.BATCH):
            batch = positions[first : first + cls.BATCH + 1]
            blocks = [text[a:b] for a, b in pairwise(batch)]
            for position, (block_starts, block_ends) in zip(batch, tokenizer.span_columns(blocks), strict=False):
                starts.extend(map(add, block_starts, repeat(position)))
                ends.extend(map(add, block_ends, repeat(position)))
        return starts, ends

    @classmethod
    def shared(cls, tokenizer: Tokenizer, text: str) -> TokenIndex:
        """The index of ``text`` under ``tokenizer``, built once and kept for the last few texts.

        Keyed by the tokenizer object and the text itself (equal strings, so
        never a stale index); bounded by :data:`TOKEN_INDEXES`. Two threads
        asking for a new text at once may both build it; one index is kept.
        With reuse turned off (:func:`reuse_token_indexes`) every call builds afresh.
        """
        if tokenizer.name == "characters" or not _REUSE_TOKEN_INDEXES[0]:
            return cls(tokenizer, text)
        key = (tokenizer, text)
        index = TOKEN_INDEXES.get(key)
        if index is None:
            index = TOKEN_INDEXES.put(key, cls(tokenizer, text), max(len(text), 1))
        return index

    def columns(self) -> tuple[Any, Any]:
        """Token starts and ends as read-only int64 numpy arrays sharing this index's memory."""
        if self._columns is None:
            import numpy as np

            starts, ends = np.frombuffer(self.starts, dtype=np.int64), np.frombuffer(self.ends, dtype=np.int64)
            starts.flags.writeable = ends.flags.writeable = False
            self._columns = (starts, ends)
        return self._columns

    def count(self, start: int, end: int) -> int:
        if self.by_length:
            return end - start
        # Tokens are in order: those ending by ``start`` are a prefix of those starting before ``end``.
        return max(bisect_left(self.starts, end) - bisect_right(self.ends, start), 0)

    def count_many(self, pieces: Sequence[tuple[int, int]]) -> list[int]:
        if self.by_length or len(pieces) < self.VECTOR_FROM:
            return [self.count(start, end) for start, end in pieces]
        # Many pieces: both bisections for all of them at once (14,389 sentences of 1 MB: 17.5 -> 3.4 ms).
        import numpy as np

        token_starts, token_ends = self.columns()
        bounds = np.fromiter((x for piece in pieces for x in piece[:2]), dtype=np.int64, count=2 * len(pieces))
        before_end = np.searchsorted(token_starts, bounds[1::2], "left")
        ended = np.searchsorted(token_ends, bounds[0::2], "right")
        return np.maximum(before_end - ended, 0).tolist()


# Token indexes of the last few texts split or measured: at most 8 texts and 8 million characters
# (an index holds 16 bytes per token, about 4 per character of English, besides the text it keeps alive).
TOKEN_INDEXES = Memo(8_000_000, max_entries=8)
_REUSE_TOKEN_INDEXES = [True]


def reuse_token_indexes(enabled: bool) -> None:
    """Turn reuse of token indexes across splits on or off (off also forgets those kept).

    Benchmarks that split the same text repeatedly turn it off, so each split
    pays for its own tokenizer pass as a split of a new document would.
    """
    _REUSE_TOKEN_INDEXES[0] = enabled
    TOKEN_INDEXES.clear()


def _next_whitespace(text: str, position: int) -> int:
    """The first block break (whitespace) at or after ``position`` (or the end of the text)."""
    if position >= len(text):
        return len(text)
    match = _BLOCK_BREAK.search(text, position)
    return match.start() if match else len(text)


def piece_sizes(tokenizer: Tokenizer, text: str, pieces: Sequence[tuple[int, int]]) -> list[int]:
    """Sizes of pieces; characters are counted by span length without slicing."""
    if tokenizer.name == "characters":
        return [end - start for start, end in pieces]
    return tokenizer.count_many([text[start:end] for start, end in pieces])


SizeFn = Callable[[str], int]
