"""Work in a forked child (core.runtime.forking), and the PDF loader reading a long PDF on two cores."""

from __future__ import annotations

import os
import time

import pytest
from hostile.make_hostile import text_pdf

from core.errors import EncryptedDocumentError
from core.loaders import load_bytes
from core.loaders import pdf as pdf_loader
from core.runtime import forking
from core.runtime.forking import Forked, start_forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def test_the_child_computes_the_value_in_another_process() -> None:
    child = Forked(lambda: ("from the child", os.getpid()))
    text, pid = child.result()
    assert text == "from the child"
    assert pid != os.getpid()


def test_a_child_that_raises_delivers_nothing() -> None:
    def fails() -> int:
        raise ValueError("boom")

    assert Forked(fails).result() is None


def test_a_value_that_cannot_be_pickled_is_not_delivered() -> None:
    assert Forked(lambda: lambda: 1).result() is None


def test_result_is_read_once() -> None:
    child = Forked(lambda: 1)
    assert child.result() == 1
    with pytest.raises(RuntimeError):
        child.result()


def test_a_cancelled_child_is_stopped_and_reaped() -> None:
    child = Forked(lambda: __import__("time").sleep(60))
    child.cancel()
    with pytest.raises(ChildProcessError):  # already reaped: no zombie left behind
        os.waitpid(child._pid, 0)


def test_a_large_value_passes_the_pipe() -> None:
    # Far beyond a pipe's buffer: the parent must read before it waits.
    assert Forked(lambda: "x" * 5_000_000).result() == "x" * 5_000_000


def test_one_core_or_no_fork_means_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forking, "CORES", 1)
    assert start_forked(lambda: 1) is None


# -- the PDF loader -------------------------------------------------------------------

PAGES = tuple(f"Page {n} says something different: {n * 7} apples." for n in range(1, 41))


@pytest.fixture(scope="module")
def long_pdf() -> bytes:
    return text_pdf(PAGES)


def _load(data: bytes):  # noqa: ANN202 - a Document
    (document,) = load_bytes(data, "long.pdf")
    return document


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every child the PDF loader starts (None where it could not start one)."""
    started: list = []

    def recording(work):  # noqa: ANN001, ANN202
        started.append(forking.start_forked(work))
        return started[-1]

    monkeypatch.setattr(pdf_loader, "start_forked", recording)
    return started


def test_a_long_pdf_reads_the_same_on_two_cores_as_on_one(
    long_pdf: bytes, children: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    two = _load(long_pdf)
    if forking.fork_available():
        assert children[0] is not None, "a 40-page PDF is read with a child on a machine with two cores"
    monkeypatch.setattr(pdf_loader, "PARALLEL_FROM_PAGES", 10_000)
    one = _load(long_pdf)
    assert two.text == one.text
    assert [(p.start_char, p.end_char, p.label) for p in two.pages] == [
        (p.start_char, p.end_char, p.label) for p in one.pages
    ]
    assert [two.text[p.start_char : p.end_char] for p in two.pages] == list(PAGES)


def test_pages_a_child_fails_to_deliver_are_read_here(long_pdf: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_child(work):  # noqa: ANN001, ANN202 - the child dies before sending anything
        return Forked(lambda: os._exit(3))

    monkeypatch.setattr(pdf_loader, "start_forked", failing_child)
    document = _load(long_pdf)
    assert [document.text[p.start_char : p.end_char] for p in document.pages] == list(PAGES)


@pytest.mark.skipif(not forking.fork_available(), reason="needs a second core")
def test_an_error_in_this_process_stops_the_child(
    long_pdf: bytes, children: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_range = pdf_loader.PdfLoader._extract_range

    def encrypted_first_half(self, pages, start, stop, file_name):  # noqa: ANN001, ANN202
        if start == 0:
            raise EncryptedDocumentError(file_name, "is encrypted and cannot be read without its password")
        return real_range(self, pages, start, stop, file_name)

    monkeypatch.setattr(pdf_loader.PdfLoader, "_extract_range", encrypted_first_half)
    with pytest.raises(EncryptedDocumentError, match="long.pdf"):
        _load(long_pdf)
    with pytest.raises(ChildProcessError):
        os.waitpid(children[0]._pid, 0)


# -- forking inside a threaded process (the Streamlit server) -------------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_stuck_child_is_killed_at_the_deadline_and_reaped() -> None:
    child = Forked(lambda: time.sleep(3600))
    assert child.result(timeout=0.2) is None
    with pytest.raises(ChildProcessError):
        os.waitpid(child._pid, 0)


@pytest.mark.skipif(not forking.fork_available(), reason="needs a second core")
def test_pages_of_a_stuck_child_are_read_here(long_pdf: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    # A lock another thread held at the fork would leave the child waiting forever: the loader must not.
    monkeypatch.setattr(pdf_loader, "CHILD_GRACE_SECONDS", 0.2)
    monkeypatch.setattr(pdf_loader, "start_forked", lambda work: Forked(lambda: time.sleep(3600)))
    document = _load(long_pdf)
    assert [document.text[p.start_char : p.end_char] for p in document.pages] == list(PAGES)


@pytest.mark.skipif(not forking.fork_available(), reason="needs a second core")
def test_long_pdfs_load_right_while_other_threads_log_import_and_tokenize(
    long_pdf: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's situation: sessions on other threads hold the locks a forked child could inherit held.

    Other threads log (the logging module's handler locks), import (the import lock), tokenize with
    the Rust tokenizer (its thread pool) and allocate, without pause, while this thread loads long
    PDFs with a forked child again and again. Every load must come back whole from its child.
    """
    import importlib
    import logging
    import sys
    import threading

    from core.tokens.tokenizers import get_tokenizer

    stop = threading.Event()
    log = logging.getLogger("chunkscope.test.busy")
    log.addHandler(logging.NullHandler())
    tokenizer = get_tokenizer("model")
    delivered: list[bool] = []

    def recording(work):  # noqa: ANN001, ANN202 - did each child deliver, or did the loader fall back?
        child = forking.start_forked(work)
        real_result = child.result

        def result(timeout: float | None = None):  # noqa: ANN202
            value = real_result(timeout)
            delivered.append(value is not None)
            return value

        child.result = result
        return child

    monkeypatch.setattr(pdf_loader, "start_forked", recording)

    def logging_thread() -> None:
        while not stop.is_set():
            log.warning("another session is working")

    def importing_thread() -> None:
        while not stop.is_set():
            sys.modules.pop("json.tool", None)
            importlib.import_module("json.tool")

    def tokenizing_thread() -> None:
        while not stop.is_set():
            tokenizer.count("Another session tokenizes its document while this one loads a PDF. " * 20)

    threads = [threading.Thread(target=t, daemon=True) for t in (logging_thread, importing_thread, tokenizing_thread)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(15):
            document = _load(long_pdf)
            assert [document.text[p.start_char : p.end_char] for p in document.pages] == list(PAGES)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert delivered == [True] * 15
