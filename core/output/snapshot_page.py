"""The snapshot page's frame: its Content-Security-Policy, its one stylesheet, and the escaping every piece goes through.

Everything the page shows is drawn from spans and counts in :mod:`core.output.snapshot`
and :mod:`core.output.snapshot_trace`; what it may load is decided here, once.
"""

from __future__ import annotations

import html
from typing import Any

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


def esc(text: Any) -> str:
    """``text`` as HTML-escaped text, quotes included: document text, names and settings are untrusted."""
    return html.escape(str(text), quote=True)
