"""No framework code and no user pattern runs in the server's own process, whatever page or toggle asks for it.

A framework splitter runs a user's separator with Python's ``re``, which holds the GIL for as long as it
backtracks: in the server's process that froze every session (the Export page's "Count the chunks this
script changes" did, with ``(?:a?){22}a{22}``). Here every framework entry point ChunkScope can reach
(LangChain's and LlamaIndex's splitters, chonkie, semchunk, the readers) is wrapped to fail when it is
called in this process, the one AppTest runs the app in; a bounded child (a fork) passes through. Then a
person's visit goes over every page with framework engines picked, and the visit must show the
frameworks' results, never the guard's sentence.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import wraps
from importlib import import_module
from typing import Any

import pytest
from apptest_support import open_page, shown

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

SERVER_PID = os.getpid()
GUARD = "framework code ran in the server's process"

# (module, the names of the methods or functions that run the framework's work)
ENTRY_POINTS: list[tuple[str, tuple[str, ...]]] = [
    ("langchain_text_splitters", ("split_text", "split_documents", "create_documents", "transform_documents")),
    ("llama_index.core.node_parser", (
        "get_nodes_from_documents", "split_text", "split_texts", "split_text_metadata_aware", "_parse_nodes",
        "__call__",
    )),
    ("chonkie", ("chunk", "chunk_batch", "__call__")),
    ("semchunk", ("chunk", "chunkerify")),
    ("markitdown", ("convert", "convert_local", "convert_stream")),
    ("llama_index.core", ("load_data",)),  # SimpleDirectoryReader
    ("langchain_core.document_loaders", ("load", "lazy_load")),
]


def _guarded(function: Callable[..., Any], where: str, calls: list[str]) -> Callable[..., Any]:
    @wraps(function)
    def guard(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() == SERVER_PID:
            calls.append(where)
            raise AssertionError(f"{GUARD}: {where}")
        return function(*args, **kwargs)

    return guard


def _wrap_everything(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> int:
    wrapped = 0
    for module_name, names in ENTRY_POINTS:
        module = import_module(module_name)
        for attribute in dir(module):
            try:
                target = getattr(module, attribute)
            except Exception:  # a lazy attribute whose optional dependency is missing
                continue
            if isinstance(target, type):
                for name in names:
                    if name in vars(target) and callable(vars(target)[name]):
                        where = f"{target.__module__}.{target.__qualname__}.{name}"
                        monkeypatch.setattr(target, name, _guarded(vars(target)[name], where, calls))
                        wrapped += 1
            elif attribute in names and callable(target):
                monkeypatch.setattr(module, attribute, _guarded(target, f"{module_name}.{attribute}", calls))
                wrapped += 1
    return wrapped


@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    calls: list[str] = []
    assert _wrap_everything(monkeypatch, calls) > 50  # the splitters of every framework, not a handful
    yield calls


def _said(at: Any) -> list[str]:
    """Everything the page said in an alert or a caption, as a reader sees it."""
    return [shown(element.value) for kind in ("error", "warning", "caption", "info") for element in getattr(at, kind)]


def _no_guard(at: Any, calls: list[str]) -> None:
    assert not at.exception, at.exception
    assert not [text for text in _said(at) if GUARD in text]
    assert not calls, calls


def test_the_guard_stops_a_framework_called_here(guarded: list[str]) -> None:
    from langchain_text_splitters import CharacterTextSplitter

    with pytest.raises(AssertionError, match=GUARD):
        CharacterTextSplitter(chunk_size=10, chunk_overlap=0).split_text("a b c")
    assert guarded == ["langchain_text_splitters.character.CharacterTextSplitter.split_text"]


LANGCHAIN_REGEX = {"splitter": "langchain.character", "separator": "\\n\\n+", "is_separator_regex": "true",
                   "chunk_size": "400", "chunk_overlap": "0"}


def test_chunks_metadata_and_export_with_both_checks_run_every_framework_in_a_child(guarded: list[str]) -> None:
    at = open_page("pages/1_Chunks.py", LANGCHAIN_REGEX)
    _no_guard(at, guarded)
    assert at.sidebar.selectbox(key="chunks.splitter").value == "langchain.character"
    assert at.dataframe, "the node table is drawn from the framework's chunks"

    at.switch_page("pages/2_Metadata.py").run()
    _no_guard(at, guarded)

    at.switch_page("pages/6_Export.py").run()
    at.multiselect(key="export.docs").set_value([at.session_state["export.docs"][0]]).run()
    at.toggle(key="export.check.LangChain").set_value(True).run()
    at.toggle(key="export.check.LlamaIndex").set_value(True).run()
    _no_guard(at, guarded)
    captions = _said(at)
    assert [text for text in captions if "The LangChain script rebuilds all" in text]
    assert [text for text in captions if "The LlamaIndex script" in text]


def test_compare_with_an_engine_and_parsers_with_framework_readers_run_in_a_child(guarded: list[str]) -> None:
    at = open_page("pages/3_Compare.py")
    at.selectbox(key="cmp.1.splitter").set_value("llamaindex.sentence").run()
    _no_guard(at, guarded)
    at.selectbox(key="cmp.0.splitter").set_value("langchain.recursive").run()
    _no_guard(at, guarded)

    at.segmented_control(key="cmp.mode").set_value("Parsers").run()
    at.selectbox(key="cmp.parser.pdf.1.reader").set_value("markitdown").run()
    _no_guard(at, guarded)
    assert len(at.dataframe[0].value) == 2


def test_query_and_evaluate_with_an_engine_run_it_in_a_child(guarded: list[str]) -> None:
    at = open_page("pages/4_Query.py", {"splitter": "chonkie.recursive"})
    _no_guard(at, guarded)
    at.switch_page("pages/5_Evaluate.py").run()
    at.selectbox(key="eval.retrieval.mode").set_value("bm25").run()
    at.button(key="eval.run").click().run()
    _no_guard(at, guarded)
    assert not at.error, [error.value for error in at.error]


def test_the_server_prepares_an_engines_imports_and_data_before_the_child_without_calling_its_splitter(
    guarded: list[str],
) -> None:
    # Without it each LlamaIndex split in a child imported NLTK again: 2-3 s a rerun instead of 0.06 s.
    import sys

    from core.documents.bounded import _warm
    from core.splitters import get_splitter

    _warm(get_splitter("llamaindex.sentence", chunk_size=300, chunk_overlap=20))
    assert "nltk" in sys.modules and "llama_index.core.node_parser" in sys.modules
    assert guarded == []  # imported and its data found, nothing split here
