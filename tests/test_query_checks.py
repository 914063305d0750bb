"""A queries file read and checked before anything is embedded: names, excerpts, JSON errors, the BOM, --strict."""

from __future__ import annotations

import json

import pytest

import core.embed.embedder
from core.cli import evaluate as cli_evaluate
from core.errors import LoadError
from core.evaluation.queries import EvalQuery, decode_queries, load_queries
from core.evaluation.query_checks import check_queries
from core.schema import Document

NOTES = Document(text="Set the overlap to ten percent. The size is 256. The end.", metadata={"file_name": "notes.txt"})


def test_an_unknown_document_name_is_a_warning_naming_it_and_the_closest_loaded_name():
    queries = [
        EvalQuery("q1", "note.txt", ("ten percent",)),
        EvalQuery("q2", "note.txt", ("ten percent",)),
        EvalQuery("q3", "faraway.pdf", ("x",)),
    ]
    check = check_queries([NOTES], queries)
    assert check.errors == []
    assert check.unknown_documents == ["note.txt", "faraway.pdf"]
    assert check.warnings == [
        "2 queries name 'note.txt', which is not loaded (did you mean 'notes.txt'?): left out of the scores",
        "1 query names 'faraway.pdf', which is not loaded: left out of the scores",
    ]


def test_an_excerpt_found_more_than_once_is_a_warning_with_the_count_and_a_missing_one_an_error():
    queries = [
        EvalQuery("q1", "notes.txt", ("The",)),  # "The size", "The end"
        EvalQuery("q2", "notes.txt", ("ten   percent",)),  # once, ignoring whitespace
        EvalQuery("q3", "notes.txt", ("twenty percent",)),
    ]
    check = check_queries([NOTES], queries)
    assert check.warnings == [
        "query 1: an excerpt occurs 2 times in notes.txt: 'The' "
        "(every occurrence counts as reference text, which inflates the scores)"
    ]
    assert check.errors == ["query 3: an excerpt does not occur in notes.txt: 'twenty percent'"]


ENTRY = {"query": "q", "doc": "notes.txt", "excerpts": ["ten percent"]}


def test_a_byte_order_mark_is_accepted():
    raw = b"\xef\xbb\xbf" + json.dumps([ENTRY]).encode()
    assert decode_queries(raw, "q.json") == [EvalQuery("q", "notes.txt", ("ten percent",))]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[{"query": "q",\n  "doc": "unterminated',
            "q.json: is not valid JSON: Unterminated string starting at line 2, column 10",
        ),
        (
            '[{"query": "q",}]',
            "q.json: is not valid JSON: Expecting property name enclosed in double quotes at line 1, column 16",
        ),
    ],
)
def test_a_json_error_gives_the_line_and_the_column_once(text, message):
    with pytest.raises(LoadError) as caught:
        decode_queries(text.encode(), "q.json")
    assert str(caught.value) == message
    assert "at at" not in message


def test_bytes_that_are_not_utf8_are_a_load_error_with_the_position(tmp_path):
    path = tmp_path / "latin.json"
    path.write_bytes(b'[{"query": "caf\xe9"}]')
    with pytest.raises(LoadError, match=r"latin.json: is not UTF-8 text \(byte 0xe9 at position 15\)"):
        load_queries(path)


def test_the_cli_warns_about_a_misspelt_document_and_strict_makes_it_exit_2(tmp_path, sample_docs, capsys, monkeypatch):
    queries = tmp_path / "q.json"
    good = {"query": "overlap?", "doc": "chunking_guide.md", "excerpts": ["Start with an overlap of 10 to 15 percent"]}
    queries.write_text(json.dumps([good, {**good, "doc": "chunking_guid.md"}]))
    corpus = [str(sample_docs / "chunking_guide.md"), "--queries", str(queries), "--mode", "bm25", "--quiet"]
    monkeypatch.setattr(core.embed.embedder, "get_embedder", lambda *a, **k: pytest.fail("the model was loaded"))
    assert cli_evaluate.main(["evaluate", *corpus, "--strict"]) == 2
    err = capsys.readouterr().err
    assert "warning: 1 query names 'chunking_guid.md', which is not loaded (did you mean 'chunking_guide.md'?)" in err
    assert "--strict" in err
    # Without --strict: the run goes on, the warning is on stderr and in the JSON.
    assert cli_evaluate.main(["evaluate", *corpus, "--format", "json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["query_warnings"] == [
        "1 query names 'chunking_guid.md', which is not loaded (did you mean 'chunking_guide.md'?): left out of the scores"
    ]
    assert report["rows"][0]["queries"] == 1 and "chunking_guid.md" in captured.err
