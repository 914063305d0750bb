"""Damaged UTF-8 is read as UTF-8: stray bytes become U+FFFD, every intact character is kept.

Decided by proportion, not by count: once UTF-8 reads a character beyond ASCII, strays up to 5% of
the file are always damage, and any number are where UTF-8's characters hold a quarter of the
non-ASCII bytes, unless the file is clean text in a multi-byte legacy encoding. A code page wins
only when UTF-8 is clearly wrong (pinned below): it reads nothing beyond ASCII, or legacy text
forms its few valid UTF-8 sequences by chance.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from core.loaders import load_bytes
from core.loaders.decoding import decode_text

BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
# Bytes that start no UTF-8 character: continuation bytes and the never-valid ones.
NO_START = [*range(0x80, 0xC2), *range(0xF5, 0x100)]
TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00\ufeff\ufffd"), min_size=1, max_size=30)


@pytest.mark.parametrize(
    ("data", "text", "replaced"),
    [
        # The reports: a byte inside a character read as cp855/cp737 or refused as binary.
        (b"\xe6\xff\x97\xa5\xe6\x9c\xff\xac", "日\ufffd本\ufffd", 2),
        (b"Caf\xc3\xff\xa9", "Café\ufffd", 1),
        (b"a\xe6\x97\xa5\xe6\xff\xfe\x9c\xacb", "a日本\ufffd\ufffdb", 2),
        (b"Caf\xc3\xff\xfe\xa9", "Café\ufffd\ufffd", 2),
        # Between characters, each stray byte is a U+FFFD where it stood.
        (b"\x81\xe6\x97\xa5\x82\xe6\x9c\xac\x83", "\ufffd日\ufffd本\ufffd", 3),
        # A character cut off before the next one: its two bytes are lost, the next one kept.
        (b"\xe6\x97\xe6\x9c\xac", "\ufffd\ufffd本", 2),
        # Two stray bytes that look like a UTF-16 mark, then UTF-8 that is no UTF-16.
        (b"\xff\xfeCaf\xc3\xa9", "\ufffd\ufffdCafé", 2),
    ],
)
def test_a_few_stray_bytes_leave_every_character_around_them(data: bytes, text: str, replaced: int) -> None:
    plural = "s" if replaced > 1 else ""
    assert decode_text(data, "x.txt") == (
        text,
        "utf-8",
        f"replaced {replaced} invalid UTF-8 byte{plural} with \ufffd",
        replaced,
    )


@pytest.mark.parametrize(
    ("data", "text"),
    [
        # The reports: read in a code page ("CafГ© яюЂЃ ok", cp1251; an emoji line as cp1125) or refused as binary.
        (b"Caf\xc3\xa9 \xff\xfe\x80\x81 ok", "Café \ufffd\ufffd\ufffd\ufffd ok"),
        ("Grüße aus München".encode() + b"\x81\x82\x83\x84", "Grüße aus München" + "\ufffd" * 4),
        ("I \u2764\ufe0f it \U0001f600".encode() + b"\x80\x81\x82\x83\x84", "I \u2764\ufe0f it \U0001f600" + "\ufffd" * 5),
        (b"\xe6\x97\xa5\xe6\x9c\xac" + b"\x81" * 5, "日本" + "\ufffd" * 5),
        (b"Caf\xc3\xa9" + b"\x81\x82\x83\x84", "Café" + "\ufffd" * 4),
    ],
)
def test_stray_bytes_beside_characters_utf8_reads_are_damage_however_many(data: bytes, text: str) -> None:
    decoded = decode_text(data, "x.txt")
    assert (decoded.text, decoded.encoding) == (text, "utf-8")
    assert decoded.replaced_bytes == text.count("\ufffd")


LEGACY = [
    ("吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。", "shift_jis"),
    ("天下大势，分久必合，合久必分。周末七国分争，并入于秦。", "gb18030"),
    ("대한민국은 민주공화국이다. 대한민국의 주권은 국민에게 있고", "euc_kr"),
    ("Все счастливые семьи похожи друг на друга.", "cp1251"),
    ("Déjà vu: the “smart quotes” and café crème of a Windows editor.", "cp1252"),
]


@pytest.mark.parametrize(("text", "encoding"), LEGACY)
def test_a_code_page_wins_only_where_utf8_is_clearly_wrong(text: str, encoding: str) -> None:
    # Legacy CJK text holds chance UTF-8 sequences (21-44% of its high bytes here), yet reads as a mess in UTF-8;
    # single-byte code pages form none, so UTF-8 would read nothing beyond ASCII.
    decoded = decode_text(text.encode(encoding), "legacy.txt")
    assert decoded.text == text and decoded.encoding != "utf-8"


@st.composite
def valid_utf8_with_stray_bytes(draw: st.DrawFn) -> tuple[str, bytes, int]:
    """Text with a character beyond ASCII, short or long, and its UTF-8 with k stray bytes 0x80-0xFF inserted
    at character boundaries, k up to 5% of the bytes (at least one)."""
    short = st.text(st.characters(exclude_categories=["Cs", "Cc"], exclude_characters="\ufeff\ufffd"), min_size=1, max_size=40)
    prose = st.lists(st.sampled_from(["Grüße", "aus", "München", "日本", "語", "ok", "Café", "😀", "naïve", "the", "a",
                                      "Ελληνικά", "данные", ",", ".", "\n"]), min_size=20, max_size=400).map(" ".join)
    text = draw(st.one_of(short, prose))
    assume(not text.isascii() and text.strip())
    pieces = [char.encode() for char in text]
    length = sum(map(len, pieces))
    k = draw(st.integers(1, max(1, length // 20)))
    for _ in range(k):
        pieces.insert(draw(st.integers(0, len(pieces))), bytes([draw(st.integers(0x80, 0xFF))]))
    data = b"".join(pieces)
    assume(not data.startswith(BOMS))
    return text, data, k


@given(valid_utf8_with_stray_bytes())
def test_valid_utf8_with_up_to_five_percent_stray_bytes_always_decodes_as_utf8(case: tuple[str, bytes, int]) -> None:
    text, data, k = case
    decoded = decode_text(data, "damaged.txt")
    assert decoded.encoding == "utf-8", (data, decoded)
    remaining = iter(decoded.text)
    assert all(char in remaining for char in text)
    assert decoded.replaced_bytes <= k


@st.composite
def inserted_between_characters(draw: st.DrawFn) -> tuple[str, bytes, dict[int, int]]:
    """Text, its UTF-8 bytes with 1-3 bytes 0x80-0xFF inserted at distinct character boundaries, and
    {character index: inserted byte}."""
    text = draw(TEXT)
    assume(text.strip())
    at = draw(st.lists(st.integers(0, len(text)), min_size=1, max_size=3, unique=True))
    inserted = {index: draw(st.integers(0x80, 0xFF)) for index in at}
    data = b"".join(
        (bytes([inserted[i]]) if i in inserted else b"") + (text[i].encode() if i < len(text) else b"")
        for i in range(len(text) + 1)
    )
    assume(not data.startswith(BOMS))  # a byte-order mark declares the encoding
    return text, data, inserted


@given(inserted_between_characters())
def test_stray_bytes_between_characters_are_replacement_characters_where_they_stood(
    case: tuple[str, bytes, dict[int, int]],
) -> None:
    text, data, inserted = case
    decoded = decode_text(data, "damaged.txt")

    def with_damage(reading: object) -> str:
        return "".join((reading(inserted[i]) if i in inserted else "") + text[i : i + 1] for i in range(len(text) + 1))

    if decoded.encoding == "utf-8":
        assert decoded.text == with_damage(lambda byte: "\ufffd")
        assert decoded.replaced_bytes == len(inserted)
    else:
        # Only ASCII text with a few high bytes a Windows code page reads as letters ("caf\xe9").
        assert text.isascii() and decoded.encoding == "cp1252"
        assert decoded.text == with_damage(lambda byte: bytes([byte]).decode("cp1252"))


@st.composite
def inserted_anywhere(draw: st.DrawFn) -> tuple[str, bytes, set[int]]:
    """Text, its bytes with 1-3 bytes that start no character inserted anywhere (inside characters too),
    and the indices of the characters damaged (a byte inserted inside them)."""
    text = draw(TEXT)
    assume(text.strip())
    # Each character's bytes as (byte, is the character's own); inserted bytes are not.
    pieces = [[(byte, True) for byte in char.encode()] for char in text]
    damaged: set[int] = set()
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(pieces) - 1))
        offset = draw(st.integers(0, len(pieces[index])))
        piece = pieces[index]
        if any(own for _, own in piece[:offset]) and any(own for _, own in piece[offset:]):
            damaged.add(index)
        piece.insert(offset, (draw(st.sampled_from(NO_START)), False))
    data = bytes(byte for piece in pieces for byte, _ in piece)
    assume(not data.startswith(BOMS))
    return text, data, damaged


@given(inserted_anywhere())
def test_every_character_the_damage_did_not_touch_survives_in_order(case: tuple[str, bytes, set[int]]) -> None:
    text, data, damaged = case
    decoded = decode_text(data, "damaged.txt")
    remaining = iter(decoded.text)
    assert all(char in remaining for i, char in enumerate(text) if i not in damaged), (text, data, decoded)
    if not text.isascii():
        assert decoded.encoding == "utf-8"
        assert 1 <= decoded.replaced_bytes <= 3


def test_the_document_says_how_many_bytes_were_replaced() -> None:
    (document,) = load_bytes(b"\xe6\xff\x97\xa5\xe6\x9c\xac is Japan.\n", "short.txt")
    assert document.text == "日\ufffd本 is Japan.\n"
    assert document.metadata["encoding"] == "utf-8"
    assert document.metadata["replaced_bytes"] == 1
    assert document.metadata["load_warning"] == "replaced 1 invalid UTF-8 byte with \ufffd"
