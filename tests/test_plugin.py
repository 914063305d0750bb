"""The example plugin (examples/plugin) is found through its entry point and behaves like a built-in."""

from __future__ import annotations

from importlib.metadata import entry_points

from core.params import Configurable
from core.registry import Registry
from core.schema import Document
from core.splitters import SPLITTERS, get_splitter
from core.splitters.base import Splitter


def test_plugin_is_discovered_through_its_entry_point():
    found = [ep for ep in entry_points(group="chunkscope.splitters") if ep.name == "paragraph"]
    assert found, "the example plugin is not installed: make setup-dev (pip install -e examples/plugin)"
    (entry_point,) = found
    assert entry_point.value == "chunkscope_paragraph:ParagraphSplitter"
    assert entry_point.dist is not None and entry_point.dist.name == "chunkscope-paragraph-plugin"
    assert "paragraph" in SPLITTERS.names()
    assert SPLITTERS.get_class("paragraph") is entry_point.load()
    assert not [error for error in SPLITTERS.plugin_errors if error.startswith("paragraph")]


def test_a_fresh_registry_loads_only_installed_plugins():
    registry: Registry = Registry("splitter", entry_point_group="chunkscope.splitters")
    assert "paragraph" in registry.names()
    cls = registry.get_class("paragraph")
    assert issubclass(cls, Splitter) and issubclass(cls, Configurable)


def test_plugin_parameters_are_declared_like_a_builtin():
    listing = {item["name"]: item for item in SPLITTERS.describe()}["paragraph"]
    (per_node,) = [p for p in listing["params"] if p["name"] == "paragraphs_per_node"]
    assert (per_node["kind"], per_node["default"], per_node["ge"]) == ("int", 1, 1)


def test_paragraph_splitter_groups_blank_line_paragraphs():
    text = "First para\nstill first.\n\nSecond.\n  \n\nThird.\n\n\nFourth.\n"
    document = Document(text=text)
    one = get_splitter("paragraph").split([document])
    assert [n.text for n in one] == ["First para\nstill first.", "Second.", "Third.", "Fourth."]
    two = get_splitter("paragraph", paragraphs_per_node="2").split([document])
    assert [n.text for n in two] == ["First para\nstill first.\n\nSecond.", "Third.\n\n\nFourth."]
    for node in one + two:
        assert node.text == text[node.start_char : node.end_char]
    assert two[0].next_id == two[1].id
