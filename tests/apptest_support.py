"""Opening a page of the app the way a person does, for the page AppTests."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
# The sentence splitter at its defaults (250/50 model tokens): the app's default before the recommended hierarchy.
# Tests of a page's workings (its tables, counts, forms) open on it, so their literal counts stay as written.
SENTENCE = {"splitter": "sentence"}


def open_page(
    page: str,
    query: Mapping[str, str | list[str]] | None = None,
    *,
    timeout: float = 120,
    uploads: Sequence[tuple[str, bytes, str]] = (),
) -> AppTest:
    """A first visit through a link carrying ``query`` (the app's frame runs), ``uploads`` dropped on the
    Documents page as (name, bytes, MIME type), then ``page`` (e.g. "pages/1_Chunks.py")."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if uploads:
        at.file_uploader[0].set_value(list(uploads)).run()
        assert not at.exception, at.exception
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def shown(text: str) -> str:
    """What a reader sees of Markdown the app escaped (``chunk\\_size`` reads ``chunk_size``)."""
    return re.sub(r"\\(.)", r"\1", text)
