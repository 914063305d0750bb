"""ChunkScope's tiktoken tokenizers (``cl100k``, ``o200k``): tiktoken's counts, character spans that tile the text, offline.

The encodings are the files llama-index-core ships; a fresh process with no
network, a bogus proxy and an empty tiktoken cache still counts with them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core import load
from core.schema import Document
from core.splitters import SPLITTERS
from core.tokens.bundled_data import tiktoken_encoding
from core.tokens.tokenizers import TIKTOKEN_TOKENIZERS, get_tokenizer

ROOT = Path(__file__).resolve().parents[1]
TRICKY = "Emoji 😀👍🏽, CJK 中文字符, a lone surrogate \udc80, <|endoftext|> and   spaces\r\n\ttabs."
TEXTS = [
    "",
    "x",
    TRICKY,
    *(
        document.text
        for name in ("chunking_guide.md", "release_notes.txt")
        for document in load(ROOT / "sample_docs" / name)
    ),
]


@pytest.mark.parametrize("name", sorted(TIKTOKEN_TOKENIZERS))
def test_counts_are_tiktokens(name: str) -> None:
    encoding = tiktoken_encoding(TIKTOKEN_TOKENIZERS[name])
    tokenizer = get_tokenizer(name)
    expected = [len(encoding.encode(text, allowed_special="all")) for text in TEXTS]
    assert [tokenizer.count(text) for text in TEXTS] == expected
    assert tokenizer.count_many(TEXTS) == expected
    assert tokenizer.count("<|endoftext|>") == 1  # a special token written in the text counts as LlamaIndex counts it


@pytest.mark.parametrize("name", sorted(TIKTOKEN_TOKENIZERS))
def test_spans_tile_the_text_one_per_token(name: str) -> None:
    tokenizer = get_tokenizer(name)
    for text, spans in zip(TEXTS, tokenizer.spans_many(TEXTS), strict=True):
        assert spans == tokenizer.spans(text)
        if not text:
            assert spans == []
            continue
        assert spans[0][0] == 0 and spans[-1][1] == len(text)
        assert all(end == following for (_, end), (following, _) in zip(spans, spans[1:], strict=False))
        assert all(start < end for start, end in spans)
        # Only tokens holding the middle of a character have no span of their own.
        assert len(spans) <= tokenizer.count(text)
        if text.isascii():
            encoding = tiktoken_encoding(TIKTOKEN_TOKENIZERS[name])
            pieces = [encoding.decode([token]) for token in encoding.encode(text, allowed_special="all")]
            assert [text[start:end] for start, end in spans] == pieces


def test_a_token_window_splitter_counts_cl100k() -> None:
    document = load(ROOT / "sample_docs" / "chunking_guide.md")[0]
    nodes = SPLITTERS.create("token", tokenizer="cl100k", chunk_size=64, chunk_overlap=8).split([document])
    counter = get_tokenizer("cl100k")
    assert len(nodes) > 5
    assert all(node.text == document.text[node.start_char : node.end_char] for node in nodes)
    assert max(counter.count(node.text) for node in nodes) <= 64 + 2  # a window's ends re-tokenize on their own


_OFFLINE = r"""
import socket

def refuse(*args, **kwargs):
    raise OSError("network access while loading a tiktoken encoding")

socket.socket.connect = refuse
socket.create_connection = refuse

from core.tokens.tokenizers import get_tokenizer

print(get_tokenizer("cl100k").count("hello world"), get_tokenizer("o200k").count("hello world"))
"""


def test_the_encodings_load_with_no_network_a_bogus_proxy_and_an_empty_cache(tmp_path: Path) -> None:
    (tmp_path / "tiktoken").mkdir()
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "ALL_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "",
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(
        [sys.executable, "-c", _OFFLINE], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["2", "2"]
    assert not list((tmp_path / "tiktoken").iterdir()), "nothing was written to (or fetched into) the user's cache"


def test_the_document_text_never_changes_a_slice() -> None:
    document = Document(text=TRICKY * 30, metadata={"file_name": "tricky.txt"})
    nodes = SPLITTERS.create("token", tokenizer="o200k", chunk_size=16, chunk_overlap=4).split([document])
    assert all(node.text == document.text[node.start_char : node.end_char] for node in nodes)
