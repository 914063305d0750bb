"""The reader engines in an exported script: the framework's own call for each format the app read with it.

A script whose configuration picks a ``reader`` for a loader reads those files
with that very call (``PyPDFLoader(str(file)).load()``, ``SimpleDirectoryReader(...)``,
``MarkItDown(...).convert_local(...)``), with or without ChunkScope installed, and
joins the framework's documents with :func:`~core.loaders.readers.base.joined_pieces`,
whose source is written into the script as it is: the join cannot drift from the app's.
"""

from __future__ import annotations

import inspect
from typing import Any

from core.loaders.readers.base import joined_pieces
from core.translate.snippet import CodeSnippet, literal

# The package each reader's script needs, beside the framework the splitter needs.
_PACKAGES = {
    "llamaindex": "llama-index-core llama-index-readers-file",
    "langchain": "langchain-community",
    "markitdown": "markitdown",
}


def framework_reads(config: Any) -> dict[str, tuple[Any, str]]:
    """Suffix -> (engine, the loader's name) for every format the configuration reads with a framework's reader."""
    from core.loaders import LOADERS
    from core.loaders.readers import NATIVE, reader_engine

    found: dict[str, tuple[Any, str]] = {}
    for loader in config.loaders:
        if getattr(loader, "reader", NATIVE) == NATIVE:
            continue
        engine = reader_engine(loader.reader)
        for suffix in LOADERS.get_class(loader.name).extensions:
            if not engine.unavailable_reason(suffix):
                found[suffix] = (engine, loader.name)
    return found


def reader_code(snippet: CodeSnippet, config: Any) -> str:
    """``joined_pieces`` and ``read_with_reader(file)``, which makes the framework's Document as the app made it."""
    from core.loaders.text import LOAD_DETAIL_KEYS

    reads = framework_reads(config)
    branches = []
    for suffix, (engine, loader_name) in reads.items():
        snippet.requires(_PACKAGES[engine.name])
        call = engine.code(suffix, snippet)
        branches.append(
            f"    {'if' if not branches else 'elif'} suffix == {literal(suffix)}:  # {engine.title(suffix)}\n"
            f"        pieces = {call}\n"
            f"        file_type, parser = {literal(loader_name)}, {literal(engine.parser_label(suffix))}"
        )
    if snippet.library == "LlamaIndex":
        make = (
            f"    hidden = [key for key in {literal(list(LOAD_DETAIL_KEYS))} if key in metadata]\n"
            "    return Document(\n        text=text,\n        metadata=metadata,\n"
            "        excluded_llm_metadata_keys=list(dict.fromkeys(excluded_llm + hidden)),\n"
            "        excluded_embed_metadata_keys=list(dict.fromkeys(excluded_embed + hidden)),\n    )"
        )
        unpack = "text, metadata, _, excluded_llm, excluded_embed"
    else:  # LangChain's Document has no excluded keys: llm_view() and embed_view() leave the load details out
        make = "    return Document(page_content=text, metadata=metadata)"
        unpack = "text, metadata, *_"
    read = (
        "def read_with_reader(file: Path) -> Document:\n"
        '    """A file the app read with a framework\'s reader: that reader\'s call, its documents joined as the app '
        'joined them."""\n'
        "    suffix = file.suffix.lower()\n"
        + "\n".join(branches)
        + f"\n    {unpack} = joined_pieces(pieces, file.name)\n"
        '    metadata.setdefault("file_type", file_type)\n'
        '    metadata["parser"] = parser  # which reader ran, kept out of both views as the app keeps it\n' + make
    )
    return f"{inspect.getsource(joined_pieces).strip()}\n\n\n{read}"


def framework_suffixes(config: Any) -> list[str]:
    return sorted(framework_reads(config))
