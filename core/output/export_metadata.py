"""The script parts for what the embedding model reads: the section path and the allow list of keys.

``MetadataSettings.section_metadata`` writes each node's ``section`` after the split,
from the headings ChunkScope's loaders found; ``embed_metadata_keys`` hides every other
key from the embedding model, before the split (metadata-aware splitters size by the
views) and after it (keys the splitter added). A script does the same, in the same
order: the rule itself (:func:`core.extractors.sections.section_paths` and
:func:`~core.extractors.sections.section_at`) is copied into the script from its
source, so there is one form of it. The headings come from ChunkScope's loaders, so a
script that reads the files without ChunkScope writes no section path, and says so.
"""

from __future__ import annotations

import inspect

from core.config_parts import MetadataSettings
from core.extractors import sections
from core.translate.snippet import CodeSnippet, indent_lines, literal

__all__ = ["embed_allow_list", "outline_reading", "section_rule", "section_step_langchain", "section_step_llamaindex"]

# Where a document's outline is kept, by the key a node finds its document with.
_OUTLINE_KEYS = {"LlamaIndex": "document.id", "LangChain": 'document.metadata.get("file_name")'}

_OUTLINED = '''
def outlined(documents: list) -> list:
    """The documents as loaded; the headings ChunkScope's loader found in each are kept for the section paths."""
    from core.extractors.sections import document_headings

    for document in documents:
        headings = document_headings(document)
        OUTLINES[{key}] = ([start for start, _, _ in headings], section_paths(headings))
    return documents'''

_EMBED_HIDDEN = '''
def embed_hidden(item) -> list[str]:
    """The keys the embedding model does not read: those excluded, then every key EMBED_METADATA_KEYS leaves out."""
    excluded = list(item.excluded_embed_metadata_keys)
    return excluded + [key for key in item.metadata if key not in EMBED_METADATA_KEYS and key not in excluded]'''

_CHUNK_STARTS = '''
def chunk_starts(chunks: list, documents: list) -> list[int]:
    """Where each chunk starts in its document's text, found from where that document's previous chunk started
    (-1: not found as it is)."""
    texts = {document.metadata.get("file_name"): document.page_content for document in documents}
    starts, last = [], {}
    for chunk in chunks:
        name = chunk.metadata.get("file_name")
        start = texts[name].find(chunk.page_content, last.get(name, 0)) if name in texts else -1
        last[name] = max(start, last.get(name, 0))
        starts.append(start)
    return starts'''


def section_rule(snippet: CodeSnippet, settings: MetadataSettings) -> str:
    """The section-path rule as script code (empty when the settings write no section): ChunkScope's own functions."""
    if settings.section_metadata == "off":
        return ""
    snippet.use("from bisect import bisect_right", "from collections.abc import Sequence")
    source = "\n\n\n".join(
        inspect.getsource(function).strip() for function in (sections.section_paths, sections.section_at)
    )
    return (
        "# Section paths (ChunkScope's rule, its own code): the headings above where a node starts, joined by ' > '.\n"
        f"SECTION_SEPARATOR = {literal(sections.SECTION_SEPARATOR)}\n"
        "OUTLINES = {}  # per document: where its headings start, and the section each opens\n\n\n"
        f"{source}"
    )


def outline_reading(library: str) -> str:
    """``outlined()``: keeps each ChunkScope document's headings as it is read."""
    return _OUTLINED.strip("\n").replace("{key}", _OUTLINE_KEYS[library])


def embed_allow_list(snippet: CodeSnippet, settings: MetadataSettings) -> str:
    """``EMBED_METADATA_KEYS`` and, for LlamaIndex, ``embed_hidden()`` (empty when there is no allow list)."""
    if settings.embed_metadata_keys is None:
        return ""
    keys = (
        "# The only metadata keys the embedding model reads (ChunkScope's embed_metadata_keys).\n"
        f"EMBED_METADATA_KEYS = {literal(list(settings.embed_metadata_keys))}"
    )
    # LangChain documents hold no excluded keys: its embed_view() leaves the other keys out itself.
    return keys if snippet.library == "LangChain" else keys + "\n\n" + _EMBED_HIDDEN.strip("\n")


def section_step_llamaindex(snippet: CodeSnippet, settings: MetadataSettings, *, allow_list: bool = True) -> None:
    """After the split: each node's section path, then the allow list over every key a node holds (``allow_list``
    False: the caller writes it later, after the LLM extractors, as :func:`core.documents.finish_nodes` orders them)."""
    lines = []
    if settings.section_metadata != "off":
        lines += [
            "    # Where the node starts in its document: a child's start_char_idx counts from its parent's start.",
            "    parent = node.parent_node",
            "    starts[node.node_id] = (starts.get(parent.node_id, 0) if parent else 0) + (node.start_char_idx or 0)",
            "    outline = OUTLINES.get(node.ref_doc_id)  # None: read without ChunkScope's loaders",
            "    section = section_at(*outline, starts[node.node_id]) if outline else ''",
            "    if section:",
            '        node.metadata = {**node.metadata, "section": section}',
        ]
        if settings.section_metadata == "embed":
            lines += [
                '        if "section" not in node.excluded_llm_metadata_keys:  # for the embedding model only',
                '            node.excluded_llm_metadata_keys = [*node.excluded_llm_metadata_keys, "section"]',
            ]
    if settings.embed_metadata_keys is not None and allow_list:
        lines.append("    node.excluded_embed_metadata_keys = embed_hidden(node)")
    if lines:
        first = "starts = {}\n" if settings.section_metadata != "off" else ""
        snippet.add(_step_comment(settings) + first + "for node in nodes:\n" + "\n".join(lines))


def section_step_langchain(snippet: CodeSnippet, settings: MetadataSettings, *, levels: bool = False) -> None:
    """After the split: each chunk's section path (its start found in its document's text); in a hierarchy
    (``levels``) every level's chunks, each level found in order as the smallest is."""
    if settings.section_metadata == "off":
        return
    step = (
        "for chunk, start in zip(chunks, chunk_starts(chunks, documents)):\n"
        '    outline = OUTLINES.get(chunk.metadata.get("file_name"))  # None: read without ChunkScope\'s loaders\n'
        "    section = section_at(*outline, start) if outline and start >= 0 else ''\n"
        "    if section:\n"
        '        chunk.metadata["section"] = section'
    )
    if levels:
        step = (
            "by_level = {}\n"
            "for chunk in all_chunks:\n"
            '    by_level.setdefault(chunk.metadata["level"], []).append(chunk)\n'
            "for level_chunks in by_level.values():\n"
            + indent_lines(
                step.replace("zip(chunks, chunk_starts(chunks,", "zip(level_chunks, chunk_starts(level_chunks,")
            )
        )
    snippet.add(_CHUNK_STARTS.strip("\n") + "\n\n\n" + _step_comment(settings) + step)


def _step_comment(settings: MetadataSettings) -> str:
    said = []
    if settings.section_metadata != "off":
        reader = (
            "the embedding model only" if settings.section_metadata == "embed" else "the LLM and the embedding model"
        )
        said.append(f"each node's section path, read by {reader}")
    if settings.embed_metadata_keys is not None:
        said.append("the embedding model reads only EMBED_METADATA_KEYS, the split's own keys included")
    return f"# After the split, as ChunkScope does: {'; '.join(said)}.\n"
