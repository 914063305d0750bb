"""Chunk metrics as a spec: a short document, hand-placed nodes, exact numbers."""

from __future__ import annotations

import pytest
from cpu_budget import cpu_budget
from hypothesis import given
from hypothesis import strategies as st

from core.measure.lint import splitter_warnings
from core.measure.metrics import SizeStats, chunk_metrics, chunk_report
from core.schema import Document, Element, Page
from core.splitters import get_splitter
from core.splitters.nodes import build_nodes

# "Cats sleep all day." is 0-19, "Dogs bark at night." 20-39, "Birds sing in the morning." 41-67.
TEXT = "Cats sleep all day. Dogs bark at night.\n\nBirds sing in the morning."
PETS = Document(text=TEXT, id="pets", metadata={"file_name": "pets.txt"}, excluded_embed_metadata_keys=["file_name"])
# A: the first sentence; B: from "all" to the end of the second (overlaps A by "all day."); C: "Birds sing".
SPANS = [(0, 19), (11, 39), (41, 51)]


def pets_nodes(spans=SPANS):
    return build_nodes(PETS, spans)


def test_metrics_of_three_hand_placed_nodes():
    metrics = chunk_metrics([PETS], pets_nodes(), tokenizer="words", size_limit=5, max_seq_length=8)
    assert metrics.count == 3
    assert metrics.characters == SizeStats(min=10, mean=19, p50=19, p95=pytest.approx(27.1), max=28, sd=pytest.approx(54**0.5))
    assert (metrics.tokens.min, metrics.tokens.max, metrics.tokens.mean) == (2, 6, 4)
    # Non-whitespace characters: 54 in all; the nodes hold 32 of the first two sentences and 9 of "Birds sing".
    assert metrics.coverage == pytest.approx(41 / 54)
    assert metrics.coverage_by_document == {"pets": pytest.approx(41 / 54)}
    # "all day." (8 characters) lies in A and B; the nodes cover 39 + 10 characters.
    assert metrics.overlap == pytest.approx(8 / 49)
    assert metrics.mid_sentence == pytest.approx(1 / 3)  # C stops after "sing"
    assert metrics.over_limit == pytest.approx(1 / 3)  # B has 6 words
    # The window is 8 - 2 model tokens; B's EMBED view ("all day . dogs bark at night .") has 8.
    assert metrics.window_tokens == 6
    assert metrics.over_window == pytest.approx(1 / 3)
    assert metrics.duplicates == 0
    # "file_name: pets.txt" adds two words for the LLM; the EMBED view excludes it.
    assert metrics.metadata_tokens == {"llm": 2.0, "embed": 0.0}
    assert metrics.to_dict()["characters"]["max"] == 28


def test_full_disjoint_cover_has_no_overlap_and_full_coverage():
    metrics = chunk_metrics([PETS], pets_nodes([(0, 19), (20, 39), (41, 67)]), tokenizer="characters")
    assert (metrics.coverage, metrics.overlap, metrics.mid_sentence) == (1.0, 0.0, 0.0)


def test_duplicates_count_repeats_of_an_earlier_text():
    nodes = pets_nodes([(0, 19), (0, 19), (0, 19), (20, 39)])
    assert chunk_metrics([PETS], nodes, tokenizer="words").duplicates == 2
    _, rows = chunk_report([PETS], nodes, tokenizer="words")
    assert ["duplicate" in row["flags"] for row in rows] == [False, True, True, False]


@pytest.mark.parametrize("options", [{"tokenizer": "words", "size_limit": 5, "max_seq_length": 8}, {"tokenizer": "model"}])
def test_one_report_gives_the_metrics_and_the_table(options):
    nodes = pets_nodes([(0, 19), (0, 19), (11, 39), (41, 51)])
    metrics, rows = chunk_report([PETS], nodes, **options)
    assert metrics == chunk_metrics([PETS], nodes, **options)
    assert [row["id"] for row in rows] == [node.id for node in nodes]
    assert metrics.tokenizer == options["tokenizer"]


def test_node_flags_name_what_is_wrong_with_each_node():
    _, rows = chunk_report([PETS], pets_nodes(), tokenizer="words", size_limit=5, max_seq_length=8)
    assert [row["flags"] for row in rows] == [[], ["over-window", "over-limit"], ["mid-sentence", "tiny"]]
    _, rows = chunk_report([PETS], pets_nodes([(0, 19), (0, 19)]), tokenizer="words")
    assert [row["flags"] for row in rows] == [[], ["duplicate"]]


def test_node_table_rows():
    paged = Document(
        text=TEXT,
        id="paged",
        pages=[Page(1, "i", 0, 20), Page(2, "ii", 20, 41), Page(3, "iii", 41, 67)],
        metadata={},
    )
    nodes = build_nodes(paged, [(11, 39), (41, 67)])
    nodes[0].metadata["header_path"] = "/Pets/"
    _, rows = chunk_report([paged], nodes, tokenizer="words")
    assert rows[0] == {
        "id": "paged#0",
        "doc_id": "paged",
        "span": "11–39",
        "start_char": 11,
        "end_char": 39,
        "characters": 28,
        "tokens": 6,
        "pages": "i-ii",
        "header_path": "/Pets/",
        "first_words": "all day. Dogs bark at night.",
        "flags": [],
    }
    assert rows[1]["pages"] == "iii"
    assert rows[1]["first_words"] == "Birds sing in the morning."


def test_first_words_are_shortened():
    document = Document(text="one two three four five six seven eight nine ten", id="d")
    _, (row,) = chunk_report([document], build_nodes(document, [(0, len(document.text))]), tokenizer="words")
    assert row["first_words"] == "one two three four five six seven eight …"


def test_empty_run():
    metrics = chunk_metrics([PETS], [], tokenizer="words")
    assert (metrics.count, metrics.coverage, metrics.overlap, metrics.mid_sentence) == (0, 0.0, 0.0, 0.0)


@given(st.lists(st.tuples(st.integers(0, 67), st.integers(0, 67)), max_size=12))
def test_coverage_and_overlap_match_a_character_count(pairs):
    spans = [(min(a, b), max(a, b)) for a, b in pairs if a != b]
    metrics = chunk_metrics([PETS], pets_nodes(spans), tokenizer="characters")
    depth = [0] * len(TEXT)
    for start, end in spans:
        for i in range(start, end):
            depth[i] += 1
    covered = [i for i in range(len(TEXT)) if depth[i]]
    non_space = [i for i in range(len(TEXT)) if not TEXT[i].isspace()]
    assert metrics.coverage == pytest.approx(len([i for i in non_space if depth[i]]) / len(non_space))
    expected_overlap = len([i for i in covered if depth[i] > 1]) / len(covered) if covered else 0.0
    assert metrics.overlap == pytest.approx(expected_overlap)


def test_metrics_are_fast_on_thousands_of_nodes():
    text = " ".join(f"Sentence {i} is about something." for i in range(3000))
    document = Document(text=text, id="big", metadata={"file_name": "big.txt"})
    nodes = get_splitter("character", separator=". ", chunk_size=60, chunk_overlap=10).split([document])
    assert len(nodes) > 2000
    # Bounded, not timed: a quadratic pass over 2,000 nodes would use far more; the speed is benchmarked.
    with cpu_budget(10):
        metrics, rows = chunk_report([document], nodes)
    assert metrics.count == len(rows) == len(nodes)
    assert metrics.coverage == 1.0


@pytest.mark.parametrize(
    "name, params, expected",
    [
        (
            "character",
            {"chunk_size": 256, "chunk_overlap": 200},
            [
                "chunk_overlap (200) is 78% of chunk_size (256): each stretch of text lands in about "
                "4.6 chunks, so it is embedded and retrieved that many times"
            ],
        ),
        ("sentence", {"chunk_size": 100, "chunk_overlap": 90}, ["chunk_overlap (90) is 90% of chunk_size (100)"]),
        ("character", {"chunk_size": 400, "chunk_overlap": 200}, []),  # half: each stretch in two chunks
        ("character", {}, []),  # 200 of 1000
        ("markdown", {}, []),  # no chunk_size
        ("sentence_window", {}, []),  # no overlap
    ],
)
def test_splitter_warnings_name_an_overlap_that_is_most_of_the_chunk(name, params, expected):
    warnings = splitter_warnings(get_splitter(name, **params))
    assert len(warnings) == len(expected)
    for warning, start in zip(warnings, expected, strict=True):
        assert warning.startswith(start)


@given(
    st.text(st.sampled_from("ab \n"), min_size=1, max_size=40),
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=8),
)
def test_coverage_and_overlap_count_every_position_as_a_per_character_pass_does(text, pairs):
    from core.measure.coverage import coverage_of

    document = Document(text=text, id="c")
    spans = [(min(a, b) % (len(text) + 1), max(a, b) % (len(text) + 1)) for a, b in pairs]
    spans = [(a, b) for a, b in spans if a <= b]
    nodes = build_nodes(document, spans)
    depth = [sum(a <= i < b for a, b in spans) for i in range(len(text))]
    non_space = [i for i, c in enumerate(text) if not c.isspace()]
    by_document, coverage, overlap = coverage_of([document], nodes)
    expected = sum(depth[i] >= 1 for i in non_space) / len(non_space) if non_space else 1.0
    assert coverage == pytest.approx(expected)
    union = sum(d >= 1 for d in depth)
    assert overlap == pytest.approx(sum(d >= 2 for d in depth) / union if union else 0.0)


def test_a_cut_at_the_end_of_a_table_row_is_not_mid_sentence():
    # Rows hold no sentence ends; a node ending where a row ends is a clean cut, one ending inside a row is not.
    text = "name,value\nalpha,1\nbeta,2\ngamma,3"
    elements = [
        Element("table", 0, len(text), attrs={"header": "name,value", "header_end": 10}),
        Element("table_row", 11, 18),
        Element("table_row", 19, 25),
        Element("table_row", 26, len(text)),
    ]
    document = Document(text=text, id="t", elements=elements)
    nodes = build_nodes(document, [(0, 18), (19, 25), (26, 29)])
    metrics, rows = chunk_report([document], nodes, tokenizer="characters")
    assert ["mid-sentence" in row["flags"] for row in rows] == [False, False, True]
    assert metrics.mid_sentence == pytest.approx(1 / 3)


def test_csv_sample_split_with_defaults_has_no_mid_sentence_nodes(sample_docs):
    from core.config import PipelineConfig
    from core.documents import run_split
    from core.loaders import load

    documents = load(sample_docs / "splitter_benchmarks.csv")
    nodes = run_split(documents, PipelineConfig())
    assert len(nodes) > 1
    assert chunk_metrics(documents, nodes, tokenizer="model").mid_sentence == 0


def test_a_chunk_far_over_its_limit_is_worth_a_sentence_and_one_a_little_over_is_not():
    from core.measure.lint import oversized_chunk_warning

    assert oversized_chunk_warning(500, 250, "model tokens", "chunk_size") is None  # twice: an indivisible row, say
    assert oversized_chunk_warning(3414, 254, "model tokens", "what the embedding model reads") == (
        "its largest chunk is 3,414 model tokens, 13 times what the embedding model reads (254): "
        "the splitter found little to cut at in this text"
    )
    assert oversized_chunk_warning(10, 0, "characters", "chunk_size") is None


def test_views_handed_in_give_the_columns_made_without_them():
    # The batch worker makes the nodes' EMBED and LLM views for its Parquet columns and hands them to the
    # metrics, which would make the same ones again.
    from core.measure.metrics import chunk_columns
    from core.schema import MetadataMode, contents

    document = Document(text="A title line.\n\nSome prose that goes on. " * 40, metadata={"file_name": "a.md"})
    nodes = get_splitter("recursive", chunk_size=200, chunk_overlap=40).split([document])
    nodes[0].excluded_llm_metadata_keys = ["file_name"]  # the two views differ for this node
    views = (contents(nodes, MetadataMode.EMBED), contents(nodes, MetadataMode.LLM))
    assert views[0][0] != views[1][0]
    assert chunk_columns([document], nodes, views=views) == chunk_columns([document], nodes)
