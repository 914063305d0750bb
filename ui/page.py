"""The first line of every page, ``setup_page()``; then its ``heading()`` and its ``documents_or_stop()``.

``app.py`` lists the pages with ``st.navigation`` and prepares each session
(samples loaded, config read from the URL). Streamlit, however, runs a
``pages/`` file on its own when a fresh server's very first request is a deep
link (``/Chunks``): until some run has called ``st.navigation`` it treats the
folder as old-style multipage. ``setup_page`` notices that case and reruns
through ``app.py``, so a shared link opens the page inside the app. A page run
on its own (e.g. by AppTest) still gets its session prepared.
"""

from __future__ import annotations

import streamlit as st

from ui.documents import ensure_started


def setup_page() -> None:
    """Make sure this run goes through the app's navigation and the session is prepared."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - a Streamlit without the old-style pages mode
        PagesManager = None  # noqa: N806
    if PagesManager is not None and PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
    ensure_started()


def heading(title: str, intro: str | None = None) -> None:
    """The page's title and, under it, the one paragraph that says what the page is for."""
    st.title(title, anchor=False)
    if intro:
        st.markdown(intro)


def documents_or_stop(config=None) -> list:  # noqa: ANN001 - a PipelineConfig
    """The loaded documents; with none, say where to get some and end this run of the page."""
    from ui.documents import all_documents

    loaded = all_documents(config)
    if not loaded:
        st.info(
            "No documents are loaded yet. Upload files or load the samples on the Documents page.",
            icon=":material/inbox:",
        )
        st.page_link("app.py", label="Go to Documents", icon=":material/folder_open:")
        st.stop()
    return loaded
