"""Office equations (OMML, ``m:oMath``) as linear text, close to what Word's "Linear" view shows.

Read run by run, an equation runs together: a fraction's numerator meets its
denominator, an exponent its base ("mλa=(1)550×10-6 mm2.5 mm"). Here each
structure is written in the linear form Word uses (UnicodeMath, simplified):
``num/den``, ``x^2``, ``x_i``, ``√(x)``, ``∑_(i=1)^n x``, a delimiter's
characters around its parts, a function's name then a space then its argument;
an operand of more than one letters-and-digits word is put in parentheses, so
"(550×10^(-6) mm)/(2.5 mm)" keeps its meaning. Relations (``=``, ``<``, ``≤``,
``→``…) get a space on each side, as Word draws them apart. Structures this
does not know are read as their parts joined by spaces.

The tree is already bounded (counted and at most ``MAX_DEPTH`` deep when parsed,
:mod:`core.loaders.xml_budget`), so the recursion here is too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from xml.etree.ElementTree import Element as XmlElement

from core.loaders.archive import attr, child, children, local

_RELATIONS = re.compile(r"\s*([=≠<>≤≥≈≡∼≃≅∝→←↔⇒⇐⇔∈∉⊂⊃⊆⊇])\s*")
# Parts that are properties, not content (and deleted text of tracked changes).
_PROPERTIES = frozenset({"del", "rPr", "fPr", "sSupPr", "sSubPr", "sSubSupPr", "radPr", "dPr", "naryPr", "funcPr",
                         "accPr", "barPr", "limLowPr", "limUppPr", "eqArrPr", "mPr", "boxPr", "borderBoxPr",
                         "groupChrPr", "sPrePr", "phantPr", "ctrlPr", "oMathParaPr", "argPr"})  # fmt: skip


def math_text(node: XmlElement) -> str:
    """An ``m:oMath`` or ``m:oMathPara`` as one line of linear text (equations of a paragraph on their own lines)."""
    if local(node.tag) == "oMathPara":
        return "\n".join(math_text(part) for part in children(node, "oMath"))
    return " ".join(_linear(node).split())


def _linear(node: XmlElement | None) -> str:
    if node is None:
        return ""
    tag = local(node.tag)
    if tag == "r":
        text = "".join(t.text or "" for t in node if local(t.tag) == "t")
        return _RELATIONS.sub(r" \1 ", text)
    handler = _STRUCTURES.get(tag)
    if handler is not None:
        return handler(node)
    return "".join(_linear(part) for part in node if local(part.tag) not in _PROPERTIES)


def _part(node: XmlElement, name: str) -> str:
    return _linear(child(node, name)).strip()


def _operand(text: str) -> str:
    """``text`` as an operand: one word of letters and digits as it is, anything longer in parentheses."""
    text = text.strip()
    if not text or text.isalnum() or (text[0] in "([{" and _closes_at_end(text)):
        return text
    return f"({text})"


def _closes_at_end(text: str) -> bool:
    """Whether the bracket that opens ``text`` closes at its last character (so "(a)(b)" is two operands)."""
    depth = 0
    for index, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0:
            return index == len(text) - 1
    return False


def _property(node: XmlElement, properties: str, name: str, default: str) -> str:
    setting = child(child(node, properties), name)
    if setting is None:
        return default
    value = attr(setting, "val")
    return default if value is None else value


def _fraction(node: XmlElement) -> str:
    return f"{_operand(_part(node, 'num'))}/{_operand(_part(node, 'den'))}"


def _script(node: XmlElement) -> str:
    base = _operand(_part(node, "e"))
    lower, upper = _part(node, "sub"), _part(node, "sup")
    return base + (f"_{_operand(lower)}" if lower else "") + (f"^{_operand(upper)}" if upper else "")


def _pre_script(node: XmlElement) -> str:
    lower, upper = _part(node, "sub"), _part(node, "sup")
    return (f"_{_operand(lower)}" if lower else "") + (f"^{_operand(upper)}" if upper else "") + _part(node, "e")


def _radical(node: XmlElement) -> str:
    degree, base = _part(node, "deg"), _part(node, "e")
    return f"√({degree}&{base})" if degree else f"√{_operand(base)}"


def _delimiter(node: XmlElement) -> str:
    opening = _property(node, "dPr", "begChr", "(")
    closing = _property(node, "dPr", "endChr", ")")
    separator = _property(node, "dPr", "sepChr", "|")
    return opening + separator.join(_linear(part).strip() for part in children(node, "e")) + closing


def _nary(node: XmlElement) -> str:
    operator = _property(node, "naryPr", "chr", "∫")
    lower, upper = _part(node, "sub"), _part(node, "sup")
    limits = (f"_{_operand(lower)}" if lower else "") + (f"^{_operand(upper)}" if upper else "")
    return f"{operator}{limits} {_part(node, 'e')}"


def _function(node: XmlElement) -> str:
    return f"{_part(node, 'fName')} {_part(node, 'e')}"


def _limit(mark: str) -> Callable[[XmlElement], str]:
    def write(node: XmlElement) -> str:
        return f"{_part(node, 'e')}{mark}{_operand(_part(node, 'lim'))}"

    return write


def _rows(node: XmlElement) -> str:
    """An equation array: its rows apart."""
    return "; ".join(_linear(row).strip() for row in children(node, "e"))


def _matrix(node: XmlElement) -> str:
    rows = [", ".join(_linear(cell).strip() for cell in children(row, "e")) for row in children(node, "mr")]
    return "[" + "; ".join(rows) + "]"


_STRUCTURES = {
    "f": _fraction,
    "sSup": _script,
    "sSub": _script,
    "sSubSup": _script,
    "sPre": _pre_script,
    "rad": _radical,
    "d": _delimiter,
    "nary": _nary,
    "func": _function,
    "limLow": _limit("_"),
    "limUpp": _limit("^"),
    "eqArr": _rows,
    "m": _matrix,
}
