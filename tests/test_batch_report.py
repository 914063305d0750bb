"""The batch report as a person reads it: the progress line, the page's words, and its charts in chromium.

The charts are drawn by plotly when the page loads; each must fit the grid cell it sits in, at a
desktop and a phone width, with the splitter's limit line inside its plot.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from browser_support import WAIT_MS
from hypothesis import given, settings
from hypothesis import strategies as st

from core.batch import Progress, run_batch
from core.cli.batch import progress_text
from core.config import PipelineConfig
from core.splitters import get_splitter

ROOT = Path(__file__).resolve().parent.parent


def test_the_progress_line_counts_bytes_and_says_elapsed_and_time_left():
    state = Progress(files_total=10, files_done=4, nodes=120, bytes=2_500_000, bytes_total=10_000_000)
    state.started -= 5.0  # five seconds in: 2.5 of 10 MB, so 15 s left at this pace
    text = progress_text(state)
    assert text.startswith("files 4/10 · 2.5/10.0 MB · nodes 120 · 0.50 MB/s · 0:05 elapsed · 0:15 left"), text
    finished = Progress(files_total=3, files_skipped=3)
    # A resume with nothing left: no rate, no time left.
    assert progress_text(finished) == "files 3/3 · 0.00/0.00 MB · nodes 0 · 0:00 elapsed"


def _plotly_figure_html(histogram, title, marker, marker_name, key) -> str:
    """The chart as plotly.graph_objects and plotly.io write it: what report_html's own writer must give."""
    import plotly.graph_objects as go
    import plotly.io as pio

    starts, counts = histogram
    width = (starts[1] - starts[0]) if len(starts) > 1 else 1.0
    figure = go.Figure(go.Bar(x=starts, y=counts, width=width * 0.95, offset=0, marker_color="#2563eb", name="nodes"))
    figure.update_xaxes(range=[0, max([(starts[-1] + width) if starts else 1.0, (marker or 0) * 1.05])])
    if marker:
        figure.add_vline(x=marker, line_dash="dash", line_color="#dc2626", annotation_text=marker_name)
    figure.update_layout(
        title=title, autosize=True, height=300, margin={"l": 40, "r": 10, "t": 40, "b": 30}, bargap=0.05,
        # Named: importing Streamlit makes its own template plotly's default in a test process that ran a page.
        template="plotly",
    )
    return pio.to_html(
        figure,
        include_plotlyjs=False,
        full_html=False,
        div_id=f"chart-{key}",
        default_width="100%",
        default_height="300px",
        config={"displaylogo": False, "responsive": True},
    )


def _figure_parts(page: str) -> tuple[str, list, dict, str]:
    """The chart's HTML around its figure, and the figure's data and layout as values."""
    start = page.index("Plotly.newPlot(")
    head = page[:start]
    decoder = json.JSONDecoder()
    text = page[start:]
    at = text.index("[")
    data, end = decoder.raw_decode(text, at)
    at = text.index("{", end)
    layout, end = decoder.raw_decode(text, at)
    return head, data, layout, text[:at].replace(" ", "") + text[end:]


@pytest.mark.parametrize(
    ("histogram", "title", "marker", "name"),
    [
        (([0.0, 25.0, 50.0], [3, 5, 2]), "Node size (characters)", 1000, "limit"),
        (([0.0, 7.0], [1, 0]), "EMBED view </script> (model tokens)", 254, "window"),
        (([i / 20 for i in range(20)], [0] * 19 + [4]), "Coverage per file", None, ""),
        (([], []), "Node size (tokens)", 512, "limit"),
        (([0.0], [9]), "Ünïcode \u2028 title", 3.5, "a/b"),
    ],
)
def test_a_chart_is_the_figure_plotly_writes(histogram, title, marker, name):
    from core.batch.report_html import _bar_chart

    ours, theirs = _bar_chart(histogram, title, marker, name, "t"), _plotly_figure_html(histogram, title, marker, name, "t")
    assert _figure_parts(ours) == _figure_parts(theirs)
    assert "</script>" not in ours.split("<script>", 1)[1][: -len("</script>        </div>")]


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    corpus = tmp_path_factory.mktemp("report") / "corpus"
    corpus.mkdir()
    for name in ("chunking_guide.md", "release_notes.txt"):
        shutil.copy(ROOT / "sample_docs" / name, corpus / name)
    out = corpus.parent / "out"
    config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=400, chunk_overlap=40))
    run_batch([str(corpus)], config, out, workers=1, metrics=True)
    again = run_batch([str(corpus)], config, out, workers=1, metrics=True, resume=True)
    assert again.processed == 0 and again.skipped == 2
    return out


def test_a_runs_own_parts_are_reported_from_its_records_as_from_the_parts(tmp_path: Path):
    """The driver counts its run's parts from the shards' records and reads none back: the same report."""
    from core.batch.report import write_report
    from core.batch.storage import OutputStore

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("chunking_guide.md", "release_notes.txt", "vector_search_faq.html", "splitter_benchmarks.csv"):
        shutil.copy(ROOT / "sample_docs" / name, corpus / name)
    config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=300, chunk_overlap=30))
    for metrics in (False, True):
        out = tmp_path / f"out-{metrics}"
        run_batch([str(corpus)], config, out, workers=2, metrics=metrics, part_rows=7, shard_bytes=4096)
        written = json.loads((out / "report.json").read_text())
        again = shutil.copytree(out, tmp_path / f"again-{metrics}")
        write_report(OutputStore.at(again), config, written["run"])  # no records: every part read
        read = json.loads((again / "report.json").read_text())
        assert len(read["parts"]) > 3
        assert {**written, "corpus": {**written["corpus"], "processing_seconds": 0}} == {
            **read,
            "corpus": {**read["corpus"], "processing_seconds": 0},
        }


def test_a_local_run_imports_no_pyarrow_in_the_driver(tmp_path: Path):
    import subprocess
    import sys

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(ROOT / "sample_docs" / "release_notes.txt", corpus / "notes.txt")
    code = (
        "import sys\n"
        "from core.batch import run_batch\n"
        "from core.config import PipelineConfig\n"
        "from core.splitters import get_splitter\n"
        "config = PipelineConfig(splitter=get_splitter('recursive', chunk_size=300, chunk_overlap=30))\n"
        f"result = run_batch([{str(corpus)!r}], config, {str(tmp_path / 'out')!r}, workers=1)\n"
        "print(result.nodes > 0, 'pyarrow' in sys.modules, 'pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.split() == ["True", "False", "False"]


def test_the_page_says_one_worker_and_a_resume_with_nothing_left_has_no_rate(report_dir: Path):
    report = json.loads((report_dir / "report.json").read_text())
    assert report["run"]["mb_per_s"] is None and report["run"]["files_per_s"] is None
    html = (report_dir / "report.html").read_text()
    assert "on 1 worker ·" in html and "1 workers" not in html
    assert "0.00 MB/s" not in html and "nothing to do" in html


@pytest.mark.browser
@pytest.mark.xdist_group("browser")
@pytest.mark.parametrize("width", [1280, 420])
def test_every_chart_fits_its_cell_and_shows_the_limit(browser, report_dir: Path, width: int):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(WAIT_MS)
    try:
        page.goto((report_dir / "report.html").as_uri(), wait_until="load")
        page.locator(".charts .main-svg").first.wait_for(state="visible")
        cells = page.evaluate(
            """() => [...document.querySelectorAll('.charts > div')].map(cell => {
                const box = cell.getBoundingClientRect();
                const svg = cell.querySelector('.main-svg').getBoundingClientRect();
                const plot = cell.querySelector('.nsewdrag').getBoundingClientRect();
                const lines = [...cell.querySelectorAll('.shapelayer path')].map(p => p.getBoundingClientRect());
                return {cell: [box.left, box.right], svg: [svg.left, svg.right], plot: [plot.left, plot.right],
                        lines: lines.map(l => l.left)};
            })"""
        )
        assert len(cells) == 3
        for chart in cells:
            (left, right), (svg_left, svg_right) = chart["cell"], chart["svg"]
            assert left - 1 <= svg_left and svg_right <= right + 1, chart
            assert svg_right - svg_left >= 0.9 * (right - left), chart  # it fills the cell too
        # The size chart's limit and the EMBED chart's window are drawn inside their plots.
        for chart in cells[:2]:
            (line,) = chart["lines"]
            assert chart["plot"][0] <= line <= chart["plot"][1], chart
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        page.close()


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("<>&\"'ab \u00e9/=;#x")))
def test_the_pages_escape_is_htmls(text):
    import html

    from core.batch.report_html import escape

    assert escape(text) == html.escape(text, quote=True)


def test_file_names_and_failure_reasons_are_text_on_the_page(tmp_path: Path):
    """A file name or a reason is untrusted: it shows as the characters it holds, never as markup."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "<img src=x onerror=alert(1)>.md").write_text("# Title\n\nSome text about chunking.\n")
    (corpus / "<b onclick=x>broken.pdf").write_bytes(b"%PDF-1.7 <script>alert(2)</script> not a PDF")
    out = tmp_path / "out"
    config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=400, chunk_overlap=40))
    result = run_batch([str(corpus)], config, out, workers=1)
    assert result.failed == 1
    page = (out / "report.html").read_text(encoding="utf-8")
    body = page.split("</script>")[-1]  # after plotly.js and the charts' scripts: the cards and tables
    assert "&lt;img src=x onerror=alert(1)&gt;.md" in body and "<img" not in body
    assert "&lt;b onclick=x&gt;broken.pdf" in body and "<b " not in body


def test_the_report_streams_the_manifest_to_the_rows_and_bytes_it_holds(tmp_path: Path, monkeypatch):
    """write_report reads the manifest a block at a time and spools report.json's rows (to a file past
    ROWS_IN_MEMORY). Its rows and failures are the manifest's inputs, the last line of each (an older resume's
    manifest may hold two; a torn last line is no line), in order; cut into blocks of a few lines and spilled at
    once, it writes the same bytes as in one block in memory."""
    from core.batch import manifest as manifest_module
    from core.batch import read_manifest, report_inputs
    from core.batch.report import write_report
    from core.batch.storage import OutputStore

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("chunking_guide.md", "release_notes.txt", "vector_search_faq.html", "splitter_benchmarks.csv"):
        shutil.copy(ROOT / "sample_docs" / name, corpus / name)
    shutil.copy(ROOT / "sample_docs" / "chunking_guide.md", corpus / "same_bytes.md")
    (corpus / "broken.pdf").write_bytes(b"not a pdf\n" * 20)
    config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=300, chunk_overlap=30))
    for metrics in (False, True):
        out = tmp_path / f"out-{metrics}"
        run = run_batch([str(corpus)], config, out, workers=1, metrics=metrics).report["run"]
        lines = (out / "manifest.jsonl").read_text(encoding="utf-8").split("\n")[:-1]
        first = next(json.loads(line) for line in lines if '"kind": "input"' in line and '"status": "ok"' in line)
        for manifest in ("as written", "an input twice"):
            if manifest == "an input twice":
                again = json.dumps({**first, "seconds": 7.5}, ensure_ascii=False)
                (out / "manifest.jsonl").write_text("\n".join([*lines, again, '{"source": "torn']), encoding="utf-8")
            inputs = {}
            for line in read_manifest(out / "manifest.jsonl"):
                if line["kind"] == "input":
                    inputs.pop(line["path"], None)
                    inputs[line["path"]] = line
            written = []
            for block_bytes, rows_in_memory in ((manifest_module.BLOCK_BYTES, report_inputs.ROWS_IN_MEMORY), (300, 64)):
                monkeypatch.setattr(manifest_module, "BLOCK_BYTES", block_bytes)
                monkeypatch.setattr(report_inputs, "ROWS_IN_MEMORY", rows_in_memory)
                returned = write_report(OutputStore.at(out), config, run)
                assert "documents" not in returned  # report.json holds the rows
                written.append(((out / "report.json").read_bytes(), (out / "report.html").read_bytes()))
            assert written[0] == written[1]
            report = json.loads(written[0][0])
            ok = [line for line in inputs.values() if line["status"] == "ok"]
            assert [(d["path"], d["seconds"], d["metrics"]) for d in report["documents"]] == [
                (line["path"], line["seconds"], line["metrics"]) for line in ok
            ]
            assert [f["source"] for f in report["failed"]] == [
                line["source"] for line in inputs.values() if line["status"] != "ok"
            ]
            assert report["corpus"]["nodes"] == sum(line["nodes"] for line in ok)
            assert report["same_content"] == [sorted(str(corpus / n) for n in ("chunking_guide.md", "same_bytes.md"))]
        assert report["documents"][-1]["seconds"] == 7.5


def test_a_file_name_with_a_line_separator_keeps_its_one_manifest_line(tmp_path: Path):
    """JSON leaves U+2028, U+2029 and U+0085 unescaped in a string: the manifest is cut at "\\n" alone, so such a
    name is still one line, in the report and for --resume (str.splitlines cut it in two, and the file was lost)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    names = ["line\u2028separator.txt", "paragraph\u2029separator.txt", "next\x85line.txt"]
    for name in names:
        (corpus / name).write_text("Text about chunk overlap and retrieval. " * 20)
    out = tmp_path / "out"
    config = PipelineConfig(splitter=get_splitter("recursive", chunk_size=300, chunk_overlap=30))
    result = run_batch([str(corpus)], config, out, workers=1)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert sorted(Path(d["source"]).name for d in report["documents"]) == sorted(names)
    assert result.report["corpus"]["files_ok"] == 3
    again = run_batch([str(corpus)], config, out, workers=1, resume=True)
    assert (again.processed, again.skipped) == (0, 3)
