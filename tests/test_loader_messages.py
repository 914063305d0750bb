"""The sentences a refusal says: true to what happened, with numbers that differ when the sizes do."""

from __future__ import annotations

import pytest
from hostile.make_hostile import _FONT, _stream, raw_pdf

from core.errors import CorruptDocumentError, EmptyDocumentError, TooLargeError
from core.limits import MB, Limits, check_upload_size
from core.loaders import load_bytes
from core.loaders import pdf as pdf_module
from core.loaders.pdf_ocr import OcrPage


@pytest.mark.parametrize(
    ("size", "limit", "expected"),
    [
        (50 * MB + 1, 50 * MB, "is 50,000,001 bytes, more than the upload limit of 50,000,000 bytes"),
        (50 * MB + 49_999, 50 * MB, "is 50,049,999 bytes, more than the upload limit of 50,000,000 bytes"),
        (50 * MB + 100_000, 50 * MB, "is 50.1 MB, more than the upload limit of 50.0 MB"),
        (51 * MB, 50 * MB, "is 51.0 MB, more than the upload limit of 50.0 MB"),
        (1_001, 1_000, "is 1,001 bytes, more than the upload limit of 1,000 bytes"),
        (11, 10, "is 11 bytes, more than the upload limit of 10 bytes"),
    ],
)
def test_an_upload_just_over_the_limit_shows_two_different_numbers(size: int, limit: int, expected: str) -> None:
    with pytest.raises(TooLargeError) as caught:
        check_upload_size(size, "big.pdf", Limits(max_upload_bytes=limit))
    assert str(caught.value) == f"big.pdf: {expected}"


def _image_page(image: bytes) -> bytes:
    """One page that draws an 8x8 grey image and has no text layer: what OCR is run on."""
    return raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /XObject << /Im 5 0 R >> >> >>",
        _stream(b"q 200 0 0 200 0 0 cm /Im Do Q"),
        b"<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray /BitsPerComponent 8 "
        b"/Length 64 >>\nstream\n" + image + b"\nendstream",
    ])  # fmt: skip


def test_ocr_that_ran_and_read_nothing_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[int] = []

    def read_nothing(data: bytes, index: int, dpi: int, *, reflow: bool = False, without_text: bool = False) -> OcrPage:
        ran.append(index)
        return OcrPage(text="", confidence=0.0, words=0)

    monkeypatch.setattr(pdf_module, "ocr_unavailable_reason", lambda: None)
    monkeypatch.setattr(pdf_module, "ocr_page", read_nothing)
    with pytest.raises(EmptyDocumentError) as caught:
        load_bytes(_image_page(b"\xff" * 64), "scan.pdf")
    assert str(caught.value) == "scan.pdf: has no text layer, and OCR read no text on page 1"
    assert ran == [0]


def test_tesseract_on_a_white_image_reads_nothing_and_the_message_says_it_ran() -> None:
    if pdf_module.ocr_unavailable_reason() is not None:
        pytest.skip("needs Tesseract")  # the monkeypatched test above holds the sentence everywhere
    with pytest.raises(EmptyDocumentError, match=r"^white\.pdf: has no text layer, and OCR read no text on page 1$"):
        load_bytes(_image_page(b"\xff" * 64), "white.pdf")


def _nested_forms(depth: int, own_text: bytes = b"") -> bytes:
    """A page whose text is drawn by the innermost of ``depth`` form XObjects, each drawing the next
    (and ``own_text`` drawn by the page itself)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R "
        b"/Resources << /XObject << /X 6 0 R >> /Font << /F1 5 0 R >> >> >>",
        _stream((b"BT /F1 12 Tf 20 150 Td (%s) Tj ET " % own_text if own_text else b"") + b"/X Do"),
        _FONT,
    ]
    for level in range(depth):
        number = len(objects) + 1
        if level == depth - 1:
            body, resources = b"BT /F1 12 Tf 20 100 Td (Drawn deep down) Tj ET", b"<< /Font << /F1 5 0 R >> >>"
        else:
            body, resources = b"/X Do", b"<< /XObject << /X %d 0 R >> >>" % (number + 1)
        objects.append(
            b"<< /Type /XObject /Subtype /Form /BBox [0 0 200 200] /Resources %s /Length %d >>\nstream\n%s\nendstream"
            % (resources, len(body), body)
        )
    return raw_pdf(objects)


def test_forms_nested_a_few_deep_are_read() -> None:
    (document,) = load_bytes(_nested_forms(20), "nested.pdf")
    assert document.text == "Drawn deep down"


def test_forms_nested_deeper_than_pypdf_follows_are_not_called_blank_pages() -> None:
    # pypdf gives up past Python's recursion limit with only a log line, and the page came out "blank".
    with pytest.raises(CorruptDocumentError) as caught:
        load_bytes(_nested_forms(600), "nested.pdf")
    assert str(caught.value) == (
        "nested.pdf: has pages whose content could not be read "
        "(page 1: its drawing nests form XObjects deeper than pypdf can follow)"
    )


def test_a_page_read_in_part_says_which_part_was_skipped() -> None:
    (document,) = load_bytes(_nested_forms(600, own_text=b"Drawn by the page"), "partly.pdf")
    assert document.text.strip() == "Drawn by the page"
    assert document.metadata["load_warning"] == (
        "could not read part of page 1: its drawing nests form XObjects deeper than pypdf can follow"
    )
