"""Progress and cancel of one run of the LLM extractors, across the bounded child that runs them.

The extractors run in a forked child (:func:`core.runtime.bounded.run_bounded`): a flag or a counter in
the caller's memory would not be seen by it. An :class:`LLMControl` keeps both in a small anonymous
shared mapping made before the fork, so the child counts each reply into it (sent, or answered from
the reply cache) and the caller reads the count while it waits; the caller sets the cancel flag and the
child reads it before every request it would send.

Cancel stops *before the next request*: a request already sent is waited for and its reply cached (a
later run is answered from the cache for it), none is sent after, and the run ends with
:class:`LLMCancelled` (no keys are written to any node).
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable

from core.llm.connection import LLMError

# Two unsigned 64-bit words: the cancel flag, the replies so far. Each is written by one side only.
_WORDS = struct.Struct("=QQ")


class LLMCancelled(LLMError):
    """A run of the LLM extractors stopped by :meth:`LLMControl.cancel` before all its requests were sent."""


class LLMControl:
    """A cancel token and a reply counter that a forked child shares with the process that made them."""

    def __init__(self) -> None:
        # Anonymous and MAP_SHARED (Python's default for -1): a forked child writes to the same page.
        self._memory = mmap.mmap(-1, _WORDS.size)
        # Called after each reply when the run is in this process (a bounded run's caller polls instead).
        self.on_reply: Callable[[], object] | None = None

    def _words(self) -> tuple[int, int]:
        return _WORDS.unpack_from(self._memory, 0)

    def cancel(self) -> None:
        """Send no more requests (those already sent finish, their replies cached)."""
        self._memory[0:8] = struct.pack("=Q", 1)

    @property
    def cancelled(self) -> bool:
        return self._words()[0] != 0

    def replied(self) -> None:
        """One more reply, sent or from the cache (the child's side)."""
        self._memory[8:16] = struct.pack("=Q", self._words()[1] + 1)
        if self.on_reply is not None:
            self.on_reply()

    @property
    def done(self) -> int:
        """The replies so far."""
        return self._words()[1]

    def check(self, what: str) -> None:
        """Raise :class:`LLMCancelled` once cancelled (called before a request would be sent)."""
        if self.cancelled:
            raise LLMCancelled(f"cancelled before {what}: the replies already received are in the cache")
