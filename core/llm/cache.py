"""The LLM reply cache on disk: a request asked before is answered from here, and nothing is sent.

A reply is kept under the hash of everything that decides it: the endpoint, the
model, the messages and the sampling parameters (:func:`request_key`). The API key
is not part of the key (a new key gives the same replies) and is never written. One
small JSON file per reply under ``<cache_root>/llm``, written atomically (a temporary
file renamed into place), so concurrent runs (the app's bounded children, batch
workers) never read half a reply. The folder is bounded in bytes: past
:data:`MAX_CACHE_BYTES` the least recently written replies go first.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

MAX_CACHE_BYTES = 100_000_000


def request_key(base_url: str, model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> str:
    """The cache key of one chat request: sha256 over its endpoint, model, messages and parameters."""
    payload = json.dumps(
        {"base_url": base_url.rstrip("/"), "model": model, "messages": list(messages), "params": dict(params)},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ReplyCache:
    """Replies by :func:`request_key`, in one folder, bounded by ``max_bytes``."""

    def __init__(self, folder: Path | None = None, max_bytes: int = MAX_CACHE_BYTES) -> None:
        if folder is None:
            from core.runtime.cache_folder import cache_root

            folder = cache_root() / "llm"
        self.folder = Path(folder)
        self.max_bytes = max_bytes

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        """The reply kept for ``key``; None when there is none (or the file is not one of ours)."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        reply = data.get("reply") if isinstance(data, dict) else None
        return reply if isinstance(reply, str) else None

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def put(self, key: str, reply: str) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                json.dump({"reply": reply}, out, ensure_ascii=False)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self._trim()

    def _trim(self) -> None:
        """Delete the oldest replies until the folder holds at most ``max_bytes``."""
        entries = []
        total = 0
        for path in self.folder.glob("*/*.json"):
            try:
                status = path.stat()
            except OSError:
                continue
            entries.append((status.st_mtime_ns, status.st_size, path))
            total += status.st_size
        if total <= self.max_bytes:
            return
        for _, size, path in sorted(entries):
            path.unlink(missing_ok=True)
            total -= size
            if total <= self.max_bytes:
                break
