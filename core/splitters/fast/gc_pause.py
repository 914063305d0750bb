"""The cyclic garbage collector paused while a split allocates its nodes.

Measured (benchmarks/NOTES.md, first round): the collector rescanned the growing
set of young nodes, metadata and relationship dicts over and over, about a
quarter of a character-sized split's time on 10 MB; with the pause, a recursive
split runs at 78 instead of 59 MB/s on 10 MB, 74 instead of 51 MB/s on 100 MB
(CPU time).

The plain rule it must equal: the same split with the collector running. Nodes,
their metadata and relationship dicts form no reference cycles, so reference
counting frees them either way; the pause changes when memory is scanned, never
what a split returns (tests/test_fast_paths.py checks the collector's state is
restored and the nodes are the same).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block; its state before is restored after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
