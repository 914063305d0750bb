"""Batch ids: the same text in two folders gets two ids; `--content-ids` makes identical contents share them.

Outside batch a document id hashes the file name and the text, and stays so (the app
and the fingerprints use it); a batch document id hashes the text and the file's path
inside its input folder, so ids are unique over a corpus and survive moving it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.batch import expand_inputs, run_batch
from core.cli.main import main
from core.config import PipelineConfig
from core.schema import Document, content_id
from core.splitters import get_splitter

SAMPLES = Path(__file__).resolve().parent.parent / "sample_docs"


def config() -> PipelineConfig:
    return PipelineConfig(splitter=get_splitter("recursive", chunk_size=400, chunk_overlap=40))


def twins(root: Path) -> Path:
    """One guide in two folders (same name, same bytes), the same bytes under another name, and the notes."""
    corpus = root / "corpus"
    for folder in ("a", "b"):
        (corpus / folder).mkdir(parents=True)
        shutil.copy(SAMPLES / "chunking_guide.md", corpus / folder / "guide.md")
    shutil.copy(SAMPLES / "chunking_guide.md", corpus / "copy_of_guide.md")
    shutil.copy(SAMPLES / "release_notes.txt", corpus / "notes.txt")
    return corpus


def nodes(out: Path) -> pa.Table:
    return pa.concat_tables([pq.read_table(part) for part in sorted((out / "nodes").glob("part-*.parquet"))])


def doc_ids(out: Path) -> dict[str, str]:
    table = nodes(out)
    return dict(zip(table.column("source_path").to_pylist(), table.column("doc_id").to_pylist(), strict=True))


def test_identical_files_in_two_folders_get_ids_of_their_own_and_the_report_counts_them(tmp_path: Path):
    corpus = twins(tmp_path)
    result = run_batch([str(corpus)], config(), tmp_path / "out", workers=1)
    table = nodes(tmp_path / "out")
    assert len(set(table.column("id").to_pylist())) == table.num_rows  # no two nodes share an id
    ids = {Path(source).relative_to(corpus).as_posix(): doc for source, doc in doc_ids(tmp_path / "out").items()}
    assert len(set(ids.values())) == 4
    text = Document(text=(SAMPLES / "chunking_guide.md").read_text()).text
    assert ids["a/guide.md"] == content_id(text, "a/guide.md")  # the path inside the input folder, "/" between

    corpus_numbers = result.report["corpus"]
    assert corpus_numbers["files_sharing_content"] == 3 and corpus_numbers["shared_contents"] == 1
    assert result.report["ids"] == "path"
    assert result.report["same_content"] == [
        sorted(str(corpus / name) for name in ("a/guide.md", "b/guide.md", "copy_of_guide.md"))
    ]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Same content (3 files in 1 groups)" in html and "each has ids of its own" in html


def test_moving_the_corpus_keeps_every_id(tmp_path: Path):
    corpus = twins(tmp_path)
    run_batch([str(corpus)], config(), tmp_path / "out", workers=1)
    moved = shutil.copytree(corpus, tmp_path / "elsewhere" / "renamed_root")
    run_batch([str(moved)], config(), tmp_path / "out2", workers=1)
    assert nodes(tmp_path / "out").column("id").equals(nodes(tmp_path / "out2").column("id"))


def test_content_ids_make_identical_contents_share_their_ids(tmp_path: Path, capsys):
    corpus = twins(tmp_path)
    out = tmp_path / "out"
    code = main(["batch", str(corpus), "--splitter", "recursive", "--out", str(out), "--content-ids", "-q"])
    assert code == 0
    assert "3 files share their content with another (1 distinct contents" in capsys.readouterr().err
    ids = {Path(source).relative_to(corpus).as_posix(): doc for source, doc in doc_ids(out).items()}
    assert ids["a/guide.md"] == ids["b/guide.md"] == ids["copy_of_guide.md"] != ids["notes.txt"]
    text = Document(text=(SAMPLES / "chunking_guide.md").read_text()).text
    assert ids["a/guide.md"] == content_id(text)
    report = json.loads((out / "report.json").read_text())
    assert report["ids"] == "content"

    # A resume must not mix the two kinds of ids in one dataset.
    again = main(["batch", str(corpus), "--splitter", "recursive", "--out", str(out), "--resume", "-q"])
    assert again == 2 and "--content-ids" in capsys.readouterr().err


def test_split_of_one_file_keeps_its_file_name_id(tmp_path: Path, capsys):
    corpus = twins(tmp_path)
    assert main(["split", str(corpus / "a" / "guide.md")]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    text = Document(text=(SAMPLES / "chunking_guide.md").read_text()).text
    assert first["doc_id"] == content_id(text, "guide.md")


def test_names_are_relative_to_their_root_and_unique_in_a_run(tmp_path: Path):
    corpus = twins(tmp_path)
    names = {entry.name for entry in expand_inputs([str(corpus)])}
    assert names == {"a/guide.md", "b/guide.md", "copy_of_guide.md", "notes.txt"}
    globbed = expand_inputs([str(corpus / "*" / "*.md")])
    assert [entry.name for entry in globbed] == ["a/guide.md", "b/guide.md"]
    # Two folders given together, each holding guide.md: the relative names collide, so the sources name them.
    both = expand_inputs([str(corpus / "a"), str(corpus / "b")])
    assert [entry.name for entry in both] == [str(corpus / "a" / "guide.md"), str(corpus / "b" / "guide.md")]


@pytest.mark.parametrize("content_ids", [False, True])
def test_a_task_without_a_salt_keeps_the_loaders_ids(tmp_path: Path, content_ids: bool):
    from core.batch.work import process_file

    path = tmp_path / "notes.txt"
    shutil.copy(SAMPLES / "release_notes.txt", path)
    task = {"index": 0, "source": str(path), "path": str(path), "problem": ""}
    plain = process_file(task, config().to_json(indent=None))
    salted = process_file({**task, "id_salt": "" if content_ids else "x/notes.txt"}, config().to_json(indent=None))
    plain_ids = pa.ipc.open_stream(plain["table"]).read_all().column("doc_id").to_pylist()
    salted_ids = pa.ipc.open_stream(salted["table"]).read_all().column("doc_id").to_pylist()
    text = Document(text=path.read_text()).text
    assert set(plain_ids) == {content_id(text, "notes.txt")}
    assert set(salted_ids) == {content_id(text, "" if content_ids else "x/notes.txt")}
