"""Work on untrusted input runs where it can be stopped (core.bounded): a deadline, a memory ceiling, the file named.

The slow work here is a backtracking ``re`` match: C code that holds the GIL for as
long as it runs (``(a+)+$`` on 48 a's and a "!" would take years), which is what a
hostile regex inside a framework splitter does to a server's event loop.
"""

from __future__ import annotations

import os
import re
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from core import documents as documents_module
from core.bounded import map_bounded, run_bounded
from core.config import PipelineConfig
from core.documents import (
    load_bounded,
    load_needs_child,
    run_split,
    split_bounded,
    split_needs_child,
)
from core.engines.langchain import LangChainCharacterSplitter
from core.errors import ConfigError, EmptyDocumentError, WorkMemoryError, WorkTimeoutError
from core.limits import Limits
from core.loaders import load, load_bytes
from core.schema import Document
from core.splitters import SPLITTERS, get_splitter

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_docs"
GRACE = 5.0  # seconds a busy shared machine may add to a deadline before the test calls it missed
MB = 1_000_000


def spin() -> None:
    """Backtrack for ever inside ``re``, holding the GIL."""
    re.match(r"(a+)+$", "a" * 48 + "!")


def bounded(work, seconds: float = 1.0, memory_mb: int | None = None, file_name: str = "doc.txt"):  # noqa: ANN001, ANN201
    return run_bounded(work, file_name=file_name, what="working on it", seconds=seconds, memory_mb=memory_mb)


# -- the mechanism ------------------------------------------------------------------------


def test_the_value_is_computed_in_another_process() -> None:
    assert bounded(os.getpid) != os.getpid()
    assert bounded(lambda: "x" * 3_000_000) == "x" * 3_000_000  # beyond a pipe's buffer


def test_an_error_in_the_child_is_raised_here_unchanged() -> None:
    def refuse() -> None:
        raise EmptyDocumentError("empty.txt", "is empty")

    with pytest.raises(EmptyDocumentError) as caught:
        bounded(refuse)
    assert (caught.value.file_name, caught.value.problem, str(caught.value)) == (
        "empty.txt",
        "is empty",
        "empty.txt: is empty",
    )
    with pytest.raises(ConfigError, match="^bad value$"):
        bounded(partial(_raise, ConfigError("bad value")))


def test_a_regex_holding_the_gil_is_stopped_at_the_deadline_while_this_process_runs_on() -> None:
    ticks = []
    stop = threading.Event()

    def tick() -> None:  # another thread of this process: it runs only while the GIL is free
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    started = time.monotonic()
    try:
        with pytest.raises(WorkTimeoutError) as caught:
            run_bounded(
                spin,
                file_name="link.md",
                what="splitting with x",
                seconds=1.0,
                memory_mb=None,
                seconds_name="split_seconds",
            )
    finally:
        stop.set()
        ticker.join()
    waited = time.monotonic() - started
    assert (
        str(caught.value) == "link.md: splitting with x took longer than the 1 s limit (split_seconds) and was stopped"
    )
    assert caught.value.file_name == "link.md"
    assert 1.0 <= waited < 1.0 + GRACE
    assert len([t for t in ticks if started <= t <= started + waited]) >= 20  # the GIL stayed free while waiting


def test_memory_beyond_the_ceiling_stops_the_work() -> None:
    if not Path("/proc/self/statm").exists():
        pytest.skip("the ceiling is measured from /proc (Linux)")
    with pytest.raises(WorkMemoryError) as caught:
        bounded(lambda: len(bytearray(600 * MB)), seconds=60, memory_mb=100, file_name="bomb.docx")
    assert str(caught.value) == (
        "bomb.docx: working on it needed more than the 100 MB memory ceiling (work_memory_mb) and was stopped"
    )
    assert bounded(lambda: len(bytearray(50 * MB)), seconds=60, memory_mb=100) == 50 * MB  # under it: fine


def test_each_item_gets_the_deadline_and_the_one_that_misses_it_is_named() -> None:
    def work(item: int) -> int:
        if item == 2:
            spin()
        return item * 10

    assert map_bounded(work, [0, 1], file_names=["a", "b"], what="w", seconds=5, memory_mb=None) == [0, 10]
    with pytest.raises(WorkTimeoutError, match="^c.md: w took longer than the 1 s limit and was stopped$"):
        map_bounded(
            work, [0, 1, 2, 3], file_names=["a.md", "b.md", "c.md", "d.md"], what="w", seconds=1, memory_mb=None
        )


def test_the_child_and_its_own_children_are_gone_after_the_deadline(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"

    def fork_then_spin() -> None:
        pid = os.fork()
        if pid == 0:  # a grandchild, as the PDF loader's own fork would be
            time.sleep(60)
            os._exit(0)
        marker.write_text(str(pid))
        spin()

    with pytest.raises(WorkTimeoutError):
        bounded(fork_then_spin)
    grandchild = int(marker.read_text())
    deadline = time.monotonic() + GRACE
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)
    with pytest.raises(ChildProcessError):  # the child itself was reaped: no zombie left here
        os.waitpid(-1, os.WNOHANG)


# -- which work goes to a child --------------------------------------------------------------


def test_which_splits_go_to_a_child() -> None:
    small = [Document(text="A short text. " * 10)]
    huge = [Document(text="x" * (documents_module.IN_PROCESS_CHARS + 1))]
    assert not split_needs_child(small, get_splitter("recursive"))  # ours, small: in-process
    assert split_needs_child(huge, get_splitter("recursive"))  # ours, but big
    assert split_needs_child(small, get_splitter("recursive", separators=["x+"], is_separator_regex=True))
    assert split_needs_child(small, get_splitter("langchain.recursive"))  # a framework's code: always
    assert split_needs_child(small, get_splitter("llamaindex.sentence"))
    assert not split_needs_child(huge, get_splitter("semantic"))  # the model is not forked


def test_which_loads_go_to_a_child() -> None:
    assert not load_needs_child("notes.md", 16_000)
    assert not load_needs_child("notes.txt", 16_000)
    assert load_needs_child("notes.txt", documents_module.IN_PROCESS_BYTES + 1)
    assert load_needs_child("notes.txt", None)  # a FIFO or a device: no size to trust
    for name in ("slides.pptx", "report.docx", "book.pdf", "page.html", "data.json", "book.epub"):
        assert load_needs_child(name, 1_000)


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
    expected = run_split(sample_documents, config)
    monkeypatch.setattr(documents_module, "IN_PROCESS_CHARS", -1)  # every splitter to a child
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
    from core.cli import main

    pids = tmp_path / "pids"

    def recording_chunks(self, document):  # noqa: ANN001, ANN202
        with open(pids, "a") as out:
            out.write(f"{os.getpid()}\n")
        return ORIGINAL_CHUNKS(self, document)

    monkeypatch.setattr(LangChainCharacterSplitter, "chunks", recording_chunks)
    assert main(["split", str(SPLIT_DOCS[0]), "--splitter", "langchain.character"]) == 0
    assert capsys.readouterr().out.count("\n") >= 1
    assert {int(pid) for pid in pids.read_text().split()} - {os.getpid()}  # split elsewhere
    assert str(os.getpid()) not in pids.read_text().split()


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
            "stuck.md: splitting with langchain.character took longer than the 3 s limit (split_seconds) and was stopped",
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
        f"texts over {documents_module.IN_PROCESS_CHARS:,} characters",
        f"(up to {documents_module.IN_PROCESS_BYTES:,} bytes)",
    ):
        assert stated in section, stated


def _raise(exc: Exception) -> None:
    raise exc


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has stopped running
    except FileNotFoundError:
        return False
