"""The readers' benchmark's word measure, as RESULTS.md states it: the same labels and the same piece rule for every
reader (benchmarks/parsers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import parser_checks  # noqa: E402
import parsers  # noqa: E402


def test_a_peers_piece_of_a_word_the_reader_read_is_not_counted_but_a_word_read_nowhere_is():
    # pdfminer draws "Water Definition" as "W", "ater", "Def", "inition": "ater" and "inition" are pieces of words
    # the reader read; "spatial" is a word the reader has only in part ("spat"), so it counts against it.
    best = {"water", "ater", "inition", "spatial", "definition"}
    assert parsers.coverage({"water", "definition", "spat"}, best) == round(2 / 3, 3)
    assert parsers.coverage(best, best) == 1.0
    assert parsers.coverage(set(), {"water"}) == 0.0
    assert parsers.coverage({"water"}, set()) == 1.0


def test_readers_labels_are_not_words_of_the_file():
    markitdown = (
        "<!-- Slide number: 1 -->\n![Picture 4](Picture4.jpg)\n![monty-truth.png](Picture2.jpg)\n"
        "### Chart: Sales\n\n| Category | Q1 |\n|---|---|\n| Bar | None |\n\n[unsupported chart]"
    )
    assert parsers.words(markitdown) == {"monty", "truth", "sales", "bar"}
    llamaindex = (
        "Chart: COLUMN_CLUSTERED (51) chart titled 'Sales'. Value axis: Revenue. Series 'Q1': Bar=2. "
        "Series 'Q1' Range: 1.00 to 2.00, Average: 1.50. Note: Values extraction failed for series \"Q2\""
    )
    assert parsers.words(llamaindex) == {"sales", "revenue", "bar"}


def test_cell_recall_reads_markdown_rows_and_compares_letters_and_digits():
    text = "Intro\n\n| | Indonesia 🇮🇩 | Germany |\n| --- | --- | --- |\n| Population | 273.879.7501 | 83,190,5562 |"
    expected = [parser_checks.normalized(c) for c in ("Indonesia", "Germany", "Population", "273.879.750¹", "Berlin")]
    assert parser_checks.cell_recall(expected, text) == 0.8
    assert parser_checks.cell_recall(expected, "no table here") is None
    # A cell written once is found once: two expected "Europe" cells need two.
    assert parser_checks.cell_recall(["europe", "europe"], "| Europe | x |") == 0.5


def test_the_expected_cells_are_ours_and_name_fetched_files():
    expected = parser_checks.expected_cells()
    assert expected["pypdf-7.1.1/resources__example.pdf"][:5] == ["indonesia", "germany", "austria", "france", "vatican"]
    assert all(file.startswith("pypdf-7.1.1/") for file in expected)


def test_word_error_rate_counts_substitutions_insertions_and_deletions():
    assert parser_checks.word_error_rate("the cat sat on the mat", "The cat, sat on the mat.") == 0.0
    assert parser_checks.word_error_rate("the cat sat on the mat", "the bat sat on mat") == round(2 / 6, 4)
    assert parser_checks.word_error_rate("a b", "a x b y") == 1.0


def test_the_simulated_scan_is_an_image_only_page_of_our_own_text():
    from io import BytesIO

    from pypdf import PdfReader

    text = parser_checks.known_text(60)
    assert text.startswith("Retrieval-augmented generation (RAG) answers a question in two steps.")
    reader = PdfReader(BytesIO(parser_checks.scan_pdf(text)))
    assert len(reader.pages) == 1 and reader.pages[0].extract_text() == ""
