"""Keyword filter: nodes must hold every required phrase and none of the excluded ones."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.params import param
from core.postprocessors.base import Outcome, PostprocessContext, Postprocessor
from core.postprocessors.registry import POSTPROCESSORS
from core.schema import NodeWithScore
from core.translate.snippet import LLAMAINDEX_POSTPROCESSOR, CodeSnippet, call, literal


@POSTPROCESSORS.register
@dataclass(frozen=True)
class KeywordPostprocessor(Postprocessor):
    """As LlamaIndex's KeywordNodePostprocessor, matching whole words and phrases case-insensitively.

    A keyword matches where its words occur in order, separated by any
    whitespace, and not inside a longer word: "chunk" matches "Chunk sizes" but
    not "chunking"; "chunk size" matches "chunk\\nsize".
    """

    name = "keyword"
    summary = "Keep nodes that contain all required keywords and none of the excluded ones."

    required_keywords: tuple[str, ...] = param((), "Words or phrases a node must contain (all of them).")
    exclude_keywords: tuple[str, ...] = param((), "Words or phrases a node must not contain (any of them drops it).")

    def idle_reason(self) -> str | None:
        if any(k.strip() for k in (*self.required_keywords, *self.exclude_keywords)):
            return None
        return "no required or excluded keyword is set, so every node is kept"

    @classmethod
    def starting_values(cls, query: str) -> dict[str, Any]:
        """Require the query's longest word (ties: the first), so the filter does something at once."""
        words = [w for w in re.findall(r"\w+", query) if len(w) >= 4 and not w.isdigit()]
        return {"required_keywords": (max(words, key=len),)} if words else {}

    def llamaindex(self, code: CodeSnippet) -> str | None:
        code.use(LLAMAINDEX_POSTPROCESSOR + "KeywordNodePostprocessor")
        code.note(
            "keyword: KeywordNodePostprocessor needs spaCy and matches substrings; ChunkScope matches whole words."
        )
        return call(
            "KeywordNodePostprocessor",
            required_keywords=list(self.required_keywords),
            exclude_keywords=list(self.exclude_keywords),
        )

    def langchain(self, code: CodeSnippet) -> list[str]:
        code.use("import re")
        required, excluded = list(self.required_keywords), list(self.exclude_keywords)
        return [
            "    # keyword filter (LangChain has none built in): whole words, case-insensitive",
            "    def _has(text: str, word: str) -> bool:",
            "        return re.search(r'(?<!\\w)' + re.escape(word) + r'(?!\\w)', text, re.IGNORECASE) is not None",
            f"    results = [r for r in results if all(_has(r.metadata['text'], w) for w in {literal(required)})",
            f"               and not any(_has(r.metadata['text'], w) for w in {literal(excluded)})]",
        ]

    def run(self, nodes: list[NodeWithScore], query: str, context: PostprocessContext | None = None) -> Outcome:
        required = [(keyword, phrase_pattern(keyword)) for keyword in self.required_keywords if keyword.strip()]
        excluded = [(keyword, phrase_pattern(keyword)) for keyword in self.exclude_keywords if keyword.strip()]
        outcome = Outcome(nodes=[])
        for item in nodes:
            text = item.node.text
            missing = [keyword.strip() for keyword, pattern in required if not pattern.search(text)]
            present = [keyword.strip() for keyword, pattern in excluded if pattern.search(text)]
            if missing:
                outcome.dropped[item.id] = f"it lacks the required {_keywords(missing)}"
            elif present:
                outcome.dropped[item.id] = f"it contains the excluded {_keywords(present)}"
            else:
                outcome.nodes.append(item)
        return outcome


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """Whole-word, case-insensitive match of a phrase; any run of whitespace matches a space."""
    words = phrase.split()
    body = r"\s+".join(re.escape(word) for word in words)
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


def _keywords(keywords: list[str]) -> str:
    """``keyword 'a'``, ``keywords 'a' and 'b'``, ``keywords 'a', 'b' and 'c'``."""
    quoted = [f"'{keyword}'" for keyword in keywords]
    if len(quoted) == 1:
        return f"keyword {quoted[0]}"
    return f"keywords {', '.join(quoted[:-1])} and {quoted[-1]}"
