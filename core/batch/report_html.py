"""``report.html``: the batch report's data (:func:`core.batch.report.build_report`) as one offline page.

Cards, size histograms (plotly, inlined once, each drawn at the width of its grid cell) and the
tables; every file name and reason is escaped.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.measure.window import unit_name

TOP = 10  # groups of same-content files shown: TOP * 10
HTML_DOCUMENT_ROWS = 1_000  # rows of the per-document table in the page (report.json holds all)

_CSS = """<style>
body{margin:0;background:#f8fafc;color:#0f172a;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1240px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:1.6rem;margin:0 0 4px}
h2{font-size:1.15rem;margin:30px 0 8px;padding-top:6px;border-top:1px solid #e2e8f0}
.muted{color:#475569;font-size:.86rem}
.warn{color:#b45309;font-weight:600}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px}
.card{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:10px 14px}
.card .label{font-size:.8rem;color:#475569}
.card .value{font-size:1.5rem;font-weight:600}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.84rem;background:#fff}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid #eef2f7}
th{background:#f1f5f9}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.path{word-break:break-all}
/* auto-fill keeps the empty tracks: a chart drawn before the next cells exist already has its final width */
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(380px,100%),1fr));gap:12px}
.charts>div{min-width:0;background:#fff;border:1px solid #e2e8f0;border-radius:10px;overflow:hidden}
</style>"""


def escape(text: str) -> str:
    """``html.escape(text, quote=True)``, without importing ``html``: its entity table is ~2 ms of the driver."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#x27;")


def _e(value: Any) -> str:
    return escape(str(value))


def report_html(report: dict[str, Any], plotly_js: str | None = None) -> str:
    """One self-contained page: cards, size and coverage histograms (plotly, inlined), the tables."""

    run = report["run"]
    unit = unit_name(report["size_unit"])
    limit = report["size_limit"]
    workers = run.get("workers", "")
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        "<title>ChunkScope corpus report</title>",
        _CSS,
        f"<script>{_plotly_js() if plotly_js is None else plotly_js}</script>",
        "</head><body><main>",
        "<h1>Corpus report</h1>",
        f"<p class='muted'>splitter <code>{_e(report['splitter'])}</code> · config <code>{_e(report['config_key'])}</code>"
        f" · engine {_e(run.get('engine', ''))} on {_e(workers)} {'worker' if workers == 1 else 'workers'}"
        f" · limit {_e(limit if limit is not None else '—')} {_e(unit)} · embedding window {report['window_tokens']} model tokens</p>",
    ]
    if not report["complete"]:
        parts.append(
            "<p class='warn'>This run was interrupted: the report covers what was written (rerun with --resume).</p>"
        )
    if not report.get("metrics", True):
        parts.append(
            "<p class='muted'>Sizes only: coverage, overlap, model tokens and lint flags are measured with "
            "<code>--metrics</code>.</p>"
        )
    parts.append(
        "<div class='cards'>"
        + "".join(
            f"<div class='card'><div class='label'>{_e(k)}</div><div class='value'>{_e(v)}</div></div>"
            for k, v in _cards(report, unit)
        )
        + "</div>"
    )
    parts.append("<h2>Sizes</h2><div class='charts'>")
    hist = report["histograms"]
    parts.append(_bar_chart(hist["tokens"], f"Node size ({unit})", limit, "limit", "t"))
    if hist.get("embed_tokens") is not None:
        parts.append(_bar_chart(hist["embed_tokens"], "EMBED view (model tokens)", report["window_tokens"], "window", "w"))
    if hist.get("coverage") is not None:
        parts.append(_bar_chart(hist["coverage"], "Coverage per file", None, "", "c"))
    parts.append("</div>")
    parts.extend(_tables(report))
    parts.append("</main></body></html>")
    return "\n".join(parts)


def _share(value: float | None, spec: str = ".0%") -> str:
    return "—" if value is None else format(value, spec)


def _cards(report: dict[str, Any], unit: str) -> list[tuple[str, str]]:
    corpus, run = report["corpus"], report["run"]
    rate = (
        f"{run['mb_per_s']:,.2f} MB/s · {run['files_per_s']:,.1f} files/s"
        if run.get("mb_per_s") is not None
        else "— (nothing to do)"
    )
    return [
        ("Files", f"{corpus['files_ok']:,} ok · {corpus['files_failed']:,} failed"),
        ("Nodes", f"{corpus['nodes']:,}"),
        ("Corpus", f"{corpus['bytes'] / 1e6:,.1f} MB"),
        (f"Mean size ({unit})", f"{corpus['tokens']['mean']:,.0f} · p95 {corpus['tokens']['p95']:,.0f}"),
        ("Coverage", _share(corpus["coverage"], ".1%")),
        ("Overlap", _share(corpus["overlap"], ".1%")),
        ("Mid-sentence", _share(corpus["mid_sentence"])),
        ("Over window", _share(corpus["over_window"])),
        ("Over limit", _share(corpus["over_limit"])),
        ("Throughput", rate),
        ("Same content", f"{corpus['files_sharing_content']:,} files"),
        *_llm_card(report.get("llm")),
    ]


def _llm_card(spend: dict[str, int] | None) -> list[tuple[str, str]]:
    """The LLM extractors' card: requests sent, replies from the cache, tokens (none without LLM extractors)."""
    if not spend:
        return []
    return [
        (
            "LLM extractors",
            f"{spend['requests']:,} requests · {spend['cached']:,} cached · "
            f"{spend['prompt_tokens']:,} + {spend['completion_tokens']:,} tokens",
        )
    ]


def _tables(report: dict[str, Any]) -> list[str]:
    """The page's tables: lint flags, slowest and largest, same content, failures, documents."""
    corpus = report["corpus"]
    parts = []
    if report.get("metrics", True):
        flags = [[k, v] for k, v in corpus["flags"].items()]
        parts.append("<h2>Lint flags</h2>" + _table(["flag", "nodes"], flags, numeric={1}))
    for title, key in (("Slowest documents", "slowest"), ("Largest documents", "largest")):
        rows = [[r["source"], f"{r['seconds']:.3f}", f"{r['bytes']:,}", f"{r['nodes']:,}"] for r in report[key]]
        parts.append(f"<h2>{title}</h2>" + _table(["file", "seconds", "bytes", "nodes"], rows, numeric={1, 2, 3}))
    same = report.get("same_content", [])
    if same:
        parts.append(
            f"<h2>Same content ({corpus['files_sharing_content']:,} files in {len(same):,} groups)</h2>"
            "<p class='muted'>Files with identical bytes; "
            + (
                "they share their document and node ids (--content-ids).</p>"
                if report["ids"] == "content"
                else "each has ids of its own (its path inside the input folder is in them).</p>"
            )
        )
        parts.append(_table(["files with the same bytes"], [[", ".join(group)] for group in same[: TOP * 10]]))
    failed = report["failed"]
    parts.append(f"<h2>Failed files ({len(failed):,})</h2>")
    parts.append(
        _table(["file", "reason"], [[f["source"], f["reason"]] for f in failed])
        if failed
        else "<p class='muted'>None.</p>"
    )
    documents, count = report["documents"], report["corpus"]["files_ok"]  # a row a file read
    parts.append(f"<h2>Documents ({count:,})</h2>")
    if count > HTML_DOCUMENT_ROWS:
        parts.append(f"<p class='muted'>The first {HTML_DOCUMENT_ROWS:,}; report.json lists every one.</p>")
    headers = ["file", "nodes", "mean size", "p95", "coverage", "overlap", "mid-sentence", "over window", "seconds"]
    rows = []
    for d in documents[:HTML_DOCUMENT_ROWS]:
        m = d["metrics"]
        rows.append(
            [
                d["source"],
                f"{d['nodes']:,}",
                f"{m['tokens']['mean']:,.0f}",
                f"{m['tokens']['p95']:,.0f}",
                _share(m.get("coverage"), ".1%"),
                _share(m.get("overlap"), ".1%"),
                _share(m.get("mid_sentence")),
                _share(m.get("over_window")),
                f"{d['seconds']:.3f}",
            ]
        )
    parts.append(_table(headers, rows, numeric=set(range(1, 9))))
    return parts


def _table(headers: list[str], rows: list[list[Any]], numeric: set[int] = frozenset()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    width = max([len(headers), *map(len, rows)])
    cells = ["<td class='num'>{}</td>" if i in numeric else "<td class='path'>{}</td>" for i in range(width)]
    # One format string a row length (rows of a table are as long as its headers): every value escaped.
    formats: dict[int, str] = {}
    parts = []
    for row in rows:
        line = formats.get(len(row))
        if line is None:
            line = formats[len(row)] = "<tr>" + "".join(cells[: len(row)]) + "</tr>"
        parts.append(line.format(*[escape(str(value)) for value in row]))
    body = "".join(parts)
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def report_html_chunks(report: dict[str, Any]) -> list[bytes]:
    """:func:`report_html` as UTF-8 in three chunks, plotly.js inlined from its file's bytes (not decoded and
    encoded again, nor joined to the rest: it is 4.8 MB of the page's 5). ``report["documents"]``: at least
    the first :data:`HTML_DOCUMENT_ROWS` rows (the page lists no more)."""
    marker = "\x00plotly.js\x00"
    head, tail = report_html(report, plotly_js=marker).split(marker)
    return [head.encode("utf-8"), (_plotly_data() / "plotly.min.js").read_bytes(), tail.encode("utf-8")]


def _bar_chart(histogram: Any, title: str, marker: float | None, marker_name: str, key: str) -> str:
    """A histogram that fills its grid cell and follows it when the window is resized.

    The x axis spans every bin and the marker (a limit beyond the largest node still shows); the
    figure has no width of its own: plotly sizes it to the cell (``responsive``), which a grid
    item lets shrink (``min-width: 0`` in the CSS).

    The figure ``plotly.graph_objects`` would make (a bar trace, a dashed ``add_vline`` with its
    annotation, plotly's default template) written as ``plotly.io.to_html`` writes it, without
    building it through plotly's validators: 0.1 CPU-s at the end of every batch, when the driver's
    time is the run's (tests/test_batch_report.py compares the two).
    """
    starts, counts = histogram
    width = (starts[1] - starts[0]) if len(starts) > 1 else 1.0
    bar = {"marker": {"color": "#2563eb"}, "name": "nodes", "offset": 0, "width": width * 0.95}
    data = [{**bar, "x": list(starts), "y": list(counts), "type": "bar"}]
    top = max([(starts[-1] + width) if starts else 1.0, (marker or 0) * 1.05])
    layout: dict[str, Any] = {"template": _plotly_template(), "xaxis": {"range": [0, top]}}
    if marker:
        line = {"color": "#dc2626", "dash": "dash"}
        layout["shapes"] = [
            {"line": line, "type": "line", "x0": marker, "x1": marker, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain"}
        ]
        layout["annotations"] = [
            {
                "showarrow": False,
                "text": marker_name,
                "x": marker,
                "xanchor": "left",
                "xref": "x",
                "y": 1,
                "yanchor": "top",
                "yref": "y domain",
            }
        ]
    layout.update(
        margin={"l": 40, "r": 10, "t": 40, "b": 30},
        title={"text": title},
        autosize=True,
        height=300,
        bargap=0.05,
    )
    div = f"chart-{key}"
    config = json.dumps({"displaylogo": False, "responsive": True})
    script = (
        f'                if (document.getElementById("{div}")) {{'
        f'                    Plotly.newPlot(                        "{div}",                        {_plotly_json(data)},'
        f"                        {_plotly_json(layout)},                        {config}                    )"
        "                }"
    )
    return (
        '<div style="height:300px; width:100%;">                            '
        f'<div id="{div}" class="plotly-graph-div" style="height:100%; width:100%;"></div>'
        "            <script>                window.PLOTLYENV=window.PLOTLYENV || {};                "
        f"{script};            </script>        </div>"
    )


# What plotly.io's JSON escapes, so that no text in a figure can end the <script> it sits in.
_JSON_SWAPS = (("<", "\\u003c"), (">", "\\u003e"), ("/", "\\u002f"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def _plotly_json(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"))
    for unsafe, safe in _JSON_SWAPS:
        text = text.replace(unsafe, safe)
    return text


@lru_cache(maxsize=1)
def _plotly_template() -> dict[str, Any]:
    """plotly's default template ("plotly"), as plotly.py ships it and puts in a figure's layout."""
    template = json.loads((_plotly_data() / "templates" / "plotly.json").read_text(encoding="utf-8"))
    return {"data": template["data"], "layout": template["layout"]}


def _plotly_data() -> Path:
    """plotly's package_data folder, found without importing plotly (its package imports a dozen modules)."""
    import importlib.util

    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("plotly is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "package_data"
