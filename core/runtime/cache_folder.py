"""Where ChunkScope keeps what it computes: one cache folder, which every disk cache lives under.

The embedding vectors (``embeddings.sqlite3``, :mod:`core.embed.cache`), the loaded documents
(``documents/``, :mod:`core.loaders.cache`) and the LLM's replies (``llm/``, :mod:`core.llm.cache`) are
kept side by side in it; it sits below all three, so none of them reaches into another for its place.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """ChunkScope's cache folder: ``$CHUNKSCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/chunkscope`` (``~/.cache``)."""
    configured = os.environ.get("CHUNKSCOPE_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "chunkscope"
