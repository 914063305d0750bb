"""The loaded documents as every page sees them: each file loaded with its chosen loader options."""

from __future__ import annotations

from core.errors import LoadError
from core.schema import Document
from ui import cache, state


def all_documents() -> list[Document]:
    """Every document of every loaded file, in upload order.

    A file whose chosen loader options fail keeps its defaults' documents; the
    failure is recorded beside its name (Home shows it).
    """
    documents: list[Document] = []
    for source in state.sources():
        options = state.loader_options(source.digest)
        try:
            documents.extend(cache.load_source(source, options))
        except LoadError as exc:
            state.record_failure(source.file_name, f"with the chosen loader options: {exc.problem}")
            try:
                documents.extend(cache.load_source(source, {}))
            except LoadError:
                continue
    return documents


def document_by_id(doc_id: str | None) -> Document | None:
    if doc_id is None:
        return None
    return next((d for d in all_documents() if d.id == doc_id), None)


def source_of(document: Document) -> state.SourceFile | None:
    """The file a document came from (matched by file name)."""
    name = document.metadata.get("file_name")
    return next((s for s in state.sources() if s.file_name == name), None)
