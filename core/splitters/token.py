"""Token splitter: windows of exactly ``chunk_size`` tokens, ``chunk_overlap`` shared.

Tokens come from the tokenizer's ``spans()`` (character offsets), so every
window is an exact slice of the source: from its first token's start to just
before the next window's first new token (characters no token covers, such as
zero-width spaces, stay with the window before them), trimmed of whitespace.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.params import param
from core.schema import Document
from core.splitters.base import SizedSplitter, Span, trim_span
from core.splitters.registry import SPLITTERS
from core.tokenizers import TOKENIZER_NAMES


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

    chunk_size: int = param(
        1024, "Tokens per window; a window may start inside a word (LlamaIndex packs whole words).", ge=1,
        le=1_000_000,
    )
    chunk_overlap: int = param(20, "Tokens shared by consecutive windows; below chunk_size.", ge=0, le=1_000_000)
    tokenizer: str = param(
        "model",
        "What a token is: a character, a whitespace word, or the embedding model's token (default).",
        choices=TOKENIZER_NAMES,
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
