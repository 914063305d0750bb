"""TokenIndex.count_many: many pieces are counted with numpy, a few in Python; both say what count() says."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.splitters.base import TokenIndex
from core.tokenizers import get_tokenizer

TEXT = (
    "Chunk sizes are counted in model tokens. Unbelievably long words split into pieces, "
    "and punctuation (like this!) is its own token. " * 6
)
INDEX = TokenIndex(get_tokenizer("model"), TEXT)


@given(st.lists(st.tuples(st.integers(0, len(TEXT)), st.integers(0, len(TEXT))), max_size=40))
def test_count_many_is_count_of_each_piece(pairs):
    pieces = [(min(a, b), max(a, b)) for a, b in pairs]
    assert INDEX.count_many(pieces) == [INDEX.count(start, end) for start, end in pieces]


def test_many_pieces_take_the_vector_path_and_agree_with_a_tokenizer():
    words = [(m, m + 5) for m in range(0, 400, 10)]  # 40 pieces: past VECTOR_FROM
    assert len(words) >= TokenIndex.VECTOR_FROM
    counts = INDEX.count_many(words)
    assert counts == [INDEX.count(a, b) for a, b in words]
    assert INDEX.count_many([(0, len(TEXT))] * 10) == [get_tokenizer("model").count(TEXT)] * 10
    assert INDEX.count_many([(5, 5)] * 9) == [0] * 9  # an empty piece between words holds no token
