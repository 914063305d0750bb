"""One self-contained HTML page of a chunking run, for people who will not open the app.

:func:`snapshot_html` draws what the Chunks page shows for one document: the
metric cards, the source with every chunk's span coloured (the same
:func:`core.output.highlight.source_html`), the node table, and the LLM and EMBED views
of chosen nodes; given a :class:`core.query.chain.QueryResult`, also the query's trace
(retrieval, each stage's nodes in and out, the final context).

The page opens from disk with no server, no network and no JavaScript: its
styles are inline, its bars are plain HTML, and it holds no script, image, font
or link to anything outside itself (a Content-Security-Policy says so to the
browser too). Document text, file names, metadata, settings and queries are
untrusted: every one is escaped. The page's frame (policy, stylesheet, escaping)
is :mod:`core.output.snapshot_page`; the query trace's sections are :mod:`core.output.snapshot_trace`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.measure.metrics import ChunkMetrics, chunk_report
from core.measure.split_summary import metric_cards, unit_name
from core.output.highlight import CSS as SOURCE_CSS
from core.output.highlight import colour_for, legend_html, ocr_confidence_by_page, source_html, source_windows
from core.output.snapshot_page import CSP, PAGE_CSS
from core.output.snapshot_page import esc as _e
from core.output.snapshot_trace import query_section
from core.query.chain import QueryResult
from core.schema import Document, MetadataMode, Node
from core.splitters.hierarchical import leaf_nodes
from core.tokens.tokenizers import get_tokenizer
from core.words import page_count

if TYPE_CHECKING:
    from core.config import PipelineConfig

# Nodes shown up close when none (or none of this document's) are chosen.
DEFAULT_VIEWS = 3
# Past this many rows the node table stops: the JSONL export holds every node.
MAX_TABLE_ROWS = 5_000


def snapshot_html(
    document: Document,
    nodes: Sequence[Node],
    config: PipelineConfig,
    *,
    selected_ids: Iterable[str] = (),
    query_result: QueryResult | None = None,
) -> str:
    """The whole page for ``document`` split into ``nodes`` by ``config``.

    ``selected_ids`` are the nodes shown up close (the first is outlined in the
    source); when none of them is one of ``nodes``, the first
    :data:`DEFAULT_VIEWS` nodes are shown. ``query_result`` adds the query's trace.
    """
    nodes = list(nodes)
    splitter = config.splitter
    unit, limit = splitter.size_unit, splitter.size_limit
    metrics, rows = chunk_report([document], nodes, size_limit=limit, tokenizer=unit)
    index_of = {node.id: index for index, node in enumerate(nodes)}
    by_id = {node.id: node for node in nodes}
    picked = [by_id[node_id] for node_id in dict.fromkeys(selected_ids) if node_id in by_id]
    chosen = picked or nodes[:DEFAULT_VIEWS]
    name = _file_name(document)
    sections = [
        _header(document, name, splitter, len(nodes), query_result is not None),
        _metrics_section(metrics, unit, limit, splitter.level_sizes),
        _source_section(document, nodes, index_of, picked[0].id if picked else None),
        _table_section(rows, unit, limit),
        _views_section(document, chosen, index_of, metrics.window_tokens),
    ]
    if query_result is not None:
        sections.append(query_section(query_result, index_of))
    sections.append(_config_section(config))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{_e(name)} · ChunkScope snapshot</title>{PAGE_CSS}{SOURCE_CSS}</head>"
        f"<body><main>{''.join(sections)}"
        "<footer>Made with ChunkScope. A static page: it runs no script and loads nothing.</footer>"
        "</main></body></html>\n"
    )


# -- sections ----------------------------------------------------------------------


def _header(document: Document, name: str, splitter: Any, node_count: int, with_query: bool) -> str:
    changed = splitter.to_params(only_changed=True)
    settings = ", ".join(f"{key}={value!r}" for key, value in changed.items())
    facts = [f"{len(document.text):,} characters"]
    if document.pages:
        facts.append(page_count(document))
    facts.append(f"{node_count:,} nodes")
    links = [("metrics", "Metrics"), ("source", "Source"), ("nodes", "Node table"), ("views", "Node views")]
    if with_query:
        links.append(("query", "Query trace"))
    links.append(("config", "Configuration"))
    nav = "".join(f'<a href="#{anchor}">{label}</a>' for anchor, label in links)
    return (
        '<header><div class="kicker">ChunkScope snapshot</div>'
        f"<h1>{_e(name)}</h1>"
        f'<div class="muted">{" · ".join(facts)} · split by <b>{_e(splitter.name)}</b> · '
        f"{f'<code>{_e(settings)}</code>' if settings else 'default settings'}</div>"
        f"<nav>{nav}</nav></header>"
    )


def _metrics_section(metrics: ChunkMetrics, unit: str, limit: int | None, levels: tuple[int, ...]) -> str:
    """The Chunks page's six cards, with their help as a note under each."""
    body = "".join(
        f'<div class="card"><div class="label">{card.label}</div><div class="value">{card.value}</div>'
        f'<div class="note">{_e(f"{card.detail} · {card.help}" if card.detail else card.help)}</div></div>'
        for card in metric_cards(metrics, unit, limit, levels)
    )
    return f'<section id="metrics"><h2>Metrics</h2><div class="cards">{body}</div></section>'


def _source_section(
    document: Document, nodes: Sequence[Node], index_of: Mapping[str, int], selected_id: str | None
) -> str:
    """The whole document, window after window, with the chunks' spans (a hierarchy's leaves, as on the Chunks page)."""
    drawn = leaf_nodes(nodes)
    windows = source_windows(document)
    ocr_confidence = ocr_confidence_by_page(document.metadata)
    parts = []
    for window in windows:
        if len(windows) > 1:
            parts.append(f'<div class="part">{_e(window.label)}</div>')
        parts.append(
            source_html(
                document.text,
                drawn,
                start=window.start,
                end=window.end,
                pages=document.pages,
                selected_id=selected_id,
                include_css=False,
                index_of=index_of,
                ocr_confidence=ocr_confidence,
            )
        )
    note = "" if len(drawn) == len(nodes) else f'<p class="muted">Showing the {len(drawn):,} leaf nodes.</p>'
    return (
        f'<section id="source"><h2>Source</h2>{note}{legend_html(ocr=bool(ocr_confidence))}'
        f'<div class="panel scroll parts">{"".join(parts)}</div></section>'
    )


def _table_section(rows: Sequence[Mapping[str, Any]], unit: str, limit: int | None) -> str:
    """One row per node: its colour, span, sizes (with a bar), pages, header path, first words and lint flags."""
    if not rows:
        return '<section id="nodes"><h2>Node table</h2><p class="muted">The splitter made no nodes.</p></section>'
    shown = rows[:MAX_TABLE_ROWS]
    # Columns with nothing to say are left out, as on the Chunks page.
    with_pages = any(row["pages"] for row in rows)
    with_headers = any(row["header_path"] for row in rows)
    with_tokens = unit != "characters"
    scale = max([limit or 0, *(row["tokens"] for row in rows)]) or 1
    head = ["<th>Node</th>", "<th>Span</th>", '<th class="num">Characters</th>']
    if with_tokens:
        head.append(f'<th class="num">Size ({_e(unit_name(unit))})</th>')
    head += ["<th>Pages</th>"] * with_pages + ["<th>Header path</th>"] * with_headers
    head += ["<th>First words</th>", "<th>Lint flags</th>"]
    body = []
    for index, row in enumerate(shown):
        over = limit is not None and row["tokens"] > limit
        bar = f'<span class="bar{" over" if over else ""}" style="width:{100 * row["tokens"] / scale:.1f}%"></span>'
        size = row["tokens"] if with_tokens else row["characters"]
        cells = [
            f'<td class="num"><span class="sw" style="background:{colour_for(index)}"></span>#{index}</td>',
            f"<td>{_e(row['span'])}</td>",
            f'<td class="num">{row["characters"]:,}{"" if with_tokens else bar}</td>',
        ]
        if with_tokens:
            cells.append(f'<td class="num">{size:,}{bar}</td>')
        if with_pages:
            cells.append(f"<td>{_e(row['pages'])}</td>")
        if with_headers:
            cells.append(f"<td>{_e(row['header_path'])}</td>")
        cells.append(f'<td class="words">{_e(row["first_words"])}</td>')
        flags = "".join(f'<span class="flag">{_e(flag)}</span>' for flag in row["flags"])
        cells.append(f"<td>{flags}</td>")
        body.append(f'<tr id="node-{index}">{"".join(cells)}</tr>')
    more = (
        f'<p class="muted">… and {len(rows) - len(shown):,} more nodes (the JSONL export holds every node).</p>'
        if len(rows) > len(shown)
        else ""
    )
    return (
        '<section id="nodes"><h2>Node table</h2>'
        f'<div class="panel scroll" style="padding:0"><table><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>{more}</section>"
    )


def _views_section(document: Document, chosen: Sequence[Node], index_of: Mapping[str, int], window: int) -> str:
    """Each chosen node: its span, what the LLM reads beside what the embedding model reads, and its metadata."""
    if not chosen:
        return '<section id="views"><h2>Node views</h2><p class="muted">There are no nodes to show.</p></section>'
    views = [(node.get_content(MetadataMode.LLM), node.get_content(MetadataMode.EMBED)) for node in chosen]
    counts = get_tokenizer("model").count_many([text for pair in views for text in pair] + [n.text for n in chosen])
    text_tokens = counts[2 * len(chosen) :]
    articles = []
    for number, (node, (llm, embed)) in enumerate(zip(chosen, views, strict=True)):
        index = index_of[node.id]
        llm_tokens, embed_tokens, own = counts[2 * number], counts[2 * number + 1], text_tokens[number]
        pages = document.pages_for_span(node.start_char, node.end_char)
        where = f"characters {node.start_char:,}–{node.end_char:,} ({len(node.text):,})"
        if len(pages) == 1:
            where += f" · page {pages[0].label}"
        elif pages:
            where += f" · pages {pages[0].label}–{pages[-1].label}"
        warning = (
            f'<p class="warn">The EMBED view is {embed_tokens:,} tokens but the embedding model reads only the first '
            f"{window}: the last {embed_tokens - window:,} tokens are invisible to retrieval.</p>"
            if embed_tokens > window
            else ""
        )
        articles.append(
            f'<article class="view" id="view-{index}">'
            f'<h3><span class="sw" style="background:{colour_for(index)}"></span>Node #{index}</h3>'
            f'<div class="muted">id <code>{_e(node.id)}</code> · {_e(where)}</div>'
            '<div class="views">'
            f"<div><h4>LLM view — what the language model reads</h4>"
            f'<div class="muted">{llm_tokens:,} tokens · metadata adds {llm_tokens - own:,}</div>'
            f"<pre>{_e(llm)}</pre></div>"
            f"<div><h4>EMBED view — what the embedding model reads</h4>"
            f'<div class="muted">{embed_tokens:,} tokens · metadata adds {embed_tokens - own:,} · '
            f"model window {window}</div><pre>{_e(embed)}</pre>{warning}</div>"
            f"</div>{_metadata_table(node)}</article>"
        )
    return (
        '<section id="views"><h2>Node views</h2>'
        f'<p class="muted">{len(chosen)} node{"s" if len(chosen) != 1 else ""} up close; '
        "token counts use the embedding model's tokenizer.</p>"
        f"{''.join(articles)}</section>"
    )


def _metadata_table(node: Node) -> str:
    """One row per metadata key: its value and whether each reader sees it."""
    if not node.metadata:
        return '<p class="muted">This node carries no metadata.</p>'
    llm_hidden, embed_hidden = set(node.excluded_llm_metadata_keys), set(node.excluded_embed_metadata_keys)
    rows = "".join(
        f"<tr><td><code>{_e(key)}</code></td><td>{_e(str(value))}</td>"
        f"<td>{'yes' if key not in llm_hidden else 'no'}</td><td>{'yes' if key not in embed_hidden else 'no'}</td></tr>"
        for key, value in node.metadata.items()
    )
    return (
        f"<details><summary>Metadata · {len(node.metadata)} keys</summary>"
        "<table><thead><tr><th>Key</th><th>Value</th><th>LLM sees</th><th>EMBED sees</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details>"
    )


def _config_section(config: PipelineConfig) -> str:
    return (
        '<section id="config"><h2>Configuration</h2>'
        '<p class="muted">Every setting of this run: load it with <code>PipelineConfig.from_json</code> or pass it to '
        "<code>chunkscope split --config</code>.</p>"
        f"<details><summary>Configuration as JSON</summary><pre>{_e(config.to_json())}</pre></details></section>"
    )


# -- small pieces --------------------------------------------------------------------


def _file_name(document: Document) -> str:
    return str(document.metadata.get("file_name") or document.id)
