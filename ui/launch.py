"""``streamlit run app.py``, with the first page's imports done before the server takes its first visitor.

Streamlit imports a page's modules inside the first session's script run, so the first visitor waited for
pandas, plotly and every page module, and did the registries', the document cache's and the tokenizer's
first work (about 1.6 s of the first page's 3.5-4.4 s on this project's 2-core machine);
every later visitor found them imported. ``make run`` starts the app through here instead, so that wait
happens while the server starts. Usage: ``python -m ui.launch [streamlit run's options]``.
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def preload() -> None:
    """Import what the first page's script run imports, and do the once-per-process work it does: read the
    loader and splitter registries (the upload box's file types, the default splitter), digest the loaders' code
    (the document cache's key) and load the model tokenizer (each document's size in tokens)."""
    # Streamlit's cache decorators check their settings at import and warn, once each, that no server runs yet.
    caching = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    level = caching.level
    caching.setLevel(logging.ERROR)
    try:
        import ui.cache  # noqa: F401
        import ui.documents  # noqa: F401
        import ui.home  # noqa: F401
        from core.config_parts import default_splitter_name
        from core.loaders import LOADERS
        from core.loaders.cache import loader_code_version
        from core.tokens.tokenizers import get_tokenizer

        LOADERS.names()  # imports every loader (and plugin) once, as the upload box's file types would
        default_splitter_name()  # the splitter registry, engines included
        loader_code_version()
        get_tokenizer("model")
    finally:
        caching.setLevel(level)
    # What was imported lives as long as the server: out of the collector's sight, a full collection no longer
    # walks its ~140,000 objects (one took 80-140 ms before, ~30 after, inside a Chunks rerun now and then;
    # benchmarks/RESULTS.md, "The Chunks rerun from Enter").
    gc.freeze()


def main(argv: Sequence[str] | None = None) -> None:
    preload()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
