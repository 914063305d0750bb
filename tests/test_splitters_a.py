"""Spec by example for recursive, token, sentence, sentence_window, code, and sentence segmentation.

Each case: a short input, the parameters, the exact chunks expected.
"""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.schema import Document, Element, MetadataMode
from core.splitters import get_splitter
from core.splitters.pieces import CutGuard
from core.tokens.segmentation import sentence_spans


def chunks(name: str, text: str, **params: object) -> list[str]:
    return [node.text for node in get_splitter(name, **params).split([Document(text=text)])]


# --- recursive -------------------------------------------------------------------------------------------------

PROSE = "Alpha beta gamma.\n\nDelta epsilon zeta eta theta.\nIota kappa.\n\nLambda."


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        # Paragraphs that fit are packed; the long paragraph is cut at its line, then at spaces.
        # "Iota kappa." is not packed with "Lambda." because it came out of the oversized paragraph (as LangChain).
        (dict(chunk_size=20, chunk_overlap=0), ["Alpha beta gamma.", "Delta epsilon zeta", "eta theta.", "Iota kappa.", "Lambda."]),
        # The overlap is made of whole trailing pieces ("zeta"), at most 8 characters.
        (dict(chunk_size=20, chunk_overlap=8), ["Alpha beta gamma.", "Delta epsilon zeta", "zeta eta theta.", "Iota kappa.", "Lambda."]),
        (dict(chunk_size=1000, chunk_overlap=0), [PROSE]),
        # Pieces longer than the chunk are cut between characters, the last resort; the separator that
        # starts a piece counts (" gamma." is 7), so "gamma." comes out as " gamm" (trimmed) and "a.".
        (dict(chunk_size=5, chunk_overlap=0), ["Alpha", "beta", "gamm", "a.", "Delt", "a", "epsi", "lon", "zeta", "eta", "thet", "a.", "Iota", "kapp", "a.", "Lamb", "da."]),
        # Counting whitespace words instead of characters.
        (dict(chunk_size=3, chunk_overlap=0, tokenizer="words"), ["Alpha beta gamma.", "Delta epsilon zeta", "eta theta.", "Iota kappa.", "Lambda."]),
    ],
)
def test_recursive_default_separators(params: dict, expected: list[str]) -> None:
    assert chunks("recursive", PROSE, **params) == expected


def test_recursive_python_keeps_a_decorator_with_its_function() -> None:
    code = "import os\n\n\n@dec\ndef f(x):\n    return x\n\n\nclass A:\n    def g(self):\n        pass\n\n    def h(self):\n        pass\n"
    assert chunks("recursive", code, chunk_size=40, chunk_overlap=0, language="python") == [
        "import os",
        "@dec\ndef f(x):\n    return x",
        "class A:\n    def g(self):\n        pass",
        "def h(self):\n        pass",
    ]


def test_recursive_markdown_cuts_before_headings() -> None:
    text = "# Guide\nIntro line.\n## Install\nRun pip install.\n## Use\nCall split."
    assert chunks("recursive", text, chunk_size=30, chunk_overlap=0, language="markdown") == [
        "# Guide\nIntro line.",
        "## Install\nRun pip install.",
        "## Use\nCall split.",
    ]
    # Without the preset, lines are packed regardless of headings.
    assert chunks("recursive", text, chunk_size=30, chunk_overlap=0) == [
        "# Guide\nIntro line.\n## Install",
        "Run pip install.\n## Use",
        "Call split.",
    ]


def test_recursive_html_cuts_before_block_tags() -> None:
    assert chunks("recursive", "<p>One</p><p>Two</p>", chunk_size=12, chunk_overlap=0, language="html") == [
        "<p>One</p>",
        "<p>Two</p>",
    ]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (dict(separators=";"), ["a;b", ";c", ";d"]),  # the separator starts the next piece (LangChain's default)
        (dict(separators=";", keep_separator="end"), ["a;", "b;", "c;d"]),
        (dict(separators=r"\d+", is_separator_regex=True), ["a1b", "22c", "333"]),
    ],
)
def test_recursive_custom_separators(params: dict, expected: list[str]) -> None:
    text = "a1b22c333" if params.get("is_separator_regex") else "a;b;c;d"
    assert chunks("recursive", text, chunk_size=3, chunk_overlap=0, **params) == expected


def test_recursive_separator_escapes_mean_characters() -> None:
    assert chunks("recursive", "one\ntwo", chunk_size=4, chunk_overlap=0, separators="\\n") == ["one", "two"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (dict(separators="(a+)+", is_separator_regex=True), "quantifier inside a quantifier"),
        (dict(separators="(a|ab)*c", is_separator_regex=True), "alternation inside a quantifier"),
        (dict(separators=r"(x)\1", is_separator_regex=True), "back-reference"),
        (dict(separators=("[unclosed",), is_separator_regex=True), "not a valid regular expression"),
        (dict(separators="x" * 201), "longer than 200"),
        (dict(separators=";", language="python"), "either language (python) or separators"),
        (dict(chunk_size=10, chunk_overlap=10), "chunk_overlap (10) must be smaller than chunk_size (10)"),
    ],
)
def test_recursive_rejects_bad_settings(params: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        get_splitter("recursive", **params)


def table_document() -> Document:
    """Prose, a Markdown table with one short and one long row, prose — with the elements a loader reports."""
    text = "Intro.\n\n| name | value |\n| --- | --- |\n| alpha | 1 |\n| beta gamma delta | 2 |\n\nOutro."
    table_start = text.index("| name")
    header_end = text.index("| --- | --- |") + len("| --- | --- |")
    rows = ["| alpha | 1 |", "| beta gamma delta | 2 |"]
    elements = [
        Element("table", table_start, text.index("\n\nOutro"), attrs={"header": "| name | value |", "header_end": header_end}),
        *(Element("table_row", text.index(row), text.index(row) + len(row)) for row in rows),
    ]
    return Document(text=text, elements=elements)


# The sentence splitter leaves room for the table_header its nodes carry ("table_header: | name | value |\n\n",
# 32 characters): 48 - 32 leaves the same 16 for text.
@pytest.mark.parametrize(("name", "chunk_size"), [("recursive", 16), ("sentence", 48)])
def test_a_table_is_split_between_rows_never_inside_one(name: str, chunk_size: int) -> None:
    splitter = get_splitter(name, chunk_size=chunk_size, chunk_overlap=0, tokenizer="characters")
    nodes = splitter.split([table_document()])
    assert [(node.text, node.metadata.get("table_header")) for node in nodes] == [
        ("Intro.", None),
        ("| name | value |\n| --- | --- |", None),
        ("| alpha | 1 |", "| name | value |"),
        ("| beta gamma delta | 2 |", "| name | value |"),  # 23 characters: a row is indivisible
        ("Outro.", None),
    ]


def test_without_table_elements_rows_are_cut_like_any_text() -> None:
    text = table_document().text
    assert "| beta gamma" in chunks("recursive", text, chunk_size=16, chunk_overlap=0)


def test_cut_guard_forbids_only_cuts_strictly_inside() -> None:
    guard = CutGuard([(5, 10)])
    assert [guard.allows(p) for p in (4, 5, 6, 9, 10, 11)] == [True, True, False, False, True, True]
    assert guard.pieces(0, 12, [3, 7, 10]) == [(0, 3), (3, 10), (10, 12)]


# --- token -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "params", "expected"),
    [
        ("one two three four five six seven", dict(tokenizer="words", chunk_size=3, chunk_overlap=1),
         ["one two three", "three four five", "five six seven"]),
        ("abcdefgh", dict(tokenizer="characters", chunk_size=4, chunk_overlap=2), ["abcd", "cdef", "efgh"]),
        ("abcdefghi", dict(tokenizer="characters", chunk_size=4, chunk_overlap=0), ["abcd", "efgh", "i"]),
        # The model's tokens: token, ##ization, splits | splits, unbelievable, words
        ("Tokenization splits unbelievable words", dict(chunk_size=3, chunk_overlap=1),
         ["Tokenization splits", "splits unbelievable words"]),
    ],
)
def test_token_windows(text: str, params: dict, expected: list[str]) -> None:
    assert chunks("token", text, **params) == expected


def test_token_window_may_start_inside_a_word_but_stays_an_exact_slice() -> None:
    # "tokenization" is two model tokens; a one-token window holds each piece.
    assert chunks("token", "tokenization", chunk_size=1, chunk_overlap=0) == ["token", "ization"]


# --- sentence --------------------------------------------------------------------------------------------------

SENTENCES = "One two. Three four. Five six. Seven eight."


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        # Whole sentences are packed; the overlap repeats whole trailing sentences (2 words each).
        (dict(tokenizer="words", chunk_size=4, chunk_overlap=2),
         ["One two. Three four.", "Three four. Five six.", "Five six. Seven eight."]),
        (dict(tokenizer="words", chunk_size=4, chunk_overlap=0), ["One two. Three four.", "Five six. Seven eight."]),
        # "One two. " is 9 characters with its trailing space (a sentence runs to the next one's start, as in
        # LlamaIndex), so with "Three four. " it is 21 > 20; the overlap is dropped when it would not fit.
        (dict(tokenizer="characters", chunk_size=20, chunk_overlap=10), ["One two.", "Three four.", "Five six.", "Seven eight."]),
        (dict(tokenizer="characters", chunk_size=1000, chunk_overlap=0), [SENTENCES]),
    ],
)
def test_sentence_packs_whole_sentences(params: dict, expected: list[str]) -> None:
    assert chunks("sentence", SENTENCES, **params) == expected


def test_sentence_cuts_a_long_sentence_at_clause_punctuation_then_words() -> None:
    text = "Alpha, beta, gamma delta; epsilon."
    assert chunks("sentence", text, tokenizer="characters", chunk_size=14, chunk_overlap=0) == [
        "Alpha, beta,", "gamma delta;", "epsilon.",
    ]
    # Words keep the space before them: " gamma delta" is 12.
    assert chunks("sentence", "Alpha beta gamma delta", tokenizer="characters", chunk_size=12, chunk_overlap=0) == [
        "Alpha beta", "gamma delta",
    ]


def test_sentence_never_ends_a_clause_inside_a_url_or_a_number_and_keeps_link_lines_whole() -> None:
    # A period, comma or semicolon ends a clause only before whitespace: not in "example.org", "1.2.3" or "3,5".
    text = "See https://example.org/a.b.html for v1.2.3 or 3,5 mm, then stop."
    assert chunks("sentence", text, tokenizer="characters", chunk_size=40, chunk_overlap=0) == [
        "See https://example.org/a.b.html for", "v1.2.3 or 3,5 mm, then stop.",
    ]
    # A block of link references has no clause end at all: it is cut at line breaks, each label with its URL.
    links = "[a]: https://a.example.org/x.html\n[b]: https://b.example.org/y.html\n[c]: https://c.example.org/z.html"
    assert chunks("sentence", links, tokenizer="characters", chunk_size=40, chunk_overlap=0) == [
        "[a]: https://a.example.org/x.html", "[b]: https://b.example.org/y.html", "[c]: https://c.example.org/z.html",
    ]
    # LlamaIndex's own rule (compat="llamaindex") cuts after every one of them, as its SentenceSplitter does.
    assert "See https://example." in chunks(
        "sentence", text, tokenizer="characters", chunk_size=40, chunk_overlap=0, compat="llamaindex"
    )[0]


def test_sentence_paragraph_separator_is_three_newlines_by_default() -> None:
    text = "First para here.\n\n\nSecond para here."
    assert chunks("sentence", text, tokenizer="characters", chunk_size=20, chunk_overlap=0) == [
        "First para here.", "Second para here.",
    ]


def test_sentence_budget_shrinks_by_the_longer_metadata_view() -> None:
    text = "One two. Three four."  # pieces of 9 and 11 characters
    # The view "k: vvvv\n\n" + text: 9 characters before the text, 20 - 9 = 11 leaves room for one sentence.
    document = Document(text=text, metadata={"k": "vvvv"})
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=20, chunk_overlap=0)
    assert splitter.chunk_budget(document) == 11
    assert [node.text for node in splitter.split([document])] == ["One two.", "Three four."]
    unaware = get_splitter("sentence", tokenizer="characters", chunk_size=20, chunk_overlap=0, metadata_aware=False)
    assert [node.text for node in unaware.split([document])] == ["One two. Three four."]
    # The EMBED view keeps a key the LLM view hides: the longer one (EMBED) counts.
    hidden = Document(text=text, metadata={"k": "vvvv", "long_key": "x"}, excluded_llm_metadata_keys=["long_key"])
    wide = get_splitter("sentence", tokenizer="characters", chunk_size=30, chunk_overlap=0)
    assert wide.chunk_budget(hidden) == 30 - len("k: vvvv\nlong_key: x\n\n")


def test_sentence_metadata_without_room_is_a_config_error_with_the_numbers() -> None:
    document = Document(text="Hi.", metadata={"file_name": "notes.txt", "title": "x" * 40})
    splitter = get_splitter("sentence", tokenizer="characters", chunk_size=30, chunk_overlap=0)
    with pytest.raises(ConfigError, match=r"notes\.txt \(as its nodes show it.*\) is 70 characters long.*chunk_size 30"):
        splitter.split([document])


# --- sentence window -------------------------------------------------------------------------------------------


def test_sentence_window_one_node_per_sentence_with_its_neighbours() -> None:
    text = "One. Two!  Three?\n\nFour"
    nodes = get_splitter("sentence_window", window_size=1).split([Document(text=text, metadata={"file_name": "w"})])
    assert [(n.text, n.metadata["window"], n.metadata["original_text"]) for n in nodes] == [
        ("One.", "One. Two!", "One."),
        ("Two!", "One. Two!  Three?", "Two!"),
        ("Three?", "Two!  Three?\n\nFour", "Three?"),
        ("Four", "Three?\n\nFour", "Four"),
    ]
    # Neither the window nor the sentence is shown to the LLM or the embedding model as metadata.
    assert nodes[1].get_content(MetadataMode.LLM) == "file_name: w\n\nTwo!"
    assert nodes[1].get_content(MetadataMode.EMBED) == "file_name: w\n\nTwo!"
    assert "window: One. Two!  Three?" in nodes[1].get_content(MetadataMode.ALL)


def test_sentence_window_keys_are_configurable() -> None:
    nodes = get_splitter("sentence_window", window_size=0, window_metadata_key="ctx").split([Document(text="A b. C d.")])
    assert nodes[0].metadata["ctx"] == "A b."
    assert "ctx" in nodes[0].excluded_llm_metadata_keys and "ctx" in nodes[0].excluded_embed_metadata_keys
    with pytest.raises(ConfigError, match="must differ"):
        get_splitter("sentence_window", window_metadata_key="same", original_text_metadata_key="same")


# --- code ------------------------------------------------------------------------------------------------------

CODE = (
    "import os\nimport sys\n\n\ndef f(x):\n    y = x\n    return y\n\n\n"
    "class A:\n    def g(self):\n        pass\n\n    def h(self):\n        pass\n"
)


def test_code_prefers_to_cut_before_a_top_level_line() -> None:
    assert chunks("code", CODE, chunk_lines=6, chunk_lines_overlap=1, max_chars=1500) == [
        "import os\nimport sys",
        "def f(x):\n    y = x\n    return y",
        "class A:\n    def g(self):\n        pass",
        "    def h(self):\n        pass",  # the first line's indentation is kept
    ]


def test_code_overlap_repeats_whole_lines() -> None:
    text = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
    assert chunks("code", text, chunk_lines=3, chunk_lines_overlap=1, max_chars=1500) == [
        "a = 1\nb = 2\nc = 3", "c = 3\nd = 4\ne = 5",
    ]


def test_code_cuts_inside_a_line_only_when_it_alone_exceeds_max_chars() -> None:
    text = "x = 1\n" + "word " * 6 + "\n  y\n"
    assert chunks("code", text, chunk_lines=4, chunk_lines_overlap=0, max_chars=10) == [
        "x = 1", "word word", "word word", "word word", "  y",
    ]


def test_code_overlap_must_be_below_chunk_lines() -> None:
    with pytest.raises(ConfigError, match=r"chunk_lines_overlap \(5\) must be smaller than chunk_lines \(5\)"):
        get_splitter("code", chunk_lines=5, chunk_lines_overlap=5)


# --- segmentation ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello world. This is 😀 fine. Next one!", ["Hello world.", "This is 😀 fine.", "Next one!"]),
        ("Cafe\u0301 ok. Über straße.", ["Cafe\u0301 ok.", "Über straße."]),
        ("日本語です。次の文です。", ["日本語です。", "次の文です。"]),
        ("שלום עולם. مرحبا بالعالم.", ["שלום עולם.", "مرحبا بالعالم."]),
        ("Our 👨\u200d👩\u200d👧 family. The 🇫🇷 flag.", ["Our 👨\u200d👩\u200d👧 family.", "The 🇫🇷 flag."]),
        # A blank line ends a sentence even without punctuation (headings, list blocks).
        ("Title\n\nText here. More text.", ["Title", "Text here.", "More text."]),
        # Blingfire cannot encode a lone surrogate: the regex fallback takes over.
        ("Hi \udc80 there. Yes.", ["Hi \udc80 there.", "Yes."]),
        ("a\x00b. C d.", ["a\x00b.", "C d."]),
        ("", []),
        ("  \n ", []),
    ],
)
def test_sentence_spans_are_exact_character_offsets(text: str, expected: list[str]) -> None:
    assert [text[start:end] for start, end in sentence_spans(text)] == expected


# --- recursive: language presets and regex time limit ------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "head", "definition"),
    [
        ("python", "x = 1\ny = 2", "def f():\n    return x + y"),
        ("javascript", "let a = 1;\nlet b = 2;", "function f() {\n  return a;\n}"),
        ("typescript", "let a = 1;\nlet b = 2;", "interface P {\n  x: number;\n}"),
        ("java", "import a.B;\nimport a.C;", "public class A {\n  int x;\n}"),
        ("go", "package main\nimport \"os\"", "func main() {\n  os.Exit(0)\n}"),
        ("rust", "use std::io;\nuse std::fs;", "pub fn main() {\n    let x = 1;\n}"),
        ("c", "#include <stdio.h>\n#include <stdlib.h>", "int main(void) {\n  return 0;\n}"),
        ("cpp", "#include <vector>\n#include <map>", "namespace app {\nint x = 1;\n}"),
        ("latex", "Intro text here.\nMore intro.", "\\section{Methods}\nWe did it."),
        ("markdown", "Intro text.\nMore intro.", "## Part\nBody text."),
    ],
)
def test_each_language_preset_cuts_before_a_definition(language: str, head: str, definition: str) -> None:
    # One unit under the whole: plain line packing would keep the definition's first line with the head;
    # the preset cuts where the definition begins.
    text = f"{head}\n{definition}"
    assert chunks("recursive", text, chunk_size=len(text) - 1, chunk_overlap=0, language=language) == [head, definition]


def test_html_preset_cuts_before_a_heading_tag() -> None:
    text = "<p>Intro text</p><p>More</p><h2>Title</h2><p>Body</p>"
    assert chunks("recursive", text, chunk_size=len(text) - 1, chunk_overlap=0, language="html") == [
        "<p>Intro text</p><p>More</p>", "<h2>Title</h2><p>Body</p>",
    ]


def test_a_separator_regex_that_runs_too_long_is_a_config_error() -> None:
    from core.splitters.recursive import _Recursion

    class SlowPattern:
        pattern = "(slow)"

        def finditer(self, *args: object, **kwargs: object) -> list:
            raise TimeoutError

    recursion = _Recursion("text", None, CutGuard(), 10, 0, True)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"separator '\(slow\)' took longer than 5 seconds"):
        recursion.cuts(SlowPattern(), 0, 4)  # type: ignore[arg-type]


# --- a size function in place of a tokenizer's name ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("character", dict(chunk_size=80, chunk_overlap=10, separator="\n")),
        ("recursive", dict(chunk_size=80, chunk_overlap=10)),
        ("sentence", dict(chunk_size=80, chunk_overlap=10)),
        ("markdown", dict(chunk_size=80)),
        ("hierarchical", dict(chunk_sizes="300,80", chunk_overlap=10)),
    ],
)
def test_a_size_function_cuts_as_the_named_tokenizer_that_counts_the_same(sample_docs, name, params) -> None:
    from core import load
    from core.measure.metrics import chunk_metrics

    documents = load(sample_docs / "chunking_guide.md")
    named = get_splitter(name, tokenizer="words", **params)
    counted = get_splitter(name, tokenizer=lambda text: len(text.split()), **params)
    expected, nodes = named.split(documents), counted.split(documents)
    assert len(expected) > 5
    assert [(n.start_char, n.end_char, n.metadata) for n in nodes] == [
        (n.start_char, n.end_char, n.metadata) for n in expected
    ]
    # The metrics count with the splitter's own size function as well.
    sizes = chunk_metrics(documents, nodes, tokenizer=counted.size_unit, size_limit=counted.size_limit).tokens
    assert sizes == chunk_metrics(documents, expected, tokenizer="words", size_limit=named.size_limit).tokens


def test_a_size_function_cannot_size_token_windows() -> None:
    with pytest.raises(ConfigError, match="token: windows are cut between tokens"):
        get_splitter("token", tokenizer=len)
