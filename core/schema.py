"""The data model: Document, Node, NodeWithScore and the metadata views.

The vocabulary and the rendering follow LlamaIndex (``TextNode.get_content`` and
``get_metadata_str``), so what ChunkScope shows as the LLM and EMBED views is what
a LlamaIndex pipeline with the same templates would send.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from string import Formatter
from typing import Any

import xxhash

DEFAULT_METADATA_TEMPLATE = "{key}: {value}"
DEFAULT_METADATA_SEPARATOR = "\n"
DEFAULT_TEXT_TEMPLATE = "{metadata_str}\n\n{content}"
# The fields each template is rendered with; core.config_parts refuses templates that use anything else.
METADATA_TEMPLATE_FIELDS = ("key", "value")
TEXT_TEMPLATE_FIELDS = ("metadata_str", "content")


class MetadataMode(str, Enum):
    """Which reader a rendering is for: each drops its own excluded keys."""

    ALL = "all"
    EMBED = "embed"
    LLM = "llm"
    NONE = "none"


class NodeRelationship(str, Enum):
    SOURCE = "source"
    PREVIOUS = "previous"
    NEXT = "next"
    PARENT = "parent"
    CHILD = "child"  # the only relationship that holds a list of ids


@dataclass
class Element:
    """A piece of structure a loader found, with its span in the document's text.

    ``kind`` is one of heading, paragraph, table, table_row, code, list_item.
    ``level`` is a heading's level (1 for ``#``); ``page`` is 1-based where known.
    A table's ``attrs`` hold ``header`` (the header row's text) and
    ``header_end`` (where the header row and its separator end).
    """

    kind: str
    start_char: int
    end_char: int
    level: int | None = None
    page: int | None = None
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Page:
    """One page of a paged source (PDF): its span in the document's text."""

    number: int  # 1-based
    label: str  # the PDF's page label, e.g. "iv" or "12"
    start_char: int
    end_char: int


# Slots: a split makes thousands of nodes, and a node without an instance dict is
# about a third smaller and quicker to build. Document keeps a dict (it is not
# declared with slots) for its page index.
@dataclass(slots=True)
class BaseNode:
    """What Document and Node share: text, metadata, and how metadata is shown."""

    text: str = ""
    id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    excluded_llm_metadata_keys: list[str] = field(default_factory=list)
    excluded_embed_metadata_keys: list[str] = field(default_factory=list)
    metadata_template: str = DEFAULT_METADATA_TEMPLATE
    metadata_separator: str = DEFAULT_METADATA_SEPARATOR
    text_template: str = DEFAULT_TEXT_TEMPLATE
    relationships: dict[NodeRelationship, str | list[str]] = field(default_factory=dict)

    def get_metadata_str(self, mode: MetadataMode = MetadataMode.ALL) -> str:
        """The metadata as ``mode``'s reader sees it: template per key, joined by the separator."""
        mode = MetadataMode(mode)
        if mode is MetadataMode.NONE:
            return ""
        excluded: set[str] = set()
        if mode is MetadataMode.LLM:
            excluded = set(self.excluded_llm_metadata_keys)
        elif mode is MetadataMode.EMBED:
            excluded = set(self.excluded_embed_metadata_keys)
        return self.metadata_separator.join(
            self.metadata_template.format(key=key, value=str(value))
            for key, value in self.metadata.items()
            if key not in excluded
        )

    def get_content(self, metadata_mode: MetadataMode = MetadataMode.NONE) -> str:
        """Exactly what a reader in ``metadata_mode`` is given for this node.

        The templates come checked from :class:`core.config_parts.MetadataSettings`:
        plain fields, each at most once, no format spec or conversion. So
        ``str.format`` here only substitutes, and a rendering is never longer than
        its template plus each value once.
        """
        metadata_str = self.get_metadata_str(metadata_mode).strip()
        if MetadataMode(metadata_mode) is MetadataMode.NONE or not metadata_str:
            return self.text
        return self.text_template.format(content=self.text, metadata_str=metadata_str).strip()

    def view_settings(self) -> dict[str, Any]:
        """The fields that decide how metadata renders, to hand down to children."""
        return {
            "excluded_llm_metadata_keys": list(self.excluded_llm_metadata_keys),
            "excluded_embed_metadata_keys": list(self.excluded_embed_metadata_keys),
            "metadata_template": self.metadata_template,
            "metadata_separator": self.metadata_separator,
            "text_template": self.text_template,
        }


@dataclass
class Document(BaseNode):
    """A loaded source: canonical text, metadata, structure and (for paged sources) pages."""

    elements: list[Element] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)
    # The markup ``text`` was extracted from (an HTML page's source), for the engines that read markup
    # (core.engines); None for other sources. Not metadata, so no reader's view shows it; not in repr.
    markup: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.id:
            self.id = content_id(self.text, str(self.metadata.get("file_name", "")))
        self._page_starts = [page.start_char for page in self.pages] if self.pages else []

    def pages_for_span(self, start_char: int, end_char: int) -> list[Page]:
        """The pages a span touches (empty for unpaged documents)."""
        if not self.pages:
            return []
        first = max(bisect_right(self._page_starts, start_char) - 1, 0)
        last = max(bisect_right(self._page_starts, max(end_char - 1, start_char)) - 1, 0)
        return self.pages[first : last + 1]

    def with_metadata(self, metadata: dict[str, Any], **view_settings: Any) -> Document:
        """A copy with other metadata (and optionally other view settings); text and id unchanged."""
        return replace(self, metadata=dict(metadata), **view_settings)


@dataclass(slots=True)
class Node(BaseNode):
    """A piece of a document.

    For every splitter that cuts rather than rewrites,
    ``text == document.text[start_char:end_char]``.
    """

    doc_id: str = ""
    start_char: int = 0
    end_char: int = 0

    @property
    def prev_id(self) -> str | None:
        return self.relationships.get(NodeRelationship.PREVIOUS)  # type: ignore[return-value]

    @property
    def next_id(self) -> str | None:
        return self.relationships.get(NodeRelationship.NEXT)  # type: ignore[return-value]

    @property
    def parent_id(self) -> str | None:
        return self.relationships.get(NodeRelationship.PARENT)  # type: ignore[return-value]

    @property
    def child_ids(self) -> list[str]:
        return list(self.relationships.get(NodeRelationship.CHILD, []))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the JSONL export and the CLI use this)."""
        return {
            "id": self.id,
            "doc_id": self.doc_id,
            "text": self.text,
            "start_char": self.start_char,
            "end_char": self.end_char,
            "metadata": self.metadata,
            "excluded_llm_metadata_keys": list(self.excluded_llm_metadata_keys),
            "excluded_embed_metadata_keys": list(self.excluded_embed_metadata_keys),
            "metadata_template": self.metadata_template,
            "metadata_separator": self.metadata_separator,
            "text_template": self.text_template,
            "relationships": {rel.value: target for rel, target in self.relationships.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Node:
        data = dict(data)
        data["relationships"] = {NodeRelationship(k): v for k, v in data.get("relationships", {}).items()}
        return cls(**data)


@dataclass
class NodeWithScore:
    """A node as a retriever returns it: with a score (None when unscored) and the query."""

    node: Node
    score: float | None = None
    query: str = ""

    @property
    def id(self) -> str:
        return self.node.id

    @property
    def text(self) -> str:
        return self.node.text

    def get_content(self, metadata_mode: MetadataMode = MetadataMode.NONE) -> str:
        return self.node.get_content(metadata_mode)


def contents(nodes: Sequence[BaseNode], mode: MetadataMode) -> list[str]:
    """``[node.get_content(mode) for node in nodes]``, each distinct metadata rendered once (:func:`view_parts`)."""
    return [
        view if prefix is None else prefix + node.text
        for node, (prefix, view) in zip(nodes, view_parts(nodes, mode), strict=True)
    ]


def view_parts(nodes: Sequence[BaseNode], mode: MetadataMode) -> list[tuple[str, None] | tuple[None, str]]:
    """Each node's ``get_content(mode)``: ``(prefix, None)`` when the view is ``prefix + node.text`` (left unjoined),
    else ``(None, view)``.

    The nodes of a document hold copies of its metadata: the same keys and the same
    value objects. Rendering it (a template per key) was most of a view's cost, the
    views of every node are measured after each parameter change, so a rendering is
    kept per keys, value identities (identical objects render identically; equal ones
    need not: ``1 == True``), hidden keys and templates.

    With a text template ending in ``{content}`` (the default's ``"{metadata_str}\n\n{content}"``) the view of a
    text ending on a non-space is the rendered rest of the template, then the text: the metrics count the two apart
    (core.tokens.counts), so they need not be joined, and joining them is ~4x cheaper than ``str.format``. Building
    every view whole and finding its prefix again (``view.endswith(text)``) took the metrics of a sentence split of
    1 MB (~4,000 nodes) ~39 ms a chunk_size change, ~24 without (medians of 7 runs).
    """
    mode = MetadataMode(mode)
    if mode is MetadataMode.NONE:
        return [(None, node.text) for node in nodes]
    rendered: dict[tuple[Any, ...], tuple[str, str | None]] = {}
    out: list[tuple[str, None] | tuple[None, str]] = []
    for node in nodes:
        metadata, text = node.metadata, node.text
        if mode is MetadataMode.LLM:
            hidden = tuple(node.excluded_llm_metadata_keys)
        elif mode is MetadataMode.EMBED:
            hidden = tuple(node.excluded_embed_metadata_keys)
        else:
            hidden = ()
        key = (
            tuple(metadata),
            tuple(map(id, metadata.values())),
            hidden,
            node.metadata_template,
            node.metadata_separator,
            node.text_template,
        )
        known = rendered.get(key)
        if known is None:
            metadata_str = node.get_metadata_str(mode).strip()
            known = rendered[key] = (metadata_str, _template_head(node.text_template, metadata_str))
        metadata_str, head = known
        if not metadata_str:
            out.append((None, text))
        elif head is not None and text and not text[-1].isspace():
            out.append((head, None))
        else:
            out.append((None, node.text_template.format(content=text, metadata_str=metadata_str).strip()))
    return out


def _template_head(template: str, metadata_str: str) -> str | None:
    """``h`` with ``template.format(content=t, metadata_str=metadata_str).strip() == h + t`` for every ``t`` that
    ends on a non-space: the template ends in a plain ``{content}`` field, and the rest renders to something not
    blank (the strip stops inside it). None otherwise."""
    try:
        *_, (_, last, spec, conversion) = Formatter().parse(template)
        if not (template.endswith("{content}") and last == "content" and not spec and conversion is None):
            return None
        head = template[: -len("{content}")].format(metadata_str=metadata_str)
    except (ValueError, LookupError, AttributeError, TypeError):
        return None  # a template str.format refuses: the view is rendered as before (and refused the same way)
    return head.lstrip() if head.strip() else None


def page_range_label(pages: Sequence[Page]) -> str:
    """Consecutive pages as one label: ``"3"``, ``"3-4"``, or ``""`` for none."""
    if not pages:
        return ""
    first, last = pages[0].label, pages[-1].label
    return first if first == last else f"{first}-{last}"


def numbers_in_document(nodes: Iterable[Node]) -> dict[str, int]:
    """Node id -> the node's number (``#3``): its 0-based place among its own document's nodes.

    The one numbering the views show (the Chunks page, the Query trace; for a flat
    split it is also the ``#3`` ending the node ids that exports and the CLI print),
    so a node keeps its number whichever documents are loaded beside it. Nodes are
    counted in the order given.
    """
    counts: dict[str, int] = {}
    numbers: dict[str, int] = {}
    for node in nodes:
        numbers[node.id] = counts.get(node.doc_id, 0)
        counts[node.doc_id] = numbers[node.id] + 1
    return numbers


def content_id(text: str, salt: str = "") -> str:
    """A stable, short id from content: the same file always gets the same id.

    xxh3 (64 bits, 12 hex digits kept) of the salt, a zero byte and the text's
    UTF-8: an id, not a signature, and every split of a document pays for it
    (SHA-1 was ~10% of a character-sized split; xxh3 hashes the same 4 MB in
    0.7 ms with the UTF-8 encoding, against 2.5). The encoding is most of that
    for a text that is not ASCII (:func:`_hash_utf8`; a C encoder, ``utf8_native.c``,
    made prose in Cyrillic and CJK 2.5 -> 0.6 ms a MB until issue 41: about 1.0x on
    a whole split, benchmarks/RESULTS.md).
    """
    # Bytes, not the str: xxhash 3.6 accepts a str, later versions refuse one.
    digest = xxhash.xxh3_64(salt.encode("utf-8", "surrogatepass") + b"\0")
    if text.isascii():  # its UTF-8 is a copy
        digest.update(text.encode("ascii"))
    else:
        _hash_utf8(digest, text)
    return digest.hexdigest()[:12]


# The pieces _hash_utf8 encodes a mostly-ASCII text by (measured: 1,024 is slower by the calls, 16,384 by
# the pieces that hold a non-ASCII character).
_HASH_PIECE = 4096


def _hash_utf8(digest: Any, text: str) -> None:
    """Feed the UTF-8 of ``text``, which is not ASCII, to ``digest`` (lone surrogates passed): the same
    bytes as one ``encode``.

    One character past U+00FF makes a str two bytes a character, and CPython encodes
    such a str to UTF-8 character by character (~0.9 ns a character: 1.1 ms for Vim's
    version8.txt, 1.6 MB holding 38 such characters), while an ASCII str encodes as a
    copy. A slice holding only ASCII is stored as ASCII, so a mostly-ASCII text is
    encoded by pieces (0.6 ms there); UTF-8 encodes each code point on its own, so the
    bytes are the same wherever the pieces are cut. A text whose first piece is not
    ASCII (prose in another script) is encoded whole: its pieces would not be ASCII either.
    """
    if not text[:_HASH_PIECE].isascii():
        digest.update(text.encode("utf-8", "surrogatepass"))
        return
    for start in range(0, len(text), _HASH_PIECE):
        digest.update(text[start : start + _HASH_PIECE].encode("utf-8", "surrogatepass"))
