"""What a query's trace shows, as plain data and escaped HTML: labels, stage rows, summaries, pictures of text.

Built from a :class:`core.query.chain.QueryResult` for the Query page (:mod:`ui.query`
draws these, :mod:`ui.trace` adds its figures) and for the snapshot
(:mod:`core.output.snapshot`). Every piece of node text that goes into HTML is
escaped (document text is untrusted).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from core.postprocessors import SentenceSelection
from core.query.chain import QueryResult, StageTrace, TextChange
from core.schema import Document, Node, numbers_in_document

FIRST_WORDS = 90
# A stage table's columns, in order; ``status`` is what :func:`status_of` reads off the fate.
STAGE_TABLE_COLUMNS = ("status", "node", "rank_in", "rank_out", "score_in", "score_out", "fate", "text")
# The statuses a stage table marks; a node moved, rescored or rewritten is ``kept``.
MARKED_STATUSES = ("dropped", "added")
# What a stage table shows where a node has no rank or score (dropped: none out; added: none in).
MISSING = "—"

CSS = """<style>
.cs-trace{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:0.8rem;line-height:1.7;
  white-space:pre-wrap;word-break:break-word;padding:10px 12px;border:1px solid #e2e8f0;border-radius:8px;
  background:#ffffff;color:#0f172a;margin-bottom:8px;max-height:320px;overflow-y:auto}
.cs-trace .kept{background:#bbf7d0;border-radius:2px}
.cs-trace .removed{color:#94a3b8;text-decoration:line-through}
.cs-trace .window{background:#fef08a;border-radius:2px}
.cs-trace .focus{background:#f59e0b;color:#111827;border-radius:2px}
.cs-trace .head{display:block;font-family:system-ui,sans-serif;font-size:0.78rem;color:#475569;margin-bottom:4px;
  white-space:normal}
.cs-trace .sim{font-family:system-ui,sans-serif;font-size:0.62rem;color:#334155;background:#f1f5f9;
  border:1px solid #cbd5e1;border-radius:3px;padding:0 3px;margin-left:2px;vertical-align:1px;text-decoration:none;
  display:inline-block}
</style>"""


# -- labels and tables --------------------------------------------------------------


def node_labels(nodes: Sequence[Node]) -> dict[str, str]:
    """``chunking_guide.md #4``: a node's file and its number within that file (as the Chunks page counts)."""
    numbers = numbers_in_document(nodes)
    return {node.id: f"{node.metadata.get('file_name', node.doc_id)} #{numbers[node.id]}" for node in nodes}


def first_words(text: str, width: int = FIRST_WORDS) -> str:
    words = " ".join(text.split())
    return words if len(words) <= width else words[: width - 1].rstrip() + "…"


def stage_label(index: int, name: str) -> str:
    """``2 · long_context_reorder``: the stage's place in the chain (a postprocessor may appear twice)."""
    return f"{index} · {name}"


def retrieval_rows(result: QueryResult, labels: Mapping[str, str]) -> list[dict[str, Any]]:
    """One row per retrieved node, best first."""
    return [
        {
            "rank": rank,
            "node": labels.get(item.id, item.id),
            "score": item.score,
            "text": first_words(item.node.text),
        }
        for rank, item in enumerate(result.retrieved, start=1)
    ]


def stage_rows(stage: StageTrace, labels: Mapping[str, str]) -> list[dict[str, Any]]:
    """One row per node the stage saw or added: ranks and scores before and after, and its fate.

    Rows follow the stage's input order; nodes the stage added come last, in output order.
    """
    rank_in = {item.id: rank for rank, item in enumerate(stage.nodes_in, start=1)}
    out_by_id = {item.id: (rank, item) for rank, item in enumerate(stage.nodes_out, start=1)}
    # Reasons may name other nodes by id (prev_next: "it comes 1 node after <id>").
    mentioned = [item.id for item in [*stage.nodes_in, *stage.nodes_out]]
    rows = []
    seen = set()
    for item in [*stage.nodes_in, *(i for i in stage.nodes_out if i.id not in rank_in)]:
        if item.id in seen:
            continue
        seen.add(item.id)
        rank_out, after = out_by_id.get(item.id, (None, None))
        fate = readable(stage.fate(item.id), mentioned, labels)
        rows.append(
            {
                "status": status_of(fate),
                "node": labels.get(item.id, item.id),
                "rank_in": rank_in.get(item.id),
                "rank_out": rank_out,
                "score_in": item.score if item.id in rank_in else None,
                "score_out": after.score if after is not None else None,
                "fate": fate,
                "text": first_words((after or item).node.text),
            }
        )
    return rows


def status_of(fate: str) -> str:
    """``dropped`` / ``added`` / ``kept`` from a fate line (moved and changed nodes are kept)."""
    head = fate.split(":", 1)[0]
    return head if head in MARKED_STATUSES else "kept"


def readable(fate: str, node_ids: Sequence[str], labels: Mapping[str, str]) -> str:
    """A fate line with the node ids it mentions written as their labels."""
    for node_id in node_ids:
        if node_id in fate and node_id in labels:
            fate = fate.replace(node_id, labels[node_id])
    return fate


def stage_params(stage: StageTrace) -> str:
    """``top_n=3``: the stage's parameters as Python writes them, leaving out the empty ones (an empty keyword
    list is no setting a reader needs to see); ``no parameters`` when none is left."""
    shown = {key: value for key, value in stage.params.items() if value is not None and value not in ("", [], (), {})}
    return ", ".join(f"{key}={value!r}" for key, value in shown.items()) or "no parameters"


def stage_summary(stage: StageTrace) -> str:
    """``5 in → 3 out · 2 dropped · 1 moved``."""
    parts = [f"{len(stage.nodes_in)} in → {len(stage.nodes_out)} out"]
    for count, word in (
        (len(stage.dropped), "dropped"),
        (len(stage.added), "added"),
        (len(stage.position_changes), "moved"),
        (len(stage.score_changes), "rescored"),
        (len(stage.text_changes), "text changed"),
    ):
        if count:
            parts.append(f"{count} {word}")
    if stage.idle_reason:
        parts.append(f"changed nothing: {stage.idle_reason}")
    return " · ".join(parts)


def chain_summary(result: QueryResult, mode: str, node_count: int) -> str:
    """A markdown list: what retrieval found, then one line per stage with its summary."""
    lines = [f"- **retrieval** ({mode}): {len(result.retrieved)} of {node_count:,} nodes"]
    for index, stage in enumerate(result.stages, start=1):
        lines.append(f"- **{stage_label(index, stage.name)}**: {stage_summary(stage)}")
    return "\n".join(lines)


def stage_labels(result: QueryResult) -> list[str]:
    """Each stage's :func:`stage_label`, in chain order."""
    return [stage_label(index, stage.name) for index, stage in enumerate(result.stages, start=1)]


def tab_names(result: QueryResult) -> list[str]:
    """``Retrieval`` and then each stage's label, one tab each."""
    return ["Retrieval", *stage_labels(result)]


# -- text pictures (escaped HTML) ---------------------------------------------------


def sentences_html(text: str, selection: SentenceSelection, heading: str) -> str:
    """A node's text with the optimizer's kept sentences highlighted and removed ones struck through.

    Spans are offsets into ``text`` (the node's text before the optimizer);
    each sentence carries its similarity to the query.
    """
    marked = sorted([(span, "kept") for span in selection.kept] + [(span, "removed") for span in selection.removed])
    parts = [f'<span class="head">{html.escape(heading)}</span>']
    cursor = 0
    for index, ((start, end), kind) in enumerate(marked):
        parts.append(html.escape(text[cursor:start]))
        similarity = f"{selection.scores[index]:.2f}" if index < len(selection.scores) else ""
        title = f"{kind} · similarity to the query {similarity}" if similarity else kind
        parts.append(
            f'<span class="{kind}" title="{html.escape(title, quote=True)}">{html.escape(text[start:end])}</span>'
        )
        if similarity:
            parts.append(f'<span class="sim">{similarity}</span>')
        cursor = end
    parts.append(html.escape(text[cursor:]))
    return f'<div class="cs-trace">{"".join(parts)}</div>'


def window_offset(change: TextChange, node: Node, document: Document | None) -> int | None:
    """Where the replaced sentence sits inside its window, or None when that cannot be told exactly.

    The window is a slice of the document holding the node's span, so it starts
    no earlier than ``end_char - len(window)`` and no later than ``start_char``;
    any occurrence of the window text in that range puts the sentence at the same place.
    """
    window, sentence = change.after, change.before
    if document is not None and document.text[node.start_char : node.end_char] == sentence:
        lowest = max(0, node.end_char - len(window))
        found = document.text.find(window, lowest, node.start_char + len(window))
        if found != -1 and found <= node.start_char:
            return node.start_char - found
    # The text was changed by an earlier stage: only an unambiguous match will do.
    if sentence and window.count(sentence) == 1:
        return window.index(sentence)
    return None


def window_html(change: TextChange, offset: int | None, heading: str) -> str:
    """The window that replaced the node's text, with the original sentence marked inside it."""
    window, sentence = change.after, change.before
    parts = [f'<span class="head">{html.escape(heading)}</span>']
    if offset is None:
        parts.append(f'<span class="window">{html.escape(window)}</span>')
    else:
        end = offset + len(sentence)
        parts.append(f'<span class="window">{html.escape(window[:offset])}</span>')
        parts.append(f'<span class="focus" title="the retrieved sentence">{html.escape(window[offset:end])}</span>')
        parts.append(f'<span class="window">{html.escape(window[end:])}</span>')
    return f'<div class="cs-trace">{"".join(parts)}</div>'


def sentence_views(stage: StageTrace, labels: Mapping[str, str]) -> list[str]:
    """:func:`sentences_html` for every node the sentence optimizer trimmed, in the stage's order."""
    before = {item.id: item for item in stage.nodes_in}
    views = []
    for node_id, selection in stage.sentences.items():
        total = len(selection.kept) + len(selection.removed)
        heading = f"{labels.get(node_id, node_id)} · kept {len(selection.kept)} of {total} sentences"
        views.append(sentences_html(before[node_id].node.text, selection, heading))
    return views


def window_views(stage: StageTrace, labels: Mapping[str, str], documents: Sequence[Document]) -> list[str]:
    """:func:`window_html` for every node whose text the stage replaced, in the stage's order."""
    before = {item.id: item for item in stage.nodes_in}
    docs_by_id = {doc.id: doc for doc in documents}
    views = []
    for change in stage.text_changes:
        node = before[change.id].node
        offset = window_offset(change, node, docs_by_id.get(node.doc_id))
        views.append(window_html(change, offset, f"{labels.get(change.id, change.id)} · {change.reason}"))
    return views
