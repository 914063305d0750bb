"""Framework engines: the real LlamaIndex, LangChain, chonkie and semchunk splitters behind ChunkScope's API.

What must hold: each engine's parameters are the framework's, with its defaults;
on the project's own sample documents, at several settings, an engine's node
texts are exactly the framework's output called directly, in order, and every
span is valid (an ``exact`` node is ``document.text[start:end]``); the metadata
the framework gives (header paths, windows, parents and children) is kept, and
the LLM and EMBED views read what the framework's own nodes read; nothing is
downloaded.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from core import MetadataMode, load
from core.engines import FrameworkSplitter
from core.engines.langchain import LANGUAGES
from core.schema import Document, NodeRelationship
from core.spans.recovery import SPAN_STATUS_KEY
from core.spans.rewrites import span_counts
from core.splitters import SPLITTERS
from core.tokens.bundled_data import bundled_encodings, tiktoken_encoding

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_docs"
SAMPLE_FILES = (
    "chunking_guide.md",
    "release_notes.txt",
    "vector_search_faq.html",
    "chunk_stats.py",
    "rag_handbook.pdf",
)
ENGINES = [cls for cls in SPLITTERS if issubclass(cls, FrameworkSplitter)]
ENGINE_NAMES = {
    "llamaindex.sentence",
    "llamaindex.token",
    "llamaindex.sentence_window",
    "llamaindex.markdown",
    "llamaindex.hierarchical",
    "llamaindex.html",
    "llamaindex.semantic",
    "llamaindex.code",
    "langchain.recursive",
    "langchain.character",
    "langchain.token",
    "langchain.markdown_header",
    "langchain.html_header",
    "langchain.semantic",
    "chonkie.recursive",
    "chonkie.token",
    "chonkie.sentence",
    "chonkie.semantic",
    "semchunk",
}

# Two or three settings per engine: its defaults, and sizes small enough to cut the samples many times.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("llamaindex.sentence", {}),
    ("llamaindex.sentence", {"chunk_size": 256, "chunk_overlap": 32}),
    ("llamaindex.sentence", {"chunk_size": 600, "chunk_overlap": 60, "tokenizer": "characters"}),
    ("llamaindex.token", {}),
    ("llamaindex.token", {"chunk_size": 128, "chunk_overlap": 16}),
    ("llamaindex.token", {"chunk_size": 500, "chunk_overlap": 50, "tokenizer": "characters"}),
    ("llamaindex.sentence_window", {}),
    ("llamaindex.sentence_window", {"window_size": 1}),
    ("llamaindex.markdown", {}),
    ("llamaindex.markdown", {"header_path_separator": " > "}),
    ("llamaindex.hierarchical", {}),
    ("llamaindex.hierarchical", {"chunk_sizes": (512, 128), "chunk_overlap": 10}),
    ("llamaindex.hierarchical", {"chunk_sizes": (1200, 400), "chunk_overlap": 40, "tokenizer": "characters"}),
    ("llamaindex.html", {}),
    ("llamaindex.html", {"tags": ("p", "li", "h2", "h3", "pre"), "include_metadata": False}),
    ("llamaindex.semantic", {}),
    ("llamaindex.semantic", {"buffer_size": 2, "breakpoint_percentile_threshold": 80}),
    ("llamaindex.code", {}),
    ("llamaindex.code", {"max_chars": 400}),
    ("llamaindex.code", {"count_mode": "token", "max_tokens": 96}),
    ("langchain.recursive", {}),
    ("langchain.recursive", {"chunk_size": 500, "chunk_overlap": 50}),
    ("langchain.recursive", {"chunk_size": 400, "chunk_overlap": 40, "language": "markdown"}),
    ("langchain.recursive", {"chunk_size": 300, "chunk_overlap": 30, "language": "python"}),
    ("langchain.character", {}),
    ("langchain.character", {"chunk_size": 500, "chunk_overlap": 50}),
    ("langchain.character", {"chunk_size": 300, "chunk_overlap": 0, "separator": "\n"}),
    ("langchain.token", {}),
    ("langchain.token", {"chunk_size": 100, "chunk_overlap": 10}),
    ("langchain.token", {"chunk_size": 64, "chunk_overlap": 8, "encoding_name": "o200k_base"}),
    ("langchain.markdown_header", {}),
    ("langchain.markdown_header", {"strip_headers": False}),
    ("langchain.markdown_header", {"return_each_line": True}),
    ("langchain.html_header", {}),
    ("langchain.html_header", {"headers_to_split_on": ("h2 Section",)}),
    ("langchain.html_header", {"return_each_element": True}),
    ("langchain.semantic", {}),
    ("langchain.semantic", {"breakpoint_threshold_type": "gradient", "buffer_size": 2}),
    ("chonkie.recursive", {}),
    ("chonkie.recursive", {"chunk_size": 512}),
    ("chonkie.recursive", {"chunk_size": 128, "tokenizer": "cl100k_base"}),
    ("chonkie.token", {}),
    ("chonkie.token", {"chunk_size": 256, "chunk_overlap": 32}),
    ("chonkie.token", {"chunk_size": 100, "chunk_overlap": 10, "tokenizer": "o200k_base"}),
    ("chonkie.sentence", {}),
    ("chonkie.sentence", {"chunk_size": 512, "chunk_overlap": 64}),
    ("chonkie.sentence", {"chunk_size": 128, "tokenizer": "cl100k_base"}),
    ("chonkie.semantic", {}),
    ("chonkie.semantic", {"threshold": 0.5, "chunk_size": 128, "similarity_window": 1}),
    ("semchunk", {}),
    ("semchunk", {"chunk_size": 100, "overlap": 0.2}),
    ("semchunk", {"chunk_size": 400, "token_counter": "characters"}),
]


@cache
def sample_documents() -> tuple[Document, ...]:
    return tuple(document for name in SAMPLE_FILES for document in load(SAMPLES / name))


def suited_samples(engine: FrameworkSplitter) -> tuple[Document, ...]:
    """The samples an engine takes: all of them, but the code engine refuses what has no grammar (text, a page)."""
    if engine.name != "llamaindex.code":
        return sample_documents()
    return tuple(document for document in sample_documents() if engine.unsuited_reason(document) is None)


def own_sample(engine: FrameworkSplitter) -> Document:
    """The sample an engine is made for: the HTML page for an engine that reads markup, the Python sample for the
    code engine, else the Markdown guide."""
    if engine.name == "llamaindex.code":
        return load(SAMPLES / "chunk_stats.py")[0]
    return load(SAMPLES / ("vector_search_faq.html" if engine.reads_markup else "chunking_guide.md"))[0]


def case_id(case: tuple[str, dict[str, Any]]) -> str:
    name, params = case
    return name + ("" if not params else "-" + "-".join(f"{k}={v}" for k, v in params.items()))


# The cases of an engine that embeds run on one xdist worker (--dist loadgroup; tests/conftest.py makes it group
# under pytest 9.2), so a framework call repeated across tests (the fidelity test, the readers' test, the exported
# scripts) is answered from that worker's memory (below).
SEMANTIC_GROUP = "semantic-engines"


def cases(chosen: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """``chosen`` as pytest params named by :func:`case_id`, an embedding engine's in the semantic group."""
    return [
        pytest.param(
            case,
            id=case_id(case),
            marks=[pytest.mark.xdist_group(SEMANTIC_GROUP)] if SPLITTERS.get_class(case[0]).embeds_text else [],
        )
        for case in chosen
    ]


# -- the frameworks called directly (no engine code) ----------------------------------------------


def markup(document: Document) -> str:
    """What an HTML engine's framework reads: the page's source read from disk, or any other document's text."""
    name = document.metadata["file_name"]
    return (SAMPLES / name).read_text(encoding="utf-8") if name.endswith(".html") else document.text


def llama_document(document: Document, text: str | None = None) -> Any:
    """The document as a LlamaIndex Document, with the keys its loader hides from readers (they change the budget)."""
    from llama_index.core import Document as LlamaDocument

    return LlamaDocument(
        text=document.text if text is None else text,
        metadata=dict(document.metadata),
        excluded_llm_metadata_keys=list(document.excluded_llm_metadata_keys),
        excluded_embed_metadata_keys=list(document.excluded_embed_metadata_keys),
    )


def llama_tokenizer(name: str) -> Any:
    from functools import partial

    return list if name == "characters" else partial(tiktoken_encoding(name).encode, allowed_special="all")


# The frameworks' own embedding classes make the same call many times here: a semantic engine's case runs its
# framework in the fidelity test, the readers' test and the exported scripts, each a pass of the packaged model over
# the same sentence groups (~12 CPU-s on the 2-core machine). A call whose model, settings and texts (in order) are
# those of an earlier call in this process is answered with the vectors that call computed: torch on the CPU gives
# the same bits for the same call, so each answer is the one the framework would compute again. The calls are still
# made, through the frameworks' classes, by the scripts as exported; tests/test_embeddings.py compares the model
# itself and runs without this.
_FRAMEWORK_VECTORS: dict[tuple[Any, ...], list[list[float]]] = {}


def _remembered(method: Any, settings: Any) -> Any:
    """``method(self, texts)``, answered from ``_FRAMEWORK_VECTORS`` when ``settings(self)`` and the texts repeat."""

    def call(self: Any, texts: list[str], *args: Any, **kwargs: Any) -> list[list[float]]:
        key = (method.__qualname__, settings(self), tuple(texts), args, tuple(sorted(kwargs.items())))
        if key not in _FRAMEWORK_VECTORS:
            _FRAMEWORK_VECTORS[key] = [list(row) for row in method(self, texts, *args, **kwargs)]
        return [list(row) for row in _FRAMEWORK_VECTORS[key]]

    return call


@pytest.fixture(scope="module")
def framework_vectors_remembered() -> Any:
    """LlamaIndex's HuggingFaceEmbedding and LangChain's HuggingFaceEmbeddings answer a repeated call from memory.

    Importing them loads torch and both frameworks' embedding modules (~10 s on the 2-core machine): a module
    whose tests do not all embed asks for this where they do, not for every test (make test-fast runs the rest).
    """
    from langchain_community.embeddings import HuggingFaceEmbeddings
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            HuggingFaceEmbedding,
            "_get_text_embeddings",
            _remembered(
                HuggingFaceEmbedding._get_text_embeddings,
                lambda model: (
                    model.model_name,
                    model.embed_batch_size,
                    model.normalize,
                    model.max_length,
                    model.text_instruction,
                ),
            ),
        )
        patch.setattr(
            HuggingFaceEmbeddings,
            "embed_documents",
            _remembered(
                HuggingFaceEmbeddings.embed_documents,
                lambda model: (
                    model.model_name,
                    model.multi_process,
                    repr(sorted(model.encode_kwargs.items())),
                    repr(sorted(model.model_kwargs.items())),
                ),
            ),
        )
        yield


@pytest.fixture(autouse=True)
def remembered_framework_vectors(request: pytest.FixtureRequest) -> None:
    """An embedding engine's case (the semantic group's) with the frameworks' vectors remembered
    (:func:`framework_vectors_remembered`); the other cases never embed, so they do not import for it."""
    if any(mark.args == (SEMANTIC_GROUP,) for mark in request.node.iter_markers("xdist_group")):
        request.getfixturevalue("framework_vectors_remembered")


@cache
def packaged_huggingface_embedding() -> Any:
    """LlamaIndex's own HuggingFaceEmbedding of the packaged all-MiniLM-L6-v2 (what an exported script passes)."""
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from core.tokens.tokenizers import default_model_path

    return HuggingFaceEmbedding(model_name=default_model_path())


@cache
def packaged_langchain_embeddings() -> Any:
    """LangChain's own HuggingFaceEmbeddings of the packaged all-MiniLM-L6-v2 (what an exported script passes)."""
    from langchain_community.embeddings import HuggingFaceEmbeddings

    from core.tokens.tokenizers import default_model_path

    return HuggingFaceEmbeddings(model_name=default_model_path(), encode_kwargs={"normalize_embeddings": True})


def semantic_chunker(p: dict[str, Any]) -> Any:
    """langchain-experimental's SemanticChunker with the engine's parameters ``p`` and the packaged model."""
    from langchain_experimental.text_splitter import SemanticChunker

    keys = ("buffer_size", "breakpoint_threshold_type", "breakpoint_threshold_amount", "number_of_chunks")
    keys += ("sentence_split_regex", "min_chunk_size")
    return SemanticChunker(packaged_langchain_embeddings(), **{key: p[key] for key in keys})


def llamaindex_nodes(name: str, p: dict[str, Any], document: Document) -> list[Any]:
    from llama_index.core import node_parser as li

    if name == "llamaindex.sentence":
        parser = li.SentenceSplitter(
            chunk_size=p["chunk_size"], chunk_overlap=p["chunk_overlap"], tokenizer=llama_tokenizer(p["tokenizer"])
        )
    elif name == "llamaindex.token":
        parser = li.TokenTextSplitter(
            chunk_size=p["chunk_size"], chunk_overlap=p["chunk_overlap"], tokenizer=llama_tokenizer(p["tokenizer"])
        )
    elif name == "llamaindex.sentence_window":
        parser = li.SentenceWindowNodeParser.from_defaults(window_size=p["window_size"])
    elif name == "llamaindex.markdown":
        parser = li.MarkdownNodeParser.from_defaults(header_path_separator=p["header_path_separator"])
    elif name == "llamaindex.html":
        parser = li.HTMLNodeParser.from_defaults(tags=list(p["tags"]), include_metadata=p["include_metadata"])
        return parser.get_nodes_from_documents([llama_document(document, markup(document))])
    elif name == "llamaindex.semantic":
        parser = li.SemanticSplitterNodeParser.from_defaults(
            embed_model=packaged_huggingface_embedding(),
            buffer_size=p["buffer_size"],
            breakpoint_percentile_threshold=p["breakpoint_percentile_threshold"],
        )
    elif name == "llamaindex.code":  # the grammar package of the file's extension, handed to CodeSplitter
        import tree_sitter_python
        from tree_sitter import Language, Parser

        assert document.metadata["file_name"].endswith(".py")
        parser = li.CodeSplitter(
            language="python",
            parser=Parser(Language(tree_sitter_python.language())),
            max_chars=p["max_chars"],
            count_mode=p["count_mode"],
            max_tokens=p["max_tokens"],
        )
    elif p["tokenizer"] == "cl100k_base":  # hierarchical at LlamaIndex's own tokenizer: from_defaults as documented
        parser = li.HierarchicalNodeParser.from_defaults(
            chunk_sizes=list(p["chunk_sizes"]), chunk_overlap=p["chunk_overlap"]
        )
    else:
        ids = [f"chunk_size_{size}" for size in p["chunk_sizes"]]
        splitters = {
            i: li.SentenceSplitter(
                chunk_size=s, chunk_overlap=p["chunk_overlap"], tokenizer=llama_tokenizer(p["tokenizer"])
            )
            for i, s in zip(ids, p["chunk_sizes"], strict=True)
        }
        parser = li.HierarchicalNodeParser.from_defaults(node_parser_ids=ids, node_parser_map=splitters)
    return parser.get_nodes_from_documents([llama_document(document)])


def framework_texts(name: str, p: dict[str, Any], document: Document) -> list[str]:
    """What the framework itself returns for ``document`` with the engine's parameters ``p``."""
    text = document.text
    if name.startswith("llamaindex."):
        return [node.get_content() for node in llamaindex_nodes(name, p, document)]
    if name.startswith("langchain."):
        import langchain_text_splitters as lc

        common = {"chunk_size": p.get("chunk_size"), "chunk_overlap": p.get("chunk_overlap")}
        if name == "langchain.semantic":
            return semantic_chunker(p).split_text(text)
        if name == "langchain.recursive" and p["language"]:
            splitter = lc.RecursiveCharacterTextSplitter.from_language(lc.Language(p["language"]), **common)
        elif name == "langchain.recursive":
            splitter = lc.RecursiveCharacterTextSplitter(**common)
        elif name == "langchain.character":
            splitter = lc.CharacterTextSplitter(separator=p["separator"], **common)
        elif name == "langchain.token":
            splitter = lc.TokenTextSplitter(encoding_name=p["encoding_name"], **common)
        elif name == "langchain.html_header":
            headers = [tuple(item.split(" ", 1)) for item in p["headers_to_split_on"]]
            splitter = lc.HTMLHeaderTextSplitter(headers, return_each_element=p["return_each_element"])
            return [piece.page_content for piece in splitter.split_text(markup(document))]
        else:
            headers = [tuple(item.split(" ", 1)) for item in p["headers_to_split_on"]]
            splitter = lc.MarkdownHeaderTextSplitter(
                headers, return_each_line=p["return_each_line"], strip_headers=p["strip_headers"]
            )
            return [piece.page_content for piece in splitter.split_text(text)]
        return splitter.split_text(text)
    if name.startswith("chonkie."):
        return [chunk.text for chunk in chonkie_chunks(name, p, text)]
    import semchunk

    counter = {"characters": len}.get(p["token_counter"]) or tiktoken_encoding(p["token_counter"])
    return semchunk.chunkerify(counter, p["chunk_size"])(text, overlap=p["overlap"])


@cache
def packaged_chonkie_embeddings() -> Any:
    """chonkie's own SentenceTransformerEmbeddings of the packaged all-MiniLM-L6-v2 (by its path: nothing fetched)."""
    from chonkie.embeddings import SentenceTransformerEmbeddings

    from core.tokens.tokenizers import default_model_path

    return SentenceTransformerEmbeddings(default_model_path())


def chonkie_chunks(name: str, p: dict[str, Any], text: str) -> list[Any]:
    import chonkie

    if name == "chonkie.semantic":
        keys = ("threshold", "chunk_size", "similarity_window", "min_sentences_per_chunk")
        keys += ("min_characters_per_sentence", "include_delim", "skip_window")
        keys += ("filter_window", "filter_polyorder", "filter_tolerance")
        return chonkie.SemanticChunker(
            embedding_model=packaged_chonkie_embeddings(), delim=list(p["delim"]), **{key: p[key] for key in keys}
        ).chunk(text)
    tokenizer = p["tokenizer"] if p["tokenizer"] in ("character", "word") else tiktoken_encoding(p["tokenizer"])
    if name == "chonkie.recursive":
        chunker = chonkie.RecursiveChunker(tokenizer=tokenizer, chunk_size=p["chunk_size"])
    elif name == "chonkie.token":
        chunker = chonkie.TokenChunker(
            tokenizer=tokenizer, chunk_size=p["chunk_size"], chunk_overlap=p["chunk_overlap"]
        )
    else:
        chunker = chonkie.SentenceChunker(
            tokenizer=tokenizer, chunk_size=p["chunk_size"], chunk_overlap=p["chunk_overlap"]
        )
    return chunker.chunk(text)


# -- registry and declarations ---------------------------------------------------------------------


def test_every_engine_is_registered() -> None:
    assert {cls.name for cls in ENGINES} == ENGINE_NAMES
    assert {name for name, _ in CASES} == ENGINE_NAMES, "every engine is run against its framework"


def framework_default(target: str, argument: str) -> Any:
    """``argument``'s default in the signature of ``target`` ("module:qualname"), following ``**kwargs`` to base classes."""
    module, _, qualname = target.partition(":")
    owner: Any = None
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        owner, obj = obj, getattr(obj, part)
    parameters = inspect.signature(obj).parameters
    if argument in parameters:
        return parameters[argument].default
    assert isinstance(owner, type), f"{target} has no argument {argument!r}"
    for base in owner.__mro__[1:]:
        parameters = inspect.signature(base.__init__).parameters
        if argument in parameters:
            return parameters[argument].default
    raise AssertionError(f"{target} has no argument {argument!r}")


@pytest.mark.parametrize("cls", ENGINES, ids=lambda cls: cls.name)
def test_declared_defaults_are_the_frameworks(cls: type[FrameworkSplitter]) -> None:
    declared = {spec.name: spec.default for spec in cls.params()}
    assert set(cls.own_params) <= set(declared), "own_params names declared parameters"
    for name in set(declared) - set(cls.own_params):  # the framework's own argument of the same name
        default = declared[name]
        expected = framework_default(cls.defaults_from, name)
        assert (list(default) if isinstance(default, tuple) else default) == expected, f"{cls.name}.{name}"


def test_llamaindex_counts_with_cl100k_by_default() -> None:
    from llama_index.core.node_parser import HierarchicalNodeParser
    from llama_index.core.utils import get_tokenizer

    sample = "Chunking <|endoftext|> decides what a retriever can find."
    assert get_tokenizer()(sample) == tiktoken_encoding("cl100k_base").encode(sample, allowed_special="all")
    for name in ("llamaindex.sentence", "llamaindex.token", "llamaindex.hierarchical"):
        assert SPLITTERS.get_class(name)().tokenizer == "cl100k_base"
    assert (
        tuple(HierarchicalNodeParser.from_defaults().chunk_sizes)
        == SPLITTERS.get_class("llamaindex.hierarchical")().chunk_sizes
    )


def test_languages_are_those_from_language_accepts() -> None:
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    accepted = []
    for language in Language:
        try:
            RecursiveCharacterTextSplitter.get_separators_for_language(language)
        except ValueError:
            continue
        accepted.append(language.value)
    assert LANGUAGES == tuple(accepted)


def test_both_tiktoken_encodings_are_bundled() -> None:
    assert bundled_encodings() == ["cl100k_base", "o200k_base"]


@pytest.mark.parametrize("cls", ENGINES, ids=lambda cls: cls.name)
def test_the_summary_names_the_framework_and_its_version(cls: type[FrameworkSplitter]) -> None:
    from importlib.metadata import version

    assert cls.summary.startswith(f"{cls.framework} {version(cls.distribution)} · {cls.framework_class}") or (
        cls.name == "semchunk" and cls.summary.startswith(f"semchunk {version('semchunk')} · ")
    )


# -- fidelity on the samples -----------------------------------------------------------------------


@pytest.mark.parametrize("case", cases(CASES))
def test_nodes_are_the_frameworks_chunks_with_valid_spans(case: tuple[str, dict[str, Any]]) -> None:
    name, params = case
    engine = SPLITTERS.create(name, **params)
    values = engine.to_params()
    # An engine that embeds every sentence group runs on its own sample: each sample costs a model pass.
    for document in (own_sample(engine),) if engine.embeds_text else suited_samples(engine):
        nodes = engine.split([document])
        where = f"{name} on {document.metadata['file_name']}"
        assert [node.text for node in nodes] == framework_texts(name, values, document), where
        text = document.text
        for node in nodes:
            status = node.metadata[SPAN_STATUS_KEY]
            assert 0 <= node.start_char <= node.end_char <= len(text), where
            if status == "exact":
                assert text[node.start_char : node.end_char] == node.text, where
            elif status == "unplaced":
                assert node.start_char == node.end_char, where
            else:
                assert status == "rewritten", where
            for key in (SPAN_STATUS_KEY,):
                assert key in node.excluded_llm_metadata_keys and key in node.excluded_embed_metadata_keys
        assert sum(span_counts(nodes).values()) == len(nodes)


LLAMAINDEX_CASES = [case for case in CASES if case[0].startswith("llamaindex.")]


@pytest.mark.parametrize("case", cases(LLAMAINDEX_CASES))
def test_readers_see_what_llamaindex_nodes_give_them(case: tuple[str, dict[str, Any]]) -> None:
    from llama_index.core.schema import MetadataMode as LlamaMode

    name, params = case
    engine = SPLITTERS.create(name, **params)
    document = own_sample(engine)
    theirs = llamaindex_nodes(name, engine.to_params(), document)
    ours = engine.split([document])
    for mode, their_mode in ((MetadataMode.LLM, LlamaMode.LLM), (MetadataMode.EMBED, LlamaMode.EMBED)):
        assert [node.get_content(mode) for node in ours] == [
            node.get_content(metadata_mode=their_mode) for node in theirs
        ]


@pytest.mark.parametrize("case", cases([case for case in CASES if case[0].startswith("chonkie.")]))
def test_recovered_spans_are_chonkies_own_offsets(case: tuple[str, dict[str, Any]]) -> None:
    name, params = case
    engine = SPLITTERS.create(name, **params)
    for document in (own_sample(engine),) if engine.embeds_text else sample_documents():
        expected = [
            (chunk.start_index, chunk.end_index) for chunk in chonkie_chunks(name, engine.to_params(), document.text)
        ]
        assert [(node.start_char, node.end_char) for node in engine.split([document])] == expected


def test_markdown_header_paths_are_kept() -> None:
    document = load(SAMPLES / "chunking_guide.md")[0]
    llama = SPLITTERS.create("llamaindex.markdown").split([document])
    assert llama[1].metadata["header_path"] == "/A Practical Guide to Chunking for RAG/"
    lang = SPLITTERS.create("langchain.markdown_header").split([document])
    assert lang[2].metadata["Header 3"] == "The precision and context trade-off"
    assert lang[2].metadata["title"] == document.metadata["title"], "the document's metadata is inherited"
    assert "Header 3" not in lang[2].excluded_llm_metadata_keys
    # LangChain strips and re-joins lines: those sections are rewritten, their spans still on their own source.
    rewritten = [node for node in lang if node.metadata[SPAN_STATUS_KEY] == "rewritten"]
    assert rewritten
    for node in rewritten:
        source = document.text[node.start_char : node.end_char]
        assert source.split() == node.text.split()


def test_sentence_windows_are_kept_and_hidden_from_readers() -> None:
    document = load(SAMPLES / "release_notes.txt")[0]
    nodes = SPLITTERS.create("llamaindex.sentence_window", window_size=1).split([document])
    middle = nodes[5]
    assert middle.metadata["original_text"] == middle.text
    assert middle.metadata["window"] == " ".join(node.text for node in nodes[4:7])  # LlamaIndex joins with spaces
    for key in ("window", "original_text"):
        assert key in middle.excluded_llm_metadata_keys and key in middle.excluded_embed_metadata_keys


def test_a_hierarchy_keeps_parents_and_children() -> None:
    document = load(SAMPLES / "chunking_guide.md")[0]
    engine = SPLITTERS.create("llamaindex.hierarchical", chunk_sizes=(512, 128), chunk_overlap=10)
    nodes = engine.split([document])
    by_id = {node.id: node for node in nodes}
    roots = [node for node in nodes if NodeRelationship.PARENT not in node.relationships]
    assert roots and all(node.metadata["level"] == 0 for node in roots)
    children = [node for node in nodes if NodeRelationship.PARENT in node.relationships]
    assert children
    for child in children:
        parent = by_id[child.parent_id]
        assert child.id in parent.child_ids
        assert child.metadata["level"] == parent.metadata["level"] + 1
        assert parent.start_char <= child.start_char <= child.end_char <= parent.end_char
    assert "level" in children[0].excluded_llm_metadata_keys
    assert {node.metadata[SPAN_STATUS_KEY] for node in nodes} == {"exact"}


def test_a_repeated_passage_gets_its_own_span() -> None:
    paragraph = "The same paragraph appears twice in this document, word for word."
    text = f"{paragraph}\n\nSomething in between.\n\n{paragraph}"
    document = Document(text=text, metadata={"file_name": "twice.txt"})
    nodes = SPLITTERS.create("langchain.character", chunk_size=70, chunk_overlap=0).split([document])
    assert [node.text for node in nodes] == [paragraph, "Something in between.", paragraph]
    assert nodes[2].start_char == text.rindex(paragraph)


def test_a_table_of_identical_rows_is_covered_in_order() -> None:
    # LlamaIndex's third chunk here is found three times; the nearest copy after the second chunk left a gap.
    rows = "".join("| the | 0 |\n" for _ in range(4))
    text = f"The.\n\n| name | value |\n| --- | --- |\n{rows}\nThe."
    document = Document(text=text, metadata={"file_name": "table.md"})
    engine = SPLITTERS.create("llamaindex.sentence", chunk_size=17, chunk_overlap=3, include_metadata=False)
    nodes = engine.split([document])
    assert [(node.start_char, node.end_char) for node in nodes] == [(0, 34), (25, 54), (47, 70), (67, 90)]
    assert all(node.text == text[node.start_char : node.end_char] for node in nodes)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("llamaindex.sentence", {"chunk_size": 2, "chunk_overlap": 0}),
        ("llamaindex.hierarchical", {"chunk_sizes": (8, 2), "chunk_overlap": 0}),
        ("langchain.recursive", {"chunk_size": 10, "chunk_overlap": 0}),
        ("chonkie.token", {"chunk_size": 1}),
        ("semchunk", {"chunk_size": 2}),
    ],
)
def test_a_tiny_chunk_size_on_a_large_document_is_refused_before_the_framework_runs(
    name: str, params: dict[str, Any]
) -> None:
    from core.config import PipelineConfig
    from core.documents import run_split
    from core.errors import TooLargeError

    document = Document(text="word " * 300_000, metadata={"file_name": "big.txt"})
    engine = SPLITTERS.create(name, **params)
    with pytest.raises(TooLargeError) as refused:
        run_split([document], PipelineConfig(splitter=engine))
    message = str(refused.value)
    assert "\n" not in message and f"big.txt: {name} with chunk_size" in message and "limit of 100,000" in message


def test_a_framework_refusal_is_a_config_error() -> None:
    from core.errors import ConfigError

    document = Document(text="Some text. " * 40, metadata={"file_name": "x.txt", "notes": "a long note " * 30})
    with pytest.raises(ConfigError, match="llamaindex.sentence: LlamaIndex SentenceSplitter refused"):
        SPLITTERS.create("llamaindex.sentence", chunk_size=50, chunk_overlap=0).split([document])


# -- the code the Export page writes ---------------------------------------------------------------

CODE_CASES = [case for case in CASES if case[0].startswith(("llamaindex.", "langchain."))]


def run_snippet(engine: FrameworkSplitter, library: str, document: Document) -> list[str]:
    """Execute the imports, setup and splitter code ``engine`` writes for ``library``; the chunk texts it makes.

    The exported code reads files as they are, so an HTML engine's snippet is given the page's source.
    """
    from core.translate.snippet import MODEL_SETUP, CodeSnippet

    code = CodeSnippet(library, "")
    body = getattr(engine, library)(code)
    namespace: dict[str, Any] = {}
    # A script whose split embeds defines embed_model(), the packaged model's folder, as every exported script does.
    exec("\n".join([*code.imports, *([MODEL_SETUP] if code.needs_model else []), *code.setup]), namespace)
    if library == "llamaindex":
        parser = eval(body, namespace)
        source = markup(document) if engine.reads_markup else document.text
        return [node.get_content() for node in parser.get_nodes_from_documents([llama_document(document, source)])]
    from langchain_core.documents import Document as LangChainDocument

    source = markup(document) if engine.reads_markup else document.text
    namespace["documents"] = [LangChainDocument(page_content=source, metadata=dict(document.metadata))]
    exec(body, namespace)
    return [chunk.page_content for chunk in namespace["chunks"]]


@pytest.mark.parametrize("case", cases(CODE_CASES))
def test_the_exported_code_is_the_call_that_ran(case: tuple[str, dict[str, Any]]) -> None:
    name, params = case
    engine = SPLITTERS.create(name, **params)
    document = own_sample(engine)
    texts = [node.text for node in engine.split([document])]
    libraries = ["llamaindex"] if name.startswith("llamaindex.") else ["langchain"]
    if not engine.splits_to_documents and name.startswith("langchain."):
        libraries.append("llamaindex")  # through LlamaIndex's LangchainNodeParser
    for library in libraries:
        assert run_snippet(engine, library, document) == texts, library


# -- nothing is downloaded -------------------------------------------------------------------------

_OFFLINE_SCRIPT = r"""
import json, socket, sys

def refuse(*args, **kwargs):
    raise OSError("network access during a split")

socket.socket.connect = refuse
socket.create_connection = refuse

from core import load
from core.splitters import SPLITTERS

settings = json.loads(sys.argv[1])
counts = {}
for name, params, path in settings:
    counts[f"{name}{params}"] = len(SPLITTERS.create(name, **params).split(load(path)))
print(json.dumps(counts))
"""


def test_every_engine_runs_with_no_network_and_empty_caches(tmp_path: Path) -> None:
    """A fresh process, sockets refusing, tiktoken's cache dir empty and no NLTK data of the user's: all engines split."""
    guide, page = str(SAMPLES / "chunking_guide.md"), str(SAMPLES / "vector_search_faq.html")
    code = str(SAMPLES / "chunk_stats.py")
    settings = [
        (name, {}, page if name.endswith((".html", ".html_header")) else code if name.endswith(".code") else guide)
        for name in sorted(ENGINE_NAMES)
    ]
    settings += [
        ("langchain.token", {"encoding_name": "o200k_base"}, guide),
        ("chonkie.token", {"tokenizer": "o200k_base"}, guide),
    ]
    (tmp_path / "tiktoken").mkdir()
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("NLTK_DATA", None)
    result = subprocess.run(
        [sys.executable, "-c", _OFFLINE_SCRIPT, json.dumps(settings)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(counts) == len(settings) and all(count > 0 for count in counts.values())
    assert not list((tmp_path / "tiktoken").iterdir()), "nothing was written to (or fetched into) the user's cache"


# -- in the app ------------------------------------------------------------------------------------


def test_the_chunks_page_offers_the_engines_and_shows_their_nodes() -> None:
    import apptest_support

    from core.config import PipelineConfig
    from core.documents import run_split

    at = apptest_support.open_page("pages/1_Chunks.py", timeout=240)
    picker = at.sidebar.selectbox(key="chunks.splitter")
    # Named as their users know them: the framework and its class.
    assert {SPLITTERS.get_class(name).title() for name in ENGINE_NAMES} <= set(picker.options)
    assert (
        "LlamaIndex SentenceSplitter" in picker.options and "LangChain RecursiveCharacterTextSplitter" in picker.options
    )
    picker.set_value("langchain.recursive").run()
    at.sidebar.number_input(key="splitter.langchain.recursive.chunk_size").set_value(500).run()
    assert not at.exception, at.exception
    assert any(SPLITTERS.get_class("langchain.recursive").summary in caption.value for caption in at.sidebar.caption)
    expected = run_split(
        load(SAMPLES / "chunking_guide.md"),
        PipelineConfig(splitter=SPLITTERS.create("langchain.recursive", chunk_size=500)),
    )
    shown = next(m.value for m in at.metric if m.label == "Nodes")
    assert int(shown.replace(",", "")) == len(expected)


def test_the_cli_lists_the_engines_and_splits_with_one(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    from core.cli.main import main

    assert main(["splitters", "--format", "json"]) == 0
    listing = {entry["name"]: entry for entry in json.loads(capsys.readouterr().out)}
    assert ENGINE_NAMES <= set(listing)
    assert listing["llamaindex.sentence"]["summary"].startswith(f"LlamaIndex {version('llama-index-core')} · ")
    defaults = {spec["name"]: spec["default"] for spec in listing["langchain.recursive"]["params"]}
    assert (defaults["chunk_size"], defaults["chunk_overlap"]) == (4000, 200)

    guide = SAMPLES / "chunking_guide.md"
    assert main(["split", str(guide), "--splitter", "langchain.recursive", "--set", "chunk_size=500"]) == 0
    nodes = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [node["text"] for node in nodes] == framework_texts(
        "langchain.recursive", SPLITTERS.create("langchain.recursive", chunk_size=500).to_params(), load(guide)[0]
    )
    assert {node["metadata"][SPAN_STATUS_KEY] for node in nodes} == {"exact"}


@pytest.mark.parametrize("name", ["llamaindex.markdown", "langchain.markdown_header"])
def test_a_heading_engine_says_when_a_document_has_no_headings(name: str) -> None:
    engine = SPLITTERS.create(name)
    assert engine.unsuited_reason(load(SAMPLES / "chunking_guide.md")[0]) is None
    reason = engine.unsuited_reason(load(SAMPLES / "release_notes.txt")[0])
    assert reason is not None and "release_notes.txt (text) has none" in reason


def test_offsets_a_framework_states_are_taken_only_where_they_hold_the_chunk() -> None:
    # chonkie and semchunk say where each chunk starts; a wrong offset sends the split through span recovery.
    import core.engines.chunk_nodes as chunk_nodes
    from core.engines.chunk_nodes import FrameworkChunk, framework_nodes

    document = Document(text="one two. one two. three")
    stated = [
        FrameworkChunk("one two.", start=0),
        FrameworkChunk("one two.", start=9),
        FrameworkChunk("three", start=18),
    ]

    def no_search(text: str) -> None:
        raise AssertionError("offsets that hold their chunks need no span recovery")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chunk_nodes, "SpanRecovery", no_search)
        nodes = framework_nodes(document, stated)
    assert [(n.start_char, n.end_char) for n in nodes] == [(0, 8), (9, 17), (18, 23)]
    wrong = [FrameworkChunk("one two.", start=0), FrameworkChunk("one two.", start=0), FrameworkChunk("three", start=3)]
    nodes = framework_nodes(document, wrong)
    assert [(n.start_char, n.end_char) for n in nodes] == [(0, 8), (9, 17), (18, 23)]
    assert {n.metadata["span_status"] for n in nodes} == {"exact"}
