"""Spans to nodes: build_nodes gives each node its exact text, its own copies of the metadata and key lists,
its id and its links, and stores each node's text as narrowly as CPython stores the slice.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.schema import Document, NodeRelationship
from core.splitters.nodes import Span, build_nodes


@st.composite
def documents_and_spans(draw: st.DrawFn) -> tuple[Document, list[Span]]:
    """Texts stored one, two or four bytes a character, and spans anywhere in them (some with metadata of their own)."""
    text = draw(st.text(max_size=200))
    document = Document(text=text, metadata=draw(st.sampled_from([{}, {"file_name": "a.txt", "n": 3}])))
    bound = st.integers(0, len(text))
    pairs = draw(st.lists(st.tuples(bound, bound).map(sorted), max_size=10))
    metadata = st.sampled_from([None, {}, {"heading": "H"}])
    return document, [Span(start, end, draw(metadata)) for start, end in pairs]


@settings(max_examples=200, deadline=None)
@given(documents_and_spans(), st.booleans(), st.booleans())
def test_each_node_is_its_span_of_the_text_with_the_documents_metadata(case, include_metadata, prev_next):
    document, spans = case
    nodes = build_nodes(document, spans, include_metadata=include_metadata, include_prev_next_rel=prev_next)
    assert [(node.start_char, node.end_char) for node in nodes] == [span[:2] for span in spans]
    for index, (node, span) in enumerate(zip(nodes, spans, strict=True)):
        assert node.text == document.text[span.start : span.end]
        assert node.id == f"{document.id}#{index}"
        inherited = dict(document.metadata) if include_metadata else {}
        assert node.metadata == {**inherited, **(span.metadata or {})}
        assert (NodeRelationship.PREVIOUS in node.relationships) == (prev_next and index > 0)
        assert (NodeRelationship.NEXT in node.relationships) == (prev_next and index < len(nodes) - 1)


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
