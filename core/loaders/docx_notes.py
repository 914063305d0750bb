"""Word (.docx) beside a paragraph's own text: what it anchors (pictures' alt text, text boxes) and the
footnotes and endnotes it references, read after the body; and the one walk of a paragraph's content that
both its text and its anchors are read by.

See :mod:`core.loaders.docx` for how they appear in the document: an anchor after its paragraph, a note's
mark (``[^1]``, ``[^i]``) where it is referenced and the notes under a heading after the body.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element as XmlElement

from core.loaders.archive import Archive, attr, child, children, local
from core.loaders.blocks import BlockText

# Where nothing a paragraph anchors is looked for: deleted (or moved away) text, field codes, embedded objects,
# equations.
_NOT_ANCHORING = frozenset({"del", "moveFrom", "delText", "instrText", "object", "oMath", "oMathPara", "pPr", "rPr"})
# A text box's content is read as its own story, and a picture's properties hold nothing more to read.
_ANCHORS = frozenset({"txbxContent", "docPr"})
_FILE_NAME = re.compile(r"[\w ().-]+\.(?:png|jpe?g|gif|bmp|tiff?|emf|wmf|svg|webp)", re.IGNORECASE)
# Footnotes and endnotes: (the main part's relationship to their part, the note's tag, the heading above them).
NOTE_KINDS = {
    "footnote": ("footnotes", "Footnotes"),
    "endnote": ("endnotes", "Endnotes"),
}
_ROMAN = (("m", 1000), ("cm", 900), ("d", 500), ("cd", 400), ("c", 100), ("xc", 90), ("l", 50), ("xl", 40),
          ("x", 10), ("ix", 9), ("v", 5), ("iv", 4), ("i", 1))  # fmt: skip


def paragraph_nodes(
    paragraph: XmlElement, skipped: frozenset[str], leaves: frozenset[str]
) -> Iterator[tuple[str, XmlElement]]:
    """The nodes inside ``paragraph`` in document order, each with its local tag: none in or under a ``skipped``
    tag, and none under a node in ``leaves``. Alternate content (``mc:AlternateContent``) is its first choice
    alone (else its fallback): the others are copies of it. An explicit stack, so deep XML costs no recursion."""
    stack = [iter(paragraph)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        tag = local(node.tag)
        if tag in skipped:
            continue
        if tag == "AlternateContent":
            branch = chosen(node)
            if branch is not None:
                stack.append(iter(branch))
            continue
        yield tag, node
        if tag not in leaves:
            stack.append(iter(node))


def chosen(alternate: XmlElement) -> XmlElement | None:
    """Of alternate content, the first choice (else the fallback): the others are copies of it."""
    chosen = child(alternate, "Choice")
    return chosen if chosen is not None else child(alternate, "Fallback")


def anchored(paragraph: XmlElement) -> Iterator[str | XmlElement]:
    """What a paragraph anchors, in order: a picture's description (text) and a text box's content (its story).
    A text box's own anchors are found when its content is read, not here; a VML shape's, after its alt text
    (it can hold a text box)."""
    for tag, node in paragraph_nodes(paragraph, _NOT_ANCHORING, _ANCHORS):
        if tag == "txbxContent":
            yield node
        elif tag == "docPr" or (tag == "shape" and attr(node, "alt")):  # DrawingML, or a VML shape's alt
            alt = " ".join((attr(node, "descr") or attr(node, "title") or attr(node, "alt") or "").split())
            if alt:
                yield alt


def alt_text_marks(alt: str) -> dict[str, Any]:
    """An alt text paragraph's marks: ``alt_text``, and ``file_name`` when it is only the picture's file name."""
    return {"alt_text": True, **({"file_name": True} if _FILE_NAME.fullmatch(alt) else {})}


@dataclass
class Notes:
    """The footnotes and endnotes referenced so far, numbered in the order they are first referenced."""

    labels: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, id) -> label
    _counts: dict[str, int] = field(default_factory=dict)

    def mark(self, kind: str, note_id: str) -> str:
        """The mark of a reference to note ``note_id`` of ``kind`` ("footnote", "endnote"): ``[^1]``."""
        label = self.labels.get((kind, note_id))
        if label is None:
            number = self._counts[kind] = self._counts.get(kind, 0) + 1
            label = self.labels[(kind, note_id)] = str(number) if kind == "footnote" else _roman(number)
        return f"[^{label}]"


def _roman(number: int) -> str:
    digits = []
    for letters, value in _ROMAN:
        count, number = divmod(number, value)
        digits.append(letters * count)
    return "".join(digits)


def is_notes_heading(attrs: dict[str, Any]) -> bool:
    return any(f"{kind}s" in attrs for kind in NOTE_KINDS)


def read_notes(
    archive: Archive, main: str, notes: Notes, out: BlockText, note_text: Callable[[XmlElement], str]
) -> None:
    """The notes referenced, after the body: each kind under its heading, in the order of their numbers; a
    note's text is ``note_text`` of its element."""
    if not notes.labels:
        return
    rels = archive.relationships(main)
    for kind, (part_kind, heading) in NOTE_KINDS.items():
        wanted = {note_id: label for (k, note_id), label in notes.labels.items() if k == kind}
        part = next((target for rel_kind, target in rels.values() if rel_kind == part_kind), None)
        root = archive.xml(part) if wanted and part else None
        if root is None:
            continue
        stored = {attr(note, "id"): note for note in children(root, kind)}
        texts = [(label, note_text(stored[note_id])) for note_id, label in wanted.items() if note_id in stored]
        texts = [(label, text) for label, text in texts if text]
        if texts:
            out.add(heading, "heading", level=1, attrs={part_kind: True})
        for label, text in texts:
            out.add(f"[^{label}]: {text}", "paragraph", attrs={kind: label})
