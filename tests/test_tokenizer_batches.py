"""The batch forms of every tokenizer give exactly what one call per text gives."""

from __future__ import annotations

import pytest

from core.tokens.token_index import TokenIndex
from core.tokens.tokenizers import TOKENIZER_NAMES, get_tokenizer

TEXTS = ["", "   ", "Chunk sizes, in tokens.", "naïve café ☕ 東京 x\u0000y \u200b end", "unaffable\n\nsentences."]


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_spans_many_and_span_columns_equal_spans_per_text(name):
    tokenizer = get_tokenizer(name)
    expected = [tokenizer.spans(text) for text in TEXTS]
    assert tokenizer.spans_many(TEXTS) == expected
    columns = tokenizer.span_columns(TEXTS)
    assert [list(zip(starts, ends, strict=True)) for starts, ends in columns] == expected


@pytest.mark.parametrize("name", ["words", "model"])
def test_token_index_over_blocks_equals_one_pass_over_the_text(name, monkeypatch):
    tokenizer = get_tokenizer(name)
    text = " ".join(TEXTS[2:] * 40)
    monkeypatch.setattr(TokenIndex, "BLOCK", 50)
    index = TokenIndex(tokenizer, text)
    assert list(zip(index.starts, index.ends, strict=True)) == tokenizer.spans(text)
