"""EPUB (.epub): one page per chapter, in reading order, each read by the HTML loader's text extraction.

``META-INF/container.xml`` names the package document (OPF); its spine lists
the chapters in reading order, and its manifest says where each one is. Every
XHTML chapter goes through :func:`core.loaders.html.html_to_text`, so headings,
paragraphs, lists, code and tables come out exactly as for a web page; a
chapter with no visible text (a cover picture) makes no page. Pages are labelled
with their chapter's number; nothing a chapter links to, and no script, is read.
A chapter's elements (its start tags) count against the file's
``max_xml_elements`` before the HTML walk spends its time on them.
Books whose chapters are encrypted (DRM) are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import CorruptDocumentError, EmptyDocumentError, EncryptedDocumentError, LoadError, TooLargeError
from core.loaders.archive import Archive, ZipLoader, attr, child, children, descendants, local, resolve
from core.loaders.blocks import BlockText
from core.loaders.decoding import decode_text
from core.loaders.html import declared_charset, html_to_text
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import add_warning, make_document
from core.schema import Document

_CHAPTER_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/x-dtbook+xml"})


@LOADERS.register
@dataclass(frozen=True)
class EpubLoader(ZipLoader):
    """E-books: one page per chapter in spine order, each chapter's HTML read for its structure."""

    name = "epub"
    summary = "EPUB (.epub): one page per chapter in reading order, with headings, lists and tables."
    extensions = FORMAT_EXTENSIONS["epub"]
    format_label = "an .epub file"
    counted_elements = {"itemref": ("chapters", "max_sections")}

    def read_archive(self, archive: Archive, data: bytes) -> list[Document]:
        file_name = archive.file_name
        package_part = _package_part(archive, file_name)
        package = archive.xml(package_part)
        if package is None:
            raise CorruptDocumentError(file_name, f"is not an .epub file (its package {package_part} is missing)")
        chapters = _spine(package, package_part)
        if not chapters:
            raise EmptyDocumentError(file_name, "has no chapters in its spine")
        _refuse_encrypted(archive, chapters, file_name)

        out = BlockText()
        skipped = []
        for part in chapters:
            raw = archive.read(part)
            if raw is None:
                skipped.append(part)
                continue
            try:
                source = decode_text(raw, file_name, declared=declared_charset(raw)).text
                archive.budget.count_start_tags(source)
                text, elements, _ = html_to_text(source)
            except TooLargeError:
                raise
            except LoadError:
                continue  # an empty chapter (a cover page without text)
            except AssertionError:
                skipped.append(part)
                continue
            if not text.strip():
                continue
            out.start_page(str(out.page_count + 1))
            out.add_elements(text, elements)
        text, elements, pages = out.result()
        if not text.strip():
            raise EmptyDocumentError(file_name, "has no text in any chapter")
        metadata: dict[str, Any] = {"file_name": file_name, "file_type": "epub", "page_count": len(pages)}
        metadata["page_unit"] = "chapter"
        metadata.update(_book_metadata(package))
        if skipped:
            shown = ", ".join(skipped[:5]) + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
            add_warning(metadata, f"could not read chapter{'s' if len(skipped) > 1 else ''} {shown}")
        return [make_document(text, metadata, elements, pages)]


def _package_part(archive: Archive, file_name: str) -> str:
    container = archive.xml("META-INF/container.xml")
    if container is not None:
        for rootfile in descendants(container, "rootfile"):
            path = rootfile.get("full-path")
            if path and rootfile.get("media-type", "application/oebps-package+xml").endswith("package+xml"):
                return resolve("", path)
    opf = sorted(name for name in archive.names if name.lower().endswith(".opf"))
    if opf:
        return opf[0]
    raise CorruptDocumentError(file_name, "is not an .epub file (it has no META-INF/container.xml)")


def _spine(package: Any, package_part: str) -> list[str]:
    """The chapters' part names in reading order."""
    manifest = {}
    for item in descendants(package, "item"):
        item_id, href = item.get("id"), item.get("href")
        if item_id and href:
            manifest[item_id] = (resolve(package_part, href), item.get("media-type", ""))
    chapters: dict[str, None] = {}  # ordered, and a repeated chapter is found at once
    spine = next(descendants(package, "spine"), None)
    for itemref in children(spine, "itemref") if spine is not None else ():
        found = manifest.get(itemref.get("idref") or "")
        if found is not None and found[1] in _CHAPTER_TYPES:
            chapters.setdefault(found[0])
    return list(chapters)


def _refuse_encrypted(archive: Archive, chapters: list[str], file_name: str) -> None:
    """Refuse a book whose chapters are encrypted (fonts alone may be obfuscated; that is harmless here)."""
    encryption = archive.xml("META-INF/encryption.xml")
    if encryption is None:
        return
    wanted = set(chapters)
    for reference in descendants(encryption, "CipherReference"):
        uri = attr(reference, "URI") or ""
        if resolve("", uri) in wanted:
            raise EncryptedDocumentError(file_name, "is DRM-protected (its chapters are encrypted) and cannot be read")


def _book_metadata(package: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    metadata = next(descendants(package, "metadata"), None)
    if metadata is None:
        return found
    for key, tag in (("title", "title"), ("author", "creator"), ("language", "language")):
        node = child(metadata, tag)
        if node is None:
            node = next((n for n in metadata.iter() if local(n.tag) == tag), None)
        value = " ".join((node.text or "").split()) if node is not None else ""
        if value:
            found[key] = value
    return found
