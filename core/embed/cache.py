"""The embedding cache on disk.

Vectors are kept by (model key, sha1 of the text) in one SQLite file under ChunkScope's cache folder
(:func:`core.runtime.cache_folder.cache_root`), so a restarted app or a second CLI run embeds only text it
has never seen (:mod:`core.embed.embedder` reads and writes it).

The embedder checks a stored vector as it is read (:func:`usable_vector`: the
model's length, every value finite, unit length): the file is outside our control, and a
wrong-length vector once made every score 0.0 without a word, a NaN one wrote
``NaN`` into JSON output. A damaged entry is deleted, counted and logged, and the
caller encodes that text again and stores the new vector in its place.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

# About 160 MB of 384-dimension vectors on disk; the oldest written go first beyond it.
DISK_CACHE_ENTRIES = 100_000
# Every vector stored is L2-normalized; float32 rounding leaves its norm within ~1e-6 of 1.
UNIT_TOLERANCE = 1e-3

_LOG = logging.getLogger(__name__)


def usable_vector(vector: np.ndarray, dimension: int | None) -> bool:
    """A stored vector can be used as it is: ``dimension`` values (when known), all finite, unit length."""
    if vector.ndim != 1 or (dimension is not None and len(vector) != dimension) or not len(vector):
        return False
    if not np.isfinite(vector).all():
        return False
    return abs(float(np.linalg.norm(vector.astype(np.float64))) - 1.0) <= UNIT_TOLERANCE


def hash_model_files(digest: Any, model_path: str) -> None:
    """Feed every file's relative path, size and modification time under ``model_path`` to ``digest``."""
    for root, _, files in sorted(os.walk(model_path)):
        for name in sorted(files):
            stat = os.stat(os.path.join(root, name))
            digest.update(
                f"{os.path.relpath(os.path.join(root, name), model_path)}:{stat.st_size}:{stat.st_mtime_ns}".encode()
            )


def _vector(blob: object) -> np.ndarray | None:
    """A stored blob as float32 values; None when it is not whole float32 values (or not bytes at all)."""
    if not isinstance(blob, bytes | memoryview) or len(blob) % 4:
        return None
    return np.frombuffer(blob, dtype=np.float32)


# How often a call that found the database locked is tried again (pauses of 20, 40, ... 2,560 ms).
_LOCK_RETRIES = 8


class DiskCache:
    """Vectors in one SQLite file, keyed by (model key, text digest), kept across processes.

    SQLite rather than a file per text or per batch: a lookup of a whole corpus
    is one indexed query instead of thousands of small files, and concurrent
    writers (app sessions, CLI runs, test workers) are serialized by its locking
    and commit atomically, so nobody reads a half-written vector. Every call
    opens its own connection, so threads never share one and a forked worker
    never inherits one. Bounded by ``max_entries`` rows: beyond it, the oldest
    written are deleted. A folder that cannot hold the file (read-only, a file
    in its place) or a broken file only turns the cache off: embedding goes on.
    """

    def __init__(self, path: Path, max_entries: int = DISK_CACHE_ENTRIES) -> None:
        self.path = Path(path)
        self.max_entries = max_entries
        self.problem = ""  # why the cache is off, once it is
        self.rejected = 0  # damaged vectors found (and deleted) by get

    def get(
        self, model: str, digests: Sequence[str], usable: Callable[[np.ndarray], bool] | None = None
    ) -> dict[str, np.ndarray]:
        """The stored vectors among ``digests``, by digest.

        With ``usable`` (e.g. :func:`usable_vector` for the model's dimension), a vector it
        refuses, or a blob that is not float32 values, is damaged: deleted and left out.
        """
        found: dict[str, np.ndarray] = {}
        if self.problem or not self.path.exists():
            return found
        damaged: list[str] = []
        # SQLite's default limit on a statement's parameters is 999 in older releases.
        for start in range(0, len(digests), 900):
            part = list(digests[start : start + 900])
            marks = ",".join("?" * len(part))
            rows = self._run(
                f"SELECT digest, vector FROM vectors WHERE model = ? AND digest IN ({marks})", [model, *part]
            )
            for digest, blob in rows:
                vector = _vector(blob)
                if vector is not None and (usable is None or usable(vector)):
                    found[digest] = vector
                else:
                    damaged.append(digest)
        if damaged:
            self._forget(model, damaged)
        return found

    def _forget(self, model: str, digests: list[str]) -> None:
        self.rejected += len(digests)
        _LOG.warning(
            "%s: %d cached vector(s) were damaged (wrong length, not finite or not unit length): encoding again",
            self.path,
            len(digests),
        )
        for start in range(0, len(digests), 900):
            part = digests[start : start + 900]
            self._run(
                f"DELETE FROM vectors WHERE model = ? AND digest IN ({','.join('?' * len(part))})", [model, *part]
            )

    def put(self, model: str, rows: Iterable[tuple[str, np.ndarray]]) -> None:
        """Store vectors by digest (one transaction), then forget the oldest beyond the bound."""
        values = [(model, digest, np.asarray(vector, dtype=np.float32).tobytes()) for digest, vector in rows]
        if values and not self.problem:
            self._run("INSERT OR IGNORE INTO vectors (model, digest, vector) VALUES (?, ?, ?)", values, many=True)

    def _run(self, sql: str, params: Sequence, many: bool = False) -> list[tuple]:
        # SQLite answers "database is locked" without waiting in a few cases the busy timeout does not cover
        # (switching a new file to WAL while another process does, a read transaction that must become a
        # write); those are retried with a growing pause before the cache is given up for this process.
        for attempt in range(_LOCK_RETRIES):
            try:
                return self._run_once(sql, params, many)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or attempt == _LOCK_RETRIES - 1:
                    self.problem = f"{type(exc).__name__}: {exc}"
                    return []
                time.sleep(0.02 * 2**attempt)
            except (sqlite3.Error, OSError) as exc:
                self.problem = f"{type(exc).__name__}: {exc}"
                return []
        return []

    def _run_once(self, sql: str, params: Sequence, many: bool) -> list[tuple]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode, so a write takes the write lock at BEGIN IMMEDIATE (waiting under the timeout)
        # instead of upgrading a read transaction, which SQLite refuses at once when another writer is busy.
        with closing(sqlite3.connect(self.path, timeout=60, isolation_level=None)) as connection:
            connection.execute("PRAGMA journal_mode = WAL")  # readers never wait for a writer
            connection.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT, digest TEXT, vector BLOB, PRIMARY KEY (model, digest))"
            )
            if not many:
                return connection.execute(sql, params).fetchall()
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(sql, params)
                # Rows are numbered in the order written, so the oldest are the lowest.
                connection.execute(
                    "DELETE FROM vectors WHERE rowid <= (SELECT max(rowid) FROM vectors) - ?", (self.max_entries,)
                )
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
            return []
