"""Streamlit-only helpers shared by the pages (``core`` never imports these): session state behind
typed accessors (``ui.state``, the only module that touches ``st.session_state``), content-keyed caches over
core (``ui.cache``), widgets drawn from declared parameters (``ui.widgets``), the source with coloured spans
(``ui.spans``), a node up close (``ui.nodes``), plotly charts (``ui.charts``), the loaded documents
(``ui.documents``), and the modules each page draws from: ``ui.home``; ``ui.chunks_view`` and
``ui.chunks_tabs``; ``ui.metadata``; ``ui.compare``; ``ui.query`` with ``ui.chain_editor``, ``ui.query_run``
and ``ui.trace``; ``ui.evaluate``; ``ui.export``. Every page starts with ``ui.page.setup_page()``.
"""
