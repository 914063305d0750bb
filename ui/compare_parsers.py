"""Compare's Parsers mode: one file read two to four ways, compared word by word and chunk by chunk.

Each column is a set of loader options, the ``reader`` among them: ChunkScope's own
parser (pypdf or pdfplumber for a PDF) or a framework's reader as its users run it
(LlamaIndex's SimpleDirectoryReader, LangChain's loader, markitdown;
:mod:`core.loaders.readers`). The word diff and what a reader found come from
:mod:`core.loaders.parsers`; the badges and the span pane are the Splitters mode's
(:mod:`ui.compare`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from core.config import PipelineConfig
from core.errors import ChunkScopeError
from core.measure.compare_view import LABELS, MAX_CONFIGS, metrics_options, settings_summary
from core.output.highlight import CSS, legend_html, ocr_confidence_by_page, source_html, source_windows
from core.schema import Document, MetadataMode, Node
from core.splitters.hierarchical import leaf_nodes
from ui import cache, state, widgets
from ui.compare import SPAN_HEIGHT_PX, badge_html

# The loader option that picks ChunkScope's own PDF parser, and the one every loader declares that picks a reader.
PARSER_PARAM = "parser"
READER_PARAM = "reader"


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

    @property
    def parser(self) -> str:
        """Who read it, as the document says: ``pypdf``, ``LangChain PyPDFLoader · langchain-community 0.4.2``."""
        from core.loaders.parsers import parser_name

        return parser_name(self.document)


def parser_files() -> list[Any]:
    """The loaded files any loader reads (every loader offers readers), those with a choice of parser (PDFs) first."""
    from core.loaders import loader_for

    with_parsers, others = [], []
    for source in state.sources():
        try:
            cls = loader_for(source.file_name)
        except ChunkScopeError:
            continue
        (with_parsers if any(spec.name == PARSER_PARAM for spec in cls.params()) else others).append(source)
    return with_parsers + others


def parser_file_picker(sources: Sequence[Any]) -> Any:
    names = [source.file_name for source in sources]
    state.remember_widget("cmp.parser_file", names[0])
    state.keep_valid("cmp.parser_file", names)
    name = st.selectbox("File", names, key="cmp.parser_file")  # options are plain text, not Markdown
    state.keep_widget("cmp.parser_file")
    return next(source for source in sources if source.file_name == name)


def reader_count() -> int:
    """How many readings sit side by side (2 to :data:`MAX_CONFIGS`)."""
    state.remember_widget("cmp.parser_count", 2)
    state.keep_valid("cmp.parser_count", range(2, MAX_CONFIGS + 1))
    count = (
        st.segmented_control(
            "Readers side by side", list(range(2, MAX_CONFIGS + 1)), key="cmp.parser_count", format_func=str
        )
        or 2
    )
    state.keep_widget("cmp.parser_count")
    return count


def reader_seeds(cls: Any, session: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """What each column opens on: A the session's options; then the other parser (a PDF), then each framework
    reader that reads this format here, in :data:`core.loaders.readers.READER_NAMES` order."""
    from core.loaders.readers import NATIVE, READER_NAMES, reader_engine

    native = {**session, READER_PARAM: NATIVE}
    others = []
    choices = next((spec.choices for spec in cls.params() if spec.name == PARSER_PARAM), None) or ()
    for choice in choices:
        if choice != session.get(PARSER_PARAM):
            others.append({**native, PARSER_PARAM: choice})
    for name in READER_NAMES:
        engine = reader_engine(name)
        if name != session[READER_PARAM] and not all(engine.unavailable_reason(ext) for ext in cls.extensions):
            others.append({**session, READER_PARAM: name})
    if session[READER_PARAM] != NATIVE:
        others.insert(0, native)
    others += [session] * count  # more columns than readers: the session's again
    return [session, *others][:count]


def parser_columns(source: Any, config: PipelineConfig) -> list[tuple[int, Any]]:
    """Two to four bordered columns of the file's loader options: A opens on the session's, the others on other
    readers (the other PDF parser, then LlamaIndex, LangChain, markitdown)."""
    from core.loaders import loader_for

    cls = loader_for(source.file_name)
    count = reader_count()
    seeds = reader_seeds(cls, {**cls().to_params(), **config.loader_options(cls.name)}, count)
    loaders = []
    # Each reader's settings come back as they were after a visit to another page.
    state.remember_widgets(f"cmp.parser.{cls.name}.")
    for slot, column in enumerate(st.columns(count, gap="small")):
        with column.container(border=True):
            st.html(badge_html(slot, f"Reader {LABELS[slot]}", "the session's loader options" if slot == 0 else ""))
            # Keyed by loader: each format's columns open on its own readers and keep their settings.
            values = reader_widgets(cls, f"cmp.parser.{cls.name}.{slot}", seeds[slot], Path(source.file_name).suffix)
            loaders.append(widgets.build_or_explain(cls, values)[0])
    state.keep_widgets(f"cmp.parser.{cls.name}.")
    unavailable_readers_note()
    return [(slot, loader) for slot, loader in enumerate(loaders) if loader is not None]


def reader_widgets(cls: Any, key: str, seed: dict[str, Any], suffix: str) -> dict[str, Any]:
    """The reader first; ChunkScope's own options only under its own reader (a framework's reader reads the file
    with that framework's defaults, so a parser or OCR option would be shown and not used)."""
    from core.loaders.readers import NATIVE, reader_engine

    others = [spec.name for spec in cls.params() if spec.name != READER_PARAM]
    values = widgets.param_widgets(cls, key, seed, exclude=others)
    reader = values.get(READER_PARAM, NATIVE)
    if reader == NATIVE:
        values.update(widgets.param_widgets(cls, key, seed, exclude=(READER_PARAM,)))
    else:
        title = reader_engine(reader).title(suffix.lower())
        st.caption(f"{widgets.md_escape(title)} reads the file with its own defaults: ChunkScope's options do not apply.")
    return values


def unavailable_readers_note() -> None:
    """The readers people deploy that do not run here, each with why (as an unavailable postprocessor says it)."""
    from core.loaders.readers import UNAVAILABLE_READERS

    lines = [
        f"**{widgets.md_escape(name)}**: {widgets.md_escape(reason)}." for name, reason in UNAVAILABLE_READERS.items()
    ]
    st.caption("Not available here: " + " ".join(lines))


def parse_each(source: Any, config: PipelineConfig, configured: Sequence[tuple[int, Any]]) -> list[ParserRun]:
    """Load the file with each parser's options and split it with the session's splitter; failures are shown."""
    runs = []
    with st.spinner("Reading the file with each reader…"):
        for slot, loader in configured:
            try:
                (document, *_) = cache.load_source(source, loader.to_params(only_changed=True))
                nodes = cache.run_split_cached([document], config)
            except ChunkScopeError as exc:
                st.error(f"Reader {LABELS[slot]}: {widgets.md_escape(str(exc))}", icon=":material/error:")
                continue
            runs.append(ParserRun(slot, loader, document, leaf_nodes(nodes)))
    return runs


def splitter_notes(config: PipelineConfig, runs: Sequence[ParserRun]) -> None:
    """Name the session's splitter that cuts both readings, and warn where it cannot do its job on one."""
    splitter = config.splitter
    st.caption(
        f"Every reading is cut by the session's splitter, **{widgets.md_escape(splitter.title())}** "
        f"({widgets.md_escape(settings_summary(splitter))}); change it on the Chunks page."
    )
    for run in runs:
        note = metadata_note(splitter, runs[0], run) if run is not runs[0] else None
        if note:
            st.caption(f"Reader {run.label}: {widgets.md_escape(note)}")
        for problem in run_problems(splitter, run):
            st.warning(
                f"Parser {run.label} ({widgets.md_escape(run.parser)}), split with "
                f"{widgets.md_escape(splitter.title())}: {widgets.md_escape(problem)}.",
                icon=":material/warning:",
            )


def metadata_note(splitter: Any, first: ParserRun, run: ParserRun) -> str | None:
    """Why ``run`` has more (or fewer) chunks of the same text than ``first``: a metadata-aware splitter leaves room
    in every chunk for the document's metadata, and readers write different metadata. None when it is not that."""
    if not getattr(splitter, "metadata_aware", False) or not getattr(splitter, "include_metadata", True):
        return None
    views = [max(doc.get_metadata_str(MetadataMode.LLM), doc.get_metadata_str(MetadataMode.EMBED), key=len)
             for doc in (first.document, run.document)]  # fmt: skip
    first_tokens, tokens = cache.count_tokens(tuple(views), "model")
    if abs(tokens - first_tokens) < 20:  # a few tokens move few cuts
        return None
    added = [key for key in run.document.metadata if key not in first.document.metadata]
    which = f" (keys only it writes: {', '.join(added[:6])})" if added and tokens > first_tokens else ""
    return (
        f"its document's metadata is {tokens:,} model tokens against {first_tokens:,} for Reader {first.label}"
        f"{which}; the splitter leaves room for the metadata in every chunk, so its chunks hold "
        f"{'less' if tokens > first_tokens else 'more'} text and there are {len(run.nodes):,} of them against "
        f"{len(first.nodes):,}"
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
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config=PARSER_COLUMNS,
        row_height=widgets.WRAPPING_ROW_HEIGHT,
    )


# Pixel widths that fit the page at 1280 px (~818) with short headers; the rows wrap, so the reader's
# settings and a load warning are read whole.
PARSER_COLUMNS = {
    "config": st.column_config.TextColumn("Reader", width=58),
    "parser": st.column_config.TextColumn("Parser", width=100),
    "settings": st.column_config.TextColumn("Settings", width=170, help="Loader options changed from the defaults"),
    "pages": st.column_config.NumberColumn("Pages", width=52),
    "tables": st.column_config.NumberColumn("Tables", width=55),
    "headings": st.column_config.NumberColumn("Headings", width=72),
    "OCR pages": st.column_config.NumberColumn("OCR", width=45, help="Pages read by OCR"),
    "characters": st.column_config.NumberColumn(
        "Chars", format="localized", width=62, help="Characters in the text read"
    ),
    "nodes": st.column_config.NumberColumn("Nodes", width=55, help="Nodes the session's splitter cuts"),
    "notes": st.column_config.TextColumn("Notes", width=140, help="What the reader warned about"),
}


def parser_text_diff(runs: Sequence[ParserRun]) -> None:
    """A's text against another reading's (B unless another is picked), word by word: the similarity, then each
    change with a little context."""
    from core.loaders.parsers import diff_lines

    other = runs[1]
    if len(runs) > 2:
        labels = [run.label for run in runs[1:]]
        state.keep_valid("cmp.parser_diff", labels)
        picked = st.segmented_control("Compare A with", labels, key="cmp.parser_diff") or labels[0]
        other = next(run for run in runs if run.label == picked)
    a, b = runs[0].document.text, other.document.text
    diff = cache_text_diff(a, b)
    same_col, a_col, b_col = st.columns(3)
    same_col.metric("Same words", f"{diff.similarity:.0%}", border=True, help="Words both readers read, in order")
    a_col.metric("Only in A", f"{diff.a_words - diff.same_words:,}", border=True)
    b_col.metric(f"Only in {other.label}", f"{diff.b_words - diff.same_words:,}", border=True)
    st.caption(
        "Words compared, spacing aside (readers break lines differently). "
        f"`-` words only A read, `+` words only {other.label} read; the line above each shows where."
    )
    lines = diff_lines(diff, a, b)
    st.code("\n".join(lines) if lines else "The two parsers read the same words.", language="diff", height=420)


def cache_text_diff(a: str, b: str) -> Any:
    """:func:`core.loaders.parsers.text_diff`, kept across reruns (a long PDF's words take a moment)."""
    import hashlib

    from core.loaders.parsers import text_diff

    key = tuple(hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest() for text in (a, b))
    return cache.cached("text_diff", key, lambda: text_diff(a, b))


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
            st.html(badge_html(run.slot, run.parser, f"{len(run.nodes):,} chunks"))
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
