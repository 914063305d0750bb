"""Framework engines: real LlamaIndex, LangChain, chonkie and semchunk splitters as ChunkScope splitters.

One module per framework (and one beside it where an engine needs more than the
framework's shared plumbing: a hierarchy, a parser that reads HTML markup);
importing a module registers its engines in the splitter registry (names such as ``llamaindex.sentence``, ``langchain.recursive``).
The frameworks themselves are imported only when an engine splits, so importing
``core`` stays fast. Every chunk goes through :mod:`core.spans.recovery`; nothing
is downloaded (see :mod:`core.tokens.bundled_data`).
"""

from core.engines.base import FrameworkSplitter, framework_version
from core.engines.chunk_nodes import FrameworkChunk, framework_nodes

# Importing a module registers its engines (order = the order the app lists them).
from core.engines import (  # noqa: F401, E402  isort: skip
    llamaindex,
    llamaindex_hierarchical,
    llamaindex_html,
    llamaindex_semantic,
    llamaindex_code,
    langchain,
    langchain_html,
    langchain_semantic,
    chonkie,
    chonkie_semantic,
    semchunk,
)

__all__ = ["FrameworkChunk", "FrameworkSplitter", "framework_nodes", "framework_version"]
