"""llamaindex.code: LlamaIndex's CodeSplitter as an engine, handed parsers from the tree-sitter grammar packages.

What must hold: on files the tests did not write (this repository's own Python, C and shell), the engine's nodes
are CodeSplitter's called directly with the grammar package of the file's extension, every one, in order, each
placed ``exact`` in the source; ``language`` picks one grammar for every file; a file whose extension has no
grammar is refused, naming the extensions that have one; every grammar loads under the pinned tree-sitter; a
split that crashes a grammar costs a child, never the caller (the stress script, run small, exits 0); the
exported call builds the same splitter from the packages its Install line names.

The engine's own splits run in the bounded child (:func:`core.documents.bounded.split_bounded`), as the app runs them:
a grammar that crashed here would fail a test, not kill the pytest worker.
"""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from core import load
from core.documents.bounded import split_bounded
from core.engines.llamaindex_code import EXTENSIONS, LANGUAGE_GRAMMARS, language_for
from core.errors import ConfigError
from core.loaders.code import LANGUAGES
from core.runtime.bounded import map_bounded
from core.schema import Document
from core.spans.recovery import SPAN_STATUS_KEY
from core.splitters import SPLITTERS

ROOT = Path(__file__).resolve().parents[1]
# Written by people, for other reasons than these tests: code in three languages.
FILES = {
    "core/engines/base.py": "python",
    "core/splitters/code.py": "python",
    "sample_docs/chunk_stats.py": "python",
    "core/tokens/wordpiece_native.c": "c",
    "scripts/ticking.sh": "bash",
}


def _their_texts(language: str, settings: dict[str, Any], document: Document) -> list[str]:
    """CodeSplitter called directly, as its documentation shows, handed the grammar package's parser."""
    from importlib import import_module

    from llama_index.core import Document as LlamaDocument
    from llama_index.core.node_parser import CodeSplitter
    from tree_sitter import Language, Parser

    grammar = LANGUAGE_GRAMMARS[language]
    parser = Parser(Language(getattr(import_module(grammar.module), grammar.function)()))
    splitter = CodeSplitter(language=language, parser=parser, **settings)
    llama = LlamaDocument(text=document.text, metadata=dict(document.metadata))
    return [node.get_content() for node in splitter.get_nodes_from_documents([llama])]


def their_texts(document: Document, language: str, **settings: Any) -> list[str]:
    """:func:`_their_texts` in a bounded child too: the grammars' C runs in no test worker."""
    [texts] = map_bounded(
        partial(_their_texts, language, settings),
        [document],
        file_names=[document.metadata.get("file_name", "")],
        what="CodeSplitter",
        seconds=120,
        memory_mb=None,
    )
    return texts


def engine_split(document: Document, **settings: Any) -> list[Any]:
    return split_bounded([document], SPLITTERS.create("llamaindex.code", **settings))


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
    for path, language in FILES.items():
        document = load(ROOT / path)[0]
        nodes = engine_split(document, **settings)
        assert [node.text for node in nodes] == their_texts(document, language, **settings), path
        assert len(nodes) > (1 if settings else 0), path
        assert_placed_exactly(document, nodes)


SHAPES = '''import os


def area(width, height):
    """The area of a rectangle."""
    return width * height


class Box:
    def __init__(self, size):
        self.size = size

    def volume(self):
        return self.size ** 3
'''


def test_a_literal_example() -> None:
    document = Document(text=SHAPES, metadata={"file_name": "shapes.py"})
    # 120 characters: the module's top-level statements packed in order, the class whole; each chunk stripped.
    assert [(n.text, n.start_char) for n in engine_split(document, max_chars=120)] == [
        ('import os\n\n\ndef area(width, height):\n    """The area of a rectangle."""\n    return width * height', 0),
        ("class Box:\n    def __init__(self, size):\n        self.size = size\n\n    def volume(self):\n"
         "        return self.size ** 3", 100),
    ]  # fmt: skip
    # 80: the function and the class are too long, so each is cut into its children (its signature, its body).
    assert [n.text for n in engine_split(document, max_chars=80)] == [
        "import os",
        "def area(width, height):",
        '"""The area of a rectangle."""\n    return width * height',
        "class Box:",
        "def __init__(self, size):\n        self.size = size",
        "def volume(self):\n        return self.size ** 3",
    ]


def test_a_language_set_is_used_for_every_file() -> None:
    document = load(ROOT / "sample_docs/chunk_stats.py")[0]
    renamed = Document(text=document.text, metadata={"file_name": "chunk_stats.txt"})
    as_python = engine_split(renamed, language="python", max_chars=400)
    assert [node.text for node in as_python] == their_texts(document, "python", max_chars=400)
    assert_placed_exactly(renamed, as_python)


def test_a_file_whose_extension_has_no_grammar_is_refused_naming_those_that_have_one() -> None:
    notes = load(ROOT / "sample_docs/release_notes.txt")[0]
    engine = SPLITTERS.create("llamaindex.code")
    with pytest.raises(ConfigError) as refused:
        split_bounded([notes], engine)
    message = str(refused.value)
    assert message.startswith("llamaindex.code: CodeSplitter parses code") and "release_notes.txt" in message
    assert ".txt" in message and ".py, .js, .jsx, .ts, .tsx," in message and ".sql)" in message
    assert engine.unsuited_reason(notes) is not None  # the pages list it among the files the engine does not suit
    assert engine.unsuited_reason(load(ROOT / "sample_docs/chunk_stats.py")[0]) is None
    assert SPLITTERS.create("llamaindex.code", language="bash").unsuited_reason(notes) is None
    for name in ("notes.md", "page.html", "handbook.pdf", "Makefile", "paper.tex"):  # no Markdown grammar, no fallback
        assert language_for(name) is None, name


def test_code_the_grammar_cannot_read_is_refused_with_the_frameworks_sentence() -> None:
    document = Document(text=")))\n", metadata={"file_name": "broken.py"})
    with pytest.raises(ConfigError, match=r"llamaindex.code: LlamaIndex CodeSplitter refused: ValueError: Could not"):
        engine_split(document)


def test_grammars_by_extension_are_the_code_loaders_languages() -> None:
    assert language_for("app.py") == "python" and language_for("lib.ts") == "typescript"
    assert language_for("Component.TSX") == "tsx"  # JSX inside: the tsx grammar, not typescript's
    assert language_for("main.cs") == "csharp" and language_for("run.sh") == "bash"
    # Every extension the code loader reads has its grammar here, with the loader's language name, but LaTeX.
    assert set(LANGUAGES) - set(EXTENSIONS) == {".tex"}
    assert {suffix: EXTENSIONS[suffix] for suffix in LANGUAGES if suffix in EXTENSIONS} == {
        suffix: "tsx" if suffix == ".tsx" else language for suffix, language in LANGUAGES.items() if suffix != ".tex"
    }
    assert set(EXTENSIONS.values()) == set(LANGUAGE_GRAMMARS)


_EVERY_GRAMMAR = """
from core.engines.llamaindex_code import LANGUAGE_GRAMMARS, tree_sitter_parser
for language in LANGUAGE_GRAMMARS:
    tree = tree_sitter_parser(language).parse(b"x")
    assert tree.root_node is not None, language
print(len(LANGUAGE_GRAMMARS))
"""


def test_every_grammar_loads_under_the_pinned_tree_sitter() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _EVERY_GRAMMAR], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout.split()[-1]) == len(LANGUAGE_GRAMMARS) == 17


@pytest.mark.slow  # 17 processes, about 3 minutes
def test_the_stress_script_splits_every_grammar_and_exits_zero(tmp_path: Path) -> None:
    # Each grammar in its own process: the repository's files, generated files, and hypothesis-drawn garbage.
    # A crash in a grammar's C would show as a child killed by a signal, and the script would exit 1.
    result = subprocess.run(
        [sys.executable, "benchmarks/code_engine_stress.py", "--generated", "6", "--garbage", "12", "--own", "5",
         "--keep", str(tmp_path), "--seconds", "240"],
        capture_output=True, text=True, cwd=ROOT, timeout=1500,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    rows = [line.split() for line in result.stdout.splitlines() if line.endswith(" ok")]
    assert {row[0] for row in rows} == set(LANGUAGE_GRAMMARS)
    assert all(int(row[2]) >= 18 for row in rows)


def test_the_exported_script_names_the_packages_and_picks_grammars_as_the_app() -> None:
    from core.config import PipelineConfig
    from core.output.export import llamaindex_snippet

    script = llamaindex_snippet(PipelineConfig(splitter=SPLITTERS.create("llamaindex.code")), ["x.py"])
    install = script.split("Install:", 1)[1].split("\n", 1)[0]
    assert "'tree-sitter>=0.26.1,<0.27' tree-sitter-python " in install and "tree-sitter-c-sharp" in install
    assert "language-pack" not in script
    assert "node_parser = CodeSplitterByExtension(" in script
    assert "'.tsx': ('tsx', 'tree_sitter_typescript', 'language_tsx')," in script
    fixed = llamaindex_snippet(PipelineConfig(splitter=SPLITTERS.create("llamaindex.code", language="rust")), [])
    assert "parser=Parser(Language(tree_sitter_rust.language()))" in fixed and "CodeSplitterByExtension" not in fixed
    assert "tree-sitter-rust" in fixed.split("Install:", 1)[1].split("\n", 1)[0]


def test_the_native_code_splitters_llamaindex_export_names_the_grammar_packages() -> None:
    from core.config import PipelineConfig
    from core.output.export import llamaindex_snippet

    script = llamaindex_snippet(PipelineConfig(splitter=SPLITTERS.create("code", max_chars=900)), ["x.py"])
    install = script.split("Install:", 1)[1].split("\n", 1)[0]
    assert "tree-sitter-python" in install and "language-pack" not in script
    assert "CodeSplitterByExtension(" in script and "max_chars=900" in script
