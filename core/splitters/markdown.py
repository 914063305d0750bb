"""Heading splitters: one node per section, with the path of headings above it.

A *section* is a heading and everything up to the next heading that starts a
section. Which headings start one is the only thing the Markdown and HTML
splitters disagree on, so the section logic lives here once
(:class:`SectionSplitter`, :func:`section_spans`) and ``html.py`` only says
which headings count.

Metadata follows both libraries users know: ``header_path`` is the path of the
*enclosing* headings, as LlamaIndex's MarkdownNodeParser writes it
(``"/Title/Section/"`` for a subsection under them, ``"/"`` at the top), and
``header_1`` … ``header_6`` hold the titles in force at each level *including*
the section's own heading, as LangChain's MarkdownHeaderTextSplitter does.

The Markdown splitter's ``compat="llamaindex"`` finds headings and titles as
LlamaIndex's MarkdownNodeParser does (:mod:`core.splitters.markdown_llamaindex`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.errors import ConfigError
from core.params import param
from core.schema import Document, Element
from core.splitters.base import Span, Splitter, chunk_size_param, tokenizer_param
from core.splitters.compat import (
    LLAMAINDEX,
    CompatChunk,
    compat_param,
    compat_spans,
    mirror_engine,
    refuse_unmirrored,
)
from core.splitters.fast.markdown_scan import markdown_headings
from core.splitters.fast.packing import merge_pieces
from core.splitters.markdown_llamaindex import llamaindex_headings, llamaindex_sections
from core.splitters.pieces import CutGuard, piece_sizes, protected_cuts
from core.splitters.registry import SPLITTERS
from core.tokens.tokenizers import SizeFn, Tokenizer, get_tokenizer
from core.translate.framework_code import langchain_recursive
from core.translate.snippet import CodeSnippet, call


class Heading(NamedTuple):
    """A heading's span in the text, its level (1 = top) and its title."""

    start: int
    end: int
    level: int
    title: str


def headings_from_elements(elements: Iterable[Element]) -> list[Heading]:
    """The headings a loader found, in document order."""
    found = [
        Heading(e.start_char, e.end_char, e.level or 1, str(e.attrs.get("title", "")))
        for e in elements
        if e.kind == "heading"
    ]
    return sorted(found, key=lambda h: h.start)


def section_spans(text: str, headings: Sequence[Heading], split_levels: Iterable[int]) -> list[Span]:
    """One span per section, each carrying ``header_path`` and ``header_N`` metadata.

    Only headings whose level is in ``split_levels`` start a section or enter the
    path; the others stay inside the section that holds them. Text before the
    first such heading is a section of its own (path ``"/"``). Spans are trimmed of
    surrounding whitespace; whitespace-only sections vanish.
    """
    levels = set(split_levels)
    starters = [h for h in headings if h.level in levels]
    spans: list[Span] = []
    # The open headings, and beside each the header_path of what lies under it (built once per heading).
    stack: list[Heading] = []
    paths: list[str] = []
    bounds = [0, *(h.start for h in starters), len(text)]
    for index in range(len(bounds) - 1):
        start, end = bounds[index], bounds[index + 1]
        # Trimmed in place, as trim_span does (with each path built once, not per section: 5.8 -> 3.6 ms
        # for 3,100 sections of 2 MB; benchmarks/NOTES.md, sixth round, markdown).
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if index == 0:
            if start < end:
                spans.append(Span(start, end, {"header_path": "/"}))
            continue
        heading = starters[index - 1]
        while stack and stack[-1].level >= heading.level:
            stack.pop()
            paths.pop()
        parent_path = paths[-1] if paths else "/"
        stack.append(heading)
        paths.append(f"{parent_path}{heading.title}/")
        if start < end:
            metadata: dict[str, str] = {"header_path": parent_path}
            for open_heading in stack:
                metadata[_HEADER_KEYS.get(open_heading.level) or f"header_{open_heading.level}"] = open_heading.title
            spans.append(Span(start, end, metadata))
    return spans


# One key string per level, shared by every node (a new "header_2" per node was 7% of a split's memory).
_HEADER_KEYS = {level: f"header_{level}" for level in range(1, 7)}


# Finer and finer cuts for an oversized section: blank lines, line ends, whitespace,
# then single characters. Each returns consecutive pieces covering [start, end).
def _cut_after(pattern: re.Pattern[str]) -> Callable[[str, int, int], list[tuple[int, int]]]:
    def cut(text: str, start: int, end: int) -> list[tuple[int, int]]:
        pieces = []
        piece_start = start
        for match in pattern.finditer(text, start, end):
            if match.end() > piece_start and match.start() > piece_start:
                pieces.append((piece_start, match.end()))
                piece_start = match.end()
        if piece_start < end:
            pieces.append((piece_start, end))
        return pieces

    return cut


def _cut_characters(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(start, end)]


_CUT_PARAGRAPHS = _cut_after(re.compile(r"\n[ \t]*(?:\r?\n|\r)\s*|\r[ \t]*\r\s*"))
_CUT_LINES = _cut_after(re.compile(r"\r\n|\r|\n"))
_CUT_WORDS = _cut_after(re.compile(r"\s+"))
SECTION_CUTS = (_CUT_PARAGRAPHS, _CUT_LINES, _CUT_WORDS, _cut_characters)
WORD_CUTS = (_CUT_WORDS, _cut_characters)


def fit_pieces(
    text: str,
    pieces: Sequence[tuple[int, int]],
    chunk_size: int,
    tokenizer: Tokenizer,
    *,
    chunk_overlap: int = 0,
    cuts: Sequence[Callable[[str, int, int], list[tuple[int, int]]]] = SECTION_CUTS,
    guard: CutGuard | None = None,
) -> list[Span]:
    """Pack consecutive ``pieces`` into chunks of at most ``chunk_size`` tokens (see :func:`merge_pieces`).

    A piece over the limit is cut finer, with each of ``cuts`` in turn (for a
    section: blank lines, line ends, whitespace, then between characters). A
    cut that ``guard`` forbids (inside a table row) is never made, so only such
    a row can exceed ``chunk_size``.
    """
    pieces = list(pieces)
    for cut in cuts:
        sizes = piece_sizes(tokenizer, text, pieces)
        if all(size <= chunk_size for size in sizes):
            break
        finer: list[tuple[int, int]] = []
        for piece, size in zip(pieces, sizes, strict=True):
            if size <= chunk_size:
                finer.append(piece)
                continue
            smaller = cut(text, *piece)
            if guard:
                smaller = guard.pieces(piece[0], piece[1], [start for start, _ in smaller[1:]])
            finer.extend(smaller)
        pieces = finer
    return merge_pieces(pieces, piece_sizes(tokenizer, text, pieces), chunk_size, chunk_overlap, text)


@dataclass(frozen=True)
class SectionSplitter(Splitter):
    """Shared by the heading splitters: sections, then an optional size limit inside each.

    Subclasses say where a document's headings come from (:meth:`structure`) and which
    levels start a section (:meth:`split_levels`).
    """

    # 0 keeps every section whole.
    chunk_size: int = chunk_size_param(0, ge=0)
    tokenizer: str | SizeFn = tokenizer_param("characters")

    keeps_table_rows = True

    @property
    def size_limit(self) -> int | None:
        return self.chunk_size or None

    @property
    def overlap_limit(self) -> int | None:
        return 0

    def structure(self, document: Document) -> Sequence[Element]:
        """The elements whose headings the sections are drawn from."""
        return document.elements

    def split_levels(self) -> set[int]:
        raise NotImplementedError

    def unsuited_reason(self, document: Document) -> str | None:
        levels = self.split_levels()
        if self.chunk_size or any(h.level in levels for h in headings_from_elements(self.structure(document))):
            return None
        return self.no_headings_reason(document)

    def no_headings_reason(self, document: Document) -> str:
        """Why a document without headings to split on is one node."""
        name = document.metadata.get("file_name", "this document")
        kind = document.metadata.get("file_type")
        return (
            f"the {self.name} splitter cuts at headings, and {name}{f' ({kind})' if kind else ''} has none at the "
            f"levels it splits on, so the whole document is one node; pick a splitter that cuts by size"
        )

    def spans(self, document: Document) -> list[Span]:
        text = document.text
        elements = self.structure(document)
        sections = section_spans(text, headings_from_elements(elements), self.split_levels())
        if not self.chunk_size:
            return sections
        tokenizer = get_tokenizer(self.tokenizer)
        # The rows the document itself declares (as build_nodes and the other splitters see them).
        guard = protected_cuts(document)
        spans: list[Span] = []
        # Sized together; a section within the limit is its own chunk (what fit_pieces would return
        # for it: sections are trimmed already), so only the longer ones are cut.
        sizes = piece_sizes(tokenizer, text, [(section.start, section.end) for section in sections])
        for section, size in zip(sections, sizes, strict=True):
            if size <= self.chunk_size:
                spans.append(Span(section.start, section.end, dict(section.metadata or {})))
                continue
            pieces = [(section.start, section.end)]
            for start, end, _ in fit_pieces(text, pieces, self.chunk_size, tokenizer, guard=guard):
                spans.append(Span(start, end, dict(section.metadata or {})))
        return spans


@SPLITTERS.register
@dataclass(frozen=True)
class MarkdownSplitter(SectionSplitter):
    """Like LlamaIndex's MarkdownNodeParser and LangChain's MarkdownHeaderTextSplitter, with exact spans.

    Headings come from the loader's elements; a document without heading
    elements is parsed with markdown-it, so ``#`` lines inside code fences are
    never headings.

    ``compat="llamaindex"`` cuts as LlamaIndex's MarkdownNodeParser does
    (:func:`llamaindex_sections`): a heading is any line ``#…`` followed by one
    whitespace character outside a ````` fence (no setext headings, no indented
    ones, any number of ``#``), its title the raw rest of the line (inline code
    keeps its backticks, emphasis its markers); ``header_path`` joins the raw titles
    of the enclosing headings and is the only metadata added (no ``header_N``). Where
    LlamaIndex rewrites a heading line (``#<tab>Title`` becomes ``# Title``) the node
    keeps its text, marked ``rewritten``. MarkdownNodeParser cuts at every heading and
    never by size, so this mode refuses a ``heading_level`` below 6 and a ``chunk_size``.
    """

    name = "markdown"
    summary = "One node per Markdown section (or per section at a chosen heading level), with its header path."

    heading_level: int = param(
        6,
        "Deepest heading that starts a node; deeper headings stay inside their section (6 = every heading).",
        ge=1,
        le=6,
    )
    compat: str = compat_param(LLAMAINDEX, sets="llamaindex: MarkdownNodeParser's headings, raw titles in header_path")

    def validate(self) -> None:
        super().validate()
        refuse_unmirrored(
            self,
            (
                self.heading_level != 6,
                "cuts at every heading, as MarkdownNodeParser does",
                f"heading_level={self.heading_level}",
            ),
            (
                bool(self.chunk_size),
                "cuts only at headings, as MarkdownNodeParser does",
                f"chunk_size={self.chunk_size}",
            ),
            counts_sizes=False,
        )

    def mirror(self) -> Any:
        # Validation refused what MarkdownNodeParser has no setting for (a heading level, a size).
        return mirror_engine(self, "llamaindex.markdown")

    def unsuited_reason(self, document: Document) -> str | None:
        if self.compat != LLAMAINDEX:
            return super().unsuited_reason(document)
        return None if llamaindex_headings(document.text) else self.no_headings_reason(document)

    def spans(self, document: Document) -> list[Span]:
        if self.compat == LLAMAINDEX:
            return compat_spans(self.compat_chunks(document))
        return super().spans(document)

    def node_spans(self, document: Document) -> list[Span] | None:
        return None if self.compat == LLAMAINDEX else self.spans(document)


    def compat_chunks(self, document: Document) -> list[CompatChunk]:
        """MarkdownNodeParser's sections of ``document`` (``compat="llamaindex"``).

        Its ``header_path`` is metadata: a node that does not inherit metadata has none, as in LlamaIndex.
        """
        sections = llamaindex_sections(document.text)
        return sections if self.include_metadata else [section._replace(metadata=None) for section in sections]

    def structure(self, document: Document) -> Sequence[Element]:
        if any(e.kind == "heading" for e in document.elements):
            return document.elements
        # A document that did not come through the Markdown loader: the headings the loader's
        # parser would find (markdown_elements), found by a line scan (fast.markdown_scan).
        return markdown_headings(document.text)

    def split_levels(self) -> set[int]:
        return set(range(1, self.heading_level + 1))

    def llamaindex(self, code: CodeSnippet) -> str:
        code.use("from llama_index.core.node_parser import MarkdownNodeParser")
        if self.heading_level < 6:
            code.note(
                f"markdown: MarkdownNodeParser makes a node at every heading; ChunkScope's heading_level="
                f"{self.heading_level} keeps deeper sections inside their level-{self.heading_level} parent."
            )
        if self.chunk_size:
            code.note(
                "markdown: ChunkScope splits sections longer than chunk_size further; with LlamaIndex, run a "
                "SentenceSplitter over MarkdownNodeParser's nodes (e.g. in an IngestionPipeline)."
            )
        return call("MarkdownNodeParser")

    def langchain(self, code: CodeSnippet) -> str:
        code.use(
            "from langchain_core.documents import Document",
            "from langchain_text_splitters import MarkdownHeaderTextSplitter",
        )
        headers = [("#" * n, f"Header {n}") for n in range(1, self.heading_level + 1)]
        splitter = call("MarkdownHeaderTextSplitter", headers_to_split_on=headers, strip_headers=False)
        lines = [
            f"header_splitter = {splitter}",
            "",
            "chunks = [",
            "    Document(page_content=section.page_content, metadata={**document.metadata, **section.metadata})",
            "    for document in documents",
            "    for section in header_splitter.split_text(document.page_content)",
            "]",
        ]
        if self.chunk_size:
            sized = langchain_recursive(code, self.chunk_size, 0, self.tokenizer)
            lines += ["", f"size_splitter = {sized}", "", "chunks = size_splitter.split_documents(chunks)"]
        return "\n".join(lines)


def validate_heading_tags(owner: str, tags: Sequence[str]) -> set[int]:
    """The levels named by tags like ``h2``; a ConfigError names a bad tag."""
    levels = set()
    for tag in tags:
        match = re.fullmatch(r"[hH]([1-6])", tag.strip())
        if match is None:
            raise ConfigError(f"{owner}: heading tags must be h1 to h6, got {tag!r}")
        levels.add(int(match.group(1)))
    if not levels:
        raise ConfigError(f"{owner}: name at least one heading tag to split on")
    return levels
