"""What every loader shares."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import ClassVar, Literal

from core.limits import Limits
from core.params import Configurable, param
from core.schema import Document


@dataclass(frozen=True)
class Loader(Configurable):
    """Turns the bytes of one file into documents.

    Subclasses list the file ``extensions`` they read (lower case, with the dot)
    and implement :meth:`load_bytes`. Bad input raises a :class:`~core.errors.LoadError`
    subclass whose message names the file and the problem. The loader sets at least
    ``file_name`` and ``file_type`` metadata; :func:`core.loaders.load_bytes` adds
    the user's ``file_metadata`` and handles ``filename_as_id``, and hands the file to a
    framework's reader instead when ``reader`` names one (:mod:`core.loaders.readers`).
    """

    extensions: ClassVar[tuple[str, ...]] = ()
    # The extensions a folder walk loads (None: all of ``extensions``). A loader leaves out those
    # whose files in a folder are more often settings or data than documents (``.json``).
    folder_extensions: ClassVar[tuple[str, ...] | None] = None

    # Declared once here, so every loader offers it (core.loaders.readers runs the frameworks).
    reader: Literal["chunkscope", "llamaindex", "langchain", "markitdown"] = param(
        "chunkscope",
        "Who reads the file: ChunkScope's own parser (the options below), or a framework's reader as its users run "
        "it: LlamaIndex's SimpleDirectoryReader, LangChain's loader for the format, or markitdown.",
    )

    def validate(self) -> None:
        if self.reader != "chunkscope":
            from core.loaders.readers.choice import check_reader  # imports no framework

            check_reader(self)

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        raise NotImplementedError

    def load_within(self, data: bytes, file_name: str, limits: Limits) -> list[Document]:
        """Load under ``limits``. Only a loader whose work the file's size does not bound (a zip of
        XML) reads them; the upload and text limits are applied around every loader by
        :func:`core.loaders.load_bytes`."""
        return self.load_bytes(data, file_name)


# The element kinds the caller will read (None: every kind). Set by :func:`reading_elements`.
_ELEMENTS_READ: ContextVar[frozenset[str] | None] = ContextVar("elements_read", default=None)


@contextmanager
def reading_elements(kinds: Iterable[str] | None) -> Iterator[None]:
    """Loads inside this block may leave out the elements of other kinds than ``kinds`` (None: keep all).

    A hint for work nothing reads: the Markdown loader then skips its structure parse where
    the text cannot hold those kinds (:func:`core.loaders.markdown.markdown_tables_and_title`),
    the text and code loaders their paragraph and code blocks unless those kinds are read.
    The text and the metadata are the same either way. Only for callers that never keep or
    cache the documents for another use (``chunkscope batch``'s workers).
    """
    token = _ELEMENTS_READ.set(None if kinds is None else frozenset(kinds))
    try:
        yield
    finally:
        _ELEMENTS_READ.reset(token)


def elements_read() -> frozenset[str] | None:
    """The kinds the current caller reads (None: all): see :func:`reading_elements`."""
    return _ELEMENTS_READ.get()
