"""LlamaIndex's own LLM extractors, run with the configured LLM (:mod:`core.llm`) on the nodes after the split.

``TitleExtractor``, ``QuestionsAnsweredExtractor``, ``SummaryExtractor`` and
``KeywordExtractor`` from ``llama_index.core.extractors``, each declared here with
LlamaIndex's defaults and prompts (``tests/test_llm_extractors.py`` checks them
against the installed LlamaIndex) and run as an ``IngestionPipeline`` runs them: in
the configured order, on the split's nodes, each one seeing the keys the ones before
it wrote. They are node-level, unlike the offline extractors that read a whole
document before the split: :func:`core.documents.finish_nodes` runs them after the
section paths and before the embedding model's allow list, so their keys can be
excluded from either view like any other key.

Untrusted both ways: a node's text goes into a prompt as the value of
``{context_str}``, never as a template; a prompt template is checked like the
metadata templates (plain ``{field}`` names only, each once: no format spec, no
attribute access); the reply comes back cut to ``max_reply_chars`` without control
characters (:func:`core.llm.client.clean_reply`) and goes into metadata as a string,
never into code. A node whose text tells the model to do something else changes the
replies for that node's own prompts, so nothing but that node's keys, and the document's
title the title extractor composes from its first ``nodes`` nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from core.errors import ConfigError
from core.extractors.base import Extractor
from core.extractors.registry import EXTRACTORS
from core.llm import LLMConnection, LLMError
from core.llm.control import LLMCancelled, LLMControl
from core.params import param
from core.params.templates import check_template
from core.schema import Document, MetadataMode, Node

# LlamaIndex's prompts (llama_index.core.extractors.metadata_extractors), copied so that listing the
# extractors imports no framework; a test compares them with the installed LlamaIndex.
TITLE_NODE_TEMPLATE = (
    "Context: {context_str}. Give a title that summarizes all of the unique entities, titles or themes found "
    "in the context. Title: "
)
TITLE_COMBINE_TEMPLATE = (
    "{context_str}. Based on the above candidate titles and content, what is the comprehensive title for this "
    "document? Title: "
)
QUESTION_TEMPLATE = (
    "Here is the context:\n{context_str}\n\nGiven the contextual information, generate {num_questions} questions "
    "this context can provide specific answers to which are unlikely to be found elsewhere.\n\nHigher-level "
    "summaries of surrounding context may be provided as well. Try using these summaries to generate better "
    "questions that this context can answer.\n\n"
)
SUMMARY_TEMPLATE = (
    "Here is the content of the section:\n{context_str}\n\nSummarize the key topics and entities of the section. "
    "\nSummary: "
)
KEYWORD_TEMPLATE = (
    "{context_str}. Give {keywords} unique keywords for this document. Format as comma separated. Keywords: "
)
_TEMPLATE_HELP = "LlamaIndex's prompt; {context_str} is the node's text (with its metadata), each field at most once."

# An edited prompt may say more than a metadata template; still a few paragraphs, not a document.
MAX_PROMPT_CHARS = 4_000

# How ChunkScope runs every LLM extractor, here and in the exported script. No progress bar: it would write to the
# CLI's stderr between ChunkScope's own lines. No template rewrite: LlamaIndex's extractors would otherwise set
# each node's text_template to their "[Excerpt from document]" one, overriding the text_template the Metadata
# page configures, and the next extractor's prompt would hold that text instead of what plan() counts.
RUN_SETTINGS = {"show_progress": False, "disable_template_rewrite": True}

SummaryKind = Literal["prev", "self", "next"]


@dataclass(frozen=True)
class LLMExtractor(Extractor):
    """An extractor that asks the configured LLM about each node, after the split."""

    # Runs on nodes, after the split (core.documents.finish_nodes), not on documents before it.
    node_level: ClassVar[bool] = True
    framework_class: ClassVar[str] = ""
    # The template parameters and the fields each may use beside {context_str}.
    template_fields: ClassVar[dict[str, tuple[str, ...]]] = {}

    def validate(self) -> None:
        for name, extra_fields in self.template_fields.items():
            check_template(
                self.name, name, getattr(self, name), ("context_str", *extra_fields), ("context_str",), MAX_PROMPT_CHARS
            )

    def extract(self, document: Document) -> dict[str, Any]:
        return {}  # node-level: see run_llm_extractors

    def llamaindex(self) -> str | None:
        from core.translate.snippet import call

        return call(self.framework_class, **self.framework_kwargs())

    def framework_kwargs(self) -> dict[str, Any]:
        """The LlamaIndex extractor's keyword arguments (without ``llm``)."""
        return {spec.name: getattr(self, spec.name) for spec in self.params()}

    def output_keys(self) -> tuple[str, ...]:
        return type(self).keys

    def prompts(self, nodes: Sequence[Node], max_tokens: int) -> list[str]:
        """The prompts it sends for ``nodes`` (one per call), as well as they can be known before any reply."""
        raise NotImplementedError

    def build(self, llm: Any, num_workers: int) -> Any:
        from llama_index.core import extractors

        kwargs = self.framework_kwargs()
        if "summaries" in kwargs:
            kwargs["summaries"] = list(kwargs["summaries"])
        return getattr(extractors, self.framework_class)(llm=llm, num_workers=num_workers, **RUN_SETTINGS, **kwargs)


def _context(node: Node) -> str:
    # What LlamaIndex's extractors put in {context_str}: the node's content with all its metadata.
    return node.get_content(MetadataMode.ALL)


@EXTRACTORS.register
@dataclass(frozen=True)
class LLMTitleExtractor(LLMExtractor):
    """LlamaIndex's TitleExtractor: a title per node of a document's first ``nodes``, then one combined title."""

    name = "llm_title"
    summary = "document_title by the LLM (LlamaIndex's TitleExtractor): titles of the first nodes, combined."
    keys = ("document_title",)
    framework_class = "TitleExtractor"
    template_fields = {"node_template": (), "combine_template": ()}

    nodes: int = param(5, "How many of a document's first nodes the title is drawn from.", ge=1, le=50)
    node_template: str = param(TITLE_NODE_TEMPLATE, _TEMPLATE_HELP, advanced=True)
    combine_template: str = param(TITLE_COMBINE_TEMPLATE, _TEMPLATE_HELP, advanced=True)

    def prompts(self, nodes: Sequence[Node], max_tokens: int) -> list[str]:
        by_document: dict[str, list[Node]] = {}
        for node in nodes:
            by_document.setdefault(node.doc_id, []).append(node)
        out = []
        for document_nodes in by_document.values():
            first = document_nodes[: self.nodes]
            # TitleExtractor gives the node template the node's bare text, not its metadata.
            out.extend(self.node_template.format(context_str=node.text) for node in first)
            # The candidates are replies not yet written: counted as max_tokens words each, an upper bound.
            out.append(self.combine_template.format(context_str=", ".join(["word " * max_tokens] * len(first))))
        return out


@EXTRACTORS.register
@dataclass(frozen=True)
class LLMQuestionsExtractor(LLMExtractor):
    """LlamaIndex's QuestionsAnsweredExtractor: questions each node answers, for the embedding model by default."""

    name = "llm_questions"
    summary = "questions_this_excerpt_can_answer by the LLM (LlamaIndex's QuestionsAnsweredExtractor)."
    keys = ("questions_this_excerpt_can_answer",)
    framework_class = "QuestionsAnsweredExtractor"
    template_fields = {"prompt_template": ("num_questions",)}

    questions: int = param(5, "How many questions to ask for per node.", ge=1, le=20)
    prompt_template: str = param(QUESTION_TEMPLATE, _TEMPLATE_HELP + " {num_questions}: questions.", advanced=True)
    # Declared because LlamaIndex declares it; LlamaIndex 0.14 never reads it (tests/test_llm_extractors.py).
    embedding_only: bool = param(
        True,
        "LlamaIndex's flag for 'only the embedding model reads the questions'; LlamaIndex 0.14 does not apply it, "
        "so the LLM reads them too: exclude questions_this_excerpt_can_answer from the LLM's keys to hide them.",
    )

    def prompts(self, nodes: Sequence[Node], max_tokens: int) -> list[str]:
        return [self.prompt_template.format(context_str=_context(n), num_questions=self.questions) for n in nodes]


@EXTRACTORS.register
@dataclass(frozen=True)
class LLMSummaryExtractor(LLMExtractor):
    """LlamaIndex's SummaryExtractor: one summary per node, written to it and, if asked, to its neighbours."""

    name = "llm_summary"
    summary = "section_summary (and prev_/next_section_summary) by the LLM (LlamaIndex's SummaryExtractor)."
    keys = ("section_summary", "prev_section_summary", "next_section_summary")
    framework_class = "SummaryExtractor"
    template_fields = {"prompt_template": ()}

    summaries: tuple[SummaryKind, ...] = param(
        ("self",), "Whose summaries a node carries: its own (self), the previous node's (prev), the next one's (next)."
    )
    prompt_template: str = param(SUMMARY_TEMPLATE, _TEMPLATE_HELP, advanced=True)

    def validate(self) -> None:
        super().validate()
        if not self.summaries or any(kind not in ("prev", "self", "next") for kind in self.summaries):
            raise ConfigError(f"{self.name}: summaries takes prev, self and next, at least one of them")

    def output_keys(self) -> tuple[str, ...]:
        names = {"self": "section_summary", "prev": "prev_section_summary", "next": "next_section_summary"}
        return tuple(names[kind] for kind in ("self", "prev", "next") if kind in self.summaries)

    def prompts(self, nodes: Sequence[Node], max_tokens: int) -> list[str]:
        return [self.prompt_template.format(context_str=_context(n)) for n in nodes]


@EXTRACTORS.register
@dataclass(frozen=True)
class LLMKeywordExtractor(LLMExtractor):
    """LlamaIndex's KeywordExtractor: keywords per node, comma-separated."""

    name = "llm_keywords"
    summary = "excerpt_keywords by the LLM (LlamaIndex's KeywordExtractor), comma-separated."
    keys = ("excerpt_keywords",)
    framework_class = "KeywordExtractor"
    template_fields = {"prompt_template": ("keywords",)}

    keywords: int = param(5, "How many keywords to ask for per node.", ge=1, le=50)
    prompt_template: str = param(KEYWORD_TEMPLATE, _TEMPLATE_HELP + " {keywords}: the count.", advanced=True)

    def prompts(self, nodes: Sequence[Node], max_tokens: int) -> list[str]:
        return [self.prompt_template.format(context_str=_context(n), keywords=self.keywords) for n in nodes]


def llm_extractors(extractors: Sequence[Any]) -> list[LLMExtractor]:
    """The extractors of a configuration that ask an LLM, in order."""
    return [extractor for extractor in extractors if isinstance(extractor, LLMExtractor)]


# ------------------------------------------------------------------------------------------------ the plan


@dataclass(frozen=True)
class LLMPlan:
    """What a run of the LLM extractors will send: requests and prompt tokens (before the cache is asked)."""

    calls: int
    prompt_tokens: int
    largest_prompt_tokens: int
    per_extractor: tuple[tuple[str, int, int], ...] = field(default=())  # (name, calls, prompt tokens)

    def sentence(self, connection: LLMConnection) -> str:
        """What will be sent, in one line (the replies already cached cost nothing and are sent again by none)."""
        window = connection.context_window
        over = f"; the largest prompt ({self.largest_prompt_tokens:,} tokens) is past the {window:,}-token window" if self.largest_prompt_tokens > window else ""
        return (
            f"LLM extractors: up to {self.calls:,} calls to {connection.model}, about {self.prompt_tokens:,} prompt tokens "
            f"and at most {self.calls * connection.max_tokens:,} reply tokens (cached replies are not asked again){over}"
        )


def plan(nodes: Sequence[Node], extractors: Sequence[Any], connection: LLMConnection) -> LLMPlan:
    """The calls and prompt tokens the LLM extractors will send for ``nodes`` (cl100k_base tokens; the
    prompts of later extractors also carry the keys earlier ones write, so this is a floor for them)."""
    from core.tokens.bundled_data import tiktoken_encoding

    encoding = tiktoken_encoding("cl100k_base")
    rows = []
    largest = 0
    for extractor in llm_extractors(extractors):
        counts = [len(encoding.encode(prompt, disallowed_special=())) for prompt in extractor.prompts(nodes, connection.max_tokens)]
        largest = max([largest, *counts])
        rows.append((extractor.name, len(counts), sum(counts)))
    return LLMPlan(
        calls=sum(row[1] for row in rows),
        prompt_tokens=sum(row[2] for row in rows),
        largest_prompt_tokens=largest,
        per_extractor=tuple(rows),
    )


# ------------------------------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class LLMRun:
    """What a run added to each node (by position), and what it cost."""

    metadata: tuple[dict[str, str], ...]
    excluded_llm: tuple[tuple[str, ...], ...]
    excluded_embed: tuple[tuple[str, ...], ...]
    requests: int
    cached: int
    retries: int
    # The tokens of the replies received, as the endpoint counted them (replies from the cache cost none).
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def sentence(self) -> str:
        return spend_sentence(self.spend())

    def spend(self) -> dict[str, int]:
        """What it sent and spent, as the plain numbers a batch's manifest and report keep (:data:`SPEND_KEYS`)."""
        return {key: int(getattr(self, key)) for key in SPEND_KEYS}


# What a run of the LLM extractors sent and spent, by name: LLMRun's fields, a batch manifest's and report's "llm".
SPEND_KEYS = ("requests", "cached", "retries", "prompt_tokens", "completion_tokens")


def add_spend(total: dict[str, int], spend: Any) -> None:
    """Add ``spend`` (a manifest line's ``llm``, untrusted JSON: anything but a count is skipped) into ``total``."""
    if not isinstance(spend, dict):
        return
    for key in SPEND_KEYS:
        value = spend.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            total[key] = total.get(key, 0) + value


def spend_sentence(spend: dict[str, int]) -> str:
    """``LLM extractors: sent 6 requests (0 of them retries), 6 answered from the cache; ... tokens spent``."""
    get = {key: int(spend.get(key, 0)) for key in SPEND_KEYS}
    return (
        f"LLM extractors: sent {get['requests']:,} requests ({get['retries']:,} of them retries), "
        f"{get['cached']:,} answered from the cache; {get['prompt_tokens']:,} prompt and "
        f"{get['completion_tokens']:,} completion tokens spent"
    )


def run_llm_extractors(
    nodes: Sequence[Node], extractors: Sequence[Any], connection: LLMConnection, control: LLMControl | None = None
) -> LLMRun:
    """Run the LLM extractors on (LlamaIndex copies of) ``nodes`` as an ingestion pipeline does, in order, in one
    event loop; what each node gained comes back as plain data. Framework code: callers run it in a bounded child.
    ``control`` (:mod:`core.llm.control`) counts the replies and, cancelled, stops before the next request: the
    requests already sent are waited for (their replies cached) and :class:`~core.llm.control.LLMCancelled` raised."""
    chosen = llm_extractors(extractors)
    try:
        from core.llm.client import clean_reply, make_llm
    except ImportError:
        raise LLMError(
            "the LLM extractors need the llm extra: pip install 'chunkscope[llm]' (openai, llama-index-llms-openai-like)"
        ) from None
    import asyncio

    llm = make_llm(connection, control=control)
    copies = [_text_node(node) for node in nodes]
    before = [(dict(copy.metadata), list(copy.excluded_llm_metadata_keys), list(copy.excluded_embed_metadata_keys)) for copy in copies]

    async def ingest() -> None:
        try:
            for extractor in chosen:
                await extractor.build(llm, connection.concurrency).aprocess_nodes(copies)
        except LLMCancelled:
            # The extractor's other jobs go on until each reaches its next request: those in flight are cached.
            await llm.drain()
            raise
        finally:
            await llm._get_aclient().close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop here: the usual case (the CLI, a bounded child, a script)
        asyncio.run(ingest())
    else:  # called from inside a running loop (a notebook cell): the extractors get a loop of their own
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, ingest()).result()
    metadata, excluded_llm, excluded_embed = [], [], []
    for copy, (keys, llm_keys, embed_keys) in zip(copies, before, strict=True):
        # New keys, and keys an extractor wrote over (llm_title over the offline title's document_title).
        added = {
            key: clean_reply(str(value), connection.max_reply_chars)
            for key, value in copy.metadata.items()
            if key not in keys or keys[key] != value
        }
        metadata.append(added)
        excluded_llm.append(tuple(k for k in copy.excluded_llm_metadata_keys if k not in llm_keys))
        excluded_embed.append(tuple(k for k in copy.excluded_embed_metadata_keys if k not in embed_keys))
    return LLMRun(
        metadata=tuple(metadata),
        excluded_llm=tuple(excluded_llm),
        excluded_embed=tuple(excluded_embed),
        requests=llm.stats["requests"],
        cached=llm.stats["cached"],
        retries=llm.stats["retries"],
        prompt_tokens=llm.stats["prompt_tokens"],
        completion_tokens=llm.stats["completion_tokens"],
    )


def apply_run(nodes: Sequence[Node], run: LLMRun) -> None:
    """Write a run's keys and exclusions into ``nodes`` (in place; a new metadata dict per node)."""
    for node, added, llm_keys, embed_keys in zip(nodes, run.metadata, run.excluded_llm, run.excluded_embed, strict=True):
        node.metadata = {**node.metadata, **added}
        node.excluded_llm_metadata_keys = [*node.excluded_llm_metadata_keys, *(k for k in llm_keys if k not in node.excluded_llm_metadata_keys)]
        node.excluded_embed_metadata_keys = [
            *node.excluded_embed_metadata_keys, *(k for k in embed_keys if k not in node.excluded_embed_metadata_keys)
        ]


def _text_node(node: Node) -> Any:
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

    return TextNode(
        id_=node.id,
        text=node.text,
        metadata=dict(node.metadata),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=node.doc_id)},
        **node.view_settings(),  # excluded keys and templates: how each reader sees the metadata
    )
