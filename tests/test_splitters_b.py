"""Splitters part B as a spec: markdown and HTML headings, semantic breakpoints, hierarchy."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ConfigError
from core.loaders import load_bytes
from core.schema import Document, NodeRelationship
from core.splitters import SPLITTERS, get_splitter
from core.splitters.hierarchical import leaf_nodes, nodes_at_level, root_nodes
from core.splitters.semantic import SemanticSplitter, breakpoint_threshold, embedder_override

# --------------------------------------------------------------------------- markdown

GUIDE = """\
Read me first.

## Install

Use pip.

### From source

Clone the repo.

```
## not a heading
```

## Usage

Call run().
"""


def texts_and_paths(nodes):
    return [(node.text, node.metadata["header_path"]) for node in nodes]


def test_markdown_every_heading_starts_a_section():
    nodes = get_splitter("markdown").split([Document(text=GUIDE)])
    assert texts_and_paths(nodes) == [
        ("Read me first.", "/"),
        ("## Install\n\nUse pip.", "/"),
        ("### From source\n\nClone the repo.\n\n```\n## not a heading\n```", "/Install/"),
        ("## Usage\n\nCall run().", "/"),
    ]
    assert [{k: v for k, v in n.metadata.items() if k.startswith("header_") and k != "header_path"} for n in nodes] == [
        {},
        {"header_2": "Install"},
        {"header_2": "Install", "header_3": "From source"},
        {"header_2": "Usage"},
    ]


def test_markdown_heading_level_2_keeps_subsections_with_their_section():
    nodes = get_splitter("markdown", heading_level=2).split([Document(text=GUIDE)])
    assert texts_and_paths(nodes) == [
        ("Read me first.", "/"),
        ("## Install\n\nUse pip.\n\n### From source\n\nClone the repo.\n\n```\n## not a heading\n```", "/"),
        ("## Usage\n\nCall run().", "/"),
    ]
    assert "header_3" not in nodes[1].metadata


def test_markdown_header_path_lists_the_enclosing_headings():
    text = "# Title\n\n## Section\n\n### Sub\n\n#### Deep\n\nbody\n\n## Next\n\nmore"
    nodes = get_splitter("markdown").split([Document(text=text)])
    assert [n.metadata["header_path"] for n in nodes] == ["/", "/Title/", "/Title/Section/", "/Title/Section/Sub/", "/Title/"]
    assert nodes[3].metadata["header_4"] == "Deep" and nodes[3].metadata["header_1"] == "Title"
    assert "header_3" not in nodes[4].metadata  # a new ## closes the ### above it


def test_markdown_uses_the_loaders_heading_elements():
    document = load_bytes(GUIDE.encode(), "guide.md")[0]
    nodes = get_splitter("markdown").split([document])
    assert texts_and_paths(nodes) == texts_and_paths(get_splitter("markdown").split([Document(text=GUIDE)]))
    assert all(node.metadata["file_name"] == "guide.md" for node in nodes)


def test_markdown_chunk_size_cuts_sections_at_paragraphs_then_lines():
    text = "## A\n\none two three\nfour five six\n\nseven\n\n## B\n\nshort"
    nodes = get_splitter("markdown", chunk_size=16).split([Document(text=text)])
    assert texts_and_paths(nodes) == [
        ("## A", "/"),
        ("one two three", "/"),
        ("four five six", "/"),
        ("seven", "/"),
        ("## B\n\nshort", "/"),
    ]
    assert nodes[1].metadata["header_2"] == "A"


def test_markdown_chunk_size_never_cuts_inside_a_table_row():
    row = "| a long cell value | another long cell value |"
    text = f"## T\n\n| x | y |\n|---|---|\n{row}\n{row}\n"
    document = load_bytes(text.encode(), "t.md")[0]
    nodes = get_splitter("markdown", chunk_size=20).split([document])
    assert [n.text for n in nodes if n.text == row] == [row, row]
    for node in nodes:
        assert node.text == document.text[node.start_char : node.end_char]
        assert len(node.text) <= 20 or node.text == row


@given(st.text(alphabet=st.sampled_from(list("ab #\n|`-")), max_size=300), st.integers(1, 6), st.integers(0, 30))
def test_markdown_spans_are_exact_ordered_and_cover_the_text(text, level, chunk_size):
    document = Document(text=text)
    nodes = get_splitter("markdown", heading_level=level, chunk_size=chunk_size).split([document])
    for node in nodes:
        assert node.text == text[node.start_char : node.end_char]
    assert [n.start_char for n in nodes] == sorted(n.start_char for n in nodes)
    covered = "".join(node.text for node in nodes)
    assert "".join(covered.split()) == "".join(text.split())


def test_markdown_heading_level_is_bounded():
    with pytest.raises(ConfigError, match="heading_level"):
        get_splitter("markdown", heading_level=7)


# --------------------------------------------------------------------------- html

PAGE = (
    b"<html><body><h1>Guide</h1><p>Intro.</p><h2>Install</h2><p>Run pip.</p>"
    b"<h4>Note</h4><p>Fine print.</p><h2>Use</h2><p>Call it.</p></body></html>"
)


def test_html_splits_at_the_chosen_heading_tags():
    document = load_bytes(PAGE, "page.html")[0]
    nodes = get_splitter("html").split([document])
    assert texts_and_paths(nodes) == [
        ("Guide\n\nIntro.", "/"),
        ("Install\n\nRun pip.\n\nNote\n\nFine print.", "/Guide/"),  # h4 is not split on by default
        ("Use\n\nCall it.", "/Guide/"),
    ]
    deeper = get_splitter("html", headings_to_split_on="h1,h2,h4").split([document])
    assert texts_and_paths(deeper)[2] == ("Note\n\nFine print.", "/Guide/Install/")
    assert deeper[2].metadata["header_4"] == "Note"


def test_html_rejects_a_tag_that_is_not_a_heading():
    with pytest.raises(ConfigError, match="h1 to h6"):
        get_splitter("html", headings_to_split_on="h1,p")


# --------------------------------------------------------------------------- semantic

CATS = ["Cats purr.", "Cats nap.", "Cats climb.", "Cats hiss.", "Cats hunt.", "Cats stretch.", "Cats play.",
        "Cats sleep.", "Cats groom.", "Cats yawn."]  # fmt: skip
BONDS = ["Bonds rose.", "Rates fell.", "Yields moved.", "Markets shut.", "Stocks slid.", "Banks lent.",
         "Funds sold.", "Gold held.", "Oil rose.", "Debt grew."]  # fmt: skip
TOPICS = Document(text=" ".join(CATS + BONDS))


def topic_vectors(texts):
    """Orthogonal vectors for the two topics: the only distance is at the topic change."""
    return np.array([[1.0, 0.0] if text.startswith("Cats") else [0.0, 1.0] for text in texts])


@pytest.mark.parametrize(
    ("breakpoint_type", "first_chunk_sentences"),
    [
        ("percentile", 10),
        ("standard_deviation", 10),
        ("interquartile", 10),
        # The gradient peaks where the distance starts rising: one sentence early.
        ("gradient", 9),
    ],
)
def test_semantic_breaks_at_the_topic_change(breakpoint_type, first_chunk_sentences):
    splitter = get_splitter("semantic", breakpoint_type=breakpoint_type, buffer_size=0).with_embedder(topic_vectors)
    nodes = splitter.split([TOPICS])
    sentences = CATS + BONDS
    assert [n.text for n in nodes] == [
        " ".join(sentences[:first_chunk_sentences]),
        " ".join(sentences[first_chunk_sentences:]),
    ]


def test_semantic_analysis_exposes_distances_and_threshold():
    splitter = get_splitter("semantic", buffer_size=0).with_embedder(topic_vectors)
    analysis = splitter.analyze(TOPICS)
    assert len(analysis.sentence_spans) == 20
    assert analysis.distances == pytest.approx([0.0] * 9 + [1.0] + [0.0] * 9)
    assert analysis.threshold == pytest.approx(0.1)  # the 95th percentile of eighteen 0s and one 1
    assert analysis.breakpoints == [9]


def test_semantic_buffer_joins_neighbours_before_embedding():
    seen = []

    def record(texts):
        seen.extend(texts)
        return topic_vectors(texts)

    get_splitter("semantic", buffer_size=1).with_embedder(record).analyze(Document(text="A a. B b. C c."))
    assert seen == ["A a. B b.", "A a. B b. C c.", "B b. C c."]


def test_breakpoint_thresholds_by_type():
    distances = np.array([0.1, 0.2, 0.3, 0.4, 1.0])
    assert breakpoint_threshold(distances, "percentile", 50)[1] == pytest.approx(0.3)
    assert breakpoint_threshold(distances, "standard_deviation", 1)[1] == pytest.approx(0.4 + np.std(distances))
    assert breakpoint_threshold(distances, "interquartile", 1)[1] == pytest.approx(0.4 + 0.2)
    scores, threshold = breakpoint_threshold(distances, "gradient", 50)
    assert scores.tolist() == pytest.approx([0.1, 0.1, 0.1, 0.35, 0.6])
    assert threshold == pytest.approx(0.1)


def test_semantic_override_applies_to_every_semantic_splitter_in_the_block():
    with embedder_override(topic_vectors):
        nodes = get_splitter("semantic", buffer_size=0).split([TOPICS])
    assert len(nodes) == 2


def test_semantic_max_chunk_size_cuts_big_groups_at_sentences():
    splitter = get_splitter("semantic", buffer_size=0, max_chunk_size=40).with_embedder(topic_vectors)
    nodes = splitter.split([TOPICS])
    # The topic change still ends a chunk: the last cat sentence stays on its own.
    assert [n.text for n in nodes][:4] == [
        "Cats purr. Cats nap. Cats climb.",
        "Cats hiss. Cats hunt. Cats stretch.",
        "Cats play. Cats sleep. Cats groom.",
        "Cats yawn.",
    ]
    assert nodes[4].text.startswith("Bonds rose.")
    assert all(len(n.text) <= 40 for n in nodes)
    for node in nodes:
        assert node.text == TOPICS.text[node.start_char : node.end_char]


def test_semantic_default_amounts_follow_langchain():
    assert SemanticSplitter().amount == 95
    assert SemanticSplitter(breakpoint_type="standard_deviation").amount == 3
    assert SemanticSplitter(breakpoint_type="interquartile").amount == 1.5
    with pytest.raises(ConfigError, match="at most 100"):
        get_splitter("semantic", breakpoint_amount=150)


def test_semantic_keeps_a_one_sentence_document_whole():
    nodes = get_splitter("semantic").with_embedder(topic_vectors).split([Document(text="  Only one.  ")])
    assert [n.text for n in nodes] == ["Only one."]


@pytest.mark.model
def test_semantic_with_the_packaged_model_separates_two_topics():
    text = (
        "The cat slept on the warm windowsill all afternoon. "
        "Later the cat chased a small mouse across the kitchen floor. "
        "The kitten purred while its mother licked its fur. "
        "The central bank raised interest rates by half a percent. "
        "Bond yields climbed as investors sold government debt. "
        "Stock markets fell sharply after the rate decision."
    )
    splitter = get_splitter("semantic", buffer_size=0, breakpoint_type="percentile", breakpoint_amount=75)
    analysis = splitter.analyze(Document(text=text))
    assert int(np.argmax(analysis.distances)) == 2  # the biggest jump is between the pets and the finance
    nodes = splitter.split([Document(text=text)])
    assert nodes[0].text.endswith("licked its fur.")
    assert nodes[1].text.startswith("The central bank")


# --------------------------------------------------------------------------- hierarchical

LONG = " ".join(f"Sentence number {i} says something about topic {i % 3}." for i in range(40))


def hierarchy(**params):
    splitter = get_splitter("hierarchical", tokenizer="words", **params)
    return splitter.split([Document(text=LONG, id="doc")])


def test_hierarchical_returns_every_level_roots_first_with_links():
    nodes = hierarchy(chunk_sizes="200,60,20", chunk_overlap=0)
    levels = [node.metadata["level"] for node in nodes]
    assert levels == sorted(levels) and set(levels) == {0, 1, 2}
    by_id = {node.id: node for node in nodes}
    assert len(by_id) == len(nodes)  # ids are unique across levels
    roots = root_nodes(nodes)
    assert roots == nodes_at_level(nodes, 0)
    assert [n.id for n in roots] == ["doc#L0-0", "doc#L0-1"]
    for node in nodes:
        assert node.text == LONG[node.start_char : node.end_char]
        parent_id = node.relationships.get(NodeRelationship.PARENT)
        if node.metadata["level"] == 0:
            assert parent_id is None
            continue
        parent = by_id[parent_id]
        assert parent.metadata["level"] == node.metadata["level"] - 1
        assert parent.start_char <= node.start_char and node.end_char <= parent.end_char
        assert node.id in parent.child_ids
    assert leaf_nodes(nodes) == nodes_at_level(nodes, 2)
    # Every child lists a parent that lists it back, and sizes shrink level by level.
    assert sum(len(n.child_ids) for n in nodes) == len(nodes) - len(roots)
    assert max(len(n.text.split()) for n in nodes_at_level(nodes, 2)) <= 20


def test_hierarchical_links_each_level_as_its_own_chain():
    nodes = hierarchy(chunk_sizes="200,60,20", chunk_overlap=0)
    for level in (0, 1, 2):
        chain = nodes_at_level(nodes, level)
        assert chain[0].prev_id is None and chain[-1].next_id is None
        for before, after in pairwise(chain):
            assert before.next_id == after.id and after.prev_id == before.id


def test_hierarchical_chunk_sizes_must_shrink():
    with pytest.raises(ConfigError, match="smaller level by level"):
        get_splitter("hierarchical", chunk_sizes="128,512")
    with pytest.raises(ConfigError, match="chunk_overlap"):
        get_splitter("hierarchical", chunk_sizes="512,16", chunk_overlap=20)


def test_every_part_b_splitter_is_registered():
    assert {"markdown", "html", "semantic", "hierarchical"} <= set(SPLITTERS.names())


def test_a_hierarchys_nodes_fit_their_size_with_the_level_and_page_label_they_show():
    # Each node shows its `level` and the pages it spans, on top of the document's metadata: both are budgeted,
    # so no EMBED view outgrows its level's chunk size (with the model's tokens: the embedder reads it whole).
    from core.schema import MetadataMode, Page

    text = " ".join(f"word{i}." for i in range(600))
    pages = [Page(n + 1, f"p{n + 1}", n * len(text) // 6, (n + 1) * len(text) // 6) for n in range(6)]
    document = Document(text=text, id="doc", metadata={"file_name": "paged.pdf"}, pages=pages)
    sizes = (120, 30)
    nodes = get_splitter("hierarchical", tokenizer="words", chunk_sizes=sizes, chunk_overlap=0).split([document])
    assert {node.metadata["page_label"] for node in leaf_nodes(nodes)} > {"p1", "p6"}
    for level, size in enumerate(sizes):
        for node in nodes_at_level(nodes, level):
            assert len(node.get_content(MetadataMode.EMBED).split()) <= size, node.get_content(MetadataMode.EMBED)


def test_hierarchical_leaves_room_for_metadata_at_every_level():
    document = Document(text=LONG, id="doc", metadata={"file_name": "a_rather_long_file_name.txt"})
    aware = get_splitter("hierarchical", tokenizer="words", chunk_sizes="60,20", chunk_overlap=0).split([document])
    # "file_name: a_rather_long_file_name.txt" is two words, so every level packs two words fewer.
    assert max(len(n.text.split()) for n in nodes_at_level(aware, 1)) <= 18
    assert max(len(n.text.split()) for n in nodes_at_level(aware, 0)) <= 58
    with pytest.raises(ConfigError, match="^hierarchical: the metadata of a_rather_long_file_name.txt"):
        get_splitter("hierarchical", tokenizer="words", chunk_sizes="60,2", chunk_overlap=0).split([document])
    plain = get_splitter("hierarchical", tokenizer="words", chunk_sizes="60,2", chunk_overlap=0, metadata_aware=False)
    assert max(len(n.text.split()) for n in leaf_nodes(plain.split([document]))) <= 2
