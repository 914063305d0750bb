"""The work one Office or EPUB file may cause, counted while its XML parts are parsed.

A zip of XML is small for what it holds: 277 KB can unpack to 190 MB of empty
paragraphs, millions of elements that each cost parse and walk time, and the
zip-bomb bounds of :mod:`core.loaders.archive` (bytes and entries) pass them. So
each part is parsed as a stream (``iterparse``) and every element is counted as
it arrives, against :class:`~core.limits.Limits`: all elements of the file, and
the kinds a loader names (paragraphs, runs, rows, cells, slides, shared strings).
The first count over its limit stops the parse with a
:class:`~core.errors.TooLargeError` naming the file and the limit, so a hostile
file is refused after at most that much work; the tree built up to then is
bounded by the same counts.

A part's unpacked size is checked from its zip record before any of it is
unpacked: :mod:`zipfile` never returns more bytes than the record declares.
"""

from __future__ import annotations

import pyexpat
from collections.abc import Mapping
from typing import IO
from xml.etree.ElementTree import Element as XmlElement
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from core.errors import CorruptDocumentError, TooLargeError
from core.limits import (
    Limits,
    size_phrase,  # the upload limit's wording, one place
)

# Structure, not size: real Office XML nests a few dozen levels (tables in tables); deeper
# is hostile, and the loaders' walks recurse on some of these levels.
MAX_DEPTH = 256


class XmlBudget:
    """Counts one file's XML elements against ``limits``; ``counted`` maps an element's local
    name to (what it is called in a message, the :class:`Limits` field that bounds it)."""

    def __init__(self, file_name: str, limits: Limits, counted: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.file_name = file_name
        self.limits = limits
        self.elements = 0
        # local name -> [count so far, limit, label, field]
        self._counted = {
            name: [0, getattr(limits, field), label, field] for name, (label, field) in (counted or {}).items()
        }
        self._local_names: dict[str, str] = {}

    def check_part_size(self, part: str, size: int) -> None:
        """Refuse a part that unpacks to more than ``max_xml_part_bytes``, before unpacking it."""
        limit = self.limits.max_xml_part_bytes
        if size > limit:
            raise TooLargeError(
                self.file_name,
                f"has a part {part} that unpacks to {size_phrase(size, limit)}, more than the limit of "
                f"{size_phrase(limit, size)} (max_xml_part_bytes)",
            )

    def bound(self, name: str, label: str, field: str, limit: int) -> None:
        """Count elements named ``name`` against ``limit`` too: a loader's own parameter ``field``."""
        self._counted[name] = [0, limit, label, field]

    def parse(self, stream: IO[bytes], part: str) -> XmlElement:
        """``part`` parsed from ``stream`` into a tree, counted element by element; entities refused."""
        root: XmlElement | None = None
        depth = 0
        local_names, counted = self._local_names, self._counted
        limit = self.limits.max_xml_elements
        try:
            for event, element in iterparse(
                stream, events=("start", "end"), forbid_dtd=False, forbid_entities=True, forbid_external=True
            ):
                if event == "end":
                    depth -= 1
                    continue
                depth += 1
                if root is None:
                    root = element
                self.elements += 1
                if self.elements > limit:
                    raise self._over("XML elements", "max_xml_elements", limit)
                if depth > MAX_DEPTH:
                    raise CorruptDocumentError(
                        self.file_name, f"has XML nested deeper than {MAX_DEPTH} levels in {part}"
                    )
                tag = element.tag
                name = local_names.get(tag)
                if name is None:
                    name = local_names[tag] = tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
                count = counted.get(name)
                if count is not None:
                    count[0] += 1
                    if count[0] > count[1]:
                        raise self._over(count[2], count[3], count[1])
        except DefusedXmlException:
            raise CorruptDocumentError(
                self.file_name, f"has XML entity declarations in {part}, which are refused"
            ) from None
        except (ParseError, ValueError) as exc:
            raise CorruptDocumentError(self.file_name, f"has malformed XML in {part} ({_short(exc)})") from None
        if root is None:
            raise CorruptDocumentError(self.file_name, f"has malformed XML in {part} (no element found)")
        return root

    def count_start_tags(self, markup: str) -> None:
        """Add the elements of markup another reader parses (an EPUB chapter's HTML), counted as its
        start tags, to the file's elements: C-speed counting before the costlier HTML walk."""
        starts = markup.count("<") - markup.count("</") - markup.count("<!") - markup.count("<?")
        self.elements += starts
        if self.elements > self.limits.max_xml_elements:
            raise self._over("XML elements", "max_xml_elements", self.limits.max_xml_elements)

    def count(self, stream: IO[bytes], part: str) -> None:
        """Count ``part``'s named elements without building a tree: for a part a third-party reader
        (openpyxl) parses next, refused before that reader spends its time on it."""
        counted, local_names = self._counted, self._local_names

        def start(tag: str, attributes: object) -> None:
            name = local_names.get(tag)
            if name is None:
                name = local_names[tag] = tag.rsplit("}", 1)[-1]
            count = counted.get(name)
            if count is not None:
                count[0] += 1
                if count[0] > count[1]:
                    raise self._over(count[2], count[3], count[1])

        def refuse(*args: object) -> None:
            raise CorruptDocumentError(self.file_name, f"has XML entity declarations in {part}, which are refused")

        parser = pyexpat.ParserCreate(namespace_separator="}")
        parser.StartElementHandler = start
        parser.EntityDeclHandler = refuse
        parser.ExternalEntityRefHandler = refuse
        try:
            while chunk := stream.read(1 << 16):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
        except pyexpat.ExpatError as exc:
            raise CorruptDocumentError(self.file_name, f"has malformed XML in {part} ({_short(exc)})") from None

    def _over(self, label: str, field: str, limit: int) -> TooLargeError:
        return TooLargeError(
            self.file_name,
            f"has more than {limit:,} {label} (limit: {field}={limit:,}); refused before reading the rest",
        )


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:100]
    return text or type(exc).__name__
