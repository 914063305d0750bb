"""Every parameter that takes a regular expression is declared as one, and checked wherever its value comes from.

The issue's freezing share link set ``(\\w+\\s?)+$`` as a LangChain separator with
``is_separator_regex=true``; LlamaIndex's ``secondary_chunking_regex`` took the same.
One checker (core.runtime.regex_check), applied at the declaration
(``param(..., regex=...)``), refuses it from Python, a JSON config, a share link,
``--set`` and a batch config with the same sentence.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cli.main import main
from core.config import PipelineConfig
from core.errors import ConfigError, as_typed
from core.params import Configurable, param
from core.runtime.regex_check import check_bounded_regex
from core.splitters import SPLITTERS, get_splitter
from core.splitters.recursive import LANGUAGES, RecursiveSplitter

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "sample_docs" / "chunking_guide.md"
ATTACK = "(\\w+\\s?)+$"
REFUSAL = "is rejected: a quantifier inside a quantifier can take exponential time"

# Each regex parameter a link can reach, as (splitter, its parameters with the attack, the name in the sentence).
REGEX_PARAMS = [
    ("langchain.recursive", {"separators": [ATTACK], "is_separator_regex": True}, "separator"),
    ("langchain.character", {"separator": ATTACK, "is_separator_regex": True}, "separator"),
    ("llamaindex.sentence", {"secondary_chunking_regex": ATTACK}, "secondary_chunking_regex"),
    ("recursive", {"separators": [ATTACK], "is_separator_regex": True}, "separator"),
    ("semantic", {"sentence_split_regex": ATTACK, "compat": "langchain"}, "sentence_split_regex"),
]


def sentence(name: str, label: str, pattern: str = ATTACK) -> str:
    return f"{name}: {label} {as_typed(pattern)} {REFUSAL}"


def test_the_regex_parameters_are_declared_as_regexes() -> None:
    declared = {
        (cls.name, spec.name, spec.regex)
        for cls in map(SPLITTERS.get_class, SPLITTERS.names())
        for spec in cls.params()
        if spec.regex
    }
    assert declared == {
        ("langchain.recursive", "separators", "is_separator_regex"),
        ("langchain.character", "separator", "is_separator_regex"),
        ("llamaindex.sentence", "secondary_chunking_regex", "always"),
        ("langchain.semantic", "sentence_split_regex", "always"),
        ("recursive", "separators", "is_separator_regex"),
        ("semantic", "sentence_split_regex", "always"),
    }


@pytest.mark.parametrize(("name", "params", "label"), REGEX_PARAMS)
def test_the_freezing_pattern_is_refused_from_python(name: str, params: dict, label: str) -> None:
    with pytest.raises(ConfigError) as caught:
        SPLITTERS.get_class(name).from_params(params)
    assert str(caught.value) == sentence(name, label)


@pytest.mark.parametrize(("name", "params", "label"), REGEX_PARAMS)
def test_the_freezing_pattern_is_refused_from_a_json_config(name: str, params: dict, label: str) -> None:
    data = json.loads(PipelineConfig(splitter=get_splitter(name)).to_json())
    data["splitter"]["params"].update(params)
    with pytest.raises(ConfigError) as caught:
        PipelineConfig.from_json(json.dumps(data))
    assert str(caught.value) == sentence(name, label)


@pytest.mark.parametrize(("name", "params", "label"), REGEX_PARAMS)
def test_the_freezing_share_link_is_refused(name: str, params: dict, label: str) -> None:
    link = {"splitter": name, **{key: _as_text(value) for key, value in params.items()}}
    with pytest.raises(ConfigError) as caught:
        PipelineConfig.from_query_params(link)
    assert str(caught.value) == sentence(name, label)
    # The app reads links leniently: the pattern is dropped with the same sentence, and no regex of it runs.
    config, warnings = PipelineConfig.from_query_params(link, lenient=True)
    assert warnings == [sentence(name, label)]
    assert all(pattern != ATTACK for _, pattern in config.splitter.regex_values())


@pytest.mark.parametrize(("name", "params", "label"), REGEX_PARAMS)
def test_the_freezing_pattern_is_refused_by_the_cli(name: str, params: dict, label: str, capsys) -> None:
    sets = [item for key, value in params.items() for item in ("--set", f"{key}={_as_text(value)}")]
    assert main(["split", str(GUIDE), "--splitter", name, *sets]) != 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().splitlines() == [f"chunkscope: {sentence(name, label)}"]


def test_a_batch_config_with_the_pattern_is_refused_before_any_file(tmp_path: Path, capsys) -> None:
    name, params, label = REGEX_PARAMS[0]
    data = json.loads(PipelineConfig(splitter=get_splitter(name)).to_json())
    data["splitter"]["params"].update(params)
    (tmp_path / "config.json").write_text(json.dumps(data))
    out = tmp_path / "out"
    code = main(["batch", str(GUIDE), "--config", str(tmp_path / "config.json"), "--out", str(out), "-q"])
    assert code != 0 and not (out / "nodes").exists()
    assert sentence(name, label) in capsys.readouterr().err


def test_the_same_text_as_a_literal_separator_is_accepted_and_cut_on_literally() -> None:
    splitter = get_splitter("langchain.character", separator=ATTACK, chunk_size=5, chunk_overlap=0)
    assert splitter.regex_values() == []
    from core.schema import Document

    nodes = splitter.split([Document(text=f"one{ATTACK}two")])
    assert [node.text for node in nodes] == ["one", "two"]


def test_a_default_regex_passes_the_checker() -> None:
    # LlamaIndex's default secondary_chunking_regex is a parameter value, checked like a user's: it passes.
    ((spec, pattern),) = get_splitter("llamaindex.sentence").regex_values()
    assert pattern == "[^,.;。？！]+[,.;。？！]?|[,.;。？！]"
    check_bounded_regex(pattern, spec.name)


def test_language_presets_are_built_ins_exempt_from_the_checker() -> None:
    # The presets are constants, not parameters: a link picks a language, never a pattern, so they are not
    # checked (Java's modifier list, "(?:(?:public|private|…)[ \t]+)*", is a disjoint alternation the shape
    # rule would refuse); the native splitter still matches them under its regex timeout.
    for language in LANGUAGES:
        splitter = RecursiveSplitter(language=language)
        assert splitter.regex_values() == []
        assert splitter.separator_patterns()
    for language in ("python", "java", "markdown", "html"):
        assert get_splitter("langchain.recursive", language=language).regex_values() == []


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("(a+)+$", "a quantifier inside a quantifier"),
        ("(a|aa)+$", "an alternation inside a quantifier"),
        ("(a)\\1", "a back-reference"),
        ("(?:x*y?)*", "a quantifier inside a quantifier"),
        ("(?:a?){30}a{30}", "a quantifier inside a quantifier"),
        ("(?:ab?)+", "a quantifier inside a quantifier"),
        ("(?:(?:a?)b){2,}", "a quantifier inside a quantifier"),
    ],
)
def test_secondary_chunking_regex_refuses_each_shape(pattern: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"{as_typed(pattern)} is rejected: {problem} can take exponential time")):
        get_splitter("llamaindex.sentence", secondary_chunking_regex=pattern)


def test_a_long_pattern_is_refused_by_its_length() -> None:
    with pytest.raises(
        ConfigError, match=r"^langchain.character: separator 'xxxxxxxxxxxxxxxxxxxx'… is longer than 200"
    ):
        get_splitter("langchain.character", separator="x" * 201, is_separator_regex=True)


def test_a_regex_declaration_must_name_a_bool_flag() -> None:
    @dataclass(frozen=True)
    class Broken(Configurable):
        name = "broken"
        pattern: str = param("a", "A pattern.", regex="no_such_flag")

    with pytest.raises(TypeError, match="names no bool parameter"):
        Broken.params()


def test_the_listing_says_which_parameters_are_regexes() -> None:
    specs = {spec.name: spec.to_json() for spec in SPLITTERS.get_class("langchain.character").params()}
    assert specs["separator"]["regex"] == "is_separator_regex"
    assert specs["chunk_size"]["regex"] is None


# Patterns built from the characters that make regexes: whatever the checker lets through compiles in both
# engines that run user patterns (``re`` in the frameworks, ``regex`` in the native recursive splitter).
_PATTERN = st.text(alphabet="ab.()[]{}|*+?^$\\wsd0123,-:=<!", max_size=24)


@settings(max_examples=400, deadline=None)
@given(_PATTERN)
def test_every_pattern_the_checker_accepts_compiles(pattern: str) -> None:
    try:
        check_bounded_regex(pattern, "pattern")
    except ConfigError:
        return
    re.compile(pattern)
    regex.compile(pattern, regex.VERSION0)


# Nested quantified patterns as people write them: an atom made optional or repeated (or an alternation), in
# groups, lookarounds and beside plain atoms, the whole under a quantifier that repeats. Each can backtrack
# exponentially on the right text; the checker must refuse every one, whatever the form.
_ATOM = st.sampled_from(["a", "b", "\\s", "\\w", "\\d", ".", "[ab]", "[^,]", "\\n"])
_INNER_QUANTIFIER = st.sampled_from(["?", "*", "+", "??", "*?", "+?", "{0,1}", "{0,3}", "{1,4}", "{2,}", "{3}"])
_OUTER_QUANTIFIER = st.sampled_from(["*", "+", "{2}", "{30}", "{2,}", "{1,9}", "*?", "+?", "{0,5}"])


@st.composite
def _nested_quantified(draw: st.DrawFn) -> str:
    atom = draw(_ATOM)
    risky = draw(
        st.one_of(
            _INNER_QUANTIFIER.map(lambda q: atom + q),
            # Branches of two atoms or more, each opening with its own atom: re folds one-character branches into
            # a class and a prefix common to all branches out of them, and both are safe.
            st.lists(st.lists(_ATOM, min_size=2, max_size=3), min_size=2, max_size=3, unique_by=lambda b: b[0]).map(
                lambda branches: "(?:" + "|".join(map("".join, branches)) + ")"
            ),
        )
    )
    before, after = draw(st.lists(_ATOM, max_size=2)), draw(st.lists(_ATOM, max_size=2))
    body = "".join(before) + risky + "".join(after)
    for wrapper in draw(st.lists(st.sampled_from(["(?:{})", "({})", "(?={})", "(?>{})"]), max_size=2)):
        body = wrapper.format(body)
    group = f"(?:{body}){draw(_OUTER_QUANTIFIER)}"
    for wrapper in draw(st.lists(st.sampled_from(["(?:{})", "({})", "x{}", "{}y"]), max_size=2)):
        group = wrapper.format(group)
    return group + draw(st.sampled_from(["", "$", "a{30}", "!"]))


@settings(max_examples=500, deadline=None)
@given(_nested_quantified())
def test_every_nested_quantified_pattern_is_refused(pattern: str) -> None:
    with pytest.raises(ConfigError, match="can take exponential time"):
        check_bounded_regex(pattern, "pattern")


def test_the_issues_pattern_passes_neither_the_checker_nor_the_cli(capsys) -> None:
    pattern = "(?:a?){30}a{30}"
    assert main(["config", "--splitter", "langchain.recursive", "--set", f"separators={pattern}",
                 "--set", "is_separator_regex=true"]) != 0
    assert "a quantifier inside a quantifier" in capsys.readouterr().err


def _as_text(value: object) -> str:
    """A parameter's value as a link or ``--set`` writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return json.dumps(value)
    return str(value)


def test_a_refusal_quotes_the_pattern_as_it_was_typed(capsys) -> None:
    # repr doubled every backslash: "(\\s+)+" read '(\\\\s+)+' in the sentence.
    assert main(["config", "--splitter", "langchain.recursive", "--set", "separators=(\\s+)+",
                 "--set", "is_separator_regex=true"]) != 0
    assert "separator '(\\s+)+' is rejected" in capsys.readouterr().err
    assert as_typed("a\nb\\d") == "'a\\nb\\d'"  # a line break escaped, the backslash as typed
