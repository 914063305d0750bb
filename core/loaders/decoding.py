"""The decoding every text-based loader shares: bytes to text, with a note when it was not plain UTF-8.

:func:`decode_text` is the one place bytes become text: byte-order marks first,
then strict UTF-8, then UTF-8 with a few damaged bytes replaced, then charset-normalizer's
best guess (with a warning saying so). Markdown, HTML, code and CSV loaders all decode through it.

Damaged UTF-8 or a code page: decided by proportion, not by count. UTF-8 is read (each
stray byte a U+FFFD, counted in ``replaced_bytes``) whenever it reads the text at all well:
the stray bytes are at most three, or no more than the continuation bytes of the characters
UTF-8 reads, or at most 5% of the file, or those characters hold a quarter of the non-ASCII
bytes and no multi-byte legacy encoding (Shift-JIS, EUC, GB18030, Big5) reads the file
cleanly (:func:`_utf8_reads_it`). A code page is read only when UTF-8 is clearly wrong: it
reads no character beyond ASCII (every high byte is a code page's letter: "caf\xe9"), or it
rejects most of the non-ASCII bytes of a file a legacy encoding reads. "Binary" is said only
of NUL bytes, control bytes, or bytes of which UTF-8 reads too little.
Stray bytes are counted after :func:`~core.loaders.utf8_repair.repair_utf8` has read around
them, so a byte inserted inside a character costs one byte, not the character.
"""

from __future__ import annotations

import codecs
import re
from typing import Any, NamedTuple

from core.errors import CorruptDocumentError, EmptyDocumentError
from core.loaders.utf8_repair import repair_utf8

# Longest BOM first: the UTF-32 LE BOM starts with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# The one Western code page most non-UTF-8 text is in; charset-normalizer often
# ties it with cp1250 on short text, and then it is the better bet.
_WESTERN_DEFAULT = "cp1252"
_CHAOS_TOLERANCE = 0.1
# Up to this many bytes that are not UTF-8 are too few to tell one code page from another
# (charset-normalizer reads "ab\x81cd" as Shift-JIS and loses the "c"): they are damaged UTF-8.
_FEW_INVALID_BYTES = 3
# Stray bytes up to this share of a file are damage, however many (once UTF-8 reads a non-ASCII character):
# text in a legacy encoding has most of its non-ASCII letters rejected, 55-85% of its bytes in our samples.
_STRAY_SHARE = 0.05
# Where UTF-8's own multi-byte characters hold at least this share of the non-ASCII bytes, the rest is damage
# unless a multi-byte legacy encoding reads every byte (its text holds chance UTF-8 sequences: 21-44% here).
_UTF8_HIGH_SHARE = 0.25
_LEGACY_MULTIBYTE = ("shift_jis", "euc_jp", "gb18030", "big5", "euc_kr")
# charset-normalizer's default bound on the mess of a reading it accepts as text, and how much it reads for it.
_MESS_THRESHOLD = 0.2
_MESS_SAMPLE = 65_536
# Bytes no text holds (C0 controls but tab, line feed, vertical tab, form feed, carriage return, escape; DEL).
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
_HIGH_BYTES = bytes(range(0x80, 0x100))
# A file UTF-8 reads at least this share of is text with damage when no code page reads it either.
_UTF8_TEXT_SHARE = 0.7
# Up to this many bytes the decoder rejects are read around one by one (a small search each);
# more are counted only, at C speed: a long legacy-code-page file rejects thousands.
_REPAIR_LIMIT = 64
# What Python's surrogateescape handler turns each undecodable byte into.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
# Labels a file may declare that we do not trust: escapes and placeholders that are no
# way to store text, and UTF-16/32, which an ASCII-readable declaration cannot truly be in
# (real UTF-16/32 has a BOM or NUL bytes and is caught before declarations are read).
_IGNORED_DECLARATIONS = frozenset(
    {"undefined", "unicode_escape", "raw_unicode_escape", "idna", "punycode", "utf_7"}
    | {"utf_16", "utf_16_le", "utf_16_be", "utf_32", "utf_32_le", "utf_32_be"}
)


class Decoded(NamedTuple):
    """A text file's bytes decoded: the text, the encoding read, a note when it was not plain UTF-8."""

    text: str
    encoding: str
    warning: str | None
    # Bytes that were not valid UTF-8 and became U+FFFD in ``text``.
    replaced_bytes: int = 0


def decode_text(data: bytes, file_name: str, declared: str | None = None) -> Decoded:
    """Decode a text file's bytes.

    ``warning`` is a human note when the text was not plain UTF-8 (a guessed
    encoding, or damaged bytes replaced), else None. ``declared`` is an encoding
    the file names for itself (an HTML ``<meta charset>``), tried before guessing.
    Binary data raises CorruptDocumentError; no characters beyond whitespace
    raise EmptyDocumentError.
    """
    if not data.strip():
        raise EmptyDocumentError(file_name, "is empty" if not data else "contains only whitespace")
    decoded = _decode(data, file_name, declared)
    if not decoded.text.strip():  # e.g. only a byte-order mark, or UTF-16 spaces
        raise EmptyDocumentError(file_name, "is empty" if not decoded.text else "contains only whitespace")
    if "\x00" in decoded.text:
        raise CorruptDocumentError(file_name, "looks like binary data, not text")
    return decoded


def _decode(data: bytes, file_name: str, declared: str | None) -> Decoded:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom) :]
            try:
                return Decoded(body.decode(encoding), encoding, None)
            except UnicodeDecodeError:
                # A UTF-8 mark says UTF-8: a few damaged bytes are replaced, never read as a code page.
                # A UTF-16/32 "mark" that is no such text may be two stray bytes before UTF-8.
                reading = (
                    _read_damaged_utf8(body, encoding) if encoding == "utf-8-sig" else _read_damaged_utf8(data, "utf-8")
                )
                if _utf8_reads_it(body if encoding == "utf-8-sig" else data, reading):
                    return reading.decoded
                raise CorruptDocumentError(
                    file_name, f"starts with a {encoding} byte-order mark but is not valid {encoding}"
                ) from None
    if b"\x00" in data:
        # Text without a BOM holds NUL bytes only when it is UTF-16 or UTF-32.
        guessed = _wide_unicode_without_bom(data)
        if guessed is None:
            raise CorruptDocumentError(file_name, "looks like binary data, not text")
        text, encoding = guessed
        return Decoded(text, encoding, f"decoded as {encoding} (no byte-order mark), not UTF-8")
    try:
        return Decoded(data.decode("utf-8"), "utf-8", None)
    except UnicodeDecodeError:
        pass
    name = _declared_codec(declared)
    if name:
        try:
            return Decoded(data.decode(name), name, f"decoded as {name} (declared in the file), not UTF-8")
        except (LookupError, ValueError):
            pass  # a wrong declaration, or a codec that is no text encoding (hex, rot13): guess instead
    reading = _read_damaged_utf8(data, "utf-8")
    if _utf8_reads_it(data, reading):
        if reading.continuation:
            return reading.decoded
        # No multibyte character and a few high bytes that cp1252 reads as characters (a Windows
        # editor's "café"): cp1252, which loses nothing where UTF-8 would replace them.
        try:
            return Decoded(data.decode(_WESTERN_DEFAULT), _WESTERN_DEFAULT, f"decoded as {_WESTERN_DEFAULT}, not UTF-8")
        except UnicodeDecodeError:  # cp1252 leaves 0x81, 0x8d, 0x8f, 0x90 and 0x9d undefined
            return reading.decoded
    from charset_normalizer import from_bytes  # only for a file that is not UTF-8 (12 ms to import)

    results = from_bytes(data)
    best = results.best()
    if best is None:
        # No code page reads it either: damaged UTF-8 if UTF-8 reads most of it and no control byte says binary.
        if _looks_binary(data, reading):
            raise CorruptDocumentError(file_name, "looks like binary data, not text")
        return reading.decoded
    encoding = _prefer_western(data, results, best)
    return Decoded(data.decode(encoding, errors="replace"), encoding, f"decoded as {encoding}, not UTF-8")


class _Utf8Reading(NamedTuple):
    """Bytes read as UTF-8 around their stray bytes, with what decides whether UTF-8 is right."""

    decoded: Decoded
    invalid: int  # stray bytes, each a U+FFFD in the text
    continuation: int  # continuation bytes of the multi-byte characters read
    high: int  # bytes 0x80-0xFF in the file


def _read_damaged_utf8(data: bytes, encoding: str) -> _Utf8Reading:
    """UTF-8 with each stray byte replaced by U+FFFD, and the counts :func:`_utf8_reads_it` weighs."""
    escaped = data.decode("utf-8", errors="surrogateescape")
    # Each invalid byte became one lone surrogate, which neither UTF-8 nor ASCII can encode.
    invalid = len(data) - len(escaped.encode("utf-8", errors="ignore"))
    if invalid <= _REPAIR_LIMIT:
        escaped = repair_utf8(data)
        invalid = len(_ESCAPED_BYTE.findall(escaped))
    characters = len(escaped) - invalid
    continuation = len(escaped.encode("utf-8", errors="ignore")) - characters
    high = len(data) - len(data.translate(None, _HIGH_BYTES))
    warning = f"replaced {invalid} invalid UTF-8 byte{'s' if invalid > 1 else ''} with \ufffd"
    decoded = Decoded(_ESCAPED_BYTE.sub("\ufffd", escaped), encoding, warning, invalid)
    return _Utf8Reading(decoded, invalid, continuation, high)


def _utf8_reads_it(data: bytes, reading: _Utf8Reading) -> bool:
    """Whether the stray bytes are damage to UTF-8 text rather than the letters of a legacy encoding.

    Few strays, or no more than the continuation bytes of the characters read, always are (legacy text
    forms valid UTF-8 sequences only by chance). Past that, only a text in which UTF-8 reads a character
    beyond ASCII: then strays up to :data:`_STRAY_SHARE` of the file are damage, and so is any number
    where UTF-8's characters hold :data:`_UTF8_HIGH_SHARE` of the high bytes, unless a multi-byte legacy
    encoding reads every byte and the UTF-8 reading is a mess.
    """
    invalid, continuation = reading.invalid, reading.continuation
    if invalid <= max(continuation, _FEW_INVALID_BYTES):
        return True
    if not continuation:
        return False
    if invalid <= _STRAY_SHARE * len(data):
        return True
    utf8_high = reading.high - invalid
    if utf8_high < _UTF8_HIGH_SHARE * reading.high:
        return False
    # A legacy encoding reading every byte is no proof (EUC-KR reads "Grüße" as "Gr체횩e"): its text also
    # reads as a mess in UTF-8 (charset-normalizer's measure: 1.2-2.3 on our CJK samples; damaged UTF-8 0-0.1).
    return not _legacy_multibyte(data) or _reads_cleanly(reading.decoded.text)


def _reads_cleanly(text: str) -> bool:
    """charset-normalizer's mess measure of ``text`` (its first 64 KB) below its own threshold for text."""
    from charset_normalizer.md import mess_ratio

    return mess_ratio(text[:_MESS_SAMPLE], _MESS_THRESHOLD) < _MESS_THRESHOLD


def _legacy_multibyte(data: bytes) -> bool:
    """Whether a multi-byte legacy encoding reads every byte of ``data``."""
    for encoding in _LEGACY_MULTIBYTE:
        try:
            data.decode(encoding)
        except UnicodeDecodeError:
            continue
        return True
    return False


def _looks_binary(data: bytes, reading: _Utf8Reading) -> bool:
    """Control bytes no text holds, or too little that UTF-8 reads (NUL bytes never get here: see _decode)."""
    controls = len(data) - len(data.translate(None, _CONTROL_BYTES))
    return controls > 0 or reading.invalid > (1 - _UTF8_TEXT_SHARE) * len(data)


def _declared_codec(declared: str | None) -> str | None:
    """The Python codec for a file's own encoding label, if it names a real text encoding."""
    if not declared:
        return None
    try:
        name = codecs.lookup(declared).name.replace("-", "_")
    except LookupError:
        return None
    if name in _IGNORED_DECLARATIONS:
        return None
    # Browsers read a page labelled Latin-1 as windows-1252, its superset; so do we.
    return _WESTERN_DEFAULT if name in ("iso8859_1", "latin_1") else name


def _prefer_western(data: bytes, results: Any, best: Any) -> str:
    """cp1252 when it reads the bytes about as well as charset-normalizer's pick.

    On short text charset-normalizer often ranks a neighbouring code page
    (cp1250, cp1257) a hair ahead of cp1252 and turns "Déjà" into "Déją"; cp1252
    is by far the likelier source of a non-UTF-8 Western file.
    """
    for candidate in results:
        if (
            candidate.encoding == _WESTERN_DEFAULT
            and candidate.chaos <= best.chaos + _CHAOS_TOLERANCE
            and candidate.coherence >= best.coherence
        ):
            return _WESTERN_DEFAULT
    try:
        if data.decode(_WESTERN_DEFAULT) == str(best):
            return _WESTERN_DEFAULT  # the same text either way: name the common code page
    except UnicodeDecodeError:
        pass
    return best.encoding


def _wide_unicode_without_bom(data: bytes) -> tuple[str, str] | None:
    """UTF-32/16 text without a BOM, recognised by where its NUL bytes fall."""
    nul_positions = [index for index, byte in enumerate(data) if byte == 0]
    # (encoding, width, offsets within a code unit where mostly-Latin text has its zero bytes)
    layouts = (
        ("utf-32-le", 4, (1, 2, 3)),
        ("utf-32-be", 4, (0, 1, 2)),
        ("utf-16-le", 2, (1,)),
        ("utf-16-be", 2, (0,)),
    )
    for encoding, width, zero_offsets in layouts:
        if len(data) % width:
            continue
        aligned = sum(1 for index in nul_positions if index % width in zero_offsets)
        if aligned < 0.7 * len(nul_positions):
            continue
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if text and "\x00" not in text and _mostly_printable(text):
            return text, encoding
    return None


def _mostly_printable(text: str) -> bool:
    printable = sum(1 for char in text if char.isprintable() or char in "\t\n\r\f")
    return printable >= 0.95 * len(text)
