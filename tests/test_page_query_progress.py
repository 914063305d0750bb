"""The Query page while it embeds: what is known so far, a progress bar, and the time left.

The page runs with a fake embedder that reports two batches and then ends the
run, so the test sees the page as a person does in the middle of embedding.
"""

from __future__ import annotations

import apptest_support
import numpy as np
import pytest
import streamlit as st

import ui.cache
from core.config import PipelineConfig
from core.documents import run_split
from core.loaders import load
from core.splitters import get_splitter
from core.splitters.hierarchical import leaf_nodes
from ui.documents import sample_files
from ui.query_run import TimeLeft, progress_text

# The configuration the page opens on (apptest_support.SENTENCE): the sentence splitter at its defaults.
SENTENCE_CONFIG = PipelineConfig(splitter=get_splitter("sentence"))


class HaltingEmbedder:
    """Reports two batches, a quarter of the texts each, then ends the script run midway, as a person sees it."""

    model_name = "fake-model"
    dimension = 3

    def embed(self, texts, progress=None):
        progress(len(texts) // 4, len(texts))
        progress(len(texts) // 2, len(texts))
        st.stop()
        return np.zeros((len(texts), 3), dtype=np.float32)


def test_while_embedding_the_page_shows_the_corpus_and_a_progress_bar(monkeypatch):
    monkeypatch.setattr(ui.cache, "embedder", HaltingEmbedder)
    documents = [doc for path in sample_files() for doc in load(path)]
    node_count = len(leaf_nodes(run_split(documents, SENTENCE_CONFIG)))
    half = node_count // 2

    at = apptest_support.open_page("pages/4_Query.py", apptest_support.SENTENCE, timeout=600)

    captions = [caption.value for caption in at.caption]
    assert f"Searching **{node_count:,} nodes** from {len(documents)} documents, split by **Sentence** · " \
        "retrieval **hybrid** · embedding the nodes first" in captions
    (bar,) = at.get("progress")
    assert bar.proto.value == int(half / node_count * 100)
    assert bar.proto.text.startswith(f"Embedding the nodes with fake-model… {half:,} of {node_count:,}")


def test_the_time_left_comes_from_the_pace_of_encoded_batches():
    now = iter([10.0, 12.0, 16.0])
    time_left = TimeLeft(clock=lambda: next(now))
    # The first report (texts found in the cache and a first batch) starts the clock.
    assert time_left(200, 1000) is None
    assert time_left(300, 1000) == pytest.approx(14.0)  # 100 texts in 2 s, 700 to go
    assert time_left(500, 1000) == pytest.approx(10.0)  # 300 texts in 6 s, 500 to go


@pytest.mark.parametrize(
    ("done", "seconds_left", "tail"),
    [
        (0, None, " · estimating the time left"),
        (1000, None, ""),
        (300, 0.4, " · less than a second left"),
        (300, 14.2, " · about 14 s left"),
        (300, 125.0, " · about 2 min 5 s left"),
    ],
)
def test_the_progress_line_says_how_far_and_how_long(done, seconds_left, tail):
    text = progress_text("all-MiniLM-L6-v2", done, 1000, seconds_left)
    assert text == f"Embedding the nodes with all-MiniLM-L6-v2… {done:,} of 1,000{tail}"
