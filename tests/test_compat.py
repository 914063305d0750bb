"""Compatible native modes reproduce the frameworks: the real LlamaIndex / LangChain splitter on the sample documents.

Each case runs the framework directly and ChunkScope's own splitter with its
``compat`` switch on the project's documents (Markdown, text, the HTML page's
loaded text, Python, the PDF's text) and asserts that it gives the framework's
chunk texts exactly, in the framework's order. Where a chunk is not a slice of the
source, the node's span still covers its source and it is marked ``rewritten``.
The same comparison on generated documents and settings is in test_compat_properties.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from core import load
from core.engines.llamaindex import llama_document, llamaindex_tokenizer
from core.schema import Document, Node, NodeRelationship
from core.spans.recovery import SPAN_STATUS_KEY
from core.splitters import get_splitter
from core.tokens.bundled_data import tiktoken_encoding, use_bundled_nltk_data

SAMPLES = Path(__file__).resolve().parent.parent / "sample_docs"
FILES = ("chunking_guide.md", "release_notes.txt", "vector_search_faq.html", "chunk_stats.py", "rag_handbook.pdf")


@cache
def sample_documents(with_metadata: bool = True) -> tuple[Document, ...]:
    documents = []
    for name in FILES:
        loaded = load(SAMPLES / name)
        document = loaded[0] if len(loaded) == 1 else replace(loaded[0], text="\n\n".join(d.text for d in loaded))
        documents.append(document if with_metadata else replace(document, metadata={}))
    return tuple(documents)


def llama_texts(parser: Any, document: Document) -> list[str]:
    use_bundled_nltk_data()
    tiktoken_encoding("cl100k_base")
    return [node.get_content() for node in parser.get_nodes_from_documents([llama_document(document)])]


def agreement(
    framework: Callable[[Document], list[str]], native: dict[str, Any], name: str, *, with_metadata: bool = True
) -> int:
    """Asserts the native mode gives the framework's chunk texts, in its order, on every sample; their count."""
    total = 0
    for document in sample_documents(with_metadata):
        theirs = framework(document)
        nodes = get_splitter(name, **native).split([document])
        assert [node.text for node in nodes] == theirs, document.metadata.get("file_name")
        check_spans(document, nodes)
        total += len(theirs)
    return total


def check_spans(document: Document, nodes: list[Node]) -> None:
    """A node is its source slice, or is marked rewritten and its span still holds all of its non-space text."""
    for node in nodes:
        source = document.text[node.start_char : node.end_char]
        if node.metadata.get(SPAN_STATUS_KEY) == "rewritten":
            assert node.text != source and "".join(node.text.split()) in "".join(source.split())
            assert SPAN_STATUS_KEY in node.excluded_llm_metadata_keys
        else:
            assert node.text == source


# --------------------------------------------------------------------------- LlamaIndex SentenceSplitter

SENTENCE_SETTINGS = [
    ("cl100k", 1024, 200),
    ("cl100k", 256, 20),
    ("cl100k", 128, 30),
    ("characters", 2048, 400),
    ("characters", 512, 40),
]


@pytest.mark.parametrize("with_metadata", [True, False], ids=["metadata", "no-metadata"])
@pytest.mark.parametrize(("tokenizer", "size", "overlap"), SENTENCE_SETTINGS)
def test_sentence_reproduces_llamaindex(tokenizer: str, size: int, overlap: int, with_metadata: bool) -> None:
    from llama_index.core.node_parser import SentenceSplitter

    parser = SentenceSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        tokenizer=llamaindex_tokenizer("cl100k_base" if tokenizer == "cl100k" else "characters"),
    )
    native = {"chunk_size": size, "chunk_overlap": overlap, "tokenizer": tokenizer, "compat": "llamaindex"}
    assert agreement(lambda d: llama_texts(parser, d), native, "sentence", with_metadata=with_metadata)


def test_sentence_compat_keeps_llamaindex_text_where_it_joins_with_a_gap() -> None:
    # A paragraph too big for a chunk is split into Punkt sentences, which drop the paragraph separator
    # before the first one; the sentence is then packed behind the previous paragraph without it.
    from llama_index.core.node_parser import SentenceSplitter

    text = "Intro line.\n\n\nFirst sentence here. Second sentence follows it. Third one ends it."
    parser = SentenceSplitter(chunk_size=40, chunk_overlap=0, tokenizer=list)
    document = Document(text=text)
    nodes = get_splitter("sentence", chunk_size=40, chunk_overlap=0, tokenizer="characters", compat="llamaindex").split(
        [document]
    )
    assert [node.text for node in nodes] == llama_texts(parser, document)
    check_spans(document, nodes)


# --------------------------------------------------------------------------- LangChain RecursiveCharacterTextSplitter


@pytest.mark.parametrize("language", ["python", "markdown", "none"])
@pytest.mark.parametrize(("size", "overlap"), [(4000, 200), (1000, 200), (100, 20)])
def test_recursive_reproduces_langchain(language: str, size: int, overlap: int) -> None:
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    if language == "none":
        splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
    else:
        splitter = RecursiveCharacterTextSplitter.from_language(
            Language(language), chunk_size=size, chunk_overlap=overlap
        )
    native = {"chunk_size": size, "chunk_overlap": overlap, "language": language, "compat": "langchain"}
    assert agreement(lambda d: splitter.split_text(d.text), native, "recursive")


def test_recursive_compat_uses_langchains_language_separators() -> None:
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    splitter = get_splitter("recursive", language="python", compat="langchain")
    expected = [s for s in RecursiveCharacterTextSplitter.get_separators_for_language(Language.PYTHON) if s]
    assert [pattern.pattern for pattern in splitter.separator_patterns()] == expected


# --------------------------------------------------------------------------- LangChain CharacterTextSplitter


@pytest.mark.parametrize("separator", ["\n\n", "\n", " "], ids=["blank-line", "line", "space"])
@pytest.mark.parametrize(("size", "overlap"), [(4000, 200), (400, 50), (100, 20)])
def test_character_reproduces_langchain(separator: str, size: int, overlap: int) -> None:
    from langchain_text_splitters import CharacterTextSplitter

    splitter = CharacterTextSplitter(separator=separator, chunk_size=size, chunk_overlap=overlap)
    native = {"chunk_size": size, "chunk_overlap": overlap, "separator": separator, "compat": "langchain"}
    logging.getLogger("langchain_text_splitters.base").setLevel(logging.ERROR)  # "Created a chunk of size ..."
    assert agreement(lambda d: splitter.split_text(d.text), native, "character")


def test_character_compat_counts_only_separators_between_pieces() -> None:
    # "aaaa\n\nbbbb": two pieces of 4 and one separator of 2 between them fit 10 characters exactly; the
    # native rule also counts the first piece's trailing separator, so it needs 10 for the pieces alone.
    document = Document(text="aaaa\n\nbbbb\n\ncc")
    texts = [
        n.text for n in get_splitter("character", chunk_size=10, chunk_overlap=0, compat="langchain").split([document])
    ]
    assert texts == ["aaaa\n\nbbbb", "cc"]


# --------------------------------------------------------------------------- LlamaIndex SentenceWindowNodeParser


@pytest.mark.parametrize("window_size", [1, 3])
def test_sentence_window_reproduces_llamaindex(window_size: int) -> None:
    from llama_index.core.node_parser import SentenceWindowNodeParser

    parser = SentenceWindowNodeParser.from_defaults(window_size=window_size)
    native = {"window_size": window_size, "compat": "llamaindex"}
    assert agreement(lambda d: llama_texts(parser, d), native, "sentence_window")
    for document in sample_documents():
        theirs = parser.get_nodes_from_documents([llama_document(document)])
        ours = get_splitter("sentence_window", **native).split([document])
        assert [n.metadata["window"] for n in ours] == [n.metadata["window"] for n in theirs]


# --------------------------------------------------------------------------- LlamaIndex HierarchicalNodeParser


@pytest.mark.parametrize("with_metadata", [True, False], ids=["metadata", "no-metadata"])
@pytest.mark.parametrize(
    ("tokenizer", "sizes"), [("cl100k", (2048, 512, 128)), ("cl100k", (512, 128, 64)), ("characters", (1536, 384, 192))]
)
def test_hierarchical_reproduces_llamaindex(tokenizer: str, sizes: tuple[int, ...], with_metadata: bool) -> None:
    from llama_index.core.node_parser import HierarchicalNodeParser, SentenceSplitter

    count = llamaindex_tokenizer("cl100k_base" if tokenizer == "cl100k" else "characters")
    parser = HierarchicalNodeParser.from_defaults(
        node_parser_ids=[f"chunk_size_{size}" for size in sizes],
        node_parser_map={
            f"chunk_size_{size}": SentenceSplitter(chunk_size=size, chunk_overlap=20, tokenizer=count) for size in sizes
        },
    )
    native = {"chunk_sizes": sizes, "chunk_overlap": 20, "tokenizer": tokenizer, "compat": "llamaindex"}
    assert agreement(lambda d: llama_texts(parser, d), native, "hierarchical", with_metadata=with_metadata)


# Where two level-1 parents overlap, the first child of the second parent starts before the last child of the
# first: LlamaIndex lists (and links) the children parent by parent, not in order of their start.
INTERLEAVED = (
    "ame: every node needs ChunkScope and its\n   dependencies in the Python environment Ray workers use (the "
    "cluster's image), the same version as the driver.\n2. **Paths readable from every "
)


def test_hierarchical_compat_lists_children_parent_by_parent() -> None:
    from llama_index.core.node_parser import HierarchicalNodeParser, SentenceSplitter

    sizes = (300, 120, 60)
    parser = HierarchicalNodeParser.from_defaults(
        node_parser_ids=[f"chunk_size_{size}" for size in sizes],
        node_parser_map={
            f"chunk_size_{size}": SentenceSplitter(chunk_size=size, chunk_overlap=50, tokenizer=list) for size in sizes
        },
    )
    document = Document(text=INTERLEAVED)
    native = {"chunk_sizes": sizes, "chunk_overlap": 50, "tokenizer": "characters"}
    nodes = get_splitter("hierarchical", **native, compat="llamaindex").split([document])
    assert [node.text for node in nodes] == llama_texts(parser, document)
    leaves = [(node.start_char, node.end_char) for node in nodes if node.metadata["level"] == 2]
    assert leaves != sorted(leaves)
    # PREVIOUS/NEXT link the children of one parent, as LlamaIndex links them.
    for node in nodes:
        following = node.relationships.get(NodeRelationship.NEXT)
        if following is not None:
            after = next(other for other in nodes if other.id == following)
            assert after.relationships.get(NodeRelationship.PARENT) == node.relationships.get(NodeRelationship.PARENT)
            assert after.start_char > node.start_char
    # ChunkScope's own mode keeps each level in order of its start, one chain per level.
    own = get_splitter("hierarchical", **native).split([document])
    own_leaves = [(node.start_char, node.end_char) for node in own if node.metadata["level"] == 2]
    assert own_leaves == sorted(own_leaves)


# --------------------------------------------------------------------------- the defaults stay ChunkScope's


@pytest.mark.parametrize(
    "name",
    ["sentence", "recursive", "character", "sentence_window", "hierarchical", "token", "markdown", "semantic", "code"],
)
def test_compat_defaults_to_none(name: str) -> None:
    assert get_splitter(name).compat == "none"


# --------------------------------------------------------------------------- LlamaIndex TokenTextSplitter


@pytest.mark.parametrize("with_metadata", [True, False], ids=["metadata", "no-metadata"])
@pytest.mark.parametrize(("size", "overlap"), [(1024, 20), (256, 20), (128, 30)])
def test_token_reproduces_llamaindex(size: int, overlap: int, with_metadata: bool) -> None:
    from llama_index.core.node_parser import TokenTextSplitter

    parser = TokenTextSplitter(chunk_size=size, chunk_overlap=overlap, tokenizer=llamaindex_tokenizer("cl100k_base"))
    native = {"chunk_size": size, "chunk_overlap": overlap, "tokenizer": "cl100k", "compat": "llamaindex"}
    logging.getLogger("llama_index.core.node_parser.text.token").setLevel(logging.ERROR)  # "Got a split of size ..."
    assert agreement(lambda d: llama_texts(parser, d), native, "token", with_metadata=with_metadata)


def test_token_compat_packs_whole_words_and_reserves_two_tokens() -> None:
    # Words are packed by their own token counts, a backup cut at newlines, then characters for a word
    # longer than the budget; 2 tokens of every chunk are reserved even without metadata.
    from llama_index.core.node_parser import TokenTextSplitter

    text = "alpha beta  gamma\ndelta\nepsilon " + "x" * 40 + " zeta eta theta iota kappa"
    document = Document(text=text)
    parser = TokenTextSplitter(chunk_size=8, chunk_overlap=2, tokenizer=llamaindex_tokenizer("cl100k_base"))
    logging.getLogger("llama_index.core.node_parser.text.token").setLevel(logging.ERROR)
    nodes = get_splitter("token", chunk_size=8, chunk_overlap=2, tokenizer="cl100k", compat="llamaindex").split(
        [document]
    )
    assert [node.text for node in nodes] == llama_texts(parser, document)
    check_spans(document, nodes)


# --------------------------------------------------------------------------- LlamaIndex MarkdownNodeParser

README_LIKE = """Preamble with `code`.

# The `chunkscope` CLI

Intro text.

## Installing with `pip` and *extras*

Run `pip install chunkscope`.

```bash
# a comment, not a heading
pip install chunkscope
```

### The `--output` flag ###
Text under it.
#\tTabbed `heading`
body
####### Seven `deep`
deep body
## Back to `two`
Setext
------
end
"""


def llama_markdown(document: Document) -> list[tuple[str, str]]:
    from llama_index.core.node_parser import MarkdownNodeParser

    nodes = MarkdownNodeParser().get_nodes_from_documents([llama_document(document)])
    return [(node.get_content(), node.metadata["header_path"]) for node in nodes]


def test_markdown_reproduces_llamaindex_on_the_samples() -> None:
    from llama_index.core.node_parser import MarkdownNodeParser

    parser = MarkdownNodeParser()
    guide = next(d for d in sample_documents() if d.metadata.get("file_name") == "chunking_guide.md")
    assert agreement(lambda d: llama_texts(parser, d), {"compat": "llamaindex"}, "markdown")
    ours = get_splitter("markdown", compat="llamaindex").split([guide])
    assert [(n.text, n.metadata["header_path"]) for n in ours] == llama_markdown(guide)


def test_markdown_compat_keeps_raw_titles_as_llamaindex() -> None:
    # Inline code keeps its backticks and emphasis its markers; a fenced "#" line is no heading; "#\t" is a
    # heading LlamaIndex rewrites to "# "; seven # still make one; a setext heading is none.
    document = Document(text=README_LIKE, metadata={"file_name": "README.md"})
    nodes = get_splitter("markdown", compat="llamaindex").split([document])
    theirs = llama_markdown(document)
    ours = [(n.text, n.metadata["header_path"]) for n in nodes]
    assert ours == theirs
    assert "header_1" not in nodes[2].metadata
    assert nodes[3].metadata["header_path"] == "/The `chunkscope` CLI/Installing with `pip` and *extras*/"
    check_spans(document, nodes)
    assert [n.metadata.get(SPAN_STATUS_KEY) for n in nodes].count("rewritten") == 1


def test_markdown_default_still_renders_titles() -> None:
    document = Document(text=README_LIKE)
    nodes = get_splitter("markdown").split([document])
    assert nodes[2].metadata["header_path"] == "/The chunkscope CLI/"


# --------------------------------------------------------------------------- every compat choice has a mirror


def _choices(spec: Any) -> list[Any]:
    """The values of a parameter worth enumerating: every choice and both booleans; other kinds at their default,
    and for a heading level or window every value a compat mode treats differently."""
    if spec.kind == "bool":
        return [True, False]
    if spec.kind == "choice" and spec.name != "compat":
        return list(spec.choices)
    if spec.name in ("heading_level", "window_size"):
        return [0, 1, 5, 6] if spec.name == "window_size" else [1, 5, 6]
    if spec.name == "chunk_size" and spec.default == 0:  # a heading splitter: 0 keeps sections whole
        return [0, 400]
    return [spec.default]


def compat_choices() -> list[tuple[str, str, dict[str, Any]]]:
    """Every (splitter, compat value, settings) a person can pick from the app, a config or the CLI."""
    from itertools import product

    from core.splitters import SPLITTERS

    found = []
    for cls in SPLITTERS:
        specs = {spec.name: spec for spec in cls.params()}
        if "compat" not in specs:
            continue
        names = [name for name in specs if name != "compat"]
        for compat in specs["compat"].choices[1:]:
            for values in product(*(_choices(specs[name]) for name in names)):
                found.append((cls.name, compat, dict(zip(names, values, strict=True))))
    return found


def test_every_compat_choice_has_a_mirror_or_is_refused_in_one_sentence() -> None:
    import re

    from core.engines.mirrors import mirrored_engine
    from core.errors import ConfigError

    choices = compat_choices()
    assert {name for name, _, _ in choices} == {
        "sentence", "token", "hierarchical", "sentence_window", "markdown", "recursive", "character", "semantic", "code"
    }  # fmt: skip
    mirrored = refused = 0
    counting_model_tokens = set()
    for name, compat, params in choices:
        try:
            splitter = get_splitter(name, **params, compat=compat)
        except ConfigError as exc:
            framework = {"llamaindex": "LlamaIndex", "langchain": "LangChain"}[compat]
            assert re.fullmatch(rf"{name}: compat={compat} [^;\n]+; \S+ has no {framework} equivalent", str(exc)), exc
            # Every named tokenizer has a framework call counting it (the embedding model's included).
            assert "tokenizer=" not in str(exc), exc
            refused += 1
            continue
        engine = mirrored_engine(splitter)
        assert engine is not None, f"{name} compat={compat} {params} is offered without a mirror"
        # markdown's and semantic's tokenizer sizes only what their compat modes refuse (chunk_size, max_chunk_size).
        if "tokenizer" in params and name not in ("markdown", "semantic"):  # a mode that counts sizes counts them as its engine does
            assert engine.size_unit == params["tokenizer"], (name, compat, params)
            if params["tokenizer"] == "model":
                counting_model_tokens.add(name)
        assert engine.framework_class.lower().startswith(("sentence", "token", "hierarchical", "markdown",
                                                          "recursive", "character", "semantic", "code"))  # fmt: skip
        mirrored += 1
    assert mirrored and refused
    # ChunkScope's default tokenizer for sentence, token and hierarchical: a compat mode takes it.
    assert counting_model_tokens == {"sentence", "token", "hierarchical", "recursive", "character"}


@pytest.mark.parametrize(
    ("name", "params", "refused"),
    [
        ("sentence", {"tokenizer": "cl100k", "metadata_aware": False}, "metadata_aware=false has no LlamaIndex"),
        ("hierarchical", {"tokenizer": "cl100k", "metadata_aware": False}, "metadata_aware=false has no LlamaIndex"),
        ("sentence_window", {"window_size": 0}, "window_size=0 has no LlamaIndex equivalent"),
        ("markdown", {"heading_level": 2}, "heading_level=2 has no LlamaIndex equivalent"),
        ("markdown", {"chunk_size": 400}, "chunk_size=400 has no LlamaIndex equivalent"),
        ("recursive", {"keep_separator": "end"}, "keep_separator=end has no LangChain equivalent"),
    ],
)
def test_a_compat_setting_no_framework_call_expresses_is_refused(name: str, params: dict, refused: str) -> None:
    from core.errors import ConfigError

    compat = "langchain" if name in ("recursive", "character") else "llamaindex"
    with pytest.raises(ConfigError, match=refused):
        get_splitter(name, **params, compat=compat)
    # ChunkScope's own mode takes them all.
    assert get_splitter(name, **params).compat == "none"


def test_character_compat_counts_words_as_langchain_with_a_length_function() -> None:
    # #26: character compat=langchain with the words tokenizer had no mirror and exported keep_separator='end'.
    from langchain_text_splitters import CharacterTextSplitter

    from core.engines.mirrors import mirrored_engine

    params = {"separator": "\n", "chunk_size": 60, "chunk_overlap": 10, "tokenizer": "words"}
    splitter = get_splitter("character", **params, compat="langchain")
    theirs = CharacterTextSplitter(
        separator="\n", chunk_size=60, chunk_overlap=10, length_function=lambda text: len(text.split())
    )
    logging.getLogger("langchain_text_splitters.base").setLevel(logging.ERROR)
    assert agreement(lambda d: theirs.split_text(d.text), {**params, "compat": "langchain"}, "character") > 20
    engine = mirrored_engine(splitter)
    assert (engine.name, engine.length_function) == ("langchain.character", "words")


def test_llamaindex_compat_counts_words_as_str_split() -> None:
    from llama_index.core.node_parser import SentenceSplitter

    parser = SentenceSplitter(chunk_size=80, chunk_overlap=10, tokenizer=str.split)
    native = {"chunk_size": 80, "chunk_overlap": 10, "tokenizer": "words", "compat": "llamaindex"}
    assert agreement(lambda d: llama_texts(parser, d), native, "sentence") > 10


def test_llamaindex_compat_gives_an_empty_text_one_empty_node() -> None:
    # LlamaIndex's sentence and token splitters return [""] for "" (a blank text gives none).
    for name in ("sentence", "token"):
        splitter = get_splitter(name, tokenizer="characters", chunk_size=50, chunk_overlap=0, compat="llamaindex")
        (node,) = splitter.split([Document(text="")])
        assert (node.text, node.start_char, node.end_char) == ("", 0, 0)
        assert splitter.split([Document(text=" \n ")]) == []
        assert get_splitter(name, tokenizer="characters", chunk_size=50, chunk_overlap=0).split([Document(text="")]) == []


def test_llamaindex_compat_budgets_for_metadata_the_nodes_do_not_inherit() -> None:
    # LlamaIndex leaves room for the document's metadata even with include_metadata=False.
    from llama_index.core.node_parser import SentenceSplitter

    document = Document(text="alpha beta gamma delta epsilon zeta eta theta", metadata={"file_name": "doc.md"})
    native = {"chunk_size": 30, "chunk_overlap": 0, "tokenizer": "characters", "include_metadata": False}
    ours = get_splitter("sentence", **native, compat="llamaindex").split([document])
    theirs = SentenceSplitter(chunk_size=30, chunk_overlap=0, tokenizer=list, include_metadata=False)
    # 30 characters less "file_name: doc.md" leaves 13 for text.
    assert [n.text for n in ours] == llama_texts(theirs, document) == ["alpha beta", "gamma delta", "epsilon zeta",
                                                                       "eta theta"]  # fmt: skip
    assert "file_name" not in ours[0].metadata


def test_recursive_compat_keeps_an_oversized_piece_as_langchain_does() -> None:
    # With no separator left to cut it, LangChain keeps a piece too big to pack exactly as it is (whitespace
    # included); it never tries a separator after "", and reads LaTeX's "\\begin{" as a literal brace.
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    cases = [
        ({"separators": ("the",)}, "a b c d e f g h i j the k\n", RecursiveCharacterTextSplitter(
            chunk_size=10, chunk_overlap=0, separators=["the"])),
        ({"separators": ("\n", "", " ")}, "abc def ghi\njk", RecursiveCharacterTextSplitter(
            chunk_size=4, chunk_overlap=1, separators=["\n", "", " "])),
        ({"language": "latex"}, "\\section{A}\nx\n\\begin{itemize} y \\end{itemize}\n", RecursiveCharacterTextSplitter
         .from_language(Language.LATEX, chunk_size=12, chunk_overlap=0)),
    ]  # fmt: skip
    for params, text, theirs in cases:
        size, overlap = theirs._chunk_size, theirs._chunk_overlap
        ours = get_splitter("recursive", chunk_size=size, chunk_overlap=overlap, **params, compat="langchain")
        nodes = ours.split([Document(text=text)])
        assert [n.text for n in nodes] == theirs.split_text(text), params
        check_spans(Document(text=text), nodes)


def test_markdown_compat_without_inherited_metadata_has_no_header_path() -> None:
    document = Document(text="# Title\n\nbody\n", metadata={"file_name": "a.md"})
    nodes = get_splitter("markdown", compat="llamaindex", include_metadata=False).split([document])
    assert [n.metadata for n in nodes] == [{}]


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("langchain.character", {"separator": "\n", "chunk_size": 40, "chunk_overlap": 5, "length_function": "words"}),
        ("langchain.character", {"chunk_size": 120, "chunk_overlap": 10, "length_function": "cl100k"}),
        ("langchain.recursive", {"chunk_size": 60, "chunk_overlap": 10, "length_function": "o200k"}),
        ("llamaindex.sentence", {"chunk_size": 80, "chunk_overlap": 10, "tokenizer": "words"}),
        ("llamaindex.hierarchical", {"chunk_sizes": (200, 60), "chunk_overlap": 10, "tokenizer": "words"}),
    ],
)
def test_an_engine_counting_as_a_compat_mode_exports_the_call_that_ran(name: str, params: dict) -> None:
    # The units the engines gained to mirror every compat tokenizer are written as they ran.
    from test_engines import run_snippet

    from core.splitters import SPLITTERS

    engine = SPLITTERS.create(name, **params)
    document = sample_documents()[0]
    texts = [node.text for node in engine.split([document])]
    assert len(texts) > 3
    library = "llamaindex" if name.startswith("llamaindex.") else "langchain"
    assert run_snippet(engine, library, document) == texts
