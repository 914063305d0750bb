"""Queries without labels: a person writes a question and marks the passage that answers it.

The passage is checked against the document's text the way an evaluation will
find it (:class:`core.evaluation.excerpts.ExcerptFinder`: exactly, then ignoring
whitespace, then without markup), so a queries file built here never aborts a
run. The file is the same JSON list ``core.evaluation.queries.load_queries`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from core.errors import ConfigError
from core.evaluation.excerpts import ExcerptFinder
from core.evaluation.queries import EvalQuery

# A passage this short matches almost anywhere and says little about retrieval.
MIN_PASSAGE_CHARS = 12


def labelled_query(question: str, doc_name: str, passage: str, document_text: str) -> EvalQuery:
    """One query with its reference passage; ConfigError (one sentence) if the passage is not in the document."""
    question, passage = question.strip(), passage.strip()
    if not question:
        raise ConfigError("write the question first")
    if len(passage) < MIN_PASSAGE_CHARS:
        raise ConfigError(f"mark a passage of at least {MIN_PASSAGE_CHARS} characters that answers the question")
    if not ExcerptFinder(document_text).find(passage):
        raise ConfigError(
            f"the passage is not in {doc_name}: copy it from the document's text (the Chunks page's source or a node)"
        )
    return EvalQuery(query=question, doc=doc_name, excerpts=(passage,))


def queries_json(queries: Sequence[EvalQuery]) -> str:
    """The queries as the JSON file an evaluation reads (``parse_queries`` gives them back)."""
    data = [
        {
            "query": q.query,
            "doc": q.doc,
            "excerpts": list(q.excerpts),
            **({"fold": q.fold} if q.fold is not None else {}),
        }
        for q in queries
    ]
    return json.dumps(data, ensure_ascii=False, indent=2)
