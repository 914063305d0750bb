"""Write the two PDFs the parser tests, benchmarks and samples read, from our own sample prose.

* ``tests/fixtures/table_report.pdf``: two pages typeset with fpdf2 — headings in a
  larger bold font, paragraphs, and a ruled table made from the first rows of
  ``sample_docs/splitter_benchmarks.csv`` (a header row and eight body rows).
* ``sample_docs/scanned_handbook_page.pdf``: one page with no text layer, as a
  scanner makes it: Pillow draws a passage of ``scripts/sample_sources/rag_handbook.md``
  onto a white 200 dpi image (Pillow's bundled Aileron font, so every machine draws
  the same pixels) and wraps the image as a PDF. It is a sample, so a first visit
  shows a page read by OCR.

Usage (from the repository root)::

    .venv/bin/python scripts/make_pdf_fixtures.py
"""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF
from fpdf.enums import XPos, YPos
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SAMPLES = ROOT / "sample_docs"
HANDBOOK = ROOT / "scripts" / "sample_sources" / "rag_handbook.md"
BENCHMARKS = ROOT / "sample_docs" / "splitter_benchmarks.csv"
# A fixed date so that regenerating gives the same bytes.
CREATION_DATE = datetime(2024, 1, 1, tzinfo=UTC)

TABLE_ROWS = 9  # the header and eight body rows
TABLE_COLUMNS = ("splitter", "chunk_size", "chunk_overlap", "num_chunks", "hit_rate_at_5", "mrr")
# The passage the scanned page shows (a section of the handbook, by its heading).
SCANNED_SECTION = "What an embedding captures"
SCAN_DPI = 200
SCAN_WIDTH, SCAN_HEIGHT = 1654, 2339  # A4 at 200 dpi
SCAN_MARGIN = 150
SCAN_FONT_SIZE = 34


def handbook_section(heading: str) -> list[str]:
    """The paragraphs under ``### heading`` in the handbook's Markdown source."""
    text = HANDBOOK.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#)", text, flags=re.S | re.M)
    if match is None:
        raise SystemExit(f"no section {heading!r} in {HANDBOOK}")
    return [" ".join(p.split()) for p in match.group(1).split("\n\n") if p.strip()]


def benchmark_rows() -> list[list[str]]:
    with BENCHMARKS.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [list(TABLE_COLUMNS)] + [[row[column] for column in TABLE_COLUMNS] for row in rows[: TABLE_ROWS - 1]]


def table_pdf() -> bytes:
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_creation_date(CREATION_DATE)
    pdf.set_title("Splitter settings compared")
    pdf.set_author("ChunkScope test fixtures")
    pdf.set_margins(left=20, top=20, right=20)
    width = pdf.w - pdf.l_margin - pdf.r_margin

    def heading(text: str, size: int) -> None:
        pdf.set_font("Helvetica", "B", size)
        pdf.multi_cell(width, size * 0.5, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.ln(2)

    def paragraph(text: str) -> None:
        pdf.set_font("Helvetica", "", 11)
        pdf.multi_cell(width, 5.6, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.ln(3)

    pdf.add_page()
    heading("Splitter settings compared", 20)
    paragraph(
        "This report lists how each splitter setting scored on the sample queries. Every row is one "
        "configuration: the splitter, its chunk size and overlap, how many chunks it made, and how often "
        "the right passage was among the first five results."
    )
    heading("Results by configuration", 14)
    pdf.set_font("Helvetica", "", 10)
    with pdf.table(text_align="LEFT", line_height=6) as table:
        for values in benchmark_rows():
            row = table.row()
            for value in values:
                row.cell(value)
    pdf.ln(4)
    paragraph(
        "Larger chunks find the right passage more often but hand the model more text to read, so the "
        "hit rate alone does not pick a winner."
    )
    pdf.add_page()
    heading("What the numbers do not say", 14)
    for text in handbook_section("Choosing a model"):
        paragraph(text)
    return bytes(pdf.output())


def wrap(draw: ImageDraw.ImageDraw, text: str, font: ImageFont.FreeTypeFont, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        candidate = f"{line} {word}".strip()
        if line and draw.textlength(candidate, font=font) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    return [*lines, line] if line else lines


def scanned_pdf() -> bytes:
    image = Image.new("L", (SCAN_WIDTH, SCAN_HEIGHT), 255)
    draw = ImageDraw.Draw(image)
    title_font = ImageFont.load_default(size=SCAN_FONT_SIZE + 12)
    font = ImageFont.load_default(size=SCAN_FONT_SIZE)
    y = SCAN_MARGIN
    draw.text((SCAN_MARGIN, y), SCANNED_SECTION, font=title_font, fill=0)
    y += int((SCAN_FONT_SIZE + 12) * 2.2)
    for paragraph in handbook_section(SCANNED_SECTION):
        for line in wrap(draw, paragraph, font, SCAN_WIDTH - 2 * SCAN_MARGIN):
            draw.text((SCAN_MARGIN, y), line, font=font, fill=0)
            y += int(SCAN_FONT_SIZE * 1.5)
        y += SCAN_FONT_SIZE
    out = io.BytesIO()
    # Pillow writes the image as the page's only content: no text layer, as a scanner would.
    image.save(
        out, format="PDF", resolution=SCAN_DPI, title="Scanned handbook page",
        creationDate=CREATION_DATE.timetuple(), modDate=CREATION_DATE.timetuple(),
    )
    return out.getvalue()


def main() -> None:
    for path, data in (
        (FIXTURES / "table_report.pdf", table_pdf()),
        (SAMPLES / "scanned_handbook_page.pdf", scanned_pdf()),
    ):
        path.write_bytes(data)
        print(f"wrote {path} ({len(data):,} bytes)")


if __name__ == "__main__":
    main()
