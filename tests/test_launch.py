"""ui.launch: `streamlit run app.py` (what make run and chunkscope app start), its first page's imports done first."""

from __future__ import annotations

import logging
import subprocess
import sys

from streamlit.web import cli

from ui import launch


def test_it_imports_the_first_pages_modules_then_runs_app_py_with_the_options_given(monkeypatch):
    seen: list[list[str]] = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(list(sys.argv)))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(launch.gc, "freeze", lambda: None)  # this test process's objects stay collectable
    caching = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    before = caching.level

    launch.main(["--server.port", "8599", "--server.headless", "true"])

    assert seen == [["streamlit", "run", str(launch.APP), "--server.port", "8599", "--server.headless", "true"]]
    assert launch.APP.name == "app.py" and launch.APP.is_file()
    assert caching.level == before  # quiet only while importing


def test_the_preload_imports_in_a_fresh_interpreter_what_the_first_page_would():
    # In a process of its own: in this one, other tests may have imported them already.
    probe = (
        "import sys; from ui import launch; wanted = ('ui.home', 'ui.cache', 'ui.documents', 'pandas', "
        "'core.loaders.pdf', 'core.engines'); before = [m for m in wanted if m in sys.modules]; launch.preload(); "
        "print(before, [m for m in wanted if m not in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=launch.APP.parent, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] []"


def test_the_preload_leaves_what_it_imported_out_of_the_collectors_full_collections():
    probe = "import gc; from ui import launch; launch.preload(); print(gc.get_freeze_count())"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=launch.APP.parent, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 50_000  # the imports' objects, frozen once the imports are done
