"""The pairs: ChunkScope's splitter and each peer's, configured for the same algorithm and size unit.

A *group* is one algorithm at one setting; its first contestant is ChunkScope's,
the rest are peers. Each contestant is built once from the input text
(:func:`Contestant.prepare`, untimed) and returns a zero-argument callable that
does the timed work and returns the chunk texts. ChunkScope is timed through
``Splitter.split([document])``, i.e. it builds full nodes (spans, metadata,
relationships); every peer is timed through its lightest call that returns
chunks (``split_text`` / ``chunk`` / ``chunks``), which favours the peers.

Token-sized contestants all count with one tokenizer: the packaged model's
``tokenizer.json`` (all-MiniLM-L6-v2's WordPiece), without truncation or
special tokens, which is what ChunkScope's ``model`` tokenizer uses.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
MB = 1_000_000

Run = Callable[[], list[str]]


@lru_cache(maxsize=1)
def hf_tokenizer():  # noqa: ANN201 - tokenizers.Tokenizer
    """The packaged model's tokenizer, as every token-sized contestant gets it."""
    from tokenizers import Tokenizer

    from core.tokenizers import default_model_path

    tokenizer = Tokenizer.from_file(os.path.join(default_model_path(), "tokenizer.json"))
    # tokenizer.json carries the model's 128-token truncation; counting must see whole texts.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def token_ids(text: str) -> list[int]:
    return hf_tokenizer().encode(text, add_special_tokens=False).ids


def token_counts(texts: list[str]) -> list[int]:
    return [len(e.ids) for e in hf_tokenizer().encode_batch(texts, add_special_tokens=False)]


def read_input(source: str, mb: float) -> str:
    """The first ``mb`` MB of ``data/<source>`` (cut at a paragraph break), repeated if the file is shorter."""
    text = (DATA / source).read_text(encoding="utf-8")
    want = int(mb * MB)
    if len(text) < want:
        text = (text * (want // len(text) + 1))
    if len(text) > want:
        cut = text.rfind("\n\n", 0, want)
        text = text[: cut if cut > want // 2 else want]
    return text


@dataclass(frozen=True)
class Contestant:
    label: str
    library: str
    build: Callable[[str], Run]

    def prepare(self, text: str) -> Run:
        return self.build(text)


@dataclass(frozen=True)
class Group:
    key: str
    title: str
    unit: str  # "characters" or "tokens": what the chunk sizes are reported in
    source: str  # file in benchmarks/data
    mb: float  # default input size
    contestants: tuple[Contestant, ...]
    # How fast ChunkScope must be against the fastest peer (the target).
    target_ratio: float = 1.0
    notes: tuple[str, ...] = field(default=())

    @property
    def ours(self) -> Contestant:
        return self.contestants[0]

    @property
    def peers(self) -> tuple[Contestant, ...]:
        return self.contestants[1:]

    def contestant(self, label: str) -> Contestant:
        return next(c for c in self.contestants if c.label == label)


# -- ChunkScope -------------------------------------------------------------------


def chunkscope(name: str, **params: object) -> Callable[[str], Run]:
    def build(text: str) -> Run:
        from core.schema import Document
        from core.segmentation import reuse_sentence_spans
        from core.splitters import get_splitter
        from core.splitters.fast.token_index import reuse_token_indexes

        # Every timed split pays for its own tokenizer pass and sentence segmentation, as a peer's
        # does: the app's reuse of a text's token index and sentence cuts across splits would
        # otherwise skip them after the warm-up.
        reuse_token_indexes(False)
        reuse_sentence_spans(False)
        splitter = get_splitter(name, **params)
        document = Document(text=text, metadata={"file_name": "corpus.txt"})
        # Load lazily-built state (the model tokenizer) outside the timing.
        splitter.split([Document(text="Warm up. " * 50)])
        return lambda: [node.text for node in splitter.split([document])]

    return build


# -- peers ---------------------------------------------------------------------


def langchain_recursive(text: str) -> Run:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
    return lambda: splitter.split_text(text)


def langchain_character(text: str) -> Run:
    from langchain_text_splitters import CharacterTextSplitter

    splitter = CharacterTextSplitter(separator="\n\n", chunk_size=1000, chunk_overlap=200)
    return lambda: splitter.split_text(text)


def langchain_markdown_headers(text: str) -> Run:
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    headers = [("#" * level, f"header_{level}") for level in range(1, 7)]
    splitter = MarkdownHeaderTextSplitter(headers, strip_headers=False)
    return lambda: [d.page_content for d in splitter.split_text(text)]


def semchunk_recursive(text: str) -> Run:
    import semchunk

    return lambda: semchunk.chunk(text, chunk_size=1000, token_counter=len, overlap=200)


def chonkie_recursive(text: str) -> Run:
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(tokenizer="character", chunk_size=1000)
    return lambda: [c.text for c in chunker.chunk(text)]


def chonkie_token(text: str) -> Run:
    from chonkie import TokenChunker

    chunker = TokenChunker(tokenizer=hf_tokenizer(), chunk_size=256, chunk_overlap=20)
    return lambda: [c.text for c in chunker.chunk(text)]


def text_splitter_characters(text: str) -> Run:
    from semantic_text_splitter import TextSplitter

    splitter = TextSplitter(1000, overlap=200)
    return lambda: splitter.chunks(text)


def text_splitter_markdown(text: str) -> Run:
    from semantic_text_splitter import MarkdownSplitter

    splitter = MarkdownSplitter(1000)
    return lambda: splitter.chunks(text)


def llama_sentence(text: str) -> Run:
    from llama_index.core.node_parser import SentenceSplitter

    splitter = SentenceSplitter(chunk_size=256, chunk_overlap=20, tokenizer=token_ids)
    return lambda: splitter.split_text(text)


def llama_token(text: str) -> Run:
    from llama_index.core.node_parser import TokenTextSplitter

    splitter = TokenTextSplitter(chunk_size=256, chunk_overlap=20, tokenizer=token_ids)
    return lambda: splitter.split_text(text)


def llama_markdown(text: str) -> Run:
    from llama_index.core import Document
    from llama_index.core.node_parser import MarkdownNodeParser

    parser = MarkdownNodeParser()
    document = Document(text=text)
    return lambda: [n.get_content() for n in parser.get_nodes_from_documents([document])]


GROUPS: tuple[Group, ...] = (
    Group(
        "recursive",
        "Recursive, 1000/200 characters",
        "characters",
        "corpus.txt",
        4,
        (
            Contestant("ChunkScope recursive", "chunkscope", chunkscope("recursive", chunk_size=1000, chunk_overlap=200)),
            Contestant("LangChain RecursiveCharacterTextSplitter", "langchain-text-splitters", langchain_recursive),
            Contestant("semchunk", "semchunk", semchunk_recursive),
            Contestant("chonkie RecursiveChunker", "chonkie", chonkie_recursive),
            Contestant("semantic-text-splitter TextSplitter", "semantic-text-splitter", text_splitter_characters),
        ),
        notes=("chonkie's RecursiveChunker has no overlap parameter; it runs 1000/0.",),
    ),
    Group(
        "character",
        "Character (blank lines), 1000/200 characters",
        "characters",
        "corpus.txt",
        4,
        (
            Contestant(
                "ChunkScope character", "chunkscope", chunkscope("character", chunk_size=1000, chunk_overlap=200)
            ),
            Contestant("LangChain CharacterTextSplitter", "langchain-text-splitters", langchain_character),
        ),
    ),
    Group(
        "sentence",
        "Sentence, 256/20 model tokens",
        "tokens",
        "corpus.txt",
        1,
        (
            Contestant(
                "ChunkScope sentence",
                "chunkscope",
                chunkscope("sentence", chunk_size=256, chunk_overlap=20, tokenizer="model"),
            ),
            Contestant("LlamaIndex SentenceSplitter", "llama-index-core", llama_sentence),
        ),
        target_ratio=5.0,
    ),
    Group(
        "token",
        "Token windows, 256/20 model tokens",
        "tokens",
        "corpus.txt",
        1,
        (
            Contestant(
                "ChunkScope token", "chunkscope", chunkscope("token", chunk_size=256, chunk_overlap=20, tokenizer="model")
            ),
            Contestant("chonkie TokenChunker", "chonkie", chonkie_token),
            Contestant("LlamaIndex TokenTextSplitter", "llama-index-core", llama_token),
        ),
    ),
    Group(
        "markdown",
        "Markdown sections (every heading level)",
        "characters",
        "corpus.md",
        2,
        (
            Contestant("ChunkScope markdown", "chunkscope", chunkscope("markdown")),
            Contestant("LangChain MarkdownHeaderTextSplitter", "langchain-text-splitters", langchain_markdown_headers),
            Contestant("LlamaIndex MarkdownNodeParser", "llama-index-core", llama_markdown),
        ),
        notes=(
            "ChunkScope finds the headings CommonMark (markdown-it) finds: none inside code fences, setext"
            " headings too; a line scanner does the plain parts and markdown-it the rest. The peers scan lines for '#'.",
        ),
    ),
    Group(
        "markdown_sized",
        "Markdown, sections cut to at most 1000 characters",
        "characters",
        "corpus.md",
        2,
        (
            Contestant("ChunkScope markdown (chunk_size 1000)", "chunkscope", chunkscope("markdown", chunk_size=1000)),
            Contestant("semantic-text-splitter MarkdownSplitter", "semantic-text-splitter", text_splitter_markdown),
        ),
        notes=("semantic-text-splitter packs Markdown by its own semantic levels rather than one node per section.",),
    ),
)


def group(key: str) -> Group:
    return next(g for g in GROUPS if g.key == key)
