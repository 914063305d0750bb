"""What every framework engine shares: the base class, its arguments, and its version shown beside its name.

An engine runs one real framework splitter (LlamaIndex, LangChain, chonkie,
semchunk): it declares the framework's parameters once, with the framework's own
defaults, calls the framework once per document, and turns the chunks it returns
into nodes with :func:`core.engines.chunk_nodes.framework_nodes`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any, ClassVar

from core.engines.chunk_nodes import FrameworkChunk, framework_nodes
from core.errors import ConfigError
from core.runtime.installed import framework_version
from core.schema import Document, Node
from core.splitters.base import Span, Splitter
from core.translate.framework_code import langchain_recursive, llamaindex_tokenizer
from core.translate.snippet import Code, CodeSnippet, call, split_with

# The parameters a stand-in at an engine's size passes on (whichever the engine declares): size, overlap, unit.
SIZE_PARAMS = frozenset(
    {"chunk_size", "chunk_sizes", "chunk_overlap", "overlap", "tokenizer", "encoding_name", "token_counter"}
)
_LINK_PARAMS = ("include_metadata", "include_prev_next_rel")

# The frameworks' names for units -> ChunkScope's tokenizer names (core.tokens.tokenizers).
_UNITS = {"cl100k_base": "cl100k", "o200k_base": "o200k", "character": "characters", "word": "words"}


def engine_summary(framework: str, distribution: str, what: str) -> str:
    """``"LlamaIndex 0.14.25 · SentenceSplitter: ..."``: the framework and its version beside what it does."""
    installed = framework_version(distribution)
    release = installed if installed else f"(not installed: pip install {distribution})"
    return f"{framework} {release} · {what}"


class FrameworkArg:
    """An argument whose value at run time is not its own Python text: a loaded tokenizer, an enum member, parsers.

    :meth:`value` is what the framework is called with; :meth:`code` writes the
    same argument as Python (its imports and setup go to ``code``).
    """

    def value(self) -> Any:
        raise NotImplementedError

    def code(self, code: CodeSnippet) -> Code:
        raise NotImplementedError


def run_values(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The framework's arguments as it is called with them: each :class:`FrameworkArg` by its value."""
    return {key: arg.value() if isinstance(arg, FrameworkArg) else arg for key, arg in kwargs.items()}


def code_values(kwargs: Mapping[str, Any], code: CodeSnippet) -> dict[str, Any]:
    """The same arguments as Python: each :class:`FrameworkArg` by its code (its imports go to ``code``)."""
    return {key: arg.code(code) if isinstance(arg, FrameworkArg) else arg for key, arg in kwargs.items()}


@dataclass(frozen=True)
class FrameworkSplitter(Splitter):
    """Base of the framework engines: a real framework splitter behind ChunkScope's Splitter API.

    Subclasses set the class attributes below, declare the framework's parameters
    (same names and defaults where the framework has them) and implement :meth:`chunks`.
    """

    # Who does the splitting: "LlamaIndex", the installed distribution, and the framework's class.
    framework: ClassVar[str] = ""
    distribution: ClassVar[str] = ""
    framework_class: ClassVar[str] = ""
    # "module:qualname" of the callable whose signature holds the framework's defaults.
    defaults_from: ClassVar[str] = ""
    # Our parameters that are not an argument of the framework's class, and why. Every other parameter is the
    # framework argument of the same name, declared with the framework's default (tests/test_engines.py checks).
    own_params: ClassVar[Mapping[str, str]] = {}
    # The framework reads HTML markup (HTMLNodeParser, HTMLHeaderTextSplitter): it is given the page's source.
    reads_markup: ClassVar[bool] = False
    # LangChain's header splitters: split_text gives Documents, so LangchainNodeParser cannot wrap them.
    splits_to_documents: ClassVar[bool] = False

    @classmethod
    def title(cls) -> str:
        """The framework and its class, as its users know them: ``LlamaIndex SentenceSplitter``."""
        return f"{cls.framework} {cls.framework_class}"

    def chunks(self, document: Document) -> list[FrameworkChunk]:
        """The framework's chunks of ``document``, in its order (one call to the framework)."""
        raise NotImplementedError

    def source_text(self, document: Document) -> str:
        """What the framework is given: the document's text, or for an engine that reads markup, its markup.

        A document not loaded from HTML has no markup of its own: its text is read
        as markup, as the framework reads whatever text it is handed (and
        :meth:`unsuited_reason` says so). Spans are always found in the text.
        """
        if self.reads_markup and document.markup is not None:
            return document.markup
        return document.text

    def unsuited_reason(self, document: Document) -> str | None:
        if not self.reads_markup or document.markup is not None:
            return None
        name = document.metadata.get("file_name", "this document")
        kind = document.metadata.get("file_type")
        return (
            f"{self.framework}'s {self.framework_class} reads HTML markup, and {name}{f' ({kind})' if kind else ''} "
            "is not an HTML page, so its text is read as markup; pick a splitter that cuts text"
        )

    # -- the framework's object, built and written from one set of arguments ---------------------

    def framework_target(self) -> str:
        """``"module:qualname"`` of what :meth:`build_framework` calls: by default the class ``defaults_from`` reads."""
        return self.defaults_from.removesuffix(".__init__")

    def framework_kwargs(self) -> dict[str, Any]:
        """The framework's arguments, declared once: :meth:`build_framework` runs them, :meth:`framework_call` writes them.

        Values are plain Python (written with ``repr``) or :class:`FrameworkArg`.
        """
        raise NotImplementedError

    def prepare(self) -> None:
        """What the framework's work needs that is the same for every document and is ChunkScope's to do: the
        framework's module imported and the bundled tiktoken encoding this engine counts in loaded. The server
        calls it before forking the bounded child that splits, so every child inherits it (a LlamaIndex child
        that imported NLTK itself took 2-3 s a rerun); it never runs the framework's splitting code.
        """
        from core.tokens.bundled_data import TIKTOKEN_ENCODINGS, tiktoken_encoding

        import_module(self.framework_target().partition(":")[0])
        for name in ("tokenizer", "encoding_name", "token_counter"):
            unit = getattr(self, name, None)
            if isinstance(unit, str) and unit in TIKTOKEN_ENCODINGS:
                tiktoken_encoding(unit)

    def build_framework(self) -> Any:
        """The framework's splitter: ``framework_target()(**framework_kwargs())``."""
        module, _, qualname = self.framework_target().partition(":")
        target: Any = import_module(module)
        for part in qualname.split("."):
            target = getattr(target, part)
        kwargs = self.framework_kwargs()
        return target(**run_values(kwargs))

    def split_document(self, document: Document) -> list[Node]:
        # A framework may print (LlamaIndex: "Metadata length … is close to chunk size"): to stderr, never into
        # a machine output on stdout such as `chunkscope split --format jsonl`.
        with contextlib.redirect_stdout(sys.stderr):
            chunks = self.chunks(document)
        return framework_nodes(
            document,
            chunks,
            include_metadata=self.include_metadata,
            include_prev_next_rel=self.include_prev_next_rel,
        )

    def spans(self, document: Document) -> list[Span]:
        return [Span(node.start_char, node.end_char) for node in self.split_document(document)]

    @property
    def covers_text(self) -> bool:
        """True when the framework's chunks hold every non-whitespace character of the source."""
        return True

    @property
    def size_unit(self) -> str:
        """What the framework's sizes count, as ChunkScope's tokenizer name (``cl100k``, ``words``, ...)."""
        for name in ("tokenizer", "encoding_name", "token_counter"):
            if isinstance(unit := getattr(self, name, None), str):
                return _UNITS.get(unit, unit)
        return "characters"

    @property
    def level_sizes(self) -> tuple[int, ...]:
        """The framework's chunk size(s) in :attr:`size_unit`: the node-count guard (core.limits) estimates from them.

        Its overlap is left out (the framework bounds it its own way), so the
        estimate is low, never high: a fair request is not refused.
        """
        sizes = getattr(self, "chunk_sizes", None) or [getattr(self, "chunk_size", 0)]
        return tuple(size for size in sizes if size)

    @property
    def size_limit(self) -> int | None:
        """None: the framework's sizes are not counted in a unit ChunkScope measures (subclasses say when they are)."""
        return None

    @property
    def overlap_limit(self) -> int | None:
        """None: the framework bounds its overlap in its own way (separators, whole splits)."""
        return None

    # -- the code the Export page writes --------------------------------------------------

    def framework_call(self, code: CodeSnippet) -> str:
        """The call :meth:`build_framework` makes, as Python (its imports and setup go to ``code``)."""
        module, _, qualname = self.framework_target().partition(":")
        code.use(f"from {module} import {qualname.split('.')[0]}")
        kwargs = self.framework_kwargs()
        return call(qualname, **code_values(kwargs, code))

    def llamaindex(self, code: CodeSnippet) -> str:
        """LlamaIndex's engines: the call that ran. LangChain's: the same splitter in LlamaIndex's LangchainNodeParser.

        Others have no LlamaIndex equivalent: :meth:`llamaindex_stand_in` writes the closest one and says so at the call.
        """
        if self.framework == "LlamaIndex":
            return self.framework_call(code)
        if self.framework == "LangChain" and not self.splits_to_documents:
            code.use("from llama_index.core.node_parser import LangchainNodeParser")
            return call("LangchainNodeParser", Code(self.framework_call(code)))
        return self.llamaindex_stand_in(code)

    def langchain(self, code: CodeSnippet) -> str:
        """LangChain's engines: the call that ran; the others' closest LangChain splitter, said so at the call."""
        if self.framework == "LangChain":
            return split_with(self.framework_call(code))
        return self.langchain_stand_in(code)

    def llamaindex_stand_in(self, code: CodeSnippet) -> str:
        """A SentenceSplitter at this engine's size, overlap and unit (engines with a closer class override this)."""
        size, overlap = self.stand_in_sizes()
        self.stand_in_note(code, "LlamaIndex", "SentenceSplitter", size, overlap)
        code.use("from llama_index.core.node_parser import SentenceSplitter")
        tokenizer = llamaindex_tokenizer(code, self.size_unit)
        return call("SentenceSplitter", chunk_size=size, chunk_overlap=overlap, tokenizer=tokenizer)

    def langchain_stand_in(self, code: CodeSnippet) -> str:
        """A RecursiveCharacterTextSplitter at this engine's size, overlap and unit (or a closer class, overridden)."""
        size, overlap = self.stand_in_sizes()
        self.stand_in_note(code, "LangChain", "RecursiveCharacterTextSplitter", size, overlap)
        return split_with(langchain_recursive(code, size, overlap, self.size_unit))

    def stand_in_sizes(self) -> tuple[int, int]:
        """This engine's chunk size and overlap in :attr:`size_unit`, for a stand-in (1024 and 0 where it has none)."""
        size = getattr(self, "chunk_size", None) or max(self.level_sizes, default=1024)
        overlap = getattr(self, "chunk_overlap", 0) or 0
        return size, min(overlap, size - 1)

    def stand_in_note(
        self,
        code: CodeSnippet,
        library: str,
        stand_in: str,
        size: int | None = None,
        overlap: int | None = None,
        *,
        carries: Iterable[str] = (),
        partly: Mapping[str, str] | None = None,
    ) -> None:
        """Say, at the call, that ``stand_in`` replaces this engine's class in ``library``, what it keeps, and every
        parameter it does not carry over (:meth:`not_carried`). A stand-in given ``size`` carries this engine's
        size, overlap and unit; ``carries`` names the other parameters its call is made from, ``partly`` those it
        carries in part (a name -> which part)."""
        kept = ""
        carried = set(carries)
        if size is not None:
            unit = self.size_unit if isinstance(self.size_unit, str) else "your size function's units"
            kept = f" with the same chunk_size ({size}), chunk_overlap ({overlap or 0}) and unit ({unit})"
            carried |= SIZE_PARAMS
        dropped = self.not_carried(carried, partly or {})
        left = f"; it takes none of {', '.join(dropped)}" if dropped else ""
        code.note(
            f"{self.name}: ChunkScope ran {self.framework} {self.framework_class}, which {library} has no "
            f"equivalent of; {stand_in} stands in{kept}{left}, so chunks differ (the Export page counts how many).",
            at_call=True,
        )

    def not_carried(self, carried: Collection[str], partly: Mapping[str, str] | None = None) -> list[str]:
        """Each declared parameter outside ``carried``: what a stand-in's call has no argument for, ``(changed)``
        where it is not at its default; one in ``partly`` as ``name beyond its part`` (``tags beyond its headings``).

        Names only: a value may be a user's text, which never reaches a comment (it would be quoted there).
        The node links (``include_metadata``, ``include_prev_next_rel``) at their defaults count as carried:
        both frameworks' chunks inherit the document's metadata as ChunkScope's nodes do by default.
        """
        dropped = []
        for spec in self.params():
            value = getattr(self, spec.name)
            if spec.name in carried or (spec.name in _LINK_PARAMS and value == spec.default):
                continue
            beyond = f" beyond {partly[spec.name]}" if partly and spec.name in partly else ""
            changed = " (changed)" if value != spec.default else ""
            dropped.append(f"{spec.name}{beyond}{changed}")
        return dropped

    def failed(self, exc: Exception) -> ConfigError:
        """The framework's own error, as a sentence naming the engine.

        Most come from settings (LlamaIndex's "metadata longer than chunk size"); a
        framework that fails on the text itself (semchunk recursing too deep) is
        said the same way, so a page shows the sentence instead of a traceback.
        """
        return ConfigError(f"{self.name}: {self.framework} {self.framework_class} refused: {type(exc).__name__}: {exc}")


def no_headings_reason(engine: FrameworkSplitter, document: Document) -> str:
    """What the pages say beside a heading splitter's result on a document without the headings it cuts at."""
    name = document.metadata.get("file_name", "this document")
    kind = document.metadata.get("file_type")
    return (
        f"{engine.framework}'s {engine.framework_class} cuts at Markdown headings, and {name}"
        f"{f' ({kind})' if kind else ''} has none it recognises, so the whole document is one chunk; "
        "pick a splitter that cuts by size"
    )
