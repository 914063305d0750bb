"""How counts, names, parameters and columns read: short literal examples of each rule."""

from __future__ import annotations

import pandas as pd
import pytest

from core import load
from core.loaders import loader_for
from core.measure.compare import boundary_diff
from core.measure.compare_view import change_column_order, change_rows
from core.params import readable_name
from core.query.chain import StageTrace
from core.query.trace_view import stage_params
from core.schema import Document
from core.splitters import get_splitter
from core.words import counted, page_count
from ui.documents import SAMPLE_DIR


@pytest.mark.parametrize(
    ("n", "word", "written"),
    [(0, "page", "0 pages"), (1, "page", "1 page"), (7, "page", "7 pages"), (16914, "character", "16,914 characters")],
)
def test_a_count_is_plural_unless_one_and_has_thousands_separators(n, word, written):
    assert counted(n, word) == written


def test_a_document_counts_its_pages_in_its_own_unit():
    assert page_count(load(SAMPLE_DIR / "scanned_handbook_page.pdf")[0]) == "1 page"
    assert page_count(load(SAMPLE_DIR / "chunking_in_ten_slides.pptx")[0]) == "10 slides"


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("chunk_overlap", "Chunk overlap"),
        ("pdf", "PDF"),
        ("csv", "CSV"),
        ("html_header", "HTML header"),
        ("ocr", "OCR"),
        ("ocr_language", "OCR language"),
        ("sentence_window", "Sentence window"),
    ],
)
def test_names_read_as_people_write_them(name, label):
    assert readable_name(name) == label


def test_loader_titles_write_formats_in_capitals():
    assert loader_for("guide.pdf").title() == "PDF"
    assert loader_for("table.csv").title() == "CSV"
    assert loader_for("page.html").title() == "HTML"


def test_a_stage_caption_leaves_out_empty_parameters():
    stage = StageTrace(
        name="keyword", params={"required_keywords": ["rag"], "exclude_keywords": []}, nodes_in=[], nodes_out=[]
    )
    assert stage_params(stage) == "required_keywords=['rag']"
    assert stage_params(StageTrace(name="keyword", params={"exclude_keywords": []}, nodes_in=[], nodes_out=[])) == (
        "no parameters"
    )


def test_changed_cut_points_list_every_position_before_the_shift_and_the_text():
    text = "one two three four five six seven eight nine ten " * 4
    document = Document(text=text, metadata={"file_name": "t.txt"})

    def nodes(size):
        return get_splitter("character", chunk_size=size, chunk_overlap=0, separator=" ").split([document])

    rows = [row for label, size in (("B", 40), ("C", 60)) for row in change_rows(label, boundary_diff(nodes(50), nodes(size)), text)]
    assert {"in B", "in C"} <= set(pd.DataFrame(rows).columns)
    frame = pd.DataFrame(rows, columns=change_column_order(["A", "B", "C"]))
    assert list(frame.columns) == ["compared", "change", "in A", "in B", "in C", "shift", "text around the cut"]


def test_what_an_unset_parameter_means_is_declared_with_it():
    semantic = {spec.name: spec for spec in get_splitter("semantic").params()}
    assert semantic["breakpoint_amount"].unset_value is None
    assert semantic["breakpoint_amount"].unset.startswith("the type's default (percentile 95")
    assert (semantic["max_chunk_size"].unset_value, semantic["max_chunk_size"].unset) == (0, "no limit")
    assert "unset" not in semantic["max_chunk_size"].to_json()


def test_the_code_splitter_says_why_prose_overlaps_so_much_and_is_quiet_on_code():
    splitter = get_splitter("code")
    reason = splitter.unsuited_reason(load(SAMPLE_DIR / "chunking_guide.md")[0])
    assert reason is not None and "chunk_lines_overlap (15)" in reason and "max_chars (1,500)" in reason
    assert splitter.unsuited_reason(load(SAMPLE_DIR / "chunk_stats.py")[0]) is None
    assert get_splitter("code", chunk_lines_overlap=2).unsuited_reason(load(SAMPLE_DIR / "chunking_guide.md")[0]) is None
