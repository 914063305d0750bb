"""What the exported scripts do for the LLM extractors: LlamaIndex's IngestionPipeline, as the app ran it.

The LlamaIndex script runs the same extractors (LlamaIndex's own classes, ChunkScope's parameters) in an
``IngestionPipeline`` on the split's nodes, after the section paths and before the embedding model's allow
list (:func:`core.documents.finish_nodes`' order), with ``OpenAILike`` at the configured endpoint. The key is
read from the environment variable the configuration names, in the script as in the app: the script holds the
variable's name, never its value. Every value enters the script through :func:`core.translate.snippet.literal`.
LangChain has no such extractors: its script says so and what to do instead.
"""

from __future__ import annotations

from core.config import PipelineConfig
from core.extractors.llm import RUN_SETTINGS, llm_extractors
from core.translate.snippet import Code, CodeSnippet, call, literal

LLM_REQUIREMENT = "llama-index-llms-openai-like>=0.8.1,<0.9"


def llm_step_llamaindex(snippet: CodeSnippet, config: PipelineConfig) -> None:
    """After the split (and the section paths): the LLM extractors in an IngestionPipeline, then the allow list."""
    chosen = llm_extractors(config.extractors)
    if not chosen:
        return
    connection = config.llm
    classes = ", ".join(sorted({extractor.framework_class for extractor in chosen}))
    snippet.use(
        "import os",
        f"from llama_index.core.extractors import {classes}",
        "from llama_index.core.ingestion import IngestionPipeline",
        "from llama_index.llms.openai_like import OpenAILike",
    )
    snippet.requires(LLM_REQUIREMENT)
    llm = call(
        "OpenAILike",
        model=connection.model,
        api_base=connection.base_url,
        # The key from the environment, as in the app; openai's client needs a value, a local server ignores it.
        api_key=Code(f"os.environ.get({literal(connection.api_key_env)}) or 'no-key'"),
        is_chat_model=True,
        context_window=connection.context_window,
        max_tokens=connection.max_tokens,
        temperature=connection.temperature,
        timeout=connection.timeout,
        max_retries=connection.max_retries,
    )
    extractors = [
        call(
            extractor.framework_class,
            llm=Code("llm"),
            num_workers=connection.concurrency,
            **RUN_SETTINGS,
            **{key: list(value) if isinstance(value, tuple) else value for key, value in extractor.framework_kwargs().items()},
        )
        for extractor in chosen
    ]
    pipeline = call("IngestionPipeline", transformations=Code("[\n" + "".join(f"    {e.replace(chr(10), chr(10) + '    ')},\n" for e in extractors) + "]"))
    snippet.note(
        f"LLM extractors ({', '.join(e.name for e in chosen)}): ChunkScope keeps at most {connection.max_reply_chars:,} "
        "characters of each reply, without control characters, and answers a request it asked before from its disk "
        "cache; this script keeps replies as the model wrote them and asks every time."
    )
    lines = [
        "# LlamaIndex's LLM extractors on the nodes, in an ingestion pipeline, as the app ran them. The API key is",
        f"# read from ${connection.api_key_env} (only the variable's name is written here).",
        f"llm = {llm}",
        f"pipeline = {pipeline}",
        "nodes = pipeline.run(nodes=nodes)",
    ]
    if config.metadata.embed_metadata_keys is not None:
        lines += ["for node in nodes:", "    node.excluded_embed_metadata_keys = embed_hidden(node)"]
    snippet.add("\n".join(lines))


def llm_note_langchain(snippet: CodeSnippet, config: PipelineConfig) -> None:
    chosen = llm_extractors(config.extractors)
    if not chosen:
        return
    keys = ", ".join(key for extractor in chosen for key in extractor.output_keys())
    snippet.note(
        f"LLM extractors ({', '.join(e.name for e in chosen)}): LangChain has no counterpart to LlamaIndex's "
        f"extractors, so these chunks lack {keys}; the LlamaIndex export runs them, or add ChunkScope's values "
        "(its JSON export) to each chunk's metadata."
    )
