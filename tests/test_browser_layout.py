"""Every page fits a laptop screen: at 1280×800 and 1440×900 no table, card or page is clipped.

Each view is a page opened as a person would (a link, then the tabs and buttons they press), measured
by :func:`browser_overflow.clipping`: a table whose columns are wider than the table, a header or a
cell (other than a document's own text) cut by its column, text running past its card. One chromium
context per screen size walks every view on the one app server, so the test costs a few seconds a view.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from browser_overflow import VIEWPORTS, Viewport, clipping
from browser_support import WAIT_MS, open_tab, pick

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


@dataclass(frozen=True)
class View:
    """A page at ``path`` after the steps a person takes: tabs to open, buttons or options to click, boxes to pick."""

    name: str
    path: str
    marker: str
    steps: tuple[tuple[str, ...], ...] = ()


# The longest splitter title there is, in every one of four columns, so names meet their narrowest cards.
LONG = "LangChain RecursiveCharacterTextSplitter"
QUERY = (
    "Query?postprocessors=similarity_cutoff,long_context_reorder"
    "&postprocessor.similarity_cutoff.similarity_cutoff=0.6"
)

VIEWS = (
    View("home", "", "Loaded documents"),
    View("chunks source", "Chunks", "LLM view"),
    View("chunks node table", "Chunks?splitter=sentence&chunk_size=128&chunk_overlap=32", "LLM view", (("tab", "Node table"),)),
    View("metadata", "Metadata", "EMBED view"),
    View("compare, two", "Compare", "Metrics"),
    View("compare, four long names", "Compare?splitter=langchain.recursive", "Metrics", (("click", "4"),)),
    View("compare, three long names", "Compare?splitter=langchain.recursive", "Metrics", (("click", "3"),)),
    View("compare, boundary diff", "Compare", "Metrics", (("tab", "Boundary diff"), ("expand", "Every changed cut point"))),
    View("compare, parsers", "Compare", "Metrics", (("click", "Parsers"),)),
    View("query, retrieval", QUERY, "Exactly what the LLM reads"),
    View("query, a stage", QUERY, "Exactly what the LLM reads", (("tab", "1 · similarity_cutoff"),)),
    View("evaluate", "Evaluate", "Run the evaluation"),
    View("tune front", "Evaluate", "Run the evaluation", (("click", "Tune"), ("press", "Search", "Pareto front"))),
    View("export", "Export", "Reproduce in code"),
)


def settle(page) -> None:  # noqa: ANN001
    """Wait until the script has stopped and nothing is stale or still loading."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"], [data-stale=\"true\"], "
        "[data-testid=\"stSkeleton\"]')",
        timeout=WAIT_MS,
    )
    page.wait_for_timeout(400)  # the grid sizes its columns in the frame after it mounts


def show(page, url: str, view: View) -> None:  # noqa: ANN001
    page.goto(f"{url}/{view.path}", wait_until="domcontentloaded")
    page.get_by_text(view.marker).first.wait_for(state="visible", timeout=WAIT_MS)
    settle(page)
    for kind, *what in view.steps:
        if kind == "tab":
            open_tab(page, what[0])
        elif kind == "click":
            page.get_by_text(what[0], exact=True).filter(visible=True).first.click()
        elif kind == "expand":  # an expander, named by the start of its label
            page.get_by_text(what[0]).filter(visible=True).first.click()
        elif kind == "press":  # a button, then what shows its work is done
            page.get_by_role("button", name=what[0]).filter(has_text=what[0]).first.click()
            page.get_by_text(what[1]).first.wait_for(state="visible", timeout=WAIT_MS)
        elif kind == "pick":
            pick(page, what[0], what[1])
        settle(page)


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=str)
def test_no_table_or_card_is_clipped(browser, app_url, viewport: Viewport) -> None:
    context = browser.new_context(viewport={"width": viewport.width, "height": viewport.height})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    found = {}
    try:
        for view in VIEWS:
            show(page, app_url, view)
            problems = clipping(page)
            if problems:
                found[view.name] = problems
    finally:
        context.close()
    assert not found, "\n".join(f"{name}: {problem}" for name, problems in found.items() for problem in problems)
