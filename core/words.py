"""How the app and the CLI write a count in prose: ``1 page``, ``2 pages``, ``16,914 characters``."""

from __future__ import annotations


def counted(n: int, word: str) -> str:
    """``n`` with thousands separators and ``word``, plural unless ``n`` is 1: ``counted(1, "page") == "1 page"``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def page_count(document) -> str:  # noqa: ANN001 - a Document (core.schema imports nothing from here)
    """``1 page``, ``7 pages``, ``10 slides``: a paged document's pages in its own unit (slide, sheet, chapter)."""
    return counted(len(document.pages), str(document.metadata.get("page_unit") or "page"))
