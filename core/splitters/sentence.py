"""Sentence splitter: LlamaIndex's SentenceSplitter, with exact spans and batched counting.

Text that does not fit is cut, in this order, until every piece fits
``chunk_size`` tokens: at paragraph separators, at sentences
(:func:`core.tokens.segmentation.sentence_spans`, kept per text and range), after clause punctuation
(``, . ;`` followed by whitespace, ``。 ？ ！``: never inside a URL or a number), at line breaks, at word separators, and between characters. The pieces are
then packed greedily; a new chunk begins with whole trailing pieces of the
previous one, at most ``chunk_overlap`` tokens. A separator stays with the piece
after it, as in LlamaIndex.

Speed: the text is tokenized once (:mod:`core.tokens.token_index`, shared by later splits of
the same text with the same tokenizer, e.g. at another chunk_size); a piece's size is
the number of tokens overlapping it, found by bisection, and a chunk's size is
the sum of its pieces' sizes. Nothing is tokenized twice, at any level or
while packing. (LlamaIndex tokenizes every split at every level separately; the
two counts can differ only where a cut falls inside a word, and there ours
counts the cut word's tokens on both sides, never fewer.)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import ConfigError
from core.params import param
from core.runtime.memo import TextTables
from core.schema import Document, MetadataMode, Node
from core.splitters.base import (
    SizedSplitter,
    Span,
    chunk_overlap_param,
    chunk_size_param,
    llamaindex_metadata_length,
    tokenizer_param,
)
from core.splitters.compat import (
    LLAMAINDEX,
    NONE,
    CompatChunk,
    compat_param,
    compat_spans,
    empty_text_chunks,
    llamaindex_tokenizer_name,
    mirror_engine,
    refuse_unmirrored,
)
from core.splitters.fast.packing import merge_pieces
from core.splitters.nodes import fit_table_headers
from core.splitters.pieces import CutGuard, piece_sizes, protected_cuts
from core.splitters.registry import SPLITTERS
from core.splitters.sentence_llamaindex import LlamaIndexPieces, llamaindex_merge, occurrences
from core.tokens import segmentation
from core.tokens.segmentation import sentence_spans_within
from core.tokens.token_index import TokenIndex
from core.tokens.tokenizers import FunctionTokenizer, SizeFn, Tokenizer, get_tokenizer
from core.translate.framework_code import langchain_recursive, llamaindex_tokenizer
from core.translate.snippet import CodeSnippet, call, split_with


@SPLITTERS.register
@dataclass(frozen=True)
class SentenceSplitter(SizedSplitter):
    """Chunks of whole sentences where they fit, whole clauses or words where they do not.

    Differences from LlamaIndex, on purpose: sentences come from blingfire
    rather than NLTK's Punkt and always break at a blank line; a piece's tokens
    are counted inside one tokenization of the whole text; a table row is never cut;
    a clause ends at punctuation before whitespace (never inside a URL or a number),
    and a clause too long is cut at line breaks before spaces.

    ``compat="llamaindex"`` cuts as LlamaIndex's SentenceSplitter does: sentences
    from an untrained Punkt tokenizer, each running from one sentence start to the
    next (the whitespace before a split's first sentence is dropped); every piece
    tokenized on its own and the counts added; an oversized piece split again from
    the paragraph level down; table rows not protected. Where LlamaIndex joins pieces
    with a gap between them, the node keeps LlamaIndex's text, marked ``rewritten``.
    As LlamaIndex, it always leaves room for the metadata (whether or not nodes
    inherit it), and an empty text gives one empty node.
    """

    name = "sentence"
    light_once_indexed = True
    summary = "Pack whole sentences (then clauses, lines, words) into chunks of chunk_size tokens, with overlap."
    keeps_table_rows = True

    framework_defaults = {"LlamaIndex SentenceSplitter": {"chunk_size": 1024, "chunk_overlap": 200}}

    # The default fits the shipped embedding model: all-MiniLM-L6-v2 reads 256 tokens, 254 of them text,
    # and metadata_aware keeps a chunk and its metadata within chunk_size (LlamaIndex's default is 1024).
    chunk_size: int = chunk_size_param(250)
    # The overlap is whole trailing sentences or clauses, shrunk when it would overflow the chunk.
    chunk_overlap: int = chunk_overlap_param(50)
    tokenizer: str | SizeFn = tokenizer_param("model")
    paragraph_separator: str = param(
        "\n\n\n", "Text between paragraphs, tried first (LlamaIndex's default: three newlines)."
    )
    separator: str = param(" ", "Text between words, tried when a clause's lines do not fit.", advanced=True)
    metadata_aware: bool = param(
        True,
        "Shrink the chunk budget by the tokens of the document's metadata as the LLM or embedding model sees it "
        "(the longer of the two), as LlamaIndex does.",
    )
    compat: str = compat_param(
        LLAMAINDEX, sets="llamaindex: Punkt sentences, each piece tokenized on its own, no table-row guard"
    )

    def validate(self) -> None:
        super().validate()
        for key in ("paragraph_separator", "separator"):
            value = getattr(self, key)
            if not value:
                raise ConfigError(f"{self.name}: {key} must not be empty")
            if len(value) > 100:
                raise ConfigError(f"{self.name}: {key} is longer than 100 characters")
        refuse_unmirrored(
            self,
            (not self.metadata_aware, "leaves room for the metadata as LlamaIndex always does", "metadata_aware=false"),
        )

    def chunk_budget(self, document: Document) -> int:
        """Tokens left for text in each chunk once the metadata of its node is counted.

        Natively, a node's views are what is counted: the document's metadata plus the keys
        :func:`~core.splitters.nodes.build_nodes` adds per node (``page_label``, ``table_header``)
        at their longest, rendered with the text template, in the larger of the LLM and EMBED views.
        So with the model tokenizer no EMBED view outgrows ``chunk_size`` (and the default fits the
        model's window). ``compat="llamaindex"`` keeps LlamaIndex's budget: the document's metadata alone.
        """
        # LlamaIndex budgets for the metadata even when its nodes do not inherit it.
        if not self.metadata_aware or (self.compat == NONE and not self.include_metadata):
            return self.chunk_size
        tokenizer = self.get_tokenizer()
        if self.compat == LLAMAINDEX:
            used = llamaindex_metadata_length(document, tokenizer)
            return self.budget_after_metadata(document, used, "", "exclude metadata keys or turn off metadata_aware")
        return self.budget_after_metadata(
            document,
            _node_metadata_tokens(self.fitted(document), tokenizer),
            " (as its nodes show it, with any page label and table header)",
            "exclude metadata keys or turn off metadata_aware",
        )

    def fitted(self, document: Document) -> Document:
        """``document`` with each table header row its nodes would repeat in ``table_header`` shortened where it
        takes more than HEADER_SHARE of the room the other metadata leaves (:func:`fit_table_headers`): a header
        row is never the reason a split is refused. ``document`` itself where no budget counts the header (or no
        view shows it).

        The room is ``document``'s: a part of it (a parent's text in the hierarchy) has no more metadata, so a
        header fitted for the whole fits every part unchanged.
        """
        hidden = "table_header" in document.excluded_llm_metadata_keys and (
            "table_header" in document.excluded_embed_metadata_keys
        )
        budgeted = self.metadata_aware and self.compat == NONE and self.include_metadata and not hidden
        if not budgeted or not any(e.kind == "table" and e.attrs.get("header") for e in document.elements):
            return document
        tokenizer = self.get_tokenizer()
        room = self.chunk_size - _node_metadata_tokens(document, tokenizer, headers=False)
        line = document.metadata_separator + document.metadata_template
        return fit_table_headers(
            document,
            lambda header: tokenizer.count(line.format(key="table_header", value=header)) <= HEADER_SHARE * room,
        )

    def nodes_from_spans(self, document: Document, spans: Sequence[Span | tuple[int, int]]) -> list[Node]:
        """The nodes at ``spans``, their ``table_header`` as :meth:`chunk_budget` counted it (:meth:`fitted`)."""
        return super().nodes_from_spans(self.fitted(document), spans)

    def spans(self, document: Document) -> list[Span]:
        if self.compat == LLAMAINDEX:
            return compat_spans(self.compat_chunks(document))
        text = document.text
        if not text.strip():
            return []
        budget = self.chunk_budget(document)
        pieces, sizes = _Pieces(self, text, self.get_tokenizer(), protected_cuts(document)).fitting(budget)
        return merge_pieces(pieces, sizes, budget, self.chunk_overlap, text)

    def node_spans(self, document: Document) -> list[Span] | None:
        return None if self.compat == LLAMAINDEX else self.spans(document)


    def compat_chunks(self, document: Document) -> list[CompatChunk]:
        """LlamaIndex's chunks of ``document``: its splits, packed by its rule (``compat="llamaindex"``)."""
        text = document.text
        # LlamaIndex counts the metadata first: a blank text is refused too when it leaves no room.
        budget = self.chunk_budget(document)
        if not text:
            return empty_text_chunks()
        if not text.strip():
            return []
        pieces = LlamaIndexPieces(text, self.get_tokenizer(), self.paragraph_separator, self.separator).fitting(budget)
        # A piece still over the budget is one character: LlamaIndex refuses the whole text.
        oversized = next((size for _, _, size in pieces if size > budget), None)
        if oversized is not None:
            where = document.metadata.get("file_name") or document.id
            raise ConfigError(
                f"{self.name}: {where} holds a character of {oversized} tokens, more than the {budget} left in "
                "each chunk, which LlamaIndex refuses (Single token exceeded chunk size); raise chunk_size"
            )
        return llamaindex_merge(text, pieces, budget, self.chunk_overlap)

    def mirror(self) -> Any:
        return mirror_engine(
            self,
            "llamaindex.sentence",
            chunk_size=self.chunk_size,
            chunk_overlap=self.chunk_overlap,
            tokenizer=llamaindex_tokenizer_name(self.tokenizer),
            separator=self.separator,
            paragraph_separator=self.paragraph_separator,
        )

    def llamaindex(self, code: CodeSnippet) -> str:
        code.use("from llama_index.core.node_parser import SentenceSplitter")
        if not self.metadata_aware:
            code.note(
                "sentence: LlamaIndex always shrinks the chunk budget by the metadata's length; ChunkScope ran with "
                "metadata_aware=false, so LlamaIndex's chunks will be smaller."
            )
        return call(
            "SentenceSplitter",
            chunk_size=self.chunk_size,
            chunk_overlap=self.chunk_overlap,
            tokenizer=llamaindex_tokenizer(code, self.tokenizer),
            separator=self.separator,
            paragraph_separator=self.paragraph_separator,
        )

    def langchain(self, code: CodeSnippet) -> str:
        code.note(
            "sentence: LangChain's sentence splitters (NLTKTextSplitter, SpacyTextSplitter) need downloaded "
            "models; RecursiveCharacterTextSplitter with paragraph, line and sentence-end separators is the closest.",
            at_call=True,
        )
        if self.metadata_aware:
            code.note(
                "sentence: LangChain does not shrink the chunk budget by the metadata's length as ChunkScope does."
            )
        separators = ["\n\n", "\n", ". ", "? ", "! ", " ", ""]
        return split_with(
            langchain_recursive(
                code, self.chunk_size, self.chunk_overlap, self.tokenizer, separators=separators, keep_separator="end"
            )
        )


def _node_metadata_tokens(document: Document, tokenizer: Tokenizer, *, headers: bool = True) -> int:
    """The most tokens a node of ``document`` adds to its text in its LLM or EMBED view.

    A node holds the document's metadata and, from ``build_nodes``, the pages its span touches
    (``page_label``, at most "first-last") and, inside a table's body, the table's header row
    (``table_header``): each is counted at its longest, since the span is not known yet. The view
    is ``text_template`` with the content left empty, so the template's own words count too.
    Counted apart from the text: tokenizers that cut at whitespace (the model's WordPiece) add up exactly.
    ``headers=False`` leaves the table headers out.
    """
    extra: dict[str, str] = {}
    if document.pages:
        label = _largest(tokenizer, [page.label for page in document.pages])
        extra["page_label"] = f"{label}-{label}" if len(document.pages) > 1 else label
    rows = [
        str(e.attrs["header"]) for e in document.elements if headers and e.kind == "table" and e.attrs.get("header")
    ]
    if rows:
        extra["table_header"] = _largest(tokenizer, rows)
    widest = document.with_metadata({**document.metadata, **extra}) if extra else document
    used = 0
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        metadata_str = widest.get_metadata_str(mode).strip()
        if metadata_str:
            view = document.text_template.format(metadata_str=metadata_str, content="")
            used = max(used, tokenizer.count(view))
    return used


def _largest(tokenizer: Tokenizer, values: Sequence[str]) -> str:
    """The value with the most tokens (the longest among those)."""
    sizes = tokenizer.count_many(list(values))
    return max(zip(sizes, map(len, values), values, strict=True))[2]


Cutter = Callable[[str, int, int], Sequence[int]]


# Where a clause ends: , . ; followed by whitespace, and 。？！ (written without a space after). A period inside a
# URL, a file name, a version or a number (example.org, 1.2.3, 3.14) ends nothing: LlamaIndex's rule cuts there
# (compat="llamaindex" keeps it), which cut 19 of a README's 59 chunks inside the links of its reference block.
# A table's header row, repeated in the ``table_header`` of each node in the table's body, takes at most this share
# of the chunk the other metadata leaves (a quarter stays for text); a longer one is shortened, so a header row
# never leaves no room and refuses the split (SentenceSplitter.fitted).
HEADER_SHARE = 0.75
CLAUSE_END_IN_TEXT = re.compile(r"[,.;](?=\s)|[。？！]")


class _Pieces:
    """Breaks text into consecutive pieces that each fit the budget (or cannot be cut)."""

    def __init__(self, splitter: SentenceSplitter, text: str, tokenizer: Tokenizer, guard: CutGuard) -> None:
        self.text = text
        # A size function gives no token positions to index: each piece's own text is counted.
        self.sizes = (
            _TextSizes(tokenizer, text)
            if isinstance(tokenizer, FunctionTokenizer)
            else TokenIndex.shared(tokenizer, text)
        )
        self.guard = guard
        paragraph, word = splitter.paragraph_separator, splitter.separator
        self.known = _known_splits(text, _setting_key(splitter, tokenizer, guard))
        self.levels: list[Cutter] = [
            lambda t, a, b: occurrences(t, paragraph, a, b),
            _sentence_cuts,
            lambda t, a, b: [m.end() for m in CLAUSE_END_IN_TEXT.finditer(t, a, b)],
            # A clause still too long is cut at line breaks before spaces: a list or a block of link references
            # keeps each line (a label with its URL) whole.
            lambda t, a, b: occurrences(t, "\n", a, b),
            lambda t, a, b: occurrences(t, word, a, b),
            lambda t, a, b: range(a + 1, b),
        ]

    def split(self, start: int, end: int, level: int) -> tuple[list[tuple[int, int]], int]:
        """Pieces from the first level at or after ``level`` that cuts ``[start, end)``, and the next level."""
        while level < len(self.levels):
            pieces = self.guard.pieces(start, end, self.levels[level](self.text, start, end))
            level += 1
            if len(pieces) > 1:
                return pieces, level
        return [(start, end)], level

    def fitting(self, budget: int) -> tuple[list[tuple[int, int]], list[int]]:
        """Consecutive pieces covering the text, each within ``budget`` unless nothing may cut it."""
        done: list[tuple[int, int]] = []
        done_sizes: list[int] = []
        pending = [(0, len(self.text), 0, self.sizes.count(0, len(self.text)))]
        while pending:
            start, end, level, size = pending.pop()
            if size <= budget:
                done.append((start, end))
                done_sizes.append(size)
                continue
            known = self.known.get((start, end, level)) if self.known is not None else None
            if known is None:
                pieces, next_level = self.split(start, end, level)
                sizes = self.sizes.count_many(pieces) if len(pieces) > 1 else []
                if self.known is not None:
                    self.known[(start, end, level)] = (pieces, next_level, sizes)
            else:
                pieces, next_level, sizes = known
            level = next_level
            if len(pieces) == 1:  # nothing may cut it: an indivisible unit
                done.append((start, end))
                done_sizes.append(size)
            elif max(sizes) <= budget:  # all fit: done in order, as popping them one by one would give
                done.extend(pieces)
                done_sizes.extend(sizes)
            else:
                pending.extend((a, b, level, n) for (a, b), n in zip(reversed(pieces), reversed(sizes), strict=False))
        return done, done_sizes


# How pieces of the last few texts split, and their sizes: a piece splits the same way whatever the budget
# (only whether it must split depends on it), so a Chunks rerun with a smaller chunk_size splits again only
# the pieces the last split kept whole. One table per text, keyed by the setting (the separators, the
# tokenizer's name and the protected spans' digest), then the piece and its level; at most
# _SETTINGS_PER_TEXT settings per text. A bounded child's splits come back to its parent (TextTables):
# a child at a new chunk_size of a 1 MB text split in 20-29 instead of 34-57 ms. On and off with the reuse
# of sentence cuts (core.tokens.segmentation.reuse_sentence_spans).
_SPLITS = TextTables(8_000_000, max_entries=8)
_SETTINGS_PER_TEXT = 4


def _setting_key(splitter: SentenceSplitter, tokenizer: Tokenizer, guard: CutGuard) -> tuple[str, ...] | None:
    """What a piece's split depends on besides the text, as plain values equal in a forked child and its parent;
    None for a tokenizer not known by name (a size function), whose splits are not kept."""
    name = splitter.tokenizer
    if not isinstance(name, str) or get_tokenizer(name) is not tokenizer:
        return None
    spans = hashlib.sha1(repr(guard.spans).encode()).hexdigest() if guard.spans else ""
    return (splitter.paragraph_separator, splitter.separator, name, spans)


class _KnownSplits:
    """One setting's entries of a text's table of splits: ``(setting, start, end, level) -> split``."""

    __slots__ = ("setting", "table")

    def __init__(self, table: dict, setting: tuple[str, ...]) -> None:
        self.table = table
        self.setting = setting

    def get(self, key: tuple[int, int, int]) -> tuple | None:
        return self.table.get((self.setting, *key))

    def __setitem__(self, key: tuple[int, int, int], split: tuple) -> None:
        self.table[(self.setting, *key)] = split


def _known_splits(text: str, setting: tuple[str, ...] | None) -> _KnownSplits | None:
    if not segmentation.reuse_enabled():
        _SPLITS.clear()  # reuse off forgets what was kept, as it does for the sentence cuts
        return None
    if setting is None:
        return None
    table = _SPLITS.table(text)
    # A copy of the keys (made at once: another session's split of the same text may be adding to the table).
    keys = list(table)
    settings = dict.fromkeys(key[0] for key in keys)  # in the order they came (a few hundred keys per setting)
    if setting not in settings and len(settings) >= _SETTINGS_PER_TEXT:
        oldest = next(iter(settings))  # a text's splits are bounded by its pieces, per setting
        for key in keys:
            if key[0] == oldest:
                table.pop(key, None)
    return _KnownSplits(table, setting)


class _TextSizes:
    """Sizes of spans of one text, each counted on its own text (as :class:`TokenIndex` sizes them from tokens)."""

    def __init__(self, tokenizer: Tokenizer, text: str) -> None:
        self.tokenizer = tokenizer
        self.text = text

    def count(self, start: int, end: int) -> int:
        return self.tokenizer.count(self.text[start:end])

    def count_many(self, pieces: Sequence[tuple[int, int]]) -> list[int]:
        return piece_sizes(self.tokenizer, self.text, pieces)


def _sentence_cuts(text: str, start: int, end: int) -> list[int]:
    return [s for s, _ in sentence_spans_within(text, start, end)[1:]]
