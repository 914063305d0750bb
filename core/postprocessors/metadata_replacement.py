"""Metadata replacement: swap a node's text for one of its metadata values (the sentence window)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from core.params import param
from core.postprocessors.base import Outcome, PostprocessContext, Postprocessor, with_text
from core.postprocessors.registry import POSTPROCESSORS
from core.schema import NodeWithScore
from core.translate.snippet import LLAMAINDEX_POSTPROCESSOR, CodeSnippet, call, comment, literal


@POSTPROCESSORS.register
@dataclass(frozen=True)
class MetadataReplacementPostprocessor(Postprocessor):
    """As LlamaIndex's MetadataReplacementPostProcessor.

    A node whose metadata holds ``target_metadata_key`` gets that value as its
    text (sentence-window retrieval: match on one sentence, read the window);
    a node without the key is passed through unchanged.
    """

    name = "metadata_replacement"
    summary = "Replace each node's text with a metadata value, e.g. the sentence window."

    target_metadata_key: str = param("window", "The metadata key whose value becomes the node's text.")

    def missing_input_reason(self, metadata_keys: Collection[str]) -> str | None:
        key = self.target_metadata_key
        if key in metadata_keys:
            return None
        from core.splitters import SPLITTERS

        # The splitters that put a window on every node (their class says so), e.g. sentence_window.
        windowed = [cls.name for cls in SPLITTERS if cls.has_windows]
        fix = f"split with {' or '.join(windowed)}, or " if windowed else ""
        return f"no node carries the {key!r} metadata key, so every text stays as it was ({fix}name a key they carry)"

    def llamaindex(self, code: CodeSnippet) -> str | None:
        code.use(LLAMAINDEX_POSTPROCESSOR + "MetadataReplacementPostProcessor")
        return call("MetadataReplacementPostProcessor", target_metadata_key=self.target_metadata_key)

    def langchain(self, code: CodeSnippet) -> list[str]:
        key = self.target_metadata_key
        return [
            comment(f"metadata replacement: the node's text becomes its {literal(key)} metadata where present", "    "),
            f"    results = [Document(page_content=r.metadata.get({literal(key)}, r.metadata['text']), metadata=r.metadata)"
            " for r in results]",
        ]

    def run(self, nodes: list[NodeWithScore], query: str, context: PostprocessContext | None = None) -> Outcome:
        outcome = Outcome(nodes=[])
        key = self.target_metadata_key
        if nodes and not any(key in item.node.metadata for item in nodes):
            outcome.idle_reason = self.missing_input_reason(())
        for item in nodes:
            if key in item.node.metadata:
                replacement = str(item.node.metadata[key])
                outcome.nodes.append(with_text(item, replacement))
                if replacement != item.node.text:
                    outcome.changed[item.id] = f"its text was replaced by metadata['{key}']"
            else:
                outcome.nodes.append(item)
        return outcome
