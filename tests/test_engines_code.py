"""llamaindex.code: LlamaIndex's CodeSplitter, tree-sitter grammars from tree-sitter-language-pack, as an engine.

What must hold: on files the tests did not write (this repository's own Python, C, shell and Markdown, and the
samples), the engine's nodes are CodeSplitter's called directly with the grammar of the file's extension,
every one of them, in order, each placed ``exact`` in the source; ``language`` picks one grammar for every
file; the language list is the pack's; the exported call builds the same splitter.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest

from core import load
from core.engines.llamaindex_code import TREE_SITTER_LANGUAGES, grammar_for
from core.errors import ConfigError
from core.schema import Document
from core.spans.recovery import SPAN_STATUS_KEY
from core.splitters import SPLITTERS

ROOT = Path(__file__).resolve().parents[1]
# Written by people, for other reasons than these tests: code in four languages, prose in Markdown and text.
FILES = {
    "core/engines/base.py": "python",
    "core/splitters/code.py": "python",
    "sample_docs/chunk_stats.py": "python",
    "core/splitters/fast/packing_native.c": "c",
    "core/tokens/wordpiece_native.c": "c",
    "scripts/ticking.sh": "bash",
    "docs/architecture.md": "markdown",
    "sample_docs/chunking_guide.md": "markdown",
    "sample_docs/release_notes.txt": "markdown",  # no grammar of its own: Markdown's, whose blocks are paragraphs
}


def their_texts(document: Document, language: str, **settings: Any) -> list[str]:
    """CodeSplitter called directly, as its documentation shows, on a LlamaIndex Document of the same text."""
    from llama_index.core import Document as LlamaDocument
    from llama_index.core.node_parser import CodeSplitter

    splitter = CodeSplitter(language=language, **settings)
    llama = LlamaDocument(
        text=document.text,
        metadata=dict(document.metadata),
        excluded_llm_metadata_keys=list(document.excluded_llm_metadata_keys),
        excluded_embed_metadata_keys=list(document.excluded_embed_metadata_keys),
    )
    return [node.get_content() for node in splitter.get_nodes_from_documents([llama])]


def assert_placed_exactly(document: Document, nodes: list[Any]) -> None:
    for node in nodes:
        assert node.metadata[SPAN_STATUS_KEY] == "exact"
        assert document.text[node.start_char : node.end_char] == node.text
    starts = [node.start_char for node in nodes]
    assert starts == sorted(starts), "in the source's order"


@pytest.mark.parametrize(
    "settings", [{}, {"max_chars": 300}, {"count_mode": "token", "max_tokens": 96}], ids=["defaults", "300", "tokens"]
)
def test_every_node_is_codesplitters_in_order_with_the_extensions_grammar(settings: dict[str, Any]) -> None:
    engine = SPLITTERS.create("llamaindex.code", **settings)
    for path, language in FILES.items():
        document = load(ROOT / path)[0]
        nodes = engine.split([document])
        assert [node.text for node in nodes] == their_texts(document, language, **settings), path
        assert len(nodes) > (1 if settings else 0), path
        assert_placed_exactly(document, nodes)


def test_a_language_set_is_used_for_every_file() -> None:
    document = load(ROOT / "sample_docs/chunk_stats.py")[0]
    as_python = SPLITTERS.create("llamaindex.code", language="python", max_chars=400).split([document])
    assert [node.text for node in as_python] == their_texts(document, "python", max_chars=400)
    # The same text named .txt: auto reads it with Markdown's grammar, language=python still as Python.
    renamed = Document(text=document.text, metadata={"file_name": "chunk_stats.txt"})
    python = SPLITTERS.create("llamaindex.code", language="python", max_chars=400).split([renamed])
    auto = SPLITTERS.create("llamaindex.code", max_chars=400).split([renamed])
    assert [node.text for node in python] == [node.text for node in as_python]
    assert [node.text for node in auto] == their_texts(renamed, "markdown", max_chars=400) != [n.text for n in python]


def test_grammars_by_extension() -> None:
    assert grammar_for("app.py") == "python"
    assert grammar_for("Component.TSX") == "tsx"  # JSX inside: the tsx grammar, not typescript's
    assert grammar_for("lib.ts") == "typescript"
    assert grammar_for("README.md") == "markdown"
    assert grammar_for("notes.txt") == grammar_for("handbook.pdf") == grammar_for("") == "markdown"


def test_the_language_list_is_the_packs() -> None:
    from tree_sitter_language_pack import SupportedLanguage

    assert TREE_SITTER_LANGUAGES == typing.get_args(SupportedLanguage)
    assert SPLITTERS.get_class("llamaindex.code")().language == "auto"


def test_code_the_grammar_cannot_read_is_refused_with_the_frameworks_sentence() -> None:
    document = Document(text=")))\n", metadata={"file_name": "broken.py"})
    with pytest.raises(ConfigError, match=r"llamaindex.code: LlamaIndex CodeSplitter refused: ValueError: Could not"):
        SPLITTERS.create("llamaindex.code").split([document])


def test_the_exported_script_names_the_package_and_picks_grammars_as_the_app() -> None:
    from core.config import PipelineConfig
    from core.output.export import llamaindex_snippet

    script = llamaindex_snippet(PipelineConfig(splitter=SPLITTERS.create("llamaindex.code")), ["x.py"])
    install = script.split("Install:", 1)[1].split("\n", 1)[0]
    assert "'tree-sitter-language-pack>=0.13,<1'" in install
    assert "node_parser = CodeSplitterByExtension(" in script and "'.tsx': 'tsx'" in script
    fixed = llamaindex_snippet(PipelineConfig(splitter=SPLITTERS.create("llamaindex.code", language="rust")), [])
    assert "CodeSplitter(\n    language='rust'," in fixed and "CodeSplitterByExtension" not in fixed
