"""Fast paths equal the plain rules they stand in for: packing, literal cuts, blingfire offsets, the GC pause,
metadata views left unjoined.

Each fast path in ``core/splitters/fast/`` (and the sentence segmenter's offset
mapping) names a plain rule; these properties hold the two equal on the texts
splitters meet. The character search path, the heading scan and the token
index have their own files (test_character_fast_path.py,
test_markdown_headings.py, test_token_index_counts.py).
"""

from __future__ import annotations

import gc

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import prose, texts, unicode_text, whitespace_runs

from core.schema import Document
from core.splitters import get_splitter
from core.splitters.base import Span
from core.splitters.fast.gc_pause import gc_paused
from core.splitters.fast.literal_cuts import literal_of, literal_pieces
from core.splitters.fast.packing import merge_bounds, merge_pieces
from core.splitters.pieces import CutGuard, merge_pieces_plainly
from core.tokens import segmentation


@st.composite
def pieces_and_sizes(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]], list[int]]:
    """A text cut into consecutive pieces, with sizes that need not be their lengths (zeros and giants too)."""
    text = draw(st.text(alphabet="ab \n", max_size=60))
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=20))) | {0, len(text)})
    pieces = [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]
    sizes = draw(st.lists(st.integers(0, 30), min_size=len(pieces), max_size=len(pieces)))
    return text, pieces, sizes


@settings(max_examples=500)
@given(case=pieces_and_sizes(), chunk_size=st.integers(1, 40), data=st.data())
def test_merge_pieces_equals_the_plain_greedy_rule(case, chunk_size, data):
    text, pieces, sizes = case
    chunk_overlap = data.draw(st.integers(0, chunk_size - 1))
    fast = merge_pieces(pieces, sizes, chunk_size, chunk_overlap, text)
    assert fast == merge_pieces_plainly(pieces, sizes, chunk_size, chunk_overlap, text)
    assert all(type(span) is Span and span.metadata is None for span in fast)


@settings(max_examples=300)
@given(case=pieces_and_sizes(), chunk_size=st.integers(1, 40), offset=st.integers(-5, 5), data=st.data())
def test_merge_bounds_equals_the_plain_greedy_rule(case, chunk_size, offset, data):
    # The same consecutive pieces as boundaries, their sizes as running sums from any start.
    text, pieces, sizes = case
    if not pieces:
        return
    chunk_overlap = data.draw(st.integers(0, chunk_size - 1))
    bounds = [start for start, _ in pieces] + [pieces[-1][1]]
    prefix = [offset]
    for size in sizes:
        prefix.append(prefix[-1] + size)
    fast = merge_bounds(bounds, prefix, chunk_size, chunk_overlap, text)
    assert fast == merge_pieces_plainly(pieces, sizes, chunk_size, chunk_overlap, text)


@pytest.mark.parametrize(
    ("pieces", "sizes", "chunk_size", "chunk_overlap", "expected"),
    [
        # "ab " + "cd " fit in 6; the next chunk carries "cd " (3 <= overlap 3) and adds "ef".
        ([(0, 3), (3, 6), (6, 8)], [3, 3, 2], 6, 3, [(0, 5), (3, 8)]),
        # A piece over chunk_size is a chunk alone; no overlap is carried into a piece that would not fit.
        ([(0, 3), (3, 6), (6, 8)], [3, 9, 2], 6, 3, [(0, 2), (3, 5), (6, 8)]),
    ],
)
def test_merge_pieces_examples(pieces, sizes, chunk_size, chunk_overlap, expected):
    text = "ab cd ef"
    for merge in (merge_pieces, merge_pieces_plainly):
        assert [span[:2] for span in merge(pieces, sizes, chunk_size, chunk_overlap, text)] == expected


def _regex_pieces(text: str, start: int, end: int, pattern: str, keep_at_start: bool) -> list[tuple[int, int]]:
    """The recursive splitter's plain rule: a cut at each regex match, through CutGuard.pieces."""
    matches = regex.compile(pattern, regex.VERSION0).finditer(text, start, end)
    cuts = [match.start() if keep_at_start else match.end() for match in matches]
    return CutGuard().pieces(start, end, cuts)


LITERALS = st.sampled_from([r"\n\n", r"\n", r" ", r"\. ", "ab", "aa", r"\n\n\n", r"\t", "--"])


@settings(max_examples=400)
@given(
    pattern=LITERALS,
    text=st.one_of(texts(), st.text(alphabet="ab \n.-\t", max_size=40)),
    keep_at_start=st.booleans(),
    data=st.data(),
)
def test_literal_cuts_equal_cutting_at_the_regex_matches(pattern, text, keep_at_start, data):
    literal = literal_of(pattern)
    assert literal is not None
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    if start == end:
        return
    pieces = literal_pieces(text, start, end, literal, keep_at_start)
    assert pieces == _regex_pieces(text, start, end, pattern, keep_at_start)


@pytest.mark.parametrize("pattern", [r"\n(?=# )", r"(?i)ab", "a|b", r"\s", "[ab]", "a+", ""])
def test_patterns_that_are_not_plain_strings_take_the_regex(pattern):
    assert literal_of(pattern) is None


@settings(max_examples=200, deadline=None)
@given(st.one_of(prose(), unicode_text(), whitespace_runs, st.text(max_size=80)))
def test_blingfire_offsets_mapped_in_bulk_equal_the_wrappers(text):
    blingfire = pytest.importorskip("blingfire")
    safe = text.replace("\x00", " ")
    fast = segmentation._fast_blingfire_starts(blingfire, safe)
    try:
        _, offsets = blingfire.text_to_sentences_and_offsets(safe)
    except Exception:  # the wrapper fails on some inputs; the plain path then uses the regex segmenter
        return
    if fast is not None:
        assert fast == [start for start, _ in offsets]


sentence_texts = st.lists(
    st.one_of(
        prose(), unicode_text(), whitespace_runs, st.text(max_size=80), st.sampled_from(["\n\n", "\ud800", "\x00"])
    ),
    max_size=6,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(sentence_texts)
def test_sentence_ends_in_bulk_equal_the_sentence_spans_ends(text):
    # The plain rule (what the mid-sentence flag read before): every sentence's end, in order, once.
    plain = sorted({end for _, end in segmentation.sentence_spans(text)})
    ends = segmentation.sentence_ends(text)
    assert ends.dtype.name == "int64" and ends.tolist() == plain


@pytest.mark.parametrize(
    ("text", "ends"),
    [
        ("", []),
        ("  \n ", []),
        ("One. Two!  \n\nThree", [4, 9, 18]),
        ("A heading\n\n   \n\nText ends here.   ", [9, 31]),
        ("lone \ud800 surrogate. Next one.", [17, 27]),  # not UTF-8: the regex segmenter
    ],
)
def test_sentence_ends_examples(text, ends):
    assert segmentation.sentence_ends(text).tolist() == ends


def test_the_gc_pause_restores_the_collectors_state_and_changes_no_node():
    document = Document(text="One paragraph.\n\nTwo paragraphs, " * 50)
    splitter = get_splitter("recursive", chunk_size=60, chunk_overlap=10)
    paused = splitter.split([document])
    was_enabled = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            with gc_paused():
                assert not gc.isenabled()
            assert gc.isenabled() is enabled
        gc.enable()
        with pytest.raises(ValueError), gc_paused():
            raise ValueError
        assert gc.isenabled()
        # The same nodes with the collector running throughout.
        assert [node.to_dict() for node in splitter.split_document(document)] == [node.to_dict() for node in paused]
    finally:
        (gc.enable if was_enabled else gc.disable)()


def test_recursive_sizes_from_a_size_function_may_be_floats():
    # Oversized pieces are found with operator.lt, not int.__lt__ (NotImplemented, truthy, for a float).
    text = "One two three.\n\nFour five six seven eight.\n\n" * 10
    document = Document(text=text)
    as_ints = get_splitter("recursive", chunk_size=8, chunk_overlap=2, tokenizer=lambda s: len(s.split()))
    as_floats = get_splitter("recursive", chunk_size=8, chunk_overlap=2, tokenizer=lambda s: float(len(s.split())))
    assert as_floats.spans(document) == as_ints.spans(document)
    # Each pair of paragraphs is 3 + 5 = 8 words: one chunk each, none cut further.
    assert len(as_ints.spans(document)) == 10


# Text templates: the default, others ending in {content} (blank or braced heads too), and ones that do not end there.
TEXT_TEMPLATES = [
    "{metadata_str}{content}",
    "{metadata_str}\n\n{content}",
    "{content}\n[{metadata_str}]",
    "  {content}",
    "{{{metadata_str}}}: {content}",
    "Doc {metadata_str}\n{content} end",
    "\n{metadata_str}\t{content}",
]


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab .\n\t{}", max_size=12), min_size=1, max_size=6),
    values=st.lists(st.sampled_from(["", " ", "x", "a b", "{}", 1, True]), max_size=3),
    text_template=st.sampled_from(TEXT_TEMPLATES),
    hidden=st.booleans(),
)
def test_view_parts_and_contents_equal_get_content(texts, values, text_template, hidden):
    from core.schema import MetadataMode, Node, contents, view_parts

    metadata = {f"k{i}": value for i, value in enumerate(values)}
    nodes = [
        Node(
            text=text,
            metadata=dict(metadata),
            text_template=text_template,
            excluded_embed_metadata_keys=["k0"] * hidden,
        )
        for text in texts
    ]
    for mode in MetadataMode:
        views = [node.get_content(mode) for node in nodes]
        assert contents(nodes, mode) == views
        for node, (prefix, view), expected in zip(nodes, view_parts(nodes, mode), views, strict=True):
            assert (prefix is None) != (view is None)
            assert (view if prefix is None else prefix + node.text) == expected


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(st.sampled_from(["Cats sleep.", "he", ".x", "a ", "", "中文 b"]), min_size=1, max_size=5),
    title=st.sampled_from(["", "A title.", "Title:", "t"]),
    text_template=st.sampled_from(TEXT_TEMPLATES),
    tokenizer=st.sampled_from(["model", "characters", "words"]),
)
# Metadata ending in "t" joined to a text starting with "he": "the" is one token, "t" and "he" two.
@example(texts=["x ", "he"], title="t", text_template="{metadata_str}{content}", tokenizer="model")
def test_views_counted_from_their_parts_equal_views_counted_whole(texts, title, text_template, tokenizer):
    # The metrics count a view given as prefix + text (view_parts) without joining it; the counts equal those of
    # the same views handed in whole (as the batch worker does).
    from core.measure.metrics import chunk_columns
    from core.schema import MetadataMode, contents
    from core.splitters.nodes import build_nodes
    from core.tokens.tokenizers import get_tokenizer

    text = "".join(texts)
    document = Document(text=text, id="t", metadata={"file_name": "t.txt", "title": title}, text_template=text_template)
    cuts = sorted({0, len(text), *(i + 1 for i in range(len(text)) if text[i] == " ")})  # words start the nodes
    nodes = build_nodes(document, [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a])
    if not nodes:
        return
    nodes[0].excluded_llm_metadata_keys = ["file_name"]
    views = (contents(nodes, MetadataMode.EMBED), contents(nodes, MetadataMode.LLM))
    _, columns = chunk_columns([document], nodes, tokenizer=tokenizer)
    assert chunk_columns([document], nodes, views=views, tokenizer=tokenizer) == (_, columns)
    # And both equal tokenizing each view whole (the plain rule).
    assert columns["embed_tokens"] == get_tokenizer("model").count_many(
        [node.get_content(MetadataMode.EMBED) for node in nodes]
    )
