"""One self-contained HTML page of a chunking run, for people who will not open the app.

:func:`snapshot_html` draws what the Chunks page shows for one document: the
metric cards, the source with every chunk's span coloured (the same
:func:`core.highlight.source_html`), the node table, and the LLM and EMBED views
of chosen nodes; given a :class:`core.query.QueryResult`, also the query's trace
(retrieval, each stage's nodes in and out, the final context).

The page opens from disk with no server, no network and no JavaScript: its
styles are inline, its bars are plain HTML, and it holds no script, image, font
or link to anything outside itself (a Content-Security-Policy says so to the
browser too). Document text, file names, metadata, settings and queries are
untrusted: every one is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.highlight import CSS as SOURCE_CSS
from core.highlight import colour_for, legend_html, source_html, source_windows
from core.metrics import ChunkMetrics, chunk_report
from core.query import QueryResult, StageTrace, final_context
from core.schema import Document, MetadataMode, Node
from core.split_summary import metric_cards, unit_name
from core.splitters.hierarchical import leaf_nodes
from core.tokenizers import get_tokenizer
from core.trace_view import (
    MARKED_STATUSES,
    MISSING,
    retrieval_rows,
    stage_label,
    stage_labels,
    stage_params,
    stage_rows,
    stage_summary,
)

if TYPE_CHECKING:
    from core.config import PipelineConfig

# Nodes shown up close when none (or none of this document's) are chosen.
DEFAULT_VIEWS = 3
# Past this many rows the node table stops: the JSONL export holds every node.
MAX_TABLE_ROWS = 5_000
# The page may hold inline styles and data: images, nothing else; no script runs, nothing loads.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

PAGE_CSS = """<style>
*{box-sizing:border-box}
body{margin:0;background:#f8fafc;color:#0f172a;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1240px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:1.7rem;margin:2px 0 4px;word-break:break-word}
h2{font-size:1.2rem;margin:34px 0 10px;padding-top:6px;border-top:1px solid #e2e8f0}
h3{font-size:1rem;margin:18px 0 6px}
.kicker{font-size:.78rem;font-weight:600;letter-spacing:.06em;text-transform:uppercase;color:#2563eb}
.muted{color:#475569;font-size:.86rem}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em;background:#eef2f7;
  border-radius:4px;padding:0 4px}
nav{display:flex;flex-wrap:wrap;gap:6px 16px;margin:12px 0 0;font-size:.88rem}
nav a{color:#1d4ed8;text-decoration:none}
nav a:hover{text-decoration:underline}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:12px}
.card{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:12px 14px}
.card .label{font-size:.82rem;color:#475569}
.card .value{font-size:1.7rem;font-weight:600;line-height:1.3}
.card .note{font-size:.75rem;color:#64748b}
.panel{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:12px 14px}
.scroll{max-height:72vh;overflow:auto}
.parts .cs-source{max-height:none;border:none;border-radius:0;padding:6px 2px}
.part{font-size:.78rem;font-weight:600;color:#475569;margin:10px 0 0;padding-top:6px;border-top:1px solid #e2e8f0}
.part:first-child{border-top:none;margin-top:0}
table{border-collapse:collapse;width:100%;font-size:.84rem;background:#fff}
th,td{text-align:left;vertical-align:top;padding:5px 8px;border-bottom:1px solid #eef2f7}
th{position:sticky;top:0;background:#f1f5f9;font-weight:600;color:#334155;z-index:1}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.words{color:#334155;min-width:260px}
td.node{white-space:nowrap}
.sw{display:inline-block;width:12px;height:12px;border-radius:3px;vertical-align:-1px;margin-right:6px;
  border:1px solid rgba(15,23,42,.15)}
.bar{display:block;height:6px;border-radius:3px;background:#93c5fd;margin-top:3px}
.bar.over{background:#f87171}
.flag{display:inline-block;font-size:.72rem;border-radius:9px;padding:0 7px;margin:0 3px 2px 0;
  background:#fef3c7;color:#92400e;white-space:nowrap}
article.view{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:12px 16px;margin:14px 0}
article.view h3{margin-top:2px}
.views{display:grid;grid-template-columns:1fr 1fr;gap:14px}
@media (max-width:820px){.views{grid-template-columns:1fr}}
.views h4{margin:8px 0 2px;font-size:.9rem}
pre{margin:4px 0 0;padding:10px 12px;background:#f8fafc;border:1px solid #e2e8f0;border-radius:8px;
  font:.8rem/1.6 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word;
  max-height:420px;overflow:auto}
.warn{margin:6px 0 0;padding:6px 10px;border-radius:6px;background:#fef2f2;color:#991b1b;font-size:.82rem}
details{margin:8px 0}
summary{cursor:pointer;color:#1d4ed8;font-size:.9rem}
blockquote{margin:6px 0 10px;padding:8px 12px;border-left:4px solid #2563eb;background:#fff;
  white-space:pre-wrap;word-break:break-word}
.funnel{display:grid;grid-template-columns:minmax(120px,max-content) 1fr;gap:6px 12px;align-items:center;
  max-width:760px}
.funnel .fill{display:block;height:22px;border-radius:4px;background:#60a5fa;color:#0f172a;font-size:.8rem;
  font-weight:600;padding:1px 8px;min-width:2.4em}
.funnel .fill.stage{background:#a7f3d0}
.dropped{color:#dc2626;font-weight:600}
.added{color:#059669;font-weight:600}
footer{margin-top:40px;color:#64748b;font-size:.78rem}
@media print{.scroll,pre{max-height:none;overflow:visible}th{position:static}}
</style>"""


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
        _metrics_section(metrics, unit, limit),
        _source_section(document, nodes, index_of, picked[0].id if picked else None),
        _table_section(rows, unit, limit),
        _views_section(document, chosen, index_of, metrics.window_tokens),
    ]
    if query_result is not None:
        sections.append(_query_section(query_result, index_of))
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
        facts.append(f"{len(document.pages)} pages")
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


def _metrics_section(metrics: ChunkMetrics, unit: str, limit: int | None) -> str:
    """The Chunks page's six cards, with their help as a note under each."""
    body = "".join(
        f'<div class="card"><div class="label">{card.label}</div><div class="value">{card.value}</div>'
        f'<div class="note">{_e(f"{card.detail} · {card.help}" if card.detail else card.help)}</div></div>'
        for card in metric_cards(metrics, unit, limit)
    )
    return f'<section id="metrics"><h2>Metrics</h2><div class="cards">{body}</div></section>'


def _source_section(
    document: Document, nodes: Sequence[Node], index_of: Mapping[str, int], selected_id: str | None
) -> str:
    """The whole document, window after window, with the chunks' spans (a hierarchy's leaves, as on the Chunks page)."""
    drawn = leaf_nodes(nodes)
    windows = source_windows(document)
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
            )
        )
    note = "" if len(drawn) == len(nodes) else f'<p class="muted">Showing the {len(drawn):,} leaf nodes.</p>'
    return (
        f'<section id="source"><h2>Source</h2>{note}{legend_html()}'
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


def _query_section(result: QueryResult, index_of: Mapping[str, int]) -> str:
    """The query, the funnel of node counts, retrieval's ranking, each stage's table, and the final context."""
    labels = _trace_labels(result, index_of)
    counts = result.counts()
    names = ["retrieval", *stage_labels(result)]
    widest = max((count for _, count in counts), default=0) or 1
    funnel = "".join(
        f'<div>{_e(name)}</div><div><span class="fill{" stage" if i else ""}" '
        f'style="width:{100 * count / widest:.1f}%">{count}</span></div>'
        for i, (name, (_, count)) in enumerate(zip(names, counts, strict=True))
    )
    retrieved = "".join(
        f'<tr><td class="num">{row["rank"]}</td><td class="node">{_e(row["node"])}</td>'
        f'<td class="num">{_score(row["score"])}</td><td class="words">{_e(row["text"])}</td></tr>'
        for row in retrieval_rows(result, labels)
    )
    stages = "".join(_stage_html(index, stage, labels) for index, stage in enumerate(result.stages, start=1))
    context = final_context(result.final)
    return (
        '<section id="query"><h2>Query trace</h2>'
        f"<blockquote>{_e(result.query)}</blockquote>"
        f'<p class="muted">Retrieval <b>{_e(result.mode)}</b>, top {result.top_k} of {result.candidates:,} nodes; '
        f"{len(result.stages)} postprocessor{'s' if len(result.stages) != 1 else ''}; "
        f"{len(result.final)} nodes reach the LLM.</p>"
        f'<h3>Nodes after each stage</h3><div class="funnel">{funnel}</div>'
        f"<h3>Retrieval</h3>"
        '<div class="panel scroll" style="padding:0"><table><thead><tr><th class="num">Rank</th><th>Node</th>'
        f'<th class="num">Score</th><th>Text</th></tr></thead><tbody>{retrieved}</tbody></table></div>'
        f"{stages}"
        f"<h3>Final context</h3>"
        f'<p class="muted">Exactly what the LLM reads: each final node\'s LLM view, joined by a blank line.</p>'
        f"<pre>{_e(context) if context else 'No node survived the chain: the LLM would get no context.'}</pre>"
        "</section>"
    )


def _stage_html(index: int, stage: StageTrace, labels: Mapping[str, str]) -> str:
    """One stage: its parameters, its counts, and every node it saw or added with ranks, scores and fate."""
    rows = []
    for row in stage_rows(stage, labels):
        status = row["status"]
        rows.append(
            f"<tr><td{f' class={status!r}' if status in MARKED_STATUSES else ''}>{status}</td>"
            f'<td class="node">{_e(row["node"])}</td>'
            f'<td class="num">{_or_missing(row["rank_in"])}</td><td class="num">{_or_missing(row["rank_out"])}</td>'
            f'<td class="num">{_score(row["score_in"])}</td><td class="num">{_score(row["score_out"])}</td>'
            f'<td>{_e(row["fate"])}</td><td class="words">{_e(row["text"])}</td></tr>'
        )
    return (
        f"<h3>{_e(stage_label(index, stage.name))}</h3>"
        f'<p class="muted"><code>{_e(stage_params(stage))}</code> · {_e(stage_summary(stage))}</p>'
        '<div class="panel scroll" style="padding:0"><table><thead><tr><th>Status</th><th>Node</th>'
        '<th class="num">Rank in</th><th class="num">Rank out</th><th class="num">Score in</th>'
        f'<th class="num">Score out</th><th>Fate</th><th>Text</th></tr></thead><tbody>{"".join(rows)}</tbody>'
        "</table></div>"
    )


def _config_section(config: PipelineConfig) -> str:
    return (
        '<section id="config"><h2>Configuration</h2>'
        '<p class="muted">Every setting of this run: load it with <code>PipelineConfig.from_json</code> or pass it to '
        "<code>chunkscope split --config</code>.</p>"
        f"<details><summary>Configuration as JSON</summary><pre>{_e(config.to_json())}</pre></details></section>"
    )


# -- small pieces --------------------------------------------------------------------


def _trace_labels(result: QueryResult, index_of: Mapping[str, int]) -> dict[str, str]:
    """``guide.md #4`` for a node of this document; another document's node by its file and span."""
    labels = {}
    for stage_items in [result.retrieved, result.final, *(s.nodes_in + s.nodes_out for s in result.stages)]:
        for item in stage_items:
            node = item.node
            file_name = str(node.metadata.get("file_name", node.doc_id))
            if item.id in index_of:
                labels[item.id] = f"{file_name} #{index_of[item.id]}"
            else:
                labels[item.id] = f"{file_name} · characters {node.start_char:,}–{node.end_char:,}"
    return labels


def _score(score: float | None) -> str:
    return MISSING if score is None else f"{score:.4f}"


def _or_missing(value: int | None) -> str:
    return MISSING if value is None else str(value)


def _file_name(document: Document) -> str:
    return str(document.metadata.get("file_name") or document.id)


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)
