"""The readers' benchmark's word measure, as RESULTS.md states it: the same labels and the same piece rule for every
reader (benchmarks/parsers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

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
