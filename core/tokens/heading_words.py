"""A Markdown heading's words, read from markdown-it's inline tokens without their markup.

One rule with two readers: the Markdown loader (:mod:`core.loaders.markdown`, every heading element's
``title``) and the markdown splitter's line scan (:mod:`core.splitters.fast.markdown_scan`), which must
give the same titles. It sits below both, so neither reaches into the other's room for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it.token import Token


def inline_after(tokens: list[Token], index: int) -> str:
    """A heading's words without inline markup: "Why *Chunk* Size" -> "Why Chunk Size"."""
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if following is None or following.type != "inline":
        return ""
    words = []
    for child in following.children or []:
        if child.type in ("text", "code_inline"):
            words.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            words.append(" ")
    return " ".join("".join(words).split())
