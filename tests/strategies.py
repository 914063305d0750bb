"""Hypothesis strategies for the texts splitters meet: prose, Markdown, hard Unicode, odd whitespace.

``texts()`` mixes them all; ``table_documents()`` builds a Markdown table with
the ``table``/``table_row`` elements a loader would report, for the
never-cut-a-row property.
"""

from __future__ import annotations

from hypothesis import strategies as st

from core.schema import Document, Element

_WORDS = (
    "the chunk of text splits at sentence boundaries where overlap keeps context retrieval "
    "embedding model token window node metadata answer query a an is was be it"
).split()

words = st.sampled_from(_WORDS)

# Characters that break naive offset arithmetic: astral emoji, ZWJ sequences,
# flags, combining marks, right-to-left scripts, CJK, zero-width and odd spaces.
_HARD = [
    "😀", "👨\u200d👩\u200d👧", "🇫🇷", "😀🏽", "e\u0301", "a\u0308\u0304", "שלום", "مرحبا", "日本語", "。", "？", "！",
    "\u200b", "\ufeff", "\u00a0", "\u3000", "ﬁ", "İ", "ß", "Ω", "\U00010348", "—", "…", "“quoted”",
]
hard_words = st.sampled_from(_HARD)
long_words = st.integers(min_value=20, max_value=120).map(lambda n: "x" * n)


@st.composite
def sentences(draw: st.DrawFn, word: st.SearchStrategy[str] = words) -> str:
    body = " ".join(draw(st.lists(word, min_size=1, max_size=12)))
    end = draw(st.sampled_from([".", ".", "!", "?", ";", ",", "", "。"]))
    return body[:1].upper() + body[1:] + end


@st.composite
def prose(draw: st.DrawFn) -> str:
    paragraphs = draw(st.lists(st.lists(sentences(), min_size=1, max_size=6).map(" ".join), min_size=1, max_size=6))
    separators = draw(st.lists(st.sampled_from(["\n\n", "\n\n\n", "\n", "\n \n"]), min_size=len(paragraphs),
                               max_size=len(paragraphs)))
    return "".join(p + s for p, s in zip(paragraphs, separators, strict=False)).rstrip("\n")


@st.composite
def markdownish(draw: st.DrawFn) -> str:
    blocks = []
    for kind in draw(st.lists(st.sampled_from(["heading", "para", "list", "code", "table"]), min_size=1, max_size=8)):
        if kind == "heading":
            blocks.append("#" * draw(st.integers(1, 4)) + " " + draw(sentences()))
        elif kind == "para":
            blocks.append(" ".join(draw(st.lists(sentences(), min_size=1, max_size=4))))
        elif kind == "list":
            blocks.append("\n".join("- " + draw(sentences()) for _ in range(draw(st.integers(1, 4)))))
        elif kind == "code":
            lines = draw(st.lists(st.sampled_from(["def f(x):", "    return x", "class A:", "    pass", "x = 1"]),
                                  min_size=1, max_size=6))
            blocks.append("```python\n" + "\n".join(lines) + "\n```")
        else:
            blocks.append(_table_text(draw(st.integers(1, 4)), draw))
    return "\n\n".join(blocks)


def _table_text(rows: int, draw: st.DrawFn) -> str:
    lines = ["| name | value |", "| --- | --- |"]
    for _ in range(rows):
        lines.append(f"| {draw(words)} {draw(words)} | {draw(st.integers(0, 999))} |")
    return "\n".join(lines)


@st.composite
def unicode_text(draw: st.DrawFn) -> str:
    mixed = st.one_of(words, hard_words)
    return " ".join(draw(st.lists(sentences(mixed), min_size=1, max_size=8)))


whitespace_runs = st.text(alphabet=" \t\n\r\u00a0\u3000x.", min_size=0, max_size=80)


@st.composite
def with_long_words(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(long_words, sentences()), min_size=1, max_size=5))
    return " ".join(parts)


def texts() -> st.SearchStrategy[str]:
    """Any of the above, sometimes two glued together."""
    one = st.one_of(prose(), markdownish(), unicode_text(), whitespace_runs, with_long_words(),
                    st.text(max_size=60))
    return st.one_of(one, st.tuples(one, one).map(lambda pair: "\n\n".join(pair)))


@st.composite
def table_documents(draw: st.DrawFn) -> Document:
    """Prose, a Markdown table with its elements, more prose."""
    before = draw(prose())
    rows = []
    for _ in range(draw(st.integers(1, 8))):
        cells = " ".join(draw(st.lists(words, min_size=1, max_size=8)))
        rows.append(f"| {cells} | {draw(st.integers(0, 99999))} |")
    header = "| name | value |"
    table = "\n".join([header, "| --- | --- |", *rows])
    after = draw(prose())
    text = before + "\n\n" + table + "\n\n" + after
    table_start = len(before) + 2
    header_end = table_start + len(header) + 1 + len("| --- | --- |")
    elements = [Element("table", table_start, table_start + len(table), attrs={"header": header,
                                                                                "header_end": header_end})]
    position = header_end + 1
    for row in rows:
        elements.append(Element("table_row", position, position + len(row)))
        position += len(row) + 1
    assert text[elements[-1].start_char : elements[-1].end_char] == rows[-1]
    return Document(text=text, metadata={"file_name": "table.md"}, elements=elements)
