"""The Evaluate page's "Draft questions with an LLM" box: what drafting will send, Draft, then the questions.

Nothing is sent until a person presses Draft under its cost (calls and prompt tokens). The drafted questions
are shown with their excerpts in a table (cells are plain text, never Markdown: model output is untrusted); a
person unticks the ones to drop, edits a question or an excerpt, and keeps the rest as the queries to evaluate
(they join the written queries, once each, and their switch turns on) or downloads them. An edited excerpt is checked again
(:func:`core.evaluation.query_labels.labelled_query`). Drafting itself is :mod:`core.evaluation.drafting`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core.config import PipelineConfig
from core.errors import ChunkScopeError, ConfigError
from core.evaluation.drafting import QuestionDrafter, draft_bounded, plan
from core.evaluation.queries import EvalQuery
from core.evaluation.query_labels import labelled_query, queries_json
from core.limits import DEFAULT_LIMITS
from core.llm import LLMConnection
from core.schema import Document
from ui import state, widgets
from ui.evaluate_builder import USE_WRITTEN_KEY

KEY = "evaluate.draft"
RUN_KEY = f"{KEY}.run"
DOCS_KEY = f"{KEY}.docs"
TABLE_KEY = f"{KEY}.table"
KEEP_KEY = f"{KEY}.keep"
EASIER = (
    "Drafted questions are easier than real ones: the model reads the passage before it asks, so a question "
    "shares its words with the answer, and retrieval finds it more easily than what people ask. Use them to "
    "compare configurations with each other, not as the score real users would see."
)


def draft_box(config: PipelineConfig, documents: Sequence[Document]) -> None:
    """Draw the box; with no LLM configured it says where to set one and sends nothing."""
    with st.expander("Draft questions with an LLM", icon=":material/smart_toy:", expanded=False):
        st.caption(
            "No labelled queries? The LLM is shown passages of each document (taken from the document's own "
            "text, not from a configuration being judged) and drafts questions, each with the passage's words "
            "that answer it. A question is kept only when its excerpt is found once in the document."
        )
        st.info(EASIER, icon=":material/info:")
        connection = config.llm
        if not connection.configured:
            st.caption(
                "Set an endpoint in the Metadata page's LLM extractors box (Connection) to draft questions; "
                "without one nothing is ever sent."
            )
            return
        st.caption(widgets.md_escape(f"Asks {connection.describe()}."))
        values = widgets.param_widgets(QuestionDrafter, KEY, columns=2, advanced_label="Lengths and prompt")
        drafter, error = widgets.try_build(QuestionDrafter, values)
        by_name = {str(doc.metadata.get("file_name")): doc for doc in documents}
        names = sorted(by_name)
        held = state.seed_widget(DOCS_KEY, names)
        if any(name not in by_name for name in held):  # a document removed since is no longer a choice
            state.set_widget_value(DOCS_KEY, [name for name in held if name in by_name])
        picked = st.multiselect("Documents to draft questions about", names, key=DOCS_KEY)
        if error or drafter is None:
            st.error(widgets.md_escape(error or "the drafting parameters are not valid"), icon=":material/error:")
            return
        chosen = [by_name[name] for name in picked if name in by_name]
        if chosen:
            _cost_and_run(drafter, connection, chosen)
        else:
            st.caption("Choose at least one document.")
        _drafted(by_name)


def _cost_and_run(drafter: QuestionDrafter, connection: LLMConnection, chosen: list[Document]) -> None:
    cost = plan(chosen, drafter)
    st.markdown(
        f"**{cost.calls:,} calls**, about **{cost.prompt_tokens:,} prompt tokens** and at most "
        f"{cost.reply_tokens:,} reply tokens. Largest prompt: {cost.largest_prompt_tokens:,} of the model's "
        f"{connection.context_window:,}-token window. Replies already in the cache are not asked again."
    )
    # The click is remembered by a callback: a rerun of the script (by the app frame) would lose a button's value.
    st.button(
        f"Draft ({cost.calls:,} calls)", key=RUN_KEY, type="primary", icon=":material/play_arrow:",
        on_click=state.request_drafting,
    )
    if not state.take_drafting_request():
        return
    try:
        with st.spinner(f"Asking {widgets.md_escape(connection.model)} for questions…"):
            drafted = draft_bounded(chosen, drafter, connection, DEFAULT_LIMITS.work_memory_mb)
    except ChunkScopeError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        return
    state.set_drafted_questions(drafted)


def _drafted(by_name: dict[str, Document]) -> None:
    drafted = state.drafted_questions()
    if drafted is None:
        return
    st.caption(widgets.md_escape(drafted.sentence() + "."))
    if not drafted.queries:
        return
    table = pd.DataFrame(
        [{"keep": True, "question": q.query, "doc": q.doc, "excerpt": q.excerpts[0]} for q in drafted.queries]
    )
    # A table per drafting: the last one's edits do not apply to new questions.
    generation = hashlib.sha256(queries_json(drafted.queries).encode("utf-8")).hexdigest()[:12]
    edited = st.data_editor(
        table,
        key=f"{TABLE_KEY}.{generation}",
        hide_index=True,
        width="stretch",
        disabled=["doc"],
        column_config={
            "keep": st.column_config.CheckboxColumn("Keep", help="Untick to drop the question"),
            "question": st.column_config.TextColumn("Question"),
            "excerpt": st.column_config.TextColumn("Excerpt that answers it"),
        },
    )
    kept, problems = _checked(edited, by_name)
    for problem in problems:
        st.error(widgets.md_escape(problem), icon=":material/error:")
    if not kept:
        return
    use, download = st.columns([2, 1], vertical_alignment="center")
    use.button(f"Evaluate these {len(kept)} questions", key=KEEP_KEY, icon=":material/check:", on_click=_keep, args=(kept,))
    download.download_button(
        "Download queries.json",
        queries_json(kept),
        file_name="queries.json",
        mime="application/json",
        icon=":material/download:",
        key=f"{KEY}.download",
    )


def _keep(kept: list[EvalQuery]) -> None:
    """The Keep button's callback: the questions ticked join the written queries (once), which are then evaluated."""
    written = state.written_queries()
    for query in kept:
        if query not in written:
            state.add_written_query(query)
    state.set_widget_value(USE_WRITTEN_KEY, True)


def _checked(edited: pd.DataFrame, by_name: dict[str, Document]) -> tuple[list[EvalQuery], list[str]]:
    """The rows ticked, each checked as a written query is (an edited excerpt must still be in its document)."""
    kept, problems = [], []
    for number, row in enumerate(edited.to_dict("records"), start=1):
        if not row.get("keep"):
            continue
        doc = str(row.get("doc"))
        try:
            if doc not in by_name:
                raise ConfigError(f"{doc} is not loaded")
            kept.append(labelled_query(str(row.get("question") or ""), doc, str(row.get("excerpt") or ""), by_name[doc].text))
        except ConfigError as exc:
            problems.append(f"question {number}: {exc}")
    return kept, problems
