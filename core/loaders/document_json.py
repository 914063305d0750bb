"""Documents as plain JSON and back, checked field by field: the document cache's entries.

:func:`document_from_json` accepts only what :func:`document_to_json` writes (types, spans inside the
text), so a damaged or planted entry is refused with :class:`Damaged` (a ValueError), never half-read.
"""

from __future__ import annotations

from typing import Any

from core.schema import Document, Element, NodeRelationship, Page


def document_to_json(document: Document) -> dict[str, Any]:
    return {
        "text": document.text,
        "id": document.id,
        "metadata": document.metadata,
        "excluded_llm_metadata_keys": document.excluded_llm_metadata_keys,
        "excluded_embed_metadata_keys": document.excluded_embed_metadata_keys,
        "metadata_template": document.metadata_template,
        "metadata_separator": document.metadata_separator,
        "text_template": document.text_template,
        "relationships": {NodeRelationship(key).value: value for key, value in document.relationships.items()},
        "elements": [[e.kind, e.start_char, e.end_char, e.level, e.page, e.attrs] for e in document.elements],
        "pages": [[p.number, p.label, p.start_char, p.end_char] for p in document.pages],
        "markup": document.markup,
    }


class Damaged(ValueError):
    """An entry whose JSON is not what :func:`document_to_json` writes."""


def expect(value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise Damaged(f"expected {kind.__name__}, found {type(value).__name__}")
    return value


def _int(value: Any) -> int:
    # A bool is an int to isinstance; a span or a page number never is one.
    if isinstance(value, bool):
        raise Damaged("expected int, found bool")
    return expect(value, int)


def _optional_int(value: Any) -> int | None:
    return None if value is None else _int(value)


def _strings(value: Any) -> list[str]:
    return [expect(item, str) for item in expect(value, list)]


def _span(start: Any, end: Any, length: int) -> tuple[int, int]:
    start, end = _int(start), _int(end)
    if not 0 <= start <= end <= length:
        raise Damaged(f"span {start}:{end} outside a text of {length} characters")
    return start, end


def document_from_json(data: Any) -> Document:
    """A Document from :func:`document_to_json`'s output; anything else raises ``Damaged``."""
    data = expect(data, dict)
    text = expect(data["text"], str)
    elements = []
    for row in expect(data["elements"], list):
        kind, start, end, level, page, attrs = expect(row, list)
        start, end = _span(start, end, len(text))
        elements.append(
            Element(expect(kind, str), start, end, _optional_int(level), _optional_int(page), expect(attrs, dict))
        )
    pages = []
    for row in expect(data["pages"], list):
        number, label, start, end = expect(row, list)
        start, end = _span(start, end, len(text))
        pages.append(Page(_int(number), expect(label, str), start, end))
    relationships: dict[NodeRelationship, str | list[str]] = {}
    for key, value in expect(data["relationships"], dict).items():
        relationships[NodeRelationship(key)] = _strings(value) if isinstance(value, list) else expect(value, str)
    markup = data["markup"]
    return Document(
        text=text,
        id=expect(data["id"], str),
        metadata=expect(data["metadata"], dict),
        excluded_llm_metadata_keys=_strings(data["excluded_llm_metadata_keys"]),
        excluded_embed_metadata_keys=_strings(data["excluded_embed_metadata_keys"]),
        metadata_template=expect(data["metadata_template"], str),
        metadata_separator=expect(data["metadata_separator"], str),
        text_template=expect(data["text_template"], str),
        relationships=relationships,
        elements=elements,
        pages=pages,
        markup=None if markup is None else expect(markup, str),
    )
