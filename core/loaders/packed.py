"""Documents packed for the trip from a bounded child to the server: a few flat buffers, not 150,000 objects.

A loaded document can hold a structure element per heading or paragraph. Pickled as
objects, a Markdown file with 150,000 headings took the server 1.2 s of ``pickle.loads``,
one C call that holds the interpreter lock the whole time, so no other session (not even
``/_stcore/health``) ran meanwhile. Packed, each column of the elements and pages is one
``array`` of integers or one list of interned strings: unpickling is a copy of a few
buffers (milliseconds), and the objects are built in a Python loop, which lets the
server's other threads run every few milliseconds. ``unpack(pack(documents)) == documents``.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from core.schema import Document, Element, Page

# None in an integer column (a heading level, a page number); every real value is >= 0.
_NONE = -1
# The Document fields packed as columns; every other field travels as it is.
_COLUMNS = ("elements", "pages")


def _ints(values: Sequence[int | None]) -> array:
    column = array("q", (_NONE if value is None else value for value in values))
    if any(value < 0 for value in values if value is not None):
        raise ValueError("a negative position or number cannot be packed")
    return column


def _optional(values: array) -> list[int | None]:
    return [None if value == _NONE else value for value in values]


def pack(documents: Sequence[Document]) -> list[dict[str, Any] | Document]:
    """``documents`` as plain fields, their elements and pages as columns (a document whose numbers are not
    plain non-negative ints travels as it is)."""
    packed: list[dict[str, Any] | Document] = []
    for document in documents:
        try:
            packed.append(_pack_one(document))
        except (TypeError, ValueError, OverflowError):
            packed.append(document)
    return packed


def _pack_one(document: Document) -> dict[str, Any]:
    plain = {f.name: getattr(document, f.name) for f in fields(document) if f.name not in _COLUMNS}
    elements = document.elements
    plain["elements"] = (
        [element.kind for element in elements],
        _ints([element.start_char for element in elements]),
        _ints([element.end_char for element in elements]),
        _ints([element.level for element in elements]),
        _ints([element.page for element in elements]),
        # Most elements have no attrs: only the others travel, by position.
        {index: element.attrs for index, element in enumerate(elements) if element.attrs},
    )
    pages = document.pages
    plain["pages"] = (
        _ints([page.number for page in pages]),
        [page.label for page in pages],
        _ints([page.start_char for page in pages]),
        _ints([page.end_char for page in pages]),
    )
    return plain


def unpack(packed: Sequence[dict[str, Any] | Document]) -> list[Document]:
    """The documents :func:`pack` was given, equal to them."""
    documents = []
    for plain in packed:
        if isinstance(plain, Document):
            documents.append(plain)
            continue
        kinds, starts, ends, levels, pages, attrs = plain["elements"]
        elements = [
            Element(kind, start, end, level, page, attrs.get(index, {}))
            for index, (kind, start, end, level, page) in enumerate(
                zip(kinds, starts, ends, _optional(levels), _optional(pages), strict=True)
            )
        ]
        numbers, labels, page_starts, page_ends = plain["pages"]
        page_list = list(map(Page, numbers, labels, page_starts, page_ends))
        documents.append(Document(**{**plain, "elements": elements, "pages": page_list}))
    return documents
