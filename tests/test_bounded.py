"""Work on untrusted input runs where it can be stopped (core.runtime.bounded): a deadline, a memory ceiling, the file named.

The slow work here is a backtracking ``re`` match: C code that holds the GIL for as
long as it runs (``(a+)+$`` on 48 a's and a "!" would take years), which is what a
hostile regex inside a framework splitter does to a server's event loop.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from core.documents import bounded as bounded_module
from core.documents.bounded import load_needs_child, split_needs_child
from core.errors import ConfigError, EmptyDocumentError, WorkLimitError, WorkMemoryError, WorkTimeoutError
from core.runtime.bounded import map_bounded, run_bounded
from core.schema import Document
from core.splitters import get_splitter

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


def test_poll_is_called_here_while_the_child_works_and_what_it_raises_stops_the_child() -> None:
    polled: list[float] = []
    slow = partial(time.sleep, 0.7)
    run_bounded(slow, file_name="-", what="waiting", seconds=30, memory_mb=None, poll=lambda: polled.append(time.monotonic()))
    assert len(polled) >= 2  # every POLL_SECONDS (0.2 s) of the child's 0.7 s

    class Stop(Exception):
        pass

    def stop() -> None:
        raise Stop

    started = time.monotonic()
    with pytest.raises(Stop):
        run_bounded(partial(time.sleep, 30), file_name="-", what="waiting", seconds=60, memory_mb=None, poll=stop)
    assert time.monotonic() - started < 5  # the child was stopped, not waited for


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


def test_a_child_that_crashes_is_named_by_its_signal() -> None:
    """A crash in native code (a grammar's segfault) reads as that signal, not as "exit status 0"."""

    def work(item: int) -> int:
        if item == 1:
            os.kill(os.getpid(), signal.SIGSEGV)
        return item

    with pytest.raises(WorkLimitError, match=r"^b.py: w stopped abruptly \(signal SIGSEGV\)$"):
        map_bounded(work, [0, 1], file_names=["a.py", "b.py"], what="w", seconds=30, memory_mb=None)


def test_the_child_and_its_own_children_are_gone_after_the_deadline(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"

    def fork_then_spin() -> None:
        pid = os.fork()
        if pid == 0:  # a grandchild, as the PDF loader's own fork would be
            time.sleep(60)
            os._exit(0)
        marker.write_text(str(pid))
        spin()

    before = _children()
    with pytest.raises(WorkTimeoutError):
        bounded(fork_then_spin)
    grandchild = int(marker.read_text())
    deadline = time.monotonic() + GRACE
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)
    # The child itself was reaped: no zombie of it left here. (Other tests in this process may own children
    # of their own, so only new ones count.)
    assert _children() <= before


def _children() -> set[int]:
    """This process's child processes, zombies included (Linux's /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


# -- which work goes to a child --------------------------------------------------------------


def test_which_splits_go_to_a_child() -> None:
    small = [Document(text="A short text. " * 10)]
    huge = [Document(text="x" * (bounded_module.LIGHT_IN_PROCESS_CHARS + 1))]
    assert not split_needs_child(small, get_splitter("recursive"))  # ours, small: in-process
    assert split_needs_child(huge, get_splitter("recursive"))  # ours, but big
    assert split_needs_child(small, get_splitter("recursive", separators=["x+"], is_separator_regex=True))
    assert split_needs_child(small, get_splitter("langchain.recursive"))  # a framework's code: always
    assert split_needs_child(small, get_splitter("llamaindex.sentence"))
    assert not split_needs_child(huge, get_splitter("semantic"))  # the model is not forked


def test_a_large_text_splits_in_process_once_its_tokenizer_pass_is_kept() -> None:
    """Between the two bounds a split is in-process only when it is light: it counts characters, or the server
    holds the text's index under the splitter's tokenizer (a rerun at a new chunk_size), and no compat mode or
    size function of the caller's is in it."""
    from core.tokens.token_index import TOKEN_INDEXES, TokenIndex

    text = "Words in a sentence. " * (bounded_module.IN_PROCESS_CHARS // 21 + 1000)
    assert bounded_module.IN_PROCESS_CHARS < len(text) <= bounded_module.LIGHT_IN_PROCESS_CHARS
    large = [Document(text=text)]
    assert not split_needs_child(large, get_splitter("recursive"))  # characters: no tokenizer pass at all
    assert not split_needs_child(large, get_splitter("character"))
    assert split_needs_child(large, get_splitter("recursive", compat="langchain"))
    assert split_needs_child(large, get_splitter("recursive", tokenizer=len))  # the caller's size function
    sentence, token = get_splitter("sentence"), get_splitter("token")
    TOKEN_INDEXES.clear()
    assert split_needs_child(large, sentence) and split_needs_child(large, token)  # the first split: a child
    TokenIndex.shared(sentence.get_tokenizer(), text)  # as the page's metrics leave it
    assert not split_needs_child(large, sentence) and not split_needs_child(large, token)
    assert split_needs_child(large, sentence, in_process_chars=1000)  # a batch worker's own bound stands
    assert split_needs_child(large, get_splitter("sentence", compat="llamaindex"))
    TOKEN_INDEXES.clear()


def test_a_light_split_in_process_gives_the_childs_nodes() -> None:
    from core.documents.bounded import split_bounded
    from core.tokens.token_index import TOKEN_INDEXES, TokenIndex

    text = "Lorem ipsum dolor sit amet, a sentence. Another one here!\n\n" * 6000
    document = Document(text=text, metadata={"file_name": "large.txt"})
    for name in ("sentence", "token", "recursive", "character"):
        TOKEN_INDEXES.clear()
        splitter = get_splitter(name, chunk_size=120, chunk_overlap=20)
        in_child = split_bounded([document], splitter)
        TokenIndex.shared(splitter.get_tokenizer(), text)
        assert not split_needs_child([document], splitter)
        assert split_bounded([document], splitter) == in_child == splitter.split([document]), name
    TOKEN_INDEXES.clear()


def test_which_loads_go_to_a_child() -> None:
    assert not load_needs_child("notes.md", 16_000)
    assert not load_needs_child("notes.txt", 16_000)
    assert load_needs_child("notes.txt", bounded_module.IN_PROCESS_BYTES + 1)
    assert load_needs_child("notes.txt", None)  # a FIFO or a device: no size to trust
    for name in ("slides.pptx", "report.docx", "book.pdf", "page.html", "data.json", "book.epub"):
        assert load_needs_child(name, 1_000)


def _raise(exc: Exception) -> None:
    raise exc


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has stopped running
    except FileNotFoundError:
        return False


# -- a batch worker's large text files: in-process under an alarm -------------------------------------------


def test_an_alarm_stops_python_work_here_and_names_the_file() -> None:
    import signal

    from core.runtime.bounded import run_with_alarm

    def spin() -> None:
        while True:
            pass

    before = signal.getsignal(signal.SIGALRM)
    started = time.monotonic()
    with pytest.raises(WorkTimeoutError, match=r"loading it took longer than the 0\.2 s limit \(load_seconds\)"):
        run_with_alarm(spin, file_name="slow.md", what="loading it", seconds=0.2, seconds_name="load_seconds")
    assert time.monotonic() - started < 5
    assert signal.getsignal(signal.SIGALRM) is before  # the handler put back
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # and no alarm left armed
    assert run_with_alarm(lambda: 42, file_name="x", what="w", seconds=5) == 42
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_worker_alone_loads_a_large_markdown_file_here_and_the_rest_as_before(monkeypatch) -> None:
    from core.documents.bounded import ALONE_IN_PROCESS_BYTES, IN_PROCESS_BYTES, load_bounded
    from core.loaders import load_bytes

    data = ("# Title\n\n" + "A paragraph of text about chunking. " * 40 + "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n") * 300
    raw = data.encode()
    assert IN_PROCESS_BYTES < len(raw) <= ALONE_IN_PROCESS_BYTES
    in_child = load_bounded(partial(load_bytes, raw, "large.md"), "large.md", len(raw))

    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    assert load_bounded(partial(load_bytes, raw, "large.md"), "large.md", len(raw), alone=True) == in_child
    with pytest.raises(AssertionError, match="forked"):  # not alone (the app's server): a child, as before
        load_bounded(partial(load_bytes, raw, "large.md"), "large.md", len(raw))
    with pytest.raises(AssertionError, match="forked"):  # a format that is not a linear loader's: a child
        load_bounded(partial(load_bytes, raw, "large.docx"), "large.docx", len(raw), alone=True)
    huge = ALONE_IN_PROCESS_BYTES + 1
    with pytest.raises(AssertionError, match="forked"):  # past the bound: a child and its memory ceiling
        load_bounded(partial(load_bytes, raw, "large.md"), "large.md", huge, alone=True)


def test_a_local_worker_serves_alone_and_its_large_markdown_gives_the_same_parts(tmp_path: Path, monkeypatch) -> None:
    import hashlib

    from core.batch import local_engine, run_batch
    from core.batch import work as batch_work
    from core.config import PipelineConfig

    # What the pool runs first in each worker, here in a child: the worker then serves alone.
    def started() -> bool:
        local_engine._start_worker()
        return batch_work._ALONE[0]

    assert run_bounded(started, file_name="-", what="starting", seconds=30, memory_mb=None)
    assert not batch_work._ALONE[0]  # ... never the driver

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "big.md").write_text(("## Part\n\n" + "Sentences about retrieval and chunk overlap. " * 30 + "\n\n") * 300)
    (corpus / "small.txt").write_text("A small file. " * 20)
    assert bounded_module.load_needs_child("big.md", (corpus / "big.md").stat().st_size)  # the server would fork
    config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=400, chunk_overlap=40))

    def parts(out: Path) -> str:
        return hashlib.sha256(b"".join(p.read_bytes() for p in sorted((out / "nodes").glob("part-*.parquet")))).hexdigest()

    run_batch([str(corpus)], config, tmp_path / "alone", workers=1)
    monkeypatch.setattr(local_engine, "serve_alone", lambda: None)  # the workers load it in a child, as before
    run_batch([str(corpus)], config, tmp_path / "child", workers=1)
    assert parts(tmp_path / "alone") == parts(tmp_path / "child")
