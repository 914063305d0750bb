"""The CLI's JSON is strict JSON: never NaN or Infinity, which Python's json writes and no other parser reads.

A score from a damaged cached vector once came out as ``"score": NaN``. The cache now
refuses such vectors (tests/test_embeddings.py); whatever else yields a number that is
not finite is written as null by ``core.cli.output.json_text``.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.cli.output import finite, json_text

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "sample_docs" / "chunking_guide.md"


def strict(text: str) -> object:
    """Parse as RFC 8259 JSON: NaN, Infinity and -Infinity are refused."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_a_number_that_is_not_finite_is_null_at_any_depth():
    data = {
        "score": float("nan"),
        "rows": [{"mrr": float("inf")}, {"mrr": 0.5}],
        "pair": (np.float32("nan"), -np.inf, np.float64(0.25), np.int64(3)),
        "vector": np.array([1.0, np.nan]),
        "flag": True,
        "name": "NaN",
    }
    assert strict(json_text(data)) == {
        "score": None,
        "rows": [{"mrr": None}, {"mrr": 0.5}],
        "pair": [None, None, 0.25, 3],
        "vector": [1.0, None],
        "flag": True,
        "name": "NaN",
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_json_text_always_parses_strictly_and_keeps_every_finite_value(value):
    parsed = strict(json_text(value))
    assert parsed == finite(value)

    def same(original: object, back: object) -> bool:
        if isinstance(original, float) and not math.isfinite(original):
            return back is None
        if isinstance(original, list):
            return all(same(a, b) for a, b in zip(original, back, strict=True))
        if isinstance(original, dict):
            return all(same(original[key], back[key]) for key in original)
        return original == back

    assert same(value, parsed)


_QUERY = "import sys; from core.cli.main import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.model
@pytest.mark.xdist_group("model")
def test_query_json_after_the_cache_was_damaged_is_the_same_strict_json(tmp_path):
    """Every cached vector replaced by NaNs or cut short: the answer is the undamaged run's, byte for byte."""
    env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    # The sentence splitter: five chunks come back (the default hierarchy returns fewer parents than its top_k).
    argv = [sys.executable, "-c", _QUERY, "query", str(GUIDE), "--query", "How much overlap should chunks have?"]
    argv += ["--splitter", "sentence"]

    def run() -> str:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = run()
    cache = tmp_path / "embeddings.sqlite3"
    with sqlite3.connect(cache) as connection:
        digests = [row[0] for row in connection.execute("SELECT digest FROM vectors ORDER BY digest")]
        nan = np.full(384, np.nan, dtype=np.float32).tobytes()
        short = np.eye(383, dtype=np.float32)[0].tobytes()  # one value short: every score was 0.0
        for index, digest in enumerate(digests):
            connection.execute("UPDATE vectors SET vector = ? WHERE digest = ?", (nan if index % 2 else short, digest))
    second = run()
    assert second == first
    answer = strict(second)
    assert len(answer["retrieved"]) == 5
    assert all(0 < item["score"] <= 1 for item in answer["retrieved"])
    with sqlite3.connect(cache) as connection:
        lengths = {len(row[0]) for row in connection.execute("SELECT vector FROM vectors")}
    assert lengths == {384 * 4}  # every damaged vector was replaced by a good one
