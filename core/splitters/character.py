"""Character splitter: cut on one separator, then pack the pieces up to chunk_size.

The rule is :func:`pack_pieces`. Sized in characters on a non-empty separator
(the default), the same chunks are found by searching near each chunk's ends
(:mod:`core.splitters.fast.separator_search`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.base import SizedSplitter, Span
from core.splitters.compat import (
    LANGCHAIN,
    CompatChunk,
    compat_param,
    compat_spans,
    langchain_merge,
    mirror_engine,
    refuse_unmirrored,
)
from core.splitters.fast.packing import merge_pieces, spans_from_bounds
from core.splitters.fast.separator_search import DenseRun, bounds_by_search
from core.splitters.nodes import TABLE_ELEMENTS
from core.splitters.pieces import literal_pattern, piece_sizes
from core.splitters.registry import SPLITTERS
from core.tokens.segmentation import trim_span
from core.tokens.tokenizers import Tokenizer, get_tokenizer
from core.translate.framework_code import langchain_character, llamaindex_token_splitter
from core.translate.snippet import CodeSnippet, split_with


@SPLITTERS.register
@dataclass(frozen=True)
class CharacterSplitter(SizedSplitter):
    """Like LangChain's CharacterTextSplitter, with exact spans.

    The text is cut after every occurrence of ``separator`` (the separator stays
    with the piece before it); pieces are packed greedily into chunks.

    ``compat="langchain"`` cuts as LangChain's CharacterTextSplitter does (its
    default ``keep_separator=False``): the pieces are the text between separators,
    empty ones dropped; a chunk's size counts the separators between its pieces,
    not one after its last; its text is its pieces joined by the separator (where
    empty pieces were dropped, that is not the source slice: the node is marked ``rewritten``).
    """

    name = "character"
    light_once_indexed = True
    summary = "Split on one separator (default: blank lines), then pack pieces up to chunk_size."
    elements_read = TABLE_ELEMENTS  # build_nodes' table headers
    framework_defaults = {"LangChain CharacterTextSplitter": {"chunk_size": 4000, "chunk_overlap": 200}}

    separator: str = param("\n\n", "The string to cut on (a literal, not a regex); empty cuts anywhere.")
    compat: str = compat_param(LANGCHAIN, sets="langchain: only separators between pieces count against chunk_size")

    def validate(self) -> None:
        super().validate()
        if len(self.separator) > 100:
            raise ConfigError(f"{self.name}: separator is longer than 100 characters")
        refuse_unmirrored(self)

    def spans(self, document: Document) -> list[Span]:
        if self.compat == LANGCHAIN:
            return compat_spans(self.compat_chunks(document))
        if self._packs_on_separator_ends:
            return spans_from_bounds(chunk_bounds(document.text, self.separator, self.chunk_size, self.chunk_overlap))
        return pack_pieces(document.text, self.separator, self.get_tokenizer(), self.chunk_size, self.chunk_overlap)

    def node_spans(self, document: Document) -> list[Span] | list[tuple[int, int]] | None:
        if self.compat == LANGCHAIN:
            return None
        # A subclass that overrides spans() is split through them.
        if not self._packs_on_separator_ends or type(self).spans is not CharacterSplitter.spans:
            return self.spans(document)
        # Plain (start, end) pairs, which build_nodes reads like Spans without metadata (4 MB,
        # 5,065 chunks: Spans cost 0.5-0.7 ms more); the search makes them as it goes.
        return chunk_bounds(document.text, self.separator, self.chunk_size, self.chunk_overlap)

    def compat_chunks(self, document: Document) -> list[CompatChunk]:
        """LangChain's CharacterTextSplitter chunks of ``document`` (``compat="langchain"``)."""
        text, separator = document.text, self.separator
        if separator:
            bounds = [
                0,
                *(end for m in literal_pattern(separator).finditer(text) for end in (m.start(), m.end())),
                len(text),
            ]
            pieces = [(a, b) for a, b in zip(bounds[::2], bounds[1::2], strict=True) if b > a]
        else:
            pieces = [(i, i + 1) for i in range(len(text))]
        tokenizer = self.get_tokenizer()
        sizes = piece_sizes(tokenizer, text, pieces)
        separator_size = tokenizer.count(separator) if separator else 0
        chunks = []
        for first, last in langchain_merge(sizes, self.chunk_size, self.chunk_overlap, separator_size):
            joined = separator.join(text[a:b] for a, b in pieces[first : last + 1]).strip()
            span = trim_span(text, pieces[first][0], pieces[last][1])
            if joined and span is not None:
                chunks.append(CompatChunk(span[0], span[1], None if text[span[0] : span[1]] == joined else joined))
        return chunks

    def mirror(self) -> Any:
        # CharacterTextSplitter at its defaults (a literal separator, not kept), sizes by the same unit.
        return mirror_engine(
            self,
            "langchain.character",
            separator=self.separator,
            chunk_size=self.chunk_size,
            chunk_overlap=self.chunk_overlap,
            length_function=self.tokenizer,
        )

    @property
    def covers_text(self) -> bool:
        """False when LangChain's mode drops a separator that is text (between chunks that do not overlap)."""
        return self.compat != LANGCHAIN or not self.separator.strip()

    @property
    def _packs_on_separator_ends(self) -> bool:
        """Sizes in characters and a real separator: the search path gives the rule's spans."""
        return self.tokenizer == "characters" and self.separator != ""

    def llamaindex(self, code: CodeSnippet) -> str:
        code.note(
            "character: LlamaIndex has no character splitter; TokenTextSplitter with the same separator and "
            "no backup separators is the closest (it may cut an oversized piece, ChunkScope keeps it whole).",
            at_call=True,
        )
        return llamaindex_token_splitter(
            code, self.chunk_size, self.chunk_overlap, self.tokenizer, separator=self.separator, backup_separators=[]
        )

    def langchain(self, code: CodeSnippet) -> str:
        # keep_separator="end": the separator stays at the end of the piece before it, as here.
        splitter = langchain_character(
            code, self.separator, self.chunk_size, self.chunk_overlap, self.tokenizer, keep_separator="end"
        )
        return split_with(splitter)


def pack_pieces(text: str, separator: str, tokenizer: Tokenizer, chunk_size: int, chunk_overlap: int) -> list[Span]:
    """The rule: cut after every separator, size the pieces in any unit, pack them (:func:`merge_pieces`)."""
    pieces = separator_pieces(text, separator)
    sizes = piece_sizes(tokenizer, text, pieces)
    return merge_pieces(pieces, sizes, chunk_size, chunk_overlap, text)


def separator_pieces(text: str, separator: str) -> list[tuple[int, int]]:
    """Consecutive spans covering ``text``, each ending just after a separator."""
    if not text:
        return []
    if separator == "":
        return [(i, i + 1) for i in range(len(text))]
    ends = separator_ends(text, separator)
    return list(zip([0, *ends[:-1]], ends, strict=True))


def separator_ends(text: str, separator: str) -> list[int]:
    """Where each piece ends: just after every occurrence of ``separator``, then the text's end."""
    # One C-level scan for the occurrences; only their ends are kept. (Measured on 4 MB:
    # 5 ms, against 9 ms for str.split, which also copies the whole text into parts.)
    ends = [match.end() for match in literal_pattern(separator).finditer(text)]
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    return ends


def chunk_bounds(text: str, separator: str, chunk_size: int, chunk_overlap: int) -> list[tuple[int, int]]:
    """The (start, end) of each of :func:`pack_pieces`' chunks sized in characters, found by search.

    Where the search would rescan long runs of a self-overlapping separator over
    and over, the rule's one scan of the whole text is cheaper, and taken.
    """
    try:
        return bounds_by_search(text, separator, chunk_size, chunk_overlap)
    except DenseRun:
        spans = pack_pieces(text, separator, get_tokenizer("characters"), chunk_size, chunk_overlap)
        return [(span.start, span.end) for span in spans]
