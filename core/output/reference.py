"""docs/reference.md, generated from the components' own declarations.

Every splitter, postprocessor, loader and extractor declares its parameters
once (type, default, bounds, help); the settings that are not components
(metadata views, retrieval, limits) do the same. This module renders those
declarations as one Markdown page, so the reference cannot drift from the
code: ``chunkscope reference --output docs/reference.md`` writes it and a test
fails when the file is stale. Only ChunkScope's own components are listed;
plugins document themselves.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

from core.params import Configurable, ParamSpec

HEADER = """# ChunkScope reference

Every component and its parameters, generated from their declarations by
`chunkscope reference --output docs/reference.md` (a test fails when this file
is stale). In the app each parameter is a widget, in the CLI a `--set K=V`
(`--post NAME:K=V`, `--loader-set`, `--extractor NAME:K=V`, `--view-set`,
`--retrieval-set`), in a link a query parameter and in a config file a JSON value.
Lists are written comma-separated (`h1, h2`) or as JSON (`[" ", "\\n"]`).
"""


def _kinds() -> list[tuple[str, str, Iterable[type[Configurable]]]]:
    from core.config_parts import MetadataSettings, RetrievalSettings
    from core.evaluation.drafting import QuestionDrafter
    from core.extractors import EXTRACTORS
    from core.limits import Limits
    from core.llm import LLMConnection
    from core.loaders import LOADERS
    from core.postprocessors import POSTPROCESSORS
    from core.splitters import SPLITTERS

    return [
        ("Splitters", "A node parser: `--splitter NAME --set K=V`.", SPLITTERS),
        ("Postprocessors", "A stage of the query chain: `--post NAME:K=V`.", POSTPROCESSORS),
        ("Loaders", "Reading a file into a document: `--loader-set NAME.K=V`.", LOADERS),
        (
            "Extractors",
            "Metadata extractors: `--extractor NAME:K=V`; offline, or llm_* (LlamaIndex's, with the LLM below).",
            EXTRACTORS,
        ),
        (
            "Settings",
            "What the LLM and the embedding model read (`--view-set`), retrieval (`--retrieval-set`), the input limits, "
            "the LLM the llm_* extractors ask (`--llm`), and how it drafts evaluation questions "
            "(`chunkscope draft-questions --draft-set`).",
            (MetadataSettings, RetrievalSettings, Limits, LLMConnection, QuestionDrafter),
        ),
    ]


def reference_markdown() -> str:
    """The whole reference page."""
    parts = [HEADER]
    for title, about, classes in _kinds():
        own = sorted((cls for cls in classes if cls.__module__.startswith("core.")), key=lambda cls: cls.name)
        parts.append(f"## {title}\n\n{about}\n")
        parts.extend(_component(cls) for cls in own)
    return "\n".join(parts).rstrip() + "\n"


def _component(cls: type[Configurable]) -> str:
    lines = [f"### `{cls.name}`\n"]
    if cls.summary:
        lines.append(f"{cls.summary}\n")
    doc = inspect.getdoc(cls)
    if doc:
        first = doc.split("\n\n", 1)[0].replace("\n", " ")
        if first != cls.summary:
            lines.append(f"{first}\n")
    specs = cls.params()
    if not specs:
        lines.append("No parameters.\n")
        return "\n".join(lines)
    lines.append("| parameter | type | default | bounds | help |")
    lines.append("|---|---|---|---|---|")
    lines.extend(_row(spec) for spec in specs)
    return "\n".join(lines) + "\n"


def _row(spec: ParamSpec) -> str:
    kind = spec.kind + (" (optional)" if spec.optional else "")
    bounds = _bounds(spec)
    help_text = spec.help + (" *(advanced)*" if spec.advanced else "")
    return f"| `{spec.name}` | {kind} | {_code(spec.default)} | {bounds} | {_cell(help_text)} |"


def _bounds(spec: ParamSpec) -> str:
    if spec.choices:
        return ", ".join(f"`{choice}`" for choice in spec.choices)
    if spec.ge is not None and spec.le is not None:
        return f"{_number(spec.ge)} to {_number(spec.le)}"
    if spec.ge is not None:
        return f"≥ {_number(spec.ge)}"
    if spec.le is not None:
        return f"≤ {_number(spec.le)}"
    return ""


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _code(value: Any) -> str:
    if value is None:
        return "*unset*"
    if isinstance(value, tuple):
        value = list(value)
    shown = repr(value).replace("`", "'")
    return f"`{_cell(shown)}`"


def _cell(text: str) -> str:
    # A table cell is one line, and a bar would end it.
    return text.replace("\n", " ").replace("|", "\\|")


__all__ = ["reference_markdown"]
