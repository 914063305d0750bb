"""The exported LlamaIndex script runs the LLM extractors in an IngestionPipeline against the same server
(tests/llm_server.py) and gives every node the metadata and views the app gave it; no script holds the key."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import KEY_ENV, NEEDS_LLM_EXTRA, leaks

from core.config import PipelineConfig
from core.config_parts import MetadataSettings
from core.documents import load_documents, run_split
from core.extractors import get_extractor
from core.output.export import langchain_snippet, llamaindex_snippet
from core.schema import MetadataMode
from core.splitters import get_splitter
from core.tokens.bundled_data import bundled_folder

pytestmark = [NEEDS_LLM_EXTRA, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
TEXT = "# Notes on chunking\n\n" + "\n\n".join(
    f"Paragraph {i} is about topic {i}: chunk sizes, overlaps and retrieval number {i}. " * 3 for i in range(5)
)
RUNNER = r"""
import json, runpy, sys, warnings
warnings.simplefilter("ignore")
from llama_index.core.schema import MetadataMode
namespace = runpy.run_path(sys.argv[1], run_name="exported_script")
print(json.dumps([
    {"metadata": node.metadata, "llm": node.get_content(MetadataMode.LLM), "embed": node.get_content(MetadataMode.EMBED)}
    for node in namespace["nodes"]
]))
"""


@pytest.mark.parametrize("metadata", [MetadataSettings(), MetadataSettings(section_metadata="embed", embed_metadata_keys=("section", "excerpt_keywords"))])
def test_the_llamaindex_script_gives_every_node_the_apps_llm_metadata(endpoint, tmp_path, metadata):
    path = tmp_path / "notes.md"
    path.write_text(TEXT, encoding="utf-8")
    config = PipelineConfig(
        splitter=get_splitter("sentence", chunk_size=96, chunk_overlap=0),
        extractors=(
            get_extractor("title"),
            get_extractor("llm_keywords", keywords=3),
            get_extractor("llm_title", nodes=2),
            get_extractor("llm_summary", summaries=("prev", "self")),
            get_extractor("llm_questions", questions=2),
        ),
        metadata=metadata,
        llm=PipelineConfig().llm.from_params(
            {"base_url": endpoint.url, "model": "echo-model", "api_key_env": KEY_ENV, "retry_backoff": 0.01}
        ),
    )
    nodes = run_split(load_documents([str(path)], config), config)
    app_prompts = {request["prompt"] for request in endpoint.seen.requests}
    # The LLM title writes over the offline one, as the later of two extractors writing one key does.
    assert all(node.metadata["document_title"].startswith("title-") for node in nodes)
    script = llamaindex_snippet(config, [str(path)])
    ast.parse(script)
    assert "IngestionPipeline(" in script and f"os.environ.get({KEY_ENV!r})" in script
    file = tmp_path / "export.py"
    file.write_text(script, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "TIKTOKEN_CACHE_DIR": str(bundled_folder("tiktoken_cache"))}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", RUNNER, str(file)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    exported = json.loads(done.stdout.splitlines()[-1])  # after what the framework prints
    # The script asked the server exactly what the app asked.
    assert {request["prompt"] for request in endpoint.seen.requests} == app_prompts
    assert len(exported) == len(nodes)
    for node, theirs in zip(nodes, exported, strict=True):
        assert theirs["metadata"] == node.metadata
        assert theirs["llm"] == node.get_content(MetadataMode.LLM)
        assert theirs["embed"] == node.get_content(MetadataMode.EMBED)
    for text in (script, langchain_snippet(config, [str(path)]), done.stdout, done.stderr):
        assert not leaks(text)


def test_the_langchain_script_says_what_it_does_instead(endpoint):
    config = PipelineConfig(extractors=(get_extractor("llm_keywords"),), llm=PipelineConfig().llm.from_params(
        {"base_url": endpoint.url, "model": "echo-model", "api_key_env": KEY_ENV}))  # fmt: skip
    script = langchain_snippet(config, ["notes.md"])
    assert "LangChain has no counterpart to LlamaIndex's extractors" in script and "excerpt_keywords" in script
    assert endpoint.seen.count() == 0
