"""Compatible native modes: one ``compat`` switch per splitter that makes it cut as a framework does.

``compat="none"`` (every splitter's default) is ChunkScope's own behaviour:
exact spans, ``text == document.text[start:end]``. ``compat="llamaindex"`` or
``"langchain"`` sets, together, every option that makes the splitter produce
that framework's chunks where the algorithm is the same (its segmenter, how it
counts a piece's tokens, which separators count against the size, how it joins
text). Each splitter's docstring says what its switch sets.

Every compatible mode has a mirror: the framework engine that makes the same
call, which each splitter names itself (its ``mirror()``, built with
:func:`mirror_engine`; Export writes that engine's call). A setting
that call cannot express is refused when the splitter is built, in one sentence
(:func:`refuse_unmirrored`), rather than offered as a mode that only resembles the framework.

Where a framework's chunk is not a slice of the source (it joined sentences with
spaces, or dropped the whitespace between two pieces), the node keeps the
framework's text, its span still covers the source it came from, and it is
marked as the engines mark such chunks: ``span_status = "rewritten"``
(:data:`core.spans.recovery.SPAN_STATUS_KEY`), hidden from both readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from core.errors import ConfigError
from core.params import param
from core.schema import Node
from core.spans.recovery import SPAN_STATUS_KEY, SpanStatus
from core.tokens.tokenizers import TIKTOKEN_TOKENIZERS

NONE = "none"
LLAMAINDEX = "llamaindex"
LANGCHAIN = "langchain"


# The tokenizers each framework's call can count with, as ChunkScope names them (the engines' own choices):
# LlamaIndex's ``tokenizer=`` callable, LangChain's ``length_function=``; the embedding model's tokens through
# its ``tokenize`` (core.engines.llamaindex.model_tokens). Every named tokenizer, today: a new one is refused
# here until an engine counts with it.
FRAMEWORK_TOKENIZERS = {
    LLAMAINDEX: ("characters", "words", "cl100k", "o200k", "model"),
    LANGCHAIN: ("characters", "words", "cl100k", "o200k", "model"),
}
_FRAMEWORK_NAMES = {LLAMAINDEX: "LlamaIndex", LANGCHAIN: "LangChain"}


def refuse_unmirrored(splitter: Any, *unmirrored: tuple[bool, str, str], counts_sizes: bool = True) -> None:
    """In a compatible mode, raise ConfigError for a setting the framework's call cannot express.

    That is a named tokenizer the framework cannot count with (when the mode
    ``counts_sizes``), or the first ``(condition, what the mode does, the setting)``
    whose condition holds. A size function given from Python (not a named
    tokenizer) is let through: it is no choice of the app or a config, and Export
    keeps the splitter's own translation for it.
    """
    compat = getattr(splitter, "compat", NONE)
    if compat == NONE:
        return
    framework = _FRAMEWORK_NAMES[compat]
    tokenizer = getattr(splitter, "tokenizer", None)
    counted = FRAMEWORK_TOKENIZERS[compat]
    if counts_sizes and isinstance(tokenizer, str) and tokenizer not in counted:
        units = f"{', '.join(counted[:-1])} or {counted[-1]}"
        unmirrored = ((True, f"counts sizes in {units} as {framework} can", f"tokenizer={tokenizer}"), *unmirrored)
    for condition, does, setting in unmirrored:
        if condition:
            raise ConfigError(f"{splitter.name}: compat={compat} {does}; {setting} has no {framework} equivalent")


def mirror_engine(splitter: Any, engine: str, **params: Any) -> Any:
    """The engine named ``engine`` with ``params`` and the splitter's links: what its compatible mode reproduces.

    None when the splitter cuts its own way (``compat="none"``) or counts with a size function given from
    Python (no engine can name it). A compat choice that is offered always has one: the rest are refused at
    validation (:func:`refuse_unmirrored`), and a test walks every choice.
    """
    if getattr(splitter, "compat", NONE) == NONE or callable(getattr(splitter, "tokenizer", None)):
        return None
    from core.splitters.registry import SPLITTERS

    links = {"include_metadata": splitter.include_metadata, "include_prev_next_rel": splitter.include_prev_next_rel}
    return SPLITTERS.create(engine, **params, **links)


def llamaindex_tokenizer_name(tokenizer: str) -> str:
    """LlamaIndex's engines' name for a ChunkScope tokenizer (``cl100k`` -> ``cl100k_base``)."""
    return TIKTOKEN_TOKENIZERS.get(tokenizer, tokenizer)


def compat_param(*frameworks: str, sets: str) -> Any:
    """The ``compat`` parameter: ``none`` (ChunkScope's exact spans) or a framework whose chunks to reproduce."""
    return param(
        NONE,
        f"Cut as a framework does where the algorithm is the same ({sets}); "
        "'none' is ChunkScope's own exact-span behaviour.",
        choices=(NONE, *frameworks),
    )


class CompatChunk(NamedTuple):
    """A chunk as a compatible mode makes it: its span in the source, and its text when that is not the slice."""

    start: int
    end: int
    # None: the text is ``document.text[start:end]``.
    text: str | None = None
    metadata: dict[str, Any] | None = None


def joined_chunk(source: str, pieces: Sequence[tuple[int, int]]) -> CompatChunk | None:
    """The chunk a framework makes by joining ``pieces`` (spans of ``source``) and stripping the result.

    Its span runs from the first non-whitespace character of the pieces to the
    last; it carries a text of its own only where the pieces leave a gap (the
    joined text then differs from the slice). None when nothing but whitespace is left.
    """
    joined = "".join(source[a:b] for a, b in pieces).strip()
    if not joined:
        return None
    kept = [(a, b) for a, b in pieces if source[a:b].strip()]
    head, tail = source[kept[0][0] : kept[0][1]], source[kept[-1][0] : kept[-1][1]]
    start = kept[0][0] + len(head) - len(head.lstrip())
    end = kept[-1][0] + len(tail.rstrip())
    return CompatChunk(start, end, None if source[start:end] == joined else joined)


def compat_nodes(splitter: Any, document: Any, chunks: Sequence[CompatChunk]) -> list[Node]:
    """Nodes of ``chunks``: built from their spans as every splitter's are, then :func:`mark_rewritten`."""
    from core.splitters.nodes import build_nodes

    nodes = build_nodes(
        document,
        [(c.start, c.end, c.metadata) for c in chunks],
        include_metadata=splitter.include_metadata,
        include_prev_next_rel=splitter.include_prev_next_rel,
    )
    mark_rewritten(nodes, [c.text for c in chunks])
    return nodes


def compat_spans(chunks: Sequence[CompatChunk]) -> list[Any]:
    """The spans of ``chunks``; a chunk with a text of its own says so in its metadata (``span_status``)."""
    from core.splitters.nodes import Span

    return [
        Span(c.start, c.end, c.metadata if c.text is None else {**(c.metadata or {}), SPAN_STATUS_KEY: "rewritten"})
        for c in chunks
    ]


def mark_rewritten(nodes: Sequence[Node], texts: Sequence[str | None]) -> None:
    """Give each node whose chunk has a text of its own that text, marked ``rewritten``; hide any span status."""
    for node, text in zip(nodes, texts, strict=True):
        if text is not None and text != node.text:
            node.text = text
            node.metadata[SPAN_STATUS_KEY] = SpanStatus.REWRITTEN.value
        if SPAN_STATUS_KEY in node.metadata:
            for excluded in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
                if SPAN_STATUS_KEY not in excluded:
                    excluded.append(SPAN_STATUS_KEY)


def empty_text_chunks() -> list[CompatChunk]:
    """LlamaIndex's chunks of an empty text: one empty chunk (its sentence and token splitters return ``[""]``).

    Marked ``exact``, as the engines mark theirs: a node without text says why it is there.
    """
    return [CompatChunk(0, 0, None, {SPAN_STATUS_KEY: SpanStatus.EXACT.value})]


def langchain_merge(
    sizes: list[int], chunk_size: int, chunk_overlap: int, separator_size: int
) -> list[tuple[int, int]]:
    """LangChain's ``TextSplitter._merge_splits``: the ``(first, last)`` pieces of each chunk, packed greedily.

    A chunk's size is its pieces' sizes plus ``separator_size`` between each two. When
    the next piece does not fit, the chunk closes, and pieces leave its front while it
    holds more than ``chunk_overlap`` or still leaves no room for the next piece.
    """
    groups: list[tuple[int, int]] = []
    first, total = 0, 0
    for index, size in enumerate(sizes):
        joint = separator_size if index > first else 0
        if total + size + joint > chunk_size and index > first:
            groups.append((first, index - 1))
            while total > chunk_overlap or (
                total + size + (separator_size if index > first else 0) > chunk_size and total > 0
            ):
                total -= sizes[first] + (separator_size if index - first > 1 else 0)
                first += 1
        total += size + (separator_size if index > first else 0)
    if first < len(sizes):
        groups.append((first, len(sizes) - 1))
    return groups
