"""AppTest: the Export page's downloads hold the nodes and the config; the snippets and the link match the config."""

from __future__ import annotations

import html
import io
import json
import shlex
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import apptest_support
import pandas as pd
import pytest
from apptest_support import shown
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from core.config import PipelineConfig
from core.documents import run_split
from core.loaders import load
from core.output.snapshot import DEFAULT_VIEWS
from core.schema import MetadataMode, Node
from core.splitters import get_splitter
from ui.export import SNAPSHOT_DOC_KEY, SNAPSHOT_NODES_KEY, differences, share_link

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/6_Export.py"


@pytest.fixture
def downloads(monkeypatch) -> dict[str, bytes]:
    """What the page hands to its download buttons, by file name (captured from Streamlit's media storage)."""
    captured: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def capture(self, path_or_data, mimetype, kind, filename=None):
        if filename and isinstance(path_or_data, bytes):
            captured[filename] = path_or_data
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", capture)
    return captured


def open_page(query: dict[str, str] | None = None) -> AppTest:
    return apptest_support.open_page(PAGE, query)


def sample_nodes(config: PipelineConfig) -> list[Node]:
    """The nodes of every sample document, loaded the way the Home page loads them."""
    from ui.documents import sample_files

    documents = [document for path in sample_files() for document in load(path)]
    return run_split(documents, config)


LINK = {"splitter": "character", "chunk_size": "400", "chunk_overlap": "40", "meta.team": "search"}


def test_node_downloads_hold_one_record_per_node(downloads):
    at = open_page(LINK)
    config = PipelineConfig.from_query_params(LINK)
    expected = sample_nodes(config)
    jsonl = next(data for name, data in downloads.items() if name.endswith(".jsonl"))
    lines = jsonl.decode("utf-8").splitlines()
    assert len(lines) == len(expected)
    first = Node.from_dict(json.loads(lines[0]))
    assert (first.text, first.start_char, first.end_char) == (
        expected[0].text,
        expected[0].start_char,
        expected[0].end_char,
    )
    assert first.metadata["team"] == "search"
    csv = next(data for name, data in downloads.items() if name.endswith(".csv"))
    assert len(pd.read_csv(io.BytesIO(csv))) == len(expected)
    parquet = next(data for name, data in downloads.items() if name.endswith(".parquet"))
    assert pd.read_parquet(io.BytesIO(parquet))["id"].tolist() == [node.id for node in expected]
    documents = len({node.doc_id for node in expected})
    assert documents == 9  # every sample, the scanned page (read by OCR) included
    assert any(f"{len(expected):,} nodes from {documents} documents" in caption.value for caption in at.caption)


def test_config_download_reads_back_as_the_same_config(downloads):
    open_page(LINK)
    config = PipelineConfig.from_json(downloads["chunkscope-config.json"].decode("utf-8"))
    assert config == PipelineConfig.from_query_params(LINK)


def test_the_batch_command_reads_the_downloaded_config_and_writes_the_apps_nodes(downloads, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from core.cli.config import config_from_args
    from core.cli.main import build_parser, main

    at = open_page(LINK)
    local, ray = (shlex.split(code.value) for code in at.code if code.value.startswith("chunkscope batch"))
    assert local[:2] == ["chunkscope", "batch"] and ray == [*local, "--engine", "ray"]
    config_name = local[local.index("--config") + 1]
    assert config_name in downloads  # the very file the configuration's download button hands over
    # The command as a person runs it: the download saved in the working folder, DOCS/ holding a sample document.
    monkeypatch.chdir(tmp_path)
    (tmp_path / config_name).write_bytes(downloads[config_name])
    (tmp_path / "DOCS").mkdir()
    shutil.copy(ROOT / "sample_docs" / "chunking_guide.md", tmp_path / "DOCS")
    parser = build_parser()
    assert parser.parse_args(ray[1:]).engine == "ray"
    args = parser.parse_args(local[1:])
    assert config_from_args(args) == at.session_state["cs_config"]  # the session's configuration, read back

    assert main([*local[1:], "--workers", "1", "--quiet"]) == 0
    rows = pq.read_table(tmp_path / args.out / "nodes").to_pylist()
    app_nodes = [
        json.loads(line) for line in next(d for n, d in downloads.items() if n.endswith(".jsonl")).splitlines()
    ]
    expected = [node for node in app_nodes if node["metadata"]["file_name"] == "chunking_guide.md"]
    assert len(rows) == len(expected) > 1
    for row, node in zip(rows, expected, strict=True):
        assert (row["id"], row["text"], row["start_char"], row["end_char"]) == (
            node["id"],
            node["text"],
            node["start_char"],
            node["end_char"],
        )
        assert json.loads(row["metadata"]) == node["metadata"] and node["metadata"]["team"] == "search"


def test_snippets_name_the_splitter_classes_and_say_where_langchain_differs():
    at = open_page({"splitter": "sentence", "chunk_size": "256", "chunk_overlap": "20"})
    llamaindex, langchain = (code.value for code in at.code if code.language == "python")
    assert "SentenceSplitter(" in llamaindex and "chunk_size=256" in llamaindex
    assert "RecursiveCharacterTextSplitter(" in langchain and "chunk_size=256" in langchain
    notes = differences(langchain)
    assert notes, "the LangChain snippet has no exact sentence splitter and says so"
    infos = [shown(info.value) for info in at.info]
    assert any("Where LangChain differs" in text and notes[0] in text for text in infos)


def test_the_shareable_link_and_the_address_bar_hold_the_config():
    at = open_page(LINK)
    link = next(code.value for code in at.code if code.value.startswith("http"))
    parts = urlsplit(link)
    assert parts.path == "/Chunks"
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    assert PipelineConfig.from_query_params(query) == PipelineConfig.from_query_params(LINK)
    # The page's own address carries the same parameters.
    assert {key: at.query_params[key] for key in LINK} == LINK


@pytest.mark.parametrize(
    ("page_url", "expected"),
    [
        ("http://localhost:8501/Export", "http://localhost:8501/Chunks?splitter=token&chunk_size=64"),
        (
            "https://example.org/tools/chunkscope/Export",
            "https://example.org/tools/chunkscope/Chunks?splitter=token&chunk_size=64",
        ),
        (None, "http://localhost:8501/Chunks?splitter=token&chunk_size=64"),
    ],
)
def test_share_link_swaps_this_page_for_the_chunks_page(page_url, expected):
    assert share_link(page_url, {"splitter": "token", "chunk_size": "64"}, this_page="Export") == expected


def test_share_link_escapes_what_a_url_cannot_hold():
    link = share_link(None, {"meta.team": "search & rescue", "view.metadata_separator": "\n"}, this_page="Export")
    assert link.endswith("?meta.team=search%20%26%20rescue&view.metadata_separator=%0A")


def test_a_split_over_the_node_limit_is_refused_not_exported():
    big = ("big.txt", b"word " * 24_000, "text/plain")  # 120,000 characters
    query = {"splitter": "character", "chunk_size": "1", "chunk_overlap": "0"}
    at = apptest_support.open_page(PAGE, query, uploads=[big])
    assert not at.exception
    (error,) = [shown(error.value) for error in at.error]
    assert "more than the limit of 100,000" in error and "raise chunk_size" in error
    # No node files are offered; the config and the code snippets still are.
    assert {button.label for button in at.get("download_button")} == {
        "Download config.json",
        "Download llamaindex_pipeline.py",
        "Download langchain_pipeline.py",
    }


def test_the_snapshot_button_hands_over_the_selected_documents_page(downloads):
    at = open_page(LINK)
    config = PipelineConfig.from_query_params(LINK)
    assert "Snapshot (HTML)" in [button.label for button in at.get("download_button")]
    (name,) = [name for name in downloads if name.endswith("-snapshot.html")]
    page = downloads[name].decode("utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    # The document chosen in the card, every node of it in the source and the table, and the first nodes up close.
    doc_id = at.session_state[SNAPSHOT_DOC_KEY]
    nodes = [node for node in sample_nodes(config) if node.doc_id == doc_id]
    assert name.startswith(nodes[0].metadata["file_name"].rsplit(".", 1)[0])
    assert all(f'id="node-{i}"' in page for i in range(len(nodes)))
    assert html.escape(nodes[0].get_content(MetadataMode.LLM)) in page
    assert at.session_state[SNAPSHOT_NODES_KEY] == [node.id for node in nodes[:DEFAULT_VIEWS]]


def test_the_nodes_picked_for_the_snapshot_are_the_ones_shown_up_close(downloads):
    at = open_page(LINK)
    config = PipelineConfig.from_query_params(LINK)
    nodes = [node for node in sample_nodes(config) if node.doc_id == at.session_state[SNAPSHOT_DOC_KEY]]
    downloads.clear()
    at.multiselect(key=SNAPSHOT_NODES_KEY).set_value([nodes[5].id]).run()
    assert not at.exception
    (page,) = [data.decode("utf-8") for name, data in downloads.items() if name.endswith("-snapshot.html")]
    assert html.escape(nodes[5].get_content(MetadataMode.LLM)) in page
    assert html.escape(nodes[0].get_content(MetadataMode.LLM)) not in page


def test_the_snapshot_carries_the_last_query_trace_when_one_ran(downloads):
    at = apptest_support.open_page("pages/4_Query.py", timeout=240)
    query = at.session_state["query.sample"]
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.checkbox(key="export.snapshot.trace").value
    (page,) = [data.decode("utf-8") for name, data in downloads.items() if name.endswith("-snapshot.html")]
    assert html.escape(query) in page and "Retrieval" in page

    downloads.clear()
    at.checkbox(key="export.snapshot.trace").uncheck().run()
    (page,) = [data.decode("utf-8") for name, data in downloads.items() if name.endswith("-snapshot.html")]
    assert html.escape(query) not in page


def test_a_query_run_with_another_split_is_left_out_of_the_snapshot_and_said_so(downloads):
    at = apptest_support.open_page("pages/4_Query.py", timeout=240)
    query = at.session_state["query.sample"]
    # Another split since the query ran: its trace would sit under this split's header.
    ran = at.session_state["cs_config"] if "cs_config" in at.session_state else PipelineConfig()
    at.session_state["cs_config"] = ran.replace(splitter=get_splitter("sentence", chunk_size=128, chunk_overlap=0))
    at.switch_page(PAGE).run()
    assert not at.exception
    assert not [box for box in at.checkbox if box.key == "export.snapshot.trace"]
    assert any("ran with another configuration" in caption.value for caption in at.caption)
    (page,) = [data.decode("utf-8") for name, data in downloads.items() if name.endswith("-snapshot.html")]
    assert html.escape(query) not in page


def test_a_note_carrying_markdown_is_shown_as_text(monkeypatch):
    # No note quotes a setting a link can carry any more (tests/test_codegen_quoting.py checks every free-text
    # parameter); should one ever, the page still shows it as text. A note made to carry a link and an image:
    from core.translate.snippet import CodeSnippet

    hostile = "[x](https://evil.example) ![i](https://evil.example/i.png)"
    render = CodeSnippet.render

    def render_with_a_hostile_note(self: CodeSnippet) -> str:
        self.note(f"character: {hostile}")
        return render(self)

    monkeypatch.setattr(CodeSnippet, "render", render_with_a_hostile_note)
    at = open_page({"splitter": "character"})
    assert not at.exception
    (llamaindex_info, *_) = [info.value for info in at.info if "Where LlamaIndex differs" in info.value]
    assert "evil" in llamaindex_info
    # No Markdown link or image survives: every bracket is escaped and the URL's "//" is broken up.
    assert "](" not in llamaindex_info and "https://" not in llamaindex_info
    assert "[x]" not in llamaindex_info and "![" not in llamaindex_info
    assert "https://evil.example" in shown(llamaindex_info).replace("\u2060", "")


def test_the_stand_in_counts_the_chunks_it_would_change_when_asked():
    # LlamaIndex's SentenceSplitter has no LangChain equivalent: the LangChain script's stand-in is run and counted.
    query = {"splitter": "llamaindex.sentence", "chunk_size": "512", "chunk_overlap": "200"}
    at = open_page(query)
    assert not [caption for caption in at.caption if "script would change" in caption.value]  # only on demand
    at.multiselect(key="export.docs").set_value([at.session_state["export.docs"][0]]).run()
    at.toggle(key="export.check.LangChain").set_value(True).run()
    at.toggle(key="export.check.LlamaIndex").set_value(True).run()
    assert not at.exception
    captions = [shown(caption.value) for caption in at.caption]
    (langchain,) = [text for text in captions if "The LangChain script" in text]
    (llamaindex,) = [text for text in captions if "The LlamaIndex script" in text]
    assert "would change" in langchain and " of " in langchain
    assert "rebuilds all" in llamaindex  # the call that ran, on the same documents


def test_a_hostile_link_gives_downloaded_scripts_that_run_nothing_it_carries(downloads):
    import ast

    # The attack that planted code: a loader option closing the docstring, and separators and metadata that try.
    hostile = {
        "splitter": "recursive",
        "separators": '["\\"\\"\\"\\nopen(\'/tmp/pwned\', \'w\')\\n#", "\\u2028"]',
        "loader.json.text_field": '"""\nopen(\'/tmp/pwned\', \'w\')\n"""',
        "meta.team": "'''\r\nopen('/tmp/pwned', 'w')",
    }
    at = open_page(hostile)
    assert not at.exception
    for name in ("llamaindex_pipeline.py", "langchain_pipeline.py"):
        tree = ast.parse(downloads[name].decode("utf-8"))
        assert ast.get_docstring(tree).startswith("Reproduces a ChunkScope configuration with")
        called = {
            node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert "open" not in called, name
        texts = {
            node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        assert "\"\"\"\nopen('/tmp/pwned', 'w')\n#" in texts and "'''\r\nopen('/tmp/pwned', 'w')" in texts, name
