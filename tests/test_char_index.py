"""A document's character index answers, for any span, what a pass over the span's text in Python gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.tokens.char_index import WORD_BREAKS, CharIndex

# Words, ASCII and Unicode whitespace (NBSP, ideographic space, line separator), punctuation, a lone surrogate.
_CHARS = st.sampled_from(["a", "bc", "é", "中", " ", "  ", "\n", "\t", "\u00a0", "\u3000", "\u2028", ".", ",", "-", "\ud800"])


def _spans(text: str, cuts: list[int]) -> tuple[np.ndarray, np.ndarray]:
    points = sorted(c % (len(text) + 1) for c in cuts)
    pairs = [(a, b) for a, b in zip(points, points[1:], strict=False)] + [(p, p) for p in points[:2]]
    return np.array([a for a, _ in pairs], dtype=np.int64), np.array([b for _, b in pairs], dtype=np.int64)


def _trimmed(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _at_break(text: str, position: int) -> bool:
    return position in (0, len(text)) or text[position - 1] in WORD_BREAKS or text[position] in WORD_BREAKS


@settings(max_examples=200, deadline=None)
@given(st.lists(_CHARS, max_size=40).map("".join), st.lists(st.integers(0, 200), min_size=2, max_size=10))
def test_words_trimmed_ends_and_breaks_equal_the_python_pass(text: str, cuts: list[int]) -> None:
    index = CharIndex(text)
    starts, ends = _spans(text, cuts)
    assert index.words(starts, ends).tolist() == [len(text[a:b].split()) for a, b in zip(starts, ends, strict=True)]
    assert index.trimmed_ends(starts, ends).tolist() == [_trimmed(text, a, b) for a, b in zip(starts, ends, strict=True)]
    positions = np.arange(len(text) + 1)
    assert index.at_break(positions).tolist() == [_at_break(text, int(p)) for p in positions]
    assert index.non_space_prefix[-1] == sum(not c.isspace() for c in text)


def test_the_literal_cases():
    index = CharIndex(" one two  three\n")
    starts, ends = np.array([0, 1, 5, 3, 16]), np.array([16, 4, 16, 6, 16])
    assert index.words(starts, ends).tolist() == [3, 1, 2, 2, 0]  # " one two  three\n", "one", "two  three\n", "e t", ""
    assert index.trimmed_ends(starts, ends).tolist() == [15, 4, 15, 6, 16]


@given(st.text(max_size=300))
def test_the_lookup_tables_are_the_isin_of_the_code_lists(text: str) -> None:
    """CharIndex marks whitespace and break characters by table lookup: what np.isin on the code lists gives."""
    import numpy as np

    from core.tokens import char_index

    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    codes = np.concatenate([codes, np.array([0x3000, 0x3001, 0x10FFFF, 0x85, 0x2028], dtype=np.uint32)])
    space = char_index._in_table(codes, char_index._IS_SPACE)
    breaks = char_index._in_table(codes, char_index._IS_BREAK)
    assert space.tolist() == np.isin(codes, char_index.WHITESPACE_CODES).tolist()
    assert breaks.tolist() == np.isin(codes, char_index._BREAK_CODES).tolist()


@given(st.text(max_size=300) | st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_each_characters_kind_is_its_whitespace_and_break_bits(text: str) -> None:
    """One table for both marks (bit 1 whitespace, bit 2 a break), read a byte a character for ASCII text."""
    import numpy as np

    from core.tokens import char_index

    kind = char_index.kinds(text)
    assert kind.dtype.name == "uint8" and len(kind) == len(text)
    assert ((kind & 1) == 1).tolist() == [c.isspace() for c in text]
    assert ((kind & 2) == 2).tolist() == [c in char_index.WORD_BREAKS for c in text]
    assert not (kind & ~np.uint8(3)).any()


@given(st.text(max_size=300))
def test_the_non_space_count_is_what_str_split_leaves(text: str) -> None:
    # A batch's report weighs each file's coverage by this count (it was len("".join(text.split()))).
    assert CharIndex(text).non_space_prefix[-1] == len("".join(text.split()))
