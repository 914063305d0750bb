"""Home (app.py) through AppTest: what the documents page shows and does."""

from __future__ import annotations

import pytest
from apptest_support import shown
from streamlit.testing.v1 import AppTest

from ui.documents import sample_files

TIMEOUT = 180


@pytest.fixture
def home() -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    return at


def table_names(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["Document"])


def test_first_visit_opens_with_every_sample_loaded(home: AppTest) -> None:
    expected = [path.name for path in sample_files()]
    assert len(expected) >= 5
    assert table_names(home) == expected
    assert f"Loaded documents · {len(expected)}" in [h.value for h in home.subheader]
    table = home.dataframe[0].value
    assert list(table.columns[:5]) == ["Document", "Type", "Pages", "Characters", "Tokens"]
    pdf = table[table["Document"] == "rag_handbook.pdf"].iloc[0]
    assert pdf["Type"] == "pdf" and int(pdf["Pages"]) > 1 and pdf["Tokens"] > 0


def test_removing_a_document_takes_its_row_away(home: AppTest) -> None:
    before = table_names(home)
    home.multiselect(key="remove_pick").set_value(["release_notes.txt"]).run()
    next(b for b in home.button if b.label == "Remove").click().run()
    after = table_names(home)
    assert after == [name for name in before if name != "release_notes.txt"]


def test_a_file_that_fails_shows_its_reason_and_the_others_stay(home: AppTest) -> None:
    before = table_names(home)
    home.file_uploader[0].set_value(
        [
            ("empty.md", b"   \n", "text/markdown"),
            ("notes.txt", b"Chunking cuts text. Overlap repeats a little of it.", "text/plain"),
        ]
    ).run()
    assert not home.exception
    assert table_names(home) == [*before, "notes.txt"]
    page_text = " ".join(m.value for m in home.markdown)
    assert "empty.md" in page_text
    assert "whitespace" in page_text  # the LoadError's sentence, beside the name


def test_the_samples_are_offered_only_while_some_are_missing(home: AppTest) -> None:
    assert not [b for b in home.button if "sample" in b.label.lower()]
    assert any("Every sample is loaded" in s.value for s in home.success)
    home.multiselect(key="remove_pick").set_value(["release_notes.txt"]).run()
    next(b for b in home.button if b.label == "Remove").click().run()
    count = len(table_names(home))
    next(b for b in home.button if b.label == "Load the 1 missing sample").click().run()
    assert len(table_names(home)) == count + 1


def test_the_config_in_the_link_is_read_and_bad_values_are_reported() -> None:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params["splitter"] = "character"
    at.query_params["chunk_size"] = "300"
    at.query_params["chunk_overlap"] = "lots"
    at.run()
    assert not at.exception
    config = at.session_state["cs_config"]
    assert config.splitter.name == "character"
    assert config.splitter.chunk_size == 300
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert "chunk_overlap" in warnings


def test_the_chunks_page_opens_on_the_file_just_uploaded(home: AppTest) -> None:
    text = "Uploaded last. It should be the document the Chunks page shows first."
    home.file_uploader[0].set_value([("mine.txt", text.encode(), "text/plain")]).run()
    home.switch_page("pages/1_Chunks.py").run()
    assert not home.exception
    assert home.sidebar.selectbox(key="chunks.doc").value.startswith("mine.txt")
    assert any(text in block.value for block in home.code)


@pytest.mark.parametrize(
    "bad_upload",
    [b"", b"   \n\t  "],
    ids=["empty", "whitespace-only"],
)
def test_a_failed_upload_keeps_the_loaded_document_of_the_same_name(home: AppTest, bad_upload: bytes) -> None:
    good = b"Chunking cuts text into nodes. Overlap repeats a little of it."
    home.file_uploader[0].set_value([("notes.txt", good, "text/plain")]).run()
    before = table_names(home)
    assert "notes.txt" in before

    home.file_uploader[0].set_value([("notes.txt", bad_upload, "text/plain")]).run()
    assert not home.exception
    assert table_names(home) == before
    kept = next(s for s in home.session_state["cs_sources"] if s.file_name == "notes.txt")
    assert kept.data == good
    # The failure is still reported, and says the earlier file stays.
    page_text = " ".join(shown(m.value) for m in home.markdown)
    assert "notes.txt" in page_text and "kept" in page_text


# Markdown a link may carry: a live off-site link in a key, an image (a beacon) in a value and a splitter name.
PHISH_KEY = "[Your session expired - click to sign in again](http://attacker.example/phish)"
BEACON = "![b](http://attacker.example/beacon.png)"


def rendered_markdown(at: AppTest) -> list[str]:
    """Every warning, error, caption and markdown body on the page, as CommonMark renders it to HTML."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    bodies = [e.value for kind in (at.warning, at.error, at.caption, at.markdown) for e in kind]
    return [md.render(str(body)) for body in bodies]


def test_markdown_in_a_link_shows_as_text_never_as_a_link_or_image() -> None:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params[PHISH_KEY] = "1"
    at.query_params["splitter"] = BEACON
    at.query_params["chunk_size"] = BEACON
    at.run()
    assert not at.exception
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert "Your session expired" in warnings and "beacon" in warnings  # reported ...
    for html in rendered_markdown(at):  # ... but as text
        assert "<a " not in html and "<img" not in html, html


def test_the_uploader_refuses_what_core_refuses_in_the_same_unit(home: AppTest) -> None:
    from core.limits import DEFAULT_LIMITS, MB

    # Streamlit's uploader counts decimal megabytes; core's limit is the same number of them.
    assert home.file_uploader[0].proto.max_upload_size_mb * MB == DEFAULT_LIMITS.max_upload_bytes


def test_a_repaired_upload_says_what_was_replaced_under_the_table(home: AppTest) -> None:
    home.file_uploader[0].set_value(
        [("notes.md", "café naïve, fox 日本 \x00".encode()[:-1] + b"\x81", "text/markdown")]
    ).run()
    assert not home.exception
    notes = [shown(caption.value) for caption in home.caption if caption.value.startswith(":material/info: **notes")]
    assert len(notes) == 1 and "replaced 1 invalid UTF-8 byte" in notes[0]


def test_each_row_says_which_parser_read_the_file_and_what_it_found(home: AppTest) -> None:
    from core.loaders.pdf_ocr import ocr_unavailable_reason

    table = home.dataframe[0].value
    pdf = table[table["Document"] == "rag_handbook.pdf"].iloc[0]
    assert (pdf["Parser"], pdf["Found"]) == ("pypdf", "7 pages")
    guide = table[table["Document"] == "chunking_guide.md"].iloc[0]
    assert guide["Parser"] == "markdown" and "headings" in guide["Found"]
    # Tesseract is installed by `make system-deps` (make test): without it this fails, it does not skip.
    assert ocr_unavailable_reason() is None, ocr_unavailable_reason()
    # The scanned sample has no text layer: the first visit already shows a page read by OCR.
    row = table[table["Document"] == "scanned_handbook_page.pdf"].iloc[0]
    assert row["Parser"] == "pypdf + OCR"
    assert row["Found"].startswith("1 page · 1 OCR page (")
    # The loader's note in full under the table (a column clipped it at 1440 px).
    assert ":material/info: **scanned_handbook_page.pdf**: read by OCR (mean word confidence): page 1 (96%)" in [
        shown(caption.value) for caption in home.caption
    ]
    assert "Notes" not in table.columns


def test_the_cli_reads_the_same_samples_the_app_opens_with(sample_docs) -> None:
    """One meaning of "the samples": `chunkscope query sample_docs` loads exactly the app's documents."""
    from core.config import PipelineConfig
    from core.documents import load_documents

    loaded = sorted(str(document.metadata["file_name"]) for document in load_documents([sample_docs], PipelineConfig()))
    assert loaded == sorted(path.name for path in sample_files())
    assert "README.md" not in loaded and "rag_handbook.md" not in loaded


def test_under_make_run_the_model_loads_in_the_background_once_per_process(monkeypatch) -> None:
    import threading

    import core.embed.embedder as embedder_module
    from ui import cache

    loaded = threading.Event()
    monkeypatch.setattr(embedder_module, "get_embedder", lambda *args: loaded.set())
    monkeypatch.setattr(cache, "_preload_started", threading.Event())
    monkeypatch.delenv(cache.PRELOAD_ENV, raising=False)
    assert cache.preload_embedder() is False  # tests and plain `streamlit run` load it when a page needs it
    monkeypatch.setenv(cache.PRELOAD_ENV, "1")
    assert cache.preload_embedder() is True
    assert loaded.wait(10)
    assert cache.preload_embedder() is False  # once per process
