"""No silent stand-in: where a framework has no equivalent, the script says so at the call, keeps every parameter
it can, and the export check counts the chunks the stand-in changes."""

from __future__ import annotations

import pytest
from test_export import _calls, _keywords

from core import get_splitter, load
from core.config import PipelineConfig
from core.output.export import langchain_snippet, llamaindex_snippet
from core.splitters import SPLITTERS
from core.translate.snippet import notes_of

# -- no silent stand-in ---------------------------------------------------------------------------------------------


def _comment_above(script: str, line_start: str) -> str:
    """The comment lines right above the first line starting with ``line_start``."""
    lines = [line.lstrip() for line in script.splitlines()]  # a translation may sit in the own split's else branch
    index = next(i for i, line in enumerate(lines) if line.startswith(line_start))
    above = []
    while index > 0 and lines[index - 1].startswith("#"):
        index -= 1
        above.insert(0, lines[index][2:])
    return " ".join(above)


def test_the_langchain_stand_in_for_llamaindex_sentence_keeps_the_overlap_and_the_unit_and_says_so_at_the_call():
    config = PipelineConfig(splitter=SPLITTERS.create("llamaindex.sentence", chunk_size=512, chunk_overlap=200))
    chain = langchain_snippet(config)
    keywords = _keywords(chain, "RecursiveCharacterTextSplitter")
    assert keywords["chunk_size"] == "512" and keywords["chunk_overlap"] == "200"
    assert "CL100K_BASE.encode" in keywords["length_function"]  # sizes in the same tokens, not characters
    above = _comment_above(chain, "text_splitter =")
    assert "stands in" in above and "chunk_overlap (200)" in above and "unit (cl100k)" in above


def test_the_llamaindex_stand_in_for_langchains_markdown_headers_is_markdownnodeparser():
    llama = llamaindex_snippet(PipelineConfig(splitter=SPLITTERS.create("langchain.markdown_header")))
    assert "MarkdownNodeParser" in _calls(llama) and "SentenceSplitter" not in _calls(llama)
    assert "MarkdownNodeParser" in _comment_above(llama, "node_parser =")


@pytest.mark.parametrize("name", [n for n in SPLITTERS.names() if "." in n or n == "semchunk"])
def test_every_engine_stand_in_says_so_at_the_call_and_keeps_its_overlap(name):
    engine = SPLITTERS.create(name)
    config = PipelineConfig(splitter=engine)
    for library, script in (("LlamaIndex", llamaindex_snippet(config)), ("LangChain", langchain_snippet(config))):
        native = engine.framework == library or (library == "LlamaIndex" and "LangchainNodeParser" in _calls(script))
        if native:
            continue  # the call that ran
        start = (
            "node_parser ="
            if library == "LlamaIndex"
            else next(
                line
                for line in script.splitlines()
                if line.startswith(
                    ("text_splitter =", "def sentence_windows", "levels =", "header_splitter =", "html_splitter =")
                )
            )
        )
        assert f"{name}: ChunkScope ran" in _comment_above(script, start), library
        overlap = engine.stand_in_sizes()[1]
        stand_in = {"SentenceSplitter", "RecursiveCharacterTextSplitter"} & _calls(script)
        if overlap and stand_in:
            assert _keywords(script, stand_in.pop())["chunk_overlap"] == str(overlap), library


def test_the_export_check_counts_the_chunks_a_stand_in_changes(sample_docs):
    from core.output.export_check import check_export

    config = PipelineConfig(splitter=SPLITTERS.create("llamaindex.sentence", chunk_size=512, chunk_overlap=200))
    documents = load(sample_docs / "chunking_guide.md")
    exact = check_export(config, documents, "LlamaIndex")
    assert exact.exact and exact.sentence() == f"The LlamaIndex script rebuilds all {exact.app_chunks} chunks."
    stand_in = check_export(config, documents, "LangChain")
    assert 0 < stand_in.changed <= stand_in.app_chunks == exact.app_chunks
    assert stand_in.sentence().startswith(f"The LangChain script would change {stand_in.changed} of {exact.app_chunks}")


def test_token_windows_in_tiktoken_export_to_langchains_token_splitter_and_rebuild_every_chunk(sample_docs):
    from core.output.export_check import check_export

    config = PipelineConfig(splitter=get_splitter("token", tokenizer="cl100k", chunk_size=128, chunk_overlap=16))
    chain = langchain_snippet(config)
    assert _keywords(chain, "TokenTextSplitter") == {
        "encoding_name": "'cl100k_base'",
        "chunk_size": "128",
        "chunk_overlap": "16",
    }
    check = check_export(config, load(sample_docs / "chunking_guide.md"), "LangChain")
    assert check.exact and check.app_chunks > 10


@pytest.mark.parametrize("name", [n for n in SPLITTERS.names() if n.startswith(("llamaindex.", "langchain."))])
def test_the_export_check_finds_an_engines_own_script_exact(name, sample_docs):
    # The call that ran, run again by the check on a page (markup) and on Markdown (text): every chunk comes back.
    from core.output.export_check import check_export

    engine = SPLITTERS.create(name)
    documents = load(sample_docs / "chunking_guide.md") + load(sample_docs / "vector_search_faq.html")
    if name == "llamaindex.code":  # it refuses a file with no tree-sitter grammar: the Python sample
        documents = load(sample_docs / "chunk_stats.py")
    check = check_export(PipelineConfig(splitter=engine), documents, engine.framework)
    assert check.exact and check.same_order, check


def test_model_token_windows_longer_than_the_models_export_a_splitter_that_runs():
    from core import Document
    from core.output.export_check import script_chunks

    # SentenceTransformersTokenTextSplitter refuses windows over the model's 256 tokens: the default 1024 stands in.
    splitter = get_splitter("token", tokenizer="model", chunk_size=1024, chunk_overlap=20)
    chain = langchain_snippet(PipelineConfig(splitter=splitter))
    assert "SentenceTransformersTokenTextSplitter" not in _calls(chain)
    assert "256" in _comment_above(chain, "text_splitter =")
    assert script_chunks(splitter, "LangChain", [Document(text="word " * 3000)])
    small = get_splitter("token", tokenizer="model", chunk_size=128, chunk_overlap=16)
    assert "SentenceTransformersTokenTextSplitter" in _calls(langchain_snippet(PipelineConfig(splitter=small)))


# -- every parameter a stand-in does not carry over is named in its note ---------------------------------------------

STAND_IN_SCRIPTS = {"LlamaIndex": llamaindex_snippet, "LangChain": langchain_snippet}


def _stand_in_pairs() -> list[tuple[str, str]]:
    """(engine, library) for every engine that library has no call of: a stand-in is written."""
    pairs = []
    for name in SPLITTERS.names():
        cls = SPLITTERS.get_class(name)
        if not hasattr(cls, "stand_in_note"):
            continue  # a native splitter: a translation, not a stand-in
        for library in STAND_IN_SCRIPTS:
            own = cls.framework == library or (
                library == "LlamaIndex" and cls.framework == "LangChain" and not cls.splits_to_documents
            )
            if not own:
                pairs.append((name, library))
    return pairs


def _other_values(spec) -> list:
    """Values of a declared parameter other than its default, for a form to try (some a component refuses)."""
    default = spec.default
    if spec.kind == "bool":
        return [not default]
    if spec.kind == "int":
        return [default + 1, default - 1, 1, 2]
    if spec.kind == "float":
        return [0.5, 2.0] if default is None else [default + 1, default / 2]
    if spec.kind == "choice":
        return [choice for choice in (*spec.choices, *([None] if spec.optional else [])) if choice != default]
    if spec.kind == "int_list":
        return [tuple(sorted({*default, max(default) * 2}))]
    if spec.kind == "str_list":
        return [default[:-1], (*default, "xx")] if default else [("xx",)]
    return [default + "x", "x"]


def _code(script: str) -> str:
    """The script's lines that run (its comments, the notes among them, left out)."""
    return "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("name, library", _stand_in_pairs())
def test_a_stand_ins_note_names_every_parameter_it_does_not_carry_over(name, library):
    """Each declared parameter, changed from its default: where the stand-in's code stays the same (it does not
    carry the parameter), the note at the top names it with its value; where the code changes, the note does not
    claim it was dropped."""
    write = STAND_IN_SCRIPTS[library]
    cls = SPLITTERS.get_class(name)
    baseline = _code(write(PipelineConfig(splitter=cls())))
    checked = 0
    for spec in cls.params():
        for value in _other_values(spec):
            try:
                engine = cls.from_params({spec.name: value})
            except Exception:  # a value this engine refuses: try the next
                continue
            script = write(PipelineConfig(splitter=engine))
            (note,) = [note for note in notes_of(script) if note.startswith(f"{name}: ChunkScope ran")]
            dropped = (
                note.split("it takes none of ", 1)[1].split(", so chunks differ", 1)[0]
                if "it takes none of " in note
                else ""
            )
            named = [item.split(" ")[0] for item in dropped.split(", ")] if dropped else []
            if f"{spec.name} beyond " in dropped:
                pass  # carried in part (llamaindex.html's tags: its headings), and said so
            elif _code(script) == baseline:
                assert f"{spec.name} (changed)" in dropped, (spec.name, value, note)
            else:
                assert spec.name not in named, (spec.name, value, note)
            checked += 1
            break
    assert checked >= 2


def test_the_llamaindex_html_stand_in_says_nothing_about_chunkscopes_visible_text():
    script = langchain_snippet(PipelineConfig(splitter=SPLITTERS.create("llamaindex.html")))
    assert "visible text" not in script
    assert any(
        note.startswith("llamaindex.html: ChunkScope ran LlamaIndex HTMLNodeParser") for note in notes_of(script)
    )


def test_stand_in_notes_name_the_settings_the_issue_found_dropped():
    cases = [
        (
            "llamaindex.sentence",
            {"secondary_chunking_regex": "[^.]+"},
            "LangChain",
            "secondary_chunking_regex (changed)",
        ),
        ("chonkie.sentence", {"delim": (". ",)}, "LangChain", "delim (changed)"),
        ("llamaindex.markdown", {"header_path_separator": " > "}, "LangChain", "header_path_separator (changed)"),
        ("langchain.markdown_header", {"strip_headers": False}, "LlamaIndex", "strip_headers (changed)"),
        (
            "langchain.markdown_header",
            {},
            "LlamaIndex",
            "none of headers_to_split_on, return_each_line, strip_headers,",
        ),
    ]
    for name, params, library, named in cases:
        script = STAND_IN_SCRIPTS[library](PipelineConfig(splitter=SPLITTERS.create(name, **params)))
        assert any(named in note for note in notes_of(script)), (name, notes_of(script))
