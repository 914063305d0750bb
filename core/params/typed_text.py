"""Typed text: how a person writes a parameter's value (a form's box, a ``--set``, a link), read and written by
one escape rule, and how a list parameter is written as comma text or JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

# -- typed text: one escape rule for every box, --set and link ---------------------------------------------------

# What a person typing a text parameter is told, in each such parameter's help (added by _specs).
TYPED_TEXT_RULE = "Escapes as in Python: \\n is a newline, \\t a tab, \\\\ one backslash (\\\\n: a backslash and n)."
_TYPED_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
_TYPED_ESCAPE = re.compile(r"\\([ntr\\])")
# A backslash that must be doubled to be read back as itself: before an escape letter, a backslash, a character
# written as an escape, or at the very end.
_BACKSLASH_TO_DOUBLE = re.compile(r"\\(?=[ntr\\\n\t\r]|\Z)")


class TypedText(str):
    """Text a person typed for a parameter (a form's box, a ``--set``, a link): :func:`read_typed` reads it."""


def read_typed(text: str) -> str:
    """Typed text as the value it means, read as a Python string literal reads these escapes.

    ``\\n`` is a newline, ``\\t`` a tab, ``\\r`` a carriage return and ``\\\\`` one backslash, so
    ``\\\\n`` is a backslash and an n. Any other backslash stays as typed: a regular
    expression's ``\\s``, ``\\d`` or ``\\.`` means what it says. The one rule for every text
    parameter wherever it is typed: the app's boxes, ``--set`` (and the other CLI options),
    and a share link's values (:func:`write_typed` writes them).
    """
    return _TYPED_ESCAPE.sub(lambda match: _TYPED_ESCAPES[match.group(1)], text)


def write_typed(value: str) -> str:
    """``value`` as a person would type it: the text :func:`read_typed` reads back as exactly ``value``."""
    doubled = _BACKSLASH_TO_DOUBLE.sub(r"\\\\", value)
    return doubled.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def parse_list(value: Any) -> list[Any]:
    """The items of a list parameter, from a widget's, a ``--set``'s or a link's text, or from a JSON value.

    Comma text is what a person types, so each item is stripped, empty items
    are dropped and each is read by :func:`read_typed`: ``"h1, h2,"`` is
    ``["h1", "h2"]``, ``"\\n\\n, \\n"`` two and one newlines. A JSON list (text starting
    with ``[``) or a real list is taken exactly as it is (JSON's own escapes are the
    same rule): that is how an item that is whitespace or holds a comma is written
    (a separator ``" "``: ``[" "]``).
    """
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            items = json.loads(text)
            if not isinstance(items, list):
                raise ValueError(value)
            return items
        return [read_typed(item.strip()) for item in text.split(",") if item.strip()]
    return list(value)


# Words an optional parameter's text reads as "not set" (see ParamSpec.coerce).
NONE_WORDS = {"", "none", "null"}


def format_list(items: Sequence[Any], separator: str = ", ") -> str:
    """The text :func:`parse_list` reads back as exactly ``items``: comma text when it would, else JSON."""
    texts = [write_typed(str(item)) for item in items]
    plain = separator.join(texts)
    readable = all(text and text == text.strip() and "," not in text for text in texts)
    if readable and not plain.startswith("[") and plain.lower() not in NONE_WORDS:
        return plain
    return json.dumps([str(item) for item in items], ensure_ascii=False)
