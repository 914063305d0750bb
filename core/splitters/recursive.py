"""Recursive character splitter: LangChain's RecursiveCharacterTextSplitter, with exact spans.

The text is cut at the first separator of a hierarchy that occurs in it
(default: blank lines, then lines, then spaces, then between any two
characters). Pieces that fit ``chunk_size`` are packed greedily with
:func:`merge_pieces`; a piece that does not fit is split again with the
separators after the one that cut it, and its chunks stand on their own (they
are not packed together with the neighbouring pieces), as in LangChain.

Language presets replace the default hierarchy with one that prefers the
language's structure: top-level definitions first, then nested ones, then
blank lines, lines, words and characters. A cut never falls inside a table row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import accumulate, compress, count, islice
from operator import le, lt, sub
from typing import Any, Literal

import regex

from core.errors import ConfigError, as_typed
from core.params import param
from core.runtime.regex_check import MAX_PATTERN_LENGTH
from core.schema import Document
from core.splitters.base import SizedSplitter, Span
from core.splitters.compat import LANGCHAIN, compat_param, langchain_merge, mirror_engine, refuse_unmirrored
from core.splitters.fast.literal_cuts import literal_bounds, literal_of
from core.splitters.fast.packing import merge_bounds, piece_bounds
from core.splitters.nodes import TABLE_ELEMENTS
from core.splitters.pieces import CutGuard, piece_sizes, protected_cuts
from core.splitters.recursive_languages import (
    LANGCHAIN_LANGUAGE,
    LANGUAGES,
    PRESETS,
    langchain_separators,
    literal_braces,
)
from core.splitters.registry import SPLITTERS
from core.tokens.segmentation import trim_span
from core.tokens.tokenizers import Tokenizer
from core.translate.framework_code import langchain_recursive
from core.translate.snippet import Code, CodeSnippet, call, split_with

MAX_SEPARATORS = 20
# Matching one separator over one document may take at most this long.
REGEX_TIMEOUT_SECONDS = 5.0


@SPLITTERS.register
@dataclass(frozen=True)
class RecursiveSplitter(SizedSplitter):
    """Split at the most structural separator that occurs, recurse into pieces that are too big, pack.

    Differences from LangChain, on purpose: a piece exactly ``chunk_size`` long
    is kept rather than split again; single characters are always the last
    resort (custom separators get it appended), so only a table row can exceed
    ``chunk_size``; chunks are exact source spans trimmed of surrounding
    whitespace.

    ``compat="langchain"`` cuts as LangChain's RecursiveCharacterTextSplitter does:
    a language's separators are LangChain's own (``get_separators_for_language``, as
    ``from_language`` uses them); a piece of exactly ``chunk_size`` is split further;
    your separators fall back to single characters only if they include ``""``
    (written as an empty entry); table rows are not protected; a separator stays at
    the start of the piece after it (LangChain's ``keep_separator=True``; ``end`` is refused).
    """

    name = "recursive"
    light_once_indexed = True
    summary = "Split at paragraphs, then lines, words, characters (or a language's structure), then pack."
    keeps_table_rows = True
    elements_read = TABLE_ELEMENTS  # build_nodes' table headers and the rows it keeps whole
    framework_defaults = {"LangChain RecursiveCharacterTextSplitter": {"chunk_size": 4000, "chunk_overlap": 200}}

    language: Literal[LANGUAGES] = param(  # type: ignore[valid-type]
        "none",
        "Separator preset that prefers the language's structure (definitions, headings, tags); "
        "'none' is blank lines, lines, spaces, characters.",
    )
    separators: tuple[str, ...] | None = param(
        None,
        "Your own separators, most preferred first (replaces the preset). "
        "Unlike LangChain, single characters always remain the last resort.",
        regex="is_separator_regex",
    )
    is_separator_regex: bool = param(
        False,
        "Treat your separators as regular expressions (at most 200 characters, no nested quantifiers).",
        advanced=True,
    )
    keep_separator: Literal["start", "end"] = param(
        "start",
        "Which piece a separator stays with: the one after it (start, LangChain's default) or before it (end).",
        advanced=True,
    )
    compat: str = compat_param(
        LANGCHAIN, sets="langchain: LangChain's language separators, a piece of exactly chunk_size split further"
    )

    def validate(self) -> None:
        super().validate()
        if self.compat == LANGCHAIN and self.language != "none":
            langchain_separators(self.language)
        refuse_unmirrored(
            self,
            (
                self.keep_separator != "start",
                "keeps each separator at the start of the piece after it, as LangChain's keep_separator=True does",
                f"keep_separator={self.keep_separator}",
            ),
        )
        if not self.separators:
            return
        if self.language != "none":
            raise ConfigError(f"{self.name}: set either language ({self.language}) or separators, not both")
        if len(self.separators) > MAX_SEPARATORS:
            raise ConfigError(f"{self.name}: separators holds {len(self.separators)} entries, at most {MAX_SEPARATORS}")
        for separator in self.separators:
            if len(separator) > MAX_PATTERN_LENGTH:
                raise ConfigError(
                    f"{self.name}: separator {separator[:20]!r}… is longer than {MAX_PATTERN_LENGTH} characters"
                )

    def separator_patterns(self) -> list[regex.Pattern[str]]:
        """The hierarchy in force, compiled; single characters come after it."""
        if self.compat == LANGCHAIN and not self.separators and self.language != "none":
            return _compile("", tuple(literal_braces(s) for s in langchain_separators(self.language)), True)
        separators = self.separators or ()
        if self.compat == LANGCHAIN and "" in separators:
            # LangChain cuts between characters at "" and never tries a separator after it.
            separators = separators[: separators.index("")]
            if not separators:
                return []
        return _compile(self.language, separators, self.is_separator_regex)

    @property
    def _characters_last(self) -> bool:
        """Whether single characters come after the separators (LangChain: only when ``""`` is one of them)."""
        return self.compat != LANGCHAIN or not self.separators or "" in self.separators

    def spans(self, document: Document) -> list[Span]:
        text = document.text
        if not text:
            return []
        splitter = _Recursion(
            text=text,
            tokenizer=self.get_tokenizer(),
            guard=CutGuard() if self.compat == LANGCHAIN else protected_cuts(document),
            chunk_size=self.chunk_size,
            chunk_overlap=self.chunk_overlap,
            keep_at_start=self.keep_separator == "start",
            split_full=self.compat == LANGCHAIN,
            characters_last=self._characters_last,
        )
        return splitter.chunks(0, len(text), self.separator_patterns())

    def mirror(self) -> Any:
        # keep_separator "start" (the only one the compat mode takes) is LangChain's True.
        params: dict[str, Any] = {"length_function": self.tokenizer}
        if self.separators:
            params.update(separators=self.separators, is_separator_regex=self.is_separator_regex)
        elif self.language != "none":
            params["language"] = LANGCHAIN_LANGUAGE.get(self.language, self.language)
        return mirror_engine(
            self, "langchain.recursive", chunk_size=self.chunk_size, chunk_overlap=self.chunk_overlap, **params
        )

    def llamaindex(self, code: CodeSnippet) -> str:
        code.use("from llama_index.core.node_parser import LangchainNodeParser")
        code.note(
            "recursive: LlamaIndex has no recursive character splitter of its own; LangchainNodeParser wraps "
            "LangChain's RecursiveCharacterTextSplitter (pip install langchain-text-splitters)."
        )
        return call("LangchainNodeParser", Code(self._langchain_splitter(code)))

    def langchain(self, code: CodeSnippet) -> str:
        return split_with(self._langchain_splitter(code))

    def _langchain_splitter(self, code: CodeSnippet) -> str:
        differences = self.langchain_differences()
        if differences:
            code.note(
                "recursive: ChunkScope ran its own recursive splitter; LangChain's RecursiveCharacterTextSplitter "
                "here has the same separators, sizes and unit, and its chunks are the app's except where "
                + "; or where ".join(differences)
                + ": there they differ (the Export page counts how many; compat=langchain cuts as LangChain does).",
                at_call=True,
            )
        return langchain_recursive(
            code,
            self.chunk_size,
            self.chunk_overlap,
            self.tokenizer,
            language=self.language,
            separators=self.framework_separators(),
            is_separator_regex=self.is_separator_regex,
            keep_separator=self.keep_separator,
        )

    def langchain_differences(self) -> list[str]:
        """Where LangChain's RecursiveCharacterTextSplitter, called as the scripts call it, cuts otherwise.

        Each is a case found to change chunks (tests/test_export_notes.py): table rows
        this splitter keeps whole; a language preset that is not LangChain's; counting
        tokens or words, a piece of exactly ``chunk_size`` (kept here, cut further
        there: its finer pieces can count more); a capturing group in a separator's
        regex, which LangChain's ``re.split(f"({separator})")`` pairs with the pieces.
        Elsewhere the two cut the same chunks. None in ``compat="langchain"``.
        """
        if self.compat == LANGCHAIN:
            return []
        found = ["ChunkScope keeps a table row whole (a chunk over a Markdown, PDF, Office or HTML table)"]
        if self.language != "none" and not self.separators:
            found.append(
                f"the {self.language} preset's separators are not LangChain's (from_language), so some cuts fall elsewhere"
            )
        unit = self.size_unit if isinstance(self.size_unit, str) else "size-function"
        if unit != "characters":
            found.append(
                f"a piece is exactly chunk_size {unit} long (ChunkScope keeps it whole, LangChain cuts it further)"
            )
        if self.is_separator_regex and any(pattern.groups for pattern in self.separator_patterns()):
            found.append(
                "a separator's regular expression has a capturing group, which LangChain's split pairs with the "
                "pieces (its split fails or repeats text: write (?:...) instead)"
            )
        return found

    def framework_separators(self) -> list[str] | None:
        """The separators as LangChain takes them, meaning what this splitter cuts with (None: the defaults).

        Single characters, this splitter's last resort outside ``compat="langchain"``,
        are LangChain's ``""``.
        """
        if not self.separators:
            return None
        typed = [separator for separator in self.separators if separator]  # an empty one is the characters, added last
        return [*typed, ""] if self._characters_last else typed


@dataclass(slots=True)
class _Recursion:
    text: str
    tokenizer: Tokenizer
    guard: CutGuard
    chunk_size: int
    chunk_overlap: int
    keep_at_start: bool
    # LangChain splits a piece of exactly chunk_size further (it keeps only pieces below it).
    split_full: bool = False
    # Single characters come after the separators.
    characters_last: bool = True

    def chunks(self, start: int, end: int, separators: Sequence[regex.Pattern[str]]) -> list[Span]:
        """Chunks of ``text[start:end]``, cut by the first of ``separators`` that can cut it.

        Single characters come after ``separators``; a piece nothing may cut
        (a table row, or one character over the budget) is a chunk on its own.
        Pieces are held as their boundaries (piece i is ``bounds[i]:bounds[i + 1]``).
        """
        bounds: list[int] = []
        rest: Sequence[regex.Pattern[str]] | None = None  # None: nothing finer is left
        for i, separator in enumerate(separators):
            # A plain string with no row to guard is cut by one finditer scan (fast.literal_cuts), with the same pieces.
            literal = literal_of(separator.pattern) if not self.guard else None
            if literal:
                bounds = literal_bounds(self.text, start, end, literal, self.keep_at_start)
            else:
                bounds = piece_bounds(self.guard.pieces(start, end, self.cuts(separator, start, end)))
            if len(bounds) > 2:
                rest = separators[i + 1 :]
                break
        else:
            bounds = piece_bounds(self.guard.pieces(start, end, range(start + 1, end))) if self.characters_last else []
        if len(bounds) <= 2:
            return self.whole(start, end)
        # Running sums of the pieces' sizes: sized in characters, the boundaries are already that.
        if self.tokenizer.name == "characters":
            prefix = bounds
        else:
            pieces = list(zip(bounds, bounds[1:], strict=False))
            prefix = [0, *accumulate(piece_sizes(self.tokenizer, self.text, pieces))]
        out: list[Span] = []
        # Runs of pieces that fit are merged; each oversized piece between them is cut
        # finer. Slicing the runs out (rather than a Python step per piece) keeps the
        # common case, a few oversized pieces among thousands, at C speed.
        limit = self.chunk_size
        # operator.le/lt rather than int.__lt__, which answers NotImplemented (truthy) for a float size.
        too_big = partial(le if self.split_full else lt, limit)
        sizes = map(sub, islice(prefix, 1, None), prefix)
        oversized = list(compress(count(), map(too_big, sizes)))
        if not oversized:
            return self.merge(bounds, prefix)
        run_start = 0
        for index in oversized:
            out.extend(self.merge(bounds[run_start : index + 1], prefix[run_start : index + 1]))
            run_start = index + 1
            piece_start, piece_end = bounds[index], bounds[index + 1]
            if rest is None:
                out.extend(self.whole(piece_start, piece_end))
            else:
                out.extend(self.chunks(piece_start, piece_end, rest))
        out.extend(self.merge(bounds[run_start:], prefix[run_start:]))
        return out

    def whole(self, start: int, end: int) -> list[Span]:
        """A piece nothing cuts further, as a chunk: trimmed of whitespace.

        LangChain (``split_full``) trims only what it packs: a piece too big to pack
        that no separator is left to cut is a chunk exactly as it is.
        """
        if self.split_full and start < end:
            size = end - start if self.tokenizer.name == "characters" else self.tokenizer.count(self.text[start:end])
            if size >= self.chunk_size:
                return [Span(start, end)]
        trimmed = trim_span(self.text, start, end)
        return [Span(*trimmed)] if trimmed else []

    def cuts(self, separator: regex.Pattern[str], start: int, end: int) -> list[int]:
        try:
            matches = separator.finditer(self.text, start, end, timeout=REGEX_TIMEOUT_SECONDS)
            return [match.start() if self.keep_at_start else match.end() for match in matches]
        except TimeoutError:
            raise ConfigError(
                f"recursive: separator {as_typed(separator.pattern[:40])} took longer than "
                f"{REGEX_TIMEOUT_SECONDS:g} seconds on this document"
            ) from None

    def merge(self, bounds: list[int], prefix: list[int]) -> list[Span]:
        if len(bounds) < 2:
            return []
        if self.split_full:
            # LangChain's own packing: it also keeps a chunk that, trimmed, lies inside the one before.
            sizes = list(map(sub, islice(prefix, 1, None), prefix))
            groups = langchain_merge(sizes, self.chunk_size, self.chunk_overlap, 0)
            trimmed = (trim_span(self.text, bounds[first], bounds[last + 1]) for first, last in groups)
            return [Span(*span) for span in trimmed if span]
        return merge_bounds(bounds, prefix, self.chunk_size, self.chunk_overlap, self.text)


@lru_cache(maxsize=64)
def _compile(language: str, separators: tuple[str, ...], is_regex: bool) -> list[regex.Pattern[str]]:
    if separators:
        sources = list(separators) if is_regex else [re.escape(s) for s in separators]
    else:
        sources = PRESETS[language]
    return [regex.compile(source, regex.VERSION0) for source in sources if source]
