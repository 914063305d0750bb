"""A Markdown load that reads only tables and the title equals the full parse on both.

``markdown_tables_and_title`` parses a prefix of the text (up to the first level-1 heading) when no
line pair can be a table; every splitter that declares ``elements_read`` gets the same nodes from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.loaders import load, load_bytes
from core.loaders.base import reading_elements
from core.loaders.markdown import TABLE_KINDS, markdown_elements, markdown_tables_and_title
from core.splitters import SPLITTERS, get_splitter

ROOT = Path(__file__).resolve().parent.parent

# Lines that make or unmake headings and tables: fences, quotes, lists, HTML, references, setext underlines.
LINES = [
    "# Title",
    "# Second *title*",
    "#NoSpace",
    "   # three spaces",
    "    # four spaces: code",
    "\t# tab",
    "## h2",
    "#",
    "# [linked][ref] title",
    "# ![image](x.png) title",
    "[ref]: /url",
    "[ref]: /url 'a title",
    "that continues'",
    "Some paragraph text.",
    "===",
    "---",
    "- item",
    "- # heading in a list",
    "1. # heading in an ordered list",
    "> # quoted heading",
    "> quoted text",
    "```",
    "~~~",
    "<div>",
    "</div>",
    "<!--",
    "-->",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "a | b",
    "--|--",
    "> | q | r |",
    "> |---|---|",
    "- | l | m |",
    "  |---|---|",
    "|:-:|",
    "# \\# escaped hash",
    "# Title with `code`",
    "",
    "",
]


def outline_of_full_parse(text: str) -> tuple[list, str | None]:
    elements = markdown_elements(text)
    title = next((e.attrs["title"] for e in elements if e.kind == "heading" and e.level == 1), None)
    return [e for e in elements if e.kind in TABLE_KINDS], title


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=30))
def test_tables_and_title_equal_the_full_parse(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert markdown_tables_and_title(text) == outline_of_full_parse(text)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# Guide\n\nText.", "Guide"),
        ("Intro\n\n```\n# not a title\n```\n\n# Real title\n", "Real title"),
        ("Guide\n=====\n\nText", "Guide"),
        ("> # Quoted\n", "Quoted"),
        # A link's target is defined at the end: the title holds the link's words, as the full parse reads it.
        ("# See [the guide][g]\n\nText.\n\n[g]: https://example.com\n", "See the guide"),
        # A setext underline inside a reference's title (which ends two lines on), an HTML comment, code in a list.
        ("[r]: /url 'a\n===\n'\n\n# Heading\n", "Heading"),
        ("<!--\n# hidden\n-->\n\n# Shown\n", "Shown"),
        ("- a\n\n      # code in item\n\n# Top\n", "Top"),
        # A heading ends a reference's unfinished title, in the full parse too.
        ("[r]: /url 'a\n# Interrupts\n'\n", "Interrupts"),
        ("No heading at all.\n", None),
    ],
)
def test_title_examples(text: str, title: str | None) -> None:
    assert markdown_tables_and_title(text) == ([], title) == (outline_of_full_parse(text)[0], title)


def test_the_shipped_markdown_gives_the_same_tables_and_title() -> None:
    paths = sorted(ROOT.glob("sample_docs/**/*.md")) + sorted(ROOT.glob("docs/*.md")) + [ROOT / "README.md"]
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if text.strip():
            assert markdown_tables_and_title(text) == outline_of_full_parse(text), path


@pytest.mark.parametrize("name", [n for n in SPLITTERS.names() if SPLITTERS.get_class(n).elements_read is not None])
def test_a_splitter_that_reads_only_tables_cuts_the_same_nodes_from_the_lighter_load(name: str) -> None:
    splitter = get_splitter(name)
    for path in sorted(ROOT.glob("sample_docs/**/*.md")):
        data = path.read_bytes()
        if not data.strip():
            continue
        full = load(path)
        with reading_elements(splitter.elements_read):
            light = load_bytes(data, path.name)
        assert [d.metadata for d in light] == [d.metadata for d in full]
        assert splitter.split(light) == splitter.split(full), path


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*LINES, "Text with *emphasis*, `code` and [a link](x).", "# *Emph* title"]), max_size=30))
def test_elements_equal_those_of_the_parse_of_every_inline(lines: list[str]) -> None:
    """Only headings' inline markup is parsed (their titles); the elements are those of markdown-it's full parse."""
    from unittest.mock import patch

    from markdown_it import MarkdownIt

    text = "\n".join(lines)
    with patch("core.loaders.markdown._block_parser", lambda: MarkdownIt("commonmark").enable("table")):
        everything = markdown_elements(text)
    assert markdown_elements(text) == everything


@pytest.mark.parametrize("line", ["-" * 300_000 + "x", "|" * 300_000 + "x", "=" * 300_000 + " x", " " * 300_000 + "x"])
def test_a_long_hostile_line_is_scanned_in_linear_time(line: str) -> None:
    """The candidate scans are single character classes: a line of 300,000 dashes costs milliseconds, not minutes."""
    import time

    started = time.process_time()
    assert markdown_tables_and_title("a | b\n" + line + "\n") == ([], None)
    assert time.process_time() - started < 5
