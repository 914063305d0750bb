"""The two option syntaxes every ChunkScope command shares, parsed in one place."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from core.errors import ChunkScopeError, ConfigError
from core.params.typed_text import TypedText

# A user error (bad file, bad parameter) exits with this after one line on stderr.
USER_ERROR = 2


def parse_assignments(items: Sequence[str], option: str) -> dict[str, str]:
    """``["k=v", ...]`` -> ``{"k": "v"}``; the value may itself hold ``=``.

    Values are typed text (:class:`core.params.typed_text.TypedText`): a text parameter reads its escapes as the app's
    boxes and links do (``\\n`` a newline, ``\\\\n`` a backslash and n).
    """
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} {item!r}: expected KEY=VALUE")
        out[key.strip()] = TypedText(value)
    return out


def parse_named(text: str, option: str) -> tuple[str, dict[str, str]]:
    """``NAME:k=v,k=v`` -> (name, params).

    A comma-separated piece without ``=`` continues the previous value, so list
    parameters read naturally: ``keyword:required_keywords=chunk,size``.
    """
    name, _, rest = text.partition(":")
    name = name.strip()
    if not name:
        raise ConfigError(f"{option} {text!r} names no component (expected NAME:KEY=VALUE,...)")
    params: dict[str, str] = {}
    last: str | None = None
    for piece in rest.split(",") if rest.strip() else []:
        if "=" in piece:
            key, _, value = piece.partition("=")
            last = key.strip()
            params[last] = value
        elif last is not None:
            params[last] += "," + piece
        else:
            raise ConfigError(f"{option} {text!r}: {piece!r} is not KEY=VALUE")
    return name, {key: TypedText(value) for key, value in params.items()}


def run_standalone(register: Callable[[argparse._SubParsersAction], None], argv: Sequence[str] | None) -> int:
    """Run one module's subcommands on their own (``python -m core.cli.query``); ``core.cli.main`` is the real entry."""
    parser = argparse.ArgumentParser(prog="chunkscope")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ChunkScopeError as exc:
        print(f"chunkscope: {exc}", file=sys.stderr)
        return USER_ERROR
