"""code with compat=llamaindex: LlamaIndex's CodeSplitter, the llamaindex.code engine's chunks, text and spans.

What must hold: on files the tests did not write (the sample, this repository's Python, C and shell) and on
texts drawn for every one of the 17 grammars (files of the language's constructs, hypothesis-drawn soups of its
tokens and any Unicode, CRLF), the native splitter in ``compat="llamaindex"`` gives the engine's nodes: the same
``(start_char, end_char, text)`` in order, or both refuse the file; the rule reads as its spec on a literal
example (what a too-large node becomes, what an all-whitespace chunk becomes); a file whose extension names no
grammar is refused naming the file; the mode names the engine as its mirror, so Export writes CodeSplitter's call.

Both sides parse in a bounded child (a grammar's C can crash: tree-sitter-bash does on some garbage). The drawn
texts of one grammar go through one child (the compat mode and the engine split each text there, inline); if
that child dies, each text is split again in a child of its own, and then both sides must fail alike.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import load
from core.documents import split_bounded
from core.engines.mirrors import mirrored_engine
from core.errors import ConfigError, WorkLimitError
from core.runtime.bounded import map_bounded
from core.schema import Document
from core.splitters import SPLITTERS
from core.splitters.code_llamaindex import EXTENSIONS, LANGUAGE_GRAMMARS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
# Written by people, for other reasons than these tests.
FILES = (
    "sample_docs/chunk_stats.py",
    "core/engines/base.py",
    "core/splitters/code.py",
    "core/tokens/wordpiece_native.c",
    "scripts/ticking.sh",
)
# A suffix per grammar: the file name a drawn text is given.
SUFFIX = {language: next(s for s, name in EXTENSIONS.items() if name == language) for language in LANGUAGE_GRAMMARS}


def compat(**settings: Any) -> Any:
    return SPLITTERS.create("code", compat="llamaindex", **settings)


def engine_of(splitter: Any) -> Any:
    engine = mirrored_engine(splitter)
    assert engine is not None and engine.name == "llamaindex.code"
    return engine


def rows(nodes: list[Any]) -> list[tuple[int, int, str]]:
    return [(node.start_char, node.end_char, node.text) for node in nodes]


def outcome(splitter: Any, document: Document) -> list[tuple[int, int, str]] | str:
    """The split's rows, or the kind of failure: refused (ConfigError) or the child stopped (WorkLimitError)."""
    try:
        return rows(splitter.split([document]))
    except ConfigError:
        return "refused"
    except WorkLimitError:
        return "stopped"


# ---------------------------------------------------------------------------------------------- the spec

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
    # 80 characters: the function and the class are too long, so each is cut into its children; the text before a
    # child (the blank lines, the indentation) goes with it, then every chunk is stripped.
    assert [(n.text, n.start_char, n.end_char) for n in compat(max_chars=80).split([document])] == [
        ("import os", 0, 9),
        ("def area(width, height):", 12, 36),
        ('"""The area of a rectangle."""\n    return width * height', 41, 97),
        ("class Box:", 100, 110),
        ("def __init__(self, size):\n        self.size = size", 115, 165),
        ("def volume(self):\n        return self.size ** 3", 171, 218),
    ]
    # A leaf too long (the comment) is cut every max_chars characters from where the previous node ended, the
    # spaces before it included: two all-blank pieces, kept as empty chunks where the chunk before them ended.
    document = Document(text="x=1" + " " * 25 + "#" + "a" * 30, metadata={"file_name": "line.py"})
    assert [(n.text, n.start_char) for n in compat(max_chars=10).split([document])] == [
        ("x=1", 0), ("", 3), ("", 3), ("#aaaa", 28), ("a" * 10, 33), ("a" * 10, 43), ("a" * 6, 53),
    ]  # fmt: skip


def test_a_file_whose_extension_has_no_grammar_is_refused_and_the_default_mode_reads_any_text() -> None:
    notes = load(ROOT / "sample_docs/release_notes.txt")[0]
    splitter = compat()
    reason = splitter.unsuited_reason(notes)
    assert reason is not None and "release_notes.txt" in reason and "set compat to none" in reason
    with pytest.raises(ConfigError, match=r"^code: compat=llamaindex: CodeSplitter parses code .*release_notes"):
        split_bounded([notes], splitter)
    assert SPLITTERS.create("code").split([notes])


def test_code_the_grammar_cannot_read_is_refused_as_codesplitter_refuses_it() -> None:
    document = Document(text=")))\n", metadata={"file_name": "broken.py"})
    with pytest.raises(ConfigError, match=r"code: compat=llamaindex: LlamaIndex CodeSplitter refused: ValueError: Could"):
        compat().split([document])


def test_the_mirror_is_codesplitters_call_with_the_same_settings() -> None:
    engine = engine_of(compat(max_chars=600, chunk_lines=30, chunk_lines_overlap=0))
    assert (engine.language, engine.max_chars, engine.count_mode, engine.chunk_lines) == ("auto", 600, "char", 30)
    assert engine.chunk_lines_overlap == 1  # CodeSplitter's must be above 0, and it never reads it
    assert mirrored_engine(SPLITTERS.create("code")) is None
    assert compat().covers_text is False and SPLITTERS.create("code").covers_text is True


# ---------------------------------------------------------------------------------------------- files people wrote


@pytest.mark.parametrize("max_chars", [1500, 300, 60])
def test_on_files_people_wrote_compat_gives_the_engines_nodes(max_chars: int) -> None:
    splitter = compat(max_chars=max_chars)
    engine = engine_of(splitter)
    for path in FILES:
        document = load(ROOT / path)[0]
        ours = rows(split_bounded([document], splitter))
        assert ours == rows(split_bounded([document], engine)), path
        assert len(ours) > (0 if max_chars == 1500 else 1), path
        assert all(document.text[start:end] == text for start, end, text in ours), path


# ---------------------------------------------------------------------------------------------- every grammar, drawn


def _both(pair: tuple[Any, Any], document: Document) -> tuple[Any, Any]:
    """In one child: the compat mode's and the engine's outcome for ``document`` (each splits inline there)."""
    ours, engine = pair
    return outcome(ours, document), outcome(engine, document)


@st.composite
def drawn_texts(draw: st.DrawFn, language: str) -> str:
    from code_engine_stress import garbage_strategy, generated

    text = draw(st.one_of(st.randoms(use_true_random=False).map(lambda rng: generated(language, rng)),
                          garbage_strategy(language)))  # fmt: skip
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


@pytest.mark.parametrize("language", list(LANGUAGE_GRAMMARS))
def test_on_drawn_texts_of_every_grammar_compat_gives_the_engines_nodes(language: str) -> None:
    @settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(texts=st.lists(drawn_texts(language), min_size=4, max_size=4), max_chars=st.integers(20, 800))
    def run(texts: list[str], max_chars: int) -> None:
        splitter = compat(max_chars=max_chars)
        engine = engine_of(splitter)
        documents = [Document(text=text, metadata={"file_name": f"drawn{SUFFIX[language]}"}) for text in texts]
        try:
            pairs = map_bounded(
                lambda document: _both((splitter, engine), document),
                documents,
                file_names=[f"drawn{SUFFIX[language]}"] * len(documents),
                what="both splits",
                seconds=300,
                memory_mb=None,
            )
        except WorkLimitError:  # a grammar crashed the child: each text again, each side in a child of its own
            pairs = [(outcome(splitter, document), outcome(engine, document)) for document in documents]
        for document, (ours, theirs) in zip(documents, pairs, strict=True):
            assert ours == theirs, document.text

    run()
