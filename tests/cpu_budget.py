"""Bounds on work in tests, counted in this process's CPU time rather than wall-clock time.

A wall-clock bound fails when the machine is busy (another test worker, a
build): the work waited, it did not do more. CPU time counts only what this
process did, so "refused at once" stays a statement about the code. Speed
itself is measured in ``benchmarks/``, not here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cpu_budget(seconds: float) -> Iterator[None]:
    """Fail when the block uses more than ``seconds`` of this process's CPU time (all its threads)."""
    started = time.process_time()
    yield
    used = time.process_time() - started
    assert used < seconds, f"used {used:.2f} s of CPU time, more than the {seconds} s the check allows"
