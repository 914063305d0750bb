"""The Markdown splitter's heading scanner finds exactly the headings a full markdown-it parse finds.

Literal examples for the line rules it applies itself, then a property against
the loader's parser (the reference) on text made of Markdown's block syntax.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.loaders.markdown import markdown_elements
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
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(LINES, max_size=25), st.sampled_from(["\n", "\r\n", "\r"]))
def test_scanner_agrees_with_markdown_it(lines, newline):
    text = newline.join(lines)
    assert headings(text) == reference(text)
