"""Span recovery: a framework's chunk texts in, source spans out, each exact, rewritten or unplaced.

Literal examples read as the spec; the properties check it on generated texts
full of repeats: chunks that are slices come back as exactly those slices (never
the first occurrence of a repeated passage), and whitespace-collapsed chunks come
back rewritten with spans over the characters they came from.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from core.spans.recovery import RecoveredSpan, SpanRecovery, SpanStatus, recover_spans
from core.spans.rewrites import span_counts

EXACT, REWRITTEN, UNPLACED = SpanStatus.EXACT, SpanStatus.REWRITTEN, SpanStatus.UNPLACED


def spans_of(source: str, chunks: list[str], start: int = 0, end: int | None = None) -> list[tuple[int, int, str]]:
    return [(s.start, s.end, s.status.value) for s in recover_spans(source, chunks, start, end)]


# -- the spec, by example ------------------------------------------------------------------


def test_a_repeated_paragraph_is_matched_to_the_copy_after_the_previous_chunk() -> None:
    text = "Alpha comes first.\n\nBeta is between.\n\nAlpha comes first."
    chunks = ["Alpha comes first.", "Beta is between.", "Alpha comes first."]
    assert spans_of(text, chunks) == [(0, 18, "exact"), (20, 36, "exact"), (38, 56, "exact")]
    # text.find would put the third chunk on the first: recovery never does.
    assert text.find(chunks[2]) == 0


def test_identical_consecutive_chunks_get_consecutive_copies() -> None:
    assert spans_of("Same.\n\nSame.\n\nSame.", ["Same.", "Same.", "Same."]) == [
        (0, 5, "exact"),
        (7, 12, "exact"),
        (14, 19, "exact"),
    ]


def test_overlapping_chunks_are_found_inside_the_previous_one() -> None:
    text = "one two three four five six"
    assert spans_of(text, ["one two three", "three four five", "five six"]) == [
        (0, 13, "exact"),
        (8, 23, "exact"),
        (19, 27, "exact"),
    ]


def test_a_chunk_that_starts_with_whitespace_is_still_exact() -> None:
    text = "first part\n    indented part"
    assert spans_of(text, ["first part", "\n    indented part"]) == [(0, 10, "exact"), (10, 28, "exact")]


def test_stripped_lines_joined_differently_are_rewritten_over_their_source() -> None:
    # What LangChain's MarkdownHeaderTextSplitter does to a section: strip each line, join with "  \n".
    text = "# Title\n\n  line one\n  line two\n\n# Next\n\nmore"
    first, second = recover_spans(text, ["line one  \nline two", "more"])
    assert first == RecoveredSpan(text.index("line one"), text.index("two") + 3, REWRITTEN)
    assert second == RecoveredSpan(len(text) - 4, len(text), EXACT)


def test_collapsed_whitespace_is_rewritten_and_covers_the_original() -> None:
    text = "alpha   beta\n\ngamma\tdelta"
    (span,) = recover_spans(text, ["alpha beta gamma delta"])
    assert span == RecoveredSpan(0, len(text), REWRITTEN)


def test_a_chunk_with_a_decoding_artefact_is_aligned() -> None:
    # A token window cut inside a multi-byte character decodes to U+FFFD.
    text = "The café serves crêpes and coffee all day long."
    (span,) = recover_spans(text, ["The caf\ufffd serves cr\ufffdpes and coffee"])
    assert span.status is REWRITTEN
    assert (span.start, span.end) == (0, text.index(" all day"))


def test_a_character_cut_between_two_token_windows_belongs_to_both() -> None:
    # Each window decodes its half of "Ø" (two bytes) to U+FFFD.
    assert spans_of("xØy", ["x\ufffd", "\ufffdy"]) == [(0, 2, "rewritten"), (1, 3, "rewritten")]
    assert spans_of("Ø", ["\ufffd", "\ufffd"]) == [(0, 1, "rewritten"), (0, 1, "rewritten")]


def test_a_long_rewritten_chunk_is_aligned_by_its_head_and_tail() -> None:
    body = " ".join(f"word{i}" for i in range(900))
    text = f"Intro line.\n\n{body}\n\nOutro line."
    # Two characters decoded badly and the whitespace changed: neither verbatim nor equal without whitespace.
    chunk = body.replace("word5 ", "w\ufffdrd5\n").replace("word800", "word8\ufffd0")
    intro, found, outro = recover_spans(text, ["Intro line.", chunk, "Outro line."])
    assert found == RecoveredSpan(text.index("word0"), text.index("word899") + 7, REWRITTEN)
    assert (intro.status, outro.status) == (EXACT, EXACT)


def test_an_overlap_may_start_where_the_previous_chunk_starts() -> None:
    # LlamaIndex's overlap can repeat a whole chunk at the head of the next one.
    assert spans_of("0\r00", ["0", "0", "00"]) == [(0, 1, "exact"), (2, 3, "exact"), (2, 4, "exact")]


def test_a_chunk_after_an_overlap_continues_the_previous_one_not_the_nearest_copy() -> None:
    # LlamaIndex's SentenceSplitter (chunk_size=17, chunk_overlap=3) on a table of identical rows. The third chunk's
    # text is found at 35, 47 and 59; the copy at 59 is nearest where the second ended (54) but leaves " | 0 " out.
    text = "The.\n\n| name | value |\n| --- | --- |\n| the | 0 |\n| the | 0 |\n| the | 0 |\n| the | 0 |\n\nThe."
    chunks = [
        "The.\n\n| name | value |\n| --- | ---",
        "--- | --- |\n| the | 0 |\n| the",
        "|\n| the | 0 |\n| the | 0",
        "| 0 |\n| the | 0 |\n\nThe.",
    ]
    assert spans_of(text, chunks) == [(0, 34, "exact"), (25, 54, "exact"), (47, 70, "exact"), (67, 90, "exact")]
    assert text.find(chunks[2]) == 35  # where text.find would put it


def test_a_chunk_that_does_not_reach_past_the_one_before_does_not_push_the_others_back() -> None:
    # LlamaIndex's TokenTextSplitter with a two-character budget (chunk_overlap=1) repeats a chunk's tail at the end
    # ("he", then "e"). Requiring each chunk to end before the next one ends pushed "he" back onto "the" and every
    # chunk before it with it: the second "|" fell on the first and left the "|" at 23 out.
    text = "The.\n\n| name | value |\n| --- | --- |\n| the | 0 |\n\nThe the."
    chunks = (
        "Th he e. . | n na am me | v va al lu ue | | - -- -- | - -- -- | | t th he | 0 | T Th he e t th he e.".split()
    )
    found = recover_spans(text, chunks)
    assert [span.start for span in found] == [
        0, 1, 2, 3, 6, 8, 8, 9, 10, 13, 15, 15, 16, 17, 18, 21, 23, 25, 25, 26,
        29, 31, 31, 32, 35, 37, 39, 39, 40, 43, 45, 47, 50, 50, 51, 52, 54, 54, 55, 56,
    ]  # fmt: skip
    assert all(text[span.start : span.end] == chunk for span, chunk in zip(found, chunks, strict=True))


def test_a_periodic_text_leaves_room_for_every_chunk() -> None:
    # LangChain cuts "xxxx" into three overlapping "xx": the nearest copy of the second would leave none for the third.
    assert spans_of("xxxx", ["xx", "xx", "xx"]) == [(0, 2, "exact"), (1, 3, "exact"), (2, 4, "exact")]


def test_a_chunk_found_nowhere_is_unplaced_where_the_last_one_ended() -> None:
    text = "Known words here. More known words."
    assert spans_of(text, ["Known words here.", "completely different xyz", "More known words."]) == [
        (0, 17, "exact"),
        (17, 17, "unplaced"),
        (18, 35, "exact"),
    ]
    # Between overlapping neighbours it sits where the next one starts, so starts never go backwards.
    assert spans_of("one two three", ["one two", "qqqqqqqqqqqq", "two three"]) == [
        (0, 7, "exact"),
        (4, 4, "unplaced"),
        (4, 13, "exact"),
    ]


def test_recovery_stays_inside_the_given_window() -> None:
    text = "A. B. A. B."
    assert spans_of(text, ["A.", "B."], 6) == [(6, 8, "exact"), (9, 11, "exact")]
    assert spans_of(text, ["A."], 0, 5) == [(0, 2, "exact")]


def test_counts_per_status() -> None:
    spans = recover_spans("x y z", ["x", "y  z", "nothing like it at all"])
    assert span_counts(spans) == {"exact": 1, "rewritten": 1, "unplaced": 1}
    assert span_counts([]) == {"exact": 0, "rewritten": 0, "unplaced": 0}


def test_one_recovery_serves_several_groups() -> None:
    recovery = SpanRecovery("aa bb aa bb")
    assert recovery.recover(["aa", "bb"]) == [RecoveredSpan(0, 2, EXACT), RecoveredSpan(3, 5, EXACT)]
    assert recovery.recover(["bb"], 6) == [RecoveredSpan(9, 11, EXACT)]


# -- properties ----------------------------------------------------------------------------

# Few, short words: every text is full of repeats at every length.
_WORDS = st.sampled_from(["a", "b", "ab", "ba", "the", "cat", "the cat"])
_SEPARATORS = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", " \n "])


@st.composite
def words_and_gaps(
    draw: st.DrawFn, separators: st.SearchStrategy[str] = _SEPARATORS, word: st.SearchStrategy[str] = _WORDS
) -> tuple[str, list[tuple[int, int]]]:
    """A text of words and whitespace, and each word's span."""
    words = draw(st.lists(word, min_size=1, max_size=40))
    text = draw(st.sampled_from(["", " ", "\n"]))
    spans = []
    for index, word in enumerate(words):
        if index:
            text += draw(separators)
        spans.append((len(text), len(text) + len(word)))
        text += word
    return text + draw(st.sampled_from(["", "\n"])), spans


@st.composite
def tiling(
    draw: st.DrawFn,
    separators: st.SearchStrategy[str] = _SEPARATORS,
    min_words: int = 1,
    word: st.SearchStrategy[str] = _WORDS,
) -> tuple[str, list[tuple[int, int]]]:
    """A text and chunks that tile it: consecutive runs of words, no gaps but whitespace, no overlap."""
    text, words = draw(words_and_gaps(separators, word))
    bounds = [0]
    while bounds[-1] < len(words):
        bounds.append(min(len(words), bounds[-1] + draw(st.integers(min_words, 6))))
    if len(bounds) > 2 and bounds[-1] - bounds[-2] < min_words:
        bounds.pop(-2)  # the last run would be too short: it joins the one before
    return text, [(words[a][0], words[b - 1][1]) for a, b in zip(bounds, bounds[1:], strict=False)]


@given(tiling())
def test_slices_that_tile_a_repetitive_text_come_back_exactly(case: tuple[str, list[tuple[int, int]]]) -> None:
    text, truth = case
    found = recover_spans(text, [text[a:b] for a, b in truth])
    assert [(s.start, s.end) for s in found] == truth
    assert {s.status for s in found} == {EXACT}


@st.composite
def repeated_block_windows(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A block of distinct words repeated 2-3 times, cut into overlapping windows of words.

    The overlap stays under half a block, so each window's copy nearest the previous
    window is its own: the only right answer is the window's own span.
    """
    size = draw(st.integers(4, 30))
    block = [f"w{i}" for i in range(size)]
    copies = draw(st.integers(2, 3))
    words = block * copies
    text, spans = "", []
    for index, word in enumerate(words):
        if index:
            text += "\n\n" if index % size == 0 else draw(st.sampled_from([" ", "\n"]))
        spans.append((len(text), len(text) + len(word)))
        text += word
    window = draw(st.integers(1, max(1, size // 2)))
    overlap = draw(st.integers(0, window - 1))
    truth, first = [], 0
    while True:
        last = min(first + window, len(words))
        truth.append((spans[first][0], spans[last - 1][1]))
        if last == len(words):
            return text, truth
        first = last - overlap


@given(repeated_block_windows())
def test_overlapping_windows_over_a_repeated_block_come_back_exactly(case: tuple[str, list[tuple[int, int]]]) -> None:
    text, truth = case
    found = recover_spans(text, [text[a:b] for a, b in truth])
    assert [(s.start, s.end, s.status) for s in found] == [(a, b, EXACT) for a, b in truth]


# Never a single space between or inside words, so a chunk with its whitespace collapsed to single spaces is
# nowhere verbatim.
_WIDE_SEPARATORS = st.sampled_from(["  ", "\n", "\n\n", "\t", " \n "])
_SOLID_WORDS = st.sampled_from(["a", "b", "ab", "ba", "the", "cat"])


@given(tiling(_WIDE_SEPARATORS, min_words=2, word=_SOLID_WORDS))
def test_collapsed_chunks_are_rewritten_over_the_characters_they_came_from(
    case: tuple[str, list[tuple[int, int]]],
) -> None:
    text, truth = case
    if len(truth) == 1 and truth[0][0] == truth[0][1]:
        return
    collapsed = [" ".join(text[a:b].split()) for a, b in truth]
    found = recover_spans(text, collapsed)
    for (a, b), chunk, span in zip(truth, collapsed, found, strict=True):
        if chunk == text[a:b]:  # one word: nothing was collapsed
            assert span == RecoveredSpan(a, b, EXACT)
        else:
            assert span == RecoveredSpan(a, b, REWRITTEN)


@given(
    st.text(st.sampled_from("ab \n."), max_size=60),
    st.lists(st.text(st.sampled_from("ab \n.x"), max_size=12), max_size=8),
)
def test_any_chunks_get_valid_spans(text: str, chunks: list[str]) -> None:
    found = recover_spans(text, chunks)
    assert len(found) == len(chunks)
    for chunk, span in zip(chunks, found, strict=True):
        assert 0 <= span.start <= span.end <= len(text)
        if span.status is EXACT:
            assert text[span.start : span.end] == chunk
        elif span.status is UNPLACED:
            assert span.start == span.end
    starts = [span.start for span in found]
    assert starts == sorted(starts), "no chunk starts before the one before it"


@st.composite
def overlapping_cuts(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A text of a few repeated lines, cut anywhere into chunks that overlap or touch: no character is left out."""
    lines = draw(st.lists(st.sampled_from(["| the | 0 |\n", "| a |\n", "x y\n", "\n"]), min_size=1, max_size=12))
    text = "".join(lines)
    cuts: list[tuple[int, int]] = []
    start = end = 0
    while end < len(text):
        start = draw(st.integers(start, end)) if cuts else 0
        end = draw(st.integers(end + 1, min(len(text), end + 30)))
        cuts.append((start, end))
    return text, cuts


@given(overlapping_cuts())
def test_overlapping_slices_of_a_repetitive_text_come_back_exact_and_leave_no_gap(
    case: tuple[str, list[tuple[int, int]]],
) -> None:
    text, truth = case
    found = recover_spans(text, [text[a:b] for a, b in truth])
    assert all(text[s.start : s.end] == text[a:b] for s, (a, b) in zip(found, truth, strict=True))
    assert {s.status for s in found} == {EXACT}
    starts = [s.start for s in found]
    assert starts == sorted(starts)
    depth = [0] * (len(text) + 1)
    for span in found:
        depth[span.start] += 1
        depth[span.end] -= 1
    running = 0
    for index, char in enumerate(text):
        running += depth[index]
        assert running > 0 or char.isspace(), f"character {index} ({char!r}) is in no chunk"


# -- the whitespace-free index -------------------------------------------------------------


def test_the_whitespace_table_is_every_character_str_isspace_counts() -> None:
    from core.tokens.char_index import WHITESPACE_CODES

    assert WHITESPACE_CODES.tolist() == [code for code in range(0x110000) if chr(code).isspace()]


@given(st.text(alphabet=st.sampled_from("ab é\t\n\u00a0\u2003\u3000\U0001f600\ud800"), max_size=60))
def test_the_squeezed_index_maps_offsets_as_removing_whitespace_does(text: str) -> None:
    from core.spans.matching import Squeezed

    index = Squeezed(text)
    assert index.text == "".join(text.split())
    for position in range(len(text) + 2):
        assert index.to_squeezed(position) == len("".join(text[:position].split()))
    for kept, char in enumerate(index.text):
        assert text[index.to_source(kept)] == char and index.to_squeezed(index.to_source(kept)) == kept


# -- the one-pass fast path ----------------------------------------------------------------


def _general_pass(text: str, chunks: list[str]) -> list[RecoveredSpan]:
    recovery = SpanRecovery(text)
    recovery._verbatim_chain = lambda *_: None  # type: ignore[method-assign]
    return recovery.recover(chunks)


def _fast_path_agrees(text: str, chunks: list[str]) -> bool:
    """True when the one-pass chain answered; it must then be exactly what the general pass gives."""
    chain = SpanRecovery(text)._verbatim_chain(chunks, 0, len(text))
    if chain is not None:
        assert chain == _general_pass(text, chunks)
    return chain is not None


@given(st.one_of(tiling(), repeated_block_windows(), overlapping_cuts()))
def test_the_one_pass_chain_gives_the_general_passs_spans_on_repetitive_slices(
    case: tuple[str, list[tuple[int, int]]],
) -> None:
    text, truth = case
    _fast_path_agrees(text, [text[a:b] for a, b in truth])


@st.composite
def slices_in_any_order(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A repetitive text and slices of it: mostly each overlapping or touching the one before (what the
    fast path takes), now and then anywhere, and now and then one not in the text."""
    text, _ = draw(words_and_gaps())
    chunks, start, end = [], 0, 0
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.integers(0, 4)) == 0 or start + 1 >= len(text):
            start = draw(st.integers(0, len(text) - 1))
        else:
            start = draw(st.integers(start + 1, max(start + 1, min(end, len(text) - 1))))
        end = draw(st.integers(start + 1, min(len(text), start + 15)))
        chunks.append(text[start:end] if draw(st.integers(0, 9)) else text[start:end] + "x")
    return text, chunks


@given(slices_in_any_order())
def test_the_one_pass_chain_gives_the_general_passs_spans_on_any_chunks(case: tuple[str, list[str]]) -> None:
    _fast_path_agrees(*case)


@given(st.one_of(tiling(), repeated_block_windows(), overlapping_cuts(), slices_in_any_order()), st.integers(1, 4))
@example(("a  a a a a a a", ["  "]), 1)  # a window ending before the chunk's length: no negative find bound
def test_the_one_pass_chain_finds_by_a_short_head_what_it_finds_by_the_whole_chunk(case, head: int) -> None:
    """The chain looks for a chunk's head and compares the whole chunk in place; with heads of 1-4 characters
    (repeated everywhere in these texts) it must answer exactly as with heads as long as the chunks."""
    from unittest.mock import patch

    from core.spans import recovery as span_recovery

    text, chunks = case
    chunks = [text[a:b] for a, b in chunks] if chunks and isinstance(chunks[0], tuple) else chunks
    whole = SpanRecovery(text)._verbatim_chain(chunks, 0, len(text))
    with patch.object(span_recovery, "_HEAD", head):
        assert SpanRecovery(text)._verbatim_chain(chunks, 0, len(text)) == whole


def test_the_one_pass_chain_answers_for_a_langchain_split_of_real_prose() -> None:
    from pathlib import Path

    from langchain_text_splitters import RecursiveCharacterTextSplitter

    text = (Path(__file__).parent.parent / "sample_docs" / "chunking_guide.md").read_text(encoding="utf-8")
    chunks = RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=60).split_text(text)
    assert _fast_path_agrees(text, chunks)
