"""A script's own reader (used without ChunkScope) gives the Document ChunkScope's loader gives.

The reader's functions are taken from a generated script and run here on
generated text, Markdown and code files: same text, metadata and excluded keys,
for LlamaIndex's Document and LangChain's. Then whole scripts, run in this process
on generated Markdown (documents no test has seen), make the app's chunks.
"""

from __future__ import annotations

import ast
import functools
import runpy
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import get_splitter, load
from core.config import PipelineConfig
from core.documents import load_documents, run_split
from core.output.export import langchain_snippet, llamaindex_snippet

_READER_NAMES = {"PLAIN_TEXT", "CODE_LANGUAGES", "LOADER_OPTIONS", "plain_text_document", "markdown_title"}


def _reader(snippet) -> dict:
    """The script's imports, constants and functions (not its top-level work), executed."""
    module = ast.parse(snippet(PipelineConfig(), []))
    keep = [
        node
        for node in module.body
        if isinstance(node, ast.Import | ast.ImportFrom | ast.FunctionDef)
        or (isinstance(node, ast.Assign) and {getattr(t, "id", "") for t in node.targets} & _READER_NAMES)
    ]
    namespace: dict = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), "<script>", "exec"), namespace)
    return namespace


@functools.cache
def readers() -> dict[str, dict]:
    """Both scripts' readers, built at first use: their imports (LlamaIndex, LangChain, torch) are not collection's."""
    return {"LlamaIndex": _reader(llamaindex_snippet), "LangChain": _reader(langchain_snippet)}

words = st.lists(st.sampled_from(["chunk", "size", "überlap", "RAG", "naïve", "snake_case", "v1.2", "日本"]),
                 min_size=1, max_size=5).map(" ".join)  # fmt: skip
inline = st.one_of(words, words.map(lambda w: f"*{w}*"), words.map(lambda w: f"`{w}`"),
                   words.map(lambda w: f"[{w}](https://example.com)"), words.map(lambda w: f"__{w}__"))  # fmt: skip
heading = st.tuples(st.integers(1, 3), st.lists(inline, min_size=1, max_size=3).map(" ".join),
                    st.booleans()).map(lambda h: f"{'#' * h[0]} {h[1]}{' ' + '#' * h[0] if h[2] else ''}")  # fmt: skip
fenced = st.lists(st.one_of(words, heading), max_size=3).map(lambda lines: "\n".join(["```", *lines, "```"]))
setext = st.tuples(words, st.sampled_from(["===", "---"])).map("\n".join)
markdown = st.lists(st.one_of(heading, words, fenced, setext, words.map(lambda w: f"- {w}")), min_size=1, max_size=8)


def _write(folder: str, name: str, text: str, crlf: bool, bom: bool = False) -> Path:
    path = Path(folder) / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + (text.replace("\n", "\r\n") if crlf else text).encode("utf-8"))
    return path


def _same_document(path: Path) -> None:
    expected = load(path)[0]
    for library, namespace in readers().items():
        document = namespace["plain_text_document"](path)
        if library == "LlamaIndex":
            assert document.text == expected.text
            assert document.excluded_llm_metadata_keys == expected.excluded_llm_metadata_keys
            assert document.excluded_embed_metadata_keys == expected.excluded_embed_metadata_keys
        else:
            assert document.page_content == expected.text
        assert document.metadata == expected.metadata, library


@pytest.mark.slow
@given(blocks=markdown, crlf=st.booleans(), bom=st.booleans())
def test_markdown_reads_as_chunkscope_reads_it_title_included(blocks, crlf, bom):
    with tempfile.TemporaryDirectory() as folder:
        _same_document(_write(folder, "notes.md", "\n\n".join(blocks) + "\n", crlf, bom))


@given(text=st.lists(words, min_size=1, max_size=6).map("\n".join), crlf=st.booleans(), bom=st.booleans(),
       name=st.sampled_from(["notes.txt", "log.log", "main.py", "app.ts", "query.sql"]))  # fmt: skip
def test_text_and_code_read_as_chunkscope_reads_them(text, crlf, bom, name):
    with tempfile.TemporaryDirectory() as folder:
        _same_document(_write(folder, name, text, crlf, bom))


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "notes.txt: is empty, as the app says"),
        (b" \n\t\n", "notes.txt: contains only whitespace, as the app says"),
        (b"caf\xe9 au lait", "notes.txt: not UTF-8 (byte 0xe9 at position 3); ChunkScope's loaders detect its encoding"),
    ],
)
def test_the_own_reader_refuses_what_it_cannot_read_as_the_app_does_in_one_sentence(tmp_path, data, said):
    path = tmp_path / "notes.txt"
    path.write_bytes(data)
    for namespace in readers().values():
        with pytest.raises(SystemExit) as stopped:
            namespace["plain_text_document"](path)
        assert str(stopped.value).startswith(said)


def test_a_title_example_reads_as_a_person_expects():
    title = readers()["LangChain"]["markdown_title"]
    assert title("```\n# not this\n```\n\n## Intro\n\n# The *naïve* `RAG` guide #\n") == "The naïve RAG guide"
    assert title("A guide\nin two lines\n===\n") == "A guide in two lines"
    assert title("    # indented code\n\n## only level two\n") == ""


# -- documents the tests never saw: generated Markdown, split by the exported scripts in this process -------------

EXACT = {
    "LlamaIndex": PipelineConfig(splitter=get_splitter("llamaindex.sentence", chunk_size=64, chunk_overlap=8)),
    "LangChain": PipelineConfig(splitter=get_splitter("langchain.recursive", chunk_size=120, chunk_overlap=20)),
}


@pytest.mark.slow
@settings(max_examples=25)
@given(blocks=markdown, crlf=st.booleans(), own_reader=st.booleans())
def test_scripts_split_generated_documents_as_the_app_does(blocks, crlf, own_reader):
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, "generated.md", "\n\n".join(blocks) + "\n", crlf)
        for library, config in EXACT.items():
            app = [node.text for node in run_split(load_documents([path], config), config)]
            snippet, variable = (
                (llamaindex_snippet, "nodes") if library == "LlamaIndex" else (langchain_snippet, "chunks")
            )
            script = Path(folder) / f"{library}.py"
            script.write_text(snippet(config, [str(path)]), encoding="utf-8")
            with pytest.MonkeyPatch.context() as patch:
                if own_reader:  # as if ChunkScope were not installed
                    patch.setitem(sys.modules, "core.loaders", None)
                made = runpy.run_path(str(script), run_name="exported_script")[variable]
            assert [getattr(item, "text", None) or item.page_content for item in made] == app, library


def test_without_chunkscope_a_folder_with_a_pdf_stops_the_script_naming_the_file(tmp_path, sample_docs):
    (tmp_path / "docs").mkdir()
    for name in ("release_notes.txt", "rag_handbook.pdf"):
        (tmp_path / "docs" / name).write_bytes((sample_docs / name).read_bytes())
    script = tmp_path / "script.py"
    script.write_text(langchain_snippet(PipelineConfig(), [str(tmp_path / "docs")]), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch, pytest.raises(SystemExit, match=r"^rag_handbook\.pdf: only ChunkScope"):
        patch.setitem(sys.modules, "core.loaders", None)  # as if ChunkScope were not installed
        runpy.run_path(str(script), run_name="exported_script")
    # With ChunkScope, the folder reads as the app reads it: both files.
    chunks = runpy.run_path(str(script), run_name="exported_script")["chunks"]
    assert {chunk.metadata["file_name"] for chunk in chunks} == {"release_notes.txt", "rag_handbook.pdf"}
