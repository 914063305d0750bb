"""Sweeps over any declared numeric or choice parameter, of several splitters in one run; decided in core.evaluation.sweep alone."""

from __future__ import annotations

import json

import pytest
from eval_support import WordsEmbedder, words_embed

from core.cli import evaluate as cli_evaluate
from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.evaluation.sweep import (
    SweepSpec,
    configurations,
    plan_sweeps,
    sweep,
    sweep_evaluations,
    sweep_values,
    sweepable,
    sweepable_params,
)
from core.loaders import load
from core.splitters import SPLITTERS
from core.splitters.semantic import embedder_override


@pytest.fixture(scope="module")
def guide(sample_docs):
    return load(sample_docs / "chunking_guide.md")


@pytest.fixture(scope="module")
def guide_queries(sample_docs):
    from core.evaluation.queries import load_queries

    return [q for q in load_queries(sample_docs / "queries.json") if q.doc == "chunking_guide.md"]


def test_every_declared_number_choice_or_switch_is_sweepable_and_nothing_else():
    names = {cls.name: [spec.name for spec in sweepable_params(cls)] for cls in SPLITTERS}
    assert "heading_level" in names["markdown"] and "chunk_size" in names["markdown"]
    assert {"breakpoint_type", "breakpoint_amount", "buffer_size"} <= set(names["semantic"])
    assert "chunk_sizes" not in names["hierarchical"]  # a list is not one value to vary
    assert "separator" not in names["character"]  # free text neither
    assert all(sweepable(cls) for cls in SPLITTERS)


@pytest.mark.parametrize(
    ("splitter", "param", "text", "values"),
    [
        ("markdown", "heading_level", "3, 1,2, 1", [1, 2, 3]),
        ("semantic", "breakpoint_amount", "[90, 80.5]", [80.5, 90.0]),
        ("semantic", "breakpoint_type", "gradient, percentile", ["gradient", "percentile"]),
        ("sentence", "metadata_aware", "false,true", [False, True]),
    ],
)
def test_sweep_values_are_read_by_the_parameters_declaration(splitter, param, text, values):
    spec = {s.name: s for s in sweepable_params(SPLITTERS.get_class(splitter))}[param]
    assert sweep_values(text, "--sweep x", spec) == values


@pytest.mark.parametrize(
    ("param", "text", "message"),
    [
        ("heading_level", "2, 7", "--sweep x: heading_level must be at most 6, got 7"),
        ("heading_level", "two", "--sweep x: heading_level must be a whole number, got 'two'"),
        ("heading_level", " , ", "--sweep x: give at least one value"),
    ],
)
def test_a_bad_sweep_value_is_refused_naming_the_option(param, text, message):
    spec = {s.name: s for s in sweepable_params(SPLITTERS.get_class("markdown"))}[param]
    with pytest.raises(ConfigError, match=message):
        sweep_values(text, "--sweep x", spec)


def test_markdown_heading_level_sweeps(guide, guide_queries):
    rows = sweep(guide, guide_queries, "markdown", grid={"heading_level": [1, 2, 3]}, retrieval=RetrievalSettings(mode="bm25"))
    assert [row["heading_level"] for row in rows] == [1, 2, 3]
    assert rows[0]["nodes"] < rows[1]["nodes"] <= rows[2]["nodes"]


def test_the_semantic_breakpoint_threshold_sweeps(guide, guide_queries):
    with embedder_override(words_embed):
        rows = sweep(guide, guide_queries, "semantic", grid={"breakpoint_amount": [50, 95]}, retrieval=RetrievalSettings(mode="bm25"))
    assert [row["breakpoint_amount"] for row in rows] == [50, 95]
    assert rows[0]["nodes"] > rows[1]["nodes"]  # a lower percentile cuts more often


def test_settings_and_sweeps_go_to_the_splitters_that_declare_them():
    specs = plan_sweeps(
        ["character", "markdown"],
        {"chunk_overlap": "0", "markdown.heading_level": "2"},
        {"chunk_size": "200,400", "markdown.heading_level": "1,2"},
    )
    assert specs == [
        SweepSpec("character", {"chunk_size": [200, 400]}, {"chunk_overlap": "0"}),
        SweepSpec("markdown", {"chunk_size": [200, 400], "heading_level": [1, 2]}, {"heading_level": "2"}),
    ]
    labels = [label for label, _, _ in configurations(specs)]
    assert labels == [
        "character · chunk_size=200",
        "character · chunk_size=400",
        "markdown · chunk_size=200, heading_level=1",
        "markdown · chunk_size=200, heading_level=2",
        "markdown · chunk_size=400, heading_level=1",
        "markdown · chunk_size=400, heading_level=2",
    ]
    with pytest.raises(ConfigError, match="no chosen splitter \\(character, markdown\\) has a parameter 'bogus'"):
        plan_sweeps(["character", "markdown"], {}, {"bogus": "1"})
    with pytest.raises(ConfigError, match="has a parameter 'sentence.chunk_size'"):
        plan_sweeps(["character"], {}, {"sentence.chunk_size": "1"})


def test_several_splitters_in_one_run_each_embedded_once(guide, guide_queries, tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "model").mkdir()
    embedder = WordsEmbedder(str(tmp_path / "model"))
    specs = [SweepSpec("markdown", {"heading_level": [1, 2]}), SweepSpec("character", {}, {"chunk_size": 300})]
    results = sweep_evaluations(guide, guide_queries, specs, embedder=embedder)
    assert [label for label, _ in results] == ["markdown · heading_level=1", "markdown · heading_level=2", "character"]
    assert [result.splitter for _, result in results] == ["markdown", "markdown", "character"]
    # A chunk text two configurations share is embedded once (the first heading_level=1 section may equal a level-2 one).
    assert len(embedder.encoded) == len(set(embedder.encoded))


def test_cli_sweeps_a_markdown_parameter_and_several_splitters(sample_docs, capsys):
    args = ["evaluate", str(sample_docs / "chunking_guide.md"), "--queries", str(sample_docs / "queries.json")]
    args += ["--mode", "bm25", "--quiet", "--format", "json", "--splitter", "markdown,character"]
    args += ["--sweep", "markdown.heading_level=1,2", "--set", "character.chunk_size=300"]
    assert cli_evaluate.main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert [row["config"] for row in data["rows"]] == [
        "markdown · heading_level=1",
        "markdown · heading_level=2",
        "character",
    ]
    assert data["rows"][2]["chunk_size"] == 300
    # Both have a chunk_size; character's 100 is below its overlap (200), so that one combination is skipped.
    assert cli_evaluate.main([*args[:-4], "--sweep-sizes", "100,300", "--format", "table"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["config", "splitter"] and "hit@5" in lines[0].split()
    assert [line.split("  ")[0] for line in lines[1:4]] == [
        "markdown · chunk_size=100",
        "markdown · chunk_size=300",
        "character · chunk_size=300",
    ]
