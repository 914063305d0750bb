"""The loaded documents as every page sees them: each file loaded with its chosen loader options."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from core.errors import ConfigError, LoadError, WorkLimitError
from core.schema import Document
from ui import cache, state

if TYPE_CHECKING:
    from core.config import PipelineConfig


def all_documents(config: PipelineConfig | None = None) -> list[Document]:
    """Every document of every loaded file, in upload order, loaded with ``config``'s loader options.

    ``config`` defaults to the session's current one. A file whose chosen loader
    options fail is loaded with its loader's defaults instead, and the failure is
    recorded beside its name (Home shows it).
    """
    from core.loaders import loader_for

    config = config or state.config()
    documents: list[Document] = []
    for source in state.sources():
        try:
            options = config.loader_options(loader_for(source.file_name).name)
            documents.extend(cache.load_source(source, options))
        except LoadError as exc:
            state.record_failure(source.file_name, f"with the chosen loader options, {exc.problem}")
            # A load stopped at its deadline or memory ceiling is not tried again: the same bytes would cost
            # the session a second full wait. Nor is one that already ran with the defaults.
            if not options or isinstance(exc, WorkLimitError):
                continue
            try:
                documents.extend(cache.load_source(source, {}))
            except LoadError:
                continue
    return documents


# -- adding files ----------------------------------------------------------------

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_docs"
# The demo opens on the richest samples first.
_SAMPLE_ORDER = ("chunking_guide.md", "rag_handbook.pdf", "vector_search_faq.html", "release_notes.txt")


def sample_files() -> list[Path]:
    """The shipped sample documents: what ``chunkscope ... sample_docs`` reads from the folder (queries.json is
    not a document: a folder walk leaves JSON out). The folder holds nothing else: its description is
    docs/samples.md and the PDF's source is in scripts/sample_sources/."""
    from core.loaders import folder_extensions
    from core.loaders.file_kinds import folder_files

    found = folder_files(SAMPLE_DIR, folder_extensions())
    rank = {name: i for i, name in enumerate(_SAMPLE_ORDER)}
    return sorted(found, key=lambda p: (rank.get(p.name, len(rank)), p.name))


def add_file(file_name: str, data: bytes, *, select: bool = False) -> str | None:
    """Load a file with its loader's defaults and keep it; return the reason when it cannot be loaded.

    A failure is recorded beside the file's name and leaves every loaded document in place,
    including an earlier file of the same name.
    With ``select``, the file's (first) document becomes the selected one, so the pages
    open on what the person just uploaded.
    """
    source = state.SourceFile(file_name=file_name, data=data, digest=state.digest_of(data))
    try:
        documents = cache.load_source(source, {})
    except LoadError as exc:
        reason = exc.problem
    except Exception as exc:  # a loader bug must not take the page down
        reason = f"could not be read ({type(exc).__name__}: {exc})"
    else:
        if documents:
            state.add_source(file_name, data)
            if select:
                state.select_doc(documents[0].id)
            return None
        reason = "holds no text"
    # A bad upload never costs a good one: a loaded file of the same name stays as it was.
    if state.has_source(file_name):
        reason = f"{reason}; the {file_name} loaded before is kept"
    state.record_failure(file_name, reason)
    return reason


def select_document(documents: Sequence[Document], key: str) -> Document:
    """A select box over ``documents`` (widget ``key``), starting at (and updating) the session's selected document."""
    ids = [d.id for d in documents]
    names = {d.id: str(d.metadata.get("file_name", d.id)) for d in documents}
    state.keep_valid(key, ids, state.selected_doc_id())
    doc_id = st.selectbox("Document", ids, key=key, format_func=names.__getitem__)
    state.select_doc(doc_id)
    return next(d for d in documents if d.id == doc_id)


def load_samples() -> list[str]:
    """Add every sample document; return the names that were added."""
    added = []
    for path in sample_files():
        if add_file(path.name, path.read_bytes()) is None:
            added.append(path.name)
    return added


# -- the first run of a session --------------------------------------------------

# Query parameters that belong to the app, not to the pipeline config.
APP_QUERY_KEYS = ("doc", "node")


def ensure_started() -> None:
    """Once per session: read the configuration from the URL, then load the samples if nothing is loaded.

    Runs before every page (the navigation frame calls it), so a shared link to
    any page opens ready. Values dropped from the link become warnings shown once.
    """
    if state.once("read-url-config"):
        _read_url_config()
    if state.once("load-samples") and not state.sources():
        with st.spinner("Loading the sample documents…"):
            load_samples()
    if state.once("read-url-doc"):
        _select_linked_document()


def _select_linked_document() -> None:
    """Open on the document the link names; if it is not in this session (an upload), say so and offer the upload."""
    wanted = st.query_params.get("doc")
    if not wanted:
        return
    document = next((d for d in all_documents() if d.metadata.get("file_name") == wanted), None)
    if document is not None:
        state.select_doc(document.id)
        return
    state.push_message(
        f"The link opens {wanted}, which is not loaded in this session (it was uploaded where the link was made). "
        "Upload it on the Documents page to see it with this configuration; until then the pages show another document.",
        offer_upload=True,
    )


def hold_llm_extractors(config: Any) -> Any:
    """``config`` without its LLM extractors, which wait on the Metadata page for a person to run them.

    A link chooses the endpoint and the name of the key's variable: run as it is opened, it would send this
    session's documents, and that variable's value, wherever the link's author pointed it.
    """
    from core.extractors.llm import llm_extractors

    asked = llm_extractors(config.extractors)
    if not asked:
        return config
    state.set_llm_pending(tuple(asked))
    state.push_message(
        f"The link asks for LLM extractors ({', '.join(e.name for e in asked)}) at {config.llm.base_url}. "
        "Nothing is sent until you run them on the Metadata page, where their cost is shown first."
    )
    return config.replace(extractors=tuple(e for e in config.extractors if e not in asked))


def _read_url_config() -> None:
    from core.config import PipelineConfig

    params = {key: st.query_params.get_all(key) for key in st.query_params}
    if not any(key not in APP_QUERY_KEYS for key in params):
        return
    try:
        config, warnings = PipelineConfig.from_query_params(params, lenient=True, ignore=APP_QUERY_KEYS)
    except ConfigError as exc:
        state.push_message(f"The link's configuration could not be used: {exc}")
        return
    state.set_config(hold_llm_extractors(config))
    for warning in warnings:
        state.push_message(f"Ignored from the link: {warning}")
