"""The splitter's part of an exported script: the framework call a compat mode mirrors, or the splitter's own translation.

:mod:`core.output.export` writes the whole script around it; :mod:`core.output.export_script` and
:mod:`core.output.export_check` read what it imports and run it.
"""

from __future__ import annotations

from typing import Any

from core.translate.snippet import CodeSnippet


def splitter_code(splitter: Any, snippet: CodeSnippet) -> str:
    """The splitter's part of ``snippet``: LlamaIndex's node parser expression, or LangChain's lines making ``chunks``.

    A native splitter in a compatible mode (``compat="llamaindex"``, ``"langchain"``)
    is written as the framework call it reproduces, the very call its engine makes
    (:func:`core.engines.mirrors.mirrored_engine`); a LangChain call also runs in
    LlamaIndex, inside its LangchainNodeParser. Otherwise the splitter translates itself.
    """
    from core.engines.mirrors import mirrored_engine

    engine = mirrored_engine(splitter)
    llamaindex = snippet.library == "LlamaIndex"
    if _mirrors(engine, snippet.library):
        snippet.note(
            f"{splitter.name}: ChunkScope ran compat={splitter.compat}, which cuts as {engine.title()} does; "
            "this is that call."
        )
        added = compat_node_keys(splitter)
        if added:
            meanings = "; ".join(f"{key}: {COMPAT_NODE_KEYS[key]}" for key in added)
            snippet.note(
                f"{splitter.name}: the chunks are the app's; ChunkScope's compat={splitter.compat} nodes also carry "
                f"{' and '.join(added)} in their metadata ({meanings}), which {engine.framework}'s do not, so the "
                "LLM and EMBED views of those nodes show them in the app and not here.",
                at_call=True,
            )
        return engine.llamaindex(snippet) if llamaindex else engine.langchain(snippet)
    if _runs_its_own_call(splitter, snippet.library):
        # An engine exported to its own library (or LangChain's inside LlamaIndex's LangchainNodeParser): the
        # script makes the very call ChunkScope made, so its chunks are the app's.
        snippet.note(f"{splitter.name}: ChunkScope ran {splitter.title()}; this is that call.")
        return splitter.llamaindex(snippet) if llamaindex else splitter.langchain(snippet)
    notes = len(snippet.notes)
    code = splitter.llamaindex(snippet) if llamaindex else splitter.langchain(snippet)
    if not any(note.startswith(f"{splitter.name}:") for note in snippet.notes[notes:]):
        # A translation of ChunkScope's own splitter, not the call that ran: say so, even where no setting differs.
        ran = (
            f"its own {splitter.name} splitter, not a {snippet.library} call"
            if engine is None
            else f"compat={splitter.compat}, which cuts as {engine.title()} does and {snippet.library} has no "
            "equivalent of"
        )
        snippet.note(
            f"{splitter.name}: ChunkScope ran {ran}; this is the closest {snippet.library} translation, so chunks "
            "may differ (the Export page counts how many).",
            at_call=True,
        )
    return code


def translates(splitter: Any, library: str) -> bool:
    """Whether the ``library`` script's split is a translation of ChunkScope's own splitter, not the call that ran
    (a compat mode's mirror, or an engine's own call): :func:`splitter_code`'s last case."""
    from core.engines.mirrors import mirrored_engine

    return not _mirrors(mirrored_engine(splitter), library) and not _runs_its_own_call(splitter, library)


def _mirrors(engine: Any, library: str) -> bool:
    """Whether a compat mode's mirror ``engine`` makes a call the ``library`` script can make (LangChain's runs in
    LlamaIndex too, inside its LangchainNodeParser)."""
    return engine is not None and (
        engine.framework == library or (library == "LlamaIndex" and engine.framework == "LangChain")
    )


def _runs_its_own_call(splitter: Any, library: str) -> bool:
    """Whether ``splitter`` is an engine whose ``library`` script makes the call the engine made."""
    from core.engines.base import FrameworkSplitter

    if not isinstance(splitter, FrameworkSplitter):
        return False
    if splitter.framework == library:
        return True
    return library == "LlamaIndex" and splitter.framework == "LangChain" and not splitter.splits_to_documents


# Keys ChunkScope's node builder adds that a framework's nodes do not have (compat modes build nodes that way).
COMPAT_NODE_KEYS = {
    "table_header": "the header row of the table a chunk starts inside",
    "level": "its depth in the hierarchy",
}


def compat_node_keys(splitter: Any) -> list[str]:
    """The keys of :data:`COMPAT_NODE_KEYS` a compat mode's nodes can carry: ``level`` in a hierarchy only,
    ``table_header`` only where the splitter reads documents that can hold tables."""
    can = {"level": splitter.has_levels, "table_header": splitter.reads_tables}
    return [key for key in COMPAT_NODE_KEYS if can[key]]
