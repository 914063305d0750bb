"""Tables as they are drawn (issue #44.2), on PDFs generated here with fpdf2: a frame around the page is no
table, a table nested in another's cell stays a table, text running on past a cell's edge stays with its label,
a merged cell leaves the columns it spans empty, and a header row too long to repeat in ``table_header`` does
not refuse the split."""

from __future__ import annotations

import io

import pdfplumber
import pytest
from fpdf import FPDF
from hypothesis import given, settings
from hypothesis import strategies as st

from core.loaders import load_bytes

BUDGET = (("District", "Budget"), ("North", "1.20"), ("South", "3.40"))
BUDGET_MARKDOWN = "| District | Budget |\n| --- | --- |\n| North | 1.20 |\n| South | 3.40 |"


def ruled_table(pdf: FPDF, rows: tuple[tuple[str, ...], ...], x: float, y: float, width: float, height: float) -> None:
    """``rows`` drawn as a ruled table, its top left corner at (``x``, ``y``), each cell ``width`` by ``height``."""
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            pdf.rect(x + c * width, y + r * height, width, height)
            pdf.text(x + c * width + 4, y + r * height + height - 6, cell)


def framed_page(*, bands: bool = True) -> bytes:
    """An A4 page inside a frame (a rectangle around the text area), a running head and a page number set off by
    rules across the frame (``bands``), and paragraphs around a ruled table."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.rect(36, 36, 523, 770)
    if bands:
        pdf.line(36, 60, 559, 60)
        pdf.line(36, 780, 559, 780)
    pdf.text(40, 52, "Harbour council annual report")
    pdf.text(72, 80, "Quarterly report of the harbour council")
    pdf.text(72, 100, "The table below lists the budget per district.")
    ruled_table(pdf, BUDGET, 72, 120, 150, 20)
    pdf.text(72, 200, "Closing words after the table.")
    pdf.text(40, 796, "Page 1")
    return bytes(pdf.output())


def structured(data: bytes):
    (document,) = load_bytes(data, "generated.pdf", parser="pdfplumber")
    return document


# -- a frame around the page ------------------------------------------------------------------


def test_pdfplumber_takes_a_banded_page_frame_for_a_table_holding_the_page() -> None:
    """The defect: the frame and its rules are three cells of one table, the real table inside one of them."""
    with pdfplumber.open(io.BytesIO(framed_page())) as pdf:
        frame, table = pdf.pages[0].find_tables()
    assert frame.bbox == (36, 36, 559, 806)
    assert len(frame.rows) == 3
    assert table.extract() == [list(row) for row in BUDGET]


def test_a_frame_around_the_page_is_no_table_and_the_table_inside_it_is_found() -> None:
    for bands in (True, False):
        document = structured(framed_page(bands=bands))
        assert document.text == (
            "Harbour council annual report\n\nQuarterly report of the harbour council\n\n"
            f"The table below lists the budget per district.\n\n{BUDGET_MARKDOWN}\n\n"
            "Closing words after the table.\n\nPage 1"
        )
        assert [e.kind for e in document.elements if e.kind == "table"] == ["table"]


def test_a_table_as_large_as_the_page_is_still_a_table() -> None:
    rows = (("Station", "Line", "Opened"), *((f"Stop {n}", f"L{n % 3}", str(1900 + n)) for n in range(1, 20)))
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    ruled_table(pdf, rows, 40, 40, 170, 38)
    document = structured(bytes(pdf.output()))
    (table,) = [e for e in document.elements if e.kind == "table"]
    assert table.attrs["header"] == "| Station | Line | Opened |"
    assert document.text.endswith("| Stop 19 | L1 | 1919 |")


LEFT_COLUMN = (
    "The harbour council met on the third of March to settle the budget for the coming year. The members "
    "heard the reports of both districts, weighed the cost of the new quay against the repairs the old one "
    "needs, and asked the treasurer for figures on the ferry service before the vote."
)
RIGHT_COLUMN = (
    "The vote was carried by seven to two. The new quay will be built in two stages, the first this summer, "
    "and the ferry will keep its winter timetable. The next meeting is set for the first of June, when the "
    "treasurer will report on the first stage."
)


def framed_columns_page(*, bands: bool, table: bool = False) -> bytes:
    """A letter page inside a frame split down the middle by a column rule, the text set in its two columns;
    with ``bands``, a running head and a page number set off by rules across the frame; with ``table``, a ruled
    table and a closing line in the left column after its text."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.rect(36, 36, 540, 720)
    top, bottom = (60, 730) if bands else (36, 756)
    if bands:
        pdf.line(36, top, 576, top)
        pdf.line(36, bottom, 576, bottom)
        pdf.text(40, 52, "Harbour council gazette")
        pdf.text(40, 746, "Page 3")
    pdf.line(306, top, 306, bottom)
    for x, text in ((48, LEFT_COLUMN), (318, RIGHT_COLUMN)):
        pdf.set_xy(x, top + 12)
        pdf.multi_cell(246, 12.5, text, align="J")
    if table:
        ruled_table(pdf, BUDGET, 48, 200, 100, 20)
        pdf.text(48, 290, "The figures are in millions.")
    return bytes(pdf.output())


def test_a_page_frame_split_by_a_column_rule_is_no_table_and_its_columns_are_read_in_turn() -> None:
    for bands in (True, False):
        document = structured(framed_columns_page(bands=bands))
        expected = f"{LEFT_COLUMN}\n\n{RIGHT_COLUMN}"
        assert document.text == (f"Harbour council gazette\n\n{expected}\n\nPage 3" if bands else expected)
        assert not [e for e in document.elements if e.kind == "table"]


def test_a_table_in_a_column_of_a_split_frame_is_read_in_that_column() -> None:
    document = structured(framed_columns_page(bands=True, table=True))
    assert document.text == (
        f"Harbour council gazette\n\n{LEFT_COLUMN}\n\n{BUDGET_MARKDOWN}\n\nThe figures are in millions.\n\n"
        f"{RIGHT_COLUMN}\n\nPage 3"
    )


# -- a table nested in another's cell ---------------------------------------------------------

LINE_ITEMS = (("Item", "Qty", "Price"), ("Bolts", "40", "0.25"), ("Nuts", "40", "0.10"), ("Washers", "80", "0.05"))
LINE_ITEMS_MARKDOWN = (
    "| Item | Qty | Price |\n| --- | --- | --- |\n| Bolts | 40 | 0.25 |\n| Nuts | 40 | 0.10 |\n| Washers | 80 | 0.05 |"
)


def nested_page() -> bytes:
    """An invoice: a two-column ruled table whose second row's right cell holds a label and a ruled line-item
    table, then a paragraph."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.text(72, 80, "Invoice 2026-114")
    x, y, left, right = 72.0, 100.0, 120.0, 330.0
    heights = (20.0, 130.0, 20.0)
    cells = (("Field", "Value"), ("Lines", "Ordered:"), ("Total", "18.00"))
    top = y
    for (label, value), height in zip(cells, heights, strict=True):
        pdf.rect(x, top, left, height)
        pdf.rect(x + left, top, right, height)
        pdf.text(x + 4, top + 14, label)
        pdf.text(x + left + 4, top + 14, value)
        top += height
    ruled_table(pdf, LINE_ITEMS, x + left + 20, y + 20 + 26, 90, 20)
    pdf.text(72, top + 30, "Payable within thirty days.")
    return bytes(pdf.output())


def test_pdfplumber_reads_the_nested_table_into_its_cell_and_again_alone() -> None:
    with pdfplumber.open(io.BytesIO(nested_page())) as pdf:
        outer, inner = pdf.pages[0].find_tables()
    assert outer.extract()[1][1].startswith("Ordered:\nItem Qty Price\nBolts 40 0.25")
    assert inner.extract() == [list(row) for row in LINE_ITEMS]


def test_a_nested_table_is_kept_as_a_table_after_the_one_holding_it_with_a_note_in_its_cell() -> None:
    document = structured(nested_page())
    outer = "| Field | Value |\n| --- | --- |\n| Lines | Ordered: (nested table below) |\n| Total | 18.00 |"
    assert document.text == f"Invoice 2026-114\n\n{outer}\n\n{LINE_ITEMS_MARKDOWN}\n\nPayable within thirty days."
    first, second = [e for e in document.elements if e.kind == "table"]
    assert "nesting_depth" not in first.attrs
    assert (second.attrs["nested_in_row"], second.attrs["nested_in_column"], second.attrs["nesting_depth"]) == (2, 2, 1)
    assert second.attrs["header"] == "| Item | Qty | Price |"
    rows = [e for e in document.elements if e.kind == "table_row" and second.start_char <= e.start_char]
    assert [document.text[e.start_char : e.end_char] for e in rows] == LINE_ITEMS_MARKDOWN.split("\n")[2:]


def test_two_tables_in_one_cell_are_read_after_it_top_to_bottom_and_the_cell_names_both() -> None:
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.rect(72, 100, 120, 200)
    pdf.rect(192, 100, 330, 200)
    pdf.text(76, 114, "Lines")
    pdf.text(196, 114, "Two lists:")
    ruled_table(pdf, LINE_ITEMS, 210, 200, 90, 18)  # drawn first, set lower
    ruled_table(pdf, BUDGET, 210, 130, 90, 20)
    document = structured(bytes(pdf.output()))
    outer = "| Lines | Two lists: (nested table below) (nested table below) |\n| --- | --- |"
    assert document.text == f"{outer}\n\n{BUDGET_MARKDOWN}\n\n{LINE_ITEMS_MARKDOWN}"
    tables = [e for e in document.elements if e.kind == "table"]
    assert [e.attrs.get("nested_in_row") for e in tables] == [None, 1, 1]


# -- text in a cell's outline kept with its label ----------------------------------------------


def form_page(*, value_column: bool, name_at: float = 112) -> bytes:
    """A form of three ruled rows whose first row is only a label box ("Name : "), the rest of that row open on
    the right; the name, a text object of its own set at ``name_at`` (from inside the label box, it runs on past
    the box's edge; at 176, it is set in the open part). With ``value_column`` the lower rows have a label column
    and a value column (the open part of the first row is a grid position no ruled cell starts at); without it
    each lower row is one cell across the form."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.text(72, 80, "Application form")
    for y in (100, 120, 140, 160):
        pdf.line(72, y, 472, y)
    pdf.line(72, 100, 72, 160)
    pdf.line(172, 100, 172, 160 if value_column else 120)
    pdf.line(472, 120, 472, 160)
    pdf.text(76, 114, "Name : ")
    pdf.text(name_at, 114, "Dhananjay Kumar Sharma")
    for y, label, value in ((134, "Date :", "12 March 1990"), (154, "City :", "Pune")):
        pdf.text(76, y, label)
        pdf.text(176 if value_column else 112, y, value)
    pdf.text(72, 190, "Signed by the applicant.")
    return bytes(pdf.output())


def test_pdfplumber_cuts_a_value_running_on_past_its_label_box_mid_word() -> None:
    """The defect: only the characters whose centre is in the label box are the cell's."""
    with pdfplumber.open(io.BytesIO(form_page(value_column=False))) as pdf:
        (table,) = pdf.pages[0].find_tables()
        assert table.extract()[0] == ["Name : Dhananjay K"]


def test_text_running_on_past_a_cells_edge_into_no_cell_stays_with_its_label() -> None:
    document = structured(form_page(value_column=False))
    assert document.text == (
        "Application form\n\n"
        "| Name : Dhananjay Kumar Sharma |\n| --- |\n| Date : 12 March 1990 |\n| City : Pune |\n\n"
        "Signed by the applicant."
    )


def test_text_running_on_past_a_cells_edge_does_not_fill_the_unruled_position_beside_it() -> None:
    document = structured(form_page(value_column=True))
    assert document.text == (
        "Application form\n\n"
        "| Name : Dhananjay Kumar Sharma |  |\n| --- | --- |\n| Date : | 12 March 1990 |\n| City : | Pune |\n\n"
        "Signed by the applicant."
    )


def test_text_set_apart_from_a_cells_text_in_the_unruled_position_beside_it_stays_there() -> None:
    """Only text drawn across the edge runs on: a value set after the rule, as in a ruled cell, half an em or
    more from the label's end, is that position's own."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for y in (100, 120, 140):
        pdf.line(72, y, 472, y)
    pdf.line(72, 100, 72, 140)
    pdf.line(172, 100, 172, 140)
    pdf.line(472, 120, 472, 140)
    label = "Applicant's name:"
    pdf.text(169 - pdf.get_string_width(label), 114, label)
    pdf.text(176, 114, "Dhananjay")
    pdf.text(76, 134, "Date :")
    pdf.text(176, 134, "12 March 1990")
    document = structured(bytes(pdf.output()))
    assert document.text == "| Applicant's name: | Dhananjay |\n| --- | --- |\n| Date : | 12 March 1990 |"


def test_a_value_set_in_the_open_part_of_a_labels_row_is_read_with_the_label() -> None:
    """With no grid position there for it, the value is the label's: it used to be read after the table."""
    document = structured(form_page(value_column=False, name_at=176))
    assert document.text.startswith("Application form\n\n| Name : Dhananjay Kumar Sharma |\n| --- |\n")


def test_a_value_set_in_an_unruled_grid_position_fills_that_position() -> None:
    document = structured(form_page(value_column=True, name_at=176))
    assert document.text.startswith("Application form\n\n| Name : | Dhananjay Kumar Sharma |\n| --- | --- |\n")


def test_text_running_on_past_a_tables_outline_stays_in_its_cell() -> None:
    """A value longer than the form is wide runs on past its right rule: the rule cuts no word either."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    ruled_table(pdf, (("Name : Dhananjay Kumar Sharma",), ("Date : 12 March 1990",)), 72, 100, 150, 20)
    pdf.text(72, 180, "Signed by the applicant.")
    document = structured(bytes(pdf.output()))
    assert document.text == (
        "| Name : Dhananjay Kumar Sharma |\n| --- |\n| Date : 12 March 1990 |\n\nSigned by the applicant."
    )


def address_form(*, value_column: bool) -> bytes:
    """A form whose first row is an "Address :" box two lines high, the address set in two lines beside it (the
    row open on the right, or a grid position with ``value_column``), then a ruled row across the form."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for y in (100, 134, 154):
        pdf.line(72, y, 472, y)
    pdf.line(72, 100, 72, 154)
    pdf.line(172, 100, 172, 154 if value_column else 134)
    pdf.line(472, 134, 472, 154)
    pdf.text(76, 114, "Address :")
    pdf.text(176, 114, "12 Harbour Road, North District,")
    pdf.text(176, 128, "Pune 411001")
    pdf.text(76, 148, "Phone :")
    pdf.text(176, 148, "020 555 0199")
    return bytes(pdf.output())


def test_a_value_set_in_two_lines_beside_its_label_is_read_whole_with_it() -> None:
    """The second line has no label before it on its line: it follows the first, right under it."""
    document = structured(address_form(value_column=False))
    assert document.text == (
        "| Address : 12 Harbour Road, North District, Pune 411001 |\n| --- |\n| Phone : 020 555 0199 |"
    )
    document = structured(address_form(value_column=True))
    assert document.text == (
        "| Address : | 12 Harbour Road, North District, Pune 411001 |\n| --- | --- |\n| Phone : | 020 555 0199 |"
    )


@pytest.mark.parametrize("name_at", [112, 176])
@pytest.mark.parametrize("value_column", [True, False])
def test_every_word_of_a_form_is_read_once_in_one_piece(value_column: bool, name_at: float) -> None:
    data = form_page(value_column=value_column, name_at=name_at)
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        page_words = sorted(w["text"] for w in pdf.pages[0].extract_words())
    words = [w for w in structured(data).text.split() if w not in {"|", "---"}]
    assert sorted(words) == page_words


# -- a table open at its outer edges ---------------------------------------------------------------

CARS = (
    ("", "mpg", "cyl", "hp", "carb"),
    ("Mazda RX4", "21.0", "6", "110", "4"),
    ("Datsun 710", "22.8", "4", "93", "1"),
)


def open_sided_table(*, label_rules: bool = True) -> bytes:
    """The table of tabula-py's data.pdf (R's mtcars): horizontal rules across the full width, vertical rules only
    between the inner columns, none at the outer edges, so the row labels and the last column have no rule on
    their outer side. Without ``label_rules`` the horizontal rules stop at the inner grid too."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.text(72, 80, "Motor cars")
    starts = (72, 172, 222, 272, 322)  # where each column starts; the last one ends at 472
    left, right, inner = starts[0], 472, starts[1:]
    for r in range(len(CARS) + 1):
        y = 100 + 20 * r
        pdf.line(left if label_rules else inner[0], y, right if label_rules else inner[-1], y)
    for x in inner:
        pdf.line(x, 100, x, 100 + 20 * len(CARS))
    for r, row in enumerate(CARS):
        for c, text in enumerate(row):
            pdf.text(starts[c] + 4, 100 + 20 * r + 14, text)
    pdf.text(72, 180, "After the table.")
    return bytes(pdf.output())


def test_pdfplumber_finds_only_the_inner_grid_of_a_table_open_at_its_outer_edges() -> None:
    """The defect: the lines strategy needs a vertical rule on both sides of a cell, so the row labels and the
    last column fall out of the table (and used to be written after it, as one run)."""
    with pdfplumber.open(io.BytesIO(open_sided_table())) as pdf:
        (table,) = pdf.pages[0].find_tables()
        assert table.extract()[1] == ["21.0", "6", "110"]


def test_the_row_labels_and_last_column_of_a_table_open_at_its_outer_edges_stay_in_their_rows() -> None:
    """The text left and right of the inner grid, in the bands of rules that run on past it, belongs to the rows."""
    document = structured(open_sided_table())
    assert document.text == (
        "Motor cars\n\n"
        "|  | mpg | cyl | hp | carb |\n| --- | --- | --- | --- | --- |\n"
        "| Mazda RX4 | 21.0 | 6 | 110 | 4 |\n| Datsun 710 | 22.8 | 4 | 93 | 1 |\n\n"
        "After the table."
    )


def test_text_beside_a_grid_whose_rules_stop_at_it_stays_out_of_the_table() -> None:
    """With no rule running on past the grid there is no row band to read the text beside it into: it stays
    running text, read after the table (unchanged)."""
    document = structured(open_sided_table(label_rules=False))
    assert document.text == (
        "Motor cars\n\n"
        "| mpg | cyl | hp |\n| --- | --- | --- |\n| 21.0 | 6 | 110 |\n| 22.8 | 4 | 93 |\n\n"
        "carb\n\nMazda RX4 4\n\nDatsun 710 1\n\nAfter the table."
    )


# -- merged cells spanning columns ----------------------------------------------------------------


def spanning_page() -> bytes:
    """A ruled table as Word draws merged cells: "Q1" spans two columns, its name centred over the rule between
    them; "Region" and "Total" span the two header rows; "All" spans the first two columns of the last row."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    width, height = 90.0, 20.0

    def cell(column: int, row: int, text: str, columns: int = 1, rows: int = 1) -> None:
        x, y = 72 + column * width, 100 + row * height
        pdf.rect(x, y, columns * width, rows * height)
        pdf.text(x + (columns * width - pdf.get_string_width(text)) / 2, y + rows * height / 2 + 4, text)

    cell(0, 0, "Region", rows=2)
    cell(1, 0, "Q1", columns=2)
    cell(3, 0, "Total", rows=2)
    cell(1, 1, "Jan")
    cell(2, 1, "Feb")
    for row, values in enumerate((("North", "10", "12", "22"), ("South", "7", "9", "16")), start=2):
        for column, value in enumerate(values):
            cell(column, row, value)
    cell(0, 4, "All", columns=2)
    cell(2, 4, "21")
    cell(3, 4, "38")
    return bytes(pdf.output())


def test_merged_pdf_cells_keep_every_value_under_its_header_as_merged_word_cells_do() -> None:
    """The columns a merged cell spans are left empty, as in a DOCX table (test_docx_completeness): each value is
    in the column of its header, every row as wide as the table."""
    document = structured(spanning_page())
    assert document.text == (
        "| Region | Q1 |  | Total |\n"
        "| --- | --- | --- | --- |\n"
        "|  | Jan | Feb |  |\n"
        "| North | 10 | 12 | 22 |\n"
        "| South | 7 | 9 | 16 |\n"
        "| All |  | 21 | 38 |"
    )
    (table,) = [e for e in document.elements if e.kind == "table"]
    assert table.attrs["columns"] == 4


# -- a header row too long to repeat ------------------------------------------------------------


def test_a_pdf_table_whose_header_row_is_longer_than_a_chunk_splits_with_a_shortened_header() -> None:
    """A ruled table of eight columns of long headers, split into chunks of 160 characters: its header row (217
    characters) used to leave no room ("no room in chunk_size"); the nodes now repeat a shortened one."""
    from core.splitters import get_splitter

    columns = [f"quarterly figure {n} (EUR)" for n in range(1, 9)]
    rows = (tuple(columns), *((*(f"{r}.{c}" for c in range(8)),) for r in range(1, 12)))
    pdf = FPDF(unit="pt", format="A3", orientation="landscape")
    pdf.add_page()
    pdf.set_font("Helvetica", size=8)
    ruled_table(pdf, rows, 30, 40, 140, 16)
    document = structured(bytes(pdf.output()))
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=160, chunk_overlap=0)
    nodes = splitter.split([document])
    headers = {node.metadata.get("table_header") for node in nodes} - {None}
    assert headers == {"| quarterly figure 1 (EUR) | … 7 more columns |"}
    assert all(node.text == document.text[node.start_char : node.end_char] for node in nodes)


# -- the characters a table's boxes hold ------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(
    boxes=st.lists(
        st.tuples(*[st.floats(min_value=-50, max_value=900, allow_nan=False)] * 2, *[st.floats(0, 300)] * 2).map(
            lambda t: (t[0], t[1], t[0] + t[2], t[1] + t[3])
        ),
        max_size=12,
    ),
    points=st.lists(st.tuples(st.floats(-60, 1200), st.floats(-60, 1200)), min_size=1, max_size=20),
)
def test_the_box_index_holds_a_character_exactly_when_one_of_its_boxes_does(boxes, points) -> None:
    """BoxIndex, which checks only the boxes level with a character, answers as checking every box would."""
    from core.loaders.pdf_tables import BoxIndex, center_in

    index = BoxIndex(boxes)
    for x, y in points:
        char = {"x0": x - 2, "x1": x + 2, "top": y - 4, "bottom": y + 4}
        assert index.holds(char) == any(center_in(char, box) for box in boxes)
