"""Write the Office samples: sample_docs/parsing_office_files.docx and sample_docs/chunking_in_ten_slides.pptx.

The prose lives in this file, written for ChunkScope like the other samples.
The documents are built with python-docx and python-pptx (dev dependencies:
the app itself reads DOCX and PPTX without them), so the samples come from a
writer other than ChunkScope's own reader. Dates in the document properties and
in the zip entries are fixed, so running the script again on the same text
gives byte-identical files.

Usage (from the repository root)::

    .venv/bin/pip install python-docx python-pptx
    .venv/bin/python scripts/make_office_samples.py [OUTPUT_DIR]
"""

from __future__ import annotations

import sys
import zipfile
from datetime import datetime
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "sample_docs"
DOCX_NAME = "parsing_office_files.docx"
PPTX_NAME = "chunking_in_ten_slides.pptx"
FIXED_DATE = datetime(2024, 1, 1)
ZIP_DATE = (2024, 1, 1, 0, 0, 0)
AUTHOR = "ChunkScope"

# -- the Word document -------------------------------------------------------------
# ("h1".."h3", text) headings, ("p", text) paragraphs, ("bullet"/"number", text) list items,
# ("table", [header, *rows]) tables.
DOCX_CONTENT: list[tuple[str, object]] = [
    ("h1", "Parsing Office Files for Retrieval"),
    (
        "p",
        "Before a single chunk is cut, a parser decides what the text of a document is. For Markdown and plain "
        "text that decision is almost free: the file is the text. Word documents, slide decks and spreadsheets "
        "are different. Their words sit inside zipped XML, mixed with styles, numbering definitions, drawings "
        "and sometimes macros, and two parsers can turn the same file into noticeably different text.",
    ),
    (
        "p",
        "This note explains what a careful parser keeps, what it throws away, and why those choices show up "
        "later as better or worse chunks.",
    ),
    ("h2", "What a Parser Should Keep"),
    (
        "p",
        "Structure is worth more than formatting. Bold and italic rarely change what a passage means, but a "
        "heading tells the splitter where a topic starts, a list item is a natural unit of meaning, and a table "
        "row only makes sense next to its header.",
    ),
    ("bullet", "Headings with their levels, so a heading-aware splitter can group sections."),
    ("bullet", "Paragraphs as separate blocks, so boundaries fall between ideas rather than inside them."),
    ("bullet", "List items one per line, so a chunk never starts halfway through a step."),
    ("bullet", "Tables as rows with a header, so every row can be read on its own."),
    ("h3", "Tables deserve special care"),
    (
        "p",
        "A table flattened into loose words is nearly useless to an embedding model: the numbers lose their "
        "column names. Rendering each row as a line of cells, with the header row kept, lets a splitter cut "
        "between rows and lets each chunk carry the header as metadata.",
    ),
    (
        "table",
        [
            ["Format", "Unit of structure", "Becomes a page", "Tables"],
            ["DOCX", "Paragraph styles and numbering", "No", "Rows with a header row"],
            ["PPTX", "Slide titles, bullets and text boxes", "Each slide", "Rows with a header row"],
            ["XLSX", "Worksheets of cells", "Each sheet", "The whole sheet as one table"],
            ["EPUB", "XHTML chapters in spine order", "Each chapter", "HTML tables"],
        ],
    ),
    ("h2", "What a Parser Should Ignore"),
    (
        "p",
        "Office files can carry far more than text. A parser that feeds a retrieval system should read words and "
        "structure and nothing else.",
    ),
    ("bullet", "Macros are never run. A macro-enabled file is read like any other, and the macro is reported."),
    ("bullet", "Embedded objects and pictures are skipped; their captions, if typed as text, are kept."),
    ("bullet", "External links are not followed, so opening a file never reaches the network."),
    ("bullet", "Deleted text from tracked changes stays deleted."),
    ("h3", "Size limits come first"),
    (
        "p",
        "Every one of these formats is a zip archive, and a small upload can unpack to many gigabytes. The "
        "archive's directory says how large each entry is before anything is unpacked, so the safe order is to "
        "check the entry count and the total unpacked size, refuse the file with a clear reason if either is too "
        "large, and only then read the parts that hold text.",
    ),
    ("h2", "Checking a Parser with ChunkScope"),
    ("number", "Upload the file and open the Chunks page with a recursive splitter at 512 characters."),
    ("number", "Look at the source view: headings, list items and table rows should each start on their own line."),
    ("number", "Switch to the sentence splitter and confirm that no chunk starts in the middle of a table row."),
    ("number", "Compare the result with the same content saved as PDF to see what each parser loses."),
    (
        "p",
        "Parsing is the first link in the chain. When retrieval misses an answer that is plainly in the "
        "document, look at the parsed text before touching chunk size or the embedding model.",
    ),
]

# -- the slide deck ----------------------------------------------------------------
# Each slide: (title, bullets, table or None, speaker notes). The first is the title slide (subtitle in bullets[0]).
PPTX_SLIDES: list[tuple[str, list[str], list[list[str]] | None, str]] = [
    (
        "Chunking for RAG in Ten Slides",
        ["How documents are cut into nodes, and how to tell whether the cut is good"],
        None,
        "A short tour for people who are new to retrieval-augmented generation.",
    ),
    (
        "Why chunk at all?",
        [
            "Embedding models read a limited window, often 256 to 512 tokens",
            "Small chunks match questions precisely but lose surrounding context",
            "Large chunks keep context but blur the meaning of their vector",
        ],
        None,
        "Chunking is a trade-off between precision and context; there is no universal best size.",
    ),
    (
        "Overlap",
        [
            "Overlap repeats the end of one chunk at the start of the next",
            "It protects sentences that fall on a boundary",
            "Ten to twenty percent of the chunk size is a common starting point",
        ],
        None,
        "Too much overlap fills the index with near-duplicates that crowd out other results.",
    ),
    (
        "Splitter families",
        [
            "Fixed-size and token splitters cut by length",
            "Recursive splitters prefer paragraphs, then lines, then words",
            "Sentence and semantic splitters follow meaning",
            "Structure-aware splitters follow headings",
        ],
        None,
        "",
    ),
    (
        "Typical starting settings",
        [],
        [
            ["Content", "Splitter", "chunk_size", "chunk_overlap"],
            ["Manuals and guides", "Markdown headings", "1024", "0"],
            ["Support tickets", "Sentence", "256", "32"],
            ["Source code", "Code", "1500", "150"],
            ["Mixed documents", "Recursive", "512", "64"],
        ],
        "These are starting points to measure against, not answers.",
    ),
    (
        "Metadata travels with every node",
        [
            "File name, page or slide label, section heading",
            "The LLM and the embedding model may see different keys",
            "Exclude keys that add noise to the vector",
        ],
        None,
        "",
    ),
    (
        "Measure, do not guess",
        [
            "Write a few dozen real questions with their answers",
            "Track hit rate and MRR across settings",
            "Change one parameter at a time",
        ],
        None,
        "A small honest evaluation set beats a large synthetic one.",
    ),
    (
        "Postprocessing retrieved nodes",
        [
            "Similarity cutoff drops weak matches",
            "Rerankers reorder the top results with a cross-encoder",
            "Long-context reorder puts the best nodes at the edges of the prompt",
        ],
        None,
        "",
    ),
    (
        "Parsing comes first",
        [
            "Headings, lists and table rows must survive parsing",
            "A table row should never be split across chunks",
            "Check the parsed text before tuning anything else",
        ],
        None,
        "Most surprising chunks trace back to the parser, not the splitter.",
    ),
    (
        "Checklist",
        [
            "Parse and read the text",
            "Pick a splitter that matches the structure",
            "Choose size and overlap, then measure",
            "Add postprocessors only when measurements ask for them",
        ],
        None,
        "",
    ),
]


def build_docx() -> bytes:
    from docx import Document

    document = Document()
    styles = {"h1": "Heading 1", "h2": "Heading 2", "h3": "Heading 3", "bullet": "List Bullet", "number": "List Number"}
    for kind, value in DOCX_CONTENT:
        if kind == "table":
            rows = value  # type: ignore[assignment]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Table Grid"
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
                    if r == 0:
                        table.cell(r, c).paragraphs[0].runs[0].bold = True
        elif kind == "p":
            document.add_paragraph(str(value))
        else:
            document.add_paragraph(str(value), style=styles[kind])
    properties = document.core_properties
    properties.title = "Parsing Office Files for Retrieval"
    properties.author = AUTHOR
    properties.last_modified_by = AUTHOR
    properties.created = properties.modified = FIXED_DATE
    properties.revision = 1
    out = BytesIO()
    document.save(out)
    return out.getvalue()


def build_pptx() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    title_layout, content_layout, title_only = deck.slide_layouts[0], deck.slide_layouts[1], deck.slide_layouts[5]
    for number, (title, bullets, table, notes) in enumerate(PPTX_SLIDES):
        if number == 0:
            slide = deck.slides.add_slide(title_layout)
            slide.shapes.title.text = title
            slide.placeholders[1].text = bullets[0]
        elif table is not None:
            slide = deck.slides.add_slide(title_only)
            slide.shapes.title.text = title
            shape = slide.shapes.add_table(len(table), len(table[0]), Inches(0.5), Inches(1.6), Inches(9), Inches(3))
            for r, row in enumerate(table):
                for c, cell in enumerate(row):
                    shape.table.cell(r, c).text = cell
        else:
            slide = deck.slides.add_slide(content_layout)
            slide.shapes.title.text = title
            body = slide.placeholders[1].text_frame
            body.text = bullets[0]
            for bullet in bullets[1:]:
                body.add_paragraph().text = bullet
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    properties = deck.core_properties
    properties.title = PPTX_SLIDES[0][0]
    properties.author = AUTHOR
    properties.last_modified_by = AUTHOR
    properties.created = properties.modified = FIXED_DATE
    properties.revision = 1
    out = BytesIO()
    deck.save(out)
    return out.getvalue()


def stable_zip(data: bytes) -> bytes:
    """The same archive with every entry dated ZIP_DATE, so the bytes depend on the content alone."""
    out = BytesIO()
    with zipfile.ZipFile(BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            entry = zipfile.ZipInfo(info.filename, date_time=ZIP_DATE)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            target.writestr(entry, source.read(info))
    return out.getvalue()


def main(argv: list[str]) -> int:
    output = Path(argv[0]) if argv else DEFAULT_OUTPUT
    output.mkdir(parents=True, exist_ok=True)
    for name, build in ((DOCX_NAME, build_docx), (PPTX_NAME, build_pptx)):
        path = output / name
        path.write_bytes(stable_zip(build()))
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
