"""Helpers for the Export page: cached export files, the snippets' notes, and the shareable link."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import streamlit as st

from core.schema import Document, Node
from ui.cache import HASH_FUNCS

DIFFERENCES_HEADING = "Where this differs from ChunkScope:"
DEFAULT_BASE_URL = "http://localhost:8501/"
# The page a shared link opens: where the configuration is seen at work.
LINK_TARGET_PAGE = "Chunks"


@dataclass(frozen=True)
class ExportFile:
    """One download: its bytes, file name and MIME type."""

    data: bytes
    file_name: str
    mime: str

    @property
    def size_label(self) -> str:
        size = len(self.data)
        if size < 1024:
            return f"{size:,} bytes"
        if size < 1024 * 1024:
            return f"{size / 1024:,.1f} KB"
        return f"{size / (1024 * 1024):,.1f} MB"


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def node_files(nodes: Sequence[Node], stem: str) -> dict[str, ExportFile]:
    """The nodes as JSONL, CSV and Parquet, keyed by format name (cached per node set)."""
    from core.export import nodes_to_csv, nodes_to_jsonl, nodes_to_parquet

    nodes = list(nodes)
    return {
        "JSONL": ExportFile(nodes_to_jsonl(nodes).encode("utf-8"), f"{stem}.jsonl", "application/jsonl"),
        "CSV": ExportFile(nodes_to_csv(nodes).encode("utf-8"), f"{stem}.csv", "text/csv"),
        "Parquet": ExportFile(nodes_to_parquet(nodes), f"{stem}.parquet", "application/vnd.apache.parquet"),
    }


def differences(snippet: str) -> list[str]:
    """The notes a snippet's docstring lists under "Where this differs from ChunkScope:"."""
    notes: list[str] = []
    inside = False
    for line in snippet.splitlines():
        stripped = line.strip()
        if stripped == DIFFERENCES_HEADING:
            inside = True
            continue
        if inside:
            if stripped.startswith("- "):
                notes.append(stripped[2:])
            elif notes and stripped and not stripped.startswith('"""'):
                notes[-1] += " " + stripped  # a note that wrapped onto the next line
            else:
                break
    return notes


def share_link(page_url: str | None, params: Mapping[str, str], *, this_page: str, target: str = LINK_TARGET_PAGE) -> str:
    """The link that opens ``target`` with ``params`` in the query string.

    ``page_url`` is this page's address as the browser has it (``st.context.url``);
    its last path segment, ``this_page``, is swapped for ``target`` so the link
    works behind a proxy prefix too.
    """
    parts = urlsplit(page_url or DEFAULT_BASE_URL)
    segments = [segment for segment in parts.path.split("/") if segment]
    if segments and segments[-1] == this_page:
        segments.pop()
    path = "/" + "/".join([*segments, target])
    query = urlencode(dict(params), quote_via=quote, safe=",{}")
    return urlunsplit((parts.scheme or "http", parts.netloc, path, query, ""))


def file_stem(documents: Sequence[Document], splitter_name: str) -> str:
    """``chunking_guide-sentence-nodes`` for one document, ``6-documents-sentence-nodes`` for several."""
    if len(documents) == 1:
        name = str(documents[0].metadata.get("file_name", documents[0].id)).rsplit(".", 1)[0]
        stem = f"{name}-{splitter_name}-nodes"
    else:
        stem = f"{len(documents)}-documents-{splitter_name}-nodes"
    return "".join(char if char.isalnum() or char in "-_" else "_" for char in stem)
