"""Spans to nodes: core/splitters/nodes_native.c builds exactly the nodes build_nodes' Python loop builds.

Every splitter's cuts become nodes through build_nodes; where the C loop is built it takes documents
without pages or tables, and hands back (None) any span it does not take, so both paths must give equal
nodes (every field: text, id, metadata and its copies, key lists, templates, links, offsets).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.schema import Document, Node, NodeRelationship
from core.splitters import nodes as nodes_module
from core.splitters.nodes import Span, build_nodes


def python_nodes(document: Document, spans, **options) -> list[Node]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nodes_module, "nodes_native", None)
        return build_nodes(document, spans, **options)


def test_the_c_loop_is_built_where_the_project_is_installed():
    # The install builds it (setup.py; the Makefile installs gcc): without it splits are slower, not different.
    assert nodes_module.nodes_native is not None


# Texts stored one, two and four bytes a character (PEP 393), and mostly-ASCII ones holding one wide
# character: the C loop narrows each node's text to what its own characters need.
TEXTS = st.one_of(
    st.text(max_size=300),
    st.builds(
        lambda head, wide, tail: head + wide + tail,
        st.text(alphabet="ab \n.", max_size=200),
        st.sampled_from(["\u2019", "\xe9", "\u0416", "\U0001f600", "\ud800", "\uffff", "\x80"]),
        st.text(alphabet="cd \n\xe9", max_size=200),
    ),
)


@st.composite
def documents_and_spans(draw: st.DrawFn) -> tuple[Document, list]:
    text = draw(TEXTS)
    metadata = draw(st.sampled_from([{}, {"file_name": "a.txt"}, {"file_name": "b.md", "tags": ["x"], "n": 3}]))
    document = Document(
        text=text,
        metadata=metadata,
        excluded_llm_metadata_keys=draw(st.sampled_from([[], ["file_name"]])),
        excluded_embed_metadata_keys=draw(st.sampled_from([[], ["n", "tags"]])),
        metadata_template=draw(st.sampled_from(["{key}: {value}", "{key}={value}"])),
    )
    bound = st.integers(0, len(text))
    pairs = draw(st.lists(st.tuples(bound, bound).map(sorted), max_size=12))
    spans = [tuple(pair) for pair in pairs]
    # What Python's loop must take: a Span with metadata of its own, empty or inverted spans, indices out of
    # range or negative (Python's slicing rules), numpy ints.
    extra = draw(
        st.sampled_from(
            [None, "span metadata", "empty metadata", "inverted", "past the end", "negative", "numpy", "Span"]
        )
    )
    if spans and extra:
        i = draw(st.integers(0, len(spans) - 1))
        start, end = spans[i]
        spans[i] = {
            "span metadata": Span(start, end, {"heading": "H"}),
            "empty metadata": Span(start, end, {}),
            "inverted": (end, start),
            "past the end": (start, len(text) + 5),
            "negative": (-3, end),
            "numpy": (np.int64(start), np.int64(end)),
            "Span": Span(start, end),
        }[extra]
    return document, spans


@settings(max_examples=400, deadline=None)
@given(documents_and_spans(), st.booleans(), st.booleans(), st.sampled_from(["", "p"]))
def test_the_c_loop_builds_what_the_python_loop_builds(case, include_metadata, prev_next, id_prefix):
    document, spans = case
    options = {"include_metadata": include_metadata, "include_prev_next_rel": prev_next, "id_prefix": id_prefix}
    built = build_nodes(document, spans, **options)
    expected = python_nodes(document, spans, **options)
    assert built == expected
    for node, twin in zip(built, expected, strict=True):
        # The same kind of str (a slice stored as narrowly as CPython stores it), and ints where ints were.
        assert node.text.isascii() == twin.text.isascii()
        assert type(node.start_char) is type(twin.start_char)
        assert list(node.relationships) == list(twin.relationships)


def test_each_node_owns_its_metadata_and_key_lists():
    document = Document(text="one two three", metadata={"file_name": "a.txt"}, excluded_llm_metadata_keys=["x"])
    first, second = build_nodes(document, [(0, 3), (4, 7)])
    first.metadata["only"] = 1
    first.excluded_llm_metadata_keys.append("file_name")
    first.excluded_embed_metadata_keys.append("file_name")
    assert second.metadata == {"file_name": "a.txt"} and document.metadata == {"file_name": "a.txt"}
    assert second.excluded_llm_metadata_keys == ["x"] and document.excluded_llm_metadata_keys == ["x"]
    assert second.excluded_embed_metadata_keys == []


def test_nodes_are_linked_and_numbered():
    document = Document(text="alpha beta gamma", id="doc")
    nodes = build_nodes(document, [(0, 5), (6, 10), (11, 16)])
    assert [node.id for node in nodes] == ["doc#0", "doc#1", "doc#2"]
    assert [node.text for node in nodes] == ["alpha", "beta", "gamma"]
    assert nodes[1].relationships == {
        NodeRelationship.SOURCE: "doc",
        NodeRelationship.PREVIOUS: "doc#0",
        NodeRelationship.NEXT: "doc#2",
    }
    assert nodes[0].relationships == {NodeRelationship.SOURCE: "doc", NodeRelationship.NEXT: "doc#1"}


def test_a_wide_character_elsewhere_leaves_a_node_stored_narrow():
    # The document is stored two bytes a character; a node without a wide character is ASCII, like CPython's slice.
    text = "plain words " * 10 + "\u201cquoted\u201d"
    (plain, quoted) = build_nodes(Document(text=text), [(0, 24), (110, len(text))])
    assert plain.text == text[0:24] and plain.text.isascii()
    assert quoted.text == text[110:] and not quoted.text.isascii()
