"""Token splitter: windows of exactly ``chunk_size`` tokens, ``chunk_overlap`` shared.

Tokens come from the tokenizer's ``spans()`` (character offsets), so every
window is an exact slice of the source: from its first token's start to just
before the next window's first new token (characters no token covers, such as
zero-width spaces, stay with the window before them), trimmed of whitespace.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.codegen import Code, CodeSnippet, call, langchain_character, llamaindex_token_splitter, split_with
from core.errors import ConfigError
from core.schema import Document
from core.segmentation import trim_span
from core.splitters.base import SizedSplitter, Span, chunk_overlap_param, chunk_size_param, tokenizer_param
from core.splitters.registry import SPLITTERS
from core.tokenizers import TOKENIZER_NAMES, SizeFn


@SPLITTERS.register
@dataclass(frozen=True)
class TokenSplitter(SizedSplitter):
    """Fixed windows over the tokenizer's tokens, as LangChain's TokenTextSplitter.

    Windows step by ``chunk_size - chunk_overlap`` tokens; the last window ends
    at the last token. A window may start or end inside a word when the
    tokenizer splits words into pieces (LlamaIndex's TokenTextSplitter instead
    packs whole words; here the windows are exact token counts).
    """

    name = "token"
    summary = "Windows of exactly chunk_size tokens, consecutive windows sharing chunk_overlap tokens."
    framework_defaults = {
        "LlamaIndex TokenTextSplitter": {"chunk_size": 1024, "chunk_overlap": 20},
        "LangChain TokenTextSplitter": {"chunk_size": 4000, "chunk_overlap": 200},
    }

    chunk_size: int = chunk_size_param(1024)
    chunk_overlap: int = chunk_overlap_param(20)
    tokenizer: str | SizeFn = tokenizer_param("model")

    def validate(self) -> None:
        super().validate()
        if callable(self.tokenizer):
            raise ConfigError(
                f"{self.name}: windows are cut between tokens, and a size function gives no token positions; "
                f"name a tokenizer ({', '.join(TOKENIZER_NAMES)})"
            )

    def spans(self, document: Document) -> list[Span]:
        text = document.text
        tokens = self.get_tokenizer().spans(text)
        if not tokens:
            trimmed = trim_span(text, 0, len(text))
            return [Span(*trimmed)] if trimmed else []
        step = self.chunk_size - self.chunk_overlap
        spans: list[Span] = []
        first = 0
        while True:
            last = min(first + self.chunk_size, len(tokens))  # exclusive
            start = tokens[first][0] if first else 0
            end = tokens[last][0] if last < len(tokens) else len(text)
            trimmed = trim_span(text, start, end)
            if trimmed is not None and (not spans or trimmed[1] > spans[-1].end):
                spans.append(Span(*trimmed))
            if last >= len(tokens):
                return spans
            first += step

    def llamaindex(self, code: CodeSnippet) -> str:
        code.note(
            "token: LlamaIndex's TokenTextSplitter first cuts on spaces and newlines, then packs words up to "
            "chunk_size tokens; ChunkScope cuts the token sequence itself."
        )
        return llamaindex_token_splitter(code, self.chunk_size, self.chunk_overlap, self.tokenizer)

    def langchain(self, code: CodeSnippet) -> str:
        if self.tokenizer == "model":
            code.use("from langchain_text_splitters import SentenceTransformersTokenTextSplitter")
            code.needs_model = True
            splitter = call(
                "SentenceTransformersTokenTextSplitter",
                model_name=Code("EMBED_MODEL"),
                tokens_per_chunk=self.chunk_size,
                chunk_overlap=self.chunk_overlap,
            )
            code.note(
                "token: SentenceTransformersTokenTextSplitter decodes token ids back to text, so chunks may "
                "differ from the source in spacing; ChunkScope's chunks are exact slices."
            )
            return split_with(splitter)
        code.note(
            f"token: LangChain's TokenTextSplitter counts tiktoken tokens; for {self.tokenizer} this uses "
            "CharacterTextSplitter with the same unit."
        )
        separator = "" if self.tokenizer == "characters" else " "
        return split_with(langchain_character(code, separator, self.chunk_size, self.chunk_overlap, self.tokenizer))
