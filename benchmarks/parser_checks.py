"""The readers' benchmark's two checks against known answers: ruled-table cell recall and OCR on a simulated scan.

**Cell recall** (:func:`cell_recall`): ``benchmarks/expected_cells.json`` holds the
cells of the ruled tables in the fetched third-party PDFs, written by reading each
page rendered to an image (pypdfium2), not from any extractor's output. A reader's
cells are those of every Markdown table row it wrote (``| a | b |``; separator rows
left out); an expected cell is recalled when its text is one of the reader's cells.
Texts are compared NFKC-folded, lower-cased and with only letters and digits kept:
"273.879.750¹" (a superscript footnote mark) and "273.879.7501" are the same cell,
a flag emoji drawn beside a country's name is no part of it. A merged cell is
expected once, with its text. Readers that write no table get no recall. Where a
project ships the output its own tests expect (tabula-py's and xlsx2csv's CSVs,
:data:`reader_fixtures.EXPECTED_OUTPUTS`), its cells are expected the same way
(:func:`csv_cells`).

**Silent corruptions** (:func:`corruptions`): what a reader wrote that no file
holds, found in its text alone or beside its peers' words: glyphs repeated
(:func:`repeated_glyphs`: "300218300218", "TToottaall"), rows doubled
(:func:`doubled_rows`: a line again right after itself, also when the copy lost
its decimal points, and more often than any peer writes it:
:func:`doubled_beyond_peers`), runs reversed (:func:`reversed_words`: "latot"
where a peer read "total", and "total" is read in more files: :func:`backwards`), and scanned pages OCR skipped (:func:`scan_pages`: a page an image
covers whose text layer holds a few words, not in ``ocr_pages``, where Tesseract reads at least
:data:`SCAN_LOST_WORDS` words in the page drawn without its text that the reader did not read: a page whose
image shows just what its text layer says, as a searchable scan's does, loses nothing when OCR is skipped). A finding is
silent unless the document's ``load_warning`` names its kind (:data:`NAMED_BY`);
the reader engines write no warning, so theirs are all silent.

**OCR** (:func:`simulated_scan`): a page of our own text (the opening paragraphs of
``sample_docs/chunking_guide.md``) is drawn with PIL at 300 dpi, turned by 0.8°,
blurred, sprinkled with noise and saved as an image-only PDF; ChunkScope's default
PDF path reads it (``ocr='auto'``), and the word error rate is the word-level edit
distance to the known text over its word count (punctuation and case ignored). CPU
seconds are this process's and its children's (Tesseract runs as a child).
:func:`simulated_scans` reads the same page under watermarks (:data:`WATERMARKS`:
a text layer over the image, as a scanner's or a viewer's stamp is added, in the
sizes, angles and opacities of issue 44) and under a stamp drawn into the
pixels; the watermark's own words are taken out of what was read before the WER
is counted (reading them is right), and a scan whose page is not in
``ocr_pages`` is an OCR skipped.
"""

from __future__ import annotations

import functools
import io
import json
import math
import random
import re
import resource
import time
import unicodedata
from collections import Counter
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


def csv_cells(text: str) -> list[str]:
    """The normalized non-empty cells of a CSV a project expects (xlsx2csv's sheet-name lines of ``-a``,
    "-------- 1 - Sheet1", left out)."""
    import csv

    lines = [line for line in text.splitlines() if not _SHEET_LINE.match(line)]
    return [cell for row in csv.reader(lines) for cell in (normalized(value) for value in row) if cell]


_SHEET_LINE = re.compile(r"^-{8} \d+ - ")


# -- silent corruptions -------------------------------------------------------------------------------------------

# A token that is a run of three or more characters written two to four times ("300218300218"), ...
_REPEATED_UNIT = re.compile(r"^([^\W_]{3,}?)\1{1,3}$")
# ... and a token of three or more runs, each of one character written the same two to four times over.
_CHAR_RUN = re.compile(r"([^\W_])\1*")
# Longer tokens (a data URI, a run of digits) are not looked at: the run's regular expression is quadratic in them.
_LONGEST_TOKEN = 200
# A line is worth comparing with the one before from this many letters and digits on.
_ROW_CHARS = 8
# The words of the load_warning that name a kind of corruption: its finding is not silent.
NAMED_BY = {
    "repeated glyphs": ("drawn over", "garbled"),
    "doubled rows": ("drawn over", "garbled", "doubled"),
    "reversed runs": ("garbled", "rotated", "reversed"),
    "OCR skipped": ("ocr", "covers little", "no text"),
}
# A page is a scan when images cover this share of it and its text layer holds at most SCAN_WORDS words.
SCAN_IMAGE_SHARE = 0.8
SCAN_WORDS = 12
# ... and OCR of the page drawn without its text reads at least this many words the reader did not read.
SCAN_LOST_WORDS = 3


def repeated_glyphs(text: str) -> list[str]:
    """The tokens of ``text`` that read as glyphs drawn over themselves: a run written again right after itself
    ("300218300218"), or every character written the same two to four times ("TToottaall", "33330000")."""
    found = []
    for token in text.split():
        token = token.strip(".,;:!?()[]|*\"'")
        if not 6 <= len(token) <= _LONGEST_TOKEN:
            continue
        runs = [len(match.group()) for match in _CHAR_RUN.finditer(token)]
        by_chars = len(runs) >= 3 and any(all(run % times == 0 for run in runs) for times in (2, 3, 4))
        unit = _REPEATED_UNIT.match(token)
        # A word may be a short run twice ("murmur", "couscous"); a run of digits or of five letters and more, or a
        # token of four characters and more each written over, is no word ("MM/DD/YYYY", "00:00:00" are).
        by_run = unit is not None and len(set(unit.group(1))) > 1
        by_run = by_run and (any(char.isdigit() for char in unit.group(1)) or len(unit.group(1)) >= 5)
        if by_run or (by_chars and len({char for char in token.lower() if char.isalnum()}) >= 4):
            found.append(token)
    return found


def doubled_rows(text: str) -> list[str]:
    """The lines (table rows or text) written again right after themselves, compared with letters and digits only,
    so a copy that lost its decimal points is the same row; a line with no letter or under _ROW_CHARS is not
    compared."""
    found = []
    before = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or _SEPARATOR.match(line):
            continue
        key = normalized(line)
        if key == before and len(key) >= _ROW_CHARS and any(char.isalpha() for char in key):
            found.append(line[:80])
        before = key
    return found


def doubled_beyond_peers(rows: list[str], flat: str, peers: list[str]) -> list[str]:
    """Of a reader's doubled rows (:func:`doubled_rows`), those it writes more often than every peer does: a row the
    file itself holds twice (the same sentence in two paragraphs, a cell repeated down a column) a peer writes as
    often. ``flat`` and ``peers`` are the texts :func:`normalized` (letters and digits only), so a row is counted
    the same in a Markdown table and in plain lines. A row a peer doubles too is not found."""
    if not peers:
        return rows
    return [row for row in rows if flat.count(normalized(row)) > max(peer.count(normalized(row)) for peer in peers)]


def reversed_words(found: set[str], peers: set[str]) -> list[str]:
    """A reader's words of four or more letters that no peer read and that a peer read turned round ("latot" where a
    peer read "total"): candidates, as either may be the one reading backwards (:func:`backwards` decides). A word
    every reader reads backwards is not found."""
    return sorted(word for word in found - peers if len(word) >= 4 and word[::-1] in peers)


def backwards(word: str, seen: Counter[str]) -> bool:
    """Whether ``word`` is its turned-round form read backwards: the turned form is read in more of the benchmark's
    files (``seen``: files per word, any reader), or as many and reads more like English (:func:`englishness`)."""
    turned = word[::-1]
    if seen[turned] != seen[word]:
        return seen[turned] > seen[word]
    return englishness(turned) > englishness(word)


@functools.cache
def _english() -> tuple[frozenset[str], dict[str, float]]:
    """The words of English prose (sample_docs' Markdown) and the log-probabilities of their letter triples, word
    starts and ends marked."""
    counts: Counter[str] = Counter()
    vocabulary: set[str] = set()
    for path in sorted((ROOT / "sample_docs").glob("*.md")):
        for word in re.findall(r"[a-z]+", path.read_text(encoding="utf-8").lower()):
            vocabulary.add(word)
            marked = f"^{word}$"
            counts.update(marked[i : i + 3] for i in range(len(marked) - 2))
    total = sum(counts.values())
    return frozenset(vocabulary), {triple: math.log(count / total) for triple, count in counts.items()}


def englishness(word: str) -> float:
    """How much ``word`` reads as English: 0 for a word of the prose (:func:`_english`), else the mean
    log-probability of its letter triples there, an unseen triple (or a letter outside a-z) rarer than any seen."""
    vocabulary, logs = _english()
    if word in vocabulary:
        return 0.0
    floor = min(logs.values()) - 2.0
    marked = f"^{word}$"
    triples = [marked[i : i + 3] for i in range(len(marked) - 2)]
    return sum(logs.get(triple, floor) for triple in triples) / len(triples)


def scan_pages(data: bytes) -> list[int]:
    """The pages (1-based) of a PDF that look scanned: images cover SCAN_IMAGE_SHARE of the page or more, and its text
    layer holds at most SCAN_WORDS words (a watermark, a stamp). Measured with pypdfium2, not the loaders' rule."""
    import pypdfium2
    import pypdfium2.raw as pdfium_c

    pages = []
    try:
        pdf = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError:  # encrypted or broken: no page to measure (the readers fail on it or say so)
        return []
    try:
        for number in range(1, len(pdf) + 1):
            try:
                page = pdf[number - 1]
            except pypdfium2.PdfiumError:  # a page pdfium cannot load is not measured
                continue
            width, height = page.get_size()
            covered = 0.0
            for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3):
                left, bottom, right, top = image.get_bounds()
                covered += max(min(right, width) - max(left, 0), 0) * max(min(top, height) - max(bottom, 0), 0)
            if covered / max(width * height, 1.0) >= SCAN_IMAGE_SHARE:
                text = page.get_textpage().get_text_range()
                if len(text.split()) <= SCAN_WORDS:
                    pages.append(number)
    finally:
        pdf.close()
    return pages


def scan_text(data: bytes, page: int) -> str:
    """What Tesseract reads on page ``page`` (1-based) of a PDF drawn without its text layer (ChunkScope's OCR call)."""
    from core.loaders.pdf_ocr import ocr_page

    return ocr_page(data, page - 1, 200, without_text=True).text


def corruptions(text: str) -> dict[str, list[str]]:
    """Each kind of corruption a reader's text shows by itself (repeated glyphs, doubled rows), with what shows it;
    kinds with none left out. Reversed runs need the peers' words (:func:`reversed_words`)."""
    kinds = {"repeated glyphs": repeated_glyphs(text), "doubled rows": doubled_rows(text)}
    return {kind: shown for kind, shown in kinds.items() if shown}


def silent(findings: dict[str, list[str]], warning: str) -> dict[str, list[str]]:
    """The findings whose kind the document's load_warning does not name."""
    warning = warning.lower()
    return {kind: shown for kind, shown in findings.items() if not any(word in warning for word in NAMED_BY[kind])}


# -- OCR on a simulated scan --------------------------------------------------------------------------------------

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


def scan_pdf(text: str, seed: int = 30, stamp: str = "") -> bytes:
    """``text`` typeset on an A4 page at 300 dpi (11 pt), degraded like a scan, as an image-only PDF; ``stamp``, if
    given, is drawn into the pixels (a rubber stamp: framed capitals turned 20 degrees over the text)."""
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
    if stamp:
        page.paste(_stamp(stamp), (width // 4, height // 5), _stamp(stamp, mask=True))
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


def _stamp(mark: str, mask: bool = False):
    """A grey framed stamp of ``mark`` in 40 pt capitals turned 20 degrees; with ``mask``, where it is drawn."""
    from PIL import Image, ImageDraw

    font = _font(round(40 / 72 * DPI))
    probe = ImageDraw.Draw(Image.new("L", (1, 1)))
    left, top, right, bottom = probe.textbbox((0, 0), mark, font=font)
    pad = DPI // 8
    stamp = Image.new("L", (right - left + 2 * pad, bottom - top + 2 * pad), 0)
    draw = ImageDraw.Draw(stamp)
    draw.rectangle((4, 4, stamp.width - 5, stamp.height - 5), outline=255, width=DPI // 30)
    draw.text((pad - left, pad - top), mark, font=font, fill=255)
    stamp = stamp.rotate(20, expand=True, fillcolor=0)
    return stamp if mask else Image.new("L", stamp.size, 110)


# (mark, font size in points, opacity, angle in degrees): a text layer over the scan's image. The first two are
# issue 44's (OCR was skipped under them), the others its sizes between and beyond.
WATERMARKS = (
    ("SCANNED COPY", 64, 0.3, 0),
    ("DRAFT", 120, 0.3, 0),
    ("DRAFT", 120, 1.0, 45),
    ("CONFIDENTIAL", 48, 0.5, 30),
    ("COPY", 160, 0.15, 0),
    ("SCANNED COPY", 90, 1.0, 90),
)
STAMP = "APPROVED"


def watermarked(data: bytes, mark: str, size: float, opacity: float = 1.0, angle: float = 0.0) -> bytes:
    """``data``'s first page with ``mark`` set across its middle in Helvetica Bold, grey, as a text layer."""
    import pypdf
    from fpdf import FPDF

    page = pypdf.PdfReader(io.BytesIO(data)).pages[0]
    width, height = float(page.mediabox.width), float(page.mediabox.height)
    layer = FPDF(unit="pt", format=(width, height))
    layer.add_page()
    layer.set_font("Helvetica", "B", size=size)
    layer.set_text_color(150)
    with layer.local_context(fill_opacity=opacity), layer.rotation(angle, width / 2, height / 2):
        layer.text(x=(width - layer.get_string_width(mark)) / 2, y=height / 2, text=mark)
    writer = pypdf.PdfWriter()
    writer.add_page(page).merge_page(pypdf.PdfReader(io.BytesIO(bytes(layer.output()))).pages[0])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def without_words(text: str, mark: str) -> str:
    """``text`` less every word of ``mark`` (case and punctuation ignored): a watermark read is no OCR error."""
    marked = {normalized(word) for word in mark.split()}
    return " ".join(word for word in text.split() if normalized(word) not in marked)


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


def simulated_scans() -> list[dict]:
    """:func:`simulated_scan` on the clean page, under each of WATERMARKS, and under a STAMP in the pixels."""
    text = known_text()
    runs = [simulated_scan(text, scan_pdf(text), "none")]
    for mark, size, opacity, angle in WATERMARKS:
        data = watermarked(scan_pdf(text), mark, size, opacity, angle)
        runs.append(simulated_scan(text, data, f'"{mark}" {size} pt, opacity {opacity}, {angle} deg', mark))
    runs.append(simulated_scan(text, scan_pdf(text, stamp=STAMP), f'"{STAMP}" stamp in the pixels', STAMP))
    return runs


def simulated_scan(text: str = "", data: bytes = b"", watermark: str = "none", mark: str = "") -> dict:
    """ChunkScope's default PDF path on a simulated scan of ``text`` (:func:`known_text` and its :func:`scan_pdf` by
    default): WER, pages read by OCR, whether OCR was skipped, CPU and wall seconds."""
    from core.loaders import load_bytes

    text = text or known_text()
    data = data or scan_pdf(text)
    before = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    started = time.perf_counter()
    (document,) = load_bytes(data, "simulated_scan.pdf")
    wall = time.perf_counter() - started
    after = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, before, strict=True))
    ocr_pages = list(document.metadata.get("ocr_pages", []))
    return {
        "watermark": watermark,
        "words": len(text.split()),
        "pages": len(document.pages),
        "ocr_pages": ocr_pages,
        "ocr_skipped": 1 not in ocr_pages,
        "wer": word_error_rate(text, without_words(document.text, mark)),
        "warning": str(document.metadata.get("load_warning", "")),
        "cpu_s_per_page": round(cpu / max(len(document.pages), 1), 2),
        "wall_s": round(wall, 2),
        "dpi": DPI,
        "rotation_degrees": ROTATION_DEGREES,
    }
