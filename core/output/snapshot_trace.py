"""The snapshot's query trace: the query, the funnel of node counts, retrieval's ranking, each stage, the final context.

The rows and labels are :mod:`core.query.trace_view`'s, the same the Query page shows;
this module only writes them as static, escaped HTML.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.output.snapshot_page import esc as _e
from core.query.chain import QueryResult, StageTrace, final_context
from core.query.trace_view import (
    MARKED_STATUSES,
    MISSING,
    retrieval_rows,
    stage_label,
    stage_labels,
    stage_params,
    stage_rows,
    stage_summary,
)


def query_section(result: QueryResult, index_of: Mapping[str, int]) -> str:
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
