"""``chunkscope export``: the Export page's script for files named on the shell, runnable as ``python script.py``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core import get_splitter
from core.cli.main import main
from core.config import PipelineConfig
from core.documents import load_documents, run_split
from core.output.export import langchain_snippet, llamaindex_snippet
from core.tokens.bundled_data import bundled_folder

ROOT = Path(__file__).resolve().parent.parent
OPTIONS = ["--splitter", "llamaindex.sentence", "--set", "chunk_size=256", "--set", "chunk_overlap=32"]


@pytest.fixture
def files(tmp_path, sample_docs) -> list[str]:
    for name in ("chunking_guide.md", "release_notes.txt"):
        shutil.copy(sample_docs / name, tmp_path / name)
    return ["chunking_guide.md", "release_notes.txt"]  # relative, as typed in the folder the script runs in


def _export(capsys, *argv: str) -> str:
    assert main(["export", *argv]) == 0
    return capsys.readouterr().out


def _python(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "TIKTOKEN_CACHE_DIR": str(bundled_folder("tiktoken_cache")),  # scripts count cl100k tokens offline
    }
    return subprocess.run(
        [sys.executable, *argv], cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_export_prints_the_export_pages_script_for_those_files(capsys, tmp_path, files, monkeypatch):
    monkeypatch.chdir(tmp_path)
    printed = _export(capsys, "--to", "llamaindex", *OPTIONS, *files)
    assert main(["config", *OPTIONS]) == 0
    config = PipelineConfig.from_json(capsys.readouterr().out)
    assert printed == llamaindex_snippet(config, files)
    assert f"PATHS = {files!r}" in printed
    assert _export(capsys, "--to", "langchain", *OPTIONS, *files) == langchain_snippet(config, files)


def test_a_config_file_gives_the_same_script_as_the_options(capsys, tmp_path, files, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["config", *OPTIONS, "--loader-set", "markdown.normalize_newlines=false"]) == 0
    (tmp_path / "c.json").write_text(capsys.readouterr().out, encoding="utf-8")
    from_file = _export(capsys, "--to", "llamaindex", "--config", "c.json", *files)
    assert from_file == _export(
        capsys, "--to", "llamaindex", *OPTIONS, "--loader-set", "markdown.normalize_newlines=false", *files
    )
    # The loader option the user chose travels to the script, which passes it to ChunkScope's loader.
    assert "LOADER_OPTIONS = {'markdown': {'normalize_newlines': False}}" in from_file


@pytest.mark.slow
def test_python_script_py_leaves_the_apps_nodes_and_chunks_at_the_top_level(capsys, tmp_path, files, monkeypatch):
    monkeypatch.chdir(tmp_path)
    llama = tmp_path / "llama.py"
    assert main(["export", "--to", "llamaindex", *OPTIONS, "-o", str(llama), *files]) == 0
    chain = tmp_path / "chain.py"
    recursive = ["--splitter", "langchain.recursive", "--set", "chunk_size=300", "--set", "chunk_overlap=30"]
    assert main(["export", "--to", "langchain", *recursive, "-o", str(chain), *files]) == 0

    # As a person runs it: the split, then one sample query through retrieve().
    ran = _python(tmp_path, "llama.py")
    assert ran.returncode == 0, ran.stderr[-2000:]
    config = PipelineConfig(splitter=get_splitter("llamaindex.sentence", chunk_size=256, chunk_overlap=32))
    app = run_split(load_documents([tmp_path / name for name in files], config), config)
    assert ran.stdout.splitlines()[0] == f"{len(app)} nodes"
    assert len(ran.stdout.splitlines()) > 1  # retrieve() printed its results

    # As a CI job checks it: the top-level names, equal to the app's nodes.
    check = (
        "import json, runpy\n"
        "llama = runpy.run_path('llama.py', run_name='check')['nodes']\n"
        "chain = runpy.run_path('chain.py', run_name='check')['chunks']\n"
        "print(json.dumps([[n.text for n in llama], [c.page_content for c in chain]]))"
    )
    ran = _python(tmp_path, "-c", check)
    assert ran.returncode == 0, ran.stderr[-2000:]
    nodes, chunks = json.loads(ran.stdout)
    assert nodes == [node.text for node in app]
    config = PipelineConfig(splitter=get_splitter("langchain.recursive", chunk_size=300, chunk_overlap=30))
    assert chunks == [node.text for node in run_split(load_documents([tmp_path / n for n in files], config), config)]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--to", "langchain", "missing.md"], "missing.md: file not found"),
        (["--to", "langchain", "pyproject.toml"], "pyproject.toml: files ending in '.toml' are not supported"),
        (["--to", "haystack", "README.md"], "invalid choice: 'haystack'"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(capsys, argv, message, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["export", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "target, blocked", [("llamaindex", "llama_index.embeddings"), ("langchain", "langchain_community")]
)
@pytest.mark.slow
def test_without_retrievals_packages_the_script_still_splits(capsys, tmp_path, files, monkeypatch, target, blocked):
    monkeypatch.chdir(tmp_path)
    assert main(["export", "--to", target, "--retrieval-set", "mode=bm25", "-o", "script.py", *files]) == 0
    # As if only the framework were installed: retrieval's packages cannot be imported.
    run = f"import runpy, sys; sys.modules[{blocked!r}] = None; runpy.run_path('script.py', run_name='__main__')"
    ran = _python(tmp_path, "-c", run)
    assert ran.returncode == 0, ran.stderr[-2000:]
    count, skipped = ran.stdout.splitlines()
    assert count.split()[0].isdigit() and int(count.split()[0]) > 0
    assert skipped.startswith("retrieve() skipped:")


def test_the_parser_chosen_for_a_pdf_reaches_chunkscopes_loader_in_the_script(capsys, tmp_path, sample_docs):
    import runpy

    shutil.copy(sample_docs / "rag_handbook.pdf", tmp_path / "handbook.pdf")
    options = ["--splitter", "llamaindex.sentence", "--set", "chunk_size=256", "--loader-set", "pdf.parser=pdfplumber"]
    script = _export(capsys, "--to", "llamaindex", *options, str(tmp_path / "handbook.pdf"))
    assert "LOADER_OPTIONS = {'pdf': {'parser': 'pdfplumber'}}" in script
    # The app's split first: it loads cl100k from the bundled file, which the script then finds in memory.
    assert main(["split", *options, str(tmp_path / "handbook.pdf")]) == 0
    app = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (tmp_path / "script.py").write_text(script, encoding="utf-8")
    nodes = runpy.run_path(str(tmp_path / "script.py"), run_name="check")["nodes"]
    assert app[0]["metadata"]["parser"] == "pdfplumber"
    assert [node.text for node in nodes] == [node["text"] for node in app]


def test_a_file_name_reaches_the_script_as_a_literal_never_as_code(capsys, tmp_path):
    import ast

    name = "o'neil \"notes\"\n__import__('os').system('echo pwned') #.md"
    (tmp_path / name).write_text("# Notes\n\nSome text.\n", encoding="utf-8")
    script = _export(capsys, "--to", "langchain", str(tmp_path / name))
    assignments = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse(script).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PATHS"
    }
    assert assignments == {"PATHS": [str(tmp_path / name)]}
    # Formatted into code, the name would have made a call to os.system somewhere in the script.
    assert not [
        node for node in ast.walk(ast.parse(script)) if isinstance(node, ast.Attribute) and node.attr == "system"
    ]
