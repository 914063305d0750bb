"""Sessions: many people at once share one process, its model and its registries, and never each other's data.

Core: eight threads use the shared tokenizer, the shared embedder, the
registries and the splitters at the same moment and get exactly what one
thread alone gets. Browser: eight concurrent browser contexts against one app
server upload different documents with different settings, and none sees
another's documents or settings.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
import pytest

from core.config import PipelineConfig
from core.documents import run_split
from core.registry import Registry
from core.schema import Document
from core.splitters import get_splitter
from core.tokens.tokenizers import get_tokenizer

THREADS = 8
T = TypeVar("T")


def at_once(work: Callable[[int], T]) -> list[T]:
    """Run ``work(i)`` for every i in eight threads released by one barrier, so they really overlap."""
    barrier = threading.Barrier(THREADS)

    def start(i: int) -> T:
        barrier.wait()
        return work(i)

    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(start, range(THREADS)))


def session_text(i: int) -> str:
    return " ".join(f"Session {i} writes sentence {j} about topic {i * 7 + j}." for j in range(40 + i * 5))


def test_the_shared_model_tokenizer_gives_each_thread_its_own_answer() -> None:
    tokenizer = get_tokenizer("model")
    texts = [session_text(i) for i in range(THREADS)]
    alone = [(tokenizer.spans(text), tokenizer.count_many(text.split(". "))) for text in texts]
    together = at_once(lambda i: (tokenizer.spans(texts[i]), tokenizer.count_many(texts[i].split(". "))))
    assert together == alone


def test_splits_with_different_settings_at_once_equal_the_same_splits_alone() -> None:
    configs = [
        PipelineConfig(splitter=get_splitter(name, chunk_size=40 + 13 * i, chunk_overlap=i, tokenizer="model"))
        for i, name in enumerate(["sentence", "token", "recursive", "character"] * 2)
    ]
    documents = [Document(text=session_text(i), metadata={"file_name": f"s{i}.txt"}) for i in range(THREADS)]

    def split(i: int) -> list[dict[str, Any]]:
        return [node.to_dict() for node in run_split([documents[i]], configs[i])]

    alone = [split(i) for i in range(THREADS)]
    assert at_once(split) == alone
    assert all(node["metadata"]["file_name"] == f"s{i}.txt" for i, nodes in enumerate(alone) for node in nodes)


def test_plugins_are_loaded_once_for_everyone_who_asks_first() -> None:
    # Before the fix, threads that arrived while the first was importing the plugins saw none.
    for _ in range(5):
        registry = Registry("splitter", "chunkscope.splitters")
        seen = at_once(lambda i, registry=registry: tuple(registry.names()))
        assert len(set(seen)) == 1, f"threads saw different registries: {set(seen)}"


@pytest.mark.model
def test_the_shared_embedder_from_eight_threads_equals_one_thread_alone() -> None:
    from core.embed.embedder import Embedder, get_embedder

    shared = get_embedder()
    texts = [[f"Session {i} asks question {j} about chunk overlap {i * j}." for j in range(6)] for i in range(THREADS)]
    before = shared.cache_stats()
    together = at_once(lambda i: shared.embed(texts[i]))
    after = shared.cache_stats()
    # Every text was new to the cache, and each was encoded exactly once.
    assert after["misses"] - before["misses"] == THREADS * 6
    alone = Embedder(shared.model_path, cache_entries=0)
    for i in range(THREADS):
        expected = alone.embed(texts[i])
        assert together[i].shape == expected.shape == (6, shared.dimension)
        np.testing.assert_allclose(together[i], expected, atol=1e-5)
    # The same texts again from eight threads come from the cache, unchanged.
    again = at_once(lambda i: shared.embed(texts[i]))
    assert all(np.array_equal(a, b) for a, b in zip(again, together, strict=True))


# ------------------------------------------------------------------------ browser


def secret(i: int) -> str:
    return " ".join(f"Session {i} keeps secret number {i}-{j}-{uuid.uuid5(uuid.NAMESPACE_OID, str(i))}." for j in range(12))


@pytest.mark.browser
@pytest.mark.xdist_group("browser")
def test_eight_browser_sessions_never_see_each_others_documents_or_settings(browser, app_url: str) -> None:
    from browser_support import WAIT_MS, idle, options, pick, start_upload, wait_for_count

    sessions = []
    try:
        # Eight people open the app at once, each with their own chunk size in the link.
        for i in range(THREADS):
            context = browser.new_context(viewport={"width": 1280, "height": 1400})
            page = context.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{app_url}/?splitter=character&chunk_size={300 + i}&chunk_overlap=0", wait_until="commit")
            sessions.append((context, page))
        for _, page in sessions:
            page.get_by_text("Loaded documents").first.wait_for(state="visible")
        # Each uploads a different document; the server works on all eight together.
        counts = [
            start_upload(page, [{"name": f"session_{i}.txt", "mimeType": "text/plain", "buffer": secret(i).encode()}])
            for i, (_, page) in enumerate(sessions)
        ]
        for (_, page), count in zip(sessions, counts, strict=True):
            wait_for_count(page, count + 1)

        for _, page in sessions:  # all eight go to the Chunks page together
            page.locator('[data-testid="stSidebarNav"]').get_by_text("Chunks", exact=True).click()
        for i, (_, page) in enumerate(sessions):
            page.get_by_text("LLM view").first.wait_for(state="visible")
            idle(page)
            names = options(page, "Document")
            assert f"session_{i}.txt" in names
            assert not [name for name in names if name.startswith("session_") and name != f"session_{i}.txt"], names
            pick(page, "Document", f"session_{i}.txt")
            page.locator('[data-testid="stCode"] code').filter(has_text=f"file_name: session_{i}.txt").first.wait_for()
            idle(page)
            shown = page.locator('[data-testid="stMain"]').inner_text()
            assert f"Session {i} keeps secret number {i}-0-" in shown
            assert not [j for j in range(THREADS) if j != i and f"Session {j} keeps secret" in shown]
            # Their own settings, not the last visitor's.
            assert page.get_by_label("Chunk size", exact=True).input_value() == str(300 + i)
            assert f"chunk_size={300 + i}" in page.url
    finally:
        for context, _ in sessions:
            context.close()
