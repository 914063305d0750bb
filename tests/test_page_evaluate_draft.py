"""AppTest: the Evaluate page's "Draft questions with an LLM" box against a real chat-completions server on 127.0.0.1.

Without an endpoint it sends nothing; with one, the cost comes first, Draft sends, the questions are shown with
their excerpts and the reasons the others were dropped, and keeping them makes them the queries evaluated. A
second Draft sends nothing. The key appears in nothing the page shows.
"""

from __future__ import annotations

import apptest_support
from apptest_support import shown
from llm_server import NEEDS_LLM_EXTRA, leaks
from streamlit.testing.v1 import AppTest

from core.config import PipelineConfig
from core.evaluation.excerpts import occurrences
from core.loaders import load
from ui.documents import sample_files
from ui.evaluate_draft import EASIER

pytestmark = NEEDS_LLM_EXTRA

PAGE = "pages/5_Evaluate.py"


def open_with(connection) -> AppTest:  # noqa: ANN001
    at = AppTest.from_file(str(apptest_support.ROOT / "app.py"), default_timeout=300)
    at.run()
    if connection is not None:
        at.session_state["cs_config"] = PipelineConfig().replace(llm=connection)
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def everything_shown(at: AppTest) -> str:
    parts = [str(e.value) for kind in ("markdown", "caption", "code", "error", "warning", "info") for e in getattr(at, kind)]
    parts += [frame.value.to_csv() for frame in at.dataframe]
    return "\n".join(parts)


def test_without_an_endpoint_the_box_says_where_to_set_one_and_sends_nothing(endpoint):
    at = open_with(None)
    assert any("Metadata page's LLM extractors box" in shown(c.value) for c in at.caption)
    assert not [b for b in at.button if b.key == "evaluate.draft.run"]
    assert endpoint.seen.count() == 0


def test_cost_then_draft_then_keep_evaluates_the_drafted_questions(endpoint):
    at = open_with(endpoint.connection("echo-evaluate-page"))
    assert any(EASIER in i.value for i in at.info)
    at.multiselect(key="evaluate.draft.docs").set_value(["chunking_guide.md"]).run()
    at.slider(key="evaluate.draft.passages").set_value(2).run()
    cost = " ".join(m.value for m in at.markdown)
    assert "**2 calls**" in cost and "prompt tokens" in cost
    assert endpoint.seen.count() == 0  # the cost is shown; nothing is sent yet
    at.button(key="evaluate.draft.run").click().run()
    assert not at.exception, at.exception
    assert endpoint.seen.count() == 2
    sentence = " ".join(shown(c.value) for c in at.caption if "Drafting questions" in shown(c.value))
    assert "kept 4 questions" in sentence and "the excerpt is not in the passage" in sentence
    (table,) = [frame.value for frame in at.dataframe if "excerpt" in frame.value.columns]
    guide = next(doc for doc in load(next(p for p in sample_files() if p.name == "chunking_guide.md")))
    assert len(table) == 4 and set(table["doc"]) == {"chunking_guide.md"}
    assert all(len(occurrences(guide.text, excerpt)) == 1 for excerpt in table["excerpt"])
    download = [b for b in at.get("download_button") if b.proto.label == "Download queries.json"]
    assert download

    at.button(key="evaluate.draft.keep").click().run()
    assert not at.exception, at.exception
    assert at.toggle(key="evaluate.use_written").value is True
    assert any("**4 of 4 queries written here**" in c.value for c in at.caption)
    assert not at.error, [e.value for e in at.error]

    # Drafting again sends nothing: every reply is in the cache.
    at.button(key="evaluate.draft.run").click().run()
    assert endpoint.seen.count() == 2
    assert any("0 requests, 2 of 2 calls answered from the cache" in shown(c.value) for c in at.caption)
    assert not leaks(everything_shown(at))


def test_an_unticked_question_is_dropped_and_an_edited_excerpt_is_checked_again():
    import pandas as pd

    from core.schema import Document
    from ui.evaluate_draft import _checked

    text = "The river Wenn rises in the hills above Ardle. Mills were built along its banks in 1820."
    by_name = {"wenn.txt": Document(text=text, metadata={"file_name": "wenn.txt"})}
    edited = pd.DataFrame(
        [
            {"keep": True, "question": "Where does the Wenn rise?", "doc": "wenn.txt", "excerpt": "rises in the hills above Ardle"},
            {"keep": False, "question": "Dropped", "doc": "wenn.txt", "excerpt": "Mills were built along its banks"},
            {"keep": True, "question": "Edited", "doc": "wenn.txt", "excerpt": "Mills were built in 1999"},
        ]
    )
    kept, problems = _checked(edited, by_name)
    assert [q.query for q in kept] == ["Where does the Wenn rise?"]
    assert problems == [
        "question 3: the passage is not in wenn.txt: copy it from the document's text (the Chunks page's source or a node)"
    ]
