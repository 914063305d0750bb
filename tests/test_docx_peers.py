"""Every word of a DOCX that docx2txt or markitdown reads, the docx loader reads too (issue 44: "every Office word
markitdown or docx2txt reads is read"), and nothing Word does not show.

The documents are generated from the pieces a person sees in Word: paragraphs of runs, links, content controls,
text boxes (as Word writes them, a DrawingML choice with a VML copy as its fallback, or VML alone), alternate
content around paragraphs, pictures' descriptions, tables with merged cells, footnotes and a tracked move; deleted text is generated too and must
not be read. The words are the readers' benchmark's (``benchmarks/parsers.py``: markitdown's own labels are not
words of the file). docx2txt and markitdown are the readers LangChain, LlamaIndex and markitdown users run.
"""

from __future__ import annotations

import io
import sys
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_docx_completeness import notes_part, text_box
from test_loaders import check_spans
from test_loaders_office import OFFICE_REL, REL_NS, docx, load_one, para

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import parsers  # noqa: E402

# Words of letters only, none a word a reader writes around the text, none the loader's own ("Footnotes").
WORD = st.text("bcdfghjklmnpqrstvwxz", min_size=3, max_size=8)
WORDS = st.lists(WORD, min_size=1, max_size=4).map(" ".join)


def run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def paragraph(*runs: str) -> str:
    return "<w:p>" + run(" ").join(runs) + "</w:p>"


def table(rows: list[list[tuple[str, int]]]) -> str:
    """A table on a grid as wide as its widest row; each cell (text, the grid columns it spans)."""
    width = max(sum(span for _, span in row) for row in rows)
    grid = "<w:tblGrid>" + "<w:gridCol/>" * width + "</w:tblGrid>"
    body = "".join(
        "<w:tr>"
        + "".join(f'<w:tc><w:tcPr><w:gridSpan w:val="{span}"/></w:tcPr>{para(text)}</w:tc>' for text, span in row)
        + "</w:tr>"
        for row in rows
    )
    return f"<w:tbl>{grid}{body}</w:tbl>"


def vml_box(text: str) -> str:
    """A text box as older Word versions write it: a VML shape alone."""
    return f"<w:r><w:pict><v:shape><v:textbox><w:txbxContent>{para(text)}</w:txbxContent></v:textbox></v:shape></w:pict></w:r>"


def picture(description: str) -> str:
    return (
        "<w:r><w:drawing><wp:inline><wp:extent cx='9525' cy='9525'/>"
        f"<wp:docPr id='7' name='Picture 7' descr='{description}'/></wp:inline></w:drawing></w:r>"
    )


CELLS = st.lists(st.lists(st.tuples(WORDS, st.integers(1, 3)), min_size=1, max_size=3), min_size=1, max_size=3)
# One block of the body and, for a footnote, the note's text: (the block's XML, a note's text or "").
BLOCKS = st.one_of(
    WORDS.map(lambda text: (paragraph(run(text)), "")),
    st.tuples(WORDS, WORDS).map(lambda p: (paragraph(run(p[0]), f"<w:hyperlink>{run(p[1])}</w:hyperlink>"), "")),
    WORDS.map(lambda text: (f"<w:sdt><w:sdtContent>{para(text)}</w:sdtContent></w:sdt>", "")),
    st.tuples(WORDS, WORDS).map(lambda p: (f"<w:p>{run(p[0])}{text_box(p[1])}</w:p>", "")),
    st.tuples(WORDS, WORDS).map(lambda p: (f"<w:p>{run(p[0])}{vml_box(p[1])}</w:p>", "")),
    # Alternate content around a paragraph: the choice and its fallback copy.
    WORDS.map(
        lambda text: (
            f"<mc:AlternateContent><mc:Choice Requires='w14'>{para(text)}</mc:Choice>"
            f"<mc:Fallback>{para(text)}</mc:Fallback></mc:AlternateContent>",
            "",
        )
    ),
    st.tuples(WORDS, WORDS).map(lambda p: (f"<w:p>{run(p[0])}{picture(p[1])}</w:p>", "")),
    CELLS.map(lambda rows: (table(rows), "")),
    st.tuples(WORDS, WORDS).map(
        lambda p: (f"<w:p>{run(p[0])}<w:r><w:footnoteReference w:id='{{note}}'/></w:r></w:p>", p[1])
    ),
    # A tracked move: the text where it was (w:moveFrom) and where it went (w:moveTo), the same words.
    WORDS.map(
        lambda text: (
            f"<w:p><w:moveFrom>{run(text)}</w:moveFrom></w:p><w:p><w:moveTo>{run(text)}</w:moveTo></w:p>",
            "",
        )
    ),
)
DELETED = st.lists(WORD.map(lambda word: f"gone{word}"), max_size=3)


def document(blocks: list[tuple[str, str]], deleted: list[str]) -> bytes:
    body, notes = [], {}
    for xml, note in blocks:
        if note:
            note_id = str(len(notes) + 1)
            notes[note_id] = note
            xml = xml.replace("{note}", note_id)
        body.append(xml)
    gone = "".join(f"<w:del><w:r><w:delText>{word} </w:delText></w:r></w:del>" for word in deleted)
    body.append(f"<w:p>{run('kept')}{gone}</w:p>")
    rels = f'<Relationships {REL_NS}><Relationship Id="rF" Type="{OFFICE_REL}/footnotes" Target="footnotes.xml"/>'
    extra = {
        "word/_rels/document.xml.rels": rels + "</Relationships>",
        "word/footnotes.xml": notes_part("footnotes", notes),
    }
    return docx("".join(body), extra=extra)


@cache
def markitdown():
    from markitdown import MarkItDown

    return MarkItDown(enable_plugins=False)


def peers_words(data: bytes) -> dict[str, set[str]]:
    import docx2txt

    converted = markitdown().convert_stream(io.BytesIO(data), file_extension=".docx").text_content
    return {"docx2txt": parsers.words(docx2txt.process(io.BytesIO(data))), "markitdown": parsers.words(converted)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(BLOCKS, min_size=1, max_size=6), DELETED)
def test_every_word_docx2txt_or_markitdown_reads_is_read_and_deleted_text_is_not(blocks, deleted) -> None:
    data = document(blocks, deleted)
    loaded = load_one(data, "generated.docx")
    check_spans(loaded)
    ours = parsers.words(loaded.text)
    for reader, found in peers_words(data).items():
        assert found <= ours, (reader, sorted(found - ours))
    assert not ours & set(deleted)
