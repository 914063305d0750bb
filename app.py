"""ChunkScope's Streamlit entry: the navigation frame and the Home (documents) page.

Run with ``streamlit run app.py``. Every page in ``pages/`` is listed in the
navigation (ordered by its numeric prefix); this frame runs before each of them,
so a first visit to any page starts with the sample documents loaded and the
configuration read from the URL.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import streamlit as st

from ui import cache, documents, state
from ui.documents import ensure_started
from ui.widgets import md_escape

APP_DIR = Path(__file__).resolve().parent
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
</style>"""
UPLOAD_TYPES = ["txt", "md", "markdown", "html", "htm", "pdf", "csv", "py", "js", "ts", "java", "go", "rs", "c", "cpp", "json"]


def page_title(path: Path) -> str:
    """``pages/1_Chunks.py`` -> ``Chunks``; ``pages/4_Query_trace.py`` -> ``Query trace``."""
    return re.sub(r"^\d+[_ ]*", "", path.stem).replace("_", " ").strip() or path.stem


def page_order(path: Path) -> tuple[int, str]:
    match = re.match(r"^(\d+)", path.stem)
    return (int(match.group(1)) if match else 999, path.stem)


def upload_types() -> list[str]:
    """Every extension a registered loader reads (falls back to the common ones)."""
    from core.loaders import LOADERS

    declared = sorted({ext.lstrip(".") for cls in LOADERS for ext in cls.extensions})
    return declared or UPLOAD_TYPES


# -- Home ------------------------------------------------------------------------


def home() -> None:
    st.title("ChunkScope", anchor=False)
    st.markdown(
        "See exactly how your documents are cut into nodes for retrieval-augmented generation.  \n"
        "Upload files or use the samples, then tune a splitter and watch every chunk's span, size, "
        "metadata and what the LLM and the embedding model each read."
    )

    left, right = st.columns([3, 2], gap="large")
    with left:
        _uploader()
    with right:
        st.subheader("Sample documents", anchor=False)
        st.caption("A Markdown guide, a PDF handbook, an HTML FAQ, release notes, a CSV table and a Python module.")
        if st.button("Load the sample documents", icon=":material/library_books:", width="stretch"):
            with st.spinner("Loading samples…"):
                added = documents.load_samples()
            st.toast(f"Loaded {len(added)} sample files", icon=":material/check_circle:")
        st.page_link("pages/1_Chunks.py", label="Inspect the chunks", icon=":material/arrow_forward:")

    _failures()
    _document_table()
    _tour()


# What each page is for, in the order a first-time visitor would use them.
TOUR = [
    ("Chunks", "Every chunk's span in the source, sizes, lint flags, and the LLM and EMBED views of a node."),
    ("Metadata", "Edit metadata, exclude keys per reader, change the templates, run offline extractors."),
    ("Compare", "Two to four splitter settings side by side: boundaries, metrics, size histograms."),
    ("Query", "Sample queries through retrieval and the postprocessors, stage by stage."),
    ("Evaluate", "Score several settings, or a chunk_size × chunk_overlap sweep, on the sample queries."),
    ("Export", "Nodes as JSONL, CSV or Parquet, the config, LlamaIndex and LangChain code, a share link."),
]


def _tour() -> None:
    available = {page_title(p): p for p in (APP_DIR / "pages").glob("[!_]*.py")}
    stops = [(title, text) for title, text in TOUR if title in available]
    if not stops:
        return
    st.subheader("Where to next", anchor=False)
    per_row = 3
    for row in range(0, len(stops), per_row):
        for column, (title, text) in zip(st.columns(per_row), stops[row : row + per_row], strict=False):
            with column.container(border=True, height="stretch"):
                st.page_link(f"pages/{available[title].name}", label=title, icon=PAGE_ICONS.get(title))
                st.caption(text)


def _uploader() -> None:
    st.subheader("Upload documents", anchor=False)
    generation = st.session_state.setdefault("cs_uploader_generation", 0)
    uploads = st.file_uploader(
        "Text, Markdown, HTML, PDF, source code or CSV — several at once",
        type=upload_types(),
        accept_multiple_files=True,
        key=f"uploader_{generation}",
    )
    if not uploads:
        return
    total = len(uploads)
    loaded, failed = [], []
    with st.status(f"Loading {total} file{'s' if total != 1 else ''}…", expanded=True) as status:
        progress = st.progress(0.0)
        for index, upload in enumerate(uploads):
            st.write(f"Reading **{md_escape(upload.name)}** ({upload.size / 1024:,.0f} KB)")
            reason = documents.add_file(upload.name, upload.getvalue())
            (failed if reason else loaded).append(upload.name)
            progress.progress((index + 1) / total)
        label = f"Loaded {len(loaded)} of {total} file{'s' if total != 1 else ''}"
        status.update(label=label, state="error" if failed and not loaded else "complete", expanded=False)
    # A fresh uploader: the table below is the one list of what is loaded.
    st.session_state["cs_uploader_generation"] = generation + 1
    if loaded:
        st.toast(f"Loaded {md_escape(', '.join(loaded))}", icon=":material/check_circle:")
    st.rerun()


def _failures() -> None:
    failed = state.failed_uploads()
    if not failed:
        return
    st.subheader("Could not load", anchor=False)
    for file_name, reason in failed.items():
        with st.container(border=True):
            name_col, reason_col, action_col = st.columns([2, 6, 1], vertical_alignment="center")
            name_col.markdown(f":red[:material/error:] `{_code_safe(file_name)}`")
            reason_col.markdown(md_escape(reason))
            if action_col.button("Dismiss", key=f"dismiss_{file_name}", type="tertiary"):
                state.clear_failure(file_name)
                st.rerun()


def _document_table() -> None:
    docs = documents.all_documents()
    st.subheader(f"Loaded documents · {len(docs)}", anchor=False)
    if not docs:
        st.info("No documents yet: upload some files or load the samples.", icon=":material/inbox:")
        return
    token_counts = [cache.document_tokens(d, "model") for d in docs]
    rows = [
        {
            "Document": d.metadata.get("file_name", d.id),
            "Type": str(d.metadata.get("file_type", "")),
            "Pages": str(len(d.pages)) if d.pages else "—",
            "Characters": len(d.text),
            "Tokens": tokens,
            "Elements": len(d.elements),
        }
        for d, tokens in zip(docs, token_counts, strict=False)
    ]
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config={
            "Document": st.column_config.TextColumn(width="large"),
            "Pages": st.column_config.TextColumn(help="Pages, for paged sources such as PDF"),
            "Characters": st.column_config.NumberColumn(format="localized"),
            "Tokens": st.column_config.NumberColumn(
                format="localized", help="Tokens of the embedding model's tokenizer (all-MiniLM-L6-v2)"
            ),
            "Elements": st.column_config.NumberColumn(help="Headings, paragraphs, tables, code blocks… the loader found"),
        },
    )
    names = [s.file_name for s in state.sources()]
    pick_col, button_col = st.columns([4, 1], vertical_alignment="bottom")
    to_remove = pick_col.multiselect("Remove documents", names, key="remove_pick", placeholder="Choose files to remove")
    if button_col.button("Remove", icon=":material/delete:", disabled=not to_remove, width="stretch"):
        for name in to_remove:
            state.remove_source(name)
        st.session_state.pop("remove_pick", None)
        st.rerun()


def _code_safe(text: str) -> str:
    """Text for an inline code span (shown literally): backticks would end it."""
    return text.replace("`", "'")


# -- the frame ---------------------------------------------------------------------


def main() -> None:
    # A local favicon: a :material/: icon would be fetched from fonts.gstatic.com (no network at run time).
    st.set_page_config(page_title="ChunkScope", page_icon=str(APP_DIR / "ui" / "favicon.png"), layout="wide")
    pages = [st.Page(home, title="Documents", icon=":material/folder_open:", default=True)]
    for path in sorted((APP_DIR / "pages").glob("[!_]*.py"), key=page_order):
        title = page_title(path)
        pages.append(st.Page(f"pages/{path.name}", title=title, icon=PAGE_ICONS.get(title, ":material/article:")))
    navigation = st.navigation(pages)
    st.html(APP_CSS)
    ensure_started()
    for message in state.pop_messages():
        st.warning(message, icon=":material/link:")
    with st.sidebar:
        count = len(state.sources())
        st.caption(f":material/description: {count} file{'s' if count != 1 else ''} loaded")
    navigation.run()


main()
