"""Fuzzing: random bytes into every loader, random text and random raw parameters into every splitter.

The normal run takes a few dozen examples per test; ``make fuzz``
(``HYPOTHESIS_PROFILE=fuzz pytest -m fuzz``) takes at least 10,000 per test.
What must hold: a loader returns documents with exact spans or raises a
LoadError whose one sentence starts with the file name; a splitter built from
any raw values either refuses them with a ConfigError sentence naming itself,
or returns nodes that keep every invariant (or refuses the document with such
a sentence). A link with any query parameters is read leniently without ever
raising. Each failure found here becomes a literal test in test_hostile.py or
at the bottom of this file.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hostile.make_hostile import small_files
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import texts
from test_loaders import check_spans
from test_splitter_properties import check_invariants, fake_embed

from core.config import PipelineConfig
from core.errors import ChunkScopeError, ConfigError, LoadError, UnsupportedFileError
from core.limits import Limits
from core.loaders import LOADERS, load_bytes
from core.params import ParamSpec
from core.schema import Document
from core.splitters import SPLITTERS
from core.splitters.base import Splitter

pytestmark = pytest.mark.fuzz

FUZZ_RUN = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
# The dedicated run's profile sets 10,000; the normal run stays quick.
EXAMPLES = settings(max_examples=10_000 if FUZZ_RUN else 25)

SEEDS = list(small_files().values())
EXTENSIONS = sorted({ext for cls in LOADERS for ext in cls.extensions})
# Small enough that random input meets the limits too.
FUZZ_LIMITS = Limits(max_upload_bytes=4_000, max_text_chars=3_000)


@st.composite
def mutated_seed(draw: st.DrawFn) -> bytes:
    """A catalogue file with bytes flipped, cut, or spliced with another."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, 4))):
        if data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    if draw(st.booleans()):
        other = draw(st.sampled_from(SEEDS))
        data += other[draw(st.integers(0, len(other))) :]
    return bytes(data)


file_bytes = st.one_of(st.binary(max_size=2_000), mutated_seed(), st.text(max_size=500).map(str.encode))
file_names = st.builds(
    lambda stem, ext: stem + ext,
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\\\x00"), min_size=1, max_size=20),
    st.sampled_from([*EXTENSIONS, ".exe", "", ".PDF", ".Md"]),
)


@EXAMPLES
@given(data=file_bytes, file_name=file_names)
def test_any_file_loads_or_is_refused_with_a_sentence_naming_it(data: bytes, file_name: str) -> None:
    try:
        documents = load_bytes(data, file_name, limits=FUZZ_LIMITS)
    except LoadError as exc:
        assert exc.file_name == file_name
        assert str(exc) == f"{file_name}: {exc.problem}"
        assert exc.problem and "\n" not in exc.problem
        if isinstance(exc, UnsupportedFileError):
            assert not any(file_name.lower().endswith(ext) for ext in EXTENSIONS)
        return
    assert documents
    for document in documents:
        assert document.metadata["file_name"] == file_name
        assert 0 < len(document.text) <= FUZZ_LIMITS.max_text_chars
        check_spans(document)


# --------------------------------------------------------------------- splitters


def raw_value(spec: ParamSpec) -> st.SearchStrategy[Any]:
    """Values as a URL or a CLI hands them over: inside the bounds, at the edges, beyond them, or nonsense."""
    nonsense = st.sampled_from(["", "abc", "-1", "NaN", "inf", "1e9", "none", "[", "[1, \"x\"]", "0x10", " 7 "])
    if spec.kind in ("int", "float"):
        low = spec.ge if spec.ge is not None else -10
        high = spec.le if spec.le is not None else low + 50
        edges = st.sampled_from([low, high, low - 1, high + 1, 0, 1])
        near = st.integers(int(low), int(min(high, low + 40))) if spec.kind == "int" else st.floats(low, min(high, low + 40))
        return st.one_of(near, near, edges, edges.map(str), nonsense)
    if spec.kind == "bool":
        return st.one_of(st.booleans(), st.sampled_from(["true", "false", "yes", "0", "maybe"]))
    if spec.kind == "choice":
        return st.one_of(st.sampled_from(spec.choices or ()), nonsense)
    if spec.kind == "int_list":
        return st.one_of(st.lists(st.integers(-5, 200), max_size=4).map(lambda xs: ",".join(map(str, xs))), nonsense)
    if spec.kind == "str_list":
        pieces = st.sampled_from(["\\n\\n", "\\n", " ", ".", "(a+)+$", "[", "(?=x)", "", ",", "\\", "é"])
        return st.one_of(st.lists(pieces, max_size=3), nonsense)
    return st.one_of(st.just(spec.default), st.text(max_size=12), st.sampled_from(["{key}", "{", "{content}", "x{0}"]))


def raw_params(cls: type[Splitter]) -> st.SearchStrategy[dict[str, Any]]:
    """A random subset of the declared parameters, each with a raw value."""
    specs = cls.params()
    return st.lists(st.sampled_from(specs), unique_by=lambda spec: spec.name, max_size=len(specs)).flatmap(
        lambda chosen: st.fixed_dictionaries({spec.name: raw_value(spec) for spec in chosen})
    )


def one_line_sentence(exc: ChunkScopeError, owner: str) -> None:
    message = str(exc)
    assert message.startswith(f"{owner}: "), message
    assert "\n" not in message, message


@pytest.mark.parametrize("cls", list(SPLITTERS), ids=lambda cls: cls.name)
def test_any_raw_parameters_and_text_give_valid_nodes_or_a_sentence(cls: type[Splitter]) -> None:
    @EXAMPLES
    @given(params=raw_params(cls), text=texts(), file_name=st.sampled_from(["a.txt", "<img src=x>.md"]))
    def run(params: dict[str, Any], text: str, file_name: str) -> None:
        try:
            splitter = cls.from_params(params)
        except ConfigError as exc:
            one_line_sentence(exc, cls.name)
            return
        with_embedder = getattr(splitter, "with_embedder", None)
        splitter = with_embedder(fake_embed) if with_embedder else splitter
        document = Document(text=text, metadata={"file_name": file_name})
        try:
            nodes = splitter.split([document])
        except ConfigError as exc:  # e.g. metadata longer than a tiny chunk, a separator regex timing out
            one_line_sentence(exc, cls.name)
            return
        check_invariants(splitter, document, nodes)

    run()


# ------------------------------------------------------------------------- links

URL_KEYS = [
    "splitter", "chunk_size", "chunk_overlap", "tokenizer", "separators", "is_separator_regex", "language",
    "loader.pdf.max_pages", "loader.text.x", "meta.author", "meta.", "view.metadata_template", "view.text_template",
    "extractors", "postprocessors", "postprocessor.top_n.top_n", "postprocessor.top_n~2.top_n", "retrieval.top_k",
    "retrieval.mode", "doc", "__import__", "os.system",
]  # fmt: skip
url_values = st.one_of(
    st.sampled_from(["", "-1", "0", "1", "10", "abc", "none", "sentence", "recursive", "top_n,top_n", "(a+)+$",
                     "true", "{content}", "{", "<img src=x onerror=alert(1)>", "os.path", "core.cli.main:main"]),
    st.text(max_size=10),
)  # fmt: skip


@EXAMPLES
@given(params=st.dictionaries(st.one_of(st.sampled_from(URL_KEYS), st.text(max_size=12)), url_values, max_size=8))
def test_any_link_is_read_leniently_without_raising(params: dict[str, str]) -> None:
    config, warnings = PipelineConfig.from_query_params(params, lenient=True, ignore=("doc",))
    assert all(isinstance(warning, str) and warning for warning in warnings)
    # What was kept round-trips exactly.
    assert PipelineConfig.from_query_params(config.to_query_params()) == config


def test_the_fuzz_run_is_long() -> None:
    """The dedicated run really takes 10,000 examples per test (make fuzz sets the profile)."""
    assert EXAMPLES.max_examples == (10_000 if FUZZ_RUN else 25)
