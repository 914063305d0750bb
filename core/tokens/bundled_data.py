"""The data tiktoken and NLTK would download, taken from what llama-index-core ships: nothing is fetched.

llama-index-core bundles tiktoken's BPE files (``llama_index/core/_static/tiktoken_cache``,
each named by the SHA-1 of its download URL: cl100k_base and o200k_base) and NLTK
data (``_static/nltk_cache``: punkt_tab, stopwords). LlamaIndex itself sets
``TIKTOKEN_CACHE_DIR`` to that folder only when it is unset, while it loads its
global tokenizer. Here an encoding is loaded once with ``TIKTOKEN_CACHE_DIR``
pointing at the bundled folder for the duration of the load, whatever it was
(a user's own cache without the file would make tiktoken download it), and put
back after. tiktoken then keeps the encoding in memory, so ChunkScope's
``cl100k``/``o200k`` tokenizers, LangChain, chonkie, semchunk and LlamaIndex's
global tokenizer find it there by name. The bundled NLTK folder joins NLTK's
search path. An encoding that is not bundled is refused with a clear error
instead of a download attempt.
"""

from __future__ import annotations

import hashlib
import os
import threading
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from core.errors import ModelUnavailableError

# The tiktoken encodings the engines offer (both bundled by llama-index-core).
TIKTOKEN_ENCODINGS = ("cl100k_base", "o200k_base")

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
# TIKTOKEN_CACHE_DIR is process-wide: one thread at a time sets it, loads, and puts it back.
_ENV_LOCK = threading.Lock()


@cache
def bundled_folder(kind: str) -> Path | None:
    """``llama_index/core/_static/<kind>`` (``tiktoken_cache`` or ``nltk_cache``) if installed; found without importing."""
    spec = find_spec("llama_index.core")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "_static" / kind
    return folder if folder.is_dir() else None


def bundled_tiktoken_file(name: str) -> Path | None:
    """Where tiktoken's cache holds encoding ``name`` (files are named by the SHA-1 of their URL), if bundled."""
    folder = bundled_folder("tiktoken_cache")
    if folder is None:
        return None
    path = folder / hashlib.sha1(_BLOB.format(name=name).encode()).hexdigest()
    return path if path.is_file() else None


def bundled_encodings() -> list[str]:
    """The offered tiktoken encodings whose files are bundled."""
    return [name for name in TIKTOKEN_ENCODINGS if bundled_tiktoken_file(name) is not None]


def tiktoken_encoding(name: str) -> Any:
    """The tiktoken ``Encoding`` ``name``, loaded from the bundled file (tiktoken checks its hash)."""
    import tiktoken
    from tiktoken.registry import ENCODINGS

    if name in ENCODINGS:
        return ENCODINGS[name]
    folder = bundled_folder("tiktoken_cache")
    if folder is None or bundled_tiktoken_file(name) is None:
        raise ModelUnavailableError(
            f"tiktoken's {name} encoding is not installed (llama-index-core bundles cl100k_base and o200k_base); "
            "ChunkScope never downloads it"
        )
    with _ENV_LOCK:
        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        try:
            return tiktoken.get_encoding(name)
        finally:
            if saved is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = saved


def use_bundled_nltk_data() -> None:
    """Put the bundled NLTK folder on NLTK's search path (LlamaIndex's sentence splitting reads it)."""
    folder = bundled_folder("nltk_cache")
    if folder is None:
        return
    import nltk.data

    if str(folder) not in nltk.data.path:
        nltk.data.path.append(str(folder))
