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
