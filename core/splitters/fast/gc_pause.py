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


class gc_paused:  # noqa: N801 - used like the function it was: ``with gc_paused():``
    """Pause the cyclic garbage collector for the block; its state before is restored after.

    A class rather than a ``@contextmanager`` generator: every split enters it
    once, and on a corpus of small files the generator's set-up showed (2.5 against
    0.6 us per split; benchmarks/NOTES.md, sixth round).
    """

    __slots__ = ("was_enabled",)

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self.was_enabled:
            gc.enable()
