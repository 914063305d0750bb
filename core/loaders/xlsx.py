"""Excel (.xlsx): one page per worksheet, each sheet's used cells as one table.

Read with openpyxl in read-only mode with ``data_only``: a formula cell gives
the value Excel last saved for it (empty if it was never calculated), and no
formula is evaluated, no macro run, no external link loaded. Each worksheet is
a page labelled with the sheet's name, holding a heading with that name and
the sheet as Markdown-like rows whose first non-empty row is the header (see
:mod:`core.loaders.blocks`), unless that row holds only numbers: then the
columns' letters (A, B, C) are the header and every row is data. Empty rows, and empty columns at the edges, are
left out. Charts, pictures and chart sheets are not read.

Each value is written as its number format displays it (:mod:`core.loaders.number_format`): "6.26" for
6.255519999999999 under ``0.00``, "12.3%", "1,234.50", a date as its format writes it, a ``[hh]:mm:ss``
duration as "255:10:10"; under General, numbers keep up to 15 significant digits as Excel does, and the
locale's own date formats are ISO dates. Reading each cell's format costs about a third more time than
reading the values alone.

openpyxl reads the whole shared-string table and the sheet list before the
first cell, so those are counted first, without building a tree, and a
workbook with more than ``max_shared_strings`` strings or ``max_sections``
sheets is refused before openpyxl spends its time on them; cells are counted
as openpyxl streams them (``max_cells``).

A workbook whose content list (``[Content_Types].xml``) names a part the zip does not hold (a shared-strings
part, when the sheets keep their strings inline) is read without it, and the note names the part: openpyxl
opens every part the list names and would refuse the whole file.
"""

from __future__ import annotations

import re
import warnings
import zipfile
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from core.errors import CorruptDocumentError, EmptyDocumentError, LoadError, TooLargeError
from core.loaders.archive import Archive, ZipLoader, attr, children, core_properties
from core.loaders.blocks import BlockText
from core.loaders.number_format import display
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import add_warning, make_document
from core.params import param
from core.schema import Document


@LOADERS.register
@dataclass(frozen=True)
class XlsxLoader(ZipLoader):
    """Excel workbooks: one page per sheet, the sheet's cells as a table with its first row as header."""

    name = "xlsx"
    summary = "Excel (.xlsx): one page per sheet, cells as table rows (saved values; no formula or macro runs)."
    extensions = FORMAT_EXTENSIONS["xlsx"]
    format_label = "a .xlsx file"
    counted_elements = {"si": ("shared strings", "max_shared_strings"), "sheet": ("sheets", "max_sections")}

    # Sheets can declare far more cells than they store, and openpyxl fills gaps with empty cells.
    # openpyxl reads some 50,000 cells a second here: 300,000 cells are about 6 s of work.
    max_cells: int = param(
        300_000, "Refuse workbooks with more cells than this (empty cells within the used rows count).", ge=1,
        le=100_000_000, advanced=True,
    )  # fmt: skip

    def read_archive(self, archive: Archive, data: bytes) -> list[Document]:
        file_name = archive.file_name
        if archive.find("xl/workbook.xml") is None and archive.find("[Content_Types].xml") is None:
            raise CorruptDocumentError(file_name, "is not a .xlsx file (it has no workbook)")
        archive.refuse_entity_declarations()
        # openpyxl costs ~20 us a cell: stored cells are counted first, at C speed, so an oversized
        # sheet is refused in a second instead of after minutes (gaps openpyxl fills count below).
        archive.budget.bound("c", "cells", "max_cells", self.max_cells)
        for part in _parts_openpyxl_reads(archive):
            archive.count(part)
        data, missing = _without_missing_parts(archive, data)
        try:
            sheets = self._sheets(data, file_name)
        except LoadError:
            raise
        except Exception as exc:  # openpyxl raises many kinds of errors on damaged files
            text = " ".join(str(exc).split())[:100]
            raise CorruptDocumentError(
                file_name, f"is not a readable .xlsx file ({type(exc).__name__}: {text})"
            ) from None
        out = BlockText()
        hidden = []
        for title, state, rows in sheets:
            out.start_page(title)
            out.add(title, "heading", level=1)
            out.add_table(rows, attrs={"sheet": title})
            if state != "visible":
                hidden.append(title)
        text, elements, pages = out.result()
        if not any(e.kind == "table" for e in elements):
            raise EmptyDocumentError(file_name, "has no cells with values")
        metadata: dict[str, Any] = {"file_name": file_name, "file_type": "xlsx", "page_count": len(pages)}
        metadata["page_unit"] = "sheet"
        metadata.update(core_properties(archive))
        if missing:
            add_warning(
                metadata, f"its content list names a part the file does not hold ({', '.join(missing)}): read without it"
            )
        if hidden:
            add_warning(metadata, f"hidden sheet{'s' if len(hidden) > 1 else ''} {', '.join(hidden)} read anyway")
        note = archive.active_content_note()
        if note:
            add_warning(metadata, note)
        return [make_document(text, metadata, elements, pages)]

    def _sheets(self, data: bytes, file_name: str) -> list[tuple[str, str, list[list[str]]]]:
        from openpyxl import load_workbook  # imported on first use: most sessions never open a workbook

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # openpyxl warns about every extension it does not read
            book = load_workbook(BytesIO(data), read_only=True, data_only=True, keep_vba=False, keep_links=False)
            try:
                sheets = []
                budget = self.max_cells
                for sheet in book.worksheets:
                    # The declared dimensions may be absurd: read only the cells the sheet stores.
                    sheet.reset_dimensions()
                    rows: list[list[str]] = []
                    numeric: list[bool] = []
                    for cells in sheet.iter_rows():
                        budget -= max(len(cells), 1)
                        if budget < 0:
                            raise TooLargeError(
                                file_name,
                                f"has more than {self.max_cells:,} cells (limit: max_cells={self.max_cells:,}); "
                                "refused before reading the rest",
                            )
                        rows.append([display(cell.value, cell.number_format) for cell in cells])
                        numeric.append(_all_numbers(tuple(cell.value for cell in cells)))
                    sheets.append((sheet.title, sheet.sheet_state, _table(rows, numeric)))
                return sheets
            finally:
                book.close()


def _parts_openpyxl_reads(archive: Archive) -> list[str]:
    """The parts openpyxl reads, found as it finds them: the workbook (its sheet list) and the shared
    strings by content type (and at their usual names), then the worksheets the workbook relates."""
    workbooks, strings = {"xl/workbook.xml"}, {"xl/sharedStrings.xml"}
    types = archive.xml("[Content_Types].xml")
    for override in children(types, "Override") if types is not None else ():
        content_type, name = attr(override, "ContentType") or "", attr(override, "PartName") or ""
        if name and content_type.endswith(".main+xml"):
            workbooks.add(name.lstrip("/"))
        elif name and content_type.endswith("sharedStrings+xml"):
            strings.add(name.lstrip("/"))
    sheets = {
        target
        for workbook in workbooks
        for kind, target in archive.relationships(workbook).values()
        if kind == "worksheet"
    }
    return sorted(workbooks) + sorted(strings - workbooks) + sorted(sheets - workbooks - strings)


_OVERRIDE = re.compile(rb"<(?:\w+:)?Override\b[^>]*/>")
_PART_NAME = re.compile(rb"""PartName\s*=\s*["']/?([^"']*)["']""")


def _without_missing_parts(archive: Archive, data: bytes) -> tuple[bytes, list[str]]:
    """The workbook as openpyxl can open it, and the parts its content list names that the zip does not hold.

    openpyxl opens the shared strings where ``[Content_Types].xml`` says they are and raises KeyError when the
    part is missing, though sheets that keep their strings inline are readable without it (xlsx2csv's
    formatted_inline_string.xlsx). Such a workbook is copied, every part as it is, with those names left out of
    its content list. A part present under another case is not missing (openpyxl still fails on it).
    """
    listed_name = archive.find("[Content_Types].xml")
    listed = archive.read(listed_name) if listed_name else None
    if listed is None:
        return data, []
    missing: list[str] = []

    def drop_missing(match: re.Match[bytes]) -> bytes:
        name = _PART_NAME.search(match.group())
        part = name.group(1).decode("utf-8", "replace") if name else ""
        if not part or archive.find(part) is not None:
            return match.group()
        missing.append(part)
        return b""

    repaired = _OVERRIDE.sub(drop_missing, listed)
    if not missing:
        return data, []
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as copy:
        for name in archive.names:
            copy.writestr(name, repaired if name == listed_name else archive.read(name) or b"")
    return out.getvalue(), missing


def _table(rows: list[list[str]], numeric: list[bool]) -> list[list[str]]:
    """Rows without empty ones, and without the empty columns at the left and right edges; the first
    row is the header, unless it holds only numbers (``numeric``, per row): numbers are data, not column
    names, so the columns are then named as the sheet names them (A, B, C)."""
    kept = [index for index, row in enumerate(rows) if any(cell.strip() for cell in row)]
    if not kept:
        return []
    first = min(next(i for i, cell in enumerate(rows[k]) if cell.strip()) for k in kept)
    last = max(max(i for i, cell in enumerate(rows[k]) if cell.strip()) for k in kept)
    table = [rows[k][first : last + 1] for k in kept]
    if numeric[kept[0]]:
        from openpyxl.utils import get_column_letter

        table.insert(0, [get_column_letter(column + 1) for column in range(first, last + 1)])
    return table


def _all_numbers(values: tuple[object, ...]) -> bool:
    """Whether a row's non-empty cells are all numbers (a bool is TRUE/FALSE, not a number here)."""
    filled = [value for value in values if value is not None and value != ""]
    return bool(filled) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in filled)
