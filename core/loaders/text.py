"""Plain text files, and the decoding every text-based loader shares.

:func:`decode_text` is the one place bytes become text: byte-order marks first,
then strict UTF-8, then UTF-8 with a few damaged bytes replaced, then charset-normalizer's
best guess (with a warning saying so). Markdown, HTML, code and CSV loaders all decode through it.

Damaged UTF-8 or a code page: UTF-8 is read (each stray byte a U+FFFD, the
stray bytes counted in ``replaced_bytes``) unless the stray bytes number more
than :data:`_FEW_INVALID_BYTES` and more than the continuation bytes of the
characters UTF-8 reads; that margin is what a code page must beat. Stray bytes
are counted after :func:`~core.loaders.utf8_repair.repair_utf8` has read around
them, so a byte inserted inside a character costs one byte, not the character.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.errors import CorruptDocumentError, EmptyDocumentError
from core.loaders.base import Loader, elements_read
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.utf8_repair import repair_utf8
from core.params import param
from core.schema import Document, Element, Page

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

# Metadata keys about how a file was read rather than what it says: kept out of
# what the embedding model and the LLM see unless the user asks for them. The last
# five: what a page is called (slide, sheet, chapter), which PDF parser ran, the pages
# the other parser read, OCR.
LOAD_DETAIL_KEYS = (
    "encoding", "load_warning", "replaced_bytes", "page_unit", "parser", "fallback_pages", "ocr_pages", "ocr_confidence"
)  # fmt: skip

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# "\r(?!\n)" keeps a CRLF from being read as two line breaks when the regex backtracks.
_BLANK_LINE_GAP = re.compile(r"(?:\r\n|\r(?!\n)|\n)[ \t\f\v]*(?:\r\n|\r(?!\n)|\n)\s*")


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
                damaged = _damaged_utf8(body, encoding) if encoding == "utf-8-sig" else _damaged_utf8(data, "utf-8")
                if damaged is not None:
                    return damaged[0]
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
    damaged = _damaged_utf8(data, "utf-8")
    if damaged is not None:
        replaced, continuation = damaged
        if continuation:
            return replaced
        # No multibyte character: a few high bytes that cp1252 reads as characters (a Windows
        # editor's "café") stay cp1252, which loses nothing where UTF-8 would replace them.
        try:
            return Decoded(data.decode(_WESTERN_DEFAULT), _WESTERN_DEFAULT, f"decoded as {_WESTERN_DEFAULT}, not UTF-8")
        except UnicodeDecodeError:  # cp1252 leaves 0x81, 0x8d, 0x8f, 0x90 and 0x9d undefined
            return replaced
    from charset_normalizer import from_bytes  # only for a file that is not UTF-8 (12 ms to import)

    results = from_bytes(data)
    best = results.best()
    if best is None:
        raise CorruptDocumentError(file_name, "looks like binary data, not text")
    encoding = _prefer_western(data, results, best)
    return Decoded(data.decode(encoding, errors="replace"), encoding, f"decoded as {encoding}, not UTF-8")


def _damaged_utf8(data: bytes, encoding: str) -> tuple[Decoded, int] | None:
    """UTF-8 with each stray byte replaced by U+FFFD, and the continuation bytes of the characters read.

    None when the stray bytes are too many to be damage to UTF-8 text, that is
    more than :data:`_FEW_INVALID_BYTES` and more than those continuation bytes:
    legacy text forms valid sequences only by chance (a Shift-JIS or GB18030
    paragraph about one two-byte character for every three bytes UTF-8 rejects,
    Western code pages almost never), while damaged UTF-8 keeps all of its own.
    """
    escaped = data.decode("utf-8", errors="surrogateescape")
    # Each invalid byte became one lone surrogate, which neither UTF-8 nor ASCII can encode.
    invalid = len(data) - len(escaped.encode("utf-8", errors="ignore"))
    if invalid <= _REPAIR_LIMIT:
        escaped = repair_utf8(data)
        invalid = len(_ESCAPED_BYTE.findall(escaped))
    characters = len(escaped) - invalid
    continuation = len(escaped.encode("utf-8", errors="ignore")) - characters
    if invalid > max(continuation, _FEW_INVALID_BYTES):
        return None
    warning = f"replaced {invalid} invalid UTF-8 byte{'s' if invalid > 1 else ''} with \ufffd"
    return Decoded(_ESCAPED_BYTE.sub("\ufffd", escaped), encoding, warning, invalid), continuation


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


def normalize_line_breaks(text: str) -> str:
    """CRLF and lone CR become LF."""
    return _LINE_BREAK.sub("\n", text) if "\r" in text else text


def line_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every line, the line break excluded (CRLF, CR or LF)."""
    spans = []
    start = 0
    for match in _LINE_BREAK.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of blank-line separated blocks in ``text[start:end]``, trimmed of surrounding whitespace."""
    end = len(text) if end is None else end
    spans = []
    block_start = start
    for gap in _BLANK_LINE_GAP.finditer(text, start, end):
        spans.append((block_start, gap.start()))
        block_start = gap.end()
    spans.append((block_start, end))
    trimmed = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            trimmed.append((a, b))
    return trimmed


def text_metadata(
    file_name: str, file_type: str, encoding: str, warning: str | None, replaced_bytes: int = 0
) -> dict[str, Any]:
    """The metadata every decoded-text document starts with."""
    metadata: dict[str, Any] = {"file_name": file_name, "file_type": file_type, "encoding": encoding}
    if warning:
        metadata["load_warning"] = warning
    if replaced_bytes:
        metadata["replaced_bytes"] = replaced_bytes
    return metadata


def make_document(
    text: str, metadata: dict[str, Any], elements: list[Element], pages: list[Page] | None = None
) -> Document:
    """A Document whose load-detail keys stay out of the LLM and EMBED views."""
    hidden = [key for key in LOAD_DETAIL_KEYS if key in metadata]
    return Document(
        text=text,
        metadata=metadata,
        elements=elements,
        pages=list(pages or []),
        excluded_llm_metadata_keys=list(hidden),
        excluded_embed_metadata_keys=list(hidden),
    )


def add_warning(metadata: dict[str, Any], warning: str) -> None:
    """Append a note to ``load_warning`` (notes are joined with "; ")."""
    existing = metadata.get("load_warning")
    metadata["load_warning"] = f"{existing}; {warning}" if existing else warning


@dataclass(frozen=True)
class DecodedTextLoader(Loader):
    """Base of the loaders that read text files (not registered itself)."""

    normalize_newlines: bool = param(
        True,
        "Turn Windows (CRLF) and old Mac (CR) line breaks into LF; off keeps the text exactly as decoded.",
        advanced=True,
    )

    def decode(self, data: bytes, file_name: str) -> Decoded:
        decoded = decode_text(data, file_name)
        if self.normalize_newlines:
            return decoded._replace(text=normalize_line_breaks(decoded.text))
        return decoded


@LOADERS.register
@dataclass(frozen=True)
class TextLoader(DecodedTextLoader):
    """Plain text: the decoded file, one paragraph element per blank-line separated block."""

    name = "text"
    summary = "Plain text (.txt, .log, .rst); any file read as text when chosen explicitly."
    extensions = FORMAT_EXTENSIONS["text"]

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        text, encoding, warning, replaced = self.decode(data, file_name)
        wanted = elements_read()
        # Paragraphs only for a caller that reads them (a batch worker whose splitter reads tables needs none).
        spans = paragraph_spans(text) if wanted is None or "paragraph" in wanted else []
        elements = [Element("paragraph", a, b) for a, b in spans]
        return [make_document(text, text_metadata(file_name, "text", encoding, warning, replaced), elements)]
