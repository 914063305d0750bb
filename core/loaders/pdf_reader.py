"""What pypdf says about a PDF as a whole, before any page is extracted: whether it opens (encryption),
how much page content there is to interpret, its page labels and its document info."""

from __future__ import annotations

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError

from core.errors import EncryptedDocumentError, TooLargeError

MB = 1024 * 1024


def decrypt_with_empty_password(reader: PdfReader, file_name: str) -> None:
    """Open a PDF encrypted only against editing (empty user password); refuse a real password."""
    try:
        result = reader.decrypt("")
    except DependencyError:
        raise EncryptedDocumentError(
            file_name, "is AES-encrypted, and reading it needs the cryptography package, which is not installed"
        ) from None
    if result == PasswordType.NOT_DECRYPTED:
        raise EncryptedDocumentError(file_name, "is encrypted and cannot be read without its password")


def check_content_size(reader: PdfReader, file_name: str, max_mb: int) -> list[int]:
    """Refuse before extracting: extraction interprets every instruction, so its time grows with these bytes.
    Each page's content size in bytes otherwise (0 for a damaged page), so later passes can bound their own work.

    Decompressing is fast (zlib, capped per stream by pypdf) and pypdf keeps the
    result for the extraction that follows.
    """
    total = 0
    sizes = []
    for page in reader.pages:
        try:
            contents = page.get_contents()
            size = len(contents.get_data()) if contents is not None else 0
        except Exception:  # a damaged page is reported when its text is extracted
            size = 0
        sizes.append(size)
        total += size
        if total > max_mb * MB:
            raise TooLargeError(
                file_name, f"holds more than {max_mb} MB of page content to interpret (max_content_mb={max_mb})"
            )
    return sizes


def page_labels(reader: PdfReader, page_count: int) -> list[str]:
    """The PDF's page labels ("iv", "12"), or the page numbers where the labels are missing or broken."""
    try:
        labels = [str(label) for label in reader.page_labels]
    except Exception:
        labels = []
    if len(labels) != page_count:
        labels = [str(number) for number in range(1, page_count + 1)]
    return labels


def document_info(reader: PdfReader) -> dict[str, str]:
    """Title and author from the document info, when present and not blank."""
    try:
        info = reader.metadata
        found = {"title": info.title if info else None, "author": info.author if info else None}
    except Exception:
        return {}
    return {key: " ".join(str(value).split()) for key, value in found.items() if value and str(value).strip()}


def error_reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())[:120]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
