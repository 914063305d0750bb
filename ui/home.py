"""Helpers for the navigation frame and the Home (documents) page in ``app.py``.

The frame: the page list ``st.navigation`` shows (one entry per file in
``pages/``, ordered by its numeric prefix), the app-wide CSS, the link warnings
and the sidebar count. Home: the uploader, the samples card, failed files, the
documents table and the tour of the other pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from core.limits import DEFAULT_LIMITS, MB
from core.loaders.parsers import found_phrase, parse_summary
from core.schema import Document
from ui import cache, documents, state
from ui.widgets import md_escape

APP_DIR = Path(__file__).resolve().parent.parent
PAGES_DIR = APP_DIR / "pages"
FAVICON = APP_DIR / "ui" / "favicon.png"
PAGE_ICONS = {
    "Chunks": ":material/view_agenda:",
    "Metadata": ":material/sell:",
    "Compare": ":material/compare:",
    "Query": ":material/manage_search:",
    "Evaluate": ":material/fact_check:",
    "Export": ":material/download:",
}
# Less empty space above each page's title; metric labels may wrap instead of being cut.
APP_CSS = """<style>
[data-testid="stMainBlockContainer"]{padding-top:2.2rem;padding-bottom:3rem}
[data-testid="stMetricLabel"] p{white-space:normal}
[data-testid="stFileChip"] [role="alert"]{position:static;width:auto;height:auto;margin:0;overflow:visible;
clip:auto;white-space:normal;color:#b91c1c;font-size:.8rem}
</style>"""
# The uploader's own refusal (a file over the limit) is written for screen readers only; the CSS above shows it.
UPLOAD_TYPES = [
    "txt",
    "md",
    "markdown",
    "html",
    "htm",
    "pdf",
    "csv",
    "py",
    "js",
    "ts",
    "java",
    "go",
    "rs",
    "c",
    "cpp",
    "json",
]
# What each page is for, in the order a first-time visitor would use them.
TOUR = [
    ("Chunks", "Every chunk's span in the source, sizes, lint flags, and the LLM and EMBED views of a node."),
    ("Metadata", "Edit metadata, exclude keys per reader, change the templates, run offline extractors."),
    ("Compare", "Two to four splitter settings side by side: boundaries, metrics, size histograms."),
    ("Query", "Sample queries through retrieval and the postprocessors, stage by stage."),
    ("Evaluate", "Score several settings, or a chunk_size × chunk_overlap sweep, on the sample queries."),
    ("Export", "Nodes as JSONL, CSV or Parquet, the config, LlamaIndex and LangChain code, a share link."),
]
TOUR_PER_ROW = 3
# Short columns drawn narrow; a loader's notes are written out under the table, where no width clips them.
DOCUMENT_COLUMNS = {
    "Document": st.column_config.TextColumn(width="medium"),
    "Type": st.column_config.TextColumn(width="small"),
    "Pages": st.column_config.TextColumn(width="small", help="Pages, for paged sources such as PDF"),
    "Characters": st.column_config.NumberColumn(width="small", format="localized"),
    "Tokens": st.column_config.NumberColumn(
        width="small", format="localized", help="Tokens of the embedding model's tokenizer (all-MiniLM-L6-v2)"
    ),
    "Parser": st.column_config.TextColumn(
        help="What read the file: a PDF's parser (pypdf or pdfplumber, + OCR), else its format"
    ),
    "Found": st.column_config.TextColumn(help="Pages, tables, headings and OCR-read pages (with mean word confidence)"),
}
_REMOVE_PICK = "remove_pick"


# -- the frame ---------------------------------------------------------------------


def page_title(path: Path) -> str:
    """``pages/1_Chunks.py`` -> ``Chunks``; ``pages/4_Query_trace.py`` -> ``Query trace``."""
    return re.sub(r"^\d+[_ ]*", "", path.stem).replace("_", " ").strip() or path.stem


def page_order(path: Path) -> tuple[int, str]:
    match = re.match(r"^(\d+)", path.stem)
    return (int(match.group(1)) if match else 999, path.stem)


def page_files() -> list[Path]:
    """The pages in ``pages/`` (files starting with ``_`` are not pages), in navigation order."""
    return sorted(PAGES_DIR.glob("[!_]*.py"), key=page_order)


def navigation_pages(home: Callable[[], None]) -> list[Any]:
    """``home`` as the default "Documents" page, then one ``st.Page`` per file in ``pages/``."""
    pages = [st.Page(home, title="Documents", icon=":material/folder_open:", default=True)]
    for path in page_files():
        title = page_title(path)
        pages.append(st.Page(f"pages/{path.name}", title=title, icon=PAGE_ICONS.get(title, ":material/article:")))
    return pages


def link_warnings(documents_page: Any) -> None:
    """The messages left for this run (e.g. values dropped from the link), each shown once."""
    for message in state.pop_messages():
        # Keys and values come from the link: shown literally, never as links or images.
        st.warning(md_escape(message.text), icon=":material/link:")
        if message.offer_upload:
            st.page_link(documents_page, label="Upload it on the Documents page", icon=":material/upload_file:")


def sidebar_file_count() -> None:
    with st.sidebar:
        count = len(state.sources())
        st.caption(f":material/description: {count} file{_plural(count)} loaded")


# -- Home ----------------------------------------------------------------------------


def intro() -> None:
    st.title("ChunkScope", anchor=False)
    st.markdown(
        "See exactly how your documents are cut into nodes for retrieval-augmented generation.  \n"
        "Upload files or use the samples, then tune a splitter and watch every chunk's span, size, "
        "metadata and what the LLM and the embedding model each read."
    )


def upload_types() -> list[str]:
    """Every extension a registered loader reads (falls back to the common ones)."""
    from core.loaders import LOADERS

    declared = sorted({ext.lstrip(".") for cls in LOADERS for ext in cls.extensions})
    return declared or UPLOAD_TYPES


def uploader() -> None:
    """The file uploader; files dropped on it are loaded one by one with a progress bar, then the page reruns."""
    st.subheader("Upload documents", anchor=False)
    generation = state.uploader_generation()
    uploads = st.file_uploader(
        "Text, Markdown, HTML, PDF, Word, PowerPoint, Excel, EPUB, JSON, source code or CSV — several at once",
        type=upload_types(),
        # Core's limit, in the uploader's unit: the browser refuses exactly what the loaders would.
        max_upload_size=DEFAULT_LIMITS.max_upload_bytes // MB,
        accept_multiple_files=True,
        key=f"uploader_{generation}",
    )
    if not uploads:
        return
    loaded = _load_uploads(uploads)
    # A fresh uploader: the table below is the one list of what is loaded.
    state.renew_uploader()
    if loaded:
        st.toast(f"Loaded {md_escape(', '.join(loaded))}", icon=":material/check_circle:")
    st.rerun()


def _load_uploads(uploads: Sequence[Any]) -> list[str]:
    """Add each uploaded file inside a status box; return the names that loaded."""
    total = len(uploads)
    loaded, failed = [], []
    with st.status(f"Loading {total} file{_plural(total)}…", expanded=True) as status:
        progress = st.progress(0.0)
        for index, upload in enumerate(uploads):
            st.write(f"Reading **{md_escape(upload.name)}** ({upload.size / 1024:,.0f} KB)")
            reason = documents.add_file(upload.name, upload.getvalue(), select=True)
            (failed if reason else loaded).append(upload.name)
            progress.progress((index + 1) / total)
        label = f"Loaded {len(loaded)} of {total} file{_plural(total)}"
        status.update(label=label, state="error" if failed and not loaded else "complete", expanded=False)
    return loaded


def samples_card() -> None:
    st.subheader("Sample documents", anchor=False)
    st.caption(
        "A Markdown guide, a PDF handbook, an HTML FAQ, release notes, a CSV table, a Python module, "
        "a Word document, a slide deck and a scanned page (read by OCR)."
    )
    missing = [p.name for p in documents.sample_files() if not state.has_source(p.name)]
    if not missing:
        st.success("Every sample is loaded.", icon=":material/check_circle:")
    elif st.button(
        "Load the sample documents"
        if len(missing) == len(documents.sample_files())
        else f"Load the {len(missing)} missing sample{_plural(len(missing))}",
        icon=":material/library_books:",
        width="stretch",
    ):
        with st.spinner("Loading samples…"):
            added = documents.load_samples()
        st.toast(f"Loaded {len(added)} sample files", icon=":material/check_circle:")
    st.page_link("pages/1_Chunks.py", label="Inspect the chunks", icon=":material/arrow_forward:")


def failures() -> None:
    """Each file that could not be loaded, with the reason and a button to dismiss it."""
    failed = state.failed_uploads()
    if not failed:
        return
    st.subheader("Could not load", anchor=False)
    for file_name, reason in failed.items():
        with st.container(border=True):
            name_col, reason_col, action_col = st.columns([2, 6, 1], vertical_alignment="center")
            name_col.markdown(f":red[:material/error:] `{code_safe(file_name)}`")
            reason_col.markdown(md_escape(reason))
            if action_col.button("Dismiss", key=f"dismiss_{file_name}", type="tertiary"):
                state.clear_failure(file_name)
                st.rerun()


def document_rows(docs: Sequence[Document]) -> list[dict[str, Any]]:
    """One row per document for the table; tokens are the embedding model's."""
    return [_document_row(d) for d in docs]


def _document_row(d: Document) -> dict[str, Any]:
    found = parse_summary(d)
    return {
        "Document": d.metadata.get("file_name", d.id),
        "Type": str(d.metadata.get("file_type", "")),
        "Pages": str(len(d.pages)) if d.pages else "—",
        "Characters": len(d.text),
        "Tokens": cache.document_tokens(d, "model"),
        "Parser": found["parser"],
        "Found": found_phrase(found),
    }


def document_notes(docs: Sequence[Document]) -> list[tuple[str, str]]:
    """(file name, note) for each document whose loader noticed something while reading it (OCR, repairs)."""
    notes = [(str(d.metadata.get("file_name", d.id)), str(d.metadata.get("load_warning", ""))) for d in docs]
    return [(name, note) for name, note in notes if note]


def document_table(docs: Sequence[Document]) -> None:
    """The loaded documents as a table, or a note that there are none yet."""
    st.subheader(f"Loaded documents · {len(docs)}", anchor=False)
    if not docs:
        st.info("No documents yet: upload some files or load the samples.", icon=":material/inbox:")
        return
    st.dataframe(pd.DataFrame(document_rows(docs)), hide_index=True, width="stretch", column_config=DOCUMENT_COLUMNS)
    for name, note in document_notes(docs):
        # Both come from the file: shown literally.
        st.caption(f":material/info: **{md_escape(name)}**: {md_escape(note)}")
    remove_picker()


def remove_picker() -> None:
    """Choose loaded files and remove them (the page reruns without them)."""
    names = [s.file_name for s in state.sources()]
    pick_col, button_col = st.columns([4, 1], vertical_alignment="bottom")
    to_remove = pick_col.multiselect("Remove documents", names, key=_REMOVE_PICK, placeholder="Choose files to remove")
    if button_col.button("Remove", icon=":material/delete:", disabled=not to_remove, width="stretch"):
        for name in to_remove:
            state.remove_source(name)
        state.forget_widgets(_REMOVE_PICK)
        st.rerun()


def tour() -> None:
    """A card per page there is, in ``TOUR`` order: a link and what the page is for."""
    available = {page_title(p): p for p in page_files()}
    stops = [(title, text) for title, text in TOUR if title in available]
    if not stops:
        return
    st.subheader("Where to next", anchor=False)
    for row in range(0, len(stops), TOUR_PER_ROW):
        for column, (title, text) in zip(st.columns(TOUR_PER_ROW), stops[row : row + TOUR_PER_ROW], strict=False):
            with column.container(border=True, height="stretch"):
                st.page_link(f"pages/{available[title].name}", label=title, icon=PAGE_ICONS.get(title))
                st.caption(text)


def code_safe(text: str) -> str:
    """Text for an inline code span (shown literally): backticks would end it."""
    return text.replace("`", "'")


def _plural(count: int) -> str:
    return "s" if count != 1 else ""
