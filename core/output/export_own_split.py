"""A script's own-split branch: with ChunkScope installed, ChunkScope's own splitter cuts, so the nodes are the app's.

Most of ChunkScope's native splitters (the default hierarchy among them) have no
framework call that cuts the same chunks: a script writes the closest translation,
and the Export page counts what it changes. A user who tuned in the app has
ChunkScope, though, and its readers already run in the script when it is importable
(:mod:`core.output.export_script`). So does its splitter: the script keeps each
document ChunkScope's loaders read, prepares it with the app's metadata settings and
cuts it with the very splitter the app ran (``CHUNKSCOPE_SPLITTER`` and its parameters, with the app's
metadata settings), then hands the nodes to the framework: LlamaIndex
``TextNode``s with their ids, spans, metadata, views and links, or LangChain
``Document``s (in a hierarchy each records its level and its parent's place, as the
translation's loop does). Everything after the split (sections, LLM metadata, views,
retrieval) runs on them as on the translation's. Without ChunkScope, or when a file
was read by a framework's reader, the translation runs.
"""

from __future__ import annotations

from typing import Any

from core.translate.snippet import CodeSnippet, indent_lines, literal, wrapped_literal

# The keys a LangChain hierarchy's chunks carry for retrieve() to walk up the levels; not metadata any reader sees.
HIERARCHY_KEYS = ("parent",)

_SPLIT = '''\
def chunkscope_split(documents: list[Document]):
    """ChunkScope's own split of the documents its loaders read, as the app made it; None without ChunkScope."""
    try:
        from core import PipelineConfig
        from core.documents import prepare_documents
    except ImportError:  # ChunkScope is not installed: the translation below cuts
        return None
    read = [CHUNKSCOPE_READ.get({document_id}) for document in documents]
    if None in read:  # a file read by a framework's reader: the translation below cuts it all
        return None
    splitter = {"name": CHUNKSCOPE_SPLITTER, "params": CHUNKSCOPE_PARAMS}
    config = PipelineConfig.from_dict({"splitter": splitter, "metadata": CHUNKSCOPE_METADATA})
    return config.splitter.split(prepare_documents(read, config))'''

_LLAMAINDEX_NODES = '''\
def framework_nodes(nodes) -> list[TextNode]:
    """ChunkScope's nodes as LlamaIndex's: text, id, metadata, excluded keys, templates and links, and the span as
    LlamaIndex's HierarchicalNodeParser counts it (a child's from its parent's start, a top node's in its document)."""
    starts = {node.id: node.start_char for node in nodes}
    made = []
    for node in nodes:
        links = {
            NodeRelationship[kind.name]: (
                [RelatedNodeInfo(node_id=i) for i in linked] if isinstance(linked, list) else RelatedNodeInfo(node_id=linked)
            )
            for kind, linked in node.relationships.items()
        }
        offset = starts.get(node.relationships.get("parent"), 0)
        made.append(
            TextNode(
                id_=node.id,
                text=node.text,
                start_char_idx=node.start_char - offset,
                end_char_idx=node.end_char - offset,
                metadata=dict(node.metadata),
                excluded_llm_metadata_keys=list(node.excluded_llm_metadata_keys),
                excluded_embed_metadata_keys=list(node.excluded_embed_metadata_keys),
                metadata_template=node.metadata_template,
                metadata_separator=node.metadata_separator,
                text_template=node.text_template,
                relationships=links,
            )
        )
    return made'''

_LANGCHAIN_CHUNKS = '''\
def framework_chunks(nodes) -> list[Document]:
    """ChunkScope's nodes as LangChain Documents: text, id and metadata."""
    return [Document(page_content=node.text, metadata=dict(node.metadata), id=node.id) for node in nodes]'''

_LANGCHAIN_LEVELS = '''\
def framework_chunks(nodes) -> list[Document]:
    """ChunkScope's nodes as LangChain Documents (text, id, metadata), each with its parent's place in the level
    above, as the loop below records it (ChunkScope lists a hierarchy level by level)."""
    chunks, place, counted = [], {}, {}
    for node in nodes:
        level = node.metadata["level"]
        place[node.id] = counted[level] = counted.get(level, -1) + 1
        parent = node.relationships.get("parent")
        metadata = {**node.metadata, "parent": None if parent is None else place[parent]}
        chunks.append(Document(page_content=node.text, metadata=metadata, id=node.id))
    return chunks'''


def own_split_applies(splitter: Any, library: str, framework_read: object) -> bool:
    """Whether the ``library`` script gets the own-split branch: ChunkScope's own splitter ran (not an engine's
    framework call, whose stand-in in the other library would need that framework, nor a compat mode's mirror),
    one of ChunkScope's (a plugin may not be installed where the script runs), with plain settings, and no format
    was read by a framework's reader."""
    from core.engines.base import FrameworkSplitter
    from core.output.splitter_code import translates

    return (
        translates(splitter, library)
        and not isinstance(splitter, FrameworkSplitter)
        and type(splitter).__module__.startswith("core.splitters.")
        and not callable(getattr(splitter, "tokenizer", None))
        and not framework_read
    )


def own_split_functions(snippet: CodeSnippet, config: Any) -> None:
    """Add the own-split branch's settings and functions to ``snippet`` (before the translation's call)."""
    splitter, library = config.splitter, snippet.library
    snippet.note(
        f"{splitter.name}: with ChunkScope installed (its core package importable), chunkscope_split() cuts with "
        f"ChunkScope's own {splitter.name} splitter, as the app did: the app's nodes exactly. The {library} "
        "translation below runs only without it."
    )
    data = config.to_dict()
    if library == "LlamaIndex":
        snippet.use("from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode")
        split, convert = _SPLIT.replace("{document_id}", "document.id_"), _LLAMAINDEX_NODES
    else:
        split = _SPLIT.replace("{document_id}", "document.id")
        convert = _LANGCHAIN_LEVELS if splitter.has_levels else _LANGCHAIN_CHUNKS
    snippet.add(
        "# With ChunkScope installed, its own splitter cuts with the app's settings: the splitter, its parameters\n"
        "# and the metadata settings (templates, excluded keys, extra keys) its sizes leave room for.\n"
        f"CHUNKSCOPE_SPLITTER = {literal(splitter.name)}\n"
        f"CHUNKSCOPE_PARAMS = {wrapped_literal(data['splitter']['params'])}\n"
        f"CHUNKSCOPE_METADATA = {wrapped_literal(data['metadata'])}"
    )
    snippet.add(f"{split}\n\n\n{convert}")


# The nodes of a LlamaIndex script with the own-split branch (``node_parser`` is the translation).
OWN_NODES_LLAMAINDEX = (
    "own = chunkscope_split(documents)\n"
    "if own is not None:  # ChunkScope's own nodes, as the app cut them\n"
    "    nodes = framework_nodes(own)\n"
    "else:  # without ChunkScope: the translation\n"
    "    nodes = node_parser.get_nodes_from_documents(documents)"
)


def own_chunks_langchain(config: Any, translation: str, notes: list[str]) -> str:
    """The chunks part of a LangChain script: ChunkScope's own split where installed, else ``translation``'s lines,
    under the ``notes`` (comment lines) about it."""
    body = indent_lines("\n".join([*notes, translation.strip("\n")]))
    levels = config.splitter.has_levels
    own = ["own = chunkscope_split(documents)", "if own is not None:  # ChunkScope's own chunks, as the app cut them"]
    own.append(f"    {'all_chunks' if levels else 'chunks'} = framework_chunks(own)")
    if levels:  # the smallest level, which ChunkScope retrieves over
        leaf = len(config.splitter.level_sizes) - 1
        own.append(f"    chunks = [chunk for chunk in all_chunks if chunk.metadata['level'] == {leaf}]")
    return "\n".join([*own, "else:  # without ChunkScope: the translation", body])
