"""Sentence segmentation with exact character offsets.

:func:`sentence_spans` is the one place ChunkScope finds sentences; the
sentence, sentence-window and semantic splitters and the sentence-level
postprocessors all use it, so they agree on what a sentence is.

Blingfire segments without downloading anything. Its Python wrapper maps the
library's UTF-8 byte offsets back to ``str`` indices (code points), which we
checked with emoji, ZWJ sequences, combining marks, CJK and right-to-left text.
The wrapper fails on lone surrogates (it cannot encode them) and on some
inputs its own offset bookkeeping rejects; it also treats NUL as the end of the
string. For those texts, and whenever its offsets are not increasing and inside
the text, a small regex segmenter takes over.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.runtime.memo import TextTables

if TYPE_CHECKING:
    import numpy as np

# A blank line always ends a sentence: headings, list blocks and paragraphs
# without closing punctuation would otherwise run into the next sentence.
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
# Fallback: a sentence ends after terminal punctuation (plus closing quotes or
# brackets) that is followed by whitespace, or after a CJK full stop.
_REGEX_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)|[。！？]+[」』”’)）]*")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentences as ``(start, end)`` spans: in order, disjoint, tight (no surrounding whitespace).

    Every non-whitespace character of ``text`` lies in exactly one span: the
    text between two sentences the segmenter reports belongs to the earlier one.
    """
    starts = _blingfire_starts(text)
    if starts is None:
        starts = _regex_starts(text)
    starts = _with_blank_line_starts(text, starts)
    spans: list[tuple[int, int]] = []
    bounds = starts + [len(text)]
    for start, end in zip(bounds, bounds[1:], strict=False):
        tight = trim_span(text, start, end)
        if tight is not None:
            spans.append(tight)
    return spans


def sentence_ends(text: str) -> np.ndarray:
    """Where the sentences of :func:`sentence_spans` end, in order (int64): the same cuts, trimmed in bulk.

    A piece between two sentence starts with any non-whitespace character is a sentence, ending where its
    trailing whitespace begins (the text's :class:`~core.tokens.char_index.CharIndex`, kept for the
    metrics that read it too); equal to the spans' ends (tests/test_fast_paths.py).
    """
    starts = _blingfire_starts(text)
    if starts is None:
        starts = _regex_starts(text)
    starts = _with_blank_line_starts(text, starts)
    import numpy as np

    from core.tokens.char_index import CharIndex

    chars = CharIndex.of(text)
    bounds = np.array([*starts, len(text)], dtype=np.int64)
    first, after = bounds[:-1], bounds[1:]
    sentence = chars.non_space_prefix[after] > chars.non_space_prefix[first]
    return chars.trimmed_ends(first[sentence], after[sentence])


def sentence_spans_within(text: str, start: int, end: int) -> tuple[tuple[int, int], ...]:
    """:func:`sentence_spans` of ``text[start:end]``, as offsets into ``text``; kept per text.

    The sentence splitter segments the same over-budget paragraphs at every
    chunk_size, so a Chunks page rerun with a new chunk_size finds them here.
    Keyed by the text itself and the range (never stale); at most
    :data:`SENTENCE_SPANS`' few texts; what a bounded child segments is kept by its parent
    (:func:`core.documents.bounded.split_bounded`). With reuse off (:func:`reuse_sentence_spans`)
    every call segments afresh.
    """
    if not _REUSE_SENTENCE_SPANS[0]:
        return tuple((start + a, start + b) for a, b in sentence_spans(text[start:end]))
    ranges = SENTENCE_SPANS.table(text)
    spans = ranges.get((start, end))
    if spans is None:
        spans = tuple((start + a, start + b) for a, b in sentence_spans(text[start:end]))
        ranges[(start, end)] = spans
    return spans


# Sentences of ranges of the last few texts split: at most 8 texts and 8 million characters (a
# range's spans hold a few bytes per sentence, far less than the text each entry keeps alive).
# A bounded child's sentences come back to its parent (core.runtime.memo.TextTables).
SENTENCE_SPANS = TextTables(8_000_000, max_entries=8)
_REUSE_SENTENCE_SPANS = [True]


def reuse_enabled() -> bool:
    """Whether sentence cuts (and the sentence splitter's splits built on them) are kept across splits."""
    return _REUSE_SENTENCE_SPANS[0]


def reuse_sentence_spans(enabled: bool) -> None:
    """Turn reuse of :func:`sentence_spans_within` results on or off (off also forgets those kept).

    Benchmarks that split the same text repeatedly turn it off, so each split
    segments its text as a split of a new document would.
    """
    _REUSE_SENTENCE_SPANS[0] = enabled
    SENTENCE_SPANS.clear()


def _blingfire_starts(text: str) -> list[int] | None:
    """Sentence starts from blingfire, or None when it cannot be trusted on this text."""
    if not text.strip():
        return [0] if text else []
    try:
        import blingfire
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    # NUL would end blingfire's C string early; a space has the same length.
    safe = text.replace("\x00", " ")
    starts = _fast_blingfire_starts(blingfire, safe)
    if starts is None:
        try:
            _, offsets = blingfire.text_to_sentences_and_offsets(safe)
        except Exception:  # the wrapper asserts or fails to encode on some inputs
            return None
        starts = [start for start, _ in offsets]
    if (
        not starts
        or any(not 0 <= a < b < len(text) for a, b in zip(starts, starts[1:], strict=False))
        or starts[0] >= len(text)
    ):
        return None
    # The first piece also takes any text before blingfire's first sentence.
    return [0] + starts[1:]


def _fast_blingfire_starts(blingfire: object, text: str) -> list[int] | None:
    """Blingfire's sentence starts, with its UTF-8 byte offsets mapped to ``str`` indices in bulk.

    The wrapper maps offsets byte by byte in Python, which dominates on long
    texts; this calls the same library function and maps them with numpy (1 MB of
    corpus.txt: 68 ms against the wrapper's 197 ms, CPU). None when the library is
    not laid out as expected (the caller uses the wrapper). Must give the wrapper's
    starts (tests/test_fast_paths.py).
    """
    import ctypes

    import numpy as np

    function = getattr(getattr(blingfire, "blingfire", None), "TextToSentencesWithOffsets", None)
    if function is None:
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return None
    capacity = len(data) * 2
    out = ctypes.create_string_buffer(capacity)
    starts_buffer = (ctypes.c_int32 * capacity)()
    ends_buffer = (ctypes.c_int32 * capacity)()
    written = function(
        ctypes.c_char_p(data),
        ctypes.c_int(len(data)),
        ctypes.byref(out),
        ctypes.byref(starts_buffer),
        ctypes.byref(ends_buffer),
        ctypes.c_int(capacity),
    )
    if written <= 0 or written > capacity:
        return None
    count = out.raw[:written].rstrip(b"\x00").count(b"\n") + 1
    byte_starts = np.frombuffer(starts_buffer, dtype=np.int32, count=count)
    if byte_starts.size == 0 or byte_starts.min() < 0 or byte_starts.max() >= len(data):
        return None
    if len(data) == len(text):  # ASCII: a byte is a character
        return byte_starts.tolist()
    # The str index of every byte: how many characters begin at or before it, minus one.
    raw = np.frombuffer(data, dtype=np.uint8)
    char_of_byte = np.cumsum((raw & 0xC0) != 0x80) - 1
    return char_of_byte[byte_starts].tolist()


def _regex_starts(text: str) -> list[int]:
    starts = [0]
    for match in _REGEX_END.finditer(text):
        if match.end() < len(text):
            starts.append(match.end())
    return starts


def _with_blank_line_starts(text: str, starts: list[int]) -> list[int]:
    extra = [match.end() for match in _BLANK_LINE.finditer(text)]
    if not extra:
        return starts
    return sorted(set(starts).union(extra))


def trim_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Shrink ``[start, end)`` to exclude surrounding whitespace; None if nothing is left."""
    # A character at a time: the runs at a chunk's ends are short (a separator), and
    # stripping a copy of the chunk measured slower.
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def punkt_sentence_starts(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """Where sentences of ``text[start:end]`` start, as an untrained NLTK Punkt tokenizer finds them (offsets into ``text``).

    This is LlamaIndex's segmenter (``split_by_sentence_tokenizer``: an untrained
    ``PunktSentenceTokenizer()``, which needs no downloaded data); ChunkScope's own
    sentences come from blingfire (:func:`sentence_spans`). LlamaIndex's sentence
    runs from one start to the next, so the text before the first start (leading
    whitespace) belongs to no sentence.
    """
    end = len(text) if end is None else end
    return [start + a for a, _ in _punkt().span_tokenize(text[start:end])]


def _punkt() -> object:
    if not _PUNKT:
        from nltk.tokenize import PunktSentenceTokenizer

        _PUNKT.append(PunktSentenceTokenizer())
    return _PUNKT[0]


_PUNKT: list[object] = []
