"""Layouts the structure-aware PDF parser used to misread (issue #30.4), on fixtures from
tests/fixtures/make_parser_fixtures.py: table_layouts.pdf (a cross table with an unruled
corner, a table nested in a cell)."""

from __future__ import annotations

from pathlib import Path

import pdfplumber

from core.loaders import load

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TABLES = FIXTURES / "table_layouts.pdf"

CROSS_TABLE = """| size / splitter | character | recursive |
| --- | --- | --- |
| 256 | 0.646 | 0.691 |
| 512 | 0.773 | 0.810 |"""
NESTING_TABLE = """| setting | what it changes |
| --- | --- |
| overlap | tokens recall 0 0.70 |"""


def structured(path: Path):
    (document,) = load(path, parser="pdfplumber")
    return document


def test_pdfplumber_alone_finds_the_nested_table_twice_and_the_corner_in_no_cell() -> None:
    """The defects as pdfplumber's tables show them."""
    with pdfplumber.open(TABLES) as pdf:
        tables = [table.extract() for table in pdf.pages[0].find_tables()]
    assert len(tables) == 3
    assert tables[0][0][0] is None
    assert tables[2] == [["tokens", "recall"], ["0", "0.70"]]


def test_a_nested_table_is_read_once_as_its_cells_text() -> None:
    document = structured(TABLES)
    assert [e.kind for e in document.elements if e.kind in ("table", "heading")] == [
        "heading",
        "table",
        "heading",
        "table",
    ]
    assert document.text.endswith(NESTING_TABLE)
    assert document.text.count("recall") == 1


def test_text_in_an_unruled_corner_of_a_table_fills_that_grid_position() -> None:
    document = structured(TABLES)
    assert CROSS_TABLE in document.text
    assert document.text.count("size / splitter") == 1
    (first, _) = [e for e in document.elements if e.kind == "table"]
    assert first.attrs["header"] == "| size / splitter | character | recursive |"


def test_every_word_on_the_page_is_read_exactly_once() -> None:
    document = structured(TABLES)
    with pdfplumber.open(TABLES) as pdf:
        page_words = sorted(w["text"] for w in pdf.pages[0].extract_words())
    markup = {"|", "---", "#"}
    assert sorted(w for w in document.text.split() if w not in markup) == page_words
