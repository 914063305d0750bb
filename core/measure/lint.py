"""What looks wrong: the lint flags of one node, and the warnings about a splitter's settings.

The numbers come from :mod:`core.measure.metrics`; this module holds only the rules that
turn them into words, so the node table, the snapshot and the Chunks page's
warnings all say the same thing.

Node flags:

- *mid-sentence*: the node ends (ignoring trailing whitespace) where no sentence and no table row ends;
- *over-window*: its EMBED view has more model tokens than the embedding model reads;
- *over-limit*: it is larger than the splitter's own size limit;
- *tiny*: it has fewer than :data:`TINY_WORDS` words (a lone heading, a stray marker);
- *duplicate*: an earlier node of the run has the same text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.splitters.base import Splitter

TINY_WORDS = 4  # a node with fewer words is flagged "tiny" (a lone heading, a stray marker)
# Past half of chunk_size, the overlap puts every stretch of text in more than two chunks.
MAX_OVERLAP_SHARE = 0.5
# A chunk more than this many times its limit was not cut where it should be (e.g. a header splitter on a
# text without headings): worth a warning, where a chunk a little over (an indivisible table row) is not.
FAR_OVER = 2


def node_flags(
    *,
    mid_sentence: bool,
    embed_tokens: int,
    window_tokens: int,
    tokens: int,
    size_limit: int | None,
    words: int,
    duplicate: bool,
) -> list[str]:
    """The flags of one node, in a fixed order: mid-sentence, over-window, over-limit, tiny, duplicate."""
    flags = []
    if mid_sentence:
        flags.append("mid-sentence")
    if embed_tokens > window_tokens:
        flags.append("over-window")
    if size_limit is not None and tokens > size_limit:
        flags.append("over-limit")
    if words < TINY_WORDS:
        flags.append("tiny")
    if duplicate:
        flags.append("duplicate")
    return flags


def splitter_warnings(splitter: Splitter) -> list[str]:
    """Lint for a splitter's settings rather than for any one node: one sentence per problem.

    An overlap above ``MAX_OVERLAP_SHARE`` of the chunk size: consecutive chunks
    start ``chunk_size - chunk_overlap`` units apart, so each stretch of text lies
    in about ``chunk_size / (chunk_size - chunk_overlap)`` of them.
    """
    size, overlap = splitter.size_limit, splitter.overlap_limit
    if not size or not overlap or overlap / size <= MAX_OVERLAP_SHARE:
        return []
    return [
        f"chunk_overlap ({overlap:,}) is {overlap / size:.0%} of chunk_size ({size:,}): each stretch of text lands "
        f"in about {size / (size - overlap):.1f} chunks, so it is embedded and retrieved that many times"
    ]


def oversized_chunk_warning(largest: int, limit: int, unit: str, limit_name: str) -> str | None:
    """A sentence when the largest chunk is more than :data:`FAR_OVER` times ``limit``, else None.

    ``unit`` names what both count ("model tokens"), ``limit_name`` what the limit is ("chunk_size").
    """
    if limit <= 0 or largest <= FAR_OVER * limit:
        return None
    return (
        f"its largest chunk is {largest:,} {unit}, {largest / limit:.0f} times {limit_name} ({limit:,}): "
        "the splitter found little to cut at in this text"
    )
