"""The queries file: sample queries with the passages that answer them, the input of every evaluation.

A queries file is a JSON list of ``{"query", "doc", "excerpts"}`` (and optionally ``"fold"``): ``doc`` is a
file name and each excerpt a passage of that document (the reference answer), copied from the loaded text or
from the file itself (:mod:`core.evaluation.excerpts` finds it). A malformed file raises LoadError naming the
file and the entry; how the queries are scored is :mod:`core.evaluation.evaluate`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from core.errors import LoadError


@dataclass(frozen=True)
class EvalQuery:
    query: str
    doc: str  # the file name of the document holding the answer
    excerpts: tuple[str, ...]
    fold: str | None = None  # the cross-validation fold the queries file declares (core.evaluation.folds), if any


def load_queries(path: str | os.PathLike[str]) -> list[EvalQuery]:
    """Read a queries file; a malformed one raises LoadError naming the file and the entry."""
    name = os.path.basename(os.fspath(path))
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise LoadError(name, "file not found") from None
    return decode_queries(raw, name)


def decode_queries(raw: bytes, source: str = "queries") -> list[EvalQuery]:
    """The queries in a file's bytes: UTF-8 (a byte order mark is accepted), a JSON error with its line and column."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoadError(source, f"is not UTF-8 text (byte {raw[exc.start]:#04x} at position {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # json's messages may end in "at" ("Unterminated string starting at"): the position follows once.
        problem = exc.msg.removesuffix(" at")
        raise LoadError(source, f"is not valid JSON: {problem} at line {exc.lineno}, column {exc.colno}") from None
    return parse_queries(data, source)


def parse_queries(data: Any, source: str = "queries") -> list[EvalQuery]:
    if not isinstance(data, list) or not data:
        raise LoadError(source, "must hold a non-empty JSON list of queries")
    queries = []
    for number, entry in enumerate(data, start=1):
        where = f"query {number}"
        if not isinstance(entry, dict):
            raise LoadError(source, f"{where} is not an object")
        query, doc, excerpts = entry.get("query"), entry.get("doc"), entry.get("excerpts")
        if not isinstance(query, str) or not query.strip():
            raise LoadError(source, f"{where} has no query text")
        if not isinstance(doc, str) or not doc:
            raise LoadError(source, f"{where} names no doc (the file name holding the answer)")
        if not isinstance(excerpts, list) or not excerpts or not all(isinstance(e, str) and e for e in excerpts):
            raise LoadError(source, f"{where} needs a non-empty list of excerpt strings")
        fold = entry.get("fold")
        if fold is not None and (isinstance(fold, bool) or not isinstance(fold, (str, int)) or fold == ""):
            raise LoadError(source, f"{where} has a fold that is not a name or a number: {fold!r}")
        queries.append(
            EvalQuery(query=query, doc=doc, excerpts=tuple(excerpts), fold=None if fold is None else str(fold))
        )
    return queries
