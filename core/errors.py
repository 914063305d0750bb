"""Typed errors. Every message is one sentence a user can act on."""

from __future__ import annotations


def as_typed(text: str) -> str:
    """``text`` quoted as a user typed it, for a sentence: backslashes as they are (``repr`` doubles them, so a
    refusal of ``\\s+`` read ``'\\\\s+'``), line breaks and other unprintable characters escaped, so the
    sentence stays one line."""
    shown = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return f"'{shown}'"


class ChunkScopeError(Exception):
    """Base of every error ChunkScope raises on purpose."""


class ConfigError(ChunkScopeError, ValueError):
    """A parameter or configuration is invalid (names the parameter and the problem)."""


class LoadError(ChunkScopeError):
    """A file could not be turned into documents; the message names the file and the problem."""

    def __init__(self, file_name: str, problem: str) -> None:
        self.file_name = file_name
        self.problem = problem
        super().__init__(f"{file_name}: {problem}")

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # Rebuilt from its two parts, so it crosses a pipe from a forked child (core.runtime.bounded) unchanged.
        return type(self), (self.file_name, self.problem)


class UnsupportedFileError(LoadError):
    """No loader handles this kind of file."""


class EmptyDocumentError(LoadError):
    """The file holds no text (empty, whitespace only, or a PDF without a text layer)."""


class EncryptedDocumentError(LoadError):
    """The file is encrypted and cannot be read without a password."""


class CorruptDocumentError(LoadError):
    """The file is damaged or not what its extension says."""


class TooLargeError(LoadError):
    """The file or its text is beyond the configured limits."""


class WorkLimitError(LoadError):
    """Work on a file (loading or splitting it) was stopped at a limit; names the file, the work and the limit."""


class WorkTimeoutError(WorkLimitError):
    """Loading or splitting a file took longer than its deadline, so it was stopped."""


class WorkMemoryError(WorkLimitError):
    """Loading or splitting a file needed more memory than its ceiling, so it was stopped."""


class ModelUnavailableError(ChunkScopeError):
    """A model that a component needs is not installed locally (nothing is downloaded at run time)."""
