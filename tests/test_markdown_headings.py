"""The Markdown splitter's heading scanner finds exactly the headings a full markdown-it parse finds.

Literal examples for the line rules it applies itself, then a property against
the loader's parser (the reference) on text made of Markdown's block syntax.
"""

from __future__ import annotations

import os
import re
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.loaders.markdown import markdown_elements
from core.splitters.fast import markdown_stretches
from core.splitters.fast.markdown_scan import markdown_headings


def headings(text):
    return [(text[e.start_char : e.end_char], e.level, e.attrs["title"]) for e in markdown_headings(text)]


def reference(text):
    return [
        (text[e.start_char : e.end_char], e.level, e.attrs["title"])
        for e in markdown_elements(text)
        if e.kind == "heading"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# Title\n\nbody", [("# Title", 1, "Title")]),
        # A line of a no-break space is not blank: the paragraph goes on, and the underline takes it all.
        ("Intro\n\u00a0\nHeading\n===", [("Intro\n\u00a0\nHeading\n===", 1, "Intro Heading")]),
        ("```\n# not a heading\n```\n## After", [("## After", 2, "After")]),
        ("~~~\n# not a heading\n~~~\n# After", [("# After", 1, "After")]),
        ("~~~\n# inside\n```\n# still inside\n~~~", []),  # only ~~~ closes a ~~~ fence
        ("````\n```\n# inside\n````\n# out", [("# out", 1, "out")]),  # a shorter run does not close
        ("```\n# unclosed fence runs to the end", []),
        ("#hashtag is text\n\n#5 too", []),
        (
            "## Closing hashes ##\n### Kept# \n#### # \n",
            [
                ("## Closing hashes ##", 2, "Closing hashes"),
                ("### Kept#", 3, "Kept#"),
                ("#### #", 4, ""),
            ],
        ),
        ("   # three spaces\n\n    # four spaces is code", [("# three spaces", 1, "three spaces")]),
        ("\t# a tab is four columns", []),
        ("Title\n=====\n\nSub\n---", [("Title\n=====", 1, "Title"), ("Sub\n---", 2, "Sub")]),
        ("Two lines\nof title\n===", [("Two lines\nof title\n===", 1, "Two lines of title")]),
        ("text\n# interrupts a paragraph", [("# interrupts a paragraph", 1, "interrupts a paragraph")]),
        ("# Why *Chunk* `size` [matters](x)", [("# Why *Chunk* `size` [matters](x)", 1, "Why Chunk size matters")]),
        ("# See [docs]\n\n[docs]: https://example.com", [("# See [docs]", 1, "See docs")]),
        ("> # In a quote\n\n- # In a list", [("> # In a quote", 1, "In a quote"), ("- # In a list", 1, "In a list")]),
        ("<div>\n# inside an HTML block\n</div>\n\n# After", [("# After", 1, "After")]),
        ("<!--\n\n# commented out\n\n-->\n# After", [("# After", 1, "After")]),
        ("| a |\n---\n\n# T", [("# T", 1, "T")]),
        (
            "- item\r# after a list, CR line ends\r- b\r  Sub\r  ---",
            [
                ("# after a list, CR line ends", 1, "after a list, CR line ends"),
                ("- b\r  Sub\r  ---", 2, "b Sub"),
            ],
        ),
        (
            "- plain list\n- no headings\n\ntext\n===",
            [("text\n===", 1, "text")],
        ),  # a one-column table, not a setext heading
        # An HTML block runs on over a line of no-break spaces, which is not blank to markdown-it.
        ("<div>\n\xa0\n# inside the block", []),
        ("- a\n- <!-- a comment -->\n\n# After", [("# After", 1, "After")]),
        ("<!--\n\n-->\n\n- <br>\n\n# After", [("# After", 1, "After")]),
        # A reference defined in a list (a stretch with nothing else in it) makes a title's link.
        ("# See [docs]\n\n- item\n  [docs]: /url\n\n- [docs]: /url\n", [("# See [docs]", 1, "See docs")]),
        (
            "- item\n\n  ```\n  # in the item's fence\n\n# out of the list\n  ```",
            [("# out of the list", 1, "out of the list")],
        ),
    ],
)
def test_scanner_finds_the_headings_commonmark_finds(text, expected):
    assert headings(text) == expected
    assert headings(text) == reference(text)


LINES = st.sampled_from(
    [
        "",
        "",
        " \t",
        "\u00a0",  # not blank to CommonMark (only spaces and tabs are): paragraph text
        "\f",
        "\u3000x",
        "text",
        "more text",
        "# H1",
        "## H2 ##",
        "###### six",
        "####### seven",
        "#tag",
        "   # indented",
        "    # code",
        "\t# tab",
        "===",
        "---",
        "- - -",
        "***",
        "___",
        "```",
        "````",
        "```py",
        "~~~",
        "~~~~ x",
        "- item",
        "* item",
        "+ item",
        "1. one",
        "2) two",
        "  - nested",
        "  continued",
        "> quote",
        "> # quoted",
        ">",
        "<div>",
        "</div>",
        "<!--",
        "-->",
        "<pre>",
        "</pre>",
        "<span>x</span>",
        "| a | b |",
        "|---|---|",
        "a | b",
        "- `x`: y",
        "<https://x.y>",
        "> ```",
        "- ```",
        "  # two in",
        "<a>",
        '[x]: /url "t"',
        "[x]: /url",
        "[x]",
        "# [x] link",
        "# *em* `code`",
        "\\# escaped",
        "# a \\#",
        "   ```",
        "  ~~~",
        # HTML blocks that end on their own line, later, or at a blank line (the stretches left unparsed)
        "<!-- one line -->",
        "- <!-- in a list -->",
        "<?php x ?>",
        "?>",
        "<![CDATA[",
        "]]>",
        "<!DOCTYPE html>",
        "<!DOCTYPE",
        "<script>",
        "</script>",
        "<details>",
        "- <img src=x>",
        # reference definitions away from any heading, and titles that use them
        "- [y]: /y",
        "> [y]: /y",
        "[y]: /y",
        "# [y] ref",
        "# ![y] image",
        "[y]",
    ]
)


@settings(max_examples=int(os.environ.get("CHUNKSCOPE_SCAN_EXAMPLES", "500")), deadline=None)
@given(st.lists(LINES, max_size=25), st.sampled_from(["\n", "\r\n", "\r"]))
def test_scanner_agrees_with_markdown_it(lines, newline):
    text = newline.join(lines)
    assert headings(text) == reference(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab #\n\r", max_size=80), st.integers(min_value=1, max_value=9))
def test_line_table_holds_every_line_between_its_breaks(text, block):
    # Small blocks, so the table's block-at-a-time fast path crosses many block boundaries.
    breaks = list(re.finditer(r"\r\n|\r|\n", text))
    with patch.object(markdown_stretches, "_TABLE_BLOCK", block):
        table = markdown_stretches.LineTable(text)
    assert list(table.starts) == [0, *(m.end() for m in breaks)]
    assert list(table.ends) == [*(m.start() for m in breaks), len(text)]
