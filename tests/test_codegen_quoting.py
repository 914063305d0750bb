"""Exported scripts are built, not formatted: no text a user or a share link sets can change what a script runs.

For every free-text parameter that reaches a script (every registered splitter,
engine, postprocessor and loader, and the metadata settings), hostile text
(quotes, triple quotes, backslashes, line breaks of every kind, ``#``, braces,
NUL, lone surrogates, bidirectional controls) is set and both scripts are
generated. Each must parse to the same statements as the script for a benign
value (its text constants aside), the module docstring must be ChunkScope's own,
and every constant that differs must hold the user's value itself.
"""

from __future__ import annotations

import ast
import copy
import functools
import tokenize
from io import StringIO
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import get_splitter
from core.config import PipelineConfig
from core.config_parts import MetadataSettings, loader_registry
from core.errors import ChunkScopeError
from core.extractors import EXTRACTORS
from core.output.export import langchain_snippet, llamaindex_snippet
from core.params.typed_text import read_typed
from core.postprocessors import POSTPROCESSORS
from core.splitters import SPLITTERS
from core.translate.snippet import comment, literal, notes_of, one_line

# Pieces that end a string, a docstring, a comment or a line, or read otherwise than they run.
HOSTILE_PIECES = [
    '"', "'", '"""', "'''", "\\", "\\n", "\\'", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e",
    "\x85", "\u2028", "\u2029", "#", "# noqa", "{", "}", "{key}", "%s", "\x00", "\ud800", "\udfff", "\u202e",
    "\ufeff", "\t", " ", "import os", ")", "]", "\n__import__('os').system('touch /tmp/pwned')\n#", "日本",
]  # fmt: skip
payloads = st.lists(st.one_of(st.sampled_from(HOSTILE_PIECES), st.text(max_size=3)), min_size=1, max_size=6).map(
    "".join
)
# Benign values, tried in turn (a tag name takes no space, a header is a marker, a space and a key).
BENIGN = ("BENIGN PAYLOAD", "BENIGNPAYLOAD")


def _value(payload: str) -> str:
    """A parameter's text around ``payload``: never empty or blank, so the benign and hostile scripts take one path."""
    return f"k{payload}k"


def _free_text_params() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(kind, component, parameter, other settings) for every free-text parameter that can reach a script."""
    cases = []
    registries = (("splitter", SPLITTERS), ("postprocessor", POSTPROCESSORS), ("extractor", EXTRACTORS))
    for kind, registry in (*registries, ("loader", loader_registry())):
        for cls in registry:
            compat = next((spec.choices for spec in cls.params() if spec.name == "compat"), None) or (None,)
            for spec in cls.params():
                if spec.kind not in ("str", "str_list") or spec.choices:
                    continue
                for mode in compat:  # a compatible mode exports the framework call it mirrors: each one
                    cases.append((kind, cls.name, spec.name, {} if mode is None else {"compat": mode}))
    for spec in MetadataSettings.params():
        if spec.kind in ("str", "str_list"):
            cases.append(("metadata", "metadata", spec.name, {}))
    cases += [("metadata", "metadata", "extra.key", {}), ("metadata", "metadata", "extra.value", {})]
    # Separators as regexes reach the scripts too (the regex checker may refuse them: refused never reaches one).
    cases += [
        ("splitter", name, "separators", {"is_separator_regex": True}) for name in ("recursive", "langchain.recursive")
    ]
    return cases


CASES = _free_text_params()


def _config(kind: str, name: str, param: str, value: str, extra: dict[str, Any]) -> PipelineConfig:
    item: Any = (value,) if param in _LIST_PARAMS.get(name, ()) else value
    if kind == "splitter":
        return PipelineConfig(splitter=SPLITTERS.create(name, **extra, **{param: item}))
    if kind == "postprocessor":
        return PipelineConfig(
            splitter=get_splitter("character"), postprocessors=(POSTPROCESSORS.create(name, **{param: item}),)
        )
    if kind == "extractor":
        return PipelineConfig(extractors=(EXTRACTORS.create(name, **{param: item}),))
    if kind == "loader":
        return PipelineConfig(loaders=(loader_registry().create(name, **{param: item}),))
    if param == "extra.key":
        return PipelineConfig(metadata=MetadataSettings(extra=((value, "v"),)))
    if param == "extra.value":
        return PipelineConfig(metadata=MetadataSettings(extra=(("k", value),)))
    return PipelineConfig(metadata=MetadataSettings.from_params({param: item}))


_LIST_PARAMS = {
    cls.name: {spec.name for spec in cls.params() if spec.kind == "str_list"}
    for registry in (SPLITTERS, POSTPROCESSORS, EXTRACTORS, loader_registry())
    for cls in registry
} | {"metadata": {spec.name for spec in MetadataSettings.params() if spec.kind == "str_list"}}


def _benign_config(kind: str, name: str, param: str, extra: dict[str, Any]) -> tuple[str, PipelineConfig]:
    for payload in BENIGN:
        try:
            return _value(payload), _config(kind, name, param, _value(payload), extra)
        except ChunkScopeError:
            continue
    raise AssertionError(f"no benign value for {name}.{param}")


class _BlankText(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        return ast.Constant("S") if isinstance(node.value, str) else node


def _shape(tree: ast.Module) -> tuple[str | None, str]:
    """The module docstring and the statements with every other text constant blanked out."""
    return ast.get_docstring(tree, clean=False), ast.dump(_BlankText().visit(copy.deepcopy(tree)))


def _texts(tree: ast.Module) -> list[str]:
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def _shape_and_texts(script: str) -> tuple[tuple[str | None, str], list[str]]:
    """``_shape`` and ``_texts`` of a script, from one parse: one walk (``_texts``'s order) reads each text
    constant and blanks it in place, as ``_BlankText`` would. A deep copy, a second parse and the transformer's
    recursive visit were most of this module's time."""
    tree = ast.parse(script)
    docstring = ast.get_docstring(tree, clean=False)
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.append(node.value)
            node.value = "S"
    return (docstring, ast.dump(tree)), texts


# A case's benign script is the same for each of its examples: its shape and texts are taken once.
_benign_shape_and_texts = functools.cache(_shape_and_texts)


def _check_script(script: str, benign_script: str, hostile: str, benign: str) -> None:
    script.encode("utf-8")  # the download button encodes it: a lone surrogate is written as its escape
    shape, texts = _shape_and_texts(script)
    benign_shape, benign_texts = _benign_shape_and_texts(benign_script)
    assert shape == benign_shape, "the hostile value changed the script's statements"
    forms = {hostile, read_typed(hostile)}
    for mine, theirs in zip(texts, benign_texts, strict=True):
        if mine == theirs:
            continue
        # Where the benign value was written, the hostile value is, unchanged (or read as typed text).
        if benign in theirs:
            assert any(mine == theirs.replace(benign, form) for form in forms), (mine, theirs)
        else:  # a part of the value (a header's marker or key)
            assert any(mine.strip() in form for form in forms), (mine, theirs)
    # Comments are one line each: a comment token never holds a character that is not printable. A comment is
    # part of one line, without its line break: when every line is printable, so is every comment. Only a script
    # with a character that is not printable needs the tokenizer (which cost as much as the rest of the check).
    if not script.replace("\r\n", "").replace("\n", "").isprintable():
        for token in tokenize.generate_tokens(StringIO(script).readline):
            if token.type == tokenize.COMMENT:
                assert token.string.isprintable(), token.string


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "name", "param", "extra"), CASES, ids=[f"{c[1]}.{c[2]}-{c[3]}" for c in CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=payloads)
def test_hostile_text_in_any_parameter_changes_no_statement_of_either_script(kind, name, param, extra, payload):
    hostile = _value(payload)
    try:
        config = _config(kind, name, param, hostile, extra)
    except ChunkScopeError:
        return  # refused with a clear error: it never reaches a script
    benign, benign_config = _benign_config(kind, name, param, extra)
    for make in (llamaindex_snippet, langchain_snippet):
        _check_script(make(config), make(benign_config), hostile, benign)


def test_every_free_text_parameter_is_covered_and_most_accept_hostile_text():
    # The registries' own declarations drive the cases: a new text parameter is tested without a new line here.
    names = {(kind, name, param) for kind, name, param, _ in CASES}
    assert ("loader", "json", "text_field") in names and ("splitter", "recursive", "separators") in names
    accepted = 0
    for kind, name, param, extra in CASES:
        try:
            _config(kind, name, param, _value('"""\n#'), extra)
            accepted += 1
        except ChunkScopeError:
            pass
    assert accepted >= len(CASES) * 0.7


# -- literal examples ------------------------------------------------------------------------------------------


def test_a_triple_quote_in_a_loader_option_is_a_literal_in_loader_options():
    # The attack that planted code: a share link's loader option closed the script's docstring. The option now
    # reaches the loader, as a value of the LOADER_OPTIONS literal, and runs nothing.
    value = '"""\nopen("/tmp/pwned", "w")\n"""'
    config = PipelineConfig(loaders=(loader_registry().create("json", text_field=value),))
    benign = PipelineConfig(loaders=(loader_registry().create("json", text_field="body"),))
    for make in (llamaindex_snippet, langchain_snippet):
        script = make(config)
        tree = ast.parse(script)
        assert not any(isinstance(node, ast.Call) and getattr(node.func, "id", "") == "open" for node in ast.walk(tree))
        assert ast.get_docstring(tree).startswith("Reproduces a ChunkScope configuration with")
        assert _shape(tree) == _shape(ast.parse(make(benign)))  # the same statements as for a plain field name
        (assigned,) = [
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["LOADER_OPTIONS"]
        ]
        assert ast.literal_eval(assigned) == {"json": {"text_field": value}}


def test_no_note_quotes_free_text_a_link_can_carry():
    # Notes are comments the Export page also shows: a user's text never reaches one (it is a literal in the code).
    marker = "kZQZk"
    for kind, name, param, extra in CASES:
        try:
            config = _config(kind, name, param, marker, extra)
        except ChunkScopeError:
            continue
        for make in (llamaindex_snippet, langchain_snippet):
            assert not [note for note in notes_of(make(config)) if marker in note], (name, param)


def test_literal_writes_what_evaluates_back_and_refuses_what_is_not_a_value():
    for value in [
        "",
        "a'b\"c",
        '"""',
        "\\",
        "\n\r\u2028\x00\ud800",
        0,
        -3,
        0.25,
        True,
        None,
        ["a", ("b",)],
        {"k": [1]},
    ]:
        text = literal(value)
        assert "\n" not in text and ast.literal_eval(text) == value
    for bad in (float("nan"), object(), {1, 2}):
        with pytest.raises((TypeError, ValueError)):
            literal(bad)


def test_a_comment_is_one_line_per_wrap_whatever_it_quotes():
    text = "a\nb\rc\x0bd\x0ce\x1cf\x1dg\x1eh\x85i\u2028j\u2029k\x00l\ud800m\u202en"
    assert one_line(text) == "a\\nb\\rc\\x0bd\\x0ce\\x1cf\\x1dg\\x1eh\\x85i\\u2028j\\u2029k\\x00l\\ud800m\\u202en"
    assert comment(text).splitlines() == [f"# {one_line(text)}"]
    assert comment("x " * 80).count("\n") == 1 and all(
        line.startswith("# ") for line in comment("x " * 80).splitlines()
    )


def test_a_hostile_share_link_gives_scripts_that_run_only_chunkscopes_code():
    link = urlencode(
        {
            "splitter": "recursive",
            "separators": '["\\"\\"\\"\\nimport os\\n", "\\u2028x"]',
            "loader.json.text_field": "'''\"\"\"\r\n__import__('os').system('id')",
            'meta."""': "#\n`x`",
            "view.metadata_separator": "\u2029",
            "postprocessors": "keyword,metadata_replacement",
            "postprocessor.keyword.required_keywords": '["\\n)\\nimport os#"]',
            "postprocessor.metadata_replacement.target_metadata_key": "'\n",
        }
    )
    config = PipelineConfig.from_query_params(dict(parse_qsl(link)))
    assert config.splitter.separators == ('"""\nimport os\n', "\u2028x")
    benign = PipelineConfig.from_query_params(
        {
            "splitter": "recursive",
            "separators": '["a", "b"]',
            "loader.json.text_field": "c",
            "meta.d": "e",
            "view.metadata_separator": "f",
            "postprocessors": "keyword,metadata_replacement",
            "postprocessor.keyword.required_keywords": '["g"]',
            "postprocessor.metadata_replacement.target_metadata_key": "h",
        }
    )
    for make in (llamaindex_snippet, langchain_snippet):
        script = make(config)
        tree = ast.parse(script)
        assert _shape(tree) == _shape(ast.parse(make(benign)))
        texts = _texts(tree)
        assert "\n)\nimport os#" in texts and "\u2029" in texts
