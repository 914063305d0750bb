"""A queries file checked against the loaded documents, before anything is split or embedded.

Three things go wrong with hand-written queries, and each is said once, naming
the query and the file:

- a query names a document that is not loaded (often a misspelling): it would
  be left out of every score, so it is a **warning** with the closest loaded
  name; ``chunkscope evaluate --strict`` makes any warning exit 2. It is not an
  error because evaluating one document with the corpus' whole queries file is
  an ordinary thing to do;
- an excerpt is not in its document: an **error** (no score can be computed);
- an excerpt occurs more than once in its document (e.g. "the"): every
  occurrence counts as reference text, so any chunk holding one is a hit and
  the scores are inflated; a **warning** with the count.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.evaluation.excerpts import ExcerptFinder
from core.evaluation.queries import EvalQuery
from core.schema import Document

__all__ = ["QueryCheck", "check_queries"]


@dataclass
class QueryCheck:
    """What is wrong with a queries file for these documents: errors stop a run, warnings do not."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unknown_documents: list[str] = field(default_factory=list)


def check_queries(documents: Sequence[Document], queries: Sequence[EvalQuery]) -> QueryCheck:
    """Unknown document names, excerpts not found and excerpts found more than once, in query order."""
    check = QueryCheck()
    by_name: dict[str, list[Document]] = {}
    for doc in documents:
        by_name.setdefault(str(doc.metadata.get("file_name")), []).append(doc)
    unknown: dict[str, int] = {}
    for query in queries:
        if query.doc not in by_name:
            unknown[query.doc] = unknown.get(query.doc, 0) + 1
    for name, count in unknown.items():
        close = difflib.get_close_matches(name, list(by_name), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        noun = "query names" if count == 1 else "queries name"
        check.warnings.append(f"{count} {noun} {name!r}, which is not loaded{hint}: left out of the scores")
    check.unknown_documents = list(unknown)
    finders: dict[str, ExcerptFinder] = {}
    for number, query in enumerate(queries, start=1):
        for excerpt in query.excerpts if query.doc in by_name else ():
            found = 0
            for doc in by_name[query.doc]:
                found += len(finders.setdefault(doc.id, ExcerptFinder(doc.text)).find(excerpt))
            shown = repr(excerpt[:60])
            if found == 0:
                check.errors.append(f"query {number}: an excerpt does not occur in {query.doc}: {shown}")
            elif found > 1:
                check.warnings.append(
                    f"query {number}: an excerpt occurs {found} times in {query.doc}: {shown} "
                    "(every occurrence counts as reference text, which inflates the scores)"
                )
    return check
