"""ui.launch: `streamlit run app.py` (what make run and chunkscope app start), its first page's imports done first."""

from __future__ import annotations

import logging
import sys

from streamlit.web import cli

from ui import launch


def test_it_imports_the_first_pages_modules_then_runs_app_py_with_the_options_given(monkeypatch):
    seen: list[list[str]] = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(list(sys.argv)))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    caching = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    before = caching.level

    launch.main(["--server.port", "8599", "--server.headless", "true"])

    assert seen == [["streamlit", "run", str(launch.APP), "--server.port", "8599", "--server.headless", "true"]]
    assert launch.APP.name == "app.py" and launch.APP.is_file()
    assert {"ui.home", "ui.cache", "ui.documents", "pandas", "core.loaders.pdf"} <= set(sys.modules)
    assert caching.level == before  # quiet only while importing
