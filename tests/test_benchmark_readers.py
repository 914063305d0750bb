"""The readers' benchmark's word measure, as RESULTS.md states it: the same labels and the same piece rule for every
reader (benchmarks/parsers.py)."""

from __future__ import annotations

import sys
from collections import Counter
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
    # markitdown's pandas writes "NaN" for an empty cell of a sheet; a cell's own "NaNs" is a word.
    assert parsers.words("| Name | Value |\n|---|---|\n| NaN | 3 |\n| NaNs | NaN |") == {"name", "value", "nans"}
    assert parsers.words("| Unnamed: 0 | Total |\n|---|---|\n| a | 3 |") == {"total"}
    assert parsers.words("Unnamed: 0  Unnamed: 1\n0  Total") == {"total"}  # LlamaIndex's pandas, not a table


def test_cell_recall_reads_markdown_rows_and_compares_letters_and_digits():
    text = "Intro\n\n| | Indonesia 🇮🇩 | Germany |\n| --- | --- | --- |\n| Population | 273.879.7501 | 83,190,5562 |"
    expected = [parser_checks.normalized(c) for c in ("Indonesia", "Germany", "Population", "273.879.750¹", "Berlin")]
    assert parser_checks.cell_recall(expected, text) == 0.8
    assert parser_checks.cell_recall(expected, "no table here") is None
    # A cell written once is found once: two expected "Europe" cells need two.
    assert parser_checks.cell_recall(["europe", "europe"], "| Europe | x |") == 0.5


def test_a_projects_expected_csv_gives_its_cells_as_compared():
    # tabula-py's campaign_donors.csv: pandas' empty index header, a quoted cell with a comma; xlsx2csv's -a output
    # names each sheet on a line of its own, which is no cell.
    text = '"",Apellido,Importe\n"",MENA,"$ 10.000,00"\n-------- 2 - Hoja 2\nx,,y\n'
    assert parser_checks.csv_cells(text) == ["apellido", "importe", "mena", "1000000", "x", "y"]


def test_the_projects_expected_outputs_name_pinned_documents_and_their_csvs():
    import reader_fixtures

    for project, outputs in reader_fixtures.EXPECTED_OUTPUTS.items():
        assert project in reader_fixtures.SDISTS and ".csv" in reader_fixtures.MORE_SUFFIXES[project]
        assert all(output.endswith(".csv") and not document.endswith(".csv") for document, output in outputs.items())
    assert set(reader_fixtures.RULED_OUTPUTS["tabula-py"]) <= set(reader_fixtures.EXPECTED_OUTPUTS["tabula-py"])
    assert reader_fixtures.cached_name("tabula_py-2.10.0/tests/resources/data.pdf") == "tests__resources__data.pdf"


def test_glyphs_drawn_over_themselves_are_found_and_real_words_are_not():
    text = (
        "Total 300218300218300218300218 and 333300000000222211118888 TToottaall, totaltotal; murmur couscous "
        "bookkeeper 2020 ______ xxxxxx 1100 MM/DD/YYYY YYYYMMDD 00:00:00"
    )
    assert parser_checks.repeated_glyphs(text) == [
        "300218300218300218300218", "333300000000222211118888", "TToottaall", "totaltotal"
    ]  # fmt: skip


def test_a_row_again_right_after_itself_is_found_also_without_its_decimal_points():
    text = "| Gross total | 1.250,5 |\n|---|---|\n| Gross total | 12505 |\n| 0 | 0 |\n| 0 | 0 |\nOne line\n\nOther line"
    assert parser_checks.doubled_rows(text) == ["| Gross total | 12505 |"]
    assert parser_checks.corruptions(text) == {"doubled rows": ["| Gross total | 12505 |"]}
    assert parser_checks.corruptions("Nothing wrong here") == {}


def test_a_doubled_row_counts_where_the_reader_writes_it_more_often_than_every_peer():
    flat = parser_checks.normalized("Gross total 1.250,5 Gross total 12505 Net 3 Net 3")
    once, twice = parser_checks.normalized("Gross total 1250,5 Net 3"), parser_checks.normalized("Net 3 | Net 3")
    rows = ["Gross total 12505", "Net 3"]
    assert parser_checks.doubled_beyond_peers(rows, flat, [once]) == rows
    assert parser_checks.doubled_beyond_peers(rows, flat, [once, twice]) == ["Gross total 12505"]
    assert parser_checks.doubled_beyond_peers(rows, flat, []) == rows


def test_a_word_read_backwards_is_the_one_read_in_fewer_files():
    # Candidates both ways round: "latot" against a peer's "total", and a peer's "txet" against the reader's "text".
    assert parser_checks.reversed_words({"latot", "text", "level", "word"}, {"total", "txet", "level"}) == [
        "latot", "text"
    ]  # fmt: skip
    seen = Counter({"total": 9, "latot": 1, "text": 12, "txet": 1})
    assert parser_checks.backwards("latot", seen) and not parser_checks.backwards("text", seen)
    # Read in as many files: the way round that reads more like English prose wins.
    assert parser_checks.backwards("noitalupop", Counter()) and not parser_checks.backwards("population", Counter())


def test_a_peers_words_run_together_are_not_counted_against_a_reader():
    found = {"batch", "size", "of", "and", "fitting", "to", "ladder"}
    assert parsers.run_together("abatchsizeof", found) and parsers.run_together("andc", found)
    assert not parsers.run_together("batch", found) and not parsers.run_together("laddr", found)
    assert not parsers.run_together("spatial", {"s", "p", "a", "t", "i", "l"})  # letters are not words
    assert parsers.coverage({"batch", "size", "of"}, {"batch", "size", "of", "abatchsizeof", "spatial"}) == 0.75


def test_markup_and_pdfminers_cid_are_no_words():
    page = (
        "<!DOCTYPE html><html><head><script>var createElement;</script><style>.a{b:c}</style></head>"
        '<body><p class="lead">Hello <b>world</b> (cid:12) <<Шаблон>> a < b</p></body></html>'
    )
    assert parsers.words(page) == {"hello", "world", "шаблон"}


def test_a_finding_is_silent_unless_the_load_warning_names_its_kind():
    findings = {"repeated glyphs": ["TToottaall"], "OCR skipped": ["page 1"]}
    warning = "glyphs drawn over themselves on page 2 (up to 2 times at one position)"
    assert parser_checks.silent(findings, warning) == {"OCR skipped": ["page 1"]}
    assert parser_checks.silent(findings, "") == findings


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


def test_a_watermark_is_a_text_layer_over_the_scan_and_its_words_are_no_ocr_error():
    from io import BytesIO

    from pypdf import PdfReader

    text = parser_checks.known_text(40)
    marked = parser_checks.watermarked(parser_checks.scan_pdf(text), "SCANNED COPY", 64, 0.3)
    assert PdfReader(BytesIO(marked)).pages[0].extract_text().split() == ["SCANNED", "COPY"]
    assert parser_checks.scan_pages(marked) == [1]
    assert parser_checks.without_words("Scanned the copy, copy. words", "SCANNED COPY") == "the words"
