"""Zip containers (DOCX, PPTX, XLSX, EPUB): opened with their size bounded first, read as data only.

Every Office Open XML file and every EPUB is a zip archive, so a small upload
can unpack to gigabytes (a zip bomb). :meth:`ZipLoader.open_archive` reads the
archive's central directory and refuses the file, before unpacking any entry,
when it declares more entries or more unpacked bytes than the loader's bounds.
That bound holds for what is actually unpacked too: :mod:`zipfile` never returns
more bytes for an entry than its directory record declares (a longer stream
fails its CRC check and is reported as damage). The bytes do not bound the
work, though (a few hundred KB of empty paragraphs unpack to millions of
elements), so every XML part is parsed as a stream and counted against the
:class:`~core.limits.Limits` by :mod:`core.loaders.xml_budget`.

Parts are parsed as XML with defusedxml, which refuses entity declarations
(the "billion laughs" expansion) and external entities, and nothing else in the
archive is ever interpreted: macros (``vbaProject.bin``), embedded objects,
ActiveX controls and external links are not read, and a file that carries them
gets a ``load_warning`` saying they were ignored.
"""

from __future__ import annotations

import posixpath
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import ClassVar
from urllib.parse import unquote
from xml.etree.ElementTree import Element as XmlElement

from core.errors import CorruptDocumentError, EmptyDocumentError, EncryptedDocumentError, LoadError, TooLargeError
from core.limits import DEFAULT_LIMITS, Limits
from core.loaders.base import Loader
from core.loaders.xml_budget import XmlBudget
from core.params import param
from core.schema import Document

MB = 1_000_000
# An encrypted (password-protected) Office file is not a zip but an OLE compound file, as are .doc/.xls/.ppt.
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENTITY_MARKERS = tuple("<!ENTITY".encode(codec) for codec in ("utf-8", "utf-16-le", "utf-16-be"))
# What reading a damaged zip entry raises.
_DAMAGE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError)
# Parts that hold something that could run or reach out; never read, only noted.
_ACTIVE_PARTS = (
    ("vbaproject.bin", "macros"),
    ("/embeddings/", "embedded objects"),
    ("/activex/", "ActiveX controls"),
    ("/externallinks/", "external links"),
)


@dataclass(frozen=True)
class ZipLoader(Loader):
    """Base of the loaders whose files are zip archives (not registered itself)."""

    # What the format is called in messages ("a .docx file").
    format_label: ClassVar[str] = "zip"
    # The elements counted against a limit while parts are parsed: local name -> (label, Limits field).
    counted_elements: ClassVar[Mapping[str, tuple[str, str]]] = {}

    max_unzipped_mb: int = param(
        200,
        "Refuse files whose zip entries unpack to more than this many MB, before unpacking any (zip bombs).",
        ge=1,
        le=4096,
        advanced=True,
    )
    max_zip_entries: int = param(
        10_000,
        "Refuse files whose zip archive holds more entries than this, before unpacking any.",
        ge=1,
        le=1_000_000,
        advanced=True,
    )

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        return self.load_within(data, file_name, DEFAULT_LIMITS)

    def load_within(self, data: bytes, file_name: str, limits: Limits) -> list[Document]:
        return self.read_archive(self.open_archive(data, file_name, limits), data)

    def read_archive(self, archive: Archive, data: bytes) -> list[Document]:
        """The documents in an opened archive (``data`` is the whole file, for a reader that wants it)."""
        raise NotImplementedError

    def open_archive(self, data: bytes, file_name: str, limits: Limits = DEFAULT_LIMITS) -> Archive:
        """The archive, once its entry count and unpacked size are within the bounds; its parts parse under ``limits``."""
        if not data.strip():
            raise EmptyDocumentError(file_name, "is empty")
        if data.startswith(_OLE_MAGIC):
            raise EncryptedDocumentError(
                file_name,
                f"is a password-protected Office file or an old binary Office file, not {self.format_label}; "
                "save it unprotected in the current format",
            )
        try:
            archive = zipfile.ZipFile(BytesIO(data))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
            raise CorruptDocumentError(
                file_name, f"is not {self.format_label} (it is not a readable zip archive)"
            ) from None
        infos = archive.infolist()
        if len(infos) > self.max_zip_entries:
            raise TooLargeError(
                file_name,
                f"is a zip archive of {len(infos):,} entries, more than max_zip_entries={self.max_zip_entries:,}",
            )
        unpacked = sum(info.file_size for info in infos)
        if unpacked > self.max_unzipped_mb * MB:
            raise TooLargeError(
                file_name,
                f"unpacks to {unpacked / MB:,.1f} MB, more than max_unzipped_mb={self.max_unzipped_mb:,} "
                "(refused before unpacking: a zip bomb?)",
            )
        return Archive(archive, file_name, XmlBudget(file_name, limits, self.counted_elements))


class Archive:
    """Read access to an archive's parts by name; a missing part reads as None. Every part read or
    parsed is checked against ``budget``: its unpacked size, and the elements it holds."""

    def __init__(self, archive: zipfile.ZipFile, file_name: str, budget: XmlBudget) -> None:
        self.zip = archive
        self.file_name = file_name
        self.budget = budget
        # Zip names are case-sensitive, but some writers disagree with the references on case.
        self.names = {info.filename: info for info in archive.infolist() if not info.is_dir()}
        self._folded = {name.lower(): name for name in self.names}

    def find(self, name: str) -> str | None:
        name = name.lstrip("/")
        if name in self.names:
            return name
        return self._folded.get(name.lower())

    def _info(self, name: str) -> zipfile.ZipInfo | None:
        found = self.find(name)
        if found is None:
            return None
        info = self.names[found]
        if info.flag_bits & 0x1:
            raise EncryptedDocumentError(self.file_name, f"has an encrypted part ({found}) and cannot be read")
        self.budget.check_part_size(found, info.file_size)
        return info

    def read(self, name: str) -> bytes | None:
        info = self._info(name)
        if info is None:
            return None
        try:
            return self.zip.read(info)
        except (*_DAMAGE, ValueError) as exc:
            raise CorruptDocumentError(self.file_name, f"has a damaged part {info.filename} ({_short(exc)})") from None

    def xml(self, name: str) -> XmlElement | None:
        """A part parsed as XML while its elements are counted, or None when the archive has no such part."""
        info = self._info(name)
        if info is None:
            return None
        try:
            with self.zip.open(info) as stream:
                return self.budget.parse(stream, info.filename)
        except _DAMAGE as exc:
            raise CorruptDocumentError(self.file_name, f"has a damaged part {info.filename} ({_short(exc)})") from None

    def count(self, name: str) -> None:
        """Count a part's elements against the budget without building a tree (see :meth:`XmlBudget.count`)."""
        info = self._info(name)
        if info is None:
            return
        try:
            with self.zip.open(info) as stream:
                self.budget.count(stream, info.filename)
        except _DAMAGE as exc:
            raise CorruptDocumentError(self.file_name, f"has a damaged part {info.filename} ({_short(exc)})") from None

    def relationships(self, part: str) -> dict[str, tuple[str, str]]:
        """A part's relationships: id -> (type's last word, target part name); external targets left out."""
        folder, base = posixpath.split(part)
        root = self.xml(posixpath.join(folder, "_rels", base + ".rels"))
        found: dict[str, tuple[str, str]] = {}
        if root is None:
            return found
        for rel in children(root, "Relationship"):
            if rel.get("TargetMode", "").lower() == "external":
                continue  # a link out of the file: never followed
            rel_id, target = rel.get("Id"), rel.get("Target")
            if rel_id and target:
                found[rel_id] = (rel.get("Type", "").rsplit("/", 1)[-1], resolve(part, target))
        return found

    def refuse_entity_declarations(self) -> None:
        """Refuse the file if any XML part declares entities (for parts a third-party parser reads, not us).

        OOXML never needs a DTD; openpyxl parses with lxml when it is installed, so
        this check, not the parser, is what keeps entity expansion out.
        """
        for name in self.names:
            if name.lower().endswith((".xml", ".rels")):
                data = self.read(name) or b""
                if any(marker in data for marker in _ENTITY_MARKERS):
                    raise CorruptDocumentError(
                        self.file_name, f"has XML entity declarations in {name}, which are refused"
                    )

    def active_content_note(self) -> str | None:
        """A note naming the macros, embedded objects and links the file carries, all ignored; None if none."""
        kinds: list[str] = []
        for name in self.names:
            lowered = "/" + name.lower()
            for marker, kind in _ACTIVE_PARTS:
                if marker in lowered and kind not in kinds:
                    kinds.append(kind)
        if not kinds:
            return None
        return f"ignored its {_joined(kinds)} (nothing in the file is run or followed)"


def resolve(part: str, target: str) -> str:
    """A relationship's or href's target as a part name (relative to ``part``'s folder; "/..." from the root)."""
    target = unquote(target.split("#", 1)[0])
    if target.startswith("/"):
        return posixpath.normpath(target.lstrip("/"))
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(part), target))
    return joined.lstrip("/") if not joined.startswith("..") else joined


def local(tag: object) -> str:
    """An XML tag or attribute name without its namespace (Strict and Transitional OOXML differ only there)."""
    text = tag if isinstance(tag, str) else ""
    return text.rsplit("}", 1)[-1]


def attr(element: XmlElement, name: str) -> str | None:
    """An attribute by its local name, whatever its namespace."""
    for key, value in element.attrib.items():
        if local(key) == name:
            return value
    return None


def children(element: XmlElement, name: str) -> Iterator[XmlElement]:
    return (child for child in element if local(child.tag) == name)


def child(element: XmlElement | None, name: str) -> XmlElement | None:
    if element is None:
        return None
    return next(children(element, name), None)


def descendants(element: XmlElement, name: str) -> Iterator[XmlElement]:
    return (node for node in element.iter() if local(node.tag) == name)


def core_properties(archive: Archive) -> dict[str, str]:
    """Title and author from ``docProps/core.xml``, when present and not blank."""
    try:
        root = archive.xml("docProps/core.xml")
    except TooLargeError:
        raise  # over a limit is a refusal, whichever part went over it
    except LoadError:
        return {}  # damaged properties lose the title, not the document
    if root is None:
        return {}
    found = {}
    for key, tag in (("title", "title"), ("author", "creator")):
        node = child(root, tag)
        value = " ".join((node.text or "").split()) if node is not None else ""
        if value:
            found[key] = value
    return found


def _joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:100]
    return text or type(exc).__name__
