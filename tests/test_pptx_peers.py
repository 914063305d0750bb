"""Every word of a PPTX that markitdown reads, the pptx loader reads too (issue 44: "every Office word markitdown or
docx2txt reads is read"), or leaves out by a documented option (``include_notes``, ``include_footers``).

The decks are written with python-pptx, as a person builds them: titles, bulleted bodies, text boxes, grouped
shapes, tables, pictures with a description, speaker notes and footers. The words are the readers' benchmark's
(``benchmarks/parsers.py``: markitdown's own labels, such as "Notes" and picture file names, are not words of the
file).
"""

from __future__ import annotations

import io
import sys
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pptx import Presentation
from pptx.util import Inches
from test_loaders import check_spans
from test_pptx_pictures_charts import tiny_png

from core.loaders import load_bytes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import parsers  # noqa: E402

WORD = st.text("bcdfghjklmnpqrstvwxz", min_size=3, max_size=8)
WORDS = st.lists(WORD, min_size=1, max_size=4).map(" ".join)
# What a slide holds besides its title: (kind, its words).
SHAPES = st.lists(
    st.tuples(st.sampled_from(["bullets", "text_box", "group", "table", "picture"]), st.lists(WORDS, min_size=1,
              max_size=4)),
    max_size=4,
)  # fmt: skip
SLIDES = st.lists(st.tuples(WORDS, SHAPES, st.one_of(st.just(""), WORDS), st.one_of(st.just(""), WORDS)),
                  min_size=1, max_size=3)  # fmt: skip


def add_shape(slide, kind: str, texts: list[str]) -> None:
    shapes = slide.shapes
    if kind == "bullets":
        body = slide.placeholders[1].text_frame
        for text in texts:
            paragraph = body.add_paragraph() if body.text else body.paragraphs[0]
            paragraph.text = text
    elif kind == "text_box":
        shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1)).text_frame.text = "\n".join(texts)
    elif kind == "group":
        group = shapes.add_group_shape()
        for text in texts:
            group.shapes.add_textbox(Inches(1), Inches(1), Inches(1), Inches(1)).text_frame.text = text
    elif kind == "table":
        table = shapes.add_table(len(texts), 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
        for index, text in enumerate(texts):
            table.cell(index, index % 2).text = text
    else:
        picture = shapes.add_picture(io.BytesIO(tiny_png()), Inches(1), Inches(1), Inches(1), Inches(1))
        picture._element.nvPicPr.cNvPr.set("descr", " ".join(texts))


def deck(slides) -> bytes:
    presentation = Presentation()
    for title, shapes, notes, footer in slides:
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])  # title and content
        slide.shapes.title.text = title
        for kind, texts in shapes:
            add_shape(slide, kind, texts)
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
        if footer:
            slide.shapes.add_textbox(Inches(0), Inches(7), Inches(4), Inches(0.3)).text_frame.text = footer
            footer_shape = slide.shapes[-1]._element
            nv_pr = footer_shape.nvSpPr.nvPr
            nv_pr.append(nv_pr.makeelement("{http://schemas.openxmlformats.org/presentationml/2006/main}ph",
                                           {"type": "ftr", "idx": "11"}))  # fmt: skip
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


@cache
def markitdown():
    from markitdown import MarkItDown

    return MarkItDown(enable_plugins=False)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SLIDES)
def test_every_word_markitdown_reads_is_read_and_notes_and_footers_only_by_their_options(slides) -> None:
    data = deck(slides)
    read = markitdown().convert_stream(io.BytesIO(data), file_extension=".pptx").text_content
    (document,) = load_bytes(data, "generated.pptx")
    check_spans(document)
    found = parsers.words(read)
    assert found <= parsers.words(document.text), sorted(found - parsers.words(document.text))
    # Left out by their options: what is left is the slides' own words, and every one of them is still read.
    (bare,) = load_bytes(data, "generated.pptx", include_notes=False, include_footers=False)
    extra = parsers.words(" ".join(notes + " " + footer for _, _, notes, footer in slides))
    own = parsers.words(" ".join(" ".join([title, *(t for _, texts in shapes for t in texts)]) for title, shapes, _, _ in slides))
    assert parsers.words(bare.text) == own
    assert found - extra <= own
