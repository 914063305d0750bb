"""The split's bounds, checked before splitting: how many nodes a splitter would make, how much it would embed.

The bounds themselves are declared once in :class:`core.limits.Limits` (``max_nodes``, ``max_embed_chars``);
this module reads the splitter's sizes to estimate what a split would cost, so ``chunk_size=1`` on a long book
is refused in milliseconds rather than building millions of nodes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from core.errors import TooLargeError
from core.limits import DEFAULT_LIMITS, Limits
from core.schema import Document
from core.splitters.base import Splitter


def estimated_nodes(document: Document, splitter: Splitter) -> int | None:
    """About how many nodes ``splitter`` makes from ``document``; None when its size does not bound the count.

    A sized splitter advances by at most ``chunk_size - chunk_overlap`` units per
    node, so the text's units over that step is the count to expect; a
    hierarchy adds up its levels. Units are characters, or whitespace-separated
    words for the word and model tokenizers (a model token is never longer
    than a word, so this undercounts rather than refuses a fair request).
    """
    sizes = splitter.level_sizes
    if not sizes:
        return None
    units = len(document.text) if splitter.size_unit == "characters" else len(document.text.split())
    return _nodes_for(units, sizes, splitter)


def _nodes_for(units: int, sizes: Sequence[int], splitter: Splitter) -> int:
    overlap = splitter.overlap_limit or 0
    return sum(math.ceil(units / max(size - overlap, 1)) for size in sizes)


def _within_bound(documents: Sequence[Document], splitter: Splitter, limits: Limits) -> bool:
    """True when even counting every character as a unit keeps the split under the node limit.

    A word holds at least one character, so this bounds the word-based estimate too and
    spares splitting the whole text into words on every split of a large document.
    """
    sizes = splitter.level_sizes
    return not sizes or sum(_nodes_for(len(d.text), sizes, splitter) for d in documents) <= limits.max_nodes


def check_split_size(documents: Sequence[Document], splitter: Splitter, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse, before any work, a split that would make more nodes (or embed more text) than the limits allow."""
    if splitter.embeds_text:
        chars = sum(len(document.text) for document in documents)
        if chars > limits.max_embed_chars:
            name = (
                str(documents[0].metadata.get("file_name") or documents[0].id)
                if len(documents) == 1
                else (f"{len(documents)} documents")
            )
            raise TooLargeError(
                name,
                f"{splitter.name} would embed {chars:,} characters sentence by sentence, more than the limit of "
                f"{limits.max_embed_chars:,}; pick a smaller document or a splitter that does not embed",
            )
    if _within_bound(documents, splitter, limits):
        return
    total = 0
    for document in documents:
        estimate = estimated_nodes(document, splitter)
        if estimate is None:
            continue
        total += estimate
        if total > limits.max_nodes:
            name = str(document.metadata.get("file_name") or document.id)
            overlap = splitter.overlap_limit or 0
            raise TooLargeError(
                name,
                f"{splitter.name} with chunk_size {splitter.size_limit or min(splitter.level_sizes):,} and chunk_overlap {overlap:,} "
                f"would make about {total:,} nodes, more than the limit of {limits.max_nodes:,}; "
                f"raise chunk_size or lower chunk_overlap",
            )


def check_node_count(count: int, document: Document, splitter: Splitter, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse a split that has made ``count`` spans or nodes so far (``document`` the last one split), past the limit.

    The bound for every splitter whose sizes cannot estimate the count before the work (one node per heading,
    per sentence, a framework's own rules): checked on the spans before any node is built, so 150,000 headings
    are refused instead of becoming 700 MB of nodes.
    """
    if count > limits.max_nodes:
        raise TooLargeError(
            str(document.metadata.get("file_name") or document.id),
            f"{splitter.name} makes {count:,} nodes, more than the limit of {limits.max_nodes:,}; "
            "pick settings that make fewer, larger nodes",
        )


__all__ = ["check_node_count", "check_split_size", "estimated_nodes"]
