"""Compare's Parsers mode: one file read with two sets of loader options, compared word by word and chunk by chunk.

The word diff and what a parser found come from :mod:`core.loaders.parsers`; the
badges and the span pane are the Splitters mode's (:mod:`ui.compare`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from core.config import PipelineConfig
from core.errors import ChunkScopeError
from core.measure.compare_view import LABELS, metrics_options, settings_summary
from core.output.highlight import CSS, legend_html, ocr_confidence_by_page, source_html, source_windows
from core.schema import Document, Node
from core.splitters.hierarchical import leaf_nodes
from ui import cache, state, widgets
from ui.compare import SPAN_HEIGHT_PX, badge_html

# The loader option that picks a parser; a loader that declares it can be compared with itself.
PARSER_PARAM = "parser"


@dataclass(frozen=True)
class ParserRun:
    """One parser's reading of the file (slot A = 0), the session's splitter's chunks of it, and its options."""

    slot: int
    loader: Any
    document: Document
    nodes: list[Node]

    @property
    def label(self) -> str:
        return LABELS[self.slot]


def parser_files() -> list[Any]:
    """The loaded files whose loader offers a choice of parser (PDFs)."""
    from core.loaders import loader_for

    found = []
    for source in state.sources():
        try:
            cls = loader_for(source.file_name)
        except ChunkScopeError:
            continue
        if any(spec.name == PARSER_PARAM for spec in cls.params()):
            found.append(source)
    return found


def parser_file_picker(sources: Sequence[Any]) -> Any:
    names = [source.file_name for source in sources]
    state.keep_valid("cmp.parser_file", names)
    name = st.selectbox("File", names, key="cmp.parser_file")  # options are plain text, not Markdown
    return next(source for source in sources if source.file_name == name)


def parser_columns(source: Any, config: PipelineConfig) -> list[tuple[int, Any]]:
    """Two bordered columns of the file's loader options: A opens on the session's, B on the other parser."""
    from core.loaders import loader_for

    cls = loader_for(source.file_name)
    seed_a = {**cls().to_params(), **config.loader_options(cls.name)}
    choices = next(spec.choices for spec in cls.params() if spec.name == PARSER_PARAM) or ()
    other = next((choice for choice in choices if choice != seed_a[PARSER_PARAM]), seed_a[PARSER_PARAM])
    seeds = [seed_a, {**seed_a, PARSER_PARAM: other}]
    loaders = []
    for slot, column in enumerate(st.columns(2, gap="small")):
        with column.container(border=True):
            st.html(badge_html(slot, f"Parser {LABELS[slot]}", "the session's loader options" if slot == 0 else ""))
            loaders.append(
                widgets.build_or_explain(cls, widgets.param_widgets(cls, f"cmp.parser.{slot}", seeds[slot]))[0]
            )
    return [(slot, loader) for slot, loader in enumerate(loaders) if loader is not None]


def parse_each(source: Any, config: PipelineConfig, configured: Sequence[tuple[int, Any]]) -> list[ParserRun]:
    """Load the file with each parser's options and split it with the session's splitter; failures are shown."""
    runs = []
    with st.spinner("Reading the file with each parser…"):
        for slot, loader in configured:
            try:
                (document, *_) = cache.load_source(source, loader.to_params(only_changed=True))
                nodes = cache.run_split_cached([document], config)
            except ChunkScopeError as exc:
                st.error(f"Parser {LABELS[slot]}: {widgets.md_escape(str(exc))}", icon=":material/error:")
                continue
            runs.append(ParserRun(slot, loader, document, leaf_nodes(nodes)))
    return runs


def splitter_notes(config: PipelineConfig, runs: Sequence[ParserRun]) -> None:
    """Name the session's splitter that cuts both readings, and warn where it cannot do its job on one."""
    splitter = config.splitter
    st.caption(
        f"Both readings are cut by the session's splitter, **{widgets.md_escape(splitter.title())}** "
        f"({widgets.md_escape(settings_summary(splitter))}); change it on the Chunks page."
    )
    for run in runs:
        for problem in run_problems(splitter, run):
            parser = str(run.loader.to_params()[PARSER_PARAM])
            st.warning(
                f"Parser {run.label} ({widgets.md_escape(parser)}), split with "
                f"{widgets.md_escape(splitter.title())}: {widgets.md_escape(problem)}.",
                icon=":material/warning:",
            )


def run_problems(splitter: Any, run: ParserRun) -> list[str]:
    """Why the splitter's chunks of one reading are not worth comparing: unsuited to its text, else far too big."""
    from core.measure.lint import oversized_chunk_warning

    reason = splitter.unsuited_reason(run.document)
    if reason:  # it says why the chunks are few and big: their size would only repeat it
        return [reason]
    problems = []
    if run.nodes:
        metrics = cache.metrics_cached([run.document], run.nodes, metrics_options(splitter))
        limit, unit = splitter.size_limit, splitter.size_unit
        if limit and unit == "characters":
            oversized = oversized_chunk_warning(int(metrics.characters.max), limit, "characters", "its size limit")
        elif limit and unit == "model":
            oversized = oversized_chunk_warning(int(metrics.tokens.max), limit, "model tokens", "its size limit")
        else:
            oversized = oversized_chunk_warning(
                int(metrics.tokens.max), metrics.window_tokens, "model tokens", "what the embedding model reads"
            )
        if oversized:
            problems.append(oversized)
    return problems


def parser_table(runs: Sequence[ParserRun]) -> None:
    """One row per parser: what it found and how the session's splitter cut it."""
    from core.loaders.parsers import parse_summary

    rows = []
    for run in runs:
        found = parse_summary(run.document)
        rows.append(
            {
                "config": run.label,
                "parser": found["parser"],
                "settings": settings_summary(run.loader),
                "pages": found["pages"],
                "tables": found["tables"],
                "headings": found["headings"],
                "OCR pages": found["ocr_pages"],
                "characters": len(run.document.text),
                "nodes": len(run.nodes),
                "notes": str(run.document.metadata.get("load_warning", "")),
            }
        )
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def parser_text_diff(runs: Sequence[ParserRun]) -> None:
    """A's text against B's, word by word: the similarity, then each change with a little context."""
    from core.loaders.parsers import diff_lines

    a, b = runs[0].document.text, runs[1].document.text
    diff = cache_text_diff(a, b)
    same_col, a_col, b_col = st.columns(3)
    same_col.metric("Same words", f"{diff.similarity:.0%}", border=True, help="Words both parsers read, in order")
    a_col.metric("Only in A", f"{diff.a_words - diff.same_words:,}", border=True)
    b_col.metric("Only in B", f"{diff.b_words - diff.same_words:,}", border=True)
    st.caption(
        "Words compared, spacing aside (the parsers break lines differently). "
        "`-` words only A read, `+` words only B read; the line above each shows where."
    )
    lines = diff_lines(diff, a, b)
    st.code("\n".join(lines) if lines else "The two parsers read the same words.", language="diff", height=420)


@st.cache_data(max_entries=16, show_spinner=False)
def cache_text_diff(a: str, b: str) -> Any:
    """:func:`core.loaders.parsers.text_diff`, kept across reruns (a long PDF's words take a moment)."""
    from core.loaders.parsers import text_diff

    return text_diff(a, b)


def parser_chunks(runs: Sequence[ParserRun]) -> None:
    """Each parser's text of one page (the first with a table or OCR), the session's splitter's chunks over it."""
    from core.loaders.parsers import comparable_pages

    documents = [run.document for run in runs]
    pages, first = comparable_pages(documents)
    windows: list[tuple[int, int, str]]
    if pages:
        numbers = [number for number, _ in pages]
        label_of = dict(pages)
        state.keep_valid("cmp.parser_page", numbers, preferred=first)
        number = st.selectbox(
            "Page",
            numbers,
            key="cmp.parser_page",
            format_func=label_of.__getitem__,
            help="The same page as each parser read it; it opens on the first page where a parser found a table or "
            "read by OCR.",
        )  # options are plain text, not Markdown
        windows = []
        for document in documents:
            page = next(page for page in document.pages if page.number == number)
            windows.append((page.start_char, page.end_char, f"page {page.label}"))
    else:
        windows = [(w.start, w.end, w.label) for w in (source_windows(document)[0] for document in documents)]
    read_by_ocr = [ocr_confidence_by_page(document.metadata) for document in documents]
    st.html(CSS + legend_html(ocr=any(read_by_ocr)))
    columns = st.columns(len(runs), gap="small")
    for run, (start, end, label), ocr_confidence, column in zip(runs, windows, read_by_ocr, columns, strict=True):
        with column:
            st.html(badge_html(run.slot, str(run.loader.to_params()[PARSER_PARAM]), f"{len(run.nodes):,} chunks"))
            st.caption(f"{widgets.md_escape(settings_summary(run.loader))} · {widgets.md_escape(label)}")
            st.html(
                source_html(
                    run.document.text,
                    run.nodes,
                    start=start,
                    end=end,
                    pages=run.document.pages,
                    height_px=SPAN_HEIGHT_PX,
                    include_css=False,
                    ocr_confidence=ocr_confidence,
                )
            )
