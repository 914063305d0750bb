"""The benchmark's method cannot drift back: ChunkScope is timed from the file's text, Document included.

Issue 18: with the ``Document`` built outside the timer, ChunkScope skipped the
hash of the whole text (its id) that its split needs, 20-30% of its time, while
every peer was timed from the plain string. No timing here: the registry is
inspected and each ChunkScope split is called once on a small ``str``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import contestants  # noqa: E402

TEXT = "Chunking keeps a document's text whole.\n\nEvery chunk is a span of it. " * 20


@pytest.fixture(autouse=True)
def _reuse_restored():
    """A contestant's set-up turns the process-wide reuse of token indexes and sentence cuts off (each timed
    split pays for its own); the tests that run after these in the same worker expect it on, as the app has it."""
    yield
    from core.tokens.segmentation import reuse_sentence_spans
    from core.tokens.token_index import reuse_token_indexes

    reuse_sentence_spans(True)
    reuse_token_indexes(True)


@pytest.mark.parametrize("group", contestants.GROUPS, ids=lambda g: g.key)
def test_chunkscope_is_timed_from_the_str_and_builds_its_document_inside_the_timed_call(group, monkeypatch):
    import core.schema

    assert group.ours.library == "chunkscope"
    assert all(c.library != "chunkscope" for c in group.peers)
    split = group.ours.prepare()  # the untimed set-up
    hashed: list[str] = []
    real_content_id = core.schema.content_id

    def recording_content_id(text: str, *args: object) -> str:
        hashed.append(text)
        return real_content_id(text, *args)

    monkeypatch.setattr(core.schema, "content_id", recording_content_id)
    chunks = split(TEXT)  # what the suite times
    # The Document of this text was made inside the call: its id (a hash of the whole text) is paid there.
    assert hashed == [TEXT]
    assert chunks and all(isinstance(chunk, str) and chunk in TEXT for chunk in chunks)


def test_only_the_floor_is_not_a_peer_and_a_multi_threaded_contestant_says_so():
    for group in contestants.GROUPS:
        assert group.peers, group.key
        assert not group.ours.floor
        assert all(c.threads == 1 for c in group.peers), "every peer runs with TOKENIZERS_PARALLELISM=false"
    token = contestants.group("token")
    # Both floors, labelled by whose pass they are (issue 32: the library's floor costs twice ChunkScope's).
    assert [c.label.partition(":")[0] for c in token.contestants if c.floor] == [
        "floor, the library's",
        "floor, ChunkScope's",
    ]
    from core.tokens.threads import WORKERS

    assert contestants.group("sentence").ours.threads == WORKERS


def test_every_group_that_splits_any_text_runs_and_is_judged_on_every_corpus_part():
    for key in ("recursive", "character", "sentence", "token"):
        group = contestants.group(key)
        assert group.inputs == ("files", "rest", "non_ascii", "large_file", "large")
        assert group.target_inputs == ("files", "rest", "non_ascii", "large_file")
    # Markdown groups split Markdown: their per-file corpus and one large Markdown document.
    assert contestants.group("markdown").inputs == ("files", "large")


def test_a_lead_that_holds_on_one_part_only_says_so():
    import report

    def measured(ratio: float) -> dict:
        ours = {"label": "ours", "cpu_s": 1.0, "median_s": 1.0, "threads": 1}
        peer = {"label": "peer", "cpu_s": ratio, "median_s": ratio, "cpu_speedup": ratio, "speedup": ratio,
                "cpu_speedup_range": [ratio, ratio], "speedup_range": [ratio, ratio]}
        return {"rows": [ours, peer]}

    group = {"title": "Character", "target_ratio": 1.0, "target_inputs": ["files", "rest", "non_ascii"],
             "inputs": {"files": measured(1.2), "rest": measured(0.8), "non_ascii": measured(0.9)}}
    verdicts = report.splitter_targets(group)
    assert [ok for _, ok, _ in verdicts] == [True, False, False, False]
    assert verdicts[-1][2].startswith("holds on 1 of 3")


def test_an_engine_is_timed_against_its_framework_called_directly_with_its_document_built_in_the_timer(monkeypatch):
    import engine_overhead

    from core.splitters import get_splitter

    engine = get_splitter("langchain.character", chunk_size=100, chunk_overlap=0)
    monkeypatch.setattr(type(engine), "chunks", lambda *_: pytest.fail("engine.chunks is ChunkScope's wrapper"))
    direct, positioned = engine_overhead.direct_calls(engine)
    assert direct(TEXT) == type(engine.build_framework())(chunk_size=100, chunk_overlap=0).split_text(TEXT)
    assert [d.metadata["start_index"] for d in positioned(TEXT)][:2] == [0, TEXT.index("Every")]


def test_the_roff_of_a_manual_page_reads_as_its_words():
    import corpus_parts

    page = '.TH FREE 1\n.SH NOM\nfree \\- Afficher la m\\[u00E9]moire\n.PP\n.B free\naffiche la quantit\u00e9 totale.\n'
    assert corpus_parts.roff_to_text(page) == "NOM\nfree - Afficher la m\u00e9moire\n\nfree\naffiche la quantit\u00e9 totale."


def test_a_re_render_of_results_keeps_every_hand_written_section_once():
    import report

    old = "# Benchmarks\n\n## Targets\nold table\n\n## Sixth round (by hand)\nits record\n\n## Corpus batch\nappended\n"
    made = ["# Benchmarks", "", "## Targets", "new table", "", "## Notes\n\n## Sixth round (by hand)\nfrom NOTES.md"]
    # The generated Targets are not kept from the old text; the NOTES.md section already in `made` is not doubled.
    assert report.appended_sections(old, made=made) == ["## Corpus batch", "appended", ""]
    assert report.appended_sections(old, made=["## Targets"]) == [
        "## Sixth round (by hand)",
        "its record",
        "",
        "## Corpus batch",
        "appended",
        "",
    ]


def test_a_chromium_target_is_judged_on_the_median_of_its_runs_and_says_their_spread(tmp_path, monkeypatch):
    import report

    def run(new_ms: float) -> dict:
        change = {
            "splitter": "sentence",
            "warm_new_value_metric_s": new_ms / 1000,
            "warm_new_value_settled_s": new_ms / 1000,
            "warm_seen_value_metric_s": 0.15,
            "first_redraw": {"metric_s": 0.3},
        }
        return {"chunk_size_change": [change], "pdf_first_view": {"total_s": 2.0, "upload_to_home_row_s": 0.8,
                                                                   "to_chunks_page_s": 1.9}}

    results = tmp_path / "app_results.json"
    current = {"browser": run(240), "runs": [run(240), run(230), run(290)]}
    results.write_text(json.dumps({"current": current}))
    monkeypatch.setattr(report, "APP_RESULTS", results)
    (row,) = [t for t in report.targets({}) if "chromium (sentence)" in t[0]]
    assert row[1] is True  # the median of 240, 230 and 290
    assert "median of 3 runs' medians (runs 230–290 ms, under 250 in 2 of 3)" in row[2]
    current["runs"] = [run(240), run(260), run(290)]
    results.write_text(json.dumps({"current": current}))
    (row,) = [t for t in report.targets({}) if "chromium (sentence)" in t[0]]
    assert row[1] is False


def test_splitter_groups_from_different_runs_each_name_their_run(tmp_path, monkeypatch):
    # --groups re-runs some groups and keeps the others: the header says which run measured which groups.
    import report

    monkeypatch.setattr(report, "APP_RESULTS", tmp_path / "absent.json")
    early = {"date": "2026-11-27 03:53 UTC", "command": "benchmarks/run.py --groups recursive", "loadavg_start": 0.9}
    late = {"date": "2026-11-27 07:47 UTC", "command": "benchmarks/run.py --groups token", "loadavg_start": 0.4}
    results = {
        "runs": {"splitters": late},
        "splitters": [{"key": "recursive", "run": early}, {"key": "token", "run": late}, {"key": "character", "run": early}],
    }
    assert report.runs_lines(results) == [
        "  - splitters (recursive, character): 2026-11-27 03:53 UTC, "
        "`HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/run.py --groups recursive` (load average 0.9 at its start)",
        "  - splitters (token): 2026-11-27 07:47 UTC, "
        "`HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/run.py --groups token` (load average 0.4 at its start)",
    ]
