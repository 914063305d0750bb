"""The character splitter's search path must give exactly the rule's spans.

With characters as the unit, ``core.splitters.fast.separator_search`` searches
for the few separator occurrences near each chunk's ends instead of building the
pieces, their sizes and running sums (``pack_pieces``, the rule); the spans
(trimming, dropped whitespace-only chunks, overlap, room for the next piece) must
not change, including for separators that overlap themselves, where a search from
inside a chunk can land on an occurrence the scan from the start skips.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import texts

from core.schema import Document
from core.splitters.base import Span
from core.splitters.character import CharacterSplitter, chunk_bounds, pack_pieces
from core.splitters.fast import separator_search
from core.splitters.fast.separator_search import DenseRun, bounds_by_search
from core.tokens.tokenizers import get_tokenizer

CHARACTERS = get_tokenizer("characters")

# Separators that overlap themselves ("\n\n", "aa", "aba") are where a scan can
# misalign, so they are drawn often; whitespace separators meet trimming.
SEPARATORS = st.one_of(
    st.sampled_from(["\n\n", "\n", " ", "  ", "aa", "aba", ". ", "\n\n\n", "--", "a"]),
    st.text(alphabet="ab \n.", min_size=1, max_size=4),
)


@st.composite
def separated_texts(draw: st.DrawFn, separator: str) -> str:
    """Texts dense in the separator: at the start and end, repeated, around whitespace."""
    atoms = st.one_of(
        st.just(separator),
        st.just(separator * 2),
        st.sampled_from([separator[:1], separator[1:], separator[:-1]]),  # runs like "\n\n\n" and "aaa"
        st.text(alphabet="ab .\n\t", max_size=8),
        st.sampled_from([" ", "\n", "\t \n", "x" * 30, "word ", "\u00a0", "😀"]),
    )
    return "".join(draw(st.lists(atoms, max_size=40)))


@st.composite
def sizes(draw: st.DrawFn, largest: int = 60) -> tuple[int, int]:
    chunk_size = draw(st.integers(min_value=1, max_value=largest))
    return chunk_size, draw(st.integers(min_value=0, max_value=chunk_size - 1))


def general(text: str, separator: str, chunk_size: int, chunk_overlap: int) -> list[tuple[int, int]]:
    return [tuple(span) for span in pack_pieces(text, separator, CHARACTERS, chunk_size, chunk_overlap)]


def fast(text: str, separator: str, chunk_size: int, chunk_overlap: int) -> list[tuple[int, int]]:
    document = Document(text=text)
    splitter = CharacterSplitter(separator=separator, chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    return [tuple(span) for span in splitter.spans(document)]


@pytest.mark.slow
@settings(max_examples=400)
@given(data=st.data(), separator=SEPARATORS, size=sizes())
def test_fast_path_spans_equal_the_general_path(data: st.DataObject, separator: str, size: tuple[int, int]) -> None:
    text = data.draw(st.one_of(separated_texts(separator), texts()))
    assert fast(text, separator, *size) == general(text, separator, *size)


@pytest.mark.slow
@settings(max_examples=500)
@given(separator=st.sampled_from(["aa", "aba", "aaa", "abab", "\n\n"]), data=st.data(), size=sizes(largest=12))
def test_fast_path_equals_the_general_path_where_occurrences_overlap(
    separator: str, data: st.DataObject, size: tuple[int, int]
) -> None:
    """Texts made of the separator's own characters: runs where occurrences overlap one another."""
    runs = st.builds(lambda head, count: head * count, st.sampled_from(sorted(set(separator))), st.integers(2, 7))
    atoms = st.one_of(runs, st.sampled_from([separator, "x", separator[0], separator[-1]]))
    text = "".join(data.draw(st.lists(atoms, max_size=12)))
    assert fast(text, separator, *size) == general(text, separator, *size)


@given(text=texts(), size=sizes())
def test_fast_path_equals_the_general_path_on_prose_with_blank_lines(text: str, size: tuple[int, int]) -> None:
    assert fast(text, "\n\n", *size) == general(text, "\n\n", *size)


@pytest.mark.parametrize(
    ("text", "separator", "chunk_size", "chunk_overlap", "expected"),
    [
        # Pieces "aa\n\n", "bb\n\n", "cc": the second chunk takes two pieces, trimmed.
        ("aa\n\nbb\n\ncc", "\n\n", 6, 0, ["aa", "bb\n\ncc"]),
        # "two\n" (4 characters) is the overlap, and "two\nthree\n" still fits in 10.
        ("one\ntwo\nthree\nfour", "\n", 10, 4, ["one\ntwo", "two\nthree", "four"]),
        # With 9, "two\n" plus "three\n" would not fit, so the next chunk starts fresh.
        ("one\ntwo\nthree\nfour", "\n", 9, 4, ["one\ntwo", "three", "four"]),
        # A whitespace-only chunk vanishes; a piece over chunk_size is a chunk on its own.
        ("  \n\nabcdefgh\n\nxy", "\n\n", 5, 0, ["abcdefgh", "xy"]),
        # A text shorter than chunk_size is one chunk; a separator at either end is trimmed away.
        ("\n\nhello\n\n", "\n\n", 100, 10, ["hello"]),
        # A piece longer than chunk_size - chunk_overlap gets no overlap before it.
        ("a b c dddddddd", " ", 6, 4, ["a b c", "dddddddd"]),
        # "aa" overlaps itself: the scan from the start cuts "aaaa" as "aa" + "aa", not at 3.
        ("aaaa", "aa", 3, 0, ["aa", "aa"]),
        ("aaaaa", "aa", 4, 1, ["aaaa", "a"]),
    ],
)
def test_character_splitter_examples(
    text: str, separator: str, chunk_size: int, chunk_overlap: int, expected: list[str]
) -> None:
    splitter = CharacterSplitter(separator=separator, chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    nodes = splitter.split([Document(text=text)])
    assert [node.text for node in nodes] == expected
    assert [node.text for node in nodes] == [
        text[span[0] : span[1]] for span in general(text, separator, chunk_size, chunk_overlap)
    ]


def test_a_long_run_of_a_self_overlapping_separator_is_scanned_where_it_is() -> None:
    """One run too long to walk is scanned in its chunk's region; the rest of the text keeps the search path."""
    text = "intro\n\n" + "\n" * 300 + "body text\n\n\nend " + "more words\n\n" * 400
    bounds = bounds_by_search(text, "\n\n", 40, 10)  # no fallback to the rule
    assert [text[s:e] for s, e in bounds][:2] == ["intro", "body text\n\n\nend more words"]
    assert bounds == [span[:2] for span in general(text, "\n\n", 40, 10)]


def test_a_text_made_mostly_of_such_runs_goes_to_the_general_path() -> None:
    """Past a scan budget of the text's length, the whole text takes the rule's single scan."""
    text = ("\n" * 300 + "word ") * 40
    with pytest.raises(DenseRun):
        bounds_by_search(text, "\n\n", 1000, 999)
    assert chunk_bounds(text, "\n\n", 1000, 999) == [span[:2] for span in general(text, "\n\n", 1000, 999)]


@settings(max_examples=300)
@given(st.sampled_from(["aa", "aba", "aaa", "abab", "\n\n"]), st.data(), sizes(largest=12))
def test_local_scans_equal_the_general_path(separator: str, data: st.DataObject, size: tuple[int, int]) -> None:
    """With no walking allowed and no scan budget, every overlapping occurrence is resolved by a local scan."""
    runs = st.builds(lambda head, count: head * count, st.sampled_from(sorted(set(separator))), st.integers(2, 9))
    atoms = st.one_of(runs, st.sampled_from([separator, "x", " ", separator[0], separator[-1]]))
    text = "".join(data.draw(st.lists(atoms, max_size=14)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(separator_search, "_WALK_LIMIT", 0)
        patch.setattr(separator_search, "_SCAN_BUDGET", 10_000)
        bounds = bounds_by_search(text, separator, *size)
    assert bounds == [span[:2] for span in general(text, separator, *size)]


def test_a_subclass_that_overrides_spans_is_split_through_them() -> None:
    class FirstWord(CharacterSplitter):
        def spans(self, document: Document) -> list[Span]:
            return [Span(0, document.text.index(" "))]

    (node,) = FirstWord().split([Document(text="hello world\n\nagain")])
    assert node.text == "hello"


@pytest.mark.parametrize(("separator", "tokenizer"), [("\n\n", "words"), ("", "characters")])
def test_other_units_and_the_empty_separator_take_the_general_path(separator: str, tokenizer: str) -> None:
    text = "one two three\n\nfour five six seven\n\neight"
    splitter = CharacterSplitter(separator=separator, chunk_size=4, chunk_overlap=1, tokenizer=tokenizer)
    expected = pack_pieces(text, separator, get_tokenizer(tokenizer), 4, 1)
    assert splitter.spans(Document(text=text)) == expected
    if tokenizer == "words":  # counted in words, "four five six seven" is one chunk of four
        assert text[expected[1].start : expected[1].end] == "four five six seven"
