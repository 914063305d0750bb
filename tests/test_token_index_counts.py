"""A token index counts what the plain rule counts; count_many (numpy for many pieces) says what count() says.

The plain rule: a piece's size is the text's tokens overlapping it, which for a
piece cut between words is what the tokenizer counts in the piece's own text.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.tokens.token_index import TokenIndex
from core.tokens.tokenizers import get_tokenizer

TEXT = (
    "Chunk sizes are counted in model tokens. Unbelievably long words split into pieces, "
    "and punctuation (like this!) is its own token. " * 6
)
MODEL = get_tokenizer("model")
INDEX = TokenIndex(MODEL, TEXT)
TOKENS = MODEL.spans(TEXT)
SPACES = sorted({0, len(TEXT), *(i for i, char in enumerate(TEXT) if char == " ")})
pairs_of_positions = st.lists(st.tuples(st.integers(0, len(TEXT)), st.integers(0, len(TEXT))), max_size=40)


@given(pairs_of_positions)
def test_a_count_is_the_texts_tokens_overlapping_the_piece(pairs):
    for a, b in pairs:
        start, end = min(a, b), max(a, b)
        assert INDEX.count(start, end) == sum(1 for s, e in TOKENS if s < end and e > start)


@given(st.lists(st.sampled_from(SPACES), min_size=2, max_size=8, unique=True))
def test_a_piece_cut_at_spaces_counts_the_tokens_of_its_own_text(points):
    points = sorted(points)
    for start, end in zip(points, points[1:], strict=False):
        assert INDEX.count(start, end) == MODEL.count(TEXT[start:end])


@given(pairs_of_positions)
def test_count_many_is_count_of_each_piece(pairs):
    pieces = [(min(a, b), max(a, b)) for a, b in pairs]
    assert INDEX.count_many(pieces) == [INDEX.count(start, end) for start, end in pieces]


def test_many_pieces_take_the_vector_path_and_agree_with_a_tokenizer():
    words = [(m, m + 5) for m in range(0, 400, 10)]  # 40 pieces: past VECTOR_FROM
    assert len(words) >= TokenIndex.VECTOR_FROM
    counts = INDEX.count_many(words)
    assert counts == [INDEX.count(a, b) for a, b in words]
    assert INDEX.count_many([(0, len(TEXT))] * 10) == [MODEL.count(TEXT)] * 10
    assert INDEX.count_many([(5, 5)] * 9) == [0] * 9  # an empty piece between words holds no token
