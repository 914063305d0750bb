"""What the real-browser tests share: one app server, one chromium, and the steps a person takes.

The ``app_url`` and ``browser`` fixtures in ``conftest.py`` are built from
:func:`app_server` and :func:`launch`, so every browser test module in a run
shares one ``streamlit run app.py`` and one Debian chromium. Every wait is on
something visible, with a generous timeout, never a fixed sleep.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
WAIT_MS = 180_000


def _screenshots_module():  # noqa: ANN202 - a module
    spec = importlib.util.spec_from_file_location("chunkscope_screenshots", ROOT / "scripts" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as an import would be (dataclasses look their module up).
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


shots = _screenshots_module()
CHROMIUM = shots.CHROMIUM


@contextmanager
def app_server(timeout: float = 180, env: dict[str, str] | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on a free localhost port (``env`` added to its environment); yields its URL."""
    with shots.running_app(timeout=timeout, env=env) as url:
        yield url


def launch(playwright):  # noqa: ANN001, ANN201 - playwright types
    """Debian's chromium with the flags that keep it quiet (no sandbox, GPU, updates or background traffic)."""
    return shots.launch_browser(playwright)


class RequestLog:
    """Every request a page makes; ``foreign`` lists those that leave the app's own origin."""

    def __init__(self, page, app_url: str) -> None:  # noqa: ANN001
        self.origin = _origin(app_url)
        self.urls: list[str] = []
        page.on("request", lambda request: self.urls.append(request.url))

    @property
    def foreign(self) -> list[str]:
        return [url for url in self.urls if _origin(url) != self.origin and not url.startswith(("data:", "blob:"))]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def idle(page) -> None:  # noqa: ANN001
    """Wait until Streamlit has finished running the script and dropped the previous run's elements."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && !document.querySelector('[data-stale=\"true\"]')",
        timeout=WAIT_MS,
    )


def loaded_count(page) -> int:  # noqa: ANN001
    heading = page.get_by_text(re.compile(r"Loaded documents · \d+")).first.inner_text()
    return int(heading.rsplit("·", 1)[1])


def start_upload(page, files: list[dict]) -> int:  # noqa: ANN001
    """Hand files to the uploader without waiting for the app; returns the document count before."""
    idle(page)
    before = loaded_count(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(files)
    return before


def wait_for_count(page, count: int) -> None:  # noqa: ANN001
    page.get_by_text(f"Loaded documents · {count}").first.wait_for(state="visible", timeout=WAIT_MS)
    idle(page)


def open_chunks(page) -> None:  # noqa: ANN001
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Chunks", exact=True).click()
    page.get_by_text("LLM view").first.wait_for(state="visible", timeout=WAIT_MS)
    idle(page)


def open_tab(page, name: str) -> None:  # noqa: ANN001
    """Select the tab ``name`` and keep it selected: a rerun that redraws the tabs may select the first again."""
    tab = page.get_by_role("tab", name=name).first
    for _ in range(5):
        tab.click()
        idle(page)
        if tab.get_attribute("aria-selected") == "true":
            return
    raise AssertionError(f"the {name} tab would not stay selected")


def visible_text(page, text: str):  # noqa: ANN001, ANN202
    """The first element showing ``text`` that is visible (tabs keep their hidden panels in the page)."""
    return page.get_by_text(text).filter(visible=True).first


def _combobox(page, label: str):  # noqa: ANN001, ANN202
    # Streamlit's select box is a combobox input named by its label (even a collapsed one).
    return page.locator(f'[data-testid="stSelectbox"] input[role="combobox"][aria-label="{label}"]').first


def _open(page, label: str):  # noqa: ANN001, ANN202
    box = _combobox(page, label)
    box.click()
    listed = page.get_by_role("option")
    try:
        listed.first.wait_for(state="visible", timeout=5_000)
    except Exception:  # some releases open the list on a key press, not a click
        box.press("ArrowDown")
        listed.first.wait_for(state="visible", timeout=WAIT_MS)
    return listed


def options(page, label: str) -> list[str]:  # noqa: ANN001
    """The options of the select box labelled ``label`` (opens and closes it)."""
    names = [text.strip() for text in _open(page, label).all_inner_texts()]
    page.keyboard.press("Escape")
    return names


def select_option(page, label: str, option: str) -> None:  # noqa: ANN001
    """Choose ``option`` in the select box labelled ``label``, without waiting for the rerun (for timing)."""
    _open(page, label)
    page.get_by_role("option", name=option, exact=True).first.click()


def pick(page, label: str, option: str) -> None:  # noqa: ANN001
    """Choose ``option`` in the select box labelled ``label`` and wait for the rerun."""
    select_option(page, label, option)
    idle(page)
