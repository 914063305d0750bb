"""The groups: ChunkScope's splitter and every peer doing the same job at the same size unit.

A *group* is one algorithm at one setting; its first contestant is ChunkScope's,
the rest are peers (and, for token-sized splitting, the physical floor). A
contestant's ``build()`` does the untimed set-up (construct the splitter, load a
tokenizer) and returns its *split*: the timed callable, which takes a file's text
as a ``str`` and returns the chunk texts. Every contestant starts from that same
``str``: ChunkScope's split builds its ``Document`` (and so its id, a hash of the
whole text) inside the timed call, then ``Splitter.split([document])`` builds full
nodes (spans, metadata, relationships); every peer is called through its lightest
call that returns chunks (``split_text`` / ``chunk`` / ``chunks``).

Token-sized contestants all count with one tokenizer: the packaged model's
``tokenizer.json`` (all-MiniLM-L6-v2's WordPiece), without truncation or special
tokens, which is what ChunkScope's ``model`` tokenizer uses. Every peer runs
single-threaded (``TOKENIZERS_PARALLELISM=false``); a contestant that uses more
threads (ChunkScope's tokenizer pool, :mod:`core.tokens.threads`) says so in
``threads``, and the report compares it per CPU second as well as per wall second.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
# One document per file, in corpus order (benchmarks/corpus.py): what users load.
FILES = DATA / "files.json"
MB = 1_000_000

Split = Callable[[str], list[str]]


@lru_cache(maxsize=1)
def hf_tokenizer():  # noqa: ANN201 - tokenizers.Tokenizer
    """The packaged model's tokenizer, as every token-sized contestant gets it."""
    from tokenizers import Tokenizer

    from core.tokens.tokenizers import default_model_path

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


def read_files(source: str, mb: float) -> list[str]:
    """The per-file corpus: whole documents of ``source``'s kind, in corpus order, until they hold ``mb`` MB.

    ``corpus.md`` takes the Markdown documents, ``corpus.txt`` all of them; a
    document is never cut, so the last one may pass the size a little.
    """
    documents = json.loads(FILES.read_text(encoding="utf-8"))
    kind = "markdown" if source.endswith(".md") else "text"
    picked, size = [], 0
    for text in documents[kind]:
        if size >= mb * MB:
            break
        picked.append(text)
        size += len(text.encode("utf-8"))
    return picked


# The corpus parts every group that splits any text runs on (benchmarks/corpus_parts.py), besides one large
# document cut from corpus.txt: the verdicts are per part.
TEXT_PARTS = ("files", "rest", "non_ascii", "large_file")
TEXT_INPUTS = (*TEXT_PARTS, "large")


@dataclass(frozen=True)
class Contestant:
    label: str
    library: str
    build: Callable[[], Split]
    # Threads the timed call runs on (ChunkScope's tokenizer pool); every peer runs on one.
    threads: int = 1
    # The physical floor (tokenizing the text once), shown beside the peers but never one of them.
    floor: bool = False

    def prepare(self) -> Split:
        return self.build()


@dataclass(frozen=True)
class Group:
    key: str
    title: str
    unit: str  # "characters" or "tokens": what the chunk sizes are reported in
    source: str  # file in benchmarks/data: the large document's source, and the kind of the per-file corpus
    mb: float  # default input size (the large document; the per-file corpus holds about as much)
    contestants: tuple[Contestant, ...]
    # How fast ChunkScope must be against the fastest peer, by CPU time (the target).
    target_ratio: float = 1.0
    # The inputs timed (run.INPUTS names them): the per-file corpus and one large document for every group,
    # and for a group that splits any text the other corpus parts (reST, non-ASCII prose, one large real file).
    inputs: tuple[str, ...] = ("files", "large")
    # The inputs the target must hold on, each its own verdict: a lead that holds on one kind of text says so.
    target_inputs: tuple[str, ...] = ("files",)
    # At most this many times the floor's CPU time (token-sized splitting), when set.
    floor_ratio: float | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def ours(self) -> Contestant:
        return self.contestants[0]

    @property
    def peers(self) -> tuple[Contestant, ...]:
        return tuple(c for c in self.contestants[1:] if not c.floor)

    def contestant(self, label: str) -> Contestant:
        return next(c for c in self.contestants if c.label == label)


# -- ChunkScope -------------------------------------------------------------------


def chunkscope(name: str, **params: object) -> Callable[[], Split]:
    def build() -> Split:
        from core.schema import Document
        from core.splitters import get_splitter
        from core.tokens.segmentation import reuse_sentence_spans
        from core.tokens.token_index import reuse_token_indexes

        # Every timed split pays for its own tokenizer pass and sentence segmentation, as a peer's
        # does: the app's reuse of a text's token index and sentence cuts across splits would
        # otherwise skip them after the warm-up.
        reuse_token_indexes(False)
        reuse_sentence_spans(False)
        splitter = get_splitter(name, **params)
        # Load lazily-built state (the model tokenizer) outside the timing.
        splitter.split([Document(text="Warm up. " * 50)])

        def split(text: str) -> list[str]:
            # The Document is built here, inside the timed call: its id hashes the whole text, and a
            # peer is timed from the same str (issue 18: built outside, it flattered ChunkScope by 20-30%).
            document = Document(text=text, metadata={"file_name": "input.txt"})
            return [node.text for node in splitter.split([document])]

        return split

    return build


def model_threads() -> int:
    """Threads ChunkScope's model tokenizer may encode a large batch on (core.tokens.threads).

    At most: a text its ASCII path takes (core/tokens/wordpiece.py) is tokenized on one thread.
    """
    from core.tokens.threads import WORKERS

    return WORKERS


# -- peers ---------------------------------------------------------------------


def langchain_recursive() -> Split:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200).split_text


def langchain_character() -> Split:
    from langchain_text_splitters import CharacterTextSplitter

    return CharacterTextSplitter(separator="\n\n", chunk_size=1000, chunk_overlap=200).split_text


def langchain_markdown_headers() -> Split:
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    headers = [("#" * level, f"header_{level}") for level in range(1, 7)]
    splitter = MarkdownHeaderTextSplitter(headers, strip_headers=False)
    return lambda text: [d.page_content for d in splitter.split_text(text)]


def langchain_markdown_text() -> Split:
    from langchain_text_splitters import MarkdownTextSplitter

    return MarkdownTextSplitter(chunk_size=1000, chunk_overlap=0).split_text


def langchain_token() -> Split:
    # What LangChain's TokenTextSplitter and SentenceTransformersTokenTextSplitter run, with our tokenizer.
    from langchain_text_splitters.base import Tokenizer, split_text_on_tokens

    tokenizer = hf_tokenizer()
    windows = Tokenizer(chunk_overlap=20, tokens_per_chunk=256, decode=tokenizer.decode, encode=token_ids)
    return lambda text: split_text_on_tokens(text=text, tokenizer=windows)


def semchunk_recursive() -> Split:
    import semchunk

    # Its fastest mode with a cheap counter: memoizing len costs more than it saves (1 MB: 75 vs 63 ms).
    return lambda text: semchunk.chunk(text, chunk_size=1000, token_counter=len, memoize=False, overlap=200)


def semchunk_tokens() -> Split:
    import semchunk

    # chunkerify bounds each count by the vocabulary's longest token (its fast path); no memo, so a
    # repetition cannot reuse the counts of the one before.
    chunker = semchunk.chunkerify(hf_tokenizer(), 256, memoize=False)
    return lambda text: chunker(text, overlap=20)


def chonkie_recursive() -> Split:
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(tokenizer="character", chunk_size=1000)
    return lambda text: [c.text for c in chunker.chunk(text)]


def chonkie_recursive_tokens() -> Split:
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(tokenizer=hf_tokenizer(), chunk_size=256)
    return lambda text: [c.text for c in chunker.chunk(text)]


def chonkie_token() -> Split:
    from chonkie import TokenChunker

    chunker = TokenChunker(tokenizer=hf_tokenizer(), chunk_size=256, chunk_overlap=20)
    return lambda text: [c.text for c in chunker.chunk(text)]


def chonkie_sentence() -> Split:
    from chonkie import SentenceChunker

    chunker = SentenceChunker(tokenizer=hf_tokenizer(), chunk_size=256, chunk_overlap=20)
    return lambda text: [c.text for c in chunker.chunk(text)]


def text_splitter_characters() -> Split:
    from semantic_text_splitter import TextSplitter

    return TextSplitter(1000, overlap=200).chunks


def text_splitter_tokens() -> Split:
    from semantic_text_splitter import TextSplitter

    return TextSplitter.from_huggingface_tokenizer(hf_tokenizer(), 256, overlap=20).chunks


def text_splitter_markdown() -> Split:
    from semantic_text_splitter import MarkdownSplitter

    return MarkdownSplitter(1000).chunks


def llama_sentence() -> Split:
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(chunk_size=256, chunk_overlap=20, tokenizer=token_ids).split_text


def llama_token() -> Split:
    from llama_index.core.node_parser import TokenTextSplitter

    return TokenTextSplitter(chunk_size=256, chunk_overlap=20, tokenizer=token_ids).split_text


def llama_markdown() -> Split:
    from llama_index.core import Document
    from llama_index.core.node_parser import MarkdownNodeParser

    parser = MarkdownNodeParser()
    # Its only entry point takes Documents: built inside the timed call, as ChunkScope's are.
    return lambda text: [n.get_content() for n in parser.get_nodes_from_documents([Document(text=text)])]


def tokenize_once() -> Split:
    """The floor of token-sized splitting: the text through the same tokenizer once, paragraph by paragraph.

    One ``encode_batch`` of the paragraphs on one thread: the same tokens as one
    ``encode`` of the whole text (the tokenizer never joins across a blank line),
    and faster than it on a large text.
    """
    tokenizer = hf_tokenizer()

    def split(text: str) -> list[str]:
        tokenizer.encode_batch(text.split("\n\n"), add_special_tokens=False)
        return []  # no chunks: only the pass every token-sized splitter needs at least

    return split


def token_index_once() -> Split:
    """The same floor through ChunkScope's model tokenizer: the text's token index, built afresh.

    Its ASCII path (``core/tokens/wordpiece.py``) gives the Rust tokenizer's tokens sooner,
    so the floor of a splitter counting with it is this pass, not ``encode_batch``.
    """
    from core.tokens.token_index import TokenIndex
    from core.tokens.tokenizers import get_tokenizer

    tokenizer = get_tokenizer("model")

    def split(text: str) -> list[str]:
        TokenIndex(tokenizer, text)
        return []

    return split


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
            Contestant("semchunk (memoize off)", "semchunk", semchunk_recursive),
            Contestant("chonkie RecursiveChunker", "chonkie", chonkie_recursive),
            Contestant("semantic-text-splitter TextSplitter", "semantic-text-splitter", text_splitter_characters),
        ),
        target_ratio=1.3,
        inputs=TEXT_INPUTS,
        target_inputs=TEXT_PARTS,
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
        target_ratio=1.3,
        inputs=TEXT_INPUTS,
        target_inputs=TEXT_PARTS,
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
                threads=model_threads(),
            ),
            Contestant("LlamaIndex SentenceSplitter", "llama-index-core", llama_sentence),
            Contestant("chonkie SentenceChunker", "chonkie", chonkie_sentence),
        ),
        target_ratio=2.0,
        inputs=TEXT_INPUTS,
        target_inputs=TEXT_PARTS,
    ),
    Group(
        "token",
        "Token-sized, 256/20 model tokens",
        "tokens",
        "corpus.txt",
        1,
        (
            Contestant(
                "ChunkScope token", "chunkscope", chunkscope("token", chunk_size=256, chunk_overlap=20, tokenizer="model"),
                threads=model_threads(),
            ),
            Contestant("chonkie TokenChunker", "chonkie", chonkie_token),
            Contestant("chonkie RecursiveChunker (256 tokens)", "chonkie", chonkie_recursive_tokens),
            Contestant("LangChain token windows (split_text_on_tokens)", "langchain-text-splitters", langchain_token),
            Contestant("LlamaIndex TokenTextSplitter", "llama-index-core", llama_token),
            Contestant("semchunk (256 tokens, memoize off)", "semchunk", semchunk_tokens),
            Contestant("semantic-text-splitter TextSplitter (256 tokens)", "semantic-text-splitter", text_splitter_tokens),
            Contestant("floor, the library's: the text tokenized once by tokenizers' encode_batch (its paragraphs)",
                       "tokenizers", tokenize_once, floor=True),
            Contestant("floor, ChunkScope's: the text tokenized once into ChunkScope's token index", "chunkscope",
                       token_index_once, threads=model_threads(), floor=True),
        ),
        floor_ratio=1.3,
        inputs=TEXT_INPUTS,
        target_inputs=TEXT_PARTS,
        notes=(
            "Token windows (ChunkScope, chonkie TokenChunker, LangChain, LlamaIndex) and token-sized recursive splitting"
            " (chonkie RecursiveChunker, no overlap parameter: 256/0; semchunk; semantic-text-splitter) do the same job"
            " at the same unit: chunks of at most 256 model tokens.",
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
        target_ratio=1.3,
        target_inputs=("files", "large"),
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
            Contestant("LangChain MarkdownTextSplitter", "langchain-text-splitters", langchain_markdown_text),
            Contestant("semantic-text-splitter MarkdownSplitter", "semantic-text-splitter", text_splitter_markdown),
        ),
        notes=(
            "semantic-text-splitter packs Markdown by its own semantic levels, LangChain's MarkdownTextSplitter is its"
            " recursive splitter with Markdown separators (1000/0), rather than one node per section.",
        ),
    ),
)


def group(key: str) -> Group:
    return next(g for g in GROUPS if g.key == key)
