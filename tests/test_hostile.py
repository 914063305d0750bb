"""Hostile inputs: each file in the catalogue (tests/hostile) and what must happen to it.

A file either loads into documents whose text is stated here literally, or
raises the stated typed error whose one sentence names the file and the
problem; the CLI prints that sentence on one line and exits 2. Every document
that loads goes through every registered splitter and keeps the node
invariants. Parameters at their edges, catastrophic separator regexes and
module paths posing as component names are refused with one sentence.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile.make_hostile import LARGE, small_files, write_large
from test_splitter_properties import check_invariants, fake_embed

from core.cli.main import main
from core.config import PipelineConfig
from core.config_parts import default_splitter_name
from core.documents import run_split
from core.engines import FrameworkSplitter
from core.errors import (
    ConfigError,
    CorruptDocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    LoadError,
    TooLargeError,
    as_typed,
)
from core.loaders import load
from core.schema import Document
from core.splitters import SPLITTERS, get_splitter
from core.splitters import recursive as recursive_module

HOSTILE = Path(__file__).resolve().parent / "hostile"
ROOT = HOSTILE.parent.parent


@pytest.fixture(scope="module")
def large_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile_large")


def hostile_path(name: str, large_dir: Path) -> Path:
    if name in LARGE:
        return write_large(large_dir, [name])[name]
    return HOSTILE / name


def test_the_committed_catalogue_is_what_the_script_writes() -> None:
    committed = {path.name: path.read_bytes() for path in HOSTILE.iterdir() if path.is_file() and path.suffix != ".py"}
    expected = small_files()
    assert set(committed) == set(expected)
    # PDFs carry dates and random ids; the text entries are reproduced byte for byte.
    assert {k: v for k, v in committed.items() if not k.endswith(".pdf")} == {
        k: v for k, v in expected.items() if not k.endswith(".pdf")
    }
    assert max(len(data) for data in committed.values()) < 10_000, "large entries are generated at test time"


# ----------------------------------------------------------------------- refused

REFUSED: dict[str, tuple[type[LoadError], str]] = {
    "empty.txt": (EmptyDocumentError, "is empty"),
    "whitespace_only.md": (EmptyDocumentError, "contains only whitespace"),
    "png_as_text.txt": (CorruptDocumentError, "looks like binary data, not text"),
    "zip_as_markdown.md": (CorruptDocumentError, "looks like binary data, not text"),
    "noise_as_text.txt": (CorruptDocumentError, "looks like binary data, not text"),
    "nul_bytes.txt": (CorruptDocumentError, "looks like binary data, not text"),
    "html_named.pdf": (CorruptDocumentError, "is not a PDF (it does not start with %PDF-)"),
    "encrypted.pdf": (EncryptedDocumentError, "is encrypted and cannot be read without its password"),
    "truncated.pdf": (CorruptDocumentError, "is not a readable PDF (PdfStreamError: Stream has ended unexpectedly)"),
    "corrupt.pdf": (CorruptDocumentError, "is not a readable PDF (PdfReadError: startxref not found)"),
    "no_text_layer.pdf": (EmptyDocumentError, "has no text layer, and no page image for OCR to read (blank pages?)"),
    "looped_page_tree.pdf": (
        CorruptDocumentError,
        "is not a readable PDF (PdfReadError: Detected cyclic page references.)",
    ),
    # pypdf counts the kids it finds, not the /Count the file claims: one blank page.
    "billion_pages.pdf": (EmptyDocumentError, "has no text layer, and no page image for OCR to read (blank pages?)"),
    "one_line_20mb.txt": (TooLargeError, "holds 20,971,520 characters of text, more than the limit of 5,000,000"),
    "deep_page_tree.pdf": (
        CorruptDocumentError,
        "is not a readable PDF (LimitReachedError: Maximum page tree depth reached: 101 > 100.)",
    ),
    "too_many_pages.pdf": (TooLargeError, "has 2,001 pages, more than max_pages=2,000"),
    "content_bomb.pdf": (TooLargeError, "holds more than 32 MB of page content to interpret (max_content_mb=32)"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused_with_one_sentence_naming_the_file(name: str, large_dir: Path) -> None:
    error, problem = REFUSED[name]
    path = hostile_path(name, large_dir)
    started = time.process_time()  # CPU time: a busy machine must not fail the check
    with pytest.raises(LoadError) as caught:
        load(path)
    assert type(caught.value) is error
    assert str(caught.value) == f"{name}: {problem}"
    assert time.process_time() - started < 10, "refusing must not take long"


# In-process (main with its argv): a process each cost ~2 CPU-s of imports, 17 times; the test below runs one in
# its own process, as a person types it.
@pytest.mark.parametrize("name", REFUSED)
def test_the_cli_prints_the_sentence_on_one_line_and_exits_2(name: str, large_dir: Path, capsys) -> None:
    code = main(["split", str(hostile_path(name, large_dir))])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err == f"chunkscope: {name}: {REFUSED[name][1]}\n"


def test_python_dash_m_core_prints_a_refusal_on_one_line_and_exits_2(large_dir: Path) -> None:
    name = "truncated.pdf"
    result = subprocess.run(
        [sys.executable, "-m", "core", "split", str(hostile_path(name, large_dir))],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == f"chunkscope: {name}: {REFUSED[name][1]}\n"


# ------------------------------------------------------------------------ loaded


def _text(name: str) -> str:
    return small_files()[name].decode("utf-8")


def test_invalid_utf8_is_decoded_losslessly_with_a_warning() -> None:
    data = small_files()["invalid_utf8.txt"]
    [document] = load(HOSTILE / "invalid_utf8.txt")
    encoding = document.metadata["encoding"]
    assert encoding != "utf-8"
    assert document.metadata["load_warning"] == f"decoded as {encoding}, not UTF-8"
    assert document.text.encode(encoding) == data, "every byte is kept"
    assert document.text.startswith("Valid start, then broken bytes: ")
    assert document.text.endswith(", then the end.\n")


def test_mostly_utf8_keeps_its_characters_and_counts_the_replaced_bytes() -> None:
    [document] = load(HOSTILE / "mostly_utf8.txt")
    assert document.text == (
        "Mostly UTF-8: café, naïve, 日本語, a stray byte \ufffd, a cut-off character \ufffd\ufffd, the end.\n"
    )
    assert document.metadata["encoding"] == "utf-8"
    assert document.metadata["replaced_bytes"] == 3
    assert document.metadata["load_warning"] == "replaced 3 invalid UTF-8 bytes with \ufffd"


@pytest.mark.parametrize(
    "name,text,encoding,warning",
    [
        ("utf16_bom.txt", "Ünïcode in UTF-16 with a byte-order mark.\n", "utf-16-le", None),
        (
            "utf16le_nobom.txt",
            "UTF-16 little endian without a mark.\n",
            "utf-16-le",
            "decoded as utf-16-le (no byte-order mark), not UTF-8",
        ),
        ("latin1.txt", "Grüße aus Köln, schöne Straße, très bien.\n", "cp1252", "decoded as cp1252, not UTF-8"),
        ("lone_cr.txt", "Old Mac line one\nline two\n\nNew paragraph\n", "utf-8", None),
        ("crlf.md", "# Title\n\nFirst paragraph,\nstill first.\n\nSecond paragraph.\n", "utf-8", None),
    ],
)
def test_encodings_and_line_endings(name: str, text: str, encoding: str, warning: str | None) -> None:
    [document] = load(HOSTILE / name)
    assert document.text == text
    assert document.metadata["encoding"] == encoding
    assert document.metadata.get("load_warning") == warning


@pytest.mark.parametrize("name", ["combining_marks.txt", "emoji_sequences.md", "right_to_left.txt", "raw_html.md"])
def test_hard_unicode_and_raw_markup_are_kept_character_for_character(name: str) -> None:
    [document] = load(HOSTILE / name)
    assert document.text == _text(name)


def test_emoji_heading_is_the_title() -> None:
    [document] = load(HOSTILE / "emoji_sequences.md")
    assert document.metadata["title"] == "Family \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"


def test_an_unclosed_fence_runs_to_the_end_and_hides_the_headings_inside() -> None:
    [document] = load(HOSTILE / "unclosed_fence.md")
    found = [(e.kind, document.text[e.start_char : e.end_char]) for e in document.elements]
    assert found == [
        ("heading", "# Real heading"),
        ("paragraph", "Intro."),
        ("code", "```python\n# not a heading\ndef f():\n    return 1"),
    ] or found == [
        ("heading", "# Real heading"),
        ("paragraph", "Intro."),
        ("code", "```python\n# not a heading\ndef f():\n    return 1\n"),
    ]


def test_html_keeps_visible_text_only_and_drops_every_script() -> None:
    [document] = load(HOSTILE / "script_and_handlers.html")
    assert document.text == (
        "Visible heading\n\nBefore image after image.\n\nA javascript link and a handler.\n\n"
        "Escaped markup shows literally: <script>alert(1)</script>"
    )
    assert document.metadata["title"] == "Hostile page"


def test_ragged_csv_keeps_every_row_and_says_which_are_ragged() -> None:
    [document] = load(HOSTILE / "ragged.csv")
    assert document.text == _text("ragged.csv")
    assert document.metadata["row_count"] == 3
    assert document.metadata["load_warning"] == "data rows 2, 3 have a different number of fields than the header (3)"


def test_pdf_actions_are_ignored_and_the_text_layer_read() -> None:
    [document] = load(HOSTILE / "javascript_action.pdf")
    assert document.text == "PDF with an open action"


def test_large_but_allowed_inputs_load_and_split_in_bounded_time(large_dir: Path) -> None:
    started = time.process_time()  # CPU time: a busy machine must not fail the check
    [line] = load(hostile_path("one_line_2mb.txt", large_dir))
    assert line.text == "y" * (2 * 1024 * 1024)
    nodes = run_split([line], PipelineConfig(splitter=get_splitter("recursive", chunk_size=4096, chunk_overlap=0)))
    assert [len(node.text) for node in nodes] == [4096] * 512
    [words] = load(hostile_path("long_words.txt", large_dir))
    nodes = run_split([words], PipelineConfig(splitter=get_splitter("recursive", chunk_size=50_000, chunk_overlap=0)))
    # The space before a long word travels with it (keep_separator="start") and is trimmed from its first chunk.
    lengths = [49_999, 50_000, 50_000, 50_000, 1]
    expected = ["Short start.", *("a" * n for n in lengths), "middle words", *("b" * n for n in lengths), "end."]
    assert [node.text for node in nodes] == expected
    [html] = load(hostile_path("deep_nesting.html", large_dir))
    assert html.text == "deep text"
    assert time.process_time() - started < 60


def test_thousands_of_headings_and_a_final_unclosed_fence(large_dir: Path) -> None:
    [document] = load(hostile_path("many_headings.md", large_dir))
    kinds = [element.kind for element in document.elements]
    assert kinds.count("heading") == 5000
    assert document.text[document.elements[-1].start_char :].startswith("```\n# inside the unclosed fence")
    nodes = get_splitter("markdown").split([document])
    assert len(nodes) >= 5000
    check_invariants(get_splitter("markdown"), document, nodes)


def test_a_cell_of_four_million_characters_loads(large_dir: Path) -> None:
    [document] = load(hostile_path("huge_cell.csv", large_dir))
    [row] = [e for e in document.elements if e.kind == "table_row"]
    assert document.text[row.start_char : row.end_char] == '1,"' + "x" * 4_000_000 + '"'


def test_thirty_thousand_ragged_rows(large_dir: Path) -> None:
    [document] = load(hostile_path("ragged_rows.csv", large_dir))
    assert document.metadata["row_count"] == 30_000
    assert document.metadata["load_warning"].endswith("more have a different number of fields than the header (3)")


# ------------------------------------------------- every splitter on every survivor

LOADED = [name for name in small_files() if name not in REFUSED]


def _splitter(cls, **params):
    splitter = cls.from_params(params)
    with_embedder = getattr(splitter, "with_embedder", None)
    return with_embedder(fake_embed) if with_embedder else splitter


def _in_characters(cls) -> dict[str, str]:
    """Sizes in characters: ``tokenizer="characters"`` where the splitter offers it (a framework engine may count
    its own units only, or characters by default)."""
    tokenizer = next((spec for spec in cls.params() if spec.name == "tokenizer"), None)
    return {"tokenizer": "characters"} if tokenizer is not None and "characters" in (tokenizer.choices or ()) else {}


@pytest.mark.parametrize("cls", list(SPLITTERS), ids=lambda cls: cls.name)
def test_every_splitter_keeps_its_invariants_on_every_hostile_document(cls) -> None:
    sized = {spec.name for spec in cls.params()} >= {"chunk_size", "chunk_overlap"}
    variants = [{}] + ([{"chunk_size": 8, "chunk_overlap": 3, **_in_characters(cls)}] if sized else [])
    for name in LOADED:
        for document in load(HOSTILE / name):
            for params in variants:
                splitter = _splitter(cls, **params)
                try:
                    nodes = splitter.split([document])
                except ConfigError as exc:  # e.g. metadata longer than a tiny chunk: a sentence, not a crash
                    assert str(exc).startswith(f"{cls.name}: ") and "\n" not in str(exc)
                    continue
                # A splitter makes no nodes from a document with text only where it tells the pages why.
                assert nodes or splitter.unsuited_reason(document), f"{cls.name} made no nodes from {name}"
                check_invariants(splitter, document, nodes)


# ------------------------------------------------------------ parameters at edges

SIZED = [cls for cls in SPLITTERS if {spec.name for spec in cls.params()} >= {"chunk_size", "chunk_overlap"}]


@pytest.mark.parametrize("cls", [cls for cls in SIZED if cls.name != "hierarchical"], ids=lambda cls: cls.name)
@pytest.mark.parametrize("overlap", [10, 11, 1_000_000])
def test_overlap_at_or_above_size_is_refused(cls, overlap: int) -> None:
    with pytest.raises(ConfigError) as caught:
        cls.from_params({"chunk_size": 10, "chunk_overlap": overlap})
    assert str(caught.value) == f"{cls.name}: chunk_overlap ({overlap}) must be smaller than chunk_size (10)"


@pytest.mark.parametrize("cls", SIZED, ids=lambda cls: cls.name)
@pytest.mark.parametrize("size", ["0", "-5", "1000001", "abc", "1e3", "NaN", "", "10.5"])
def test_sizes_outside_their_bounds_are_refused(cls, size: str) -> None:
    key = "chunk_sizes" if cls.name == "hierarchical" else "chunk_size"
    with pytest.raises(ConfigError) as caught:
        cls.from_params({key: size, "chunk_overlap": 0})
    assert str(caught.value).startswith(f"{cls.name}: ")
    assert key in str(caught.value)


# ChunkScope's own splitters: a framework engine does at these edges what its framework does (LlamaIndex refuses a
# chunk smaller than the metadata even when it will not copy it), and tests/test_engines.py holds it to that.
@pytest.mark.parametrize(
    "cls", [c for c in SIZED if c.name != "hierarchical" and not issubclass(c, FrameworkSplitter)], ids=lambda c: c.name
)
def test_size_one_and_size_beyond_the_document(cls) -> None:
    document = Document(text="ab cd. Ef gh!", metadata={"file_name": "tiny.txt"})
    tiny = _splitter(cls, chunk_size=1, chunk_overlap=0, tokenizer="characters", include_metadata=False)
    nodes = tiny.split([document])
    check_invariants(tiny, document, nodes)
    assert "".join(node.text for node in nodes).replace(" ", "") == "abcd.Efgh!"
    huge = _splitter(cls, chunk_size=1_000_000, chunk_overlap=0, tokenizer="characters")
    assert [node.text for node in huge.split([document])] == [document.text]


@pytest.mark.parametrize(
    "value,warning",
    [
        ("-5", "recursive: chunk_size must be at least 1, got -5"),
        ("0", "recursive: chunk_size must be at least 1, got 0"),
        ("abc", "recursive: chunk_size must be a whole number, got 'abc'"),
        ("NaN", "recursive: chunk_size must be a whole number, got 'NaN'"),
        ("1e3", "recursive: chunk_size must be a whole number, got '1e3'"),
        ("9" * 40, f"recursive: chunk_size must be at most 1000000, got {'9' * 40}"),
        ("9" * 5000, f"recursive: chunk_size must be a whole number, got '{'9' * 5000}'"),
    ],
)
def test_url_values_out_of_bounds_are_dropped_with_a_warning(value: str, warning: str) -> None:
    params = {"splitter": "recursive", "chunk_size": value, "chunk_overlap": "0"}
    config, warnings = PipelineConfig.from_query_params(params, lenient=True)
    assert config.splitter.name == "recursive" and config.splitter.chunk_size == 1000
    assert warnings == [warning]
    with pytest.raises(ConfigError):
        PipelineConfig.from_query_params(params)


def test_url_overlap_equal_to_size_is_dropped() -> None:
    config, warnings = PipelineConfig.from_query_params(
        {"splitter": "recursive", "chunk_size": "10", "chunk_overlap": "10"}, lenient=True
    )
    assert (config.splitter.chunk_size, config.splitter.chunk_overlap) == (1000, 10)
    assert warnings == ["recursive: chunk_overlap (10) must be smaller than chunk_size (10)"]


# ----------------------------------------------------------- backtracking regexes


@pytest.mark.parametrize(
    "pattern,problem",
    [
        ("(a+)+$", "a quantifier inside a quantifier"),
        ("(a*)*b", "a quantifier inside a quantifier"),
        ("(\\w+\\s?)*$", "a quantifier inside a quantifier"),
        ("(a|aa)+$", "an alternation inside a quantifier"),
        ("(.*a){20}", "a quantifier inside a quantifier"),
        ("(a)\\1+", "a back-reference"),
    ],
)
def test_catastrophic_separator_regexes_are_refused_up_front(pattern: str, problem: str) -> None:
    started = time.process_time()  # CPU time: a busy machine must not fail the check
    with pytest.raises(ConfigError) as caught:
        get_splitter("recursive", separators=[pattern], is_separator_regex=True)
    assert str(caught.value) == f"recursive: separator {as_typed(pattern)} is rejected: {problem} can take exponential time"
    assert time.process_time() - started < 1


def test_the_same_pattern_as_a_literal_separator_is_harmless() -> None:
    splitter = get_splitter("recursive", separators=["(a+)+$"], chunk_size=5, chunk_overlap=0)
    document = Document(text="one(a+)+$two")
    assert [node.text for node in splitter.split([document])] == ["one", "(a+)+", "$two"]


def test_a_slow_pattern_that_passes_the_check_is_stopped_by_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    # Polynomial, not exponential, so it passes the check; on a long run of spaces each start tries n^2 ways.
    monkeypatch.setattr(recursive_module, "REGEX_TIMEOUT_SECONDS", 0.5)
    pattern = "\\s*\\s*\\s*\\d"
    splitter = get_splitter("recursive", separators=[pattern], is_separator_regex=True, chunk_size=10, chunk_overlap=0)
    document = Document(text=" " * 20_000 + "y")
    started = time.process_time()  # CPU time: a busy machine must not fail the check
    with pytest.raises(ConfigError) as caught:
        splitter.split([document])
    assert time.process_time() - started < 5
    assert str(caught.value) == f"recursive: separator {as_typed(pattern)} took longer than 0.5 seconds on this document"


def test_an_invalid_regex_is_a_sentence() -> None:
    with pytest.raises(ConfigError, match=r"^recursive: separator '\(' is not a valid regular expression \("):
        get_splitter("recursive", separators=["("], is_separator_regex=True)


# ------------------------------------------------------ names are not module paths

PROBE = "chunkscope_hostile_probe"


@pytest.fixture()
def probe_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable module that would record its import; it must never be imported."""
    (tmp_path / f"{PROBE}.py").write_text(
        "import builtins\nbuiltins.CHUNKSCOPE_PROBE_IMPORTED = True\n"
        "from core.splitters.character import CharacterSplitter as Evil\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, PROBE, raising=False)
    return PROBE


@pytest.mark.parametrize("spelling", [f"{PROBE}.Evil", f"{PROBE}:Evil", PROBE, "os.system", "core.splitters.character"])
def test_a_module_path_as_splitter_is_unknown_and_imports_nothing(probe_module: str, spelling: str) -> None:
    # The registries themselves load on first use (core's imports are lazy): load them with known names first,
    # so what is measured is what the hostile name imports.
    PipelineConfig.from_query_params({"postprocessors": "top_n", "extractors": "title"})
    before = set(sys.modules)
    attempts = [
        lambda: PipelineConfig.from_query_params({"splitter": spelling}),
        lambda: PipelineConfig.from_dict({"splitter": {"name": spelling}}),
        lambda: PipelineConfig.from_json(f'{{"splitter": "{spelling}"}}'),
        lambda: PipelineConfig.from_query_params({"postprocessors": spelling}),
        lambda: PipelineConfig.from_query_params({"extractors": spelling}),
        lambda: get_splitter(spelling),
    ]
    for attempt in attempts:
        with pytest.raises(ConfigError, match=rf"^unknown \w+ '{spelling}' \(known: "):
            attempt()
    config, warnings = PipelineConfig.from_query_params({"splitter": spelling}, lenient=True)
    assert config.splitter.name == default_splitter_name() and warnings[0].startswith(f"unknown splitter '{spelling}'")
    assert probe_module not in sys.modules
    assert not hasattr(__builtins__ if isinstance(__builtins__, dict) else __builtins__, "CHUNKSCOPE_PROBE_IMPORTED")
    assert set(sys.modules) - before == set()


def test_a_loader_key_naming_a_module_imports_nothing(probe_module: str) -> None:
    with pytest.raises(ConfigError, match=rf"^unknown loader '{PROBE}'"):
        PipelineConfig.from_query_params({f"loader.{PROBE}.x": "1"})
    assert probe_module not in sys.modules


def test_the_cli_refuses_a_module_path_splitter_in_one_line(probe_module: str, tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("Some text.")
    result = subprocess.run(
        [sys.executable, "-m", "core", "split", str(note), "--splitter", f"{PROBE}:Evil"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"chunkscope: unknown splitter '{PROBE}:Evil' (known: ")
    assert result.stderr.count("\n") == 1


# ------------------------------------------------------- templates with huge widths
# A format width in a template is a request for that many characters: refused
# while the config is read, before anything renders.

HUGE_WIDTHS = ("{content:>99999999999}{content}", "{content:>999999999}{content}")


@pytest.mark.parametrize("template", HUGE_WIDTHS)
def test_a_huge_template_width_in_a_link_is_dropped_with_a_warning_at_once(template: str) -> None:
    started = time.process_time()  # CPU time: a busy machine must not fail the check
    config, warnings = PipelineConfig.from_query_params({"view.text_template": template}, lenient=True)
    assert time.process_time() - started < 1
    assert config == PipelineConfig() and len(warnings) == 1
    assert warnings[0].startswith("metadata: text_template may only use {metadata_str} and {content}")
    assert warnings[0].endswith(f"'{template[: template.index('}') + 1]}' has a format spec")


def test_the_cli_refuses_a_huge_template_width_in_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "core", "config", "--from-url", f"?view.text_template={HUGE_WIDTHS[0]}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("chunkscope: metadata: text_template may only use ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
