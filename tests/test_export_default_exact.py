"""The configuration a user gets without touching anything exports exactly: with ChunkScope installed, both scripts
cut with ChunkScope's own splitter (the default hierarchy has no framework call that cuts the same chunks), so their
nodes are the app's, every level, with the same ids, spans and views, and ``retrieve()`` finds what the Query page
finds on its sample queries. Without ChunkScope, the translation runs and the Export page counts what it changes."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from core.config import PipelineConfig
from core.config_parts import MetadataSettings
from core.documents import load_documents, run_split
from core.evaluation.queries import load_queries
from core.output.export import langchain_snippet, llamaindex_snippet
from core.output.export_check import ExportCheck
from core.output.export_own_split import own_split_applies
from core.query.retrieval import retrieve
from core.schema import MetadataMode
from core.splitters import SPLITTERS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = (
    "chunking_guide.md",
    "rag_handbook.pdf",
    "release_notes.txt",
    "chunk_stats.py",
    "vector_search_faq.html",
    "parsing_office_files.docx",
    "chunking_in_ten_slides.pptx",
    "splitter_benchmarks.csv",
)
SNIPPETS = {"LlamaIndex": llamaindex_snippet, "LangChain": langchain_snippet}


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The app's nodes of the eight samples at the defaults, and each library's script run on them (ChunkScope here)."""
    config = PipelineConfig()
    paths = [str(ROOT / "sample_docs" / name) for name in SAMPLES]
    nodes = run_split(load_documents(paths, config), config)
    folder = tmp_path_factory.mktemp("scripts")
    scripts = {}
    for library, snippet in SNIPPETS.items():
        script = folder / f"{library}.py"
        script.write_text(snippet(config, paths), encoding="utf-8")
        scripts[library] = runpy.run_path(str(script), run_name="chunkscope_default_script")
    return config, nodes, scripts


def _script_nodes(library: str, namespace: dict) -> list[tuple[str, str, str, str]]:
    """(id, text, LLM view, EMBED view) of every node the script made, every level, in its order."""
    if library == "LlamaIndex":
        return [
            (n.node_id, n.get_content(), n.get_content(metadata_mode="llm"), n.get_content(metadata_mode="embed"))
            for n in namespace["nodes"]
        ]
    return [
        (c.id, c.page_content, namespace["llm_view"](c), namespace["embed_view"](c)) for c in namespace["all_chunks"]
    ]


@pytest.mark.parametrize("library", SNIPPETS)
def test_the_default_scripts_rebuild_the_apps_nodes_every_level_with_their_ids_and_views(default_run, library):
    _, nodes, scripts = default_run
    app = [(n.id, n.text, n.get_content(MetadataMode.LLM), n.get_content(MetadataMode.EMBED)) for n in nodes]
    assert len({n.metadata["level"] for n in nodes}) == 2  # the default is a hierarchy: both levels compared
    assert _script_nodes(library, scripts[library]) == app


def test_the_default_llamaindex_nodes_carry_the_apps_spans_and_links_as_llamaindex_counts_them(default_run):
    _, nodes, scripts = default_run
    script_nodes = scripts["LlamaIndex"]["nodes"]
    by_id = {n.id: n for n in nodes}
    # Spans as LlamaIndex's HierarchicalNodeParser counts them: a child's from its parent's start.
    offsets = [by_id[n.relationships["parent"]].start_char if "parent" in n.relationships else 0 for n in nodes]
    spans = [(n.start_char - offset, n.end_char - offset) for n, offset in zip(nodes, offsets, strict=True)]
    assert [(n.start_char_idx, n.end_char_idx) for n in script_nodes] == spans
    for node in script_nodes:
        app = by_id[node.node_id]
        parent = app.relationships.get("parent")
        assert (node.parent_node.node_id if node.parent_node else None) == parent
        assert [c.node_id for c in node.child_nodes or []] == list(app.relationships.get("child", []))
        assert (node.next_node.node_id if node.next_node else None) == app.relationships.get("next")
    leaves = scripts["LlamaIndex"]["leaf_nodes"]
    assert {n.node_id for n in leaves} == {n.id for n in nodes if n.metadata["level"] == 1}


@pytest.mark.parametrize("library", SNIPPETS)
def test_the_default_scripts_retrieve_what_the_query_page_finds_on_its_sample_queries(default_run, library):
    config, nodes, scripts = default_run
    queries = [q.query for q in load_queries(ROOT / "sample_docs" / "queries.json")]
    assert len(queries) >= 10
    built: dict = {}
    for query in queries:
        found = retrieve(nodes, query, config.retrieval)
        results = scripts[library]["retrieve"](query)
        # The first call embedded the chunks and built the retrievers; the next ones reuse those very objects.
        built = built or dict(scripts[library]["_built"])
        assert built and all(kept is built[name] for name, kept in scripts[library]["_built"].items()), query
        if library == "LlamaIndex":
            assert [r.node.node_id for r in results] == [f.node.id for f in found], query
            # The script embeds in batches of its own: equal to 1e-3 after min-max scaling.
            assert [r.score for r in results] == pytest.approx([f.score for f in found], abs=1e-3), query
        else:
            assert [r.id for r in results] == [f.node.id for f in found], query
            assert [r.metadata["score"] for r in results] == pytest.approx([f.score for f in found], abs=1e-3), query


def test_the_export_check_says_the_script_cuts_with_chunkscope_and_what_its_translation_changes():
    check = ExportCheck("LlamaIndex", app_chunks=94, script_chunks=87, identical=20, same_order=False, own_split=True)
    assert check.sentence() == (
        "With ChunkScope installed, the LlamaIndex script cuts with ChunkScope's own splitter: all 94 chunks. "
        "Without it, its translation would change 74 (it makes 87)."
    )
    exact = ExportCheck("LangChain", app_chunks=5, script_chunks=5, identical=5, same_order=True, own_split=True)
    assert exact.sentence().endswith("Without it, so does its translation.")


def test_only_chunkscopes_own_splitters_get_the_own_split_branch():
    default = PipelineConfig().splitter
    assert own_split_applies(default, "LlamaIndex", ()) and own_split_applies(default, "LangChain", ())
    # A file read by a framework's reader is not in ChunkScope's documents: the translation cuts.
    assert not own_split_applies(default, "LlamaIndex", (".pdf",))
    # A compat mode exported to its own framework is that framework's call; an engine is its framework's call.
    compat = SPLITTERS.create("sentence", compat="llamaindex")
    assert not own_split_applies(compat, "LlamaIndex", ()) and own_split_applies(compat, "LangChain", ())
    engine = SPLITTERS.create("llamaindex.sentence")
    assert not own_split_applies(engine, "LlamaIndex", ()) and not own_split_applies(engine, "LangChain", ())


# A hierarchy whose section paths are for the embedding model alone, with an allow list; a sentence window, whose
# window the app keeps out of both views: what runs after the own split (sections, views) sees the app's nodes.
AFTER_THE_SPLIT = {
    "hierarchy-sections": PipelineConfig(
        metadata=MetadataSettings(section_metadata="embed", embed_metadata_keys=("title", "section"))
    ),
    "sentence-window": PipelineConfig(splitter=SPLITTERS.create("sentence_window")),
}


@pytest.mark.parametrize("case", AFTER_THE_SPLIT)
@pytest.mark.parametrize("library", SNIPPETS)
def test_sections_and_views_after_the_own_split_are_the_apps(tmp_path, case, library):
    config = AFTER_THE_SPLIT[case]
    paths = [str(ROOT / "sample_docs" / name) for name in ("chunking_guide.md", "vector_search_faq.html")]
    nodes = run_split(load_documents(paths, config), config)
    script = tmp_path / "script.py"
    script.write_text(SNIPPETS[library](config, paths), encoding="utf-8")
    namespace = runpy.run_path(str(script), run_name="chunkscope_script")
    app = [(n.id, n.text, n.get_content(MetadataMode.LLM), n.get_content(MetadataMode.EMBED)) for n in nodes]
    if case == "hierarchy-sections":
        assert sum("section: " in embed for *_, embed in app) > len(app) / 2  # sections are there to compare
    assert (
        _script_nodes(
            library,
            namespace
            if library == "LlamaIndex"
            else {**namespace, "all_chunks": namespace.get("all_chunks") or namespace["chunks"]},
        )
        == app
    )
