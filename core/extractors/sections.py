"""The section a node starts in: the path of headings above it, for every splitter.

The Markdown and HTML heading splitters write ``header_path`` because they cut at
headings; any other splitter's chunks know nothing of the document's outline. This
module gives every node the same context from the headings its loader found
(Markdown, HTML, DOCX, PPTX, EPUB): ``section`` is the titles of the headings that
enclose the node's first character, outermost first, joined by ``" > "``. A heading
that starts where the node starts encloses it (the node opens with its heading).
One pass over the headings and a binary search per node: 5,000 sections cost nothing.

It runs after the split, as LlamaIndex's node-level extractors do in an
``IngestionPipeline``: the splitter's sizes do not count it. The rule is plain Python
on plain tuples (:func:`section_paths`, :func:`section_at`), so an exported script
carries these very functions.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from core.extractors.title import shorten
from core.schema import Document, Node

SECTION_KEY = "section"
SECTION_SEPARATOR = " > "
# A heading can be a whole sentence (a form line a parser took for one): each title is cut to this.
MAX_TITLE_CHARS = 80


def section_paths(headings: Sequence[tuple[int, int, str]]) -> list[str]:
    """The section each heading opens: its title after those of the headings enclosing it, joined by " > ".

    ``headings``: (start, level, title) in document order. A heading encloses what follows it up to the
    next heading of its level or a higher one (a smaller level number); an untitled heading closes
    sections as its level says and adds no title.
    """
    open_headings: list[tuple[int, str]] = []  # (level, title), outermost first
    paths = []
    for _start, level, title in headings:
        while open_headings and open_headings[-1][0] >= level:
            open_headings.pop()
        open_headings.append((level, title))
        paths.append(SECTION_SEPARATOR.join(title for _, title in open_headings if title))
    return paths


def section_at(starts: Sequence[int], paths: Sequence[str], start: int) -> str:
    """The section of the character at ``start``: the path of the last heading at or before it ("" above the first)."""
    index = bisect_right(starts, start) - 1
    return paths[index] if index >= 0 else ""


def document_headings(document: Document) -> list[tuple[int, int, str]]:
    """(start, level, title) of each heading the loader found, in order, titles shortened to :data:`MAX_TITLE_CHARS`."""
    found = [
        (element.start_char, element.level or 1, shorten(" ".join(str(element.attrs.get("title", "")).split()), MAX_TITLE_CHARS))
        for element in document.elements
        if element.kind == "heading"
    ]
    return sorted(found, key=lambda heading: heading[0])


def add_sections(nodes: Sequence[Node], documents: Sequence[Document]) -> None:
    """Write :data:`SECTION_KEY` into the metadata of each node that starts inside a section (in place).

    A node above the first heading, or of a document without headings, gets no key.
    """
    outlines = {}
    for document in documents:
        headings = document_headings(document)
        if headings:
            outlines[document.id] = ([start for start, _, _ in headings], section_paths(headings))
    for node in nodes:
        outline = outlines.get(node.doc_id)
        section = section_at(*outline, node.start_char) if outline else ""
        if section:
            # A new dict: the splitters may hand nodes of one document the same metadata object.
            node.metadata = {**node.metadata, SECTION_KEY: section}
