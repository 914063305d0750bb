"""The readers' benchmark's two checks against known answers: ruled-table cell recall and OCR on a simulated scan.

**Cell recall** (:func:`cell_recall`): ``benchmarks/expected_cells.json`` holds the
cells of the ruled tables in the fetched third-party PDFs, written by reading each
page rendered to an image (pypdfium2), not from any extractor's output. A reader's
cells are those of every Markdown table row it wrote (``| a | b |``; separator rows
left out); an expected cell is recalled when its text is one of the reader's cells.
Texts are compared NFKC-folded, lower-cased and with only letters and digits kept:
"273.879.750¹" (a superscript footnote mark) and "273.879.7501" are the same cell,
a flag emoji drawn beside a country's name is no part of it. A merged cell is
expected once, with its text. Readers that write no table get no recall.

**OCR** (:func:`simulated_scan`): a page of our own text (the opening paragraphs of
``sample_docs/chunking_guide.md``) is drawn with PIL at 300 dpi, turned by 0.8°,
blurred, sprinkled with noise and saved as an image-only PDF; ChunkScope's default
PDF path reads it (``ocr='auto'``), and the word error rate is the word-level edit
distance to the known text over its word count (punctuation and case ignored). CPU
seconds are this process's and its children's (Tesseract runs as a child).
"""

from __future__ import annotations

import io
import json
import random
import re
import resource
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPECTED_CELLS = ROOT / "benchmarks" / "expected_cells.json"
GUIDE = ROOT / "sample_docs" / "chunking_guide.md"
_SEPARATOR = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def normalized(cell: str) -> str:
    """A cell's text as compared: NFKC, lower case, letters and digits only."""
    return "".join(char for char in unicodedata.normalize("NFKC", cell).lower() if char.isalnum())


def table_cells(text: str) -> list[str] | None:
    """Every cell of every Markdown table row in ``text`` (normalized, empty ones left out); None if it has none."""
    cells: list[str] = []
    rows = 0
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|") and len(line) > 1) or _SEPARATOR.match(line):
            continue
        rows += 1
        cells += [normalized(cell) for cell in _CELL_SPLIT.split(line[1:-1])]
    return [cell for cell in cells if cell] if rows else None


def expected_cells() -> dict[str, list[str]]:
    """File (as the benchmark names it) -> the normalized non-empty cells of its ruled tables."""
    found: dict[str, list[str]] = {}
    for entry in json.loads(EXPECTED_CELLS.read_text(encoding="utf-8"))["files"]:
        cells = [normalized(cell) for table in entry["tables"] for row in table for cell in row]
        found[entry["file"]] = [cell for cell in cells if cell]
    return found


def cell_recall(expected: list[str], text: str) -> float | None:
    """The share of the expected cells found among the reader's table cells (each found cell used once)."""
    cells = table_cells(text)
    if cells is None:
        return None
    pool: dict[str, int] = {}
    for cell in cells:
        pool[cell] = pool.get(cell, 0) + 1
    hits = 0
    for cell in expected:
        if pool.get(cell, 0):
            pool[cell] -= 1
            hits += 1
    return round(hits / len(expected), 3) if expected else 1.0


# -- OCR on a simulated scan ------------------------------------------------------------------------------------

DPI = 300
ROTATION_DEGREES = 0.8


def known_text(words: int = 330) -> str:
    """The guide's opening prose paragraphs (Markdown headings and lists left out), about ``words`` words."""
    paragraphs = []
    count = 0
    for block in GUIDE.read_text(encoding="utf-8").split("\n\n"):
        block = block.strip()
        if not block or block.startswith(("#", "-", "|", "`")):
            continue
        paragraphs.append(" ".join(block.split()))
        count += len(block.split())
        if count >= words:
            break
    return "\n\n".join(paragraphs)


def _font(size: int):
    from PIL import ImageFont

    for name in ("DejaVuSerif.ttf", "LiberationSerif-Regular.ttf", "DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def scan_pdf(text: str, seed: int = 30) -> bytes:
    """``text`` typeset on an A4 page at 300 dpi (11 pt), degraded like a scan, as an image-only PDF."""
    from PIL import Image, ImageDraw, ImageFilter

    width, height = int(8.27 * DPI), int(11.69 * DPI)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    font = _font(round(11 / 72 * DPI))
    margin, y = DPI, DPI
    line_height = round(11 / 72 * DPI * 1.45)
    for paragraph in text.split("\n\n"):
        line = ""
        for word in paragraph.split():
            trial = f"{line} {word}".strip()
            if draw.textlength(trial, font=font) > width - 2 * margin and line:
                draw.text((margin, y), line, font=font, fill=20)
                y, line = y + line_height, word
            else:
                line = trial
        draw.text((margin, y), line, font=font, fill=20)
        y += round(line_height * 1.6)
    page = page.rotate(ROTATION_DEGREES, resample=Image.Resampling.BICUBIC, fillcolor=255, expand=False)
    page = page.filter(ImageFilter.GaussianBlur(0.9))
    rng = random.Random(seed)
    pixels = page.load()
    for _ in range(width * height // 60):  # salt and pepper on 1.7% of the pixels
        x, y_ = rng.randrange(width), rng.randrange(height)
        pixels[x, y_] = 0 if rng.random() < 0.5 else 255
    out = io.BytesIO()
    page.save(out, "PDF", resolution=DPI)
    return out.getvalue()


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word-level edit distance over the reference's words (case and punctuation ignored)."""
    ref = [w for w in (normalized(word) for word in reference.split()) if w]
    hyp = [w for w in (normalized(word) for word in hypothesis.split()) if w]
    previous = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        current = [i]
        for j, other in enumerate(hyp, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word != other)))
        previous = current
    return round(previous[-1] / len(ref), 4) if ref else 0.0


def simulated_scan() -> dict:
    """ChunkScope's default PDF path on the simulated scan: WER, pages read by OCR, CPU and wall seconds."""
    from core.loaders import load_bytes

    text = known_text()
    data = scan_pdf(text)
    before = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    started = time.perf_counter()
    (document,) = load_bytes(data, "simulated_scan.pdf")
    wall = time.perf_counter() - started
    after = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, before, strict=True))
    return {
        "words": len(text.split()),
        "pages": len(document.pages),
        "ocr_pages": document.metadata.get("ocr_pages", []),
        "wer": word_error_rate(text, document.text),
        "cpu_s_per_page": round(cpu / max(len(document.pages), 1), 2),
        "wall_s": round(wall, 2),
        "dpi": DPI,
        "rotation_degrees": ROTATION_DEGREES,
    }
