"""Helpers for the Export page: cached export files, the snippets' notes, the shareable link, and the page's blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import streamlit as st

from core.errors import ChunkScopeError, WorkLimitError
from core.measure.compare_view import settings_summary
from core.output.snapshot import DEFAULT_VIEWS, snapshot_html
from core.schema import Document, Node
from core.translate.snippet import notes_of
from ui import cache, state, widgets
from ui import nodes as node_ui
from ui.cache import HASH_FUNCS

if TYPE_CHECKING:
    from core.config import PipelineConfig
    from core.output.export_check import ExportCheck
    from core.query.chain import QueryResult

DEFAULT_BASE_URL = "http://localhost:8501/"
# The page a shared link opens: where the configuration is seen at work.
LINK_TARGET_PAGE = "Chunks"
FORMATS = {
    "JSONL": (":material/data_object:", "One JSON object per node and line; reads back with Node.from_dict."),
    "CSV": (":material/table_view:", "One row per node; metadata and relationships as JSON text."),
    "Parquet": (":material/view_column:", "Columnar, typed; for pandas, DuckDB or Spark."),
}
# The multiselect of documents whose nodes are exported.
DOCS_KEY = "export.docs"
# The snapshot's document and the nodes it shows up close.
SNAPSHOT_DOC_KEY = "export.snapshot.doc"
SNAPSHOT_NODES_KEY = "export.snapshot.nodes"
# The configuration download's file name: the `chunkscope batch` command shown under it reads this file.
CONFIG_FILE_NAME = "chunkscope-config.json"
SNAPSHOT_ABOUT = (
    "One HTML file that opens offline in any browser, with no server and no JavaScript: the document's coloured "
    "spans, the metric cards, the node table and the LLM and EMBED views of the nodes chosen here."
)


@dataclass(frozen=True)
class ExportFile:
    """One download: its bytes, file name and MIME type."""

    data: bytes
    file_name: str
    mime: str

    @property
    def size_label(self) -> str:
        size = len(self.data)
        if size < 1024:
            return f"{size:,} bytes"
        if size < 1024 * 1024:
            return f"{size / 1024:,.1f} KB"
        return f"{size / (1024 * 1024):,.1f} MB"


def node_files(nodes: Sequence[Node], stem: str) -> dict[str, ExportFile]:
    """The nodes as JSONL, CSV and Parquet, keyed by format name (cached per node set, in the server's byte budget)."""
    return cache.cached("node_files", (cache.nodes_key(nodes), stem), lambda: _node_files(list(nodes), stem))


def _node_files(nodes: list[Node], stem: str) -> dict[str, ExportFile]:
    from core.output.node_files import nodes_to_csv, nodes_to_jsonl, nodes_to_parquet

    return {
        "JSONL": ExportFile(nodes_to_jsonl(nodes).encode("utf-8"), f"{stem}.jsonl", "application/jsonl"),
        "CSV": ExportFile(nodes_to_csv(nodes).encode("utf-8"), f"{stem}.csv", "text/csv"),
        "Parquet": ExportFile(nodes_to_parquet(nodes), f"{stem}.parquet", "application/vnd.apache.parquet"),
    }


def snapshot_file(
    document: Document,
    nodes: Sequence[Node],
    config: PipelineConfig,
    selected_ids: tuple[str, ...],
    trace_key: str = "",
    _query_result: QueryResult | None = None,
) -> ExportFile:
    """The snapshot page of one document's nodes (cached per document, nodes, config, choice and ``trace_key``).

    ``_query_result`` (not in the key: ``trace_key`` names it) adds the Query page's last trace.
    """
    key = (cache.document_key(document), cache.nodes_key(nodes), config.key(), selected_ids, trace_key)
    return cache.cached(
        "snapshot", key, lambda: _snapshot_file(document, nodes, config, selected_ids, _query_result)
    )


def _snapshot_file(
    document: Document,
    nodes: Sequence[Node],
    config: PipelineConfig,
    selected_ids: tuple[str, ...],
    _query_result: QueryResult | None,
) -> ExportFile:
    page = snapshot_html(document, nodes, config, selected_ids=selected_ids, query_result=_query_result)
    stem = file_stem([document], config.splitter.name, "snapshot")
    return ExportFile(page.encode("utf-8"), f"{stem}.html", "text/html")


def differences(snippet: str) -> list[str]:
    """The notes a script lists under "Where this differs from ChunkScope:" (see core.translate.snippet.notes_of)."""
    return notes_of(snippet)


def share_link(
    page_url: str | None, params: Mapping[str, str], *, this_page: str, target: str = LINK_TARGET_PAGE
) -> str:
    """The link that opens ``target`` with ``params`` in the query string.

    ``page_url`` is this page's address as the browser has it (``st.context.url``);
    its last path segment, ``this_page``, is swapped for ``target`` so the link
    works behind a proxy prefix too.
    """
    parts = urlsplit(page_url or DEFAULT_BASE_URL)
    segments = [segment for segment in parts.path.split("/") if segment]
    if segments and segments[-1] == this_page:
        segments.pop()
    path = "/" + "/".join([*segments, target])
    query = urlencode(dict(params), quote_via=quote, safe=",{}")
    return urlunsplit((parts.scheme or "http", parts.netloc, path, query, ""))


def file_stem(documents: Sequence[Document], splitter_name: str, kind: str = "nodes") -> str:
    """``chunking_guide-sentence-nodes`` for one document, ``6-documents-sentence-nodes`` for several."""
    if len(documents) == 1:
        name = str(documents[0].metadata.get("file_name", documents[0].id)).rsplit(".", 1)[0]
        stem = f"{name}-{splitter_name}-{kind}"
    else:
        stem = f"{len(documents)}-documents-{splitter_name}-{kind}"
    return "".join(char if char.isalnum() or char in "-_" else "_" for char in stem)


def link_params(config: PipelineConfig, documents: Sequence[Document], selected_doc_id: str | None) -> dict[str, str]:
    """The configuration as query parameters, plus ``doc`` (the selected document's file name) when one is selected."""
    params = config.to_query_params()
    selected = next((d for d in documents if d.id == selected_doc_id), None)
    if selected is not None:
        params["doc"] = str(selected.metadata.get("file_name", ""))
    return params


# -- the page's blocks -------------------------------------------------------------


def configuration_card(config: PipelineConfig, link: str) -> None:
    """The current configuration in one line, and the shareable link with a button that opens it."""
    splitter = config.splitter
    with st.container(border=True):
        summary, extras = st.columns([3, 2], vertical_alignment="center")
        summary.markdown(
            f"**:material/tune: Current configuration** · {splitter.title()} splitter · "
            f"{widgets.md_escape(settings_summary(splitter))}"
        )
        extras.caption(
            f"Extractors: {', '.join(e.name for e in config.extractors) or 'none'} · "
            f"Extra metadata keys: {len(config.metadata.extra)} · "
            f"Postprocessors: {len(config.postprocessors)}"
        )
        st.markdown("**:material/link: Shareable link**")
        link_col, open_col = st.columns([5, 1], vertical_alignment="center")
        with link_col:
            st.code(link, language=None, wrap_lines=True)
        open_col.link_button("Open", link, icon=":material/open_in_new:", width="stretch")
        st.caption(
            "The configuration lives in the link's query parameters (only what differs from the defaults). "
            "Opening it loads the sample documents and restores this configuration on the Chunks page."
        )


def document_picker(documents: Sequence[Document]) -> list[Document]:
    """The documents chosen for export (all of them at first, and again once a chosen one is gone)."""
    names = {d.id: str(d.metadata.get("file_name", d.id)) for d in documents}
    ids = list(names)
    state.keep_valid(DOCS_KEY, ids, ids)
    chosen = st.multiselect(
        "Documents to export", ids, key=DOCS_KEY, format_func=lambda i: names[i], placeholder="Choose documents"
    )
    return [d for d in documents if d.id in chosen]


def split_for_export(picked: Sequence[Document], config: PipelineConfig) -> cache.Nodes | None:
    """The picked documents' nodes; ``None`` (with a note on the page) when none is picked or the split fails."""
    if not picked:
        st.warning("Choose at least one document to export its nodes.", icon=":material/info:")
        return None
    try:
        with st.spinner("Splitting…"):
            return cache.run_split_cached(picked, config)
    except ChunkScopeError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        return None


def node_downloads(nodes: Sequence[Node], picked: Sequence[Document], splitter_name: str) -> None:
    """A download card per format, and the first lines of the JSONL."""
    files = node_files(nodes, file_stem(picked, splitter_name))
    st.caption(f"{len(nodes):,} nodes from {len(picked)} document{'s' if len(picked) != 1 else ''}.")
    for (fmt, export), column in zip(files.items(), st.columns(len(files)), strict=True):
        icon, about = FORMATS[fmt]
        with column.container(border=True):
            st.markdown(f"**{fmt}**", help=about)
            st.caption(f"`{export.file_name}` · {export.size_label}")
            st.download_button(
                f"Download {fmt}",
                export.data,
                file_name=export.file_name,
                mime=export.mime,
                icon=icon,
                key=f"export.download.{fmt}",
                width="stretch",
                on_click="ignore",
            )
    with st.expander("Preview the first lines of the JSONL", icon=":material/visibility:"):
        head = b"\n".join(files["JSONL"].data.splitlines()[:3]).decode("utf-8")
        st.code(head, language="json", wrap_lines=True, height=220)


def snapshot_download(picked: Sequence[Document], nodes: Sequence[Node], config: PipelineConfig) -> None:
    """The snapshot card: which document, which nodes up close (the selected one, else the first few), the download."""
    names = {d.id: str(d.metadata.get("file_name", d.id)) for d in picked}
    state.keep_valid(SNAPSHOT_DOC_KEY, names, state.selected_doc_id())
    with st.container(border=True):
        st.markdown("**Snapshot (HTML)**", help=SNAPSHOT_ABOUT)
        st.caption("What you see on the Chunks page, as one file to send to people who will not open the app.")
        doc_col, nodes_col = st.columns([2, 3])
        doc_id = doc_col.selectbox("Document", list(names), key=SNAPSHOT_DOC_KEY, format_func=names.__getitem__)
        document = next(d for d in picked if d.id == doc_id)
        own = [node for node in nodes if node.doc_id == doc_id]
        labels = {node.id: node_ui.node_label(i, node) for i, node in enumerate(own)}
        selected = state.selected_node_id()
        state.keep_valid(SNAPSHOT_NODES_KEY, labels, [selected] if selected in labels else list(labels)[:DEFAULT_VIEWS])
        chosen = nodes_col.multiselect(
            "Nodes shown up close (LLM and EMBED views)",
            list(labels),
            key=SNAPSHOT_NODES_KEY,
            format_func=labels.__getitem__,
            placeholder="The first few nodes",
        )
        kept = state.last_query()
        last = kept[0] if kept is not None and kept[1] == config else None
        if kept is not None and last is None:
            # A trace of another split (say, sentence windows) under this one's header would say what never ran.
            st.caption(
                f"The last query ({widgets.md_escape(kept[0].query)}) ran with another configuration: run it again "
                "on the Query page to include its trace."
            )
        include = last is not None and st.checkbox(
            f"Include the last query's trace: {widgets.md_escape(last.query)}",
            value=True,
            key="export.snapshot.trace",
            help="Retrieval and every postprocessor stage of the query last run on the Query page, with this "
            "configuration.",
        )
        trace = last if include else None
        trace_key = f"{trace.query}|{[item.id for item in trace.final]}|{len(trace.stages)}" if trace else ""
        with st.spinner("Drawing the snapshot…"):
            export = snapshot_file(document, own, config, tuple(chosen), trace_key, trace)
        st.caption(f"`{export.file_name}` · {export.size_label}")
        st.download_button(
            "Snapshot (HTML)",
            export.data,
            file_name=export.file_name,
            mime=export.mime,
            icon=":material/photo_camera:",
            key="export.download.snapshot",
            on_click="ignore",
        )


def config_download(config_json: str) -> None:
    """The configuration as JSON beside a note on how to use it and its download button, then the
    ``chunkscope batch`` commands that apply the downloaded file to a whole corpus."""
    left, right = st.columns([3, 1], vertical_alignment="top")
    with left:
        st.code(config_json, language="json", height=260)
    with right:
        st.caption(
            "Every setting of this run as JSON: load it with `PipelineConfig.from_json`, or pass it to the "
            "command line with `chunkscope split --config`."
        )
        st.download_button(
            "Download config.json",
            config_json.encode("utf-8"),
            file_name=CONFIG_FILE_NAME,
            mime="application/json",
            icon=":material/settings:",
            key="export.download.config",
            width="stretch",
            on_click="ignore",
        )
    batch_commands_block()


def batch_commands_block() -> None:
    """The exact ``chunkscope batch`` command for the downloaded configuration, on this machine and on Ray."""
    from core.batch.command_line import batch_commands

    commands = batch_commands(CONFIG_FILE_NAME)
    st.markdown("**:material/terminal: Apply it to a whole corpus**")
    st.caption(
        f"Save `{CONFIG_FILE_NAME}` where you run this command: it splits every file under `DOCS/` (or give "
        "files, globs and `@paths.txt` lists) with this configuration, writes the nodes to `corpus_nodes/nodes/` "
        "as Parquet and the corpus report to `corpus_nodes/report.html`. `--resume` continues a run that stopped."
    )
    st.code(commands["local"], language="bash", wrap_lines=True)
    st.caption("The same on Ray Data, on a local Ray or, with `--ray-address`, a cluster (it writes the same nodes):")
    st.code(commands["ray"], language="bash", wrap_lines=True)


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def export_check(documents: Sequence[Document], config: PipelineConfig, library: str) -> ExportCheck | WorkLimitError:
    """How many of the app's chunks the ``library`` script's splitter rebuilds (cached per documents and config).

    A limit reached is returned, not raised, so it is cached too: the page's next rerun says it again at
    once instead of waiting out the deadline a second time.
    """
    from core.output.export_check import check_export

    # Bounded: the framework runs the user's settings (a separator regex may backtrack for hours) in a child.
    try:
        return check_export(config, documents, library, cache.run_split_cached(documents, config), bounded=True)
    except WorkLimitError as exc:
        return exc


def script_check(library: str, config: PipelineConfig, documents: Sequence[Document]) -> None:
    """On demand, the script's splitter run here on the picked documents: how many chunks it changes."""
    if not documents:
        return
    if not st.toggle(
        "Count the chunks this script changes",
        key=f"export.check.{library}",
        help="Runs the script's splitter here on the documents picked above and compares its chunks with the app's.",
    ):
        return
    try:
        with st.spinner(f"Running the {library} script's splitter…"):
            check = export_check(documents, config, library)
        if isinstance(check, WorkLimitError):
            raise check
    except ChunkScopeError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        return
    icon = ":material/check:" if check.exact else ":material/difference:"
    st.caption(f"{icon} {widgets.md_escape(check.sentence())}")


def snippet_tabs(
    snippets: Mapping[str, str], config: PipelineConfig | None = None, documents: Sequence[Document] = ()
) -> None:
    """A tab per library: where it differs from ChunkScope (and, on demand, by how many chunks), the script, its download."""
    for (library, code), tab in zip(snippets.items(), st.tabs(list(snippets)), strict=True):
        with tab:
            notes = differences(code)
            if notes:
                # A note quotes settings a share link may carry: escaped, so it is read as text, never as a link.
                st.info(
                    f"**Where {library} differs from ChunkScope here**\n\n"
                    + "\n".join(f"- {widgets.md_escape(note)}" for note in notes),
                    icon=":material/compare_arrows:",
                )
            else:
                st.success(
                    f"{library} has an exact equivalent for every setting of this configuration.",
                    icon=":material/check:",
                )
            if config is not None:
                script_check(library, config, documents)
            st.code(code, language="python", line_numbers=True, height=480)
            st.download_button(
                f"Download {library.lower()}_pipeline.py",
                code.encode("utf-8"),
                file_name=f"{library.lower()}_pipeline.py",
                mime="text/x-python",
                icon=":material/download:",
                key=f"export.download.{library}",
                on_click="ignore",
            )
