"""AppTest: the Evaluate page says which documents are in the pool, lets the user choose, and checks an uploaded
queries file at once (a missing excerpt is an error before any run, a repeated one a warning with its count)."""

from __future__ import annotations

import json

import apptest_support
from apptest_support import shown
from streamlit.testing.v1 import AppTest

from ui.documents import sample_files

PAGE = "pages/5_Evaluate.py"
GUIDE_EXCERPT = "Start with an overlap of 10 to 15 percent of the chunk size."


def open_page() -> AppTest:
    return apptest_support.open_page(PAGE, timeout=300)


def upload_queries(at: AppTest, entries: list[dict], *, bom: bool = False) -> AppTest:
    data = (b"\xef\xbb\xbf" if bom else b"") + json.dumps(entries).encode()
    at.file_uploader(key="eval.queries_file").set_value([("mine.json", data, "application/json")]).run()
    assert not at.exception, at.exception
    return at


def test_the_pool_lists_the_loaded_documents_marks_the_samples_and_can_be_narrowed():
    at = open_page()
    pool = at.multiselect(key="eval.pool")
    names = [path.name for path in sample_files()]
    assert pool.value == names  # every loaded document, by default
    assert "chunking_guide.md (sample)" in pool.format_func("chunking_guide.md")
    assert any(
        f"**{len(names)} of {len(names)}** loaded documents, {len(names)} of them sample" in c.value for c in at.caption
    )
    pool.set_value(["chunking_guide.md"]).run()
    assert not at.exception, at.exception
    captions = [shown(c.value) for c in at.caption]
    assert f"Retrieval searches **1 of {len(names)}** loaded documents, 1 of them sample documents." in captions
    # The sample queries about release_notes.txt leave the pool with it.
    assert "**10 of 14 sample queries** have their document loaded; 4 will be skipped." in captions


def test_a_missing_excerpt_is_reported_on_upload_before_any_run():
    at = open_page()
    entries = [
        {"query": "overlap?", "doc": "chunking_guide.md", "excerpts": [GUIDE_EXCERPT]},
        {"query": "limits?", "doc": "chunking_guide.md", "excerpts": ["a sentence the guide never says"]},
    ]
    upload_queries(at, entries, bom=True)  # the BOM is accepted
    (error,) = at.error
    assert "Fix the queries file" in error.value
    assert "query 2: an excerpt does not occur in chunking" in shown(error.value)
    assert "eval.run" not in [button.key for button in at.button]
    assert not any("Run the evaluation" in info.value for info in at.info)  # the page stopped before the run


def test_a_repeated_excerpt_and_a_misspelt_document_are_warnings_and_the_page_goes_on():
    at = open_page()
    entries = [
        {"query": "chunks?", "doc": "chunking_guide.md", "excerpts": ["chunk"]},
        {"query": "overlap?", "doc": "chunking_gide.md", "excerpts": [GUIDE_EXCERPT]},
    ]
    upload_queries(at, entries)
    (warning,) = [w for w in at.warning if "occurs" in w.value]
    text = shown(warning.value)
    assert "query 1: an excerpt occurs" in text and "times in chunking_guide.md" in text
    assert "1 query names 'chunking_gide.md', which is not loaded (did you mean 'chunking_guide.md'?)" in text
    assert not at.error
    assert any("Run the evaluation" in info.value for info in at.info)
