"""The server's caches are bounded in bytes: many distinct uploads from closed sessions leave its memory flat.

Counted in entries (64 loads, 32 splits), ten closed sessions each splitting a different 5 MB text took the
server from 1 to 2.1 GB. Now every load, split and measurement is charged what it holds
(:func:`core.runtime.sizes.approx_bytes`) against one ceiling, :data:`ui.cache.SERVER_CACHE_MB`.
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from core.config import PipelineConfig
from core.documents import run_split
from core.loaders import load_bytes
from core.runtime.memo import Memo
from core.runtime.sizes import approx_bytes
from core.splitters import get_splitter
from ui import cache

MB = 1_000_000


def _text(seed: int, size: int) -> bytes:
    sentence = f"Upload {seed} says a plain sentence about chunking number {{}} and its overlap. "
    out, i = [], 0
    while sum(map(len, out)) < size:
        out.append(sentence.format(i) + ("\n\n" if i % 7 == 6 else ""))
        i += 1
    return "".join(out).encode()


@pytest.mark.parametrize("splitter", ["sentence", "markdown", "character"])
def test_the_estimate_is_within_a_factor_of_two_of_what_a_split_really_holds(splitter: str) -> None:
    (document,) = load_bytes(_text(0, 1 * MB), "one.md")
    config = PipelineConfig(splitter=get_splitter(splitter))
    run_split([document], config)  # the per-text tables are made: only the nodes are measured below
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        nodes = tuple(run_split([document], config))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held / 2 <= approx_bytes(nodes) <= held * 2, (held, approx_bytes(nodes))


def test_distinct_uploads_stay_under_the_ceiling_and_their_memory_is_given_back(monkeypatch) -> None:
    ceiling = 16 * MB
    monkeypatch.setattr(cache, "_STORE", Memo(ceiling))
    monkeypatch.setenv("CHUNKSCOPE_NO_DOCUMENT_CACHE", "1")
    config = PipelineConfig(splitter=get_splitter("sentence"))
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        grown = []
        for seed in range(10):  # about 0.6 MB of text each, ~5 MB with its document, elements and nodes
            data = _text(seed, 600_000)
            documents = cache.load_file(f"digest-{seed}", f"upload-{seed}.md", "{}", data)
            cache.run_split_cached(documents, config)
            del documents, data
            gc.collect()
            assert cache.cache_bytes() <= ceiling
            grown.append(tracemalloc.get_traced_memory()[0] - start)
    finally:
        tracemalloc.stop()
    # Flat once full: the last uploads add nothing over the first ones that filled it (the core's per-text
    # tables are bounded by characters, 8 million each, on top of the ceiling).
    assert max(grown[-4:]) < ceiling + 60 * MB, [round(g / MB) for g in grown]
    assert max(grown[-4:]) - min(grown[-4:]) < 12 * MB, [round(g / MB) for g in grown]


def test_a_value_is_computed_once_and_every_session_gets_the_same_object(monkeypatch) -> None:
    monkeypatch.setattr(cache, "_STORE", Memo(10 * MB))
    calls = []

    def build() -> list[int]:
        calls.append(1)
        return [1, 2, 3]

    first = cache.cached("kind", "key", build)
    assert cache.cached("kind", "key", build) is first and calls == [1]
    assert cache.cached("kind", "zero", lambda: 0) == 0 and cache.cached("kind", "zero", build) == 0  # 0 is a hit


def test_a_value_larger_than_the_ceiling_is_computed_each_time_and_never_kept(monkeypatch) -> None:
    monkeypatch.setattr(cache, "_STORE", Memo(1 * MB))
    calls = []

    def big() -> bytes:
        calls.append(1)
        return b"x" * (2 * MB)

    cache.cached("kind", "big", big)
    cache.cached("kind", "big", big)
    assert calls == [1, 1] and cache.cache_bytes() == 0
