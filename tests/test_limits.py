"""Limits: oversized uploads, texts and splits are refused up front with one sentence naming the file and the limit."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cpu_budget import cpu_budget

from core.config import PipelineConfig
from core.documents import run_split
from core.errors import ConfigError, TooLargeError
from core.limits import DEFAULT_LIMITS, LIMITS_ENV, MB, Limits, check_upload_size, limits_from_environment
from core.loaders import load, load_bytes
from core.schema import Document
from core.splitters import get_splitter
from core.splitters.size_check import check_split_size, estimated_nodes

ROOT = Path(__file__).resolve().parent.parent


def test_defaults_are_declared_parameters() -> None:
    assert DEFAULT_LIMITS.to_params() == {
        "max_upload_bytes": 50 * MB,
        "max_text_chars": 5_000_000,
        "max_nodes": 100_000,
        "max_embed_chars": 1_000_000,
        "max_xml_part_bytes": 100 * MB,
        "max_xml_elements": 2_000_000,
        "max_paragraphs": 200_000,
        "max_runs": 1_000_000,
        "max_table_rows": 200_000,
        "max_table_cells": 1_000_000,
        "max_shared_strings": 250_000,
        "max_sections": 5_000,
        "load_seconds": 120.0,
        "split_seconds": 60.0,
        "work_memory_mb": 2_000,
    }
    assert Limits.from_params({"max_nodes": "10"}).max_nodes == 10
    with pytest.raises(ConfigError, match=r"^limits: max_upload_bytes must be at least 1, got -5$"):
        Limits.from_params({"max_upload_bytes": "-5"})


def test_a_deployment_sets_its_limits_in_the_environment_as_the_readme_shows() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = re.search(r'`CHUNKSCOPE_LIMITS="([^"]+)" make run`', readme)
    assert example is not None
    limits = limits_from_environment({LIMITS_ENV: example.group(1)})
    assert (limits.split_seconds, limits.max_upload_bytes) == (20.0, 10_000_000)
    assert dataclasses.replace(limits, split_seconds=60.0, max_upload_bytes=50 * MB) == Limits()  # the rest: defaults
    assert limits_from_environment({LIMITS_ENV: " load_seconds=5,max_nodes=7 "}).to_params() == {
        **Limits().to_params(),
        "load_seconds": 5.0,
        "max_nodes": 7,
    }
    assert limits_from_environment({}) == limits_from_environment({LIMITS_ENV: ""}) == Limits()


@pytest.mark.parametrize(
    ("value", "sentence"),
    [
        ("split_seconds", "CHUNKSCOPE_LIMITS: 'split_seconds' is not name=value (e.g. split_seconds=20)"),
        ("split_second=5", "limits: unknown parameter 'split_second'"),
        ("split_seconds=soon", "limits: split_seconds must be a number, got 'soon'"),
        ("max_nodes=0", "limits: max_nodes must be at least 1, got 0"),
    ],
)
def test_a_wrong_pair_in_the_environment_stops_the_start_naming_it(value: str, sentence: str) -> None:
    with pytest.raises(ConfigError) as refused:
        limits_from_environment({LIMITS_ENV: value})
    assert sentence in str(refused.value)
    started = subprocess.run(
        [sys.executable, "-c", "import core.limits"],
        cwd=ROOT,
        env={**os.environ, LIMITS_ENV: value},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode != 0 and sentence in started.stderr


def test_the_uploader_and_core_agree_on_the_upload_limit() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * MB == DEFAULT_LIMITS.max_upload_bytes


def test_an_upload_over_the_limit_is_refused_before_it_is_parsed() -> None:
    # NUL bytes would be a CorruptDocumentError if the loader ever saw them.
    with pytest.raises(TooLargeError) as caught:
        load_bytes(b"\x00" * 11, "big.txt", limits=Limits(max_upload_bytes=10))
    assert str(caught.value) == "big.txt: is 11 bytes, more than the upload limit of 10 bytes"
    assert load_bytes(b"0123456789", "ok.txt", limits=Limits(max_upload_bytes=10))[0].text == "0123456789"


def test_a_file_on_disk_over_the_limit_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as handle:  # sparse: 51 MB on paper, nothing on disk
        handle.truncate(51 * MB)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("the file was read"))
    with pytest.raises(TooLargeError) as caught:
        load(huge)
    assert str(caught.value) == "huge.txt: is 51.0 MB, more than the upload limit of 50.0 MB"


def test_text_over_the_limit_is_refused_with_its_size() -> None:
    # 16 bytes of UTF-16 are 7 characters after the byte-order mark.
    data = "abcdefg".encode("utf-16")
    with pytest.raises(TooLargeError) as caught:
        load_bytes(data, "wide.txt", limits=Limits(max_text_chars=6))
    assert str(caught.value) == "wide.txt: holds 7 characters of text, more than the limit of 6"
    assert load_bytes(data, "wide.txt", limits=Limits(max_text_chars=7))[0].text == "abcdefg"


@pytest.mark.parametrize(
    "splitter,params,text,expected",
    [
        ("character", {"chunk_size": 10, "chunk_overlap": 0}, "x" * 100, 10),
        ("character", {"chunk_size": 10, "chunk_overlap": 9}, "x" * 100, 100),
        ("token", {"chunk_size": 2, "chunk_overlap": 0, "tokenizer": "words"}, "a b c d e", 3),
        ("hierarchical", {"chunk_sizes": "100,10", "chunk_overlap": 0, "tokenizer": "characters"}, "x" * 1000, 110),
        ("sentence_window", {}, "One. Two.", None),
    ],
)
def test_node_estimate(splitter: str, params: dict, text: str, expected: int | None) -> None:
    assert estimated_nodes(Document(text=text), get_splitter(splitter, **params)) == expected


def test_a_split_that_would_make_too_many_nodes_is_refused_in_milliseconds() -> None:
    document = Document(text="word " * 200_001, metadata={"file_name": "book.txt"})
    config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=1, chunk_overlap=0))
    with cpu_budget(1.0), pytest.raises(TooLargeError) as caught:
        run_split([document], config)
    assert str(caught.value) == (
        "book.txt: recursive with chunk_size 1 and chunk_overlap 0 would make about 1,000,005 nodes, "
        "more than the limit of 100,000; raise chunk_size or lower chunk_overlap"
    )


def test_heavy_overlap_counts_against_the_node_limit() -> None:
    document = Document(text="x" * 1_000, metadata={"file_name": "a.txt"})
    splitter = get_splitter("character", chunk_size=100, chunk_overlap=99)
    with pytest.raises(TooLargeError, match="about 1,000 nodes, more than the limit of 999"):
        check_split_size([document], splitter, Limits(max_nodes=999))
    check_split_size([document], splitter, Limits(max_nodes=1_000))


def test_the_node_limit_adds_up_over_documents() -> None:
    documents = [Document(text="x" * 500, metadata={"file_name": f"{i}.txt"}) for i in range(3)]
    splitter = get_splitter("character", chunk_size=10, chunk_overlap=0)
    with pytest.raises(TooLargeError, match=r"^2\.txt: .* about 150 nodes, more than the limit of 120;"):
        check_split_size(documents, splitter, Limits(max_nodes=120))


def test_token_sized_splits_are_bounded_by_words_not_characters() -> None:
    # 2,000 characters but 400 words ("word " x 400): a 10-token chunk makes about 40 nodes, not 200.
    document = Document(text="word " * 400, metadata={"file_name": "w.txt"})
    splitter = get_splitter("token", chunk_size=10, chunk_overlap=0, tokenizer="words")
    check_split_size([document], splitter, Limits(max_nodes=40))
    with pytest.raises(TooLargeError, match="about 40 nodes, more than the limit of 39"):
        check_split_size([document], splitter, Limits(max_nodes=39))


def test_an_ordinary_split_is_untouched() -> None:
    document = Document(text="A short note. It has two sentences.", metadata={"file_name": "note.txt"})
    nodes = run_split([document], PipelineConfig())
    assert [node.text for node in nodes] == [document.text] * 2  # the default hierarchy: one root, one leaf


def test_semantic_split_of_a_huge_text_is_refused_before_embedding_anything() -> None:
    calls: list[int] = []

    def embed(texts: list[str]) -> None:
        calls.append(len(texts))
        raise AssertionError("nothing may be embedded")

    splitter = get_splitter("semantic").with_embedder(embed)
    book = Document(text="A sentence about chunking. " * 2_000, metadata={"file_name": "book.txt"})
    with pytest.raises(TooLargeError) as excinfo:
        check_split_size([book], splitter, Limits(max_embed_chars=10_000))
    assert str(excinfo.value) == (
        "book.txt: semantic would embed 54,000 characters sentence by sentence, more than the limit of 10,000; "
        "pick a smaller document or a splitter that does not embed"
    )
    assert calls == []


def test_a_49_mib_file_is_over_the_50_mb_limit_everywhere() -> None:
    # 49 MiB is 51.4 decimal MB: the uploader (decimal) and core agree it is too large.
    with pytest.raises(TooLargeError) as caught:
        check_upload_size(49 * 1024 * 1024, "big.pdf")
    assert str(caught.value) == "big.pdf: is 51.4 MB, more than the upload limit of 50.0 MB"


# -- the node limit for every splitter, those whose sizes cannot estimate the count included ---------

_MANY_SECTIONS = "".join(f"# Heading {i}\n\nSentence one of {i}. Sentence two of {i}.\n\n" for i in range(400))
_MANY_SECTIONS_HTML = "<html><body>" + "".join(
    f"<h1>Heading {i}</h1><p>Sentence one of {i}. Sentence two of {i}.</p>" for i in range(400)
) + "</body></html>"


def _many_nodes_document(name: str) -> Document:
    from core.splitters import SPLITTERS

    reads_markup = getattr(SPLITTERS.get_class(name), "reads_markup", False) or "html" in name
    if reads_markup:
        (document,) = load_bytes(_MANY_SECTIONS_HTML.encode(), "sections.html")
    elif name == "llamaindex.code":  # it refuses a file with no tree-sitter grammar: 400 Python functions
        code = "".join(f"def section_{i}():\n    return {i}\n\n\n" for i in range(400))
        (document,) = load_bytes(code.encode(), "sections.py")
    else:
        (document,) = load_bytes(_MANY_SECTIONS.encode(), "sections.md")
    return document


def _splitters_that_do_not_embed() -> list[str]:
    from core.splitters import SPLITTERS

    return [name for name in SPLITTERS.names() if not SPLITTERS.get_class(name).embeds_text]


@pytest.mark.parametrize("in_a_child", [False, True], ids=["here", "child"])
@pytest.mark.parametrize("name", _splitters_that_do_not_embed())
def test_every_splitter_is_held_to_the_node_limit_with_one_sentence(
    name: str, in_a_child: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.documents import bounded as bounded_module

    document = _many_nodes_document(name)
    config = PipelineConfig(splitter=get_splitter(name))
    made = len(run_split([document], config))
    assert made >= 2, f"{name} makes {made} node of 400 sections: the document does not test it"
    limit = made // 2
    if in_a_child:
        monkeypatch.setattr(bounded_module, "IN_PROCESS_CHARS", -1)
        monkeypatch.setattr(bounded_module, "LIGHT_IN_PROCESS_CHARS", -1)
    with pytest.raises(TooLargeError) as caught:
        run_split([document], config, Limits(max_nodes=limit), bounded=True)
    sentence = str(caught.value)
    assert sentence.startswith(f"{document.metadata['file_name']}: {name} ")
    assert f"more than the limit of {limit:,};" in sentence
    # At the limit itself (or the estimate, for a splitter whose sizes make one), the same split goes through.
    at_limit = Limits(max_nodes=max(made, estimated_nodes(document, config.splitter) or 0))
    assert len(run_split([document], config, at_limit, bounded=True)) == made
