"""Streamlit-only helpers shared by the pages (``core`` never imports these): session state behind
typed accessors (``ui.state``), content-keyed caches over core (``ui.cache``), widgets drawn from declared
parameters (``ui.widgets``), the source with coloured spans (``ui.spans``), a node up close (``ui.nodes``),
plotly charts (``ui.charts``), the loaded documents (``ui.documents``), and one module per page that draws it
(``ui.home``, ``ui.chunks_view``, ``ui.metadata``, ``ui.compare``, ``ui.query`` with ``ui.trace``,
``ui.evaluate``, ``ui.export``); every page starts with ``ui.page.setup_page()``.
"""
