"""The document cache (core.loaders.cache): what a file loads to is kept, given back equal, and never trusted blindly."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import core.loaders
from core.errors import LoadError
from core.limits import Limits
from core.loaders import cache as document_cache
from core.loaders.cache import DocumentCache
from core.loaders.document_json import document_from_json, document_to_json
from core.schema import Document, Element, Page

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(
    p for p in (ROOT / "sample_docs").rglob("*") if p.is_file() and p.suffix.lower() in core.loaders.folder_extensions()
)


@pytest.fixture
def cache(tmp_path):
    return DocumentCache(tmp_path / "documents")


@pytest.fixture
def no_loading(monkeypatch):
    """After this, a load that reaches a loader fails the test: only the cache may answer."""

    def refuse(*args, **kwargs):
        raise AssertionError("the loader ran: the cache should have answered")

    return lambda: monkeypatch.setattr(core.loaders, "load_bytes", refuse)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_loads_through_the_cache_equal_to_a_fresh_load(path, cache, no_loading):
    fresh = core.loaders.load(path)
    first = document_cache.load(path, cache=cache)  # a miss: loaded and kept
    no_loading()
    again = document_cache.load(path, cache=cache)  # a hit: read back from JSON
    assert first == fresh and again == fresh
    assert again[0] is not first[0]  # a caller may change what it got without changing the entry
    assert cache.damaged == 0


def test_a_folder_loads_like_core_loaders_load_and_then_without_any_loader(tmp_path, no_loading):
    cache = DocumentCache(tmp_path / "documents")
    fresh = core.loaders.load(ROOT / "sample_docs")
    assert document_cache.load(ROOT / "sample_docs", cache=cache) == fresh
    no_loading()
    assert document_cache.load(ROOT / "sample_docs", cache=cache) == fresh


def test_bytes_name_options_limits_and_loader_code_each_make_their_own_entry(cache, no_loading, monkeypatch):
    text = b"# Title\n\nSome words.\n"
    base = document_cache.load_bytes(text, "a.md", cache=cache)
    assert len(list(cache.folder.glob("*.json"))) == 1
    document_cache.load_bytes(text + b"More.\n", "a.md", cache=cache)
    document_cache.load_bytes(text, "b.md", cache=cache)
    document_cache.load_bytes(text, "a.md", loader="text", cache=cache)
    document_cache.load_bytes(text, "a.md", limits=Limits(max_text_chars=10_000), cache=cache)
    assert len(list(cache.folder.glob("*.json"))) == 5
    monkeypatch.setattr(document_cache, "loader_code_version", lambda: "the loaders changed")
    assert document_cache.load_bytes(text, "a.md", cache=cache) == base  # a miss, loaded again
    assert len(list(cache.folder.glob("*.json"))) == 6


def test_file_metadata_and_filename_as_id_apply_on_a_hit_and_stay_out_of_the_entry(cache, no_loading):
    data = b"plain words\n"
    document_cache.load_bytes(data, "notes.txt", cache=cache, file_metadata=lambda name: {"owner": "ana"})
    no_loading()
    [named] = document_cache.load_bytes(data, "notes.txt", cache=cache, filename_as_id=True)
    assert named.id == "notes.txt" and "owner" not in named.metadata
    [tagged] = document_cache.load_bytes(data, "notes.txt", cache=cache, file_metadata=lambda name: {"owner": name})
    assert tagged.metadata["owner"] == "notes.txt" and tagged.id != "notes.txt"


def test_a_load_error_is_raised_every_time_and_nothing_is_kept(cache):
    for _ in range(2):
        with pytest.raises(LoadError, match="broken.pdf"):
            document_cache.load_bytes(b"not a pdf at all", "broken.pdf", cache=cache)
    assert not cache.folder.exists() or not list(cache.folder.glob("*.json"))


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],  # cut short
        lambda raw: b"\xff\xfe not json",
        lambda raw: raw.replace(b'"format": 1', b'"format": 99'),
        lambda raw: raw.replace(b'"value": [{"text": "', b'"value": [{"text": 7, "x": "'),
        lambda raw: json.dumps({"format": 1, "key": "another", "value": []}).encode(),
        lambda raw: raw.replace(b'"elements": [["', b'"elements": [[true, "'),
    ],
    ids=["truncated", "not-json", "other-format", "wrong-type", "other-key", "bad-element"],
)
def test_a_damaged_entry_is_a_miss_deleted_and_loaded_again(cache, damage):
    data = b"# Heading\n\nA paragraph.\n"
    fresh = document_cache.load_bytes(data, "doc.md", cache=cache)
    [entry] = cache.folder.glob("*.json")
    entry.write_bytes(damage(entry.read_bytes()))
    assert document_cache.load_bytes(data, "doc.md", cache=cache) == fresh
    assert cache.damaged == 1
    assert json.loads(entry.read_bytes())["format"] == 1  # written again, whole


def test_a_span_outside_the_text_is_damage_not_a_document():
    good = document_to_json(Document(text="abc", elements=[Element("paragraph", 0, 3)]))
    good["elements"][0][2] = 4
    with pytest.raises(ValueError, match="outside"):
        document_from_json(good)


def test_a_document_json_cannot_give_back_is_loaded_but_not_kept(cache):
    document = Document(text="x", metadata={"when": (2026, 11)})  # a tuple comes back a list
    assert cache.put("k" * 64, [document]) is False
    assert cache.put("k" * 64, [Document(text="x", metadata={"nan": float("nan")})]) is False
    assert not cache.folder.exists() or not list(cache.folder.iterdir())


def test_the_folder_stays_under_its_bound_dropping_the_least_recently_used(tmp_path):
    cache = DocumentCache(tmp_path / "documents")
    loads = {name: (f"{name} " * 60).encode() for name in ("a", "b", "c", "d")}
    for name in ("a", "b"):
        document_cache.load_bytes(loads[name], f"{name}.txt", cache=cache)
    entry = max(p.stat().st_size for p in cache.folder.glob("*.json"))
    cache.max_bytes = 3 * entry + entry // 2  # room for three entries of this size, not four
    oldest = min(cache.folder.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    os.utime(oldest, ns=(1, 1))  # a long time ago
    newer = next(p for p in cache.folder.glob("*.json") if p != oldest)
    os.utime(newer, ns=(2, 2))
    cache.get(oldest.stem)  # read now: it becomes the most recently used
    for name in ("c", "d"):
        document_cache.load_bytes(loads[name], f"{name}.txt", cache=cache)
    sizes = [p.stat().st_size for p in cache.folder.glob("*.json")]
    assert len(sizes) == 3 and sum(sizes) <= cache.max_bytes
    assert oldest.exists() and not newer.exists()
    assert not list(cache.folder.glob(".*.tmp"))  # every write renamed into place


def test_the_environment_variable_turns_it_off(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CHUNKSCOPE_NO_DOCUMENT_CACHE", "1")
    assert document_cache.load(ROOT / "sample_docs" / "release_notes.txt") == core.loaders.load(
        ROOT / "sample_docs" / "release_notes.txt"
    )
    assert not (tmp_path / "documents").exists()
    monkeypatch.setenv("CHUNKSCOPE_NO_DOCUMENT_CACHE", "0")
    document_cache.load(ROOT / "sample_docs" / "release_notes.txt")
    assert len(list((tmp_path / "documents").glob("*.json"))) == 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def documents(draw):
    text = draw(st.text(max_size=40))
    spans = st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(sorted)
    elements = [
        Element(
            draw(st.sampled_from(["heading", "paragraph", "table"])),
            a,
            b,
            draw(st.none() | st.integers(1, 6)),
            draw(st.none() | st.integers(1, 9)),
            draw(st.dictionaries(st.text(max_size=5), json_values, max_size=2)),
        )
        for a, b in draw(st.lists(spans, max_size=4))
    ]
    pages = [Page(i + 1, draw(st.text(max_size=4)), a, b) for i, (a, b) in enumerate(draw(st.lists(spans, max_size=3)))]
    return Document(
        text=text,
        metadata=draw(st.dictionaries(st.text(max_size=8), json_values, max_size=4)),
        excluded_embed_metadata_keys=draw(st.lists(st.text(max_size=5), max_size=2)),
        elements=elements,
        pages=pages,
        markup=draw(st.none() | st.text(max_size=20)),
    )


@given(documents())
def test_json_gives_every_document_back_equal(document):
    assert document_from_json(json.loads(json.dumps(document_to_json(document)))) == document


@given(
    st.binary(max_size=300) | json_values.map(lambda v: json.dumps({"format": 1, "key": "k" * 64, "value": v}).encode())
)
def test_any_bytes_in_an_entry_are_a_miss_never_an_error(tmp_path_factory, raw):
    cache = DocumentCache(tmp_path_factory.mktemp("entries"))
    cache.folder.mkdir(parents=True, exist_ok=True)
    (cache.folder / ("k" * 64 + ".json")).write_bytes(raw)
    assert cache.get("k" * 64) in (None, [])


# -- a cold `chunkscope query` with everything cached ----------------------------------------------

QUERY = "How much overlap should chunks have?"
HEAVY = ["markdown_it", "openpyxl", "pdfplumber", "pypdf", "sentence_transformers", "sklearn", "torch", "transformers"]
# Fills the caches without the model: every node's EMBED view and the query get a random unit vector.
FILL = f"""
import numpy as np
from core.cli import main as cli
from core.cli import query as cli_query
from core.embed.embedder import Embedder
from core.schema import MetadataMode, contents
args = cli.build_parser().parse_args(["query", "sample_docs", "--query", {QUERY!r}])
texts = contents(cli_query._split(args), MetadataMode.EMBED) + [{QUERY!r}]
vectors = np.random.default_rng(3).normal(size=(len(texts), 384)).astype(np.float32)
embedder = Embedder()
embedder._disk.put(embedder._disk_model, [(embedder._key(t), v / np.linalg.norm(v)) for t, v in zip(texts, vectors)])
"""
RUN = f"""
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))), file=sys.stderr))
from core.cli.main import main
sys.exit(main(["query", "sample_docs", "--query", {QUERY!r}]))
"""


def test_a_cold_query_with_everything_cached_imports_no_loader_and_no_model_package(tmp_path):
    env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    env.pop("CHUNKSCOPE_NO_DOCUMENT_CACHE", None)

    def run(script: str, **extra: str) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=ROOT, env={**env, **extra}, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
        return done

    run(FILL)
    entries = sorted(p.name for p in (tmp_path / "documents").glob("*.json"))
    cached = run(RUN)
    assert json.loads(cached.stderr.strip().splitlines()[-1]) == []
    assert sorted(p.name for p in (tmp_path / "documents").glob("*.json")) == entries  # nothing new was read
    uncached = run(RUN, CHUNKSCOPE_NO_DOCUMENT_CACHE="1")
    assert "pypdf" in json.loads(uncached.stderr.strip().splitlines()[-1])  # the files really were read again
    assert json.loads(cached.stdout) == json.loads(uncached.stdout)
    assert json.loads(cached.stdout)["retrieved"]


def test_only_a_miss_runs_in_the_bounded_child(cache):
    """The app and `chunkscope split` read a file in a child that can be stopped; a cached file costs no fork."""
    data = (ROOT / "sample_docs" / "rag_handbook.pdf").read_bytes()
    runs: list[str] = []

    def in_child(read):
        runs.append("child")
        return read()

    first = document_cache.load_bytes(data, "rag_handbook.pdf", cache=cache, run_load=in_child)
    again = document_cache.load_bytes(data, "rag_handbook.pdf", cache=cache, run_load=in_child)
    assert runs == ["child"] and again == first


def test_a_large_entry_is_read_and_a_miss_is_kept_where_the_load_runs(cache, monkeypatch):
    """The JSON of a large document costs seconds to check, write and decode: the child does it, not the server."""
    data = "".join(f"# Heading {i}\n\nA paragraph.\n\n" for i in range(3_000)).encode()
    where: list[str] = []
    in_child = [False]

    def run_load(read):
        in_child[0] = True
        try:
            return read()
        finally:
            in_child[0] = False

    real_put, real_get = document_cache.DocumentCache.put, document_cache.DocumentCache.get

    def put(self, key, documents):
        where.append(f"put in {'child' if in_child[0] else 'server'}")
        return real_put(self, key, documents)

    def get(self, key):
        where.append(f"get in {'child' if in_child[0] else 'server'}")
        return real_get(self, key)

    monkeypatch.setattr(document_cache.DocumentCache, "put", put)
    monkeypatch.setattr(document_cache.DocumentCache, "get", get)
    first = document_cache.load_bytes(data, "headings.md", cache=cache, run_load=run_load)
    assert where == ["get in server", "get in child", "put in child"]  # no entry yet: the server's look is a stat

    where.clear()
    monkeypatch.setattr(document_cache, "IN_PROCESS_ENTRY_BYTES", 1_000)  # this entry now counts as large
    assert document_cache.load_bytes(data, "headings.md", cache=cache, run_load=run_load) == first
    assert where == ["get in child"]


@given(st.lists(documents(), max_size=3))
def test_packed_documents_cross_a_pickle_equal(documents_):
    from core.loaders.packed import pack, unpack

    assert unpack(pickle.loads(pickle.dumps(pack(documents_)))) == documents_


def test_a_load_in_a_child_sends_its_elements_as_flat_columns(monkeypatch):
    """Unpickled as objects, 150,000 heading elements held the server's lock for 1.2 s in one C call (and its
    health check with it); packed, what crosses the pipe is a few arrays and no Element object."""
    from core.documents.bounded import load_bounded
    from core.loaders import load_bytes
    from core.runtime import bounded

    data = "".join(f"# H{i}\n" for i in range(60_000)).encode()  # past what a server reads in-process
    sent: list[bytes] = []

    def here_recording_the_pipe(work, **kwargs):  # the child's work, run here: what it would write to the pipe
        value = work()
        sent.append(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        return pickle.loads(sent[-1])

    monkeypatch.setattr(bounded, "run_bounded", here_recording_the_pipe)
    (document,) = load_bounded(lambda: load_bytes(data, "headings.md"), "headings.md", len(data))
    assert [document] == load_bytes(data, "headings.md") and len(document.elements) == 60_000
    (pipe,) = sent
    as_objects = pickle.dumps([document], pickle.HIGHEST_PROTOCOL)
    assert b"Element" in as_objects and b"Element" not in pipe
