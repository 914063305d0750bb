"""ChunkScope's Streamlit entry: the navigation frame and the Home (documents) page.

Run with ``streamlit run app.py``. Every page in ``pages/`` is listed in the
navigation (ordered by its numeric prefix); this frame runs before each of them,
so a first visit to any page starts with the sample documents loaded and the
configuration read from the URL.
"""

from __future__ import annotations

import streamlit as st

from ui import cache
from ui import home as ui_home
from ui.documents import all_documents, ensure_started


def home() -> None:
    """The Documents page: upload files or load the samples, see what is loaded, pick where to go next."""
    ui_home.intro()
    left, right = st.columns([3, 2], gap="large")
    with left:
        ui_home.uploader()
    with right:
        ui_home.samples_card()
    ui_home.failures()
    ui_home.document_table(all_documents())
    ui_home.tour()


def main() -> None:
    # A local favicon: a :material/: icon would be fetched from fonts.gstatic.com (no network at run time).
    st.set_page_config(page_title="ChunkScope", page_icon=str(ui_home.FAVICON), layout="wide")
    pages = ui_home.navigation_pages(home)
    navigation = st.navigation(pages)
    st.html(ui_home.APP_CSS)
    ensure_started()
    ui_home.link_warnings(documents_page=pages[0])
    ui_home.sidebar_file_count()
    navigation.run()
    # Under `make run`, after the first page is drawn: the model loads while it is read, and the first query finds it.
    cache.preload_embedder()


main()
