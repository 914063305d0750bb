"""The framework engine a native splitter's compatible mode mirrors, with the same settings.

A native splitter with ``compat="llamaindex"`` or ``"langchain"`` cuts as one
framework splitter does (:mod:`core.splitters.compat`) and names the engine that
makes that call itself (its ``mirror()``), so what is said about the framework
call (the code Export writes, tested to be the call that ran) is said once, by
the engine. Every compat setting the app, a config or the CLI can choose has a
mirror; the ones no framework call expresses are refused when the splitter is
built. Only a size function passed from Python has none: None, and the
splitter's own translation stands.
"""

from __future__ import annotations

from typing import Any

from core.engines.base import FrameworkSplitter


def mirrored_engine(splitter: Any) -> FrameworkSplitter | None:
    """The engine whose framework call ``splitter``'s compat mode reproduces, or None (no compat, or no exact call)."""
    mirror = getattr(splitter, "mirror", None)  # a plugin written against an older base class may lack it
    return mirror() if mirror is not None else None
