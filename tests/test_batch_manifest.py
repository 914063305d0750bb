"""read_manifest: the whole file in one parse gives exactly what a parse a line gives, torn lines skipped; and so
does manifest_blocks, the report's reading of it a block at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.batch import manifest as manifest_module
from core.batch import read_manifest
from core.batch.manifest import manifest_blocks, manifest_line
from core.batch.storage import OutputStore

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
objects = st.dictionaries(st.sampled_from(["kind", "path", "part", "metrics", "x"]), values, max_size=4)


def line_by_line(text: str) -> list[object]:
    found = []
    for line in text.split("\n"):  # the manifest's lines end at "\n" alone (JSON leaves U+2028 and U+0085 as they are)
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(objects, max_size=6), cuts=st.lists(st.tuples(st.integers(0, 10), st.floats(0, 1)), max_size=2))
def test_one_parse_reads_what_a_parse_a_line_reads(tmp_path_factory, lines, cuts):
    texts = [manifest_line(line) for line in lines]
    for index, share in cuts:  # a line cut short, as a killed write leaves it (kept with its newline or not)
        if texts:
            index %= len(texts)
            texts[index] = texts[index][: int(share * (len(texts[index]) - 1))] + ("\n" if index % 2 else "")
    text = "".join(texts)
    path = Path(tmp_path_factory.mktemp("manifest")) / "manifest.jsonl"
    path.write_text(text, encoding="utf-8")
    assert read_manifest(path) == line_by_line(text)
    # The report reads it a block at a time: cut anywhere, even inside a line or a character, the same objects.
    store = OutputStore.at(path.parent)
    for block_bytes in (1, 7, 64):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(manifest_module, "BLOCK_BYTES", block_bytes)
            assert [line for block in manifest_blocks(store) for line in block] == line_by_line(text)


def test_a_torn_last_line_is_left_out_and_the_rest_read(tmp_path: Path):
    path = tmp_path / "manifest.jsonl"
    path.write_text('{"kind": "header"}\n{"kind": "input", "path": "a.txt"}\n{"kind": "input", "pa', encoding="utf-8")
    assert read_manifest(path) == [{"kind": "header"}, {"kind": "input", "path": "a.txt"}]


def test_a_line_that_is_not_an_object_is_not_read_as_lines(tmp_path: Path):
    path = tmp_path / "manifest.jsonl"
    path.write_text('{"kind": "header"}\n1, 2\n', encoding="utf-8")
    assert read_manifest(path) == [{"kind": "header"}]


def test_a_resume_reading_the_manifest_in_small_blocks_keeps_what_it_keeps_in_one(tmp_path: Path, monkeypatch):
    """--resume reads the manifest a block at a time (an input kept as its line's text, not its parsed line):
    cut into 200-byte blocks, it keeps the same inputs and rewrites the same manifest and parts."""
    import hashlib
    import shutil

    from core.batch import run_batch
    from core.batch.inputs import expand_inputs
    from core.batch.resume import prepare_output
    from core.config import PipelineConfig
    from core.splitters import get_splitter

    samples = Path(__file__).resolve().parent.parent / "sample_docs"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("chunking_guide.md", "release_notes.txt", "vector_search_faq.html"):
        shutil.copy(samples / name, corpus / name)
    config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=300, chunk_overlap=30))
    written = tmp_path / "written"
    run_batch([str(corpus)], config, written, workers=1, metrics=True, part_rows=20)
    (corpus / "release_notes.txt").write_text("Changed since the run.\n")
    header = json.loads((written / "manifest.jsonl").read_text().split("\n")[0])
    kept = []
    for block_bytes in (manifest_module.BLOCK_BYTES, 200):
        monkeypatch.setattr(manifest_module, "BLOCK_BYTES", block_bytes)
        out = tmp_path / f"resumed-{block_bytes}"
        shutil.copytree(written, out)
        valid, next_shard = prepare_output(
            OutputStore.at(out), header, expand_inputs([str(corpus)]), resume=True, overwrite=False
        )
        parts = b"".join(p.name.encode() + p.read_bytes() for p in sorted((out / "nodes").glob("*.parquet")))
        kept.append((sorted(valid), next_shard, (out / "manifest.jsonl").read_bytes(), hashlib.sha256(parts).digest()))
    assert kept[0] == kept[1] and len(kept[0][0]) == 2
