"""JSON and JSON Lines: one text field per record, the record's other fields kept with its element.

Records are the items of a top-level array, the lines of a ``.jsonl`` file, or
the items of the first field of a top-level object that holds an array of
objects (``{"data": [...]}``); any other top-level object is one record, and a
record that is a plain string is its own text. The text field is
``text_field`` (a dotted path such as ``body.text`` reaches into nested
objects); left empty, it is the first field of the first record whose value is
a string of at least 20 characters (else that record's longest string field).

The document's text is the records' texts, exactly as they are in the file,
joined by a blank line. Each record is a ``paragraph`` element whose span is
exactly its text field, and whose ``attrs`` hold ``record`` (its 1-based place
in the file) and ``fields`` (the record's other top-level fields). Records
without the text field, or whose value there is not a string with some text,
are skipped and counted in ``load_warning``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from core.errors import CorruptDocumentError, EmptyDocumentError
from core.loaders.registry import BY_NAME_ONLY, FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import DecodedTextLoader, add_warning, make_document, text_metadata
from core.params import param
from core.schema import Document, Element

RECORD_SEPARATOR = "\n\n"
# A string this long is prose rather than an id, a date or a label.
LONG_STRING = 20
_LINE_FORMATS = (".jsonl", ".ndjson")


@LOADERS.register
@dataclass(frozen=True)
class JsonLoader(DecodedTextLoader):
    """Records of JSON or JSON Lines: one chosen text field per record, the other fields as its metadata."""

    name = "json"
    summary = "JSON/JSONL (.json, .jsonl): one text field per record; the record's other fields kept as metadata."
    extensions = FORMAT_EXTENSIONS["json"]
    folder_extensions = tuple(ext for ext in extensions if ext not in BY_NAME_ONLY)

    text_field: str = param(
        "",
        "The field holding each record's text (a dotted path reaches nested fields); empty picks the first "
        f"string field of {LONG_STRING}+ characters in the first record.",
    )

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        source, encoding, warning, replaced = self.decode(data, file_name)
        lines = PurePath(file_name).suffix.lower() in _LINE_FORMATS
        values, container = (_json_lines(source, file_name), None) if lines else _json_records(source, file_name)
        field_path = self.text_field.strip() or _guess_field(values)
        if not field_path:
            raise EmptyDocumentError(file_name, "has no string field to use as text; set text_field")
        path = field_path.split(".")

        pieces: list[str] = []
        elements: list[Element] = []
        offset = 0
        skipped = 0
        for number, value in enumerate(values, start=1):
            text = value if isinstance(value, str) else _lookup(value, path)
            if not isinstance(text, str) or not text.strip():
                skipped += 1
                continue
            if pieces:
                pieces.append(RECORD_SEPARATOR)
                offset += len(RECORD_SEPARATOR)
            pieces.append(text)
            fields = {key: item for key, item in value.items() if key != path[0]} if isinstance(value, dict) else {}
            elements.append(
                Element("paragraph", offset, offset + len(text), attrs={"record": number, "fields": fields})
            )
            offset += len(text)
        if not elements:
            raise EmptyDocumentError(file_name, f"has no record with text in the field {field_path!r}")

        metadata = text_metadata(file_name, "jsonl" if lines else "json", encoding, warning, replaced)
        metadata["text_field"] = field_path
        metadata["record_count"] = len(elements)
        if container:
            metadata["records_from"] = container
        if skipped:
            add_warning(
                metadata,
                f"skipped {skipped} record{'s' if skipped > 1 else ''} without text in the field {field_path!r}",
            )
        return [make_document("".join(pieces), metadata, elements)]


def _json_records(source: str, file_name: str) -> tuple[list[Any], str | None]:
    """The records of a JSON file, and the field they came from when they sit inside a top-level object."""
    value = _parse(source, file_name, "")
    if isinstance(value, list):
        return value, None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, list) and item and all(isinstance(entry, dict) for entry in item):
                return item, key
        return [value], None
    return [value], None


def _json_lines(source: str, file_name: str) -> list[Any]:
    values = []
    for number, line in enumerate(source.split("\n"), start=1):
        if line.strip():
            values.append(_parse(line, file_name, f" on line {number}"))
    return values


def _parse(source: str, file_name: str, where: str) -> Any:
    try:
        return json.loads(source)
    except json.JSONDecodeError as exc:
        raise CorruptDocumentError(file_name, f"is not valid JSON{where} ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise CorruptDocumentError(file_name, f"has JSON nested too deep to read{where}") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise CorruptDocumentError(file_name, f"is not readable JSON{where} ({exc})") from None


def _guess_field(values: list[Any]) -> str:
    """The first record's first long string field (else its longest string field); "" when it has none."""
    first = next((value for value in values if isinstance(value, dict | str)), None)
    if isinstance(first, str):
        return "text"  # plain-string records are their own text; the name only labels them
    if not isinstance(first, dict):
        return ""
    strings = [(key, item) for key, item in first.items() if isinstance(item, str) and item.strip()]
    if not strings:
        return ""
    long = next((key for key, item in strings if len(item) >= LONG_STRING), None)
    return long if long is not None else max(strings, key=lambda pair: len(pair[1]))[0]


def _lookup(value: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
