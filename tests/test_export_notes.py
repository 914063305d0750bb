"""Notes in exported scripts are claims: where a note says chunks differ, and where, is checked here against
what the script's splitter makes (core.output.export_check runs the very code the script holds)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core import Document, get_splitter, load
from core.config import PipelineConfig
from core.documents import prepare_documents, run_split
from core.output.export import langchain_snippet, llamaindex_snippet
from core.output.export_check import check_export, script_chunks
from core.splitters.nodes import TABLE_ELEMENTS
from core.translate.snippet import notes_of

SNIPPETS = {"LlamaIndex": llamaindex_snippet, "LangChain": langchain_snippet}
REGEX_SEPARATORS = (r"\n#+ ", r"\n\n", r"\s+")


def _claim(splitter, library: str) -> str:
    """The one note of ``splitter``'s ``library`` script that says where its chunks differ from the app's."""
    notes = [note for note in notes_of(SNIPPETS[library](PipelineConfig(splitter=splitter))) if "differ" in note]
    assert len(notes) == 1, notes
    return notes[0]


def _untabled(documents: list[Document]) -> list[Document]:
    """The documents without their table elements: nothing left for ChunkScope to keep whole."""
    return [replace(d, elements=[e for e in d.elements if e.kind not in TABLE_ELEMENTS]) for d in documents]


@pytest.mark.parametrize("library", list(SNIPPETS))
@pytest.mark.parametrize(
    "params",
    [
        {"chunk_size": 300, "chunk_overlap": 0, "separators": REGEX_SEPARATORS, "is_separator_regex": True},
        {"chunk_size": 200, "chunk_overlap": 20},
    ],
    ids=["regex separators", "default separators"],
)
def test_native_recursive_says_its_chunks_differ_where_it_keeps_a_table_row_whole_and_only_there(
    library, params, sample_docs
):
    splitter = get_splitter("recursive", **params)
    config = PipelineConfig(splitter=splitter)
    claim = _claim(splitter, library)
    assert claim.startswith("recursive:") and "table row" in claim
    assert "exactly chunk_size" not in claim and "capturing group" not in claim  # characters, no groups
    # The guide's and the README's tables: LangChain cuts inside their rows.
    samples_readme = sample_docs.parent / "docs" / "samples.md"
    documents = [load(path)[0] for path in (sample_docs / "chunking_guide.md", samples_readme, sample_docs / "release_notes.txt")]
    check = check_export(config, documents, library)
    assert check.changed > 0
    app = [node.text for node in run_split(documents, config)]
    made = set(script_chunks(splitter, library, prepare_documents(documents, config)))
    changed = [text for text in app if text not in made]
    assert changed and all(any(line.startswith("|") for line in text.splitlines()) for text in changed)
    # Elsewhere the chunks are the app's: without table elements the script rebuilds every one.
    assert check_export(config, _untabled(documents), library).exact


def test_counting_tokens_a_piece_of_exactly_chunk_size_is_where_native_recursive_and_langchain_part():
    # Five words up to the blank line: ChunkScope keeps that piece whole; LangChain keeps only pieces below
    # chunk_size, so it cuts it at ". " and ". Four five." is three words ("." counts as one).
    text = "One two three. Four five.\n\nSix"
    splitter = get_splitter(
        "recursive", chunk_size=5, chunk_overlap=0, tokenizer="words", separators=("\n\n", ". ", " ")
    )
    document = Document(text=text)
    assert [node.text for node in splitter.split([document])] == ["One two three. Four five.", "Six"]
    for library in SNIPPETS:
        assert script_chunks(splitter, library, [document]) == ["One two three", ". Four five.", "Six"]
        assert "a piece is exactly chunk_size words long" in _claim(splitter, library)


def test_a_capturing_group_in_a_separator_regex_is_said_to_break_langchains_split():
    splitter = get_splitter("recursive", chunk_size=8, chunk_overlap=0, separators=(r"(-)-",), is_separator_regex=True)
    document = Document(text="first--second--third")
    assert [node.text for node in splitter.split([document])] == ["first", "--second", "--third"]
    for library in SNIPPETS:
        assert "capturing group" in _claim(splitter, library)
        try:
            made = script_chunks(splitter, library, [document])
        except Exception as exc:  # LangChain's re.split pairs the group with the pieces and runs off the end
            assert "IndexError" in str(exc)
        else:
            assert made != ["first", "--second", "--third"]  # the group's "-" comes twice


def test_compat_langchain_exports_langchains_own_call_and_claims_no_difference():
    splitter = get_splitter(
        "recursive", compat="langchain", chunk_size=300, separators=REGEX_SEPARATORS, is_separator_regex=True
    )
    for library in SNIPPETS:
        notes = notes_of(SNIPPETS[library](PipelineConfig(splitter=splitter)))
        assert not [note for note in notes if "differ" in note], notes
