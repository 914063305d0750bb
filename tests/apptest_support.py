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


def click_while_running(key: str) -> None:
    """What a browser sends when a person clicks the button ``key`` while the script runs: a rerun request with the
    page's widget values and that button's trigger. Streamlit stops the run at the script's next element update."""
    from streamlit.proto.WidgetStates_pb2 import WidgetStates
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    session = ctx.session_state._state
    button = session._key_id_mapper.get_id_from_key(key)
    states = WidgetStates()
    # Every widget's value, but no other button's click (a trigger is true for one run only).
    states.widgets.extend(s for s in session.get_widget_states() if s.WhichOneof("value") != "trigger_value")
    clicked = states.widgets.add()
    clicked.id, clicked.trigger_value = button, True
    assert ctx.script_requests.request_rerun(RerunData(widget_states=states, page_script_hash=ctx.page_script_hash))
