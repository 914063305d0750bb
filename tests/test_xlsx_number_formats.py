"""XLSX cells as their number format displays them: the formatter against literal examples, then whole workbooks.

Each example is what Excel shows for the value in that format (its own built-in formats among them); the
workbooks are written here with openpyxl.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_loaders_office import load_one, xlsx

from core.loaders.number_format import display, general

ACCOUNTING = '_("$"* #,##0.00_);_("$"* (#,##0.00);_("$"* "-"??_);_(@_)'


@pytest.mark.parametrize(
    ("value", "number_format", "shown"),
    [
        # General: up to 15 significant digits, never a float's binary tail.
        (6.255519999999999, "General", "6.25552"),
        (0.1 + 0.2, "General", "0.3"),
        (1e20, "General", "1E+20"),
        (512.0, "General", "512"),
        (12.5, 'General" h"', "12.5 h"),
        # Fixed decimals, thousands, scaling, placeholders.
        (6.255519999999999, "0.00", "6.26"),
        (2.5, "0", "3"),  # half away from zero, as Excel rounds
        (1234567.891, "#,##0.00", "1,234,567.89"),
        (1234567.891, "#,##0", "1,234,568"),
        (12345678, '#,##0,,"M"', "12M"),
        # Commas after the decimals scale too: millions and thousands with a decimal.
        (1500000, '0.0,,"M"', "1.5M"),
        (1234567, '#,##0.0,"K"', "1,234.6K"),
        (-2500, '0.0,;(0.0,)', "(2.5)"),
        (42, "00000", "00042"),
        (5551234, "000-0000", "555-1234"),
        (0.5, "#.##", ".5"),
        (3, '0 "kg"', "3 kg"),
        # Percentages and scientific notation.
        (0.1234, "0.0%", "12.3%"),
        (0.5, "0%", "50%"),
        (12345, "0.00E+00", "1.23E+04"),
        (0.000123, "0.00E+00", "1.23E-04"),
        (12345, "##0.0E+0", "12.3E+3"),
        # Sections: negative, zero, text; conditions; currencies; colours.
        (-1234.5, "#,##0.00", "-1,234.50"),
        (-1234.5, "#,##0.00;(#,##0.00)", "(1,234.50)"),
        (-1234.5, '"$"#,##0.00_);[Red]("$"#,##0.00)', "($1,234.50)"),
        (0, '#,##0.00;(#,##0.00);"-"', "-"),
        (1234.5, ACCOUNTING, " $1,234.50 "),
        (150, '[>=100]0" big";0" small"', "150 big"),
        (5, '[>=100]0" big";0" small"', "5 small"),
        (1234.5, "[$€-407] #,##0.00", "€ 1,234.50"),
        ("north", '0;0;0;"Region: "@', "Region: north"),
        ("as typed", "@", "as typed"),
        # Fractions.
        (1.5, "# ?/?", "1 1/2"),
        (0.75, "?/4", "3/4"),
        # Dates and times as the format writes them; the locale's own formats (14, 22) as ISO.
        (dt.datetime(2024, 5, 1, 13, 45, 7), "yyyy-mm-dd hh:mm", "2024-05-01 13:45"),
        (dt.datetime(2024, 5, 1, 13, 45, 7), "dd.mm.yyyy", "01.05.2024"),
        (dt.datetime(2024, 5, 1), "d mmmm yyyy", "1 May 2024"),
        (dt.datetime(2024, 5, 1), "dddd, mmm d, yy", "Wednesday, May 1, 24"),
        (dt.datetime(2024, 5, 1), "mmm-yy", "May-24"),
        (dt.datetime(2024, 5, 1), "[$-409]mmmm d, yyyy;@", "May 1, 2024"),
        (dt.datetime(2024, 5, 1, 13, 45, 7), "mm-dd-yy", "2024-05-01"),
        (dt.datetime(2024, 5, 1, 13, 45, 7), "m/d/yy h:mm", "2024-05-01 13:45"),
        (dt.time(13, 45), "h:mm AM/PM", "1:45 PM"),
        (dt.time(9, 5), "hh:mm", "09:05"),
        (dt.time(0, 5, 59, 600000), "h:mm:ss", "0:06:00"),  # rounded to the second shown
        # Durations: elapsed hours (minutes, seconds) past a day.
        (dt.timedelta(days=10, hours=15, minutes=10, seconds=10), "[hh]:mm:ss", "255:10:10"),
        (dt.timedelta(days=1, hours=2), "[h]:mm", "26:00"),
        (dt.timedelta(minutes=90, seconds=30), "[mm]:ss", "90:30"),
        (dt.timedelta(hours=1, seconds=30.4), "[h]:mm:ss.0", "1:00:30.4"),
        # What is not a number format's business, and formats this cannot read.
        (True, "0.00", "TRUE"),
        (None, "0.00", ""),
        (3.5, "", "3.5"),
        (3.5, "0.0[", "3.5"),
    ],
)
def test_a_value_shows_as_its_format_displays_it(value: object, number_format: str, shown: str) -> None:
    assert display(value, number_format) == shown


@given(st.decimals(min_value=-(10**12), max_value=10**12, places=4, allow_nan=False), st.integers(0, 4))
def test_fixed_decimals_and_thousands_read_back_as_the_value_rounded(value: Decimal, decimals: int) -> None:
    number_format = "#,##0" + ("." + "0" * decimals if decimals else "")
    shown = display(float(value), number_format)
    expected = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-decimals), rounding="ROUND_HALF_UP")
    assert Decimal(shown.replace(",", "")) == expected
    whole = shown.lstrip("-").split(".")[0]
    assert all(len(group) == 3 for group in whole.split(",")[1:])  # grouped by thousands


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_general_keeps_fifteen_significant_digits_and_never_a_binary_tail(value: float) -> None:
    shown = general(value)
    assert float(shown) == float(f"{value:.15g}")
    assert len(shown.replace("-", "").replace(".", "").split("E")[0].lstrip("0")) <= 15


def test_a_workbook_reads_as_excel_shows_it() -> None:
    rows = [
        ["measure", "value", "share", "when", "took"],
        ["throughput", 6.255519999999999, 0.1234, dt.datetime(2024, 5, 1, 13, 45), dt.timedelta(days=10, hours=15)],
        ["revenue", 1234567.891, 0.5, dt.datetime(2024, 12, 6), dt.timedelta(minutes=75)],
    ]
    formats = {"B": "#,##0.00", "C": "0.0%", "D": "d mmm yyyy hh:mm", "E": "[hh]:mm:ss"}
    data = xlsx({"Runs": rows}, formats=formats)
    document = load_one(data, "runs.xlsx")
    assert document.text == (
        "Runs\n\n"
        "| measure | value | share | when | took |\n| --- | --- | --- | --- | --- |\n"
        "| throughput | 6.26 | 12.3% | 1 May 2024 13:45 | 255:00:00 |\n"
        "| revenue | 1,234,567.89 | 50.0% | 6 Dec 2024 00:00 | 01:15:00 |"
    )
