"""CSV and TSV: the raw file text, with one table element and a row element per data row.

The text stays what the file says (so a splitter can cut it by rows and repeat
the header), and each row's span covers its source line(s), line breaks inside
quoted fields included.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import PurePath

from core.errors import CorruptDocumentError, EmptyDocumentError
from core.limits import DEFAULT_LIMITS
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import DecodedTextLoader, add_warning, line_spans, make_document, text_metadata
from core.schema import Document, Element

# Enough lines for the sniffer to see the pattern, small enough to keep it fast.
_SNIFF_CHARS = 4096
_DELIMITERS = ",;\t|"

# csv refuses a field over 131,072 characters by default (a guard for unbounded streams); the whole text is in
# memory, so a cell may be as long as the character limit allows. (csv's limit is process-wide: only raised.)
csv.field_size_limit(max(csv.field_size_limit(), DEFAULT_LIMITS.max_text_chars))


@LOADERS.register
@dataclass(frozen=True)
class CsvLoader(DecodedTextLoader):
    """Delimited tables: the delimiter is sniffed (tab for .tsv when unsure, else comma)."""

    name = "csv"
    summary = "CSV/TSV (.csv, .tsv): the file text, a table element and one element per row."
    extensions = FORMAT_EXTENSIONS["csv"]

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        text, encoding, warning, replaced = self.decode(data, file_name)
        delimiter = sniff_delimiter(text, default="\t" if PurePath(file_name).suffix.lower() == ".tsv" else ",")
        rows = _rows_with_spans(text, delimiter, file_name)
        if not rows:
            raise EmptyDocumentError(file_name, "has no rows")
        (header_fields, header_start, header_end), body = rows[0], rows[1:]
        last_end = rows[-1][2]
        table = Element(
            "table",
            header_start,
            last_end,
            attrs={"header": text[header_start:header_end], "header_end": header_end, "delimiter": delimiter},
        )
        elements = [table, *(Element("table_row", start, end) for _, start, end in body)]

        metadata = text_metadata(file_name, "csv", encoding, warning, replaced)
        metadata["row_count"] = len(body)
        metadata["columns"] = ",".join(field.strip() for field in header_fields)
        ragged = [number for number, (fields, _, _) in enumerate(body, start=1) if len(fields) != len(header_fields)]
        if ragged:
            shown = ", ".join(str(n) for n in ragged[:10]) + (
                f" and {len(ragged) - 10} more" if len(ragged) > 10 else ""
            )
            add_warning(
                metadata,
                f"data row{'s' if len(ragged) > 1 else ''} {shown} "
                f"{'have' if len(ragged) > 1 else 'has'} a different number of fields than the header ({len(header_fields)})",
            )
        return [make_document(text, metadata, elements)]


def sniff_delimiter(text: str, default: str) -> str:
    """The delimiter csv.Sniffer sees in the first lines, or ``default`` when it cannot tell."""
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # whole lines only
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return default


def _rows_with_spans(text: str, delimiter: str, file_name: str) -> list[tuple[list[str], int, int]]:
    """Every non-blank record with the span of its source line(s), line breaks excluded at the end."""
    lines = line_spans(text)
    # Each line keeps its own line break so quoted fields spanning lines parse as one record.
    source_lines = [
        text[start : lines[i + 1][0]] if i + 1 < len(lines) else text[start:end] for i, (start, end) in enumerate(lines)
    ]
    reader = csv.reader(iter(source_lines), delimiter=delimiter)
    rows = []
    consumed = 0
    try:
        for fields in reader:
            first, consumed = consumed, reader.line_num
            if not fields or not any(field.strip() for field in fields):
                continue
            rows.append((fields, lines[first][0], lines[consumed - 1][1]))
    except csv.Error as exc:
        raise CorruptDocumentError(file_name, f"is not valid CSV near line {reader.line_num} ({exc})") from None
    return rows
