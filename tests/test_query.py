"""The query runner: retrieval, then each postprocessor stage traced; and the query CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.cli import query as cli_query
from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.postprocessors import POSTPROCESSORS
from core.postprocessors.rerank import RerankPostprocessor
from core.query.chain import build_chain, chain_needs_embedder, final_context, run_query
from core.schema import MetadataMode, Node
from core.splitters.nodes import link_chain


class KeywordEmbedder:
    """Similarity grows with how often 'limit' occurs; every vector is unit length."""

    def embed(self, texts, progress=None):
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text):
        return np.array([1.0, 0.0], dtype=np.float32)

    @staticmethod
    def _vector(text):
        vector = np.array([text.lower().count("limit"), 1.0], dtype=np.float32)
        return vector / np.linalg.norm(vector)


def make_nodes() -> list[Node]:
    texts = [
        "Intro. Nothing here.",  # n0: score 0.0 -> cos = 0
        "The limit is 500. Weather was fine.",  # n1: one 'limit'
        "Limit one. Limit two. Unrelated line.",  # n2: two
        "Outro with no match.",  # n3
    ]
    nodes = [
        Node(text=t, id=f"n{i}", metadata={"file_name": "doc.md", "window": f"window of n{i}"}, excluded_llm_metadata_keys=["window"])
        for i, t in enumerate(texts)
    ]
    link_chain(nodes)
    return nodes


def run(steps, top_k=3):
    return run_query(make_nodes(), "What is the limit?", embedder=KeywordEmbedder(), postprocessors=steps, retrieval=RetrievalSettings(mode="dense", top_k=top_k))


def test_retrieval_then_stages_in_order():
    result = run([("similarity_cutoff", {"similarity_cutoff": 0.5}), ("top_n", {"top_n": 1})])
    assert [r.id for r in result.retrieved] == ["n2", "n1", "n0"]
    assert [s.name for s in result.stages] == ["similarity_cutoff", "top_n"]
    assert [r.id for r in result.final] == ["n2"]
    assert result.counts() == [("retrieval", 3), ("similarity_cutoff", 2), ("top_n", 1)]


def test_a_dropped_node_carries_the_postprocessors_reason():
    stage = run([("similarity_cutoff", {"similarity_cutoff": 0.5})]).stages[0]
    assert [(d.id, d.reason) for d in stage.dropped] == [("n0", "its score 0 is below the cutoff 0.5")]
    assert stage.fate("n0") == "dropped: its score 0 is below the cutoff 0.5"
    assert stage.fate("n2") == "kept"
    assert [n.id for n in stage.nodes_in] == ["n2", "n1", "n0"]
    assert [n.id for n in stage.nodes_out] == ["n2", "n1"]


def test_position_changes_are_ranks_before_and_after():
    stage = run([("long_context_reorder", {})]).stages[0]
    # ascending: n0, n1, n2; n0 to the front, n1 to the back, n2 to the front
    assert [n.id for n in stage.nodes_out] == ["n2", "n0", "n1"]
    assert [(p.id, p.before, p.after) for p in stage.position_changes] == [("n0", 3, 2), ("n1", 2, 3)]
    assert stage.fate("n1") == "moved 2 → 3"


def test_a_reordering_stage_says_so_from_its_class():
    result = run([("top_n", {"top_n": 2}), ("long_context_reorder", {})])
    assert [stage.reorders for stage in result.stages] == [False, True]


def test_the_embedding_model_is_needed_for_dense_retrieval_or_a_step_that_embeds():
    reorder, optimizer = build_chain([("long_context_reorder", {}), ("sentence_embedding_optimizer", {})])
    assert [name for name in POSTPROCESSORS.names() if POSTPROCESSORS.get_class(name).needs_embedder] == [
        "sentence_embedding_optimizer"
    ]
    assert [name for name in POSTPROCESSORS.names() if POSTPROCESSORS.get_class(name).reorders] == ["long_context_reorder"]
    assert not chain_needs_embedder("bm25", [reorder])
    assert chain_needs_embedder("bm25", [reorder, optimizer])
    assert chain_needs_embedder("dense", []) and chain_needs_embedder("hybrid", [])


def test_score_changes_from_rerank():
    rerank = RerankPostprocessor(top_n=2, scorer=lambda q, texts: [float(len(t)) for t in texts])
    result = run([rerank])
    stage = result.stages[0]
    assert [(c.id, c.after) for c in stage.score_changes] == [("n2", float(len(make_nodes()[2].get_content(MetadataMode.EMBED)))), ("n1", float(len(make_nodes()[1].get_content(MetadataMode.EMBED))))]
    assert stage.score_changes[0].before == pytest.approx(2 / np.sqrt(5))
    assert [d.id for d in stage.dropped] == ["n0"]


def test_window_replacement_is_a_text_change():
    stage = run([("metadata_replacement", {"target_metadata_key": "window"})], top_k=1).stages[0]
    change = stage.text_changes[0]
    assert (change.id, change.before, change.after) == ("n2", "Limit one. Limit two. Unrelated line.", "window of n2")
    assert change.reason == "its text was replaced by metadata['window']"


def test_optimizer_text_change_lists_kept_and_removed_sentence_spans():
    stage = run(
        [(
            "sentence_embedding_optimizer",
            {"percentile_cutoff": None, "threshold_cutoff": 0.5, "context_before": 0, "context_after": 0},
        )],
        top_k=2,
    ).stages[0]
    change = next(c for c in stage.text_changes if c.id == "n2")
    assert change.after == "Limit one. Limit two."
    assert [change.before[s:e] for s, e in change.kept_spans] == ["Limit one.", "Limit two."]
    assert [change.before[s:e] for s, e in change.removed_spans] == ["Unrelated line."]
    assert change.reason == "it kept 2 of its 3 sentences"


def test_prev_next_additions_are_traced_with_their_position():
    stage = run([("prev_next", {"mode": "both", "num_nodes": 1})], top_k=1).stages[0]
    assert [n.id for n in stage.nodes_out] == ["n1", "n2", "n3"]
    assert [(a.id, a.reason, a.position) for a in stage.added] == [
        ("n1", "it comes 1 node before n2", 1),
        ("n3", "it comes 1 node after n2", 3),
    ]
    assert stage.position_changes[0].id == "n2" and (stage.position_changes[0].before, stage.position_changes[0].after) == (1, 2)


def test_the_input_nodes_are_never_changed():
    nodes = make_nodes()
    run_query(nodes, "limit", embedder=KeywordEmbedder(), postprocessors=[("metadata_replacement", {})])
    assert nodes[2].text == "Limit one. Limit two. Unrelated line."


def test_a_bad_step_fails_before_retrieval():
    class Exploding:
        def embed(self, texts, progress=None):
            raise AssertionError("retrieval ran")

        embed_query = embed

    with pytest.raises(ConfigError, match="top_n must be at least 1"):
        run_query(make_nodes(), "q", embedder=Exploding(), postprocessors=[("top_n", {"top_n": 0})])


def test_final_context_is_the_llm_view_joined_by_blank_lines():
    result = run([("top_n", {"top_n": 2})])
    assert final_context(result.final) == (
        "file_name: doc.md\n\nLimit one. Limit two. Unrelated line.\n\nfile_name: doc.md\n\nThe limit is 500. Weather was fine."
    )
    assert final_context(result.final, MetadataMode.NONE) == "Limit one. Limit two. Unrelated line.\n\nThe limit is 500. Weather was fine."


def test_to_dict_is_json_with_every_stage():
    data = json.loads(json.dumps(run([("similarity_cutoff", {"similarity_cutoff": 0.5}), ("long_context_reorder", {})]).to_dict()))
    assert [n["id"] for n in data["retrieved"]] == ["n2", "n1", "n0"]
    assert data["stages"][0]["dropped"] == [{"id": "n0", "reason": "its score 0 is below the cutoff 0.5"}]
    assert data["stages"][0]["params"] == {"similarity_cutoff": 0.5}
    assert data["final_context"].startswith("file_name: doc.md")


# -- the CLI ----------------------------------------------------------------------


def test_cli_lists_postprocessors_as_json(capsys):
    assert cli_query.main(["postprocessors", "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in listing][:2] == ["similarity_cutoff", "keyword"]
    assert next(e for e in listing if e["name"] == "rerank")["available"] is False


def test_cli_query_prints_retrieved_nodes_and_traces(sample_docs, capsys):
    code = cli_query.main(
        [
            "query",
            str(sample_docs / "chunking_guide.md"),
            "--query", "How much chunk overlap should I start with?",
            "--splitter", "character", "--set", "chunk_size=400", "--set", "chunk_overlap=0",
            "--mode", "bm25", "--top-k", "4",
            "--post", "keyword:required_keywords=overlap,chunk",
            "--post", "top_n:top_n=2",
            "--format", "json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["retrieved"]) == 4
    assert [s["name"] for s in data["stages"]] == ["keyword", "top_n"]
    assert data["stages"][0]["params"]["required_keywords"] == ["overlap", "chunk"]
    assert len(data["final"]) <= 2
    assert all("overlap" in n["text"].lower() for n in data["final"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["query", "missing.md", "--query", "q", "--mode", "bm25"], "chunkscope: missing.md: file not found"),
        (["query", "sample_docs/chunking_guide.md", "--query", "q", "--post", "nope"], "chunkscope: unknown postprocessor 'nope'"),
        (["query", "sample_docs/chunking_guide.md", "--query", "q", "--post", "top_n:top_n=x"], "chunkscope: top_n: top_n must be a whole number"),
        (["query", "sample_docs/chunking_guide.md", "--query", "q", "--post", "rerank", "--mode", "bm25"], "chunkscope: no cross-encoder model is installed locally"),
    ],
)
def test_cli_user_errors_are_one_line_and_exit_2(argv, message, capsys, monkeypatch, sample_docs):
    monkeypatch.chdir(sample_docs.parent)
    assert cli_query.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert err.count("\n") == 1 and "Traceback" not in err


def test_post_parsing_keeps_list_values_together():
    assert cli_query.parse_post("keyword:required_keywords=a,b,exclude_keywords=c") == (
        "keyword",
        {"required_keywords": "a,b", "exclude_keywords": "c"},
    )
    assert cli_query.parse_post("long_context_reorder") == ("long_context_reorder", {})


def test_the_chunkscope_cli_runs_the_query_commands(sample_docs, capsys):
    from core.cli import main as cli

    guide = str(sample_docs / "chunking_guide.md")
    code = cli.main(["query", guide, "--query", "overlap", "--splitter", "sentence", "--mode", "bm25", "--top-k", "2"])
    assert code == 0
    assert len(json.loads(capsys.readouterr().out)["retrieved"]) == 2
    assert cli.main(["query", str(sample_docs / "chunking_guide.md"), "--query", "q", "--mode", "bm25", "--post", "rerank"]) == 2
    err = capsys.readouterr().err
    assert err == "chunkscope: no cross-encoder model is installed locally; set model_path to a local cross-encoder directory\n"
