"""Sentence window: one node per sentence, the sentences around it in metadata.

As LlamaIndex's SentenceWindowNodeParser: retrieval matches single sentences,
and a postprocessor (metadata replacement) later swaps in the wider window for
the LLM. Neither the window nor the original sentence is shown to the LLM or
the embedding model as metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import ConfigError
from core.params import param
from core.schema import Document, Node
from core.splitters.base import Span, Splitter
from core.splitters.compat import LLAMAINDEX, compat_param, mirror_engine, refuse_unmirrored
from core.splitters.registry import SPLITTERS
from core.tokens.segmentation import punkt_sentence_starts, sentence_spans
from core.translate.snippet import CodeSnippet, call, literal


@SPLITTERS.register
@dataclass(frozen=True)
class SentenceWindowSplitter(Splitter):
    """One node per sentence; ``window`` holds the neighbouring sentences.

    The window is the source slice from the first window sentence's start to
    the last one's end (LlamaIndex joins the sentences with spaces instead), so
    it reads exactly as the document does.

    ``compat="llamaindex"`` cuts as LlamaIndex's SentenceWindowNodeParser does:
    sentences from an untrained Punkt tokenizer, each running from one sentence
    start to the next (so a node keeps its trailing whitespace), and the window is
    the window's sentences joined with spaces. A node's text is still its source slice.
    """

    name = "sentence_window"
    summary = "One node per sentence, with the surrounding sentences in metadata for the LLM."
    has_windows = True

    window_size: int = param(
        3,
        "Sentences on each side of a node's sentence that its window holds (the window is the exact source "
        "slice; LlamaIndex joins the sentences with spaces).",
        ge=0,
        le=100,
    )
    window_metadata_key: str = param("window", "Metadata key for the window text.", advanced=True)
    original_text_metadata_key: str = param("original_text", "Metadata key for the node's own sentence.", advanced=True)
    compat: str = compat_param(LLAMAINDEX, sets="llamaindex: Punkt sentences with trailing whitespace, windows joined")

    def validate(self) -> None:
        for key in ("window_metadata_key", "original_text_metadata_key"):
            if not getattr(self, key).strip():
                raise ConfigError(f"{self.name}: {key} must not be empty")
        if self.window_metadata_key == self.original_text_metadata_key:
            raise ConfigError(
                f"{self.name}: window_metadata_key and original_text_metadata_key must differ "
                f"(both are {self.window_metadata_key!r})"
            )
        refuse_unmirrored(self, (self.window_size == 0, "takes a window as LlamaIndex does", "window_size=0"))

    def spans(self, document: Document) -> list[Span]:
        text = document.text
        if self.compat == LLAMAINDEX:
            return self._llamaindex_spans(text)
        sentences = sentence_spans(text)
        last = len(sentences) - 1
        spans = []
        for i, (start, end) in enumerate(sentences):
            window_start = sentences[max(i - self.window_size, 0)][0]
            window_end = sentences[min(i + self.window_size, last)][1]
            metadata = {
                self.window_metadata_key: text[window_start:window_end],
                self.original_text_metadata_key: text[start:end],
            }
            spans.append(Span(start, end, metadata))
        return spans

    def _llamaindex_spans(self, text: str) -> list[Span]:
        starts = punkt_sentence_starts(text)
        if not starts:  # an empty text: no sentence, no node (as LlamaIndex)
            return []
        bounds = list(zip(starts, [*starts[1:], len(text)], strict=True))
        sentences = [text[start:end] for start, end in bounds]
        spans = []
        for i, (start, end) in enumerate(bounds):
            window = " ".join(sentences[max(i - self.window_size, 0) : i + self.window_size + 1])
            metadata = {self.window_metadata_key: window, self.original_text_metadata_key: sentences[i]}
            spans.append(Span(start, end, metadata))
        return spans

    @property
    def view_hidden_keys(self) -> tuple[str, ...]:
        return (self.window_metadata_key, self.original_text_metadata_key)

    def split_document(self, document: Document) -> list[Node]:
        nodes = super().split_document(document)
        hidden = self.view_hidden_keys
        for node in nodes:
            for excluded in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
                excluded.extend(key for key in hidden if key not in excluded)
        return nodes

    def mirror(self) -> Any:
        return mirror_engine(
            self,
            "llamaindex.sentence_window",
            window_size=self.window_size,
            window_metadata_key=self.window_metadata_key,
            original_text_metadata_key=self.original_text_metadata_key,
        )

    def llamaindex(self, code: CodeSnippet) -> str:
        code.use("from llama_index.core.node_parser import SentenceWindowNodeParser")
        code.note("sentence_window: LlamaIndex finds sentences with NLTK's punkt; ChunkScope uses blingfire.")
        return call(
            "SentenceWindowNodeParser.from_defaults",
            window_size=self.window_size,
            window_metadata_key=self.window_metadata_key,
            original_text_metadata_key=self.original_text_metadata_key,
        )

    def langchain(self, code: CodeSnippet) -> str:
        code.use("import re", "from langchain_core.documents import Document")
        code.note(
            "sentence_window: LangChain has no sentence-window splitter; a short function below makes one chunk per "
            "sentence with the surrounding sentences in metadata (sentences found by a simple regex).",
            at_call=True,
        )
        window, window_key, original_key = self.window_size, self.window_metadata_key, self.original_text_metadata_key
        return "\n".join(
            [
                "def sentence_windows(document: Document) -> list[Document]:",
                '    sentences = [s for s in re.split(r"(?<=[.!?])\\s+|\\n\\s*\\n", document.page_content) if s.strip()]',
                "    out = []",
                "    for i, sentence in enumerate(sentences):",
                f'        window = " ".join(sentences[max(0, i - {literal(window)}) : i + {literal(window)} + 1])',
                f"        metadata = {{**document.metadata, {literal(window_key)}: window, {literal(original_key)}: sentence}}",
                "        out.append(Document(page_content=sentence, metadata=metadata))",
                "    return out",
                "",
                "",
                "chunks = [chunk for document in documents for chunk in sentence_windows(document)]",
            ]
        )
