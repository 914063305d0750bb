"""core/utf8_native.c gives a str's UTF-8 (lone surrogates passed) byte for byte as CPython does.

The Document id hashes those bytes (core.schema.content_id), so a difference would change every id.
The encoder works eight characters at a time by how a str is stored (one, two or four bytes a
character), so the examples put every kind of character at every place in and around a block.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import utf8_native


def python_utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def test_the_vectorized_encoder_is_built_and_used_here():
    # The install builds it (setup.py; the Makefile installs gcc); this machine has SSE4.1. Without either,
    # encode() hands the text to CPython's encoder: the same bytes, slower.
    assert utf8_native.VECTORIZED == 1


# One character of each UTF-8 width, at the edges of each (a lone surrogate is three bytes like any other).
EDGES = [
    "\x00",
    "a",
    "\x7f",
    "\x80",
    "\xe9",
    "\xff",
    "\u0100",
    "\u07ff",
    "\u0800",
    "\u4e2d",
    "\ud800",
    "\udfff",
    "\uffff",
    "\U00010000",
    "\U0001f600",
    "\U0010ffff",
]
# What makes the rest of a str stored one, two or four bytes a character.
STORAGE = ["", "\xe9", "\u0416", "\U0001f600"]


@pytest.mark.parametrize("storage", STORAGE, ids=["ascii", "one-byte", "two-byte", "four-byte"])
@pytest.mark.parametrize("edge", EDGES)
def test_each_width_at_every_place_of_a_block(edge: str, storage: str):
    for length in range(0, 34):
        for place in range(length):
            text = "x" * place + edge + "y" * (length - place - 1)
            for marked in (text, text + storage, storage + text):
                assert utf8_native.encode(marked) == python_utf8(marked), (length, place)


@pytest.mark.parametrize("storage", STORAGE)
def test_long_runs_of_one_width(storage: str):
    for character in ("a", "\xe9", "\u0416", "\u4e2d", "\U0001f600"):
        text = storage + character * 100_003 + storage
        assert utf8_native.encode(text) == python_utf8(text)


any_character = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.text(any_character, max_size=40), st.sampled_from(EDGES)), max_size=12))
def test_any_text_encodes_as_cpython_encodes_it(pieces: list[str]):
    text = "".join(pieces)
    assert utf8_native.encode(text) == python_utf8(text)


def test_a_str_subclass_is_encoded_and_anything_else_refused():
    class Named(str):
        pass

    assert utf8_native.encode(Named("caf\xe9")) == b"caf\xc3\xa9"
    with pytest.raises(TypeError, match="takes a str"):
        utf8_native.encode(b"bytes")  # type: ignore[arg-type]
