"""`chunkscope batch` on the local engine: the dataset, the report, resume, Ctrl-C, bad files.

The Ray engine's tests (same output, byte for byte) are in test_batch_ray.py, on one xdist worker.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.batch import MANIFEST, BatchInterrupted, expand_inputs, read_manifest, run_batch
from core.cli.main import main
from core.config import PipelineConfig
from core.schema import MetadataMode, Node
from core.splitters import get_splitter

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_docs"
GOOD = [
    "chunking_guide.md",
    "rag_handbook.pdf",
    "release_notes.txt",
    "vector_search_faq.html",
    "splitter_benchmarks.csv",
]
BAD = {"broken.pdf": "is not a PDF", "empty.txt": "is empty"}


def make_corpus(root: Path) -> Path:
    """Sample documents in two folders, a corrupt PDF and an empty file."""
    corpus = root / "corpus"
    (corpus / "more").mkdir(parents=True)
    for name in GOOD[:3]:
        shutil.copy(SAMPLES / name, corpus / name)
    for name in GOOD[3:]:
        shutil.copy(SAMPLES / name, corpus / "more" / name)
    shutil.copy(SAMPLES.parent / "scripts" / "sample_sources" / "rag_handbook.md", corpus / "more" / "handbook_source.md")
    (corpus / "broken.pdf").write_bytes(b"this is not a pdf at all\n" * 40)
    (corpus / "empty.txt").write_bytes(b"")
    return corpus


def small_config() -> PipelineConfig:
    # Small chunks: a few hundred nodes over the corpus, so parts of a few dozen rows make several parts.
    return PipelineConfig(splitter=get_splitter("recursive", chunk_size=400, chunk_overlap=40))


def dataset(out: Path) -> pa.Table:
    parts = sorted((out / "nodes").glob("part-*.parquet"))
    return pa.concat_tables([pq.read_table(part) for part in parts])


def part_hashes(out: Path) -> dict[str, str]:
    import hashlib

    return {
        part.name: hashlib.sha256(part.read_bytes()).hexdigest()
        for part in sorted((out / "nodes").glob("part-*.parquet"))
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("batch"))


@pytest.fixture(scope="module")
def config_file(corpus: Path) -> Path:
    path = corpus.parent / "config.json"
    path.write_text(small_config().to_json())
    return path


@pytest.fixture(scope="module")
def cli_run(corpus: Path, config_file: Path) -> Path:
    """One `chunkscope batch DIR --config FILE` run, shared by the tests that only read its output."""
    out = corpus.parent / "out"
    code = main(
        [
            "batch",
            str(corpus),
            "--config",
            str(config_file),
            "--out",
            str(out),
            "--workers",
            "2",
            "-q",
            "--part-rows",
            "50",
        ]
    )
    assert code == 0
    return out


@pytest.fixture(scope="module")
def metrics_run(corpus: Path, config_file: Path) -> Path:
    """The same run with --metrics: model tokens, lint flags and each file's chunk metrics."""
    out = corpus.parent / "out-metrics"
    args = ["batch", str(corpus), "--config", str(config_file), "--out", str(out), "--workers", "2", "-q"]
    assert main([*args, "--part-rows", "50", "--metrics"]) == 0
    return out


DEFAULT_COLUMNS = [
    "id",
    "doc_id",
    "source_path",
    "node_index",
    "start_char",
    "end_char",
    "text",
    "characters",
    "tokens",
    "metadata",
    "relationships",
    "llm_view",
    "embed_view",
]


def test_bad_files_are_listed_with_their_reason_and_the_rest_is_written(cli_run: Path, corpus: Path):
    report = json.loads((cli_run / "report.json").read_text())
    failed = {Path(entry["source"]).name: entry["reason"] for entry in report["failed"]}
    assert set(failed) == set(BAD)
    for name, words in BAD.items():
        assert words in failed[name] and "\n" not in failed[name]
    written = {Path(source).name for source in dataset(cli_run).column("source_path").to_pylist()}
    assert written == set(GOOD) | {"handbook_source.md"}
    assert report["corpus"]["files_ok"] == 6 and report["corpus"]["files_failed"] == 2
    html = (cli_run / "report.html").read_text()
    assert "broken.pdf" in html and "Failed files (2)" in html
    # plotly.js is inside the page: it opens offline.
    assert "<script src=" not in html and "Plotly" in html


def test_parts_are_bounded_and_the_dataset_holds_every_column(cli_run: Path):
    rows = [pq.read_metadata(part).num_rows for part in sorted((cli_run / "nodes").glob("part-*.parquet"))]
    assert len(rows) > 2 and max(rows) <= 50 and all(n == 50 for n in rows[:-1])
    table = dataset(cli_run)
    assert table.column_names == DEFAULT_COLUMNS
    assert len(set(table.column("id").to_pylist())) == table.num_rows
    assert pq.read_table(cli_run / "nodes").equals(table)  # the folder reads as one dataset
    report = json.loads((cli_run / "report.json").read_text())
    assert report["corpus"]["nodes"] == table.num_rows == sum(p["rows"] for p in report["parts"])


def test_metrics_add_model_tokens_and_flags_and_change_no_other_column(cli_run: Path, metrics_run: Path):
    measured = dataset(metrics_run)
    # --metrics gives the columns every batch had before measuring became optional, in their places.
    assert measured.column_names == [*DEFAULT_COLUMNS[:9], "embed_tokens", "flags", *DEFAULT_COLUMNS[9:]]
    assert measured.select(DEFAULT_COLUMNS).equals(dataset(cli_run))
    from core.tokens.tokenizers import get_tokenizer

    # The window check's own counts (from each document's token index) are the plain counts of the views.
    embed_views = measured.column("embed_view").to_pylist()
    assert measured.column("embed_tokens").to_pylist() == get_tokenizer("model").count_many(embed_views)
    over_window = [n > 254 for n in measured.column("embed_tokens").to_pylist()]
    assert over_window == ["over-window" in f for f in measured.column("flags").to_pylist()]
    plain, full = (json.loads((out / "report.json").read_text()) for out in (cli_run, metrics_run))
    assert full["metrics"] is True and plain["metrics"] is False
    # Without --metrics the report gives the sizes and what they tell (over the limit), and no guesses.
    for key in ("characters", "tokens", "nodes", "over_limit", "files_ok"):
        assert plain["corpus"][key] == full["corpus"][key]
    assert plain["corpus"]["coverage"] is None and plain["corpus"]["mid_sentence"] is None
    assert plain["histograms"]["embed_tokens"] is None and plain["histograms"]["tokens"] == full["histograms"]["tokens"]
    assert set(plain["documents"][0]["metrics"]) == {"count", "characters", "tokens"}
    html = (cli_run / "report.html").read_text()
    assert "--metrics" in html and "Lint flags" not in html and "Lint flags" in (metrics_run / "report.html").read_text()


def test_resume_keeps_the_choice_of_metrics(cli_run: Path, corpus: Path, config_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "out"
    shutil.copytree(cli_run, out)
    args = ["batch", str(corpus), "--config", str(config_file), "--out", str(out), "-q", "--resume"]
    assert main([*args, "--metrics"]) == 2
    assert "--metrics" in capsys.readouterr().err


def test_nodes_and_report_numbers_equal_chunkscope_split_and_metrics_per_file(
    metrics_run: Path, corpus: Path, config_file: Path, capsys
):
    table = dataset(metrics_run).to_pylist()
    report = json.loads((metrics_run / "report.json").read_text())
    by_source = {entry["source"]: entry for entry in report["documents"]}
    assert len(by_source) == 6
    capsys.readouterr()
    for source, entry in by_source.items():
        assert main(["split", source, "--config", str(config_file)]) == 0
        expected = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        rows = [row for row in table if row["source_path"] == source]
        assert entry["nodes"] == len(expected) == len(rows)
        # Batch ids hash the path inside the input folder (core.batch.ids), split's the file name: the same
        # ids at the folder's top, other ids (for the same nodes) in a subfolder.
        at_top = "/" not in Path(source).relative_to(corpus).as_posix()
        batch_id = {node_data["id"]: row["id"] for row, node_data in zip(rows, expected, strict=True)}
        batch_id.update({node_data["doc_id"]: row["doc_id"] for row, node_data in zip(rows, expected, strict=True)})
        for row, node_data in zip(rows, expected, strict=True):
            node = Node.from_dict(node_data)
            assert (row["id"] == node.id) == at_top and row["id"].split("#")[1] == node.id.split("#")[1]
            assert row["text"] == node.text
            assert (row["start_char"], row["end_char"]) == (node.start_char, node.end_char)
            assert json.loads(row["metadata"]) == node_data["metadata"]
            relationships = {kind: _translated(target, batch_id) for kind, target in node_data["relationships"].items()}
            assert json.loads(row["relationships"]) == relationships
            assert row["llm_view"] == node.get_content(MetadataMode.LLM)
            assert row["embed_view"] == node.get_content(MetadataMode.EMBED)
        assert main(["metrics", source, "--config", str(config_file), "--format", "json"]) == 0
        expected_metrics = json.loads(capsys.readouterr().out)
        coverage = expected_metrics["coverage_by_document"]
        expected_metrics["coverage_by_document"] = {batch_id[doc_id]: value for doc_id, value in coverage.items()}
        assert entry["metrics"] == expected_metrics
    # The corpus's node shares count the nodes' flags: the per-file shares, weighted by node count.
    corpus = report["corpus"]
    for key in ("mid_sentence", "over_window", "over_limit"):
        weighted = sum(e["metrics"][key] * e["nodes"] for e in by_source.values()) / corpus["nodes"]
        assert corpus[key] == pytest.approx(weighted)


def _translated(target, ids: dict[str, str]):
    """A relationship's target (an id or a list of ids) with split's ids replaced by batch's."""
    return [ids[one] for one in target] if isinstance(target, list) else ids[target]


def test_parts_are_cut_by_bytes_too(corpus: Path, cli_run: Path, tmp_path: Path):
    budget = 20_000
    run_batch([str(corpus)], small_config(), tmp_path / "out", workers=1, part_bytes=budget)
    for part in sorted((tmp_path / "out" / "nodes").glob("part-*.parquet")):
        table = pq.read_table(part)
        text = sum(len(v.encode()) for c in ("text", "llm_view", "embed_view") for v in table.column(c).to_pylist())
        assert table.num_rows == 1 or text < budget
    assert dataset(tmp_path / "out").equals(dataset(cli_run))


def test_a_part_written_in_row_groups_holds_the_same_rows(corpus: Path, tmp_path: Path, monkeypatch):
    """Row groups are written while rows arrive; where parts end does not depend on them."""
    from core.batch import dataset as batch_dataset

    run_batch([str(corpus)], small_config(), tmp_path / "whole", workers=1, part_bytes=30_000)
    monkeypatch.setattr(batch_dataset, "ROW_GROUP_BYTES", 4_000)
    run_batch([str(corpus)], small_config(), tmp_path / "grouped", workers=1, part_bytes=30_000)

    def parts(out: Path) -> list[pq.ParquetFile]:
        return [pq.ParquetFile(p) for p in sorted((out / "nodes").glob("part-*.parquet"))]

    whole, grouped = parts(tmp_path / "whole"), parts(tmp_path / "grouped")
    assert [p.metadata.num_rows for p in grouped] == [p.metadata.num_rows for p in whole]
    assert max(p.metadata.num_row_groups for p in grouped) > 1
    assert all(p.metadata.num_row_groups == 1 for p in whole)
    assert dataset(tmp_path / "grouped").equals(dataset(tmp_path / "whole"))


def test_one_worker_and_two_write_the_same_bytes(cli_run: Path, corpus: Path, tmp_path: Path):
    run_batch([str(corpus)], small_config(), tmp_path / "one", workers=1, part_rows=50)
    assert part_hashes(tmp_path / "one") == part_hashes(cli_run)


# Input bytes a shard: the corpus in four shards of one to three files (the default puts it in one).
SHARD = 20_000


def shards_of(out: Path) -> list[int]:
    from core.batch.dataset import part_shard

    return sorted({part_shard(part.name) for part in (out / "nodes").glob("part-*.parquet")})


def test_every_worker_count_writes_the_same_shards_and_bytes(corpus: Path, cli_run: Path, tmp_path: Path):
    run_batch([str(corpus)], small_config(), tmp_path / "one", workers=1, part_rows=50, shard_bytes=SHARD)
    run_batch([str(corpus)], small_config(), tmp_path / "two", workers=2, part_rows=50, shard_bytes=SHARD)
    assert part_hashes(tmp_path / "one") == part_hashes(tmp_path / "two")
    assert shards_of(tmp_path / "two") == [0, 1, 2, 3]  # the failed files hold no rows, their shards no part
    # Shards only move where parts end: the same rows, in the same order, as one shard.
    assert dataset(tmp_path / "two").equals(dataset(cli_run))
    lines = read_manifest(tmp_path / "two" / MANIFEST)
    assert [line["kind"] for line in lines].count("input") == 8
    recorded = [line["part"] for line in lines if line["kind"] == "part"]
    assert recorded == sorted(recorded) == sorted(part_hashes(tmp_path / "two"))


def test_parts_the_workers_write_are_the_bytes_the_driver_writes(corpus: Path, tmp_path: Path, monkeypatch):
    """A path or URI: the workers write the parts. A filesystem object (which may live in the driver only): the driver
    does, with the same code. Either way, the same bytes."""
    import pyarrow.fs as pafs

    from core.batch.storage import OutputStore

    written_here: list[str] = []
    real = OutputStore.write_bytes

    def write_bytes(self, data, *names):  # noqa: ANN001, ANN202 - records what this process writes
        written_here.append(names[-1])
        return real(self, data, *names)

    monkeypatch.setattr(OutputStore, "write_bytes", write_bytes)
    by_workers = tmp_path / "workers"
    run_batch([str(corpus)], small_config(), by_workers, workers=2, part_rows=50, shard_bytes=SHARD)
    from_workers, written_here[:] = list(written_here), []
    by_driver = tmp_path / "driver"
    run_batch(
        [str(corpus)], small_config(), str(by_driver), filesystem=pafs.LocalFileSystem(), workers=2, part_rows=50,
        shard_bytes=SHARD,
    )
    parts = part_hashes(by_workers)
    assert len(parts) > 4 and part_hashes(by_driver) == parts
    assert not [name for name in from_workers if name.startswith("part-")]  # the driver wrote none of them
    assert sorted(name for name in written_here if name.startswith("part-")) == sorted(parts)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=5_000), max_size=60),
    budget=st.integers(min_value=1, max_value=12_000),
    first=st.integers(min_value=0, max_value=99),
)
def test_shards_are_consecutive_inputs_within_their_budget(sizes, budget, first):
    from core.batch.shards import plan_shards

    tasks = [
        {"index": n, "source": f"{n}.txt", "path": f"/in/{n}.txt", "problem": "", "bytes": size}
        for n, size in enumerate(sizes)
    ]
    shards = plan_shards(tasks, first, 128 * 2**20, budget)
    assert [task for shard in shards for task in shard["tasks"]] == tasks  # every input once, in order
    assert [shard["shard"] for shard in shards] == list(range(first, first + len(shards)))
    for number, shard in enumerate(shards):
        after = shards[number + 1] if number + 1 < len(shards) else None
        assert shard["bytes"] == sum(sizes[task["index"]] for task in shard["tasks"])
        assert shard["bytes"] <= budget or len(shard["tasks"]) == 1  # a larger file is a shard of its own
        if after is not None:  # a shard ends only where the next file would not fit
            assert shard["bytes"] + sizes[after["tasks"][0]["index"]] > budget


def test_a_shard_holds_a_1024th_of_the_corpus_between_1_mib_and_a_quarter_part():
    from core.batch.shards import shard_budget

    MiB = 2**20
    assert shard_budget(21 * 10**6, 128 * MiB) == MiB  # 21 MB: about 21 shards
    assert shard_budget(10 * 10**9, 128 * MiB) == 10**10 // 1024  # 10 GB: 1,024 shards of ~9.8 MB
    assert shard_budget(10**12, 128 * MiB) == 32 * MiB  # 1 TB: ~30,000 shards of 32 MiB


def test_resume_skips_finished_files_and_redoes_a_changed_one(corpus: Path, tmp_path: Path):
    local = make_corpus(tmp_path / "copy")
    out = tmp_path / "out"
    first = run_batch([str(local)], small_config(), out, workers=2, part_rows=50)
    before = part_hashes(out)

    again = run_batch([str(local)], small_config(), out, workers=2, part_rows=50, resume=True)
    assert again.skipped == 6 and again.processed == 2  # only the two bad files are tried again
    assert part_hashes(out) == before
    assert len(json.loads((out / "report.json").read_text())["documents"]) == 6

    # A changed file is done again (with every input that shared a part with it); the rest is kept.
    changed = local / "more" / "handbook_source.md"
    changed.write_text(changed.read_text() + "\n\nAn appended paragraph about chunk overlap.\n")
    third = run_batch([str(local)], small_config(), out, workers=2, part_rows=50, resume=True)
    assert 0 < third.skipped < 6
    fresh = tmp_path / "fresh"
    run_batch([str(local)], small_config(), fresh, workers=2, part_rows=50)
    # The same rows; the redone inputs' parts come after the kept ones.
    order = [("source_path", "ascending"), ("node_index", "ascending")]
    assert dataset(out).sort_by(order).equals(dataset(fresh).sort_by(order))
    assert any("An appended paragraph" in text for text in dataset(out).column("text").to_pylist())
    assert first.nodes > 0


def test_ctrl_c_leaves_a_consistent_manifest_and_resume_finishes_the_same_dataset(
    corpus: Path, cli_run: Path, tmp_path: Path
):
    out = tmp_path / "out"
    seen = []

    def interrupt(state):
        seen.append(state.files_done)
        raise KeyboardInterrupt

    with pytest.raises(BatchInterrupted) as stopped:
        run_batch([str(corpus)], small_config(), out, workers=2, part_rows=50, shard_bytes=SHARD, progress=interrupt)
    assert stopped.value.result.processed < 8
    lines = read_manifest(out / MANIFEST)
    parts = {line["part"] for line in lines if line["kind"] == "part"}
    assert parts == {path.name for path in (out / "nodes").glob("part-*.parquet")}
    assert not list((out / "nodes").glob(".*"))
    assert json.loads((out / "report.json").read_text())["complete"] is False

    run_batch([str(corpus)], small_config(), out, workers=2, part_rows=50, shard_bytes=SHARD, resume=True)
    assert dataset(out).equals(dataset(cli_run))
    report = json.loads((out / "report.json").read_text())
    assert report["complete"] and report["corpus"]["files_ok"] == 6 and len(report["failed"]) == 2


def test_an_existing_output_needs_resume_or_overwrite_and_resume_needs_the_same_config(
    cli_run: Path, corpus: Path, config_file: Path, tmp_path: Path, capsys
):
    out = tmp_path / "out"
    shutil.copytree(cli_run, out)
    assert main(["batch", str(corpus), "--config", str(config_file), "--out", str(out), "-q"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["batch", str(corpus), "--splitter", "character", "--out", str(out), "-q", "--resume"]) == 2
    assert "another configuration" in capsys.readouterr().err


def test_inputs_from_globs_lists_and_parquet_lists(corpus: Path, tmp_path: Path):
    listing = tmp_path / "paths.txt"
    listing.write_text(f"# the corpus\n{corpus / 'chunking_guide.md'}\n\nmissing.md\n")
    table = pa.table({"path": [str(corpus / "more" / "vector_search_faq.html"), str(corpus / "chunking_guide.md")]})
    pq.write_table(table, tmp_path / "paths.parquet")
    found = expand_inputs(
        [str(corpus / "**" / "*.md"), f"@{listing}", str(tmp_path / "paths.parquet"), str(tmp_path / "*.nothing")]
    )
    names = [Path(entry.source).name for entry in found]
    # Globs sorted, lists in their order; the guide is named three times and kept once.
    assert names == ["chunking_guide.md", "handbook_source.md", "missing.md", "vector_search_faq.html", "*.nothing"]
    assert found[2].path == str(tmp_path / "missing.md")  # relative to the list's folder
    assert found[-1].problem == "no file matches this pattern"

    result = run_batch([f"@{listing}", str(tmp_path / "*.nothing")], small_config(), tmp_path / "out", workers=1)
    failed = {Path(entry["source"]).name: entry["reason"] for entry in result.report["failed"]}
    assert failed == {"missing.md": "file not found", "*.nothing": "no file matches this pattern"}  # named once
    assert result.report["corpus"]["files_ok"] == 1


def test_a_file_over_the_upload_limit_fails_before_it_is_read(tmp_path: Path):
    big = tmp_path / "huge.txt"
    with open(big, "wb") as handle:  # sparse: 51 MB on paper, no disk
        handle.truncate(51_000_000)
    result = run_batch([str(big)], small_config(), tmp_path / "out", workers=1)
    (failed,) = result.report["failed"]
    assert "more than the upload limit" in failed["reason"]
    (line,) = [line for line in read_manifest(tmp_path / "out" / MANIFEST) if line["kind"] == "input"]
    assert line["size"] == 51_000_000 and line["sha256"] == ""  # refused from its size: never read, never hashed


@pytest.mark.model
@pytest.mark.xdist_group("model")
def test_embed_adds_a_fixed_size_float32_column_of_the_embed_views(corpus: Path, tmp_path: Path):
    import numpy as np

    from core.embed.embedder import get_embedder

    result = run_batch(
        [str(corpus / "release_notes.txt")], small_config(), tmp_path / "out", workers=1, embed="default"
    )
    table = dataset(tmp_path / "out")
    assert result.nodes == table.num_rows > 0
    assert table.schema.field("embedding").type == pa.list_(pa.float32(), 384)
    vectors = np.asarray(table.column("embedding").to_pylist(), dtype=np.float32)
    expected = get_embedder().embed(table.column("embed_view").to_pylist())
    np.testing.assert_allclose(vectors, expected, atol=1e-5)


_KILL_ONE_WORKER = """
import json, os, sys
from core.batch import run_batch, work
from core.config import PipelineConfig
from core.splitters import get_splitter

process = work._process


def crash_on_poison(task, *args):  # a parser that segfaults or is killed for memory, on one file
    if task["source"].endswith("release_notes.txt"):
        os._exit(1)
    return process(task, *args)


work._process = crash_on_poison  # the forked workers inherit it
config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=400, chunk_overlap=40))
result = run_batch([sys.argv[1]], config, sys.argv[2], workers=2, part_rows=50)
print(json.dumps(result.report["failed"]))
"""


def test_a_file_that_kills_its_worker_fails_alone_and_the_run_goes_on(corpus: Path, cli_run: Path, tmp_path: Path):
    import subprocess
    import sys

    # A fresh interpreter has one thread, so its pool forks and the workers inherit the poisoned function
    # (a test process that has started threads would spawn them instead).
    done = subprocess.run(
        [sys.executable, "-c", _KILL_ONE_WORKER, str(corpus), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    failed = {Path(entry["source"]).name: entry["reason"] for entry in json.loads(done.stdout.strip().splitlines()[-1])}
    assert set(failed) == set(BAD) | {"release_notes.txt"}
    assert "worker process died" in failed["release_notes.txt"]
    expected = dataset(cli_run)
    kept = expected.filter(pc.invert(pc.match_substring(expected.column("source_path"), "release_notes")))
    assert dataset(tmp_path / "out").equals(kept)
