"""Properties every registered splitter keeps, on random text with random valid parameters.

Parameters are drawn from each class's declared ``params()`` (bounds and
choices), never written per splitter, so a splitter added to the registry is
tested here the moment it is registered. A splitter that embeds (``semantic``)
gets a small deterministic fake embedder through its ``with_embedder`` hook; the
engines that embed (``llamaindex.semantic``, ``langchain.semantic``, ``chonkie.semantic``) get the same
one through ``embedder_override``: these properties hold whatever the vectors
are, and a real model's pass over every drawn text costs seconds an example.
tests/test_engines.py and tests/test_semantic_compat.py run them on the packaged model.

What must hold for every node a splitter returns:

- it is an exact slice: ``node.text == document.text[start_char:end_char]``, not empty;
- SOURCE is the document's id, and it inherits the document's metadata (unless told not to);
- every non-whitespace character of the document lies in some node;
- PREVIOUS/NEXT form chains in order of start (one chain, in list order, for a
  flat splitter; one per level for a hierarchy); none when links are turned off;
- a node holds at most ``size_limit`` units of ``size_unit``, unless it is one
  indivisible unit (a word, a model token, a table row, or a piece between two
  of the splitter's ``separator``);
- consecutive nodes share at most ``overlap_limit`` units;
- the same input gives the same nodes.

A framework engine (``llamaindex.*``, ``langchain.*``, ``chonkie.*``, ``semchunk``)
shows what the framework produced, so its nodes say how their span was found
(``span_status``, on every engine node and no native one). An ``exact`` node is
the slice; a ``rewritten`` one has a valid span and the framework's text; an
``unplaced`` one an empty span. What the framework decides is not held against
the engine: an empty chunk (LlamaIndex gives one for an empty text), a chunk over
its own chunk_size or a larger overlap (chonkie keeps a long sentence whole), and
text it drops (LangChain's stripped Markdown headers: coverage is checked unless
the engine's ``covers_text`` says so). tests/test_engines.py checks those
chunks against the framework called directly.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from strategies import table_documents, texts

from core.engines import FrameworkSplitter
from core.errors import ConfigError
from core.params import ParamSpec
from core.schema import Document, Node, NodeRelationship
from core.spans.recovery import SPAN_STATUS_KEY
from core.splitters import SPLITTERS, get_splitter
from core.splitters.base import Splitter
from core.splitters.pieces import protected_cuts
from core.splitters.semantic import embedder_override
from core.tokens.tokenizers import TIKTOKEN_TOKENIZERS, get_tokenizer

# Tokenizers whose tokens depend on their neighbours (a slice re-tokenizes differently): sized from the document's.
IN_CONTEXT = ("model", *TIKTOKEN_TOKENIZERS)

SPLITTER_CLASSES = list(SPLITTERS)
METADATA = {"file_name": "p"}


def fake_embed(texts: list[str]) -> np.ndarray:
    """Deterministic vectors from hashed character trigrams: similar texts get similar vectors."""
    vectors = np.zeros((len(texts), 64))
    for row, text in enumerate(texts):
        padded = f"  {text.lower()}  "
        for i in range(len(padded) - 2):
            digest = hashlib.blake2b(padded[i : i + 3].encode("utf-8", "surrogatepass"), digest_size=2).digest()
            vectors[row, int.from_bytes(digest, "big") % 64] += 1.0
        vectors[row, 0] += 1e-3  # never an all-zero row
    return vectors


def value_strategy(spec: ParamSpec) -> st.SearchStrategy[Any]:
    """Values inside the declared bounds; numbers are drawn small so short texts make several chunks."""
    if spec.kind == "bool":
        strategy: st.SearchStrategy[Any] = st.booleans()
    elif spec.kind == "choice":
        strategy = st.sampled_from(spec.choices or (spec.default,))
    elif spec.kind in ("int", "int_list"):
        low = int(spec.ge) if spec.ge is not None else 0
        high = int(spec.le) if spec.le is not None else low + 100
        number = st.one_of(st.integers(low, min(high, low + 10)), st.integers(low, min(high, low + 100)))
        if spec.kind == "int":
            strategy = number
        else:  # size ladders (e.g. per level) are listed largest first
            strategy = st.lists(number, min_size=1, max_size=3).map(lambda xs: tuple(sorted(xs, reverse=True)))
    elif spec.kind == "float":
        low = float(spec.ge) if spec.ge is not None else 0.0
        high = float(spec.le) if spec.le is not None else low + 100.0
        strategy = st.floats(low, min(high, low + 100.0), allow_nan=False)
    else:  # free text and string lists keep their defaults: their valid values are not enumerable
        strategy = st.just(spec.default)
    if spec.optional and spec.default is not None:
        strategy = st.one_of(st.none(), strategy)
    elif spec.optional:
        strategy = st.one_of(st.just(None), strategy)
    return strategy


def params_for(cls: type[Splitter]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({spec.name: value_strategy(spec) for spec in cls.params()})


def build(cls: type[Splitter], params: dict[str, Any]) -> Splitter:
    try:
        splitter = cls.from_params(params)
    except ConfigError:
        reject()  # a cross-field rule (e.g. overlap below size) ruled these values out
    with_embedder = getattr(splitter, "with_embedder", None)
    return with_embedder(fake_embed) if with_embedder else splitter


def split(splitter: Splitter, document: Document) -> list[Node]:
    try:
        with embedder_override(fake_embed):  # the engines that embed have no with_embedder hook
            return splitter.split([document])
    except ConfigError:
        reject()  # e.g. the metadata leaves no room in a tiny chunk_size


class Sizes:
    """Sizes of spans in a splitter's units.

    Characters and words are counted on the node's text. Model and tiktoken
    tokens are counted as the document's tokens that lie wholly inside the span:
    a slice that starts inside a word re-tokenizes differently, and the
    document's own tokens are what a window of tokens is made of.
    """

    def __init__(self, unit: str, document: Document) -> None:
        self.unit = unit
        self.text = document.text
        self.tokenizer = get_tokenizer(unit)
        if unit in IN_CONTEXT:
            tokens = self.tokenizer.spans(self.text)
            self.starts = [start for start, _ in tokens]
            self.ends = [end for _, end in tokens]

    def __call__(self, start: int, end: int) -> int:
        if self.unit not in IN_CONTEXT:
            return self.tokenizer.count(self.text[start:end])
        return max(bisect_right(self.ends, end) - bisect_left(self.starts, start), 0)


def indivisible(splitter: Splitter, document: Document, start: int, end: int, sizes: Sizes) -> bool:
    """One word, one model token, (part of) one table row, or one piece between the splitter's separators."""
    text = document.text[start:end]
    if len(text.split()) <= 1:
        return True
    separator = getattr(splitter, "separator", None)
    # A piece keeps the separator that ends it ("1 0" is one piece for separator "0").
    if isinstance(separator, str) and separator and separator not in text.removesuffix(separator):
        return True
    if sizes.unit in IN_CONTEXT and sizes(start, end) <= 1:
        return True
    guard = protected_cuts(document)
    return any(row_start <= start and end <= row_end for row_start, row_end in guard.spans)


def chains(nodes: list[Node]) -> list[list[Node]]:
    """The PREVIOUS/NEXT chains, each from its head; checks the links agree both ways."""
    by_id = {node.id: node for node in nodes}
    assert len(by_id) == len(nodes), "node ids are not unique"
    found = []
    seen: set[str] = set()
    for head in nodes:
        if NodeRelationship.PREVIOUS in head.relationships:
            continue
        chain = [head]
        while (next_id := chain[-1].relationships.get(NodeRelationship.NEXT)) is not None:
            follower = by_id[next_id]
            assert follower.relationships.get(NodeRelationship.PREVIOUS) == chain[-1].id
            chain.append(follower)
            assert len(chain) <= len(nodes), "the NEXT links form a cycle"
        seen.update(node.id for node in chain)
        found.append(chain)
    assert seen == set(by_id), "some nodes are on no chain (a cycle, or a PREVIOUS with no head)"
    return found


def check_invariants(splitter: Splitter, document: Document, nodes: list[Node]) -> None:
    text = document.text
    for node in nodes:
        status = node.metadata.get(SPAN_STATUS_KEY, "exact")
        if status == "exact":
            assert node.text == text[node.start_char : node.end_char]
        else:  # a framework engine's rewritten or unplaced chunk: its own text, a valid span
            assert status in ("rewritten", "unplaced") and 0 <= node.start_char <= node.end_char <= len(text)
            assert status == "rewritten" or node.start_char == node.end_char
        assert node.text or SPAN_STATUS_KEY in node.metadata, "empty node"
        assert node.doc_id == document.id
        assert node.relationships[NodeRelationship.SOURCE] == document.id
        for key, value in document.metadata.items():
            if splitter.include_metadata:
                assert node.metadata[key] == value
            else:
                assert key not in node.metadata

    # Coverage: every non-whitespace character is in some node (unless the splitter drops text on purpose).
    depth = [0] * (len(text) + 1)
    for node in nodes:
        depth[node.start_char] += 1
        depth[node.end_char] -= 1
    running = 0
    # Held for the engines too: span recovery places each chunk where it continues the one before, never on a
    # nearer copy of a repeated passage past a gap.
    covers = getattr(splitter, "covers_text", True)
    for i, char in enumerate(text):
        running += depth[i]
        assert running > 0 or char.isspace() or not covers, f"character {i} ({char!r}) is in no node"

    hierarchy = any(
        NodeRelationship.PARENT in node.relationships or NodeRelationship.CHILD in node.relationships for node in nodes
    )
    if splitter.include_prev_next_rel:
        linked = chains(nodes)
        if not hierarchy:
            assert len(linked) <= 1 and (not nodes or linked[0] == nodes), "a flat splitter's nodes are one chain"
    else:
        linked = [[node] for node in nodes]
        for node in nodes:
            assert NodeRelationship.PREVIOUS not in node.relationships
            assert NodeRelationship.NEXT not in node.relationships
    sequences = linked if hierarchy else [nodes]
    for sequence in sequences:
        starts = [node.start_char for node in sequence]
        assert starts == sorted(starts), "starts go backwards"

    limit, overlap = splitter.size_limit, splitter.overlap_limit
    if limit is None and overlap is None:
        return
    sizes = Sizes(splitter.size_unit, document)
    # A framework engine's sizes are the framework's (checked against it in test_engines.py).
    sequences = [[node for node in sequence if SPAN_STATUS_KEY not in node.metadata] for sequence in sequences]
    if limit is not None:
        for node in (node for sequence in sequences for node in sequence):
            size = sizes(node.start_char, node.end_char)
            assert size <= limit or indivisible(splitter, document, node.start_char, node.end_char, sizes), (
                f"node of {size} {sizes.unit} over the limit {limit}: {node.text!r}"
            )
    if overlap is not None:
        for sequence in sequences:
            for before, after in zip(sequence, sequence[1:], strict=False):
                if after.start_char < before.end_char:
                    shared = sizes(after.start_char, min(before.end_char, after.end_char))
                    assert shared <= overlap, f"consecutive nodes share {shared} {sizes.unit}, limit {overlap}"


@pytest.mark.parametrize("cls", SPLITTER_CLASSES, ids=lambda cls: cls.name)
def test_invariants_on_random_text(cls: type[Splitter]) -> None:
    @given(text=texts(), params=params_for(cls))
    def run(text: str, params: dict[str, Any]) -> None:
        splitter = build(cls, params)
        document = Document(text=text, metadata=dict(METADATA))
        nodes = split(splitter, document)
        check_invariants(splitter, document, nodes)
        again = split(splitter, Document(text=text, metadata=dict(METADATA)))
        assert [node.to_dict() for node in again] == [node.to_dict() for node in nodes], "not deterministic"

    run()


@pytest.mark.parametrize("cls", SPLITTER_CLASSES, ids=lambda cls: cls.name)
def test_invariants_on_tables(cls: type[Splitter]) -> None:
    @given(document=table_documents(), params=params_for(cls))
    def run(document: Document, params: dict[str, Any]) -> None:
        splitter = build(cls, params)
        nodes = split(splitter, document)
        check_invariants(splitter, document, nodes)
        # A compatible mode (compat="llamaindex"/"langchain") cuts rows as the framework does.
        if cls.keeps_table_rows and getattr(splitter, "compat", "none") == "none":
            guard = protected_cuts(document)
            for node in nodes:
                for cut in (node.start_char, node.end_char):
                    assert guard.allows(cut), f"{cls.name} cut inside a table row at {cut}"

    if issubclass(cls, FrameworkSplitter):
        # LlamaIndex refuses a chunk size below the metadata's length (even when it will not copy the metadata):
        # with every level's size drawn small, most of a hierarchy's drawn settings are refused.
        run = settings(suppress_health_check=[HealthCheck.filter_too_much])(run)
    run()


def test_the_splitters_that_promise_whole_rows() -> None:
    assert {"recursive", "sentence"} <= {cls.name for cls in SPLITTER_CLASSES if cls.keeps_table_rows}


def _concrete_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        if sub.__dict__.get("name"):
            found.add(sub)
        found |= _concrete_subclasses(sub)
    return found


def test_every_concrete_splitter_is_registered() -> None:
    registered = set(SPLITTER_CLASSES)
    missing = {cls.__qualname__ for cls in _concrete_subclasses(Splitter) if cls not in registered}
    assert not missing, f"splitters with a name but not in the registry: {missing}"


_URL = st.builds(
    lambda host, parts: f"https://{host}.org/" + ".".join(parts),
    st.text("abcxyz", min_size=1, max_size=6),
    st.lists(st.text("abc19", min_size=1, max_size=4), min_size=1, max_size=3),
)
_WORD = st.sampled_from(["alpha", "beta,", "gamma.", "delta;", "v1.2.3", "3,5", "[a]:"])


@given(
    parts=st.lists(st.tuples(st.one_of(_URL, _WORD), st.sampled_from([" ", "\n", ". ", ", "])), min_size=1, max_size=40),
    chunk_size=st.integers(40, 120),
    overlap=st.integers(0, 20),
    splitter=st.sampled_from(["sentence", "hierarchical"]),
)
def test_the_native_sentence_rule_never_cuts_inside_a_url_that_fits_a_chunk(parts, chunk_size, overlap, splitter):
    text = "".join(word + gap for word, gap in parts)
    urls = [(start, start + len(word)) for start, (word, gap) in _starts(parts) if word.startswith("https://")]
    params = {"chunk_sizes": (chunk_size * 2, chunk_size)} if splitter == "hierarchical" else {"chunk_size": chunk_size}
    built = get_splitter(splitter, tokenizer="characters", chunk_overlap=overlap, **params)
    nodes = built.split([Document(text=text)])
    for node in nodes:
        for cut in (node.start_char, node.end_char):
            assert not any(start < cut < end for start, end in urls), (cut, text)


def _starts(parts):
    at = 0
    for word, gap in parts:
        yield at, (word, gap)
        at += len(word) + len(gap)
