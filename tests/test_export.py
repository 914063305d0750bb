"""Export: node files that read back, and code snippets that parse and name the right classes."""

from __future__ import annotations

import ast
import csv
import io
import json
import textwrap

import pyarrow.parquet as pq
import pytest

from core import Node, get_splitter, load
from core.config import PipelineConfig
from core.config_parts import MetadataSettings, RetrievalSettings
from core.documents import run_split
from core.output.export import langchain_snippet, llamaindex_snippet
from core.output.node_files import TABLE_COLUMNS, nodes_to_csv, nodes_to_jsonl, nodes_to_parquet
from core.postprocessors import POSTPROCESSORS
from core.splitters import SPLITTERS
from core.translate.snippet import notes_of


@pytest.fixture(scope="module")
def nodes(sample_docs) -> list[Node]:
    config = PipelineConfig(splitter=get_splitter("character", chunk_size=400, chunk_overlap=40))
    return run_split(load(sample_docs / "chunking_guide.md"), config)


def test_jsonl_has_one_node_per_line_and_round_trips(nodes):
    lines = nodes_to_jsonl(nodes).splitlines()
    assert len(lines) == len(nodes)
    for line, node in zip(lines, nodes, strict=True):
        data = json.loads(line)
        assert {"id", "doc_id", "text", "start_char", "end_char", "metadata", "relationships"} <= set(data)
        assert Node.from_dict(data) == node


def test_csv_has_one_row_per_node(nodes):
    rows = list(csv.DictReader(io.StringIO(nodes_to_csv(nodes))))
    assert len(rows) == len(nodes)
    assert tuple(rows[0]) == TABLE_COLUMNS
    assert rows[3]["text"] == nodes[3].text  # newlines and quotes survive
    assert json.loads(rows[0]["metadata"]) == nodes[0].metadata


def test_parquet_has_one_row_per_node(nodes):
    table = pq.read_table(io.BytesIO(nodes_to_parquet(nodes)))
    assert table.num_rows == len(nodes)
    assert table.column("start_char").to_pylist() == [node.start_char for node in nodes]
    assert table.column("text").to_pylist() == [node.text for node in nodes]


def test_config_json_reads_back():
    config = PipelineConfig(splitter=get_splitter("character", chunk_size=123, chunk_overlap=4))
    assert PipelineConfig.from_json(config.to_json()) == config


def _calls(source: str) -> set[str]:
    """Every name called in ``source`` (``Foo(...)`` and ``Foo.from_defaults(...)`` both give Foo)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            while isinstance(func, ast.Attribute):
                names.add(func.attr)
                func = func.value
            if isinstance(func, ast.Name):
                names.add(func.id)
    return names


def _keywords(source: str, call: str) -> dict[str, str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == call:
                return {kw.arg: ast.unparse(kw.value) for kw in node.keywords}
    raise AssertionError(f"{call} is not called")


# (splitter, params, LlamaIndex class, its expected keyword values, LangChain class, its expected keyword values)
CASES = [
    (
        "character",
        {"chunk_size": 300, "chunk_overlap": 30, "separator": "\n"},
        "TokenTextSplitter",
        {"chunk_size": "300", "chunk_overlap": "30", "separator": "'\\n'"},
        "CharacterTextSplitter",
        {"chunk_size": "300", "separator": "'\\n'", "keep_separator": "'end'"},
    ),
    (
        "recursive",
        {"chunk_size": 500, "chunk_overlap": 50, "language": "python"},
        "LangchainNodeParser",
        {},
        "from_language",
        {"language": "Language.PYTHON", "chunk_size": "500"},
    ),
    (
        "token",
        {"chunk_size": 128, "chunk_overlap": 16},
        "TokenTextSplitter",
        {"chunk_size": "128", "tokenizer": "MODEL_TOKENS"},
        "SentenceTransformersTokenTextSplitter",
        {"tokens_per_chunk": "128", "chunk_overlap": "16"},
    ),
    ("sentence_window", {"window_size": 2}, "from_defaults", {"window_size": "2"}, "sentence_windows", {}),
    (
        "markdown",
        {"heading_level": 2},
        "MarkdownNodeParser",
        {},
        "MarkdownHeaderTextSplitter",
        {"headers_to_split_on": "[('#', 'Header 1'), ('##', 'Header 2')]", "strip_headers": "False"},
    ),
    (
        "semantic",
        {"breakpoint_type": "gradient", "buffer_size": 2},
        "from_defaults",
        {"buffer_size": "2", "breakpoint_percentile_threshold": "95"},
        "SemanticChunker",
        {"breakpoint_threshold_type": "'gradient'", "buffer_size": "2"},
    ),
    (
        "hierarchical",
        {"chunk_sizes": "1024,256"},
        "from_defaults",
        {"node_parser_ids": "['chunk_size_1024', 'chunk_size_256']"},
        "split_documents",
        {},
    ),
]


@pytest.mark.parametrize("name, params, li_call, li_kwargs, lc_call, lc_kwargs", CASES, ids=[c[0] for c in CASES])
def test_snippets_name_the_closest_classes_with_the_same_params(name, params, li_call, li_kwargs, lc_call, lc_kwargs):
    config = PipelineConfig(splitter=get_splitter(name, **params))
    llama, chain = llamaindex_snippet(config), langchain_snippet(config)
    assert li_call in _calls(llama) and lc_call in _calls(chain)
    for key, value in li_kwargs.items():
        assert _keywords(llama, li_call)[key] == value, (key, llama)
    for key, value in lc_kwargs.items():
        assert _keywords(chain, lc_call)[key] == value, (key, chain)


def test_differences_are_stated_at_the_top():
    config = PipelineConfig(splitter=get_splitter("semantic", breakpoint_type="interquartile"))
    script = llamaindex_snippet(config)
    assert "# Where this differs from ChunkScope:" in script
    assert any("interquartile" in note for note in notes_of(script))
    script = langchain_snippet(PipelineConfig(splitter=get_splitter("sentence_window")))
    assert any("no sentence-window splitter" in note for note in notes_of(script))


def test_metadata_templates_and_excluded_keys_travel():
    config = PipelineConfig(
        splitter=get_splitter("character"),
        metadata=MetadataSettings(
            metadata_template="{key}=>{value}", excluded_embed_metadata_keys=("file_name",), extra=(("team", "search"),)
        ),
    )
    llama = llamaindex_snippet(config)
    assert "document.metadata_template = '{key}=>{value}'" in llama
    assert "document.excluded_embed_metadata_keys = ['file_name']" in llama
    assert "document.metadata.update({'team': 'search'})" in llama
    chain = langchain_snippet(config)
    assert "EXCLUDED_EMBED_METADATA_KEYS = ['file_name']" in chain and "def embed_view" in chain


def test_postprocessors_map_to_llamaindex_classes():
    posts = (
        POSTPROCESSORS.create("similarity_cutoff", similarity_cutoff=0.4),
        POSTPROCESSORS.create("metadata_replacement"),
        POSTPROCESSORS.create("long_context_reorder"),
    )
    config = PipelineConfig(splitter=get_splitter("character"), postprocessors=posts)
    llama = llamaindex_snippet(config)
    assert {"SimilarityPostprocessor", "MetadataReplacementPostProcessor", "LongContextReorder"} <= _calls(llama)
    assert _keywords(llama, "SimilarityPostprocessor") == {"similarity_cutoff": "0.4"}
    chain = langchain_snippet(config)
    assert {"EmbeddingsFilter", "LongContextReorder"} <= _calls(chain)


def test_hybrid_retrieval_uses_fusion_with_the_same_weights():
    config = PipelineConfig(splitter=get_splitter("character"), retrieval=RetrievalSettings(mode="hybrid", alpha=0.7))
    llama = llamaindex_snippet(config)
    assert _keywords(llama, "QueryFusionRetriever")["retriever_weights"] == "[0.7, 0.3]"
    # LangChain's EnsembleRetriever fuses by reciprocal rank: the app's relative_score fusion is written out.
    chain = langchain_snippet(config)
    assert "EnsembleRetriever" not in _calls(chain) and "bm25s.BM25" in chain and "    alpha = 0.7  #" in chain
    by_rank = config.replace(retrieval=RetrievalSettings(mode="hybrid", alpha=0.7, fusion="reciprocal_rank"))
    assert _keywords(langchain_snippet(by_rank), "EnsembleRetriever")["weights"] == "[0.7, 0.3]"


@pytest.mark.parametrize("name", SPLITTERS.names())
def test_every_splitter_with_every_postprocessor_gives_valid_python(name):
    posts = tuple(POSTPROCESSORS.create(post) for post in POSTPROCESSORS.names())
    for mode in ("dense", "bm25", "hybrid"):
        config = PipelineConfig(
            splitter=SPLITTERS.create(name), postprocessors=posts, retrieval=RetrievalSettings(mode=mode)
        )
        ast.parse(llamaindex_snippet(config))
        ast.parse(langchain_snippet(config))


def test_lists_typed_with_spaces_reach_the_code_and_config_unpadded():
    # As the app's widgets hand them over: the comma text a person sees and edits.
    config = PipelineConfig(
        splitter=SPLITTERS.create("html", headings_to_split_on="h1, h2, h3"),
        postprocessors=(POSTPROCESSORS.create("keyword", required_keywords="dotenv_values, environment"),),
    )
    llama, chain = llamaindex_snippet(config), langchain_snippet(config)
    assert _keywords(llama, "HTMLNodeParser")["tags"] == "['h1', 'h2', 'h3', 'p', 'li', 'section']"
    assert _keywords(chain, "HTMLHeaderTextSplitter")["headers_to_split_on"] == (
        "[('h1', 'Header 1'), ('h2', 'Header 2'), ('h3', 'Header 3')]"
    )
    assert _keywords(llama, "KeywordNodePostprocessor")["required_keywords"] == "['dotenv_values', 'environment']"
    assert "['dotenv_values', 'environment']" in chain
    data = json.loads(config.to_json())
    assert data["splitter"]["params"]["headings_to_split_on"] == ["h1", "h2", "h3"]
    assert data["postprocessors"][0]["params"]["required_keywords"] == ["dotenv_values", "environment"]


# -- a compatible mode exports the framework call it mirrors, and that code runs to the same chunks ------------------

# (native splitter, its settings in a compatible mode, the sample it is run on)
COMPAT_CASES = [
    ("sentence", {"compat": "llamaindex", "tokenizer": "cl100k", "chunk_size": 256, "chunk_overlap": 20}, "md"),
    ("sentence", {"compat": "llamaindex", "tokenizer": "characters", "chunk_size": 512, "chunk_overlap": 40}, "txt"),
    ("token", {"compat": "llamaindex", "tokenizer": "cl100k", "chunk_size": 128, "chunk_overlap": 30}, "md"),
    ("sentence_window", {"compat": "llamaindex", "window_size": 1}, "txt"),
    ("markdown", {"compat": "llamaindex"}, "md"),
    ("hierarchical", {"compat": "llamaindex", "tokenizer": "cl100k", "chunk_sizes": "512,128,64"}, "md"),
    ("recursive", {"compat": "langchain", "tokenizer": "characters", "chunk_size": 400, "chunk_overlap": 40}, "md"),
    ("recursive", {"compat": "langchain", "tokenizer": "characters", "chunk_size": 300, "language": "python"}, "py"),
    ("recursive", {"compat": "langchain", "tokenizer": "characters", "separators": ("\n\n", "\n", " ", "")}, "txt"),
    ("character", {"compat": "langchain", "tokenizer": "characters", "chunk_size": 400, "chunk_overlap": 50}, "md"),
    # The embedding model's tokens (the default tokenizer of sentence, token and hierarchical).
    ("sentence", {"compat": "llamaindex", "tokenizer": "model"}, "md"),
    ("token", {"compat": "llamaindex", "tokenizer": "model", "chunk_size": 128, "chunk_overlap": 16}, "txt"),
    ("hierarchical", {"compat": "llamaindex", "tokenizer": "model", "chunk_sizes": "512,128"}, "md"),
    ("character", {"compat": "langchain", "tokenizer": "model", "chunk_size": 60, "chunk_overlap": 8}, "txt"),
    ("recursive", {"compat": "langchain", "tokenizer": "model", "chunk_size": 100, "chunk_overlap": 20}, "md"),
]
_SAMPLE = {"md": "chunking_guide.md", "txt": "release_notes.txt", "py": "chunk_stats.py"}


def _run_exported(splitter, library: str, document) -> list[str]:
    """Execute the splitter part Export writes for ``library`` on ``document``; the chunk texts it makes."""
    from langchain_core.documents import Document as LangChainDocument

    from core.engines.llamaindex import llama_document
    from core.output.splitter_code import splitter_code
    from core.translate.snippet import MODEL_SETUP, CodeSnippet

    code = CodeSnippet(library, "")
    body = splitter_code(splitter, code)
    namespace: dict = {}
    exec("\n".join([*code.imports, *([MODEL_SETUP] if code.needs_model else []), *code.setup]), namespace)
    if library == "LlamaIndex":
        parser = eval(body, namespace)
        return [node.get_content() for node in parser.get_nodes_from_documents([llama_document(document)])]
    namespace["documents"] = [LangChainDocument(page_content=document.text, metadata=dict(document.metadata))]
    exec(body, namespace)
    return [chunk.page_content for chunk in namespace["chunks"]]


@pytest.mark.parametrize(
    "name, params, sample",
    COMPAT_CASES,
    ids=[f"{c[0]}-{'-'.join(f'{k}={v}' for k, v in c[1].items())}" for c in COMPAT_CASES],
)
def test_a_compatible_mode_exports_the_call_it_mirrors_and_it_runs_to_the_chunks_shown(
    name, params, sample, sample_docs
):
    from core.tokens.bundled_data import use_bundled_nltk_data

    use_bundled_nltk_data()
    splitter = get_splitter(name, **params)
    config = PipelineConfig(splitter=splitter)
    document = load(sample_docs / _SAMPLE[sample])[0]
    shown = [node.text for node in run_split([document], config)]
    libraries = ["LlamaIndex"] if splitter.compat == "llamaindex" else ["LangChain", "LlamaIndex"]
    for library in libraries:
        exported = _run_exported(splitter, library, document)
        assert exported == shown, library
        script = (llamaindex_snippet if library == "LlamaIndex" else langchain_snippet)(config)
        assert any(f"compat={splitter.compat}, which cuts as" in note for note in notes_of(script))


def test_a_compat_setting_is_exported_as_the_call_that_ran():
    # Words: LlamaIndex counts them with tokenizer=str.split, LangChain with a length_function; that call is written.
    config = PipelineConfig(splitter=get_splitter("sentence", compat="llamaindex", tokenizer="words"))
    assert "which cuts as" in llamaindex_snippet(config) and "tokenizer=str.split" in llamaindex_snippet(config)
    config = PipelineConfig(splitter=get_splitter("character", compat="langchain", tokenizer="cl100k"))
    assert "which cuts as" in langchain_snippet(config) and "length_function=" in langchain_snippet(config)
    assert "keep_separator='end'" not in langchain_snippet(config)
    # The embedding model's tokens (the default): counted with its tokenize, in LlamaIndex and in LangChain.
    config = PipelineConfig(splitter=get_splitter("sentence", compat="llamaindex"))
    assert "which cuts as" in llamaindex_snippet(config) and "tokenizer=MODEL_TOKENS" in llamaindex_snippet(config)
    assert "MODEL_TOKENS = MODEL_TOKENIZER.tokenize" in llamaindex_snippet(config)
    config = PipelineConfig(splitter=get_splitter("recursive", compat="langchain", tokenizer="model"))
    assert "which cuts as" in langchain_snippet(config) and "length_function=model_length" in langchain_snippet(config)


def test_the_export_check_finds_the_defaults_in_compat_mode_rebuilt_exactly(sample_docs):
    # Sentence with its defaults counts model tokens; with compat=llamaindex the script rebuilds every chunk, in order.
    from core.output.export_check import check_export

    documents = [load(sample_docs / name)[0] for name in ("chunking_guide.md", "release_notes.txt")]
    for name, compat in [("sentence", "llamaindex"), ("token", "llamaindex"), ("hierarchical", "llamaindex"),
                         ("character", "langchain"), ("recursive", "langchain")]:  # fmt: skip
        sizes = {"chunk_sizes": "400,100"} if name == "hierarchical" else {"chunk_size": 100, "chunk_overlap": 20}
        splitter = get_splitter(name, compat=compat, tokenizer="model", **sizes)
        libraries = ["LlamaIndex"] if compat == "llamaindex" else ["LangChain", "LlamaIndex"]
        for library in libraries:
            check = check_export(PipelineConfig(splitter=splitter), documents, library)
            assert check.exact and check.same_order and check.app_chunks > 10, (name, library, check.sentence())


# -- each postprocessor's block is a statement of retrieve(), at its indent ----------------------------------------


def _retrieve_statements(script: str) -> tuple[list[str], ast.FunctionDef]:
    tree = ast.parse(script)
    return script.splitlines(), next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "retrieve")


@pytest.mark.parametrize("name", POSTPROCESSORS.names())
def test_every_postprocessor_block_sits_in_retrieve_at_the_right_indent(name):
    from core.translate.snippet import CodeSnippet

    post = POSTPROCESSORS.create(name)
    config = PipelineConfig(splitter=get_splitter("character"), postprocessors=(post,))
    for library, script in (("LlamaIndex", llamaindex_snippet(config)), ("LangChain", langchain_snippet(config))):
        lines, retrieve = _retrieve_statements(script)
        for statement in retrieve.body:
            assert statement.col_offset == 4, (library, lines[statement.lineno - 1])
            if isinstance(statement, ast.Try):
                # An import with a fallback (retrieve() imports its packages itself): imports one level in.
                inner = [*statement.body, *(node for handler in statement.handlers for node in handler.body)]
                assert all(isinstance(node, ast.Import | ast.ImportFrom) for node in inner), library
                assert {node.col_offset for node in inner} == {8}, (library, lines[statement.lineno - 1])
                assert {handler.col_offset for handler in statement.handlers} == {4}, library
                continue
            # A statement's continuation lines go further in; only its closing bracket comes back to its indent.
            for line in lines[statement.lineno : statement.end_lineno]:
                closing = line.strip() in (")", "]", "})", "))") or line.strip().startswith(")")
                assert line.startswith("    " if closing else "        "), (library, line)
        own = (
            post.llamaindex(CodeSnippet(library, ""))
            if library == "LlamaIndex"
            else "\n".join(post.langchain(CodeSnippet(library, "")))
        )
        if own:  # the block's own calls are inside retrieve()
            assert _calls(textwrap.dedent(own)) <= _calls(ast.unparse(retrieve)), library
