"""Queries without labels: write a question, pick its document, paste the passage that answers it.

The list is kept in the session, downloads as a queries file, and can be
evaluated at once (``ui.evaluate`` reads it when the toggle is on). Checking a
passage is ``core.evaluation.query_labels``'s job.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core.errors import ConfigError
from core.evaluation.queries import EvalQuery
from core.evaluation.query_labels import labelled_query, queries_json
from core.schema import Document
from ui import state, widgets

PAGE_KEY = "evaluate"
USE_WRITTEN_KEY = f"{PAGE_KEY}.use_written"
QUESTION_KEY = f"{PAGE_KEY}.builder.question"
DOC_KEY = f"{PAGE_KEY}.builder.doc"
PASSAGE_KEY = f"{PAGE_KEY}.builder.passage"
PROBLEM_KEY = f"{PAGE_KEY}.builder.problem"


def chosen_written_queries() -> list[EvalQuery]:
    """The written queries when the person chose to evaluate them; else nothing."""
    written = state.written_queries()
    return written if written and state.widget_value(USE_WRITTEN_KEY, False) else []


def query_builder(documents: Sequence[Document]) -> None:
    """The form, the list written so far, its download and the switch that evaluates it."""
    by_name = {str(doc.metadata.get("file_name")): doc for doc in documents}
    with st.expander("Write your own queries", icon=":material/edit_note:", expanded=False):
        st.caption(
            "No labelled queries? Write a question, choose the document that answers it and paste the passage "
            "that does (copy it from the Chunks page's source or a node's text). Each passage is checked against "
            "the document the way an evaluation will look for it."
        )
        st.text_input("Question", key=QUESTION_KEY)
        st.selectbox("Document that answers it", sorted(by_name), key=DOC_KEY)
        st.text_area("Passage that answers it", height=110, key=PASSAGE_KEY)
        st.button("Add the query", icon=":material/add:", key=f"{PAGE_KEY}.builder.add", on_click=_add, args=(by_name,))
        problem = state.widget_value(PROBLEM_KEY)
        if problem:
            st.error(widgets.md_escape(problem), icon=":material/error:")
        written = state.written_queries()
        if not written:
            return
        st.dataframe(
            pd.DataFrame([{"query": q.query, "doc": q.doc, "passage": q.excerpts[0]} for q in written]),
            hide_index=True,
            width="stretch",
        )
        use, download, clear = st.columns([2, 1, 1], vertical_alignment="center")
        use.toggle(f"Evaluate these {len(written)} queries", key=USE_WRITTEN_KEY)
        download.download_button(
            "Download queries.json",
            queries_json(written),
            file_name="queries.json",
            mime="application/json",
            icon=":material/download:",
        )
        if clear.button("Clear the list", icon=":material/delete:"):
            state.clear_written_queries()
            st.rerun()


def _add(by_name: dict[str, Document]) -> None:
    """The Add button's callback (it runs before the page redraws, so the fields can be emptied for the next query)."""
    doc_name = state.widget_value(DOC_KEY)
    question, passage = state.widget_value(QUESTION_KEY, ""), state.widget_value(PASSAGE_KEY, "")
    try:
        if doc_name not in by_name:
            raise ConfigError("choose the document that answers the question")
        state.add_written_query(labelled_query(question, doc_name, passage, by_name[doc_name].text))
    except ConfigError as exc:
        state.set_widget_value(PROBLEM_KEY, str(exc))
        return
    state.set_widget_value(PROBLEM_KEY, None)
    state.set_widget_value(QUESTION_KEY, "")
    state.set_widget_value(PASSAGE_KEY, "")
