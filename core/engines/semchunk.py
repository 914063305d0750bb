"""semchunk as an engine: ``semchunk.chunkerify(token_counter, chunk_size)(text, overlap=...)``.

semchunk splits at the most meaningful separator available (newlines, tabs,
spaces, sentence and clause punctuation, then characters) and merges the pieces
back up to ``chunk_size`` tokens. It has no default size or token counter, so
ChunkScope picks them (512 tokens of tiktoken's cl100k_base, gpt-4's encoding, as
semchunk's README counts); its overlap default (none) is semchunk's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from core.engines.base import FrameworkSplitter, engine_summary
from core.engines.chunk_nodes import FrameworkChunk
from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.base import chunk_size_param
from core.splitters.registry import SPLITTERS
from core.tokens.bundled_data import TIKTOKEN_ENCODINGS, tiktoken_encoding

SEMCHUNK = "semchunk"
DISTRIBUTION = "semchunk"
TOKEN_COUNTERS = (*TIKTOKEN_ENCODINGS, "characters", "words")


def _count_words(text: str) -> int:
    return len(text.split())


def token_counter(name: str) -> Callable[[str], int] | Any:
    """What ``chunkerify`` gets: a loaded tiktoken encoding, ``len``, or a whitespace word count."""
    if name == "characters":
        return len
    if name == "words":
        return _count_words
    return tiktoken_encoding(name)


@SPLITTERS.register
@dataclass(frozen=True)
class SemchunkSplitter(FrameworkSplitter):
    """semchunk: the most meaningful separators first, pieces merged up to chunk_size tokens."""

    name = "semchunk"
    framework: ClassVar[str] = SEMCHUNK
    distribution: ClassVar[str] = DISTRIBUTION
    framework_class = "chunkerify"
    summary = engine_summary(SEMCHUNK, DISTRIBUTION, "semantic separators first, pieces merged up to chunk_size.")
    defaults_from = "semchunk:chunk"
    own_params = {
        "chunk_size": "semchunk requires one (no default): 512, as its README's examples.",
        "token_counter": "semchunk requires one (no default): tiktoken's cl100k_base, gpt-4's encoding.",
        "include_metadata": "ChunkScope's: semchunk's chunks carry no metadata; nodes inherit the document's.",
        "include_prev_next_rel": "ChunkScope's: semchunk's chunks have no links; this adds PREVIOUS/NEXT.",
    }

    chunk_size: int = chunk_size_param(512, "Largest chunk, in the token counter's units.")
    token_counter: str = param(
        "cl100k_base",
        "What sizes count: tiktoken's cl100k_base or o200k_base tokens, characters, or words.",
        choices=TOKEN_COUNTERS,
    )
    overlap: float | None = param(
        None, "Overlap: below 1, a share of chunk_size; from 1, tokens (none: no overlap).", ge=0, le=1_000_000
    )

    def validate(self) -> None:
        if self.overlap is not None and self.overlap >= 1 and self.overlap >= self.chunk_size:
            raise ConfigError(
                f"{self.name}: overlap ({self.overlap:g}) must be smaller than chunk_size ({self.chunk_size})"
            )

    @property
    def size_limit(self) -> int | None:
        return self.chunk_size if self.token_counter == "characters" else None

    def stand_in_sizes(self) -> tuple[int, int]:
        """semchunk's overlap in tokens (a share below 1 is of chunk_size), for a stand-in."""
        overlap = self.overlap or 0
        tokens = int(overlap * self.chunk_size) if overlap < 1 else int(overlap)
        return self.chunk_size, min(tokens, self.chunk_size - 1)

    def chunker(self) -> Any:
        """The configured semchunk chunker (built once per configuration)."""
        return _chunker(self.token_counter, self.chunk_size)

    def chunks(self, document: Document) -> list[FrameworkChunk]:
        overlap = self.overlap
        # semchunk reads a whole number as tokens and a fraction as a share: keep 2.0 meaning two tokens.
        if overlap is not None and overlap >= 1 and float(overlap).is_integer():
            overlap = int(overlap)
        try:
            texts, offsets = self.chunker()(document.text, overlap=overlap, offsets=True)
        except Exception as exc:  # e.g. semchunk recursing too deep on a pathological text
            raise self.failed(exc) from exc
        return [FrameworkChunk(text, start=start) for text, (start, _) in zip(texts, offsets, strict=True)]


@lru_cache(maxsize=32)
def _chunker(counter: str, chunk_size: int) -> Any:
    import semchunk

    return semchunk.chunkerify(token_counter(counter), chunk_size)
