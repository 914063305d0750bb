"""Render scripts/sample_sources/rag_handbook.md into sample_docs/rag_handbook.pdf.

The source is a small subset of Markdown:

* ``#``, ``##`` and ``###`` headings
* paragraphs separated by blank lines
* bullet items starting with ``- `` and numbered items such as ``1. ``
* ``**bold**`` spans inside paragraphs and list items

The PDF uses the built-in core fonts (Helvetica), which only cover latin-1,
so typographic characters are mapped to plain equivalents before rendering.
Page numbers are printed in the footer of every page.

Usage (from the repository root)::

    .venv/bin/python scripts/make_sample_pdf.py [SOURCE_MD] [OUTPUT_PDF]
"""

from __future__ import annotations

import re
import sys
from datetime import datetime, timezone
from pathlib import Path

from fpdf import FPDF
from fpdf.enums import XPos, YPos

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = ROOT / "scripts" / "sample_sources" / "rag_handbook.md"
DEFAULT_OUTPUT = ROOT / "sample_docs" / "rag_handbook.pdf"

# Fixed metadata date so regenerating the file gives a stable result.
CREATION_DATE = datetime(2024, 1, 1, tzinfo=timezone.utc)

REPLACEMENTS = {
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
    "\u2013": "-", "\u2014": " - ", "\u2026": "...", "\u00a0": " ",
    "\u2022": "-", "\u2192": "->", "\u2264": "<=", "\u2265": ">=",
}


def to_latin1(text: str) -> str:
    """Replace characters the core fonts cannot encode."""
    for src, dst in REPLACEMENTS.items():
        text = text.replace(src, dst)
    return text.encode("latin-1", errors="replace").decode("latin-1")


class HandbookPDF(FPDF):
    """FPDF subclass with a running header and a page-number footer."""

    def __init__(self, title: str) -> None:
        super().__init__(orientation="P", unit="mm", format="A4")
        self.doc_title = title
        self.set_margins(left=22, top=20, right=22)
        self.set_auto_page_break(auto=True, margin=20)

    def header(self) -> None:
        if self.page_no() == 1:
            return
        self.set_font("Helvetica", "I", 8)
        self.set_text_color(120, 120, 120)
        self.cell(0, 6, self.doc_title, align="R",
                  new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.set_text_color(0, 0, 0)
        self.ln(2)

    def footer(self) -> None:
        self.set_y(-14)
        self.set_font("Helvetica", "", 9)
        self.set_text_color(100, 100, 100)
        self.cell(0, 8, f"Page {self.page_no()} of {{nb}}", align="C")
        self.set_text_color(0, 0, 0)


def parse_blocks(markdown: str) -> list[tuple[str, str]]:
    """Split the Markdown source into (kind, text) blocks.

    kind is one of ``h1``, ``h2``, ``h3``, ``bullet``, ``number``, ``row`` (a table row, cells
    joined by tabs, the first row of a table its header) or ``para``.
    Consecutive non-blank lines of a paragraph are joined with spaces.
    """
    blocks: list[tuple[str, str]] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(("para", " ".join(para)))
            para.clear()

    for raw in markdown.splitlines():
        line = raw.rstrip()
        if line.startswith("|"):
            flush()
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if not all(re.fullmatch(r":?-{3,}:?", cell) for cell in cells):  # the header's --- line is not a row
                blocks.append(("row", "\t".join(cells)))
            continue
        heading = re.match(r"^(#{1,3})\s+(.*)$", line)
        number = re.match(r"^(\d+)\.\s+(.*)$", line)
        if not line.strip():
            flush()
        elif heading:
            flush()
            blocks.append((f"h{len(heading.group(1))}", heading.group(2)))
        elif line.startswith("- "):
            flush()
            blocks.append(("bullet", line[2:]))
        elif number:
            flush()
            blocks.append(("number", f"{number.group(1)}.\t{number.group(2)}"))
        else:
            para.append(line.strip())
    flush()
    return blocks


def render(source: Path, output: Path) -> int:
    """Render ``source`` to ``output`` and return the number of pages."""
    blocks = parse_blocks(to_latin1(source.read_text(encoding="utf-8")))
    title = next((text for kind, text in blocks if kind == "h1"), source.stem)

    pdf = HandbookPDF(title)
    pdf.set_title(title)
    pdf.set_author("ChunkScope sample documents")
    pdf.set_creation_date(CREATION_DATE)
    pdf.alias_nb_pages()
    pdf.add_page()

    width = pdf.w - pdf.l_margin - pdf.r_margin
    indent = 6

    rows: list[list[str]] = []
    for index, (kind, text) in enumerate(blocks):
        if kind == "row":
            rows.append(text.split("\t"))
            if index + 1 < len(blocks) and blocks[index + 1][0] == "row":
                continue
            # A ruled table, header row in bold, as a report would print it (PDF parsers find tables by their rules).
            pdf.set_font("Helvetica", "", 10)
            with pdf.table(width=width, line_height=6, first_row_as_headings=True, text_align="LEFT") as table:
                for cells in rows:
                    row = table.row()
                    for cell in cells:
                        row.cell(cell)
            rows = []
            pdf.ln(3)
        elif kind == "h1":
            pdf.set_font("Helvetica", "B", 20)
            pdf.multi_cell(width, 9, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.set_draw_color(60, 90, 150)
            pdf.set_line_width(0.6)
            pdf.line(pdf.l_margin, pdf.get_y() + 1, pdf.l_margin + width, pdf.get_y() + 1)
            pdf.ln(6)
        elif kind == "h2":
            # Keep a chapter heading together with at least a few lines of text.
            if pdf.get_y() > pdf.h - 60:
                pdf.add_page()
            pdf.ln(4)
            pdf.set_font("Helvetica", "B", 15)
            pdf.set_text_color(30, 60, 120)
            pdf.multi_cell(width, 8, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.set_text_color(0, 0, 0)
            pdf.ln(1)
        elif kind == "h3":
            if pdf.get_y() > pdf.h - 45:
                pdf.add_page()
            pdf.ln(2)
            pdf.set_font("Helvetica", "B", 12)
            pdf.multi_cell(width, 6.5, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(0.5)
        elif kind in ("bullet", "number"):
            pdf.set_font("Helvetica", "", 11)
            marker, _, body = text.partition("\t") if kind == "number" else ("-", "", text)
            if pdf.get_y() + 5.6 > pdf.page_break_trigger:
                pdf.add_page()
            y = pdf.get_y()
            pdf.set_x(pdf.l_margin + 1)
            pdf.cell(indent, 5.6, marker)
            pdf.set_xy(pdf.l_margin + 1 + indent, y)
            pdf.multi_cell(width - indent - 1, 5.6, body, markdown=True,
                           new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(1)
        else:
            pdf.set_font("Helvetica", "", 11)
            pdf.multi_cell(width, 5.6, text, markdown=True, align="J",
                           new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(2.5)

    output.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(output))
    return pdf.page_no()


def main(argv: list[str]) -> int:
    source = Path(argv[1]) if len(argv) > 1 else DEFAULT_SOURCE
    output = Path(argv[2]) if len(argv) > 2 else DEFAULT_OUTPUT
    pages = render(source, output)
    print(f"Wrote {output} ({pages} pages, {output.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
