"""The bounded paths: the app's, the CLI's, the batch's and the evaluation's loads and splits (core.documents).

Nodes made in a child equal the in-process ones for every splitter; a split stuck in
a framework, a real polynomial regex, a ballooning split, a hanging load and an
Office file that unpacks to millions of paragraphs are each stopped with a sentence
naming the file; the batch lists its stuck file and goes on; the app remembers a limit.
"""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

import pytest
from test_bounded import GRACE, MB, ROOT, SAMPLES, spin  # the same probes as the mechanism's own tests

from core import documents as documents_module
from core.config import PipelineConfig
from core.documents import bounded as bounded_module
from core.documents import run_split
from core.documents.bounded import load_bounded, load_needs_child, split_bounded, split_needs_child
from core.engines.langchain import LangChainCharacterSplitter
from core.errors import WorkMemoryError, WorkTimeoutError
from core.limits import Limits
from core.loaders import load, load_bytes
from core.schema import Document
from core.splitters import SPLITTERS, get_splitter

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")



# -- the same nodes, and the limits, through the app's, the CLI's and the batch's paths ---------

SPLIT_DOCS = (SAMPLES / "chunking_guide.md", SAMPLES / "vector_search_faq.html")


@pytest.fixture(scope="module")
def sample_documents() -> list[Document]:
    return [document for path in SPLIT_DOCS for document in load(path)]


@pytest.mark.parametrize("name", [name for name in SPLITTERS.names() if not SPLITTERS.get_class(name).embeds_text])
def test_a_split_in_the_child_makes_the_same_nodes(
    name: str, sample_documents: list[Document], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = PipelineConfig(splitter=get_splitter(name))
    if name == "llamaindex.code":  # it refuses a file with no tree-sitter grammar: the Python sample
        sample_documents = load(SAMPLES / "chunk_stats.py")
    expected = run_split(sample_documents, config)
    monkeypatch.setattr(bounded_module, "IN_PROCESS_CHARS", -1)  # every splitter to a child
    monkeypatch.setattr(bounded_module, "LIGHT_IN_PROCESS_CHARS", -1)
    assert split_needs_child(sample_documents, config.splitter)
    assert run_split(sample_documents, config, bounded=True) == expected


def test_a_load_in_the_child_makes_the_same_documents() -> None:
    for path in (
        SAMPLES / "rag_handbook.pdf",
        SAMPLES / "parsing_office_files.docx",
        SAMPLES / "vector_search_faq.html",
    ):
        data = path.read_bytes()
        assert load_needs_child(path.name, len(data))
        assert load_bounded(partial(load_bytes, data, path.name), path.name, len(data)) == load_bytes(data, path.name)


def _spinning_chunks(self, document):  # noqa: ANN001, ANN202 - a stand-in for a framework stuck in its regex
    if "SPIN" in document.text:
        spin()
    return ORIGINAL_CHUNKS(self, document)


ORIGINAL_CHUNKS = LangChainCharacterSplitter.chunks


def test_a_split_stuck_in_a_framework_is_stopped_and_names_the_file_and_splitter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(LangChainCharacterSplitter, "chunks", _spinning_chunks)
    documents = [
        Document(text="fine text", metadata={"file_name": "fine.md"}),
        Document(text="SPIN", metadata={"file_name": "hostile.md"}),
    ]
    config = PipelineConfig(splitter=get_splitter("langchain.character"))
    started = time.monotonic()
    with pytest.raises(WorkTimeoutError) as caught:
        run_split(documents, config, Limits(split_seconds=1), bounded=True)
    assert str(caught.value) == (
        "hostile.md: splitting with langchain.character took longer than the 1 s limit (split_seconds) and was stopped"
    )
    assert time.monotonic() - started < 2 + GRACE  # a second for each document at most


def test_a_real_polynomial_regex_in_langchain_is_stopped_through_the_real_path() -> None:
    # No stand-in: this pattern passes the regex check (polynomial, not exponential), and LangChain's re.split
    # on 20,000 spaces would run for hours holding the GIL. The deadline is what stops it.
    splitter = get_splitter("langchain.character", separator="\\s*\\s*\\s*\\d", is_separator_regex=True)
    document = Document(text="Start. " + " " * 20_000 + "end.", metadata={"file_name": "spaces.txt"})
    started = time.monotonic()
    with pytest.raises(
        WorkTimeoutError, match=r"^spaces.txt: splitting with langchain.character took longer than the 1 s"
    ):
        run_split([document], PipelineConfig(splitter=splitter), Limits(split_seconds=1), bounded=True)
    assert time.monotonic() - started < 1 + GRACE


def test_the_export_pages_check_runs_the_frameworks_regex_in_a_child_stopped_at_the_deadline() -> None:
    # The Export page's "Count the chunks this script changes": LangChain's CharacterTextSplitter runs the user's
    # separator. In the server's process it held the GIL for minutes; bounded, this process runs on meanwhile.
    import threading

    from core.output.export_check import check_export

    splitter = get_splitter("langchain.character", separator="\\s*\\s*\\s*\\d", is_separator_regex=True)
    document = Document(text="Start. " + " " * 20_000 + "end.", metadata={"file_name": "spaces.txt"})
    ticks: list[float] = []
    done = threading.Event()

    def tick() -> None:
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    ticker = threading.Thread(target=tick)
    ticker.start()
    started = time.monotonic()
    try:
        with pytest.raises(WorkTimeoutError) as caught:
            check_export(PipelineConfig(splitter=splitter), [document], "LangChain", nodes=[],
                         limits=Limits(split_seconds=1), bounded=True)
    finally:
        done.set()
        ticker.join()
    assert str(caught.value) == (
        "spaces.txt: running the LangChain script's splitter took longer than the 1 s limit (split_seconds) "
        "and was stopped"
    )
    assert time.monotonic() - started < 1 + GRACE
    # This process's other threads ran all along: no gap between ticks near the deadline's length.
    assert max(b - a for a, b in zip(ticks, ticks[1:], strict=False)) < 0.5


def test_the_bounded_export_check_counts_as_the_in_process_one(sample_documents: list[Document]) -> None:
    from core.output.export_check import check_export

    config = PipelineConfig(splitter=get_splitter("llamaindex.sentence", chunk_size=256, chunk_overlap=32))
    for library in ("LlamaIndex", "LangChain"):
        assert check_export(config, sample_documents, library, bounded=True) == check_export(
            config, sample_documents, library
        )


def test_a_split_that_balloons_stops_at_the_memory_ceiling(monkeypatch: pytest.MonkeyPatch) -> None:
    if not Path("/proc/self/statm").exists():
        pytest.skip("the ceiling is measured from /proc (Linux)")
    monkeypatch.setattr(LangChainCharacterSplitter, "chunks", lambda self, document: [bytearray(800 * MB)])
    document = Document(text="anything", metadata={"file_name": "big.md"})
    with pytest.raises(
        WorkMemoryError, match=r"^big.md: splitting with langchain.character needed more than the 100 MB"
    ):
        split_bounded([document], get_splitter("langchain.character"), Limits(work_memory_mb=100))


def test_a_load_that_hangs_is_stopped_and_names_the_file() -> None:
    with pytest.raises(WorkTimeoutError) as caught:
        load_bounded(spin, "slow.docx", 10, Limits(load_seconds=1))
    assert str(caught.value) == "slow.docx: loading it took longer than the 1 s limit (load_seconds) and was stopped"


def _empty_paragraphs_docx(megabytes: int) -> bytes:
    """A DOCX of a few dozen KB whose document.xml unpacks to ``megabytes`` MB of empty paragraphs."""
    import io
    import zipfile

    main = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    parts = {
        "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships'
        '+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        "_rels/.rels": '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="word/document.xml"/></Relationships>',
        "word/document.xml": f'<?xml version="1.0"?><w:document xmlns:w="{main}"><w:body>'
        "<w:p><w:r><w:t>Title.</w:t></w:r></w:p>" + "<w:p/>" * (megabytes * MB // 6) + "</w:body></w:document>",
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return out.getvalue()


def test_a_small_docx_that_unpacks_to_millions_of_paragraphs_is_refused_not_left_running() -> None:
    # The 277 KB DOCX ran for 300 s at 3 GB. Whichever limit refuses it first (the loader's own
    # element counts, or this ceiling), the refusal names the file and this process never holds the load.
    from core.errors import TooLargeError, WorkLimitError

    data = _empty_paragraphs_docx(60)
    assert len(data) < 200_000
    started = time.monotonic()
    with pytest.raises((WorkLimitError, TooLargeError)) as caught:
        load_bounded(partial(load_bytes, data, "bomb.docx"), "bomb.docx", len(data), Limits(work_memory_mb=300))
    assert str(caught.value).startswith("bomb.docx: ")
    assert time.monotonic() - started < 120


def test_the_cli_split_runs_a_framework_engine_in_a_child(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:
    from core.cli.main import main

    pids = tmp_path / "pids"

    def recording_chunks(self, document):  # noqa: ANN001, ANN202
        with open(pids, "a") as out:
            out.write(f"{os.getpid()} {len(document.text)}\n")
        return ORIGINAL_CHUNKS(self, document)

    monkeypatch.setattr(LangChainCharacterSplitter, "chunks", recording_chunks)
    assert main(["split", str(SPLIT_DOCS[0]), "--splitter", "langchain.character"]) == 0
    assert capsys.readouterr().out.count("\n") >= 1
    calls = [tuple(map(int, line.split())) for line in pids.read_text().splitlines()]
    document_length = len(load(SPLIT_DOCS[0])[0].text)
    # The user's file is split elsewhere; this process at most warms the framework up on a trusted sentence
    # (documents._warm, once per splitter and process: whether it ran here depends on the tests before).
    assert {pid for pid, length in calls if length == document_length} - {os.getpid()}
    assert (os.getpid(), document_length) not in calls


_BATCH_WITH_A_STUCK_FILE = """
import json, re, sys
import core.limits
from core.batch import run_batch
from core.config import PipelineConfig
from core.engines.langchain import LangChainCharacterSplitter
from core.splitters import get_splitter

original = LangChainCharacterSplitter.chunks
def stuck_on_spin(self, document):
    if "SPIN" in document.text:
        re.match(r"(a+)+$", "a" * 48 + "!")
    return original(self, document)

LangChainCharacterSplitter.chunks = stuck_on_spin  # the forked workers inherit it
core.limits.DEFAULT_LIMITS = core.limits.Limits(split_seconds=3)
config = PipelineConfig(splitter=get_splitter("langchain.character", chunk_size=200, chunk_overlap=0))
result = run_batch(sys.argv[1:-1], config, sys.argv[-1], workers=2, part_rows=50)
print(json.dumps({"failed": result.report["failed"], "ok": result.report["corpus"]["files_ok"]}))
"""


def test_batch_lists_the_file_that_hit_the_deadline_and_goes_on(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    stuck = tmp_path / "stuck.md"
    stuck.write_text("# Title\n\nSPIN and more text.\n")
    fine = tmp_path / "fine.md"
    fine.write_text("# Title\n\nA fine paragraph of text.\n")
    done = subprocess.run(
        [sys.executable, "-c", _BATCH_WITH_A_STUCK_FILE, str(stuck), str(fine), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ok"] == 1, report
    assert [(Path(entry["source"]).name, entry["reason"]) for entry in report["failed"]] == [
        (
            "stuck.md",
            "splitting with langchain.character took longer than the 3 s limit (split_seconds) and was stopped",
        )
    ]


def test_the_app_remembers_a_limit_reached_so_a_rerun_does_not_wait_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from ui import cache

    calls = []

    def stuck(documents, splitter, limits=None):  # noqa: ANN001, ANN202 - split_bounded at its deadline
        calls.append(1)
        raise WorkTimeoutError("stuck.md", "splitting with x took longer than the 1 s limit and was stopped")

    monkeypatch.setattr(documents_module, "split_bounded", stuck)
    document = Document(text=f"Text only this test splits: {time.time_ns()}.", metadata={"file_name": "stuck.md"})
    config = PipelineConfig(splitter=get_splitter("langchain.character"))
    for _ in range(2):
        with pytest.raises(WorkTimeoutError, match="^stuck.md: splitting with x took longer than the 1 s limit"):
            cache.run_split_cached([document], config)
    assert len(calls) == 1


def test_the_readme_states_the_work_limits_with_their_units() -> None:
    from core.limits import DEFAULT_LIMITS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = " ".join(readme.split("## Limits and safety\n", 1)[1].split("\n## ", 1)[0].split())
    for stated in (
        f"{DEFAULT_LIMITS.load_seconds:g} seconds of wall clock (`load_seconds`)",
        f"{DEFAULT_LIMITS.split_seconds:g} seconds (`split_seconds`) per document",
        f"{DEFAULT_LIMITS.work_memory_mb:,} MB ({DEFAULT_LIMITS.work_memory_mb * MB:,} bytes; `work_memory_mb`)",
        f"texts over {bounded_module.IN_PROCESS_CHARS:,} characters",
        f"(up to {bounded_module.IN_PROCESS_BYTES:,} bytes)",
    ):
        assert stated in section, stated
