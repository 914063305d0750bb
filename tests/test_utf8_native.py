"""core/utf8_native.c feeds a str's UTF-8 (lone surrogates passed) byte for byte as CPython encodes it.

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


def fed(text: str) -> bytes:
    parts: list[bytes] = []
    utf8_native.feed(lambda part: parts.append(bytes(part)), text)
    return b"".join(parts)


def test_the_vectorized_encoder_is_built_and_used_here():
    # The install builds it (setup.py; the Makefile installs gcc); this machine has SSE4.1. Without SSE4.1 it
    # encodes a character at a time; without the build, core.schema._hash_utf8 runs: the same bytes, slower.
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
                assert fed(marked) == python_utf8(marked), (length, place)


@pytest.mark.parametrize("storage", STORAGE)
def test_long_runs_of_one_width(storage: str):
    for character in ("a", "\xe9", "\u0416", "\u4e2d", "\U0001f600"):
        text = storage + character * 100_003 + storage
        assert fed(text) == python_utf8(text)


any_character = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.text(any_character, max_size=40), st.sampled_from(EDGES)), max_size=12))
def test_any_text_encodes_as_cpython_encodes_it(pieces: list[str]):
    text = "".join(pieces)
    assert fed(text) == python_utf8(text)


def test_the_parts_come_in_order_and_none_is_kept_alive():
    # 100,003 characters of Cyrillic: seven parts of at most 16,384 characters, each a memoryview released
    # after the call (the buffer is reused for the next part), so a kept part cannot be read.
    text = "\u0416" * 100_003
    kept: list[memoryview] = []
    sizes: list[int] = []

    def update(part: memoryview) -> None:
        kept.append(part)
        sizes.append(len(part))

    utf8_native.feed(update, text)
    assert sizes == [16_384 * 2] * 6 + [(100_003 - 6 * 16_384) * 2]
    with pytest.raises(ValueError, match="released"):
        bytes(kept[0])


def test_an_ascii_text_is_one_part_and_the_empty_text_none():
    parts: list[bytes] = []
    utf8_native.feed(lambda part: parts.append(bytes(part)), "plain ascii " * 10_000)
    utf8_native.feed(lambda part: parts.append(bytes(part)), "")
    assert parts == [b"plain ascii " * 10_000]


def test_an_error_in_update_is_raised_and_anything_but_a_str_refused():
    class Named(str):
        pass

    assert fed(Named("caf\xe9")) == b"caf\xc3\xa9"

    def failing(part: memoryview) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        utf8_native.feed(failing, "caf\xe9" * 20_000)
    with pytest.raises(TypeError, match="a str"):
        utf8_native.feed(print, b"bytes")  # type: ignore[arg-type]
